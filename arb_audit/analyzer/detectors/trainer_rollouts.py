"""Online RL through a trainer: multi-turn environment or tool rollouts given to a policy-gradient trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import built_environment, method, single_turn
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_bool
from arb_audit.analyzer.trainers import config_stem, route_word, trainer_named
from arb_audit.taxonomy.files import STAGE_LABELS
from arb_audit.taxonomy.routes import POLICY_GRADIENT

INTERACTIVE_KEYWORDS = (
    "environment_factory",
    "tools",
    "max_tool_calling_iterations",
    "env_class",
    "environments",
)
"""Trainer arguments that make each sample a multi-turn episode (TRL's GRPOTrainer and RLOOTrainer)."""
ROLLOUT_KEYWORDS = ("workflow", "rollout_workflow", "agent", "agent_cls", "agent_class", "generator")
"""Arguments of a ``train()`` call or trainer that plug in the code producing each sample (AReaL's
``workflow=``, agent-RL frameworks' agent and generator classes)."""
ENVIRONMENT_KEYWORDS = ("env", "environment", "vf_env")
"""Trainer arguments handing over the environment its samples come from, multi-turn or not."""
INSERTED_WORDS = frozenset({"env", "environment", "tool", "tools", "observation", "observations", "obs"})
"""Words, beside "mask", of a switch that keeps what an environment or tool inserted between the
model's turns out of the loss (``mask_env_responses = True``): there are such turns to mask."""
AGENT_WORDS = frozenset({"agent", "agentic", "react", "multiturn", "tool", "tools", "env", "environment"})
"""Words of such a class's name that say its samples are episodes of an agent acting with tools or in
an environment."""


class TrainerRollouts(RouteDetector):
    """A policy-gradient trainer given an environment factory or tools samples multi-turn episodes.

    TRL's ``GRPOTrainer(environment_factory=...)`` runs each completion as an episode of ``reset`` and
    tool-call ``step``s; ``tools=[...]`` lets the policy call functions between turns. Either makes the
    stage interactive (online RL). A ``rollout_func`` is reported as custom on-policy sampling; whether
    it is multi-turn is decided by the loop inside it (see ``MultiTurnLoop``). So does an environment
    handed over as ``env=`` that the file builds from a library's multi-turn class (``vf.ToolEnv``, not
    ``vf.SingleTurnEnv``), and a switch set on that keeps the environment's responses out of the loss.
    A policy-gradient trainer or its config given a switch named for an agent's turns
    (``UnslothGRPOConfig(use_agentic_generate=True)``, ``multi_turn=True``) samples such episodes too.
    """

    TRIGGERS = ("Trainer", "workflow", "agent", "generator")

    VALID = (
        Valid("from trl import PPOTrainer\ncfg.mask_observations = True\nPPOTrainer(config=cfg, model=m)\n"),
        Valid("from trl import GRPOTrainer\nGRPOTrainer(model=m, reward_funcs=[r])\n"),
        Valid("from trl import SFTTrainer\nSFTTrainer(model=m, tools=None)\n"),
        Valid("def f(environment_factory=None):\n    pass\nf(environment_factory=E)\n"),
        Valid("trainer.train(workflow='areal.workflow.rlvr.RLVRWorkflow', workflow_kwargs=kw)\n"),
        Valid(
            "import verifiers as vf\nfrom trl import GRPOTrainer\nenv = vf.SingleTurnEnv(dataset=d)\n"
            "GRPOTrainer(model=m, env=env)\n"
        ),
        Valid("from trl import SFTConfig\nargs = SFTConfig(use_tools=True)\n"),
        Valid("from trl import GRPOConfig\nargs = GRPOConfig(use_agentic_generate=False)\n"),
        Valid("judge(model, prompt, multi_turn=True)\n"),
        Valid(
            "from proj.envs import AlfworldEnv\nenv = AlfworldEnv(tools=tools)\n"
            "MySFTTrainer(model=m, env=env)\n"
        ),
        Valid("from trl import GRPOTrainer\nGRPOTrainer(model=m, reward_funcs=r, multi_turn_prompts=True)\n"),
        Valid("from trl import GRPOConfig\nargs = GRPOConfig(log_tool_calls=True, skip_tool_errors=True)\n"),
        Valid(
            "from trl import SFTConfig, SFTTrainer\nargs = SFTConfig(mask_tool_outputs=True)\n"
            "SFTTrainer(args=args)\n"
        ),
    )
    INVALID = (
        Invalid(
            "from trl import GRPOTrainer\nGRPOTrainer(model=m, environment_factory=Env)\n", "interactive"
        ),
        Invalid("import trl\ntrl.GRPOTrainer(model=m, tools=[search], reward_funcs=r)\n", "interactive"),
        Invalid("from trl import GRPOTrainer\nGRPOTrainer(model=m, rollout_func=roll)\n", "on_policy"),
        Invalid(
            "trainer = RayGRPOTrainer(cfg, use_tools=True, tool_registry=tools)\ntrainer.fit()\n",
            "interactive",
        ),
        Invalid(
            "from trainer import UnslothGRPOConfig, UnslothGRPOTrainer\n"
            "args = UnslothGRPOConfig(use_agentic_generate=True)\nUnslothGRPOTrainer(model=m, args=args)\n",
            "interactive",
        ),
        Invalid(
            "trainer.train(workflow='examples.tau2.agent.Tau2AgentWorkflow', workflow_kwargs=kw)\n",
            "interactive",
        ),
        Invalid("trainer.train(workflow=SearchReactWorkflow, workflow_kwargs=kw)\n", "interactive"),
        # a trainer of no table's, named for GRPO, given an environment of the project's built with tools
        Invalid(
            "import verifiers as vf\nfrom proj.envs import AlfworldEnv\n"
            "env = AlfworldEnv(dataset='alfworld', tools=tools)\n"
            "vf.GRPOEnvTrainer(model=m, env=env).train()\n",
            "interactive",
        ),
        Invalid(
            "import verifiers as vf\nfrom trl import GRPOTrainer\nenv = vf.ToolEnv(tools=[search])\n"
            "GRPOTrainer(model=m, env=env)\n",
            "interactive",
        ),
        Invalid(
            "import verifiers as vf\nfrom trl import GRPOTrainer\nargs = vf.grpo_defaults()\n"
            "args.mask_env_responses = True\nGRPOTrainer(model=m, env=vf.load_environment('x'), args=args)\n",
            "interactive",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.environments: set[str] = set()
        """Names bound to a library's multi-turn environment built in the file."""
        self.masks: list[cst.CSTNode] = []
        """Switches set on that mask an environment's or tool's responses out of the loss."""
        self.trains = False
        """Whether a policy-gradient trainer is built in the file and given an environment (``env=``):
        what such a switch configures. A switch beside a trainer of prompts alone masks something else."""

    def _multi_turn(self, value: cst.BaseExpression) -> bool:
        if type(value) is cst.Name:
            return value.value in self.environments
        if type(value) is not cst.Call:
            return False
        built = built_environment(value, self.names, self.context.resolver.is_imported)
        return built is not None and not single_turn(built)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self._multi_turn(node.value):
            self.environments |= {t.target.value for t in node.targets if type(t.target) is cst.Name}
        for target in node.targets:
            if type(target.target) is cst.Attribute and _masks_insertions(target.target.attr, node.value):
                self.masks.append(node)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and _masks_insertions(node.keyword, node.value):
            self.masks.append(node)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.trains and self.masks:
            message = "the policy-gradient trainer masks environment responses between the model's turns"
            self.report(self.masks[0], "interactive", message, interactive=True)

    def visit_Call(self, node: cst.Call) -> None:
        if method(node) in ("train", "fit") or self.trainer(node) is not None:
            for name in ROLLOUT_KEYWORDS:
                arg = keyword(node, name)
                agent = _class_name(arg.value) if arg is not None else None
                if arg is not None and agent is not None and AGENT_WORDS & set(words(agent)):
                    self.report(
                        arg, "interactive", f"trained on {agent} episodes ({name}=)", interactive=True
                    )
                    return
        found = self.trainer(node)
        switch = _agentic_switch(node)  # (cheap: the name is looked up only where a switch is set)
        if switch is not None and (
            (found is not None and found[1].kind in POLICY_GRADIENT) or _names_policy_gradient(node)
        ):
            arg, name = switch
            message = f"policy-gradient training switched to an agent's turns ({name}=True)"
            self.report(arg, "interactive", message, interactive=True)
            return
        if found is not None and found[1].kind not in POLICY_GRADIENT:
            return
        if found is None and not _named_policy_gradient_trainer(last_name(node.func)):
            return  # (``vf.GRPOEnvTrainer(env=...)``: a trainer of no table's, named for its route)
        for name in ENVIRONMENT_KEYWORDS:
            arg = keyword(node, name)
            given = arg is not None and not (type(arg.value) is cst.Name and arg.value.value == "None")
            self.trains = self.trains or given
            if arg is not None and self._multi_turn(arg.value):
                message = f"policy-gradient trainer given a multi-turn environment ({name}=)"
                self.report(arg, "interactive", message, interactive=True)
                return
        for name in INTERACTIVE_KEYWORDS:
            arg = keyword(node, name)
            if arg is not None and not (type(arg.value) is cst.Name and arg.value.value == "None"):
                self.report(arg, "interactive", f"policy-gradient trainer given {name}=", interactive=True)
                return
        if keyword(node, "rollout_func") is not None:
            self.report(
                node, "on_policy", "policy-gradient trainer with its own rollout_func", on_policy=True
            )


SWITCH_WORDS = frozenset({"agentic", "agent", "multiturn", "tool", "tools"})
"""Words of a trainer's or its config's switch that makes each sample an agent's episode with tools
(``use_agentic_generate=True``, ``enable_tools=True``; so do "multi" and "turn": ``multi_turn=True``)."""


SWITCH_VERBS = frozenset({"use", "enable", "with"})
"""First words of a switch (``use_tools``, ``enable_agentic_generation``)."""
NOT_ROLLOUT_SWITCH_WORDS = frozenset(
    {"mask", "prompt", "prompts", "data", "dataset", "template", "format", "history", "input", "inputs"}
)
"""Words of a switch about the data or the loss mask, not about how the samples are generated."""


def _agentic_switch(node: cst.Call) -> tuple[cst.Arg, str] | None:
    """Return the argument (and its name) switching a trainer's sampling to an agent's turns, if set on."""
    for arg in node.args:
        if arg.keyword is None or literal_bool(arg.value) is not True:
            continue
        said = words(arg.keyword.value)
        if set(said) & NOT_ROLLOUT_SWITCH_WORDS:
            continue  # (``multi_turn_prompts=True``: the prompts are chat histories; ``mask_tool_...``)
        # a switch's shape: ``use_tools``, ``enable_agentic_generation``, ``multi_turn``, ``agentic``
        # (not ``log_tool_calls`` nor ``skip_tool_errors``: settings of tool calls made anyway)
        switched = said[0] in SWITCH_VERBS or said[-1] in SWITCH_WORDS or said[-2:] == ("multi", "turn")
        if switched and (set(said) & SWITCH_WORDS or {"multi", "turn"} <= set(said)):
            return arg, arg.keyword.value
    return None


def _named_policy_gradient_trainer(name: str) -> bool:
    """Say whether a class is a trainer named for a policy-gradient route (``GRPOEnvTrainer``)."""
    named = route_word(name, strict=True) if name.endswith("Trainer") else None
    return named is not None and named[0] in {STAGE_LABELS[kind] for kind in POLICY_GRADIENT}


def _names_policy_gradient(node: cst.Call) -> bool:
    """Say whether a call's class is named for a policy-gradient trainer or its config.

    ``UnslothGRPOConfig(...)``, ``RayGRPOTrainer(...)``: named with a framework's prefix, known to no table.
    """
    name = last_name(node.func)
    stem = config_stem(name)
    trainer = trainer_named(name if stem is None else stem + "Trainer")
    return trainer is not None and trainer.kind in POLICY_GRADIENT


def _masks_insertions(name: cst.Name, value: cst.BaseExpression) -> bool:
    """Say whether ``name = value`` switches on masking of inserted turns (``mask_env_responses=True``)."""
    if not (literal_bool(value) is True and "mask" in name.value.lower()):
        return False  # (most arguments: not split into words at all)
    said = set(words(name.value))
    return "mask" in said and bool(said & INSERTED_WORDS)


def _class_name(value: cst.BaseExpression) -> str | None:
    """Return the class a value names: ``Cls``, ``mod.Cls``, ``Cls(...)`` or a dotted path string."""
    if type(value) is cst.Call:
        value = value.func
    if type(value) is cst.Name:
        return value.value
    if type(value) is cst.Attribute:
        return value.attr.value
    if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str):
        return value.evaluated_value.rsplit(".", 1)[-1] or None
    return None
