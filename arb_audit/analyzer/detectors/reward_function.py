"""A reward function in TRL's convention: ``def reward(completions, **kwargs) -> list[float]``."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid


class RewardFunction(RouteDetector):
    """A function taking ``completions`` (and ``**kwargs``) scores samples for GRPO-style training.

    TRL's ``GRPOTrainer``/``RLOOTrainer`` call each of their ``reward_funcs`` with the prompts, the
    completions and the dataset columns as keyword arguments; open-r1's and the agents' reward modules
    follow the same signature. A file of such functions and no trainer is a component.
    """

    TRIGGERS = ("completions",)

    VALID = (
        Valid("def render(completions):\n    return '\\n'.join(completions)\n"),
        Valid("def f(prompts, **kwargs):\n    pass\n"),
    )
    INVALID = (
        Invalid(
            "def accuracy_reward(completions, solution, **kwargs):\n    return [1.0 for _ in completions]\n",
            "reward_function",
        ),
        Invalid(
            "def format_reward(prompts, completions, **kw):\n    return [0.0] * len(completions)\n",
            "reward_function",
        ),
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = {p.name.value for p in (*node.params.posonly_params, *node.params.params)}
        if "completions" in params and isinstance(node.params.star_kwarg, cst.Param):
            self.report(node, "reward_function", f"{node.name.value}(completions, **kwargs) scores samples")
