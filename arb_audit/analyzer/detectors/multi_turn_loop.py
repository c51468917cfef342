"""Online RL by hand: a loop that generates an action, steps an environment and feeds the observation back."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import is_env_step, is_generation
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid


class MultiTurnLoop(RouteDetector):
    """A ``for``/``while`` loop whose body both generates with the policy and steps an environment.

    This is the shape of a multi-turn rollout (generate -> ``env.step(action)`` -> observation appended,
    bounded by a number of turns), whether written for a custom ``rollout_func``, a hand-written
    policy-gradient loop or an agent framework. ``optimizer.step()`` and ``scheduler.step()`` take no
    action and are not environment steps; a loop that only generates (evaluation) is not reported.
    """

    TRIGGERS = ("step",)

    VALID = (
        Valid("for batch in loader:\n    out = model.generate(batch)\n    optimizer.step()\n"),
        Valid(
            "for batch in ppo_trainer.dataloader:\n    responses = ppo_trainer.generate(batch['query'])\n"
            "    stats = ppo_trainer.step(batch['query'], responses, rewards)\n"
        ),
        Valid("for prompt in prompts:\n    outputs.append(llm.generate(prompt))\n"),
        Valid("obs = env.reset()\nobs, r, done, info = env.step(0)\n"),
    )
    INVALID = (
        Invalid(
            "for turn in range(max_turns):\n"
            "    action = model.generate(obs)\n"
            "    obs, reward, done, info = env.step(action)\n"
            "    if done:\n        break\n",
            "interactive",
        ),
        Invalid(
            "while not done:\n    text = llm.generate(messages)\n    result = env.step(parse(text))\n",
            "interactive",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.loops: list[list[bool]] = []

    def visit_For(self, node: cst.For) -> None:
        self.loops.append([False, False])

    def visit_While(self, node: cst.While) -> None:
        self.loops.append([False, False])

    def visit_Call(self, node: cst.Call) -> None:
        if not self.loops:
            return
        generation, step = is_generation(node, self.names), is_env_step(node)
        for seen in self.loops:
            seen[0] = seen[0] or generation
            seen[1] = seen[1] or step

    def _leave(self, node: cst.For | cst.While) -> None:
        generation, step = self.loops.pop()
        if generation and step:
            self.report(
                node, "interactive", "a loop generates actions and steps an environment", interactive=True
            )
            self.loops = [[False, False] for _ in self.loops]  # report the innermost loop only

    def leave_For(self, original_node: cst.For) -> None:
        self._leave(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave(original_node)
