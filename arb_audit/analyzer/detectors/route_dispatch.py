"""A launcher: the training route is chosen by a flag, a config key, ``match`` or a dispatch table."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.calls import OPTIMISER_WORDS, PROCESS_STARTERS, TRAINER_EVALUATIONS, flag_key, method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.frameworks import entry_for
from arb_audit.analyzer.loss_slice import SETTINGS_NAME_WORDS, cached_by_name
from arb_audit.analyzer.loss_slice import words as name_words
from arb_audit.analyzer.names import dotted, is_dead, last_name, text_value
from arb_audit.analyzer.trainers import AMBIGUOUS_WORDS, ROUTE_WORDS, route_of_name, route_word
from arb_audit.analyzer.walk import descendants
from arb_audit.taxonomy.files import STAGE_LABELS

LITERALS = frozenset({"typing.Literal", "typing_extensions.Literal"})
MULTI_TURN_FLAGS = ("agent_func", "multi_turn", "env_path", "environment")
"""Launcher options that plug multi-turn agent or environment rollouts into policy-gradient training."""


RUN_WORDS = frozenset({"train", "training", "finetune", "tuning", "stage", "mode"})
"""Words a mode's value may add to its route (``"dpo_train"``, ``"train_ppo"``, ``"sft_stage"``)."""


def _lookup(value: cst.BaseExpression) -> tuple[str, str] | None:
    """Return (setting key, looker's name) when ``value`` looks something up by a setting's value.

    ``getattr(trainers, config.trainer)``, a registry's getter (``get_registered_trainer(name=
    config.type)``) or a table indexed by it (``TRAINERS[args.algo]``); the looker's name and the
    key say whether a trainer is looked up.
    """
    if type(value) is cst.Subscript and len(value.slice) == 1:
        index = value.slice[0].slice
        table = last_name(value.value)
        if (
            type(index) is cst.Index
            and isinstance(index.value, cst.Attribute | cst.Subscript)
            and set(name_words(table)) & TABLE_WORDS  # (``ALGOS[args.algo]`` may hold agents to play)
        ):
            key = _setting_key(cst.Module([]).code_for_node(index.value))
            return (key, table) if key is not None else None
        return None
    if type(value) is not cst.Call or not value.args:
        return None
    callee = last_name(value.func)
    said = set(name_words(callee))
    if callee == "getattr":
        settings = [value.args[1].value] if len(value.args) == 2 else []
    elif callee == INSTANTIATE:
        # ``instantiate(cfg.rl_trainer_init, engine, cfg)``: Hydra builds the class the config names
        settings = [a.value for a in value.args[:1]]
    elif said & REGISTRY_WORDS or (said & GETTER_WORDS and "trainer" in said):
        settings = [a.value for a in value.args]  # get_registered_trainer(name=...), get_trainer_class(x)
    elif callee == "get" and type(value.func) is cst.Attribute:
        table = last_name(value.func.value)  # TRAINER_REGISTRY.get(cfg.trainer)
        if not set(name_words(table)) & TABLE_WORDS:
            return None
        settings, callee = [a.value for a in value.args[:1]], table
    else:
        return None
    for setting in settings:
        if isinstance(setting, cst.Attribute | cst.Subscript):
            key = _setting_key(cst.Module([]).code_for_node(setting))
            if key is not None:
                return key, callee
        elif (
            type(setting) is cst.Name
            and callee != "getattr"
            and set(name_words(setting.value)) & LOOKUP_WORDS
        ):
            # ``get_collator_and_trainer(algorithm)``: a trainer's getter handed the chosen algorithm,
            # read from the command line into a variable or a parameter of the entry function
            return setting.value, callee
    return None


INSTANTIATE = "instantiate"
"""Hydra's builder of the object a config node names by its ``_target_`` class (``hydra.utils``)."""
REGISTRY_WORDS = frozenset({"registered", "registry", "lookup"})
"""Words of a function that returns what was registered under a name (``get_registered_trainer``)."""
SUBCOMMANDS = "command"
"""Key of a CLI's subcommands among the registries (typer's and click's ``@app.command``)."""
REGISTERED_WORDS = frozenset(
    {"adv", "advantage", "estimator", "est", "loss", "algorithm", "algo", "trainer", "policy", "objective"}
)
"""Words of a registering decorator whose names pick training code (``register_adv_est``), not data
formatting or prompts (``register_processor("sft")``)."""
GETTER_WORDS = frozenset({"get", "select", "choose", "pick", "resolve"})
"""Verbs of a function that returns a trainer class for a name (``get_trainer_class``)."""
TABLE_WORDS = frozenset({"trainer", "trainers", "registry", "registries"})
"""Words of a table or registry of trainers (``TRAINERS``, ``TRAINER_REGISTRY``)."""


def _word(node: cst.BaseExpression) -> str | None:
    """Return the route label a string literal or an enum member (``RLType.GRPO``) names, if any.

    A mode named by a route and a word for running it (``mode == "dpo_train"``) names the route too.
    """
    if type(node) is cst.SimpleString:
        return _text_word(text_value(node) or "")
    if type(node) is cst.Attribute and isinstance(node.value, cst.Name | cst.Attribute):
        return ROUTE_WORDS.get(node.attr.value.lower())
    return None


def _text_word(text: str) -> str | None:
    """Return the route label a name names: a route (``dpo``), or a route and a word for running it."""
    value = text.lower()
    if value in ROUTE_WORDS:
        return ROUTE_WORDS[value]
    parts = re.split(r"[_\-\s]", value)
    routes = [p for p in parts if p in ROUTE_WORDS]
    rest = [p for p in parts if p not in ROUTE_WORDS]
    return ROUTE_WORDS[routes[0]] if len(routes) == 1 and rest and RUN_WORDS.issuperset(rest) else None


def _subcommand_word(decorator: cst.Decorator, function: cst.FunctionDef) -> str | None:
    """Return the route a CLI subcommand is named for (typer's and click's ``@app.command(...)``).

    The command's name is its ``name=`` or first argument, else the function's own name
    (``@app.command() def train_dpo(...)``, run as ``cli train-dpo``).
    """
    called = decorator.decorator
    func = called.func if type(called) is cst.Call else called
    if type(func) is not cst.Attribute or func.attr.value != "command":
        return None
    if type(called) is cst.Call:
        named = keyword(called, "name")
        if named is None and called.args and called.args[0].keyword is None:
            named = called.args[0]
        if named is not None:
            return _word(named.value)
    # a bare function name that is also a tool's (``def reward(...)`` scoring samples) names no route
    name = function.name.value
    return None if AMBIGUOUS_WORDS & set(name.lower().split("_")) else _text_word(name)


PRINTERS = frozenset({"print", "pprint", "echo", "secho"})
"""Calls that only print to the console: a statement of nothing else chooses nothing (a log line or a
write may name the route it sets up)."""


def _reports_only(body: cst.BaseSuite) -> bool:
    """Say whether a branch only prints (its nested branches too)."""
    return bool(body.body) and all(_reporting(statement) for statement in body.body)


def _reporting(statement: cst.BaseStatement | cst.BaseSmallStatement) -> bool:
    if type(statement) is cst.If:
        orelse = statement.orelse
        rest = (
            True
            if orelse is None
            else _reporting(orelse)
            if type(orelse) is cst.If
            else _reports_only(orelse.body)
        )
        return rest and _reports_only(statement.body)
    if type(statement) is not cst.SimpleStatementLine:
        return False
    return all(
        type(small) is cst.Pass
        or (
            type(small) is cst.Expr
            and type(small.value) is cst.Call
            and last_name(small.value.func) in PRINTERS
        )
        for small in statement.body
    )


_KEY_PART = re.compile(r"""\.([A-Za-z_]\w*)|\[\s*(?:"([^"\\]+)"|'([^'\\]+)')\s*\]""")


def _setting_key(subject: str) -> str | None:
    """Return the config key a compared setting reads (``cfg["algorithm"]["name"]`` -> ``algorithm.name``).

    The first name is the object the config was loaded into (``args``, ``cfg``, ``self.config``); a
    plain name, a call or a computed subscript is not a config key.
    """
    root = re.match(r"(?:self\.)?[A-Za-z_]\w*", subject)
    if root is None:
        return None
    parts: list[str] = []
    position = root.end()
    while position < len(subject):
        part = _KEY_PART.match(subject, position)
        if part is None:
            return None
        parts.append(next(g for g in part.groups() if g is not None))
        position = part.end()
    return ".".join(parts) or None


SUBCOMMAND_WORDS: dict[str, str] = {
    "finetune": "SFT",
    "pretrain": "SFT",
    "merge": "MERGE",
    "evaluate": "EVAL_ONLY",
    "eval": "EVAL_ONLY",
}
"""First words of a CLI's subcommands (``finetune_full``, ``merge_lora``, ``evaluate``) in a table that
maps them to their code: what each selects, besides the route names themselves."""


def _code_of(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return the code a table's entry holds: itself, or a tuple's first (``(SFTTrainer, SFTConfig)``)."""
    if type(value) is cst.Tuple and value.elements:
        return value.elements[0].value
    return value


CODE_HEADS = frozenset(
    {
        *("trainer", "config", "algorithm", "algo", "learner", "runner", "recipe", "worker"),
        *("pipeline", "experiment", "strategy", "loss", "module", "workflow"),
    }
)
"""Last words of a class a table may name in a string (``"DPOTrainer"``, ``"GRPOAlgorithm"``)."""
MAX_CLASS_PATH = 200
"""Characters of a string read as a class's name or path (longer ones are text)."""


def _names_class(value: cst.BaseExpression) -> bool:
    """Say whether a table's entry names a class in a string (``("techniques.dpo", "DPOTrainer")``).

    Registries that import lazily hold the class by name, often beside its module: the name is an
    identifier path whose last part is a class named for training code (not a label or a project).
    """
    strings = [e.value for e in value.elements] if type(value) is cst.Tuple else [value]
    for v in strings:
        text = text_value(v) if type(v) is cst.SimpleString else None
        if text is None or len(text) > MAX_CLASS_PATH:
            continue
        parts = text.split(".")
        last = parts[-1]
        if (
            all(p.isidentifier() for p in parts)
            and last[:1].isupper()
            and last.lower() != last
            and name_words(last)[-1] in CODE_HEADS
        ):
            return True
    return False


def _setting_value(value: cst.BaseExpression) -> bool:
    """Say whether a table's entry is a setting's value (``args.sft``: a checkpoint's path, a name).

    ``{"base": args.base, "sft": args.sft, "dpo": args.dpo}`` lists the models a comparison loads, not
    code a route runs.
    """
    while type(value) is cst.Attribute:
        value = value.value
    return type(value) is cst.Name and bool(SETTINGS_NAME_WORDS & set(name_words(value.value)))


def _passes_by_name(element: cst.DictElement) -> bool:
    """Say whether a dict entry passes a variable on under its own name (``"gae_lambda": gae_lambda``).

    A module constant under its name in lower case passes a setting on too (``"ppo_clip": PPO_CLIP``,
    a run's settings logged); a key that is a route alone, or names code (``"sft_trainer"``), names
    the class it maps (``"grpo": GRPO``).
    """
    key, value = element.key, element.value
    if type(value) is not cst.Name or type(key) is not cst.SimpleString:
        return False
    text = text_value(key)
    return text == value.value or (
        text is not None
        and value.value.isupper()
        and text.upper() == value.value
        and _word(key) is None
        and not set(name_words(text)) & CODE_HEADS  # (``"sft_trainer": SFT_TRAINER`` holds a class)
    )


RESULT_WORDS = frozenset(
    {
        *("metrics", "metric", "results", "result", "stats", "scores", "score", "summary"),
        *("accuracy", "acc", "losses", "history", "outputs", "output", "logs"),
    }
)
"""Last words of a variable holding what a stage gave back (``sft_metrics = train_sft(args)``)."""


def _holds_results(code: cst.BaseExpression) -> bool:
    """Say whether a table's entry is a stage's results, not code (``{"sft": sft_metrics, ...}``).

    A summary written after a pipeline's stages keys each one's metrics by the stage's name; a
    dispatch table maps those names to the code that runs them.
    """
    return (
        type(code) is cst.Name
        and code.value.islower()  # (a variable's name; ``SFTOutput`` is a class the table maps to)
        and name_words(code.value)[-1:] in {(w,) for w in RESULT_WORDS}
    )


RECORD_KEY_WORDS = RESULT_WORDS | {"out", "eval", "evaluation", "text", "response", "responses", "answer"}
"""Words after a route's name in a record's key that name what the route gave back (``sft_output``)."""


def _table_word(node: cst.BaseExpression) -> str | None:
    """Return what a dispatch table's key selects: a route name, or a subcommand by its first word."""
    if (word := _word(node)) is not None:
        return word
    text = text_value(node) if type(node) is cst.SimpleString else None
    if text is None:
        return None
    first, *rest = text.lower().replace("-", "_").split("_")
    if RECORD_KEY_WORDS & set(rest):
        return None  # (``{"sft_output": sft_out, "dpo_output": dpo_out}``: a record of each one's results)
    return ROUTE_WORDS.get(first) or SUBCOMMAND_WORDS.get(first)


def _words(node: cst.BaseExpression) -> list[str]:
    """Route labels named by a literal or a list/tuple/set of literals."""
    if isinstance(node, cst.List | cst.Tuple | cst.Set):
        return [w for e in node.elements if (w := _word(e.value)) is not None]
    word = _word(node)
    return [word] if word else []


OBJECTIVE_WORDS = frozenset({"loss", "objective"})
"""Words of a setting that names the training objective (``config.loss.name``, ``args.objective``)."""


def _chooses_objective(subject: str) -> bool:
    """Say whether a compared expression is a setting that names the loss (``loss_config.name``)."""
    return any(OBJECTIVE_WORDS & set(name_words(part)) for part in re.findall(r"\w+", subject))


def _computes_loss(body: cst.CSTNode) -> bool:
    """Say whether a branch binds a loss (``losses = -policy_chosen_logps``)."""
    for n in descendants(body):
        if type(n) is cst.Assign:
            targets = [t.target for t in n.targets]
        elif isinstance(n, cst.AugAssign | cst.AnnAssign):
            targets = [n.target]
        else:
            continue
        if any(type(t) is cst.Name and {"loss", "losses"} & set(name_words(t.value)) for t in targets):
            return True
    return False


MANY_ROUTES = 3
"""Distinct routes one setting is compared with that make it a route choice whatever its branches do."""
COMMAND_TEXT = "command_text"
"""Variant of the ``dispatch`` finding of a command line written as text for a scheduler to run
(detectors/command_text.py; classify.combine uses it only for a file that trains nothing itself)."""
BY_NAME = "by_name"
"""Variant of a ``dispatch`` finding for a trainer class looked up by a setting's value
(``getattr(trainers, config.trainer)``): the routes are whatever the module it is looked up in holds."""
LOOKUP_WORDS = frozenset({"trainer", "algorithm", "algo"})
"""Words of a setting, or of the name bound to what it looks up, that make the lookup the trainer's."""
TRAIN_METHODS = frozenset({"train", "train_and_eval", "fit", "learn"})
"""Methods that run a trainer (``learn``: an RL algorithm object's, as in Stable-Baselines3)."""
COMPARED = "compared"
"""Variant of a ``dispatch`` finding for a config field compared with two routes whose branches run no
trainer: a choice only where the file's own gradient steps train both (classify.combine decides)."""
FLAG = "flag"
"""Variant of a ``dispatch`` finding for a command-line option whose choices name routes
(``--stage dpo|grpo``), or subcommands named for them, in a file that runs no trainer and starts no
process: where it only evaluates, it picks which trained model is evaluated (classify.combine decides)."""


def _held_trainer_route(node: cst.Assign, trained: set[str]) -> str | None:
    """Return the route a trainer object is named for where it is built (``rlhf_trainer = RLTrainer(c)``).

    A project's trainer class may name no route (``RLTrainer``, ``ActorTrainer``); the name the code
    holds it by says what it trains, as it does for its step (an ambiguous word, ``reward_trainer``,
    is read too: a trainer is what it holds). Only a trainer the branch runs (``trained``: the names
    whose ``train()`` or ``fit()`` it calls): one built to ``predict`` trains nothing.
    """
    if (
        len(node.targets) != 1
        or type(node.targets[0].target) is not cst.Name
        or type(node.value) is not cst.Call
        or node.targets[0].target.value not in trained
    ):
        return None
    built = last_name(node.value.func)
    if not built[:1].isupper() or "trainer" not in name_words(built):
        return None
    named = route_word(node.targets[0].target.value)
    return named[0] if named is not None and named[0] not in ("MERGE", "UNKNOWN") else None


@cached_by_name
def _training_route(qualified: str) -> str | None:
    """Return the training route a called or picked name runs: its table entry's, or its name's.

    A class's method counts for its class (``GRPOStrategy.get_trainer_class``). Asked for every name
    of every branch, hence the cache.
    """
    entry = entry_for(qualified)
    label = STAGE_LABELS.get(entry.kind) if entry is not None and entry.kind else route_of_name(qualified)
    owner, _, member = qualified.rpartition(".")
    if label is None and member[:1].islower() and owner.rpartition(".")[2][:1].isupper():
        label = route_of_name(owner)
    return label if label not in ("MERGE", "UNKNOWN") else None


SWITCH_WORDS = frozenset(ROUTE_WORDS.keys() - {"pt", "rm", "reward", "gae"})
"""Route words that, as a switch's whole name, turn a route on (``--dpo``); the others say something
else there (``--pt`` a format, ``--rm`` removal, ``--reward`` a logging choice, ``--gae`` an advantage
detail)."""


COLLECTING_ACTIONS = frozenset({"append", "extend"})
"""argparse actions that keep every value an option is given, not the last."""


def _collects(call: cst.Call) -> bool:
    """Say whether an ``add_argument`` call keeps several values (``action="append"``, ``nargs="+"``)."""
    action, nargs = keyword(call, "action"), keyword(call, "nargs")
    return (
        action is not None
        and type(action.value) is cst.SimpleString
        and text_value(action.value) in COLLECTING_ACTIONS
    ) or (
        nargs is not None and type(nargs.value) is cst.SimpleString and text_value(nargs.value) in ("+", "*")
    )


class RouteDispatch(RouteDetector):
    """The route depends on configuration when two or more routes can be selected by one choice.

    Seen as: comparisons of one expression with route names (``if args.stage == "sft": ... elif
    args.stage == "dpo":``), ``match`` cases, an argparse option whose ``choices`` name routes (its
    ``default`` is the default route), a conditional expression between two trainers, a
    ``Literal[...]`` config field, or a dict from route names to
    functions or trainers. Variants of one route (``loss_type`` in ``sigmoid``/``ipo``) are not a choice
    between routes. A config field compared with just two routes, neither branch running a trainer, is
    reported as only compared (variant ``compared``): it chooses the route where the file's own gradient
    steps train both (``critic_type`` around a PPO and a GRPO update), not in a helper's mode.
    """

    TRIGGERS = (
        *(f"{q}{spelt}{q}" for word in ROUTE_WORDS for spelt in (word, word.upper()) for q in "'\""),
        *MULTI_TURN_FLAGS,
        *(f"{q}{word}" for word in SUBCOMMAND_WORDS for q in "'\""),
        # a mode named by a route and a word for running it (RUN_WORDS)
        *(f"{q}{word}{sep}" for word in ROUTE_WORDS for q in "'\"" for sep in "_-"),
        *(f"{sep}{word}{q}" for word in ROUTE_WORDS for q in "'\"" for sep in "_-"),
        "Trainer",  # a conditional between trainer classes names no route in quotes
        "@register",  # a registry filled by a decorator (``@register_adv_estimator(Estimator.GRPO)``)
        ".command(",  # a CLI's subcommands (``@app.command(name="train_dpo")``)
        *("registered", "registry", "Registry", "TRAINER"),  # a trainer looked up by a setting (``_lookup``)
        "instantiate(",  # (a trainer Hydra builds from its config node)
    )

    VALID = (
        # a record of what each compared model gave back, keyed by route and result
        Valid(
            "rows.append({'prompt': p, 'sft_output': sft_out, 'dpo_output': dpo_out,\n"
            "             'sft_eval': sft_eval, 'dpo_eval': dpo_eval})\n"
        ),
        # switches picking the curves a plot draws, and a supervised term added to a DPO loss
        Valid(
            "import argparse\nap = argparse.ArgumentParser()\nap.add_argument('--ppo', action='store_true')\n"
            "ap.add_argument('--grpo', action='store_true')\nargs = ap.parse_args()\n"
            "if args.ppo:\n    plt.plot(ppo_curve)\nif args.grpo:\n    plt.plot(grpo_curve)\n"
        ),
        Valid(
            "import argparse\nap = argparse.ArgumentParser()\nap.add_argument('--ipo', action='store_true')\n"
            "ap.add_argument('--sft', action='store_true')\nargs = ap.parse_args()\n"
            "loss = dpo_loss(b, ipo=args.ipo) + (nll(b) if args.sft else 0)\nloss.backward()\n"
        ),
        # one switch named for a route, and switches whose whole names say something else
        Valid(
            "import argparse\nap = argparse.ArgumentParser()\nap.add_argument('--dpo', action='store_true')\n"
            "ap.add_argument('--rm', action='store_true')\nap.add_argument('--pt', action='store_true')\n"
            "ap.add_argument('--ppo', action=argparse.BooleanOptionalAction)\nloss.backward()\n"
        ),
        # switches in a file whose steps are an environment's and a scheduler's
        Valid(
            "import argparse\nap = argparse.ArgumentParser()\nap.add_argument('--ppo', action='store_true')\n"
            "ap.add_argument('--grpo', action='store_true')\nobs = env.step(a)\nscheduler.step()\n"
        ),
        # a settings dict whose keys begin with route words holds defaults, not code
        Valid(
            "from trainer import GRPOTrainer\n"
            "DEFAULTS = {'sft_anchor_enabled': False, 'reward_weights': None, 'dpo_beta': None}\n"
            "GRPOTrainer(DEFAULTS).train()\n"
        ),
        # a chain in a loop over stages, and a getter handed each of a fixed list, run every route
        Valid(
            "for phase in range(2):\n    if phase == 0:\n        cls = SFTTrainer\n"
            "    elif phase == 1:\n        cls = GRPOTrainer\n    cls(m).train()\n"
        ),
        Valid(
            "for algorithm in ('sft', 'dpo'):\n    COLLATOR, TRAINER = get_collator_and_trainer(algorithm)\n"
            "    TRAINER(model=m).train()\n"
        ),
        Valid(
            "ALGORITHM = 'dpo'\nalgorithm = ALGORITHM\ncls = get_trainer_class(algorithm)\ncls(m).train()\n"
        ),
        # the terms of one loss mixed in a loop, each named for a route: no choice of route
        Valid(
            "for loss_type, w in zip(self.loss_types, self.weights):\n"
            "    if loss_type == 'sigmoid':\n        total = total + w * dpo_loss(c, r, beta)\n"
            "    elif loss_type == 'sft':\n        total = total + w * sft_loss(c)\n"
            "    else:\n        raise ValueError(loss_type)\n"
        ),
        # stages run in turn by a loop over fixed names, and a trainer built only to predict
        Valid(
            "for stage in ['sft', 'reward', 'rlhf']:\n    if stage == 'sft':\n"
            "        sft_trainer = SupervisedTrainer(cfg)\n        sft_trainer.train()\n"
            "    elif stage == 'reward':\n        reward_trainer = PairwiseTrainer(cfg)\n"
            "        reward_trainer.train()\n    elif stage == 'rlhf':\n"
            "        rlhf_trainer = RLTrainer(cfg)\n        rlhf_trainer.train()\n"
        ),
        Valid(
            "if args.mode == 'score':\n    reward_trainer = ScoreTrainer(model=rm)\n"
            "    scores = reward_trainer.predict(ds)\nelif args.mode == 'train':\n"
            "    dpo_trainer = PolicyTrainer(model=m)\n    dpo_trainer.train()\n"
        ),
        # what Hydra builds for the model and the data is no trainer
        Valid(
            "from hydra.utils import instantiate\ndef main(cfg):\n    model = instantiate(cfg.model)\n"
            "    data = instantiate(cfg.datamodule)\n    model.train()\n"
        ),
        # branches holding trainers by names of one route, or of none, choose no route
        Valid(
            "if args.fast:\n    dpo_trainer = FastTrainer(cfg)\nelif args.big:\n"
            "    dpo_trainer = ShardedTrainer(cfg)\nelse:\n    trainer = Trainer(cfg)\n"
        ),
        # branches picking the same route's trainers choose no route
        Valid(
            "from trl import DPOTrainer\nfrom lib import CustomDPOTrainer\n"
            "if args.custom:\n    cls = CustomDPOTrainer\nelif args.plain:\n    cls = DPOTrainer\n"
            "cls(m).train()\n"
        ),
        # labels and project names under route keys: no class named for training code
        Valid(
            "LEGEND = {'sft': 'Baseline', 'dpo': 'OursFull'}\n"
            "PROJECTS = {'sft': 'MyProject', 'grpo': 'Run'}\n"
        ),
        # descriptions and data files under route names: no code selected
        Valid("HELP = {'sft': 'Supervised fine-tuning', 'dpo': 'Direct preference optimisation'}\n"),
        Valid("FILES = {'sft': 'sft_data.json', 'dpo': 'dpo_pairs.json'}\n"),
        # a pipeline's summary: each stage's metrics under the stage's name (a table of output classes,
        # ``{"sft": SFTOutput, "dpo": DPOOutput}``, still maps names to code)
        Valid(
            "from trainer import SFTTrainer\nsft_metrics = run_sft(a)\ndpo_metrics = run_dpo(b)\n"
            "write_json('summary.json', {'sft': sft_metrics, 'dpo': dpo_metrics})\n"
        ),
        # a training monitor printing each trainer's metrics chooses no route
        Valid(
            "def summary(self, df):\n    if self.cfg.trainer_type == 'dpo':\n        print(df['dpo_loss'])\n"
            "    elif self.cfg.trainer_type == 'ppo':\n        logger.info('kl %s', df['kl'])\n"
            "        if 'entropy' in df:\n            print(df['entropy'])\n"
            "    elif self.cfg.trainer_type == 'sft':\n        print(df['loss'])\n"
        ),
        Valid(
            "def ppo_settings(cfg):\n    gae_lambda, grpo_groups = cfg.lam, cfg.groups\n"
            "    return {'gae_lambda': gae_lambda, 'grpo_groups': grpo_groups}\n"
        ),
        # a run's settings logged under the names of the module's constants
        Valid(
            "wandb.init(config={'ppo_clip': PPO_CLIP, 'eval_interval': EVAL_INTERVAL,\n"
            "                   'reward_model': REWARD_MODEL_NAME, 'lr_actor': LR_ACTOR})\n"
        ),
        Valid("if args.loss_type == 'ipo':\n    beta = 0.1\n"),
        Valid(
            "if mode == 'sft_batch_test':\n    run_sft(test=True)\nelif mode == 'dpo_eval':\n    run_dpo()\n"
        ),
        Valid(
            "from trl import SFTTrainer\nif args.lora:\n    t = SFTTrainer(model=m, peft_config=p)\n"
            "else:\n    t = SFTTrainer(model=m)\n"
        ),
        Valid("TOOLS = {'evaluate': evaluate_fn, 'merge_lora': merge_fn, 'serve': serve_fn}\n"),
        Valid(
            "def apply_chat_template(example, task):\n    if task in ['sft', 'generation']:\n        a()\n"
            "    elif task == 'rm':\n        b()\n    elif task == 'dpo':\n        c()\n"
        ),
        Valid("parser.add_argument('--loss', choices=['sigmoid', 'hinge'])\n"),
        # choices handed to another library's option (click's), named for no route: read, nothing chosen
        Valid("import click\n@click.option('--mode', choices=['a', 'b'])\ndef main(mode):\n    pass\n"),
        # the checkpoints a comparison loads, by the route that made each
        Valid("models = {'base': args.base, 'sft': args.sft, 'dpo': args.dpo}\n"),
        # terms added into one loss, each named once: not a choice between routes
        Valid(
            "parser.add_argument('--loss-type', action='append', choices=('sigmoid', 'ipo', 'sft'))\n"
            "args = parser.parse_args()\nconfig = DPOConfig(loss_type=args.loss_type or ['sigmoid'])\n"
        ),
        # every choice but one refused by a branch that only raises: the option picks nothing
        Valid(
            "ap.add_argument('--algo', choices=['grpo', 'ppo', 'dpo'], default='grpo')\n"
            "args = ap.parse_args()\n"
            "if args.algo != 'grpo':\n    raise NotImplementedError(f'--algo {args.algo} not implemented')\n"
        ),
        Valid("print('sft', 'dpo')\n"),
        Valid("@register_adv_estimator('grpo')\ndef grpo(rewards, index):\n    return a\n"),
        # one training subcommand beside tools: the CLI runs one route
        Valid(
            "@app.command(name='train_sft')\ndef sft(p):\n    run(p)\n"
            "@app.command()\ndef serve(p):\n    up(p)\n"
        ),
        Valid(
            "@register_processor('sft')\ndef sft(example):\n    return example\n"
            "@register_processor('dpo')\ndef dpo(example):\n    return example\n"
        ),
        Valid("import torch\nTrainer = None\ndtype = getattr(torch, config.model.dtype)\nmodel.train()\n"),
        Valid("TrainerClass = getattr(trainers, config.trainer)\nprint(TrainerClass.__doc__)\n"),
        Valid("Trainer = None\nagent_cls = ALGOS[args.algo]\nagent = agent_cls.load(path)\nagent.train()\n"),
        Valid(
            "Trainer = None\nmodel_cls = get_registered_model(name=config.model_type)\n"
            "m = model_cls()\nm.train()\n"
        ),
        Valid("if task == 'sft':\n    text = fmt(x)\nelif task == 'dpo':\n    text = fmt(y)\n"),
        Valid(
            "from typing import Literal\n"
            "def f(task: Literal['sft', 'dpo']):\n    x: Literal['sft', 'rm'] = task\n"
        ),
    )
    INVALID = (
        # a trainer Hydra builds from the class its config node names
        Invalid(
            "from hydra.utils import instantiate\n"
            "def main(cfg):\n    engine = instantiate(cfg.rl_engine_init, cfg)\n"
            "    rl_trainer = instantiate(cfg.rl_trainer_init, engine, cfg)\n"
            "    rl_trainer.train()\n    rl_trainer.train_rl_step(batch)\n",
            "dispatch",
            None,
            BY_NAME,
        ),
        # a chain of modes whose project trainers name no route, held by names that do
        Invalid(
            "if args.type == 'RL':\n    rlhf_trainer = RLTrainer(config)\n    rlhf_trainer.train()\n"
            "elif args.type == 'ACTOR':\n    actor_trainer = ActorTrainer(config.actor)\n"
            "    actor_trainer.train()\n"
            "elif args.type == 'REWARD':\n    reward_trainer = RewardTrainer(config.reward)\n"
            "    reward_trainer.train()\n",
            "dispatch",
            routes=("PPO", "REWARD_MODEL"),
        ),
        Invalid(
            "from heads import SFTOutput, DPOOutput\nHEADS = {'sft': SFTOutput, 'dpo': DPOOutput}\n",
            "dispatch",
        ),
        # switches named for routes, each turning its loss on
        Invalid(
            "import argparse\nap = argparse.ArgumentParser()\n"
            "ap.add_argument('--ppo', action='store_true')\nap.add_argument('--dpo', action='store_true')\n"
            "args = ap.parse_args()\n"
            "loss = ppo_loss(b) if args.ppo else dpo_loss(b) if args.dpo else pg_loss(b)\n"
            "loss.backward()\n",
            "dispatch",
        ),
        # an elif chain of type tests, each branch picking another route's trainer class
        Invalid(
            "from algo.sft import SFTTrainer\nfrom algo.dpo import DPOTrainer\ntrainer_cls = None\n"
            "if isinstance(config.algorithm, SFTConfig):\n    trainer_cls = SFTTrainer\n"
            "elif isinstance(config.algorithm, DPOConfig):\n    trainer_cls = DPOTrainer\n"
            "trainer_cls(config=config).train()\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        # a lazy registry: each route's module and class named in strings
        Invalid(
            "TRAINER_MAP = {'sft': ('sft_trainer', 'SFTTrainer'), 'dpo': ('techniques.dpo', 'DPOTrainer')}\n",
            "dispatch",
        ),
        # branches that write each route's config for the command run after them choose the route
        Invalid(
            "import os\nwith open('run.yaml', 'w') as fh:\n"
            "    if args.stage == 'sft':\n        fh.write('stage: sft')\n"
            "    elif args.stage == 'dpo':\n        fh.write('stage: dpo')\n"
            "    elif args.stage == 'rm':\n        fh.write('stage: rm')\n"
            "os.system('llamafactory-cli train run.yaml')\n",
            "dispatch",
        ),
        # a CLI whose subcommands are named for routes (typer's ``name=``, click's by function name)
        Invalid(
            "@app.command(name='train_sft')\ndef sft(path):\n    pipelines.SFT().run(path)\n"
            "@app.command(name='train_dpo')\ndef dpo(path):\n    pipelines.DPO().run(path)\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        Invalid(
            "@cli.command()\ndef train_grpo(cfg):\n    run(cfg)\n"
            "@cli.command()\ndef train_ppo(cfg):\n    run(cfg)\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        Invalid(
            "TRAINERS = {'sft': (SFTTrainer, SFTConfig), 'dpo': (DPOTrainer, DPOConfig)}\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        # classes named by their route's acronym, under the route
        Invalid("ALGORITHMS = {'grpo': GRPO, 'ppo': PPO}\n", "dispatch", routes=("GRPO", "PPO")),
        Invalid(
            "TRAINERS = {'sft_trainer': SFT_TRAINER, 'dpo_trainer': DPO_TRAINER}\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        Invalid(
            "@register_adv_estimator(AdvantageEstimator.GAE)\ndef gae(rewards, values):\n    return a\n"
            "@register_adv_estimator(AdvantageEstimator.GRPO)\ndef grpo(rewards, index):\n    return a\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        Invalid(
            "from arctic_training.registry import get_registered_trainer\n"
            "trainer_cls = get_registered_trainer(name=config.type)\ntrainer = trainer_cls(config)\n"
            "trainer.train()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "def main(algorithm, args):\n    COLLATOR, TRAINER = get_collator_and_trainer(algorithm)\n"
            "    trainer = TRAINER(model=m, args=args, data_collator=COLLATOR(tok))\n    trainer.train()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "TRAINERS = {}\ntrainer_cls = TRAINERS[args.algorithm]\ntrainer_cls(model).train()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "Trainer = None\ntrainer_cls = TRAINER_REGISTRY.get(cfg.trainer)\ntrainer = trainer_cls(cfg)\n"
            "trainer.train(resume_from_checkpoint=cfg.ckpt)\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "Trainer = None\ntrainer_cls = get_trainer_class(cfg.algorithm)\ntrainer_cls(cfg).fit()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "from tril.algorithms import AlgorithmRegistry\nalg_cls = AlgorithmRegistry.get(cfg.alg.id)\n"
            "alg = alg_cls(cfg, accelerator, tracker)\nalg.learn()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "import trainers\nTrainerClass = getattr(trainers, config.loss.trainer)\n"
            "trainer = TrainerClass(policy, config)\ntrainer.train()\n",
            "dispatch",
            variant=BY_NAME,
        ),
        Invalid(
            "from engines.train import Train\nmode = config.mode\ntrain = Train(config)\n"
            "if mode == 'dpo_train':\n    train.train_dpo()\n"
            "elif mode == 'ppo_train':\n    train.train_ppo()\n",
            "dispatch",
            routes=("DPO", "PPO"),
        ),
        # a config field compared with two routes whose branches run no trainer: reported as only
        # compared (a choice where the file's own steps train both routes, classify.combine)
        Invalid(
            "if args.task == 'dpo':\n    losses = a()\nelif args.task == 'sft':\n    losses = b()\n",
            "dispatch",
            variant=COMPARED,
            routes=("DPO", "SFT"),
        ),
        Invalid(
            "def get_batch_metrics(batch, loss_config):\n"
            "    if loss_config.name in {'dpo', 'ipo'}:\n        losses = preference_loss(c, r, rc, rr)\n"
            "    elif loss_config.name == 'sft':\n        losses = -policy_chosen_logps\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        Invalid(
            "from axolotl.core.trainers.grpo import GRPOStrategy\n"
            "from axolotl.core.trainers.dpo import DPOStrategy\n"
            "if self.cfg.rl is RLType.GRPO:\n    trainer_cls = GRPOStrategy.get_trainer_class(self.cfg)\n"
            "elif self.cfg.rl is RLType.DPO:\n    trainer_cls = DPOStrategy.get_trainer_class()\n"
            "else:\n    trainer_cls = AxolotlTrainer\n",
            "dispatch",
            routes=("DPO", "GRPO"),
        ),
        Invalid(
            "from rl4lms.envs.text_generation.training_utils import OnPolicyTrainer, SupervisedTrainer\n"
            "if 'supervised' in config['alg']['id']:\n    trainer = SupervisedTrainer(config)\n"
            "else:\n    trainer = OnPolicyTrainer(config)\ntrainer.train_and_eval()\n",
            "dispatch",
            routes=("PPO", "SFT"),
        ),
        Invalid(
            "from .workflows import run_dpo, run_sft\n"
            "if args.stage == 'sft':\n    run_sft()\nelif args.stage == 'dpo':\n    run_dpo()\n",
            "dispatch",
            routes=("SFT", "DPO"),
        ),
        Invalid(
            "parser.add_argument('--algo', default='GRPO', choices=['DAPO', 'GRPO', 'RLOO'])\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        # a helper's own guard refuses nothing for the run: the option still chooses
        Invalid(
            "ap.add_argument('--algo', choices=['grpo', 'ppo'], default='grpo')\n"
            "def grpo_loss(args, logp, adv):\n    if args.algo != 'grpo':\n"
            "        raise ValueError(args.algo)\n"
            "    return -(logp * adv).mean()\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        # one choice refused by a branch that only raises: the others are still offered
        Invalid(
            "ap.add_argument('--algo', choices=['grpo', 'ppo', 'dpo'], default='grpo')\n"
            "args = ap.parse_args()\n"
            "if args.algo == 'dpo':\n    raise NotImplementedError('dpo')\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        Invalid(
            "parser.add_argument('--estimator', default='gae', choices=['gae', 'rloo', 'group_norm'])\n",
            "dispatch",
            routes=("PPO", "GRPO"),
        ),
        Invalid(
            "from trl import DPOTrainer, GRPOTrainer\n"
            "if cfg.rl in {RLType.GRPO, RLType.GDPO}:\n    trainer_cls = GRPOTrainer\n"
            "elif cfg.rl is RLType.DPO:\n    trainer_cls = DPOTrainer\n",
            "dispatch",
            routes=("GRPO", "DPO"),
        ),
        Invalid(
            "if args.rlhf_type == 'ppo':\n    load_value()\nif args.rlhf_type == 'grpo':\n    add_rewards()\n"
            "if args.rlhf_type in ['dpo', 'kto']:\n    pairs()\n",
            "dispatch",
            routes=("PPO", "GRPO", "DPO"),
        ),
        Invalid(
            "RUNNERS = {'sft': run_sft, 'grpo': run_grpo}\nRUNNERS[args.algo]()\n",
            "dispatch",
            routes=("SFT", "GRPO"),
        ),
        Invalid(
            "COMMANDS = {'download': download_fn, 'finetune_full': full_fn, 'merge_lora': merge_fn,"
            " 'evaluate': evaluate_fn}\n",
            "dispatch",
            routes=("SFT", "MERGE", "EVAL_ONLY"),
        ),
        Invalid(
            "from trl import DPOTrainer, SFTTrainer\n"
            "cls = DPOTrainer if args.pref else SFTTrainer\ncls(model=m)\n",
            "dispatch",
            routes=("DPO", "SFT"),
        ),
        Invalid(
            "from typing import Literal\nstage: Literal['pt', 'sft', 'rm', 'ppo', 'dpo'] = 'sft'\n",
            "dispatch",
            routes=("SFT", "PPO"),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.compared: dict[str, tuple[cst.CSTNode, cst.CSTNode | None, set[str], set[str]]] = {}
        """Compared setting -> (first comparison, its statement, routes whose branch selects training
        code, every route it is compared with)."""
        self.branches: dict[tuple[int, bool], set[str]] = {}
        """Routes each branch read so far runs, by the branch's node and whether only classes count."""
        self.loops = 0
        """How many ``for`` loops are around the node being visited."""
        self.fixed: set[str] = set()
        """Names the code binds to a fixed value or a loop's items (``algorithm = "dpo"``)."""
        self.stepped_through: set[str] = set()
        """Names a loop binds to each value of a list written in the code in turn (``for stage in
        ["sft", "rm"]``): compared with routes, they run each stage, no setting chooses."""
        self.elifs: set[int] = set()
        """The ``elif`` tests of chains already read from their first ``if``."""
        self.looked_up: dict[str, tuple[cst.BaseExpression, cst.CSTNode | None, str]] = {}
        """Names bound to a trainer class looked up by a setting -> (the lookup, its statement, the key)."""
        self.constructed: set[str] = set()
        """Looked-up names called (the trainer constructed)."""
        self.runs_trainer = False
        """Whether the file calls a trainer's run method (``trainer.train()``)."""
        self.registered: dict[str, tuple[cst.BaseExpression, cst.CSTNode | None, set[str]]] = {}
        """Registering decorators -> (their first use, the routes of the names they register code under)."""
        self.refusals: list[tuple[str, set[str], bool]] = []
        """Settings' routes refused by a branch that only raises: (key, routes, whether all but them)."""
        self.flags: list[tuple[cst.Call, tuple[str, ...], str | None, str | None]] = []
        """Options whose choices name routes: (the option, its routes, its default, its key)."""
        self.switches: list[tuple[cst.Call, str, str]] = []
        """Options switching a route on (``--dpo``, ``action="store_true"``): the call, route and key."""
        self.steps = False
        """Whether the file takes a gradient step of its own (``loss.backward()``, ``optimizer.step()``)."""
        self.launches = False
        """Whether the file starts a process (``subprocess.run``, ``os.system``)."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            if (route := _subcommand_word(decorator, node)) is not None:
                # a CLI whose subcommands are named for routes: the command line picks the route
                entry = (decorator.decorator, self._statement(), set[str]())
                self.registered.setdefault(SUBCOMMANDS, entry)[2].add(route)
                continue
            call = decorator.decorator
            if type(call) is not cst.Call or not call.args or call.args[0].keyword is not None:
                continue
            registrar = last_name(call.func)
            said = set(name_words(registrar))
            if "register" in said and said & REGISTERED_WORDS and (word := _word(call.args[0].value)):
                self.registered.setdefault(registrar, (call, self._statement(), set()))[2].add(word)

    def visit_For(self, node: cst.For) -> None:
        self.loops += 1
        if type(node.target) is cst.Name:
            self.fixed.add(node.target.value)  # (``for algorithm in ("sft", "dpo")``: each in turn)
            if isinstance(node.iter, cst.List | cst.Tuple | cst.Set):
                self.stepped_through.add(node.target.value)

    def leave_For(self, original_node: cst.For) -> None:
        self.loops -= 1

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if type(value) is cst.SimpleString or (type(value) is cst.Name and value.value.isupper()):
            # ``algorithm = "dpo"``, ``algorithm = ALGORITHM``: a value fixed in the code, no setting
            self.fixed.update(t.target.value for t in node.targets if type(t.target) is cst.Name)
        found = _lookup(value)
        if found is None:
            return
        key, callee = found
        if (
            type(value) is cst.Call
            and any(type(a.value) is cst.Name and a.value.value == key for a in value.args)
            and (key in self.fixed or self.loops)
        ):
            return  # a variable handed to the getter that the code fixes, or a loop's: no setting picks
        for target in node.targets:
            if type(target.target) is cst.Tuple:
                # ``COLLATOR, TRAINER = get_collator_and_trainer(algorithm)``: the element named for it
                for element in target.target.elements:
                    if (
                        type(element.value) is cst.Name
                        and set(name_words(element.value.value)) & LOOKUP_WORDS
                    ):
                        self.looked_up[element.value.value] = (node.value, self._statement(), key)
                continue
            if type(target.target) is not cst.Name:
                continue
            parts = (key.split(".")[-1], target.target.value, callee)
            if {w for part in parts for w in name_words(part)} & LOOKUP_WORDS:
                self.looked_up[target.target.value] = (node.value, self._statement(), key)
                if callee == INSTANTIATE:
                    self.constructed.add(target.target.value)  # (built there, not only looked up)

    def _leads_to_training(self, body: cst.CSTNode) -> bool:
        """Say whether a branch calls or picks a trainer or a function named after a route (``run_sft``)."""
        return bool(self._branch_routes(body))

    def _branch_routes(self, body: cst.CSTNode, classes: bool = False) -> set[str]:
        """Return the training routes a branch runs: trainers and table entries it calls or picks.

        Picking counts: ``trainer_cls = AxolotlDPOTrainer`` selects the class that is called later; so
        does a class's method (``GRPOStrategy.get_trainer_class()``: the class is named for the route).
        With ``classes``, only classes count (not a route's helper, ``dpo_loss(...)``). Read once per
        branch: an ``elif`` chain's rest is a branch of every test above it.
        """
        known = self.branches.get((id(body), classes))
        if known is not None:
            return known
        routes = self.branches[(id(body), classes)] = set()
        below = descendants(body)
        run: dict[str, set[str]] = {}  # a name -> the methods the branch calls on it
        for n in below:
            if type(n) is cst.Call and type(n.func) is cst.Attribute and type(n.func.value) is cst.Name:
                run.setdefault(n.func.value.value, set()).add(n.func.attr.value)
        trained = {name for name, methods in run.items() if methods & TRAIN_METHODS}
        # a trainer built only to measure a model (``scores = rm_trainer.predict(ds)``) runs no route
        measuring = {name for name, methods in run.items() if methods & TRAINER_EVALUATIONS} - trained
        skipped: set[int] = set()
        for n in below:
            # (exact types: every node of the branch is tested, and libcst's abstract bases make a
            # failed isinstance slow; its concrete node classes have no subclasses)
            kind = type(n)
            if type(n) is cst.Assign:
                if (held := _held_trainer_route(n, trained)) is not None:
                    routes.add(held)
                if type(n.value) is cst.Call and any(
                    type(t.target) is cst.Name and t.target.value in measuring for t in n.targets
                ):
                    # (its class and the settings it is built with: ``Trainer(args=TrainingArguments(o))``)
                    skipped.update(id(d) for d in (n.value, *descendants(n.value)))
            if id(n) in skipped:
                continue
            value = n.func if kind is cst.Call else n.value if kind is cst.Assign else None  # type: ignore[attr-defined]
            if type(value) is not cst.Name and type(value) is not cst.Attribute:
                continue
            for q in self.names(value):
                if classes and not q.rpartition(".")[2][:1].isupper():
                    continue
                label = _training_route(q)
                if label is not None:
                    routes.add(label)
        return routes

    def _either_or(self, node: cst.If) -> None:
        """Report an ``if``/``else``, or an ``elif`` chain, whose branches run different training routes.

        ``if "supervised" in config["alg"]["id"]: SupervisedTrainer(...) else: OnPolicyTrainer(...)``: what
        runs depends on the test, whatever words it compares. A chain counts the trainer classes its
        branches pick (``if isinstance(cfg.algorithm, SFTConfig): trainer_cls = SFTTrainer elif
        isinstance(cfg.algorithm, DPOConfig): trainer_cls = DPOTrainer``), not route-named helpers: the
        terms of a loss mixed in a loop (``elif loss_type == "sft": loss += sft_loss(...)``) choose
        nothing. Branches that run the same route (DPO and a DPO variant) beside one that runs another
        still choose.
        """
        if (
            type(node.orelse) is cst.Else
            and not is_dead(node.test)
            and self._branches_choose(node, [node.body, node.orelse.body], classes=False)
        ):
            return
        if id(node) in self.elifs or type(node.orelse) is not cst.If or self.loops:
            return  # (a chain in a loop may run each of its branches in turn: stages, not a choice)
        branches: list[cst.BaseSuite] = [] if is_dead(node.test) else [node.body]
        orelse: cst.If | cst.Else | None = node.orelse
        while type(orelse) is cst.If:
            self.elifs.add(id(orelse))  # (read with the chain it continues)
            if not is_dead(orelse.test):
                branches.append(orelse.body)
            orelse = orelse.orelse
        if type(orelse) is cst.Else:
            branches.append(orelse.body)
        self._branches_choose(node, branches, classes=True)

    def _branches_choose(self, node: cst.If, branches: list[cst.BaseSuite], classes: bool) -> bool:
        """Report, and say, whether two of the branches run different training routes."""
        each = [self._branch_routes(body, classes) for body in branches]
        routes = [found for found in each if found]
        if not any(not one & other for i, one in enumerate(routes) for other in routes[i + 1 :]):
            return False
        default = None
        if (
            len(each) == 2
            and type(node.orelse) is cst.Else
            and len(each[1]) == 1
            and _off_unless_set(node.test)
        ):
            # ``if getattr(cfg, "use_dpo", False): DPO else: PPO``: a flag absent is off, so the
            # ``else`` branch's route is what runs unless the run sets it
            default = next(iter(each[1]))
        subject = next(
            (
                key
                for n in (node.test, *descendants(node.test))
                if isinstance(n, cst.Attribute | cst.Subscript)
                and (key := _setting_key(cst.Module([]).code_for_node(n))) is not None
            ),
            None,
        )
        self.report(
            node,
            "dispatch",
            "the branches of a test run different routes",
            routes=tuple(sorted(set().union(*routes))),
            key=subject,
            default=default,
        )
        return True

    def visit_If(self, node: cst.If) -> None:
        self._either_or(node)
        self._refused(node)
        tests = [node.test, *descendants(node.test)]
        comparisons = [t for t in tests if type(t) is cst.Comparison]
        for comparison in comparisons:
            words = [
                w
                for target in comparison.comparisons
                if isinstance(target.operator, cst.Equal | cst.In | cst.Is)
                for w in _words(target.comparator)
            ]
            if words and not (
                type(comparison.left) is cst.Name and comparison.left.value in self.stepped_through
            ):
                subject = cst.Module([]).code_for_node(comparison.left)  # code only when it is a choice
                entry = self.compared.setdefault(subject, (node, self._statement(), set(), set()))
                if type(comparison.left) is cst.Attribute and not _reports_only(node.body):
                    # every route a config field (args.x, cfg.x) is compared with, where the branch does
                    # more than print (a monitor printing each trainer's metrics chooses nothing)
                    entry[3].update(words)
                if self._leads_to_training(node.body) or (
                    _chooses_objective(subject) and _computes_loss(node.body)
                ):
                    # those whose branch selects training code, or computes the loss a setting that
                    # names the objective picks (``if loss_config.name == "dpo": losses = ...``)
                    entry[2].update(words)

    def _refused(self, node: cst.If) -> None:
        """Note the routes a setting refuses: ``if args.algo != "grpo": raise NotImplementedError(...)``.

        A branch that only raises runs no route: the values it is taken for are offered, not run.
        """
        around = self.enclosing()
        if around and not any("main" in name_words(n) for n in around):
            return  # (a helper's guard holds for its own callers; the entry's guard for the run)
        body = node.body.body if type(node.body) is cst.IndentedBlock else ()
        raises = [
            s
            for line in body
            if type(line) is cst.SimpleStatementLine
            for s in line.body
            if type(s) is cst.Raise
        ]
        if not raises or len(body) != 1 or type(node.test) is not cst.Comparison:
            return
        test = node.test
        if len(test.comparisons) != 1 or type(test.left) is not cst.Attribute:
            return
        target = test.comparisons[0]
        named = set(_words(target.comparator))
        if not named:
            return
        key = _setting_key(cst.Module([]).code_for_node(test.left))
        if key is None:
            return
        if isinstance(target.operator, cst.NotEqual | cst.NotIn):
            self.refusals.append((key, named, True))  # every route but these
        elif isinstance(target.operator, cst.Equal | cst.In):
            self.refusals.append((key, named, False))  # these routes

    def _offered(self, key: str | None, choices: tuple[str, ...]) -> tuple[str, ...]:
        """Return the choices of an option the file does not refuse (see :meth:`_refused`)."""
        kept = set(choices)
        for refused_key, named, all_but in self.refusals:
            if refused_key == key:
                kept = kept & named if all_but else kept - named
        return tuple(c for c in choices if c in kept)

    def visit_MatchCase(self, node: cst.MatchCase) -> None:
        pattern = node.pattern
        if isinstance(pattern, cst.MatchValue) and self._leads_to_training(node.body):
            words = _words(pattern.value)
            if words:
                entry = self.compared.setdefault("<match>", (node, self._statement(), set(), set()))
                entry[2].update(words)
                entry[3].update(words)

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Name and node.func.value in self.looked_up:
            self.constructed.add(node.func.value)
        if dotted(node.func) and any(q.startswith(PROCESS_STARTERS) for q in self.names(node.func)):
            self.launches = True
        if (
            type(node.func) is cst.Attribute
            and node.func.attr.value in TRAIN_METHODS
            and all(a.keyword is not None for a in node.args)
        ):
            # ``trainer.train()``, ``trainer.train(resume_from_checkpoint=ckpt)``; not a torch
            # module's mode switch ``model.train(False)``
            self.runs_trainer = True
        if type(node.func) is cst.Attribute and node.func.attr.value == "add_argument" and node.args:
            flag = node.args[0].value
            if type(flag) is cst.SimpleString and any(
                w in (text_value(flag) or "") for w in MULTI_TURN_FLAGS
            ):
                self.report(node, "dispatch", "an option plugs in multi-turn rollouts", routes=("ONLINE_RL",))
        called = method(node)
        if called == "backward" or (
            called == "step"
            and type(node.func) is cst.Attribute
            and set(name_words(dotted(node.func.value).replace(".", "_"))) & OPTIMISER_WORDS
        ):
            self.steps = True  # (an environment's, a scheduler's or a progress bar's step is none)
        if called == "add_argument" and (key := flag_key(node)) is not None:
            action = keyword(node, "action")
            if (
                action is not None
                and type(action.value) is cst.SimpleString
                and text_value(action.value) == "store_true"
                and key.lower() in SWITCH_WORDS
            ):
                # ``--dpo``, ``--sft``, ``--ppo`` as switches: each turns its route on
                self.switches.append((node, ROUTE_WORDS[key.lower()], key))
        choices = keyword(node, "choices")
        if choices is None:
            return
        option = flag_key(node)
        if option is not None and "loss" in name_words(option) and _collects(node):
            # (a loss option given several times, ``--loss-type sigmoid --loss-type sft``, adds its
            # terms into one loss: TRL's DPO loss with an SFT term stays a preference loss)
            return
        routes = set(_words(choices.value))
        if len(routes) >= 2:
            default = keyword(node, "default")
            chosen = _words(default.value) if default is not None else []
            # reported once the file is read: whether it runs a trainer or a process decides
            self.flags.append((node, tuple(sorted(routes)), chosen[0] if chosen else None, option))

    def visit_IfExp(self, node: cst.IfExp) -> None:
        # Only trainers, and functions named for a route in a file that also quotes one, are seen
        # here: the detector runs on files with "Trainer" or a quoted route name (TRIGGERS).
        routes: set[str] = set()
        for branch in (node.body, node.orelse):
            routes.update(r for q in self.names(branch) if (r := route_of_name(q)) is not None)
        if len(routes) >= 2:
            self.report(node, "dispatch", "a condition picks the trainer", routes=tuple(sorted(routes)))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        annotation = node.annotation.annotation
        if type(annotation) is not cst.Subscript or not self.names(annotation.value) & LITERALS:
            return
        if self.context.scope.kind == "function":
            return  # a local variable's type, not a setting
        routes = {
            w
            for element in annotation.slice
            if type(element.slice) is cst.Index
            for w in _words(element.slice.value)
        }
        if len(routes) >= 2:
            key = node.target.value if type(node.target) is cst.Name else None
            self.report(
                node, "dispatch", "a config field chooses the route", routes=tuple(sorted(routes)), key=key
            )

    def visit_Dict(self, node: cst.Dict) -> None:
        # (a settings dict returned or logged passes variables on under their own names: no table)
        routes = {
            w
            for element in node.elements
            if type(element) is cst.DictElement
            # (``{"gae_lambda": gae_lambda, "grpo_groups": grpo_groups}`` passes settings on by name)
            if isinstance(code := _code_of(element.value), cst.Name | cst.Attribute | cst.SimpleString)
            # (``{"sft_anchor_enabled": False, "reward_weights": None}``: a settings dict's defaults)
            if not (type(code) is cst.Name and code.value in ("None", "True", "False"))
            if not _passes_by_name(element)
            if not _holds_results(code)
            if not _setting_value(code)
            if (w := _table_word(element.key)) is not None
            if type(code) is not cst.SimpleString or _names_class(element.value)
        }
        if routes <= {"EVAL_ONLY", "MERGE"}:
            return  # a choice among tools that train nothing is not a training route
        if len(routes) >= 2:
            self.report(node, "dispatch", "a table maps route names to code", routes=tuple(sorted(routes)))

    def leave_Module(self, original_node: cst.Module) -> None:
        # An option or subcommands naming routes, in a file that neither runs a trainer nor starts a
        # process, may only pick what is evaluated: classify.combine decides from the other evidence.
        picks = None if self.runs_trainer or self.launches else FLAG
        for option, choices, default, key in self.flags:
            offered = self._offered(key, choices)
            if len(offered) < 2:
                continue  # (every route but one refused: the option picks nothing)
            message = "a flag chooses the route"
            self.report(option, "dispatch", message, routes=offered, default=default, key=key, variant=picks)
        switched = {route for _, route, _ in self.switches}
        if (self.steps or self.runs_trainer or self.launches) and len(switched - {"SFT"}) >= 2:
            # options named for two routes or more, each turning its route on, in a file that steps,
            # runs a trainer or launches: the command line picks the route (none given, the file's own
            # step runs). A supervised switch beside one other route adds a likelihood term to it
            # (``--dpo --sft``), and switches in a file that trains nothing pick what is plotted or
            # evaluated
            option, _, key = next(s for s in self.switches if s[1] != "SFT")
            message = "options named for routes switch the route"
            self.report(option, "dispatch", message, routes=tuple(sorted(switched)), key=key, variant=picks)
        for registrar, (call, statement, registered) in self.registered.items():
            if len(registered) >= 2:
                # code registered under route names (advantage estimators, losses): a setting's
                # value looks one up, as in a dispatch table
                message = (
                    "the command line's subcommand picks the route"
                    if registrar == SUBCOMMANDS
                    else "a registry maps route names to code"
                )
                variant = picks if registrar == SUBCOMMANDS else None
                named = tuple(sorted(registered))
                self.report(call, "dispatch", message, statement=statement, routes=named, variant=variant)
        if self.runs_trainer:
            for name in self.constructed:
                lookup, statement, key = self.looked_up[name]
                message = f"the trainer class is looked up by the value of {key}"
                self.report(lookup, "dispatch", message, statement=statement, key=key, variant=BY_NAME)
        for subject, (node, statement, leading, compared) in self.compared.items():
            # Two routes whose branches select training code, or one config field compared with three
            # routes or more throughout the file (its branches prepare models, data and arguments). A
            # plain parameter compared with routes is a helper's mode (a chat template's task), not a
            # setting of the run.
            routes = leading if len(leading) >= 2 else compared if len(compared) >= MANY_ROUTES else set()
            message, variant = "the route depends on a compared setting", None
            if not routes and len(compared) == 2:
                # ``if args.critic_type == "ppo": ... elif args.critic_type == "grpo":`` around the
                # advantage and loss code: a choice when this file's own steps train both routes
                routes, message, variant = compared, "a setting compared with two routes", COMPARED
            if routes:
                self.report(
                    node,
                    "dispatch",
                    message,
                    statement=statement,
                    routes=tuple(sorted(routes)),
                    key=_setting_key(subject),
                    variant=variant,
                )

    def _statement(self) -> cst.CSTNode | None:
        return self.context.statements[-1] if self.context.statements else None


def _off_unless_set(test: cst.BaseExpression) -> bool:
    """Say whether a test reads a flag that is off where the run does not set it.

    ``hasattr(cfg, "use_dpo") and cfg.use_dpo``, ``getattr(cfg, "use_dpo", False)`` (or ``None``),
    ``cfg.get("use_dpo")``, ``cfg.get("use_dpo", False)``: absent, the flag is false.
    """
    if type(test) is cst.BooleanOperation and isinstance(test.operator, cst.And):
        # (the right side reads the attribute the left asks about: ``hasattr(ds, "features") and
        # "chosen" in ds.features`` tests what data holds, not a flag)
        left, right = test.left, test.right
        if type(left) is not cst.Call or last_name(left.func) != "hasattr" or len(left.args) != 2:
            return False
        asked = left.args[1].value
        return (
            type(asked) is cst.SimpleString
            and type(right) is cst.Attribute
            and right.attr.value == asked.evaluated_value
            and dotted(right.value) == dotted(left.args[0].value)
        )
    if type(test) is not cst.Call:
        return False
    called = last_name(test.func)
    if called == "getattr" and len(test.args) == 3:
        fallback = test.args[2].value
    elif called == "get" and type(test.func) is cst.Attribute and 1 <= len(test.args) <= 2:
        if len(test.args) == 1:
            return True
        fallback = test.args[1].value
    else:
        return False
    return type(fallback) is cst.Name and fallback.value in ("False", "None")
