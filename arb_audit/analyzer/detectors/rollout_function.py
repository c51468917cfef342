"""A rollout function: it samples the completions a policy-gradient trainer of another file learns from."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    TEXT_HANDLING_VERBS,
    asks_helper,
    generates,
    is_http_post,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.environment import SINGLE_TURN
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import words

REVIEWING_VERBS = frozenset(
    {"analyze", "analyse", "summarize", "summarise", "judge", "critique", "inspect", "review", "annotate"}
)
"""First words of a function that looks at rollouts already made (``analyze_rollouts``), asking a model
about them rather than sampling them from the policy."""
ROLLOUT_WORDS = frozenset({"rollout", "rollouts", "trajectory", "trajectories"})
"""Words of a function or method that produces what RL trains on (``collect_trajectories``,
``generate_rollout``, ``rollout``)."""


class RolloutFunction(RouteDetector):
    """A function named for rollouts or trajectories that samples from the policy.

    RL frameworks split the sampling side from the trainer: an environment server's
    ``collect_trajectories`` (Atropos), a worker's ``generate_rollout``, a custom ``rollout`` a
    launcher plugs in. Sampling in such a function produces training data for policy gradient: the file
    is a component serving single-turn RL (a turn loop with tools or an environment in it is reported as
    interactive by other detectors). Functions named for evaluation, tests or demos do not count.
    """

    TRIGGERS = ("rollout", "trajector", "Rollout", "Trajector")

    VALID = (
        Valid("def evaluate_rollout(llm, q):\n    return llm.generate(q)\n"),
        Valid("def rollout_stats(rows):\n    return len(rows)\n"),
        Valid("def collect(llm, q):\n    return llm.generate(q)\n"),
        # rollouts already made, judged by a model or handled
        Valid("def analyze_rollouts(rollouts):\n    return judge.chat.completions.create(messages=m)\n"),
        Valid("def score_trajectories(trajs):\n    return [llm.generate(t) for t in trajs]\n"),
    )
    INVALID = (
        Invalid(
            "class GSM8kEnv(BaseEnv):\n    async def collect_trajectories(self, item):\n"
            "        completions = await self.server.completion(prompt=item, n=self.group_size)\n"
            "        return await self.score(completions)\n",
            "environment",
            variant=SINGLE_TURN,
        ),
        Invalid(
            "def generate_rollout(args, sample):\n    out = engine.generate(sample.prompt)\n    return out\n",
            "environment",
            variant=SINGLE_TURN,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.reported = False

    def visit_Call(self, node: cst.Call) -> None:
        around = self.enclosing()
        if self.reported or not around:
            return
        said = words(around[-1])
        named = set(said)
        if not named & ROLLOUT_WORDS or named & NOT_TRAINING_SCOPES:
            return
        if said[0] in TEXT_HANDLING_VERBS | REVIEWING_VERBS:
            return  # (``analyze_rollouts``, ``score_trajectories``: rollouts made, handled or judged)
        if (
            generates(self, node)
            or asks_helper(self, node)
            or is_http_post(node, self.names(node.func))
            or _completion_call(node)
        ):
            self.reported = True
            statement = self.context.statements[-1] if self.context.statements else None
            message = f"{around[-1]}() samples the completions a policy-gradient trainer learns from"
            self.report(node, "environment", message, statement=statement, variant=SINGLE_TURN)


def _completion_call(node: cst.Call) -> bool:
    """``server.completion(...)``/``client.chat_completion(...)``: a server asked for completions."""
    func = node.func
    return type(func) is cst.Attribute and bool({"completion", "completions"} & set(words(func.attr.value)))
