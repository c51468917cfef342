"""Advantages estimated from rewards: the policy-gradient part that orchestrators keep apart from the loss."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words

ADVANTAGE_NAMES = frozenset({"advantage", "advantages", "adv", "advs", "advantages_"})
"""Words of a name that holds advantages."""
CENTRES = frozenset({"mean", "average", "avg"})
"""Reductions that centre a set of rewards on itself."""
DISCOUNT_WORDS = frozenset({"gamma", "discount"})
"""Words of the discount factor of a temporal-difference residual."""
VALUE_WORDS = frozenset({"value", "values", "nextvalues", "vpred", "vpreds", "v"})
"""Words of a name holding a learned value estimate."""


class AdvantageEstimate(RouteDetector):
    """An assignment of advantages computed from rewards, in a file whose loss is elsewhere.

    Distributed RL frameworks (an orchestrator scoring rollouts, a trainer taking the gradient step in
    another process) put the advantage estimate in a module of its own. Its form names the family:
    rewards centred on their own mean (``rewards - rewards.mean()``, optionally over their std) compare
    the samples of one prompt's group with each other — group-relative, GRPO; rewards minus a separate
    baseline (a running average, a value estimate) are the other policy-gradient estimators — PPO
    family — and so are temporal-difference residuals of a learned value estimate
    (``delta = r + gamma * next_value - value``, generalised advantage estimation). Reported as a
    ``loss``-form finding: on its own (no gradient step in the file) the file is a component serving
    that route; with a gradient step, the step's own loss decides.
    """

    TRIGGERS = ("adv",)
    VALID = (
        Valid("adv = load('adv.json')\n"),
        Valid("advantages = []\n"),
        Valid("x = rewards - rewards.mean()\n"),
    )
    INVALID = (
        Invalid("advantages = rewards - rewards.mean()\n", "loss", "grpo"),
        Invalid(
            "adv = (scores - scores.mean(dim=-1, keepdim=True))"
            " / (scores.std(dim=-1, keepdim=True) + 1e-6)\n",
            "loss",
            "grpo",
        ),
        Invalid("advantage = reward - self.baseline[agent]\n", "loss", "ppo"),
        Invalid("advantages = rewards - mean_grouped_rewards\n", "loss", "grpo"),
        Invalid("adv = zeros_like(rewards) if m <= 0 else (rewards - rewards.mean()) / m\n", "loss", "grpo"),
        Invalid("assign_advantages(trace, trace.reward - baseline)\n", "loss", "ppo"),
        Invalid(
            "for t in reversed(range(n)):\n"
            "    delta = rewards[:, t] + gamma * nextvalues - values[:, t]\n"
            "    lastgaelam = delta + gamma * lam * lastgaelam\n    advantages.append(lastgaelam)\n",
            "loss",
            "ppo",
        ),
    )

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(_advantage_target(t.target) for t in node.targets):
            self._judge(node.value)
        elif _td_residual(node.value):
            message = "advantages from temporal-difference residuals of a learned value (GAE)"
            self.report(node.value, "loss", message, kind="ppo", variant="ppo")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _advantage_target(node.target):
            self._judge(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        # handed straight to a function that stores advantages (``assign_advantages(t, r - baseline)``)
        func = node.func.attr if isinstance(node.func, cst.Attribute) else node.func
        if isinstance(func, cst.Name) and ADVANTAGE_NAMES & set(words(func.value)):
            for arg in node.args:
                self._judge(arg.value)

    def _judge(self, value: cst.BaseExpression) -> None:
        centred = _centred(value)
        if centred is None:
            return
        if centred:
            self.report(
                value,
                "loss",
                "advantages are rewards centred on their own group's mean",
                kind="grpo",
                variant="grpo",
            )
        else:
            self.report(
                value, "loss", "advantages are rewards minus a separate baseline", kind="ppo", variant="ppo"
            )


def _advantage_target(target: cst.BaseExpression) -> bool:
    name = (
        target.value
        if isinstance(target, cst.Name)
        else target.attr.value
        if isinstance(target, cst.Attribute)
        else None
    )
    return name is not None and bool(ADVANTAGE_NAMES & set(words(name)))


def _centred(value: cst.BaseExpression) -> bool | None:
    """Read ``r - c`` (possibly divided by a spread).

    True when ``c`` reduces ``r`` itself, False for another baseline, None when the value is not a
    difference of rewards. Of a conditional expression, the branch that is such a difference.
    """
    if isinstance(value, cst.IfExp):
        found = [c for c in (_centred(value.body), _centred(value.orelse)) if c is not None]
        return found[0] if found else None
    while isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Divide):
        value = value.left
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract)):
        return None
    left, right = value.left, value.right
    if not any("reward" in w or w in ("scores", "score", "returns") for w in _words(left)):
        return None
    if (
        isinstance(right, cst.Call)
        and isinstance(right.func, cst.Attribute)
        and right.func.attr.value in CENTRES
        and right.func.value.deep_equals(left)
    ):
        return True
    # a name for the mean of the rewards' groups (``rewards - mean_grouped_rewards``)
    return bool(isinstance(right, cst.Name) and CENTRES & set(words(right.value)))


def _td_residual(value: cst.BaseExpression) -> bool:
    """``r + gamma * v_next - v``: a reward plus a discounted value, minus a value."""
    if not (isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Subtract)):
        return False
    if not VALUE_WORDS & set(_words(value.right)):
        return False
    left = value.left
    if not (isinstance(left, cst.BinaryOperation) and isinstance(left.operator, cst.Add)):
        return False
    terms = [left.left, left.right]
    rewarded = any(any("reward" in w for w in _words(t)) for t in terms)
    discounted = any(
        isinstance(t, cst.BinaryOperation)
        and isinstance(t.operator, cst.Multiply)
        and any(DISCOUNT_WORDS & set(_words(side)) for side in (t.left, t.right))
        for t in terms
    )
    return rewarded and discounted


def _words(node: cst.BaseExpression) -> list[str]:
    if isinstance(node, cst.Name):
        return words(node.value)
    if isinstance(node, cst.Attribute):
        return words(node.attr.value)
    if isinstance(node, cst.Subscript):
        return _words(node.value)
    return []
