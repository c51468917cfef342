"""A Python config module: settings objects built at module level for a framework's runner to read."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.reward_head import names_a_reward_model
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.trainers import LABEL_KINDS, route_word
from arb_audit.taxonomy.routes import POLICY_GRADIENT

CONFIG_SUFFIXES = ("Config", "Cfg", "Arguments", "Args")
"""Endings of a settings class's name (``GRPOLossConfig``, ``RLColocateTrainerConfig``)."""
CONFIG_WORDS = frozenset({"config", "configs", "cfg", "arguments", "args"})
"""Words that begin or end a settings class's name (``SimPOConfig``, ``ConfigDPOTraining``)."""
LOOKING_WORDS = frozenset({"eval", "evaluation", "evaluator", "test", "plot", "plotter", "plots", "viz"})
"""Words of a settings class for measuring or showing a route's model, not for training it."""
TRAINING_SETTINGS = frozenset({"optim", "optimizer", "optimiser", "lr", "scheduler", "adamw", "adam", "sgd"})
"""Words of a setting that only a training run has (``optim_wrapper``, ``AdamWConfig``, ``LRConfig``)."""
TOOL_WORDS = frozenset({"tool", "tools", "interaction", "interactions"})
"""Words of a setting that gives the rollouts tools or an interaction (``tools_schema=``,
``tool_call_parser=``, ``GSM8KToolAgentLoopConfig``): the policy acts between its turns. Not "env":
that names environment variables and runtime environments as often (``env=experiment_name``)."""
ROLLOUT_WORDS = frozenset({"rollout", "rollouts", "agent", "loop", "actor", "generation", "sampling", "env"})
"""Words of a settings class for the rollouts a policy is trained on (``RolloutConfig``,
``GSM8KToolAgentLoopConfig``): where tools or turns make the samples multi-turn."""
NOT_ROLLOUT_WORDS = frozenset(
    {"eval", "evaluation", "evaluator", "val", "validation", "judge", "judger", "profiler", "test"}
)
"""Words of a settings class whose tools or turns serve measuring, not the rollouts trained on."""
TURN_LIMITS = frozenset({"max_turns", "max_assistant_turns", "max_num_turns", "max_turn", "num_turns"})
"""Keywords bounding an episode's turns: above one, rollouts are multi-turn."""
COMPONENT = "config"
"""Variant of the ``loss`` finding of a config module: it names the stage its runner trains."""
LENGTH_WORDS = frozenset({"iters", "iterations", "epochs", "steps"})
"""Last words of a setting for how long a run trains (``max_iters``, ``num_train_epochs``)."""
NOT_LENGTH_WORDS = frozenset(
    {"eval", "val", "test", "save", "log", "logging", "warmup", "checkpoint", "ckpt", "print", "report"}
)
"""Words of such a setting that time something else than the training (``eval_iters``)."""
POLICY_WORDS = frozenset(
    {"reward", "rewards", "generations", "rollout", "rollouts", "kl", "clip", "advantage", "beta", "group"}
)
"""Words of a setting that only a preference or policy-gradient run has (``num_generations``, ``kl_coef``,
``beta``): a bare config with one of them is not a supervised run's."""
BARE = "bare"
"""Variant of the findings of a module of bare settings (names bound to values, nothing else)."""


class ConfigModule(RouteDetector):
    """Module-level settings that name a route, beside an optimiser's: a config a framework trains from.

    mmengine-style configs (xtuner's ``model = dict(type=RewardModel, loss_type="ranking")`` with an
    ``optim_wrapper``) and config-object modules (``loss_cfg = GRPOLossConfig(...)`` with ``AdamWConfig``)
    are imported or loaded by the framework's ``train`` command; they compute nothing, but say what the
    run trains: a component of that route. Only module-level statements count (a function building a
    config is code of its own), and only a file that also configures an optimiser or learning rate (a
    config of training, not of evaluation or serving).
    """

    TRIGGERS = ("Config", "Cfg", "Args", "Arguments", "type=", "learning_rate", "lr =", "eval_only")
    # (a settings class's base ends like its own name: ``class GRPOScriptArguments(ScriptArguments)``)

    VALID = (
        Valid("from x import GRPOLossConfig\ndef build():\n    return GRPOLossConfig(), AdamWConfig()\n"),
        Valid("from x import GRPOLossConfig\nloss_cfg = GRPOLossConfig(clip=0.2)\n"),
        Valid("model = dict(type=Qwen, path='m')\noptim_wrapper = dict(type=AmpOptimWrapper)\n"),
        Valid("class ModelConfig(PretrainedConfig):\n    hidden: int = 4\n"),
        Valid("class DPODataset(Dataset):\n    pass\n"),
        Valid("class ConfigDPODataset(Dataset):\n    pass\n"),
        Valid(
            "class ConfigRewardModelEval(ConfigEval):\n    pass\nclass ArgsPPOPlotter(ArgsBase):\n    pass\n"
        ),
        Valid(
            "class GRPOScriptArguments(ScriptArguments):\n    reward_funcs: list = None\n"
            "if __name__ == '__main__':\n    main(parse())\n"
        ),
        # bare settings of a policy-gradient run, of sampling, of an evaluation's length; a script
        Valid("learning_rate = 1e-6\nmax_steps = 500\nnum_generations = 8\n"),
        Valid("learning_rate = 5e-7\nnum_train_epochs = 1\nbeta = 0.1\n"),
        Valid("temperature = 0.7\nmax_tokens = 512\nmodel = 'gpt2'\n"),
        Valid("learning_rate = 3e-5\neval_iters = 40\n"),
        Valid("learning_rate = 3e-5\nmax_iters = 20\nprint(learning_rate)\n"),
        Valid("eval_only = False\ninit_from = 'gpt2'\n"),
    )
    INVALID = (
        # bare settings a training script executes or imports (nanoGPT's config/*.py)
        Invalid(
            "import time\nout_dir = 'out'\neval_iters = 40\nwandb_run_name = 'ft-' + str(time.time())\n"
            "init_from = 'gpt2-xl'\nbatch_size = 1\nmax_iters = 20\nlearning_rate = 3e-5\n",
            "loss",
            "sft",
            COMPONENT,
        ),
        Invalid(
            "max_iters = 5000\nlearning_rate = 1e-3\nbeta2 = 0.99\nwarmup_iters = 100\n",
            "loss",
            "sft",
            COMPONENT,
        ),
        Invalid(
            "batch_size = 8\neval_iters = 500\neval_only = True\ninit_from = 'gpt2'\n", "scoring", None, BARE
        ),
        Invalid(
            "from dataclasses import dataclass\nfrom transformers import TrainingArguments\n"
            "@dataclass\nclass SimPOConfig(TrainingArguments):\n    beta: float = 2.0\n"
            "    gamma: float = 0.5\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "@dataclass\nclass ConfigDPOTraining(ConfigNLPCausalLMTraining):\n"
            "    loss_function: str = 'DPOLoss'\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "from xtuner.model.reward import RewardModel\n"
            "model = dict(type=RewardModel, loss_type='ranking')\n"
            "optim_wrapper = dict(type=AmpOptimWrapper, optimizer=dict(type=AdamW, lr=2e-5))\n",
            "loss",
            "reward_model",
        ),
        Invalid(
            "from xtuner.v1.rl.loss import GRPOLossConfig\nfrom xtuner.v1.config import AdamWConfig\n"
            "loss_cfg = GRPOLossConfig(policy_loss_cfg=dict(cliprange_high=0.28))\n"
            "optim_cfg = AdamWConfig(lr=1e-6)\n"
            "agent_loop_config = ToolAgentLoopConfig(max_turns=2)\n",
            "interactive",
        ),
        Invalid(
            "from xtuner.v1.rl.loss import GRPOLossConfig\nfrom xtuner.v1.config import AdamWConfig\n"
            "loss_cfg = GRPOLossConfig(policy_loss_cfg=dict(cliprange_high=0.28))\n"
            "optim_cfg = AdamWConfig(lr=1e-6)\n",
            "loss",
            "grpo",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.named: list[tuple[cst.CSTNode, cst.CSTNode | None, str, str]] = []
        """(node, statement, stage kind, the class that names it) of each route-named setting."""
        self.trains = False
        """An optimiser or learning-rate setting was seen at module level."""
        self.defined: tuple[cst.CSTNode, cst.CSTNode | None, str, str] | None = None
        """A settings class the module defines for a route's trainer (``SimPOConfig(TrainingArguments)``)."""
        self.script = False
        """The module runs as a script (``if __name__ == "__main__":``)."""
        self.tools: cst.CSTNode | None = None
        """A module-level setting that gives the rollouts tools or an interaction, or several turns."""
        self.bare: dict[str, cst.Assign] = {}
        """Module-level names bound to a value, by name (the last binding)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.enclosing():  # only module-level settings count
            for target in node.targets:
                if type(target.target) is cst.Name and TRAINING_SETTINGS & set(words(target.target.value)):
                    self.trains = True
                if type(target.target) is cst.Name:
                    self.bare[target.target.value] = node

    def visit_Call(self, node: cst.Call) -> None:
        if self.enclosing():
            return
        name = last_name(node.func)
        if TRAINING_SETTINGS & set(words(name)):
            self.trains = True
        candidates = []
        if name.endswith(CONFIG_SUFFIXES):
            candidates.append(name)
            if self.tools is None and _gives_tools(node, name):
                self.tools = node
        kind = keyword(node, "type")
        if name == "dict" and kind is not None:
            candidates.append(last_name(kind.value))
        for candidate in candidates:
            if TRAINING_SETTINGS & set(words(candidate)):
                self.trains = True
            stage = self._stage(candidate)
            if stage is not None:
                statement = self.context.statements[-1] if self.context.statements else None
                self.named.append((node, statement, stage, candidate))

    def _bare_settings(self) -> None:
        """Report what a module of bare settings configures, where its names say it.

        ``eval_only = True`` makes the run it configures a measurement; a learning rate and a length
        of training, with no setting of a preference or policy-gradient run (``beta``,
        ``num_generations``) nor a route's name, configure the next-token objective's run on its
        data: supervised fine-tuning (pretraining alike), as a component of the script that reads it.
        """
        named = {name: words(name) for name in self.bare}
        for name, said in named.items():
            value = self.bare[name].value
            if {"eval", "only"} <= set(said) and type(value) is cst.Name and value.value == "True":
                message = f"a config of bare settings sets {name} = True: the run it configures measures"
                self.report(self.bare[name], "scoring", message, variant=BARE)
                return
        if any(
            _policy_setting(said) or route_word(name, strict=True) is not None for name, said in named.items()
        ):
            return
        rate = next(
            (n for n, said in named.items() if "lr" in said or {"learning", "rate"} <= set(said)), None
        )
        length = next(
            (
                n
                for n, said in named.items()
                if said[-1:] and said[-1] in LENGTH_WORDS and not NOT_LENGTH_WORDS & set(said)
            ),
            None,
        )
        if rate is not None and length is not None:
            message = (
                f"a config of bare settings ({rate}, {length}) that names no other route: the run it "
                "configures trains the next-token objective"
            )
            self.report(self.bare[rate], "loss", message, kind="sft", variant=COMPONENT)

    @staticmethod
    def _stage(name: str) -> str | None:
        """Return the stage kind a settings or model class is named for, if any."""
        if names_a_reward_model(name):
            return "reward_model"
        named = route_word(name, strict=True)
        return LABEL_KINDS.get(named[0]) if named is not None else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # ``class SimPOConfig(TrainingArguments)``: a route's settings, defined for a trainer to read
        name = node.name.value
        if self.enclosing()[:-1] or not _settings(name) or self.defined is not None:
            return
        stage = self._stage(name)
        if stage is not None and any(_settings(last_name(b.value)) for b in node.bases):
            statement = self.context.statements[-1] if self.context.statements else None
            self.defined = (node, statement, stage, name)

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if type(test) is cst.Comparison and type(test.left) is cst.Name and test.left.value == "__name__":
            self.script = True

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.defined is not None and not self.script:
            # (a script's own settings class configures what the script does, seen by other detectors)
            node, statement, stage, name = self.defined
            message = f"defines {name}, the settings of a {stage} trainer"
            self.report(node, "loss", message, statement=statement, kind=stage, variant=COMPONENT)
            return
        if not self.named and not self.script and _bare(original_node):
            self._bare_settings()
            return
        if not self.trains:
            return
        for node, statement, stage, name in self.named[:1]:
            message = f"a config module sets up training with {name}"
            self.report(node, "loss", message, statement=statement, kind=stage, variant=COMPONENT)
            if self.tools is not None and stage in POLICY_GRADIENT:
                message = "the config gives the rollouts tools, an interaction or several turns"
                self.report(self.tools, "interactive", message, interactive=True)


def _policy_setting(said: tuple[str, ...]) -> bool:
    """Say whether a setting's words are a preference or policy-gradient run's (``kl_coef``, ``beta``).

    Not an optimiser's: Adam's ``beta1``/``beta2`` (``adam_beta2``) are numbered.
    """
    found = POLICY_WORDS & set(said)
    if found == {"beta"}:
        after = said[said.index("beta") + 1 :]
        return not ("adam" in said or (bool(after) and after[0].isdigit()))
    return bool(found)


def _bare(module: cst.Module) -> bool:
    """Say whether a module only binds names to values (a config a script ``exec``s or imports).

    Imports, assignments, docstrings, and ``if``/``try`` blocks of the same; no function, class, loop
    or call made for its effect (nanoGPT's ``config/finetune_shakespeare.py``).
    """
    return all(_plain(statement) for statement in module.body)


PLAIN_SMALL = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Import, cst.ImportFrom, cst.Pass)
"""Simple statements a module of bare settings is made of (with docstrings)."""


def _plain(node: cst.CSTNode) -> bool:
    """Say whether a statement, or a block's statements, only bind names (see :func:`_bare`)."""
    if isinstance(node, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return all(
            isinstance(small, PLAIN_SMALL)
            or (type(small) is cst.Expr and type(small.value) is cst.SimpleString)
            for small in node.body
        )
    if type(node) is cst.IndentedBlock:
        return all(_plain(statement) for statement in node.body)
    if type(node) is cst.If:
        return _plain(node.body) and (node.orelse is None or _plain(node.orelse))
    if type(node) is cst.Else:
        return _plain(node.body)
    if type(node) is cst.Try:
        return _plain(node.body) and all(_plain(h.body) for h in node.handlers)
    return False


def _settings(name: str) -> bool:
    """Say whether a class's name is a settings class's: it begins or ends with a word for one.

    Not one named for measuring or showing (``ConfigRewardModelEval``, ``ArgsPPOPlotter``): the route
    in its name is what it looks at.
    """
    found = words(name)
    return (
        bool(found)
        and (found[0] in CONFIG_WORDS or found[-1] in CONFIG_WORDS)
        and not LOOKING_WORDS & set(found)
    )


def _gives_tools(call: cst.Call, name: str) -> bool:
    """Say whether a settings call gives rollouts tools, an interaction or more than one turn.

    Its class is named for them (``GSM8KToolAgentLoopConfig``), a keyword is (``tools_schema=``,
    ``lmdeploy_tool_call_parser=``, also in a ``dict`` it is given), or it sets ``max_turns`` above one.
    """
    said = set(words(name))
    if not ROLLOUT_WORDS & said or said & NOT_ROLLOUT_WORDS:
        return False  # (a profiler's or a judge's tools, an evaluation's turns: not the rollouts')
    if TOOL_WORDS & said and not {"single", "turn"} <= said:
        return True
    args = list(call.args)
    for arg in call.args:
        # and the settings it nests (``extra_rollout_config=dict(tool_call_parser="qwen3coder")``)
        if type(arg.value) is cst.Call and last_name(arg.value.func) == "dict":
            args.extend(arg.value.args)
    for arg in args:
        if arg.keyword is None or literal_off(arg.value):
            continue  # (``tools=None``, ``enable_tools=False``: switched off)
        key = arg.keyword.value
        if TOOL_WORDS & set(words(key)) or key == "multi_turn":
            return True
        if key in TURN_LIMITS and written_turns(arg.value) > 1:
            return True
    return False


def written_turns(value: cst.BaseExpression) -> int:
    """Return a turn limit written as a literal (-1, unlimited, as a large number), else 0."""
    if type(value) is cst.UnaryOperation and isinstance(value.operator, cst.Minus):
        return 2**31 if type(value.expression) is cst.Integer else 0
    if type(value) is cst.Integer:
        try:
            return int(value.value.replace("_", ""), 0)
        except ValueError:  # ("00"-style literals int() rejects with base 0)
            return int(value.value.replace("_", ""))
    return 0


def literal_off(value: cst.BaseExpression) -> bool:
    """Say whether a setting's value is written as off.

    ``None``, ``False``, ``0``, empty, or settings switched off (``MultiTurnConfig(enable=False)``,
    ``{"enable": False}``).
    """
    switch = _enable_field(value)
    if switch is not None:
        return literal_off(switch)
    if type(value) is cst.Name:
        return value.value in ("None", "False")
    if type(value) is cst.Integer:
        return written_turns(value) == 0
    if type(value) is cst.SimpleString:
        return value.value.strip("'\"rbuRBU") == ""
    return isinstance(value, cst.List | cst.Tuple | cst.Dict) and not value.elements


def _enable_field(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """Return the ``enable``/``enabled`` setting of a call's keywords or a dict literal, if any."""
    if type(value) is cst.Call:
        for arg in value.args:
            if arg.keyword is not None and arg.keyword.value in ("enable", "enabled"):
                return arg.value
    elif type(value) is cst.Dict:
        for element in value.elements:
            key = element.key if type(element) is cst.DictElement else None
            if type(key) is cst.SimpleString and literal_text(key) in ("enable", "enabled"):
                return element.value
    return None
