"""A training framework's public entry point: the table of frameworks says what it runs."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.calls import CLI_RUNNERS, OPTIMISER_WORDS
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.frameworks import (
    CALLED_TRAINING_METHODS,
    CONFIG_PICKED_TRAINERS,
    IMPORT_WORDS,
    PACKAGES,
    SETTING_LEAVES,
    Entry,
    entry_for,
)
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_bool, text_value
from arb_audit.analyzer.trainers import LABEL_KINDS, route_word
from arb_audit.analyzer.walk import descendants
from arb_audit.analyzer.yaml_keys import string_settings
from arb_audit.taxonomy.routes import POLICY_GRADIENT

DOTTED_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}")
"""A module path and a name in it, as a string (``pkg.module.Class``): a class loaded by name."""
YAML_PARSERS = frozenset({"yaml.safe_load", "yaml.load", "yaml.full_load", "omegaconf.OmegaConf.create"})
"""Calls that parse YAML text: a literal handed to one is the script's own config."""
MAX_YAML_PER_FILE = 256 * 1024
"""Characters of YAML text parsed in one file, all literals together."""
LOADER_WORDS = frozenset({"getattr", "get", "import", "load", "locate", "instantiate", "class"})
"""Words of a function that loads a class by its path, or of a lookup whose default is one."""


BUILDERS = frozenset(
    {
        "remote",
        "partial",
        "Partial",
        "submit",
        "register",
        "options",
        "map",
        "run_in_executor",
        "spawn",
        "RayClassWithInitArgs",
    }
)
"""Calls that build or run a class they are handed (``ray.remote(CriticWorker)``, ``partial(Trainer, ...)``);
any other call given a class only looks at it (a type check, a signature, a log line, a mock)."""
BINDERS = frozenset({"partial", "Partial"})
"""Builders that bind a function's arguments for a later run (``run.Partial(llm.finetune, model=m)``,
NeMo-Run's): a function handed to one is run, not only a class."""


AGENT_WORDS = frozenset({"agent", "agentic", "multiturn", "tool"})
"""Words of a trainer subclass's name that say it trains an agent over multi-turn episodes."""


RUN_METHODS = frozenset({"run", "train", "fit", "__call__"})
"""Methods by which a framework's experiment or trainer class runs what it was built for."""
MEASURING_WORDS = frozenset({"eval", "evaluate", "evaluation", "validate", "validation"})
"""Words of a call that measures a model (``evaluate_step_wise``, ``eval_fn``)."""
TRAINING_CALL_WORDS = frozenset({"train", "training", "fit", "backward", "optimize"})
"""Words of a call that trains (``train_step``, ``fit``)."""
STEPPING_WORDS = frozenset({"step", "update"})
"""Words of a call that trains when it is an optimiser's, a trainer's or a policy's (``optimizer.step()``,
``policy_update``), not an environment's (``env.step(action)``)."""
STEPPED_WORDS = OPTIMISER_WORDS | {
    *("scheduler", "trainer", "engine", "scaler", "policy", "actor", "critic", "model", "accelerator"),
    *("weights", "params", "parameters"),
}
"""Words of what such a step or update trains."""


def _trains(call: cst.Call) -> bool:
    """Say whether a call trains (see :data:`TRAINING_CALL_WORDS`, :data:`STEPPING_WORDS`)."""
    said = set(words(last_name(call.func)))
    if said & TRAINING_CALL_WORDS:
        return True
    if not said & STEPPING_WORDS:
        return False
    receiver = call.func.value if type(call.func) is cst.Attribute else None
    held = set(words(last_name(receiver))) if receiver is not None else set()
    return bool((said | held) & STEPPED_WORDS)


def _run_only_measures(node: cst.ClassDef) -> str | None:
    """Return the run method a subclass overrides with one that only measures, if it does.

    ``class EvalOnlyEntrypoint(BasePPOExp)`` whose ``run`` calls an evaluation and nothing that trains,
    nor the base's own ``run`` (``super().run()``): what the subclass runs is a measurement.
    """
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    for statement in body:
        if type(statement) is not cst.FunctionDef or statement.name.value not in RUN_METHODS:
            continue
        calls = [n for n in descendants(statement) if type(n) is cst.Call]
        if any(_trains(n) or (type(n.func) is cst.Name and n.func.value == "super") for n in calls):
            return None
        if any(MEASURING_WORDS & set(words(last_name(n.func))) for n in calls):
            return statement.name.value
    return None


def _literal_text(value: cst.BaseExpression) -> str | None:
    """Return a string literal's text; an f-string's with each field read as ``0`` (``epochs: {n}``)."""
    if type(value) is cst.SimpleString:
        text = value.evaluated_value
        return text if isinstance(text, str) else None
    if type(value) is cst.FormattedString:
        return "".join(p.value if type(p) is cst.FormattedStringText else "0" for p in value.parts)
    return None


class FrameworkEntry(RouteDetector):
    """Calling, constructing or subclassing a name of :data:`arb_audit.analyzer.frameworks.FRAMEWORKS`.

    The table maps each framework's trainer classes, train functions and pipelines to the stage they
    run, or to the routes a config key selects (a launcher), or to evaluation. Names resolve to
    qualified names, so an import alias or a function-local import is followed; a name only imported,
    or mentioned in a string, is not evidence. Where the call itself sets the entry's key to one of
    its choices — a keyword argument, a key of a dict literal or the first positional argument, as a
    string literal or a name last assigned one (``pipeline_name = "raft_aligner"``) — that choice is
    what runs. A table entry handed over as a value (``learner_cls=DAPLearner``) or as its full path in
    a string argument (``getattr(cfg, "pipeline_cls", "roll.pipeline....AgenticPipeline")``, to be
    imported by name) is used too. The framework examples themselves are tested from the table
    (tests/analyzer/test_frameworks.py).
    """

    TRIGGERS = (*IMPORT_WORDS, *CONFIG_PICKED_TRAINERS)

    VALID = (
        Valid("from nemo_rl.algorithms.grpo import grpo_train\nprint('grpo_train')\n"),
        Valid("def sft_train(x):\n    return x\nsft_train(1)\n"),
        Valid("import roll\nprint('see roll.pipeline.dpo.dpo_pipeline.DPOPipeline')\n"),
        Valid("import roll\nlogger.info('roll.pipeline.dpo.dpo_pipeline.DPOPipeline')\n"),
        Valid(
            "import inspect\nfrom nemo_aligner.algorithms.dpo import DPOTrainer\n"
            "if isinstance(trainer, DPOTrainer):\n    print(inspect.signature(DPOTrainer), dir(DPOTrainer))\n"
        ),
    )
    INVALID = (
        Invalid(
            "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
            "class AgentRayPPOTrainer(RayPPOTrainer):\n    pass\n",
            "interactive",
        ),
        Invalid(
            "from openrlhf.cli.train_ppo_ray import train\n"
            "args = {'advantage_estimator': 'group_norm'}\ntrain(args)\n",
            "stage",
            "grpo",
        ),
        Invalid("from nemo_rl.algorithms.sft import sft_train as run\nrun(cfg)\n", "stage", "sft"),
        Invalid(
            "def main():\n    from swift.pipelines import rlhf_main\n    rlhf_main()\n",
            "dispatch",
            routes=("DPO", "GRPO"),
        ),
        Invalid("from lm_eval import simple_evaluate\nsimple_evaluate(model=m)\n", "scoring"),
        # a trainer's experiment class whose run is replaced by one that only evaluates
        Invalid(
            "from skyrl.train.entrypoints.main_base import BasePPOExp\n"
            "class EvalOnly(BasePPOExp):\n    async def run(self, client):\n"
            "        return await evaluate(loader, self.get_generator(client))\n",
            "scoring",
        ),
        Invalid(
            "from skyrl.train.entrypoints.main_base import BasePPOExp\n"
            "class EvalOnly(BasePPOExp):\n    def run(self):\n"
            "        for a in actions:\n            env.step(a)\n        return evaluate(loader)\n",
            "scoring",
        ),
        # one whose run trains and evaluates is the base's (here its config picks the route)
        Invalid(
            "from skyrl.train.entrypoints.main_base import BasePPOExp\n"
            "class Exp(BasePPOExp):\n    def run(self):\n        self.trainer.train()\n"
            "        evaluate(loader)\n",
            "dispatch",
        ),
        Invalid(
            "from roll.utils import safe_import_class\n"
            "name = getattr(cfg, 'pipeline_cls', 'roll.pipeline.dpo.dpo_pipeline.DPOPipeline')\n"
            "cls = safe_import_class(name)\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "from oat.algorithms.ppo import PPOLearner\nclass PPOMultiTurnLearner(PPOLearner):\n    pass\n",
            "interactive",
        ),
        Invalid(
            "from .ray_trainer import RayPPOTrainer\ntrainer = RayPPOTrainer(config=config)\ntrainer.fit()\n",
            "dispatch",
        ),
        Invalid(
            "from skyrl.train.trainer import RayPPOTrainer\nclass DAPOTrainer(RayPPOTrainer):\n    pass\n",
            "stage",
            "grpo",
            "dapo",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._strings: dict[str, str] = {}
        """Names last assigned a string literal, in walk order."""
        self._texts: dict[str, str] = {}
        """Names last assigned a literal that may be YAML text (an f-string's fields read as ``0``)."""
        self._parsed: set[str] = set()
        """YAML texts parsed already (one parsed at every call says no more)."""
        self._yaml_budget = MAX_YAML_PER_FILE
        """Characters of YAML text the file may still have parsed (a hostile file parses many)."""
        self.settings: dict[str, list[str]] = {}
        """String values of dict-literal fields seen so far, by field name (a config built in the file)."""
        self.deferred: list[tuple[cst.CSTNode, str, Entry, str]] = []
        """Entries built whose training method (``Entry.trained_by``) is looked for in the whole file."""
        self.fed: set[str] = set()
        """Methods called with data (a first argument that is no ``True``/``False``): ``x.train(groups)``,
        unlike a torch module's mode switch ``x.train()``/``x.train(False)``; also as
        ``method(keyword)`` for each keyword such a call is given (``fit(train_objectives)``)."""
        self.evaluators: list[bool] = []
        """For each call open around the node: whether it builds an evaluator."""
        self.ended = False
        """Whether the whole file has been read (deferred entries are reported then)."""
        self.trainable: dict[str, str] = {}
        """Names last bound to an entry built whose training method is looked for, and that method."""
        self.binding: tuple[cst.Call, str] | None = None
        """The call an assignment being walked binds to a plain name, and the name (the call's own visit
        looks its entry up once and records what it builds)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        target = node.targets[0].target if len(node.targets) == 1 else None
        if (
            type(target) is cst.Attribute
            and target.attr.value in SETTING_LEAVES
            and (setting := self._setting(node.value)) is not None
        ):
            # config.training.trainer_type = TrainerType.TRL_DPO: a setting the file fixes itself
            self.settings.setdefault(target.attr.value, []).append(setting)
        if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            value = node.value
            name = node.targets[0].target.value
            self.trainable.pop(name, None)  # (rebound: what it held is no longer it)
            self.binding = (value, name) if type(value) is cst.Call else None
            text = _literal_text(value)  # (a literal is evaluated once, for both uses)
            if type(value) is cst.SimpleString and text is not None:
                self._strings[name] = text
            else:
                self._strings.pop(name, None)
            if text is not None and "\n" in text:
                self._texts[name] = text
            else:
                self._texts.pop(name, None)
        self._picked(node, node.value, "picks")

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._picked(node, node.value, "hands on")
            if node.keyword.value in SETTING_LEAVES and (value := self._setting(node.value)) is not None:
                # TrainingParams(trainer_type=TrainerType.TRL_GRPO): a config built in the file
                self.settings.setdefault(node.keyword.value, []).append(value)

    def _picked(self, node: cst.CSTNode, value: cst.BaseExpression, how: str) -> None:
        """Report an entry chosen as a value (``learner_cls = DAPLearner``, ``actor_cls=PPOActor``).

        A framework that builds the program itself is handed the class to run; picking it is using it.
        """
        if isinstance(value, cst.Name | cst.Attribute) and (found := self._entry(value)) is not None:
            self._report(node, *found, how)

    def _setting(self, node: cst.BaseExpression) -> str | None:
        """Return a setting's value: a string, or an enum member by its name (``TrainerType.TRL_DPO``)."""
        if (
            type(node) is cst.Attribute
            and isinstance(node.value, cst.Name | cst.Attribute)
            and node.attr.value.isupper()  # (``args.stage`` reads a setting: only its value would say)
        ):
            return node.attr.value
        return self._string(node)

    def _string(self, node: cst.BaseExpression) -> str | None:
        if type(node) is cst.SimpleString:
            return text_value(node)
        return self._strings.get(node.value) if type(node) is cst.Name else None

    def _chosen(self, call: cst.Call, entry: Entry) -> Entry | None:
        """Return the choice a call's own arguments select for an entry whose key picks, if any."""
        if not entry.choices or entry.key is None:
            return None
        leaf = entry.key.rsplit(".", 1)[-1]
        values: list[cst.BaseExpression] = []
        if (arg := keyword(call, leaf)) is not None:
            values.append(arg.value)
        for arg in call.args:
            if arg.keyword is None and arg.star == "":
                if type(arg.value) is cst.Dict:
                    values.extend(
                        e.value
                        for e in arg.value.elements
                        if type(e) is cst.DictElement and self._string(e.key) == leaf
                    )
                else:
                    values.append(arg.value)
                break
        for value in values:
            text = self._setting(value)
            if text is not None and (choice := entry.choose(text)) is not None:
                return choice
        # a config the file built before the call (``{"algorithm": {"adv_estimator": "grpo"}}``), or
        # YAML text it parsed (``trainer:\n  type: dpo``), whose keys are known in full
        given = dict.fromkeys([*self.settings.get(entry.key, ()), *self.settings.get(leaf, ())])
        chosen = [c for text in given if (c := entry.choose(text)) is not None]
        return chosen[0] if len({c.name for c in chosen}) == 1 else None

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key, value = self._string(node.key), self._string(node.value)
        if key is not None and value is not None:
            self.settings.setdefault(key, []).append(value)

    def _entry(self, node: cst.BaseExpression) -> tuple[str, Entry] | None:
        for name in sorted(self.names(node)):
            entry = entry_for(name)
            if entry is not None:
                return name, entry
            if name.startswith(".") and (picked := CONFIG_PICKED_TRAINERS.get(name.rsplit(".", 1)[-1])):
                # a framework's own source (or its fork) importing its trainer relatively
                return name, picked
        return None

    def _report(self, node: cst.CSTNode, name: str, entry: Entry, how: str) -> None:
        if entry.trained_by is not None and not self.ended:
            self.deferred.append((node, name, entry, how))
            return
        # (``get_trainer(name)(config)``: the factory's own arguments pick what it returns)
        picking = node.func if type(node) is cst.Call and type(node.func) is cst.Call else node
        if type(picking) is cst.Call and (choice := self._chosen(picking, entry)) is not None:
            name, entry = f"{name} ({entry.key}={choice.name})", choice
        if entry.given:
            # trlx.train(reward_fn=...): the arguments given decide; a call given none says nothing
            given = next(
                ((k, e) for k, e in entry.given if type(node) is cst.Call and keyword(node, k)), None
            )
            if given is None:
                return
            name, entry = f"{name} (given {given[0]})", given[1]
        if entry.labels and entry.kind is None:
            self.report(
                node,
                "dispatch",
                f"{how} {name}: the route is picked by {entry.key}",
                routes=entry.labels,
                default=entry.default,
                key=entry.key.lstrip("-").replace("-", "_") if entry.key else None,
            )
        elif entry.kind is not None:
            derived = True if entry.kind in POLICY_GRADIENT or entry.data_source == "self_generated" else None
            on_policy = entry.on_policy if entry.on_policy is not None else derived
            self.report(
                node,
                "stage",
                f"{how} {name} (framework table)",
                kind=entry.kind,
                variant=entry.variant,
                on_policy=on_policy,
                data_source=entry.data_source,
            )
            if entry.interactive:
                self.report(node, "interactive", f"{name} trains on multi-turn environment episodes")
        elif entry.role == "eval":
            self.report(node, "scoring", f"{how} {name}, an evaluation entry point (framework table)")
        elif entry.role == "environment":
            message = f"{how} {name}, a tool or environment of multi-turn rollouts (framework table)"
            self.report(node, "environment", message)

    def leave_Module(self, original_node: cst.Module) -> None:
        self.ended = True
        for node, name, entry, how in self.deferred:
            # trained where its training method is given data (``await model.train(groups)``, under
            # whatever name it was handed on as), not where a torch module's mode is switched
            if entry.trained_by in self.fed:
                self._report(node, name, entry, how)

    def leave_Call(self, original_node: cst.Call) -> None:
        self.evaluators.pop()

    def _parsed_yaml(self, node: cst.Call) -> None:
        """Keep the settings of YAML text the file writes out and parses (``yaml.safe_load(CONFIG)``)."""
        if not node.args or not self.names(node.func) & YAML_PARSERS:
            return
        value = node.args[0].value
        text = self._texts.get(value.value) if type(value) is cst.Name else _literal_text(value)
        if not text or text in self._parsed or len(text) > self._yaml_budget:
            return
        self._parsed.add(text)
        self._yaml_budget -= len(text)
        for key, setting in string_settings(text):
            self.settings.setdefault(key, []).append(setting)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if last_name(func) in ("safe_load", "load", "full_load", "create"):
            self._parsed_yaml(node)
        # (a loss handed to an evaluator, ``kd.evals.Evaluator(losses={...})``, is computed, not trained)
        inside = any(self.evaluators)
        self.evaluators.append(last_name(func).endswith("Evaluator"))
        if inside:
            return
        if type(func) is cst.Name and words(func.value)[:1] == ("train",):
            # the project's training routine handed what the file built (``await train_agent(model,
            # scenarios)``): the built object's training method is given data there (not any
            # ``train_test_split(rows)``: the object itself is handed on)
            given = [a.value.value for a in node.args if type(a.value) is cst.Name]
            self.fed.update(self.trainable[g] for g in given if g in self.trainable)
        if type(func) is cst.Attribute and func.attr.value in CALLED_TRAINING_METHODS:
            self.fed.add(f"{func.attr.value}()")  # (a method named for a training run, called at all)
        if type(func) is cst.Attribute and node.args and literal_bool(node.args[0].value) is None:
            self.fed.add(func.attr.value)
            if words(last_name(func.value))[-1:] == ("trainer",):
                self.fed.add(f"trainer.{func.attr.value}")  # trainer.fit(model), self.trainer.fit(m)
            self.fed.update(
                f"{func.attr.value}({a.keyword.value})" for a in node.args if a.keyword is not None
            )
        found = self._entry(node.func)
        if found is not None:
            if self.binding is not None and self.binding[0] is node and found[1].trained_by is not None:
                self.trainable[self.binding[1]] = found[1].trained_by  # ``model = art.TrainableModel(...)``
            self._report(node, *found, "calls")
            return
        if (
            self.names(node.func) & CLI_RUNNERS
            and node.args
            and node.args[0].keyword is None
            and (run := self._entry(node.args[0].value)) is not None
        ):
            # ``fire.Fire(main)`` of ``from llama_cookbook.finetuning import main``: the command line
            # runs the framework's function
            self._report(node.args[0], *run, "runs as a command line")
            return
        # (``ray.remote(num_gpus=1)(CriticWorker)``: the builder is the call that makes the callee)
        builder = node.func.func if type(node.func) is cst.Call else node.func
        if (built := last_name(builder)) in BUILDERS:
            for arg in node.args:
                # a framework's class handed on to be built elsewhere (``ray.remote(CriticWorker)``)
                # (a Name or Attribute: last_name is "" for anything else)
                value = arg.value
                if (
                    arg.keyword is None  # (a keyword's value is read by visit_Arg)
                    and (last_name(value)[:1].isupper() or built in BINDERS)
                    and (handed := self._entry(value)) is not None
                ):
                    self._report(arg, *handed, "hands on")
                    return
        callee = node.func.attr.value if type(node.func) is cst.Attribute else getattr(node.func, "value", "")
        loads = LOADER_WORDS & set(words(callee)) if isinstance(callee, str) else set()
        for arg in node.args:
            value = arg.value
            by_name = loads or (arg.keyword is not None and arg.keyword.value == "default")
            # getattr(cfg, "pipeline_cls", "roll.pipeline.agentic.agentic_pipeline.AgenticPipeline"),
            # import_string("..."), a Hydra _target_: the class is loaded by its full path
            path = text_value(value) if by_name and type(value) is cst.SimpleString else None
            if path is not None and DOTTED_PATH.fullmatch(path) and (entry := entry_for(path)) is not None:
                self._report(node, path, entry, "loads by name")
                return

    def _own_definition(self, node: cst.ClassDef) -> tuple[str, Entry] | None:
        """Return the table entry a class of this file *is*: a framework's own source defining it.

        ``class PPOMultiTurnLearner(PPOLearner)`` in a file that imports from ``oat`` is oat's entry of
        that name, not a subclass of the base it happens to derive from.
        """
        imported = {
            q.split(".", 1)[0]
            for names in self.context.resolver.module_scope.bindings.values()
            for q in names
            if "." in q
        }
        for package in sorted(imported & set(PACKAGES)):
            qualified = f"{package}.{node.name.value}"
            entry = entry_for(qualified)
            if entry is not None and entry.name == node.name.value:
                return qualified, entry
        return None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        own = self._own_definition(node)
        if own is not None:
            self._report(node, *own, "defines")
            return
        for base in node.bases:
            found = self._entry(base.value)
            if found is None:
                continue
            name, entry = found
            if AGENT_WORDS & set(words(node.name.value)) and (
                set(entry.labels) & {"GRPO", "PPO"} or entry.kind in POLICY_GRADIENT
            ):
                # ``class AgentRayPPOTrainer(RayPPOTrainer)``: a policy-gradient trainer subclassed to
                # train an agent, whose rollouts are its episodes of tool calls or environment turns
                message = f"defines {node.name.value}, a {name} named for training an agent"
                self.report(node, "interactive", message, interactive=True)
            named = route_word(node.name.value) if entry.labels else None
            if named is not None and named[0] in entry.labels and named[0] in LABEL_KINDS:
                # A subclass of a configurable trainer named for one of its routes (SkyRL's
                # ``DAPOTrainer(RayPPOTrainer)``) is written to run that route: the name is the only
                # evidence, so the stage is decided by name.
                label, word = named
                self.report(
                    node,
                    "stage",
                    f"defines {node.name.value}, a {name} named for {label}",
                    kind=LABEL_KINDS[label],
                    variant=word,
                    on_policy=True if label in ("GRPO", "PPO") else None,
                )
                return
            if (
                (run := _run_only_measures(node)) is not None
                and (entry.kind is not None or entry.labels)
                and not last_name(base.value).endswith("Trainer")
            ):
                # (a trainer class's subclass is read as a trainer by the step and trainer readers;
                # only an experiment's or a pipeline's is decided here)
                # the base's training replaced by a method that measures (an evaluation entry point
                # built on the trainer's experiment class): the subclass trains nothing
                message = f"defines {node.name.value}, a {name} whose {run}() only evaluates"
                self.report(node, "scoring", message)
                return
            self._report(node, name, entry, "subclasses")
            return
