"""A Python config module: settings objects built at module level for a framework's runner to read."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.reward_head import names_a_reward_model
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.trainers import LABEL_KINDS, route_word
from arb_audit.taxonomy.routes import POLICY_GRADIENT

CONFIG_SUFFIXES = ("Config", "Cfg", "Arguments", "Args")
"""Endings of a settings class's name (``GRPOLossConfig``, ``RLColocateTrainerConfig``)."""
CONFIG_WORDS = frozenset({"config", "configs", "cfg", "arguments", "args"})
"""Words that begin or end a settings class's name (``SimPOConfig``, ``ConfigDPOTraining``)."""
TRAINING_SETTINGS = frozenset({"optim", "optimizer", "optimiser", "lr", "scheduler", "adamw", "adam", "sgd"})
"""Words of a setting that only a training run has (``optim_wrapper``, ``AdamWConfig``, ``LRConfig``)."""
TOOL_WORDS = frozenset({"tool", "tools", "interaction", "interactions"})
"""Words of a setting that gives the rollouts tools or an interaction (``tools_schema=``,
``tool_call_parser=``, ``GSM8KToolAgentLoopConfig``): the policy acts between its turns. Not "env":
that names environment variables and runtime environments as often (``env=experiment_name``)."""
COMPONENT = "config"
"""Variant of the ``loss`` finding of a config module: it names the stage its runner trains."""


class ConfigModule(RouteDetector):
    """Module-level settings that name a route, beside an optimiser's: a config a framework trains from.

    mmengine-style configs (xtuner's ``model = dict(type=RewardModel, loss_type="ranking")`` with an
    ``optim_wrapper``) and config-object modules (``loss_cfg = GRPOLossConfig(...)`` with ``AdamWConfig``)
    are imported or loaded by the framework's ``train`` command; they compute nothing, but say what the
    run trains: a component of that route. Only module-level statements count (a function building a
    config is code of its own), and only a file that also configures an optimiser or learning rate (a
    config of training, not of evaluation or serving).
    """

    TRIGGERS = ("Config", "Cfg", "Args", "Arguments", "type=")
    # (a settings class's base ends like its own name: ``class GRPOScriptArguments(ScriptArguments)``)

    VALID = (
        Valid("from x import GRPOLossConfig\ndef build():\n    return GRPOLossConfig(), AdamWConfig()\n"),
        Valid("from x import GRPOLossConfig\nloss_cfg = GRPOLossConfig(clip=0.2)\n"),
        Valid("model = dict(type=Qwen, path='m')\noptim_wrapper = dict(type=AmpOptimWrapper)\n"),
        Valid("class ModelConfig(PretrainedConfig):\n    hidden: int = 4\n"),
        Valid("class DPODataset(Dataset):\n    pass\n"),
        Valid("class ConfigDPODataset(Dataset):\n    pass\n"),
        Valid(
            "class GRPOScriptArguments(ScriptArguments):\n    reward_funcs: list = None\n"
            "if __name__ == '__main__':\n    main(parse())\n"
        ),
    )
    INVALID = (
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

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.enclosing():  # only module-level settings count
            for target in node.targets:
                if isinstance(target.target, cst.Name) and TRAINING_SETTINGS & set(
                    words(target.target.value)
                ):
                    self.trains = True

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
        if (
            isinstance(test, cst.Comparison)
            and isinstance(test.left, cst.Name)
            and test.left.value == "__name__"
        ):
            self.script = True

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.defined is not None and not self.script:
            # (a script's own settings class configures what the script does, seen by other detectors)
            node, statement, stage, name = self.defined
            message = f"defines {name}, the settings of a {stage} trainer"
            self.report(node, "loss", message, statement=statement, kind=stage, variant=COMPONENT)
            return
        if not self.trains:
            return
        for node, statement, stage, name in self.named[:1]:
            message = f"a config module sets up training with {name}"
            self.report(node, "loss", message, statement=statement, kind=stage, variant=COMPONENT)
            if self.tools is not None and stage in POLICY_GRADIENT:
                message = "the config gives the rollouts tools, an interaction or several turns"
                self.report(self.tools, "interactive", message, interactive=True)


def _settings(name: str) -> bool:
    """Say whether a class's name is a settings class's: it begins or ends with a word for one."""
    found = words(name)
    return bool(found) and (found[0] in CONFIG_WORDS or found[-1] in CONFIG_WORDS)


def _gives_tools(call: cst.Call, name: str) -> bool:
    """Say whether a settings call gives rollouts tools, an interaction or more than one turn.

    Its class is named for them (``GSM8KToolAgentLoopConfig``), a keyword is (``tools_schema=``,
    ``lmdeploy_tool_call_parser=``, also in a ``dict`` it is given), or it sets ``max_turns`` above one.
    """
    if TOOL_WORDS & set(words(name)) and not {"single", "turn"} <= set(words(name)):
        return True
    args = list(call.args)
    for arg in call.args:
        # and the settings it nests (``extra_rollout_config=dict(tool_call_parser="qwen3coder")``)
        if isinstance(arg.value, cst.Call) and last_name(arg.value.func) == "dict":
            args.extend(arg.value.args)
    for arg in args:
        if arg.keyword is None:
            continue
        if TOOL_WORDS & set(words(arg.keyword.value)):
            return True
        if arg.keyword.value == "max_turns" and isinstance(arg.value, cst.Integer):
            return int(arg.value.value, 0) > 1
    return False
