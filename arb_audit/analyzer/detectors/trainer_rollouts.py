"""Online RL through a trainer: multi-turn environment or tool rollouts given to a policy-gradient trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid, keyword

INTERACTIVE_KEYWORDS = (
    "environment_factory",
    "tools",
    "max_tool_calling_iterations",
    "env_class",
    "environments",
)
"""Trainer arguments that make each sample a multi-turn episode (TRL's GRPOTrainer and RLOOTrainer)."""


class TrainerRollouts(RouteDetector):
    """A policy-gradient trainer given an environment factory or tools samples multi-turn episodes.

    TRL's ``GRPOTrainer(environment_factory=...)`` runs each completion as an episode of ``reset`` and
    tool-call ``step``s; ``tools=[...]`` lets the policy call functions between turns. Either makes the
    stage interactive (online RL). A ``rollout_func`` is reported as custom on-policy sampling; whether
    it is multi-turn is decided by the loop inside it (see ``MultiTurnLoop``).
    """

    TRIGGERS = ("Trainer",)

    VALID = (
        Valid("from trl import GRPOTrainer\nGRPOTrainer(model=m, reward_funcs=[r])\n"),
        Valid("from trl import SFTTrainer\nSFTTrainer(model=m, tools=None)\n"),
        Valid("def f(environment_factory=None):\n    pass\nf(environment_factory=E)\n"),
    )
    INVALID = (
        Invalid(
            "from trl import GRPOTrainer\nGRPOTrainer(model=m, environment_factory=Env)\n", "interactive"
        ),
        Invalid("import trl\ntrl.GRPOTrainer(model=m, tools=[search], reward_funcs=r)\n", "interactive"),
        Invalid("from trl import GRPOTrainer\nGRPOTrainer(model=m, rollout_func=roll)\n", "on_policy"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        found = self.trainer(node)
        if found is None or found[1].kind not in ("grpo", "ppo"):
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
