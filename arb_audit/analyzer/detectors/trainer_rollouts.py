"""Online RL through a trainer: multi-turn environment or tool rollouts given to a policy-gradient trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.loss_slice import words
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
AGENT_WORDS = frozenset({"agent", "agentic", "react", "multiturn", "tool", "tools", "env", "environment"})
"""Words of such a class's name that say its samples are episodes of an agent acting with tools or in
an environment."""


class TrainerRollouts(RouteDetector):
    """A policy-gradient trainer given an environment factory or tools samples multi-turn episodes.

    TRL's ``GRPOTrainer(environment_factory=...)`` runs each completion as an episode of ``reset`` and
    tool-call ``step``s; ``tools=[...]`` lets the policy call functions between turns. Either makes the
    stage interactive (online RL). A ``rollout_func`` is reported as custom on-policy sampling; whether
    it is multi-turn is decided by the loop inside it (see ``MultiTurnLoop``).
    """

    TRIGGERS = ("Trainer", "workflow", "agent", "generator")

    VALID = (
        Valid("from trl import GRPOTrainer\nGRPOTrainer(model=m, reward_funcs=[r])\n"),
        Valid("from trl import SFTTrainer\nSFTTrainer(model=m, tools=None)\n"),
        Valid("def f(environment_factory=None):\n    pass\nf(environment_factory=E)\n"),
        Valid("trainer.train(workflow='areal.workflow.rlvr.RLVRWorkflow', workflow_kwargs=kw)\n"),
    )
    INVALID = (
        Invalid(
            "from trl import GRPOTrainer\nGRPOTrainer(model=m, environment_factory=Env)\n", "interactive"
        ),
        Invalid("import trl\ntrl.GRPOTrainer(model=m, tools=[search], reward_funcs=r)\n", "interactive"),
        Invalid("from trl import GRPOTrainer\nGRPOTrainer(model=m, rollout_func=roll)\n", "on_policy"),
        Invalid(
            "trainer.train(workflow='examples.tau2.agent.Tau2AgentWorkflow', workflow_kwargs=kw)\n",
            "interactive",
        ),
        Invalid("trainer.train(workflow=SearchReactWorkflow, workflow_kwargs=kw)\n", "interactive"),
    )

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
        if found is None or found[1].kind not in POLICY_GRADIENT:
            return
        for name in INTERACTIVE_KEYWORDS:
            arg = keyword(node, name)
            if arg is not None and not (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
                self.report(arg, "interactive", f"policy-gradient trainer given {name}=", interactive=True)
                return
        if keyword(node, "rollout_func") is not None:
            self.report(
                node, "on_policy", "policy-gradient trainer with its own rollout_func", on_policy=True
            )


def _class_name(value: cst.BaseExpression) -> str | None:
    """Return the class a value names: ``Cls``, ``mod.Cls``, ``Cls(...)`` or a dotted path string."""
    if isinstance(value, cst.Call):
        value = value.func
    if isinstance(value, cst.Name):
        return value.value
    if isinstance(value, cst.Attribute):
        return value.attr.value
    if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
        return value.evaluated_value.rsplit(".", 1)[-1] or None
    return None
