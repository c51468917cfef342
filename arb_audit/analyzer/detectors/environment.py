"""An environment: a class with ``reset`` and ``step``, or code that resets and steps one."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import is_env_step, method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid


class Environment(RouteDetector):
    """Defining or driving a text environment is a component of online RL.

    A class with both ``reset`` and ``step`` methods is an environment (gym's and OpenEnv's interface);
    a function that calls ``x.reset()`` and ``x.step(action)`` drives one. On its own — no trainer in
    the file — this makes the file a component that a training launcher loads.
    """

    TRIGGERS = ("reset",)

    VALID = (
        Valid("class Counter:\n    def step(self):\n        self.n += 1\n"),
        Valid("optimizer.step()\nscheduler.step()\n"),
    )
    INVALID = (
        Invalid(
            "class Maze:\n    def reset(self):\n        return 'start'\n"
            "    def step(self, action):\n        return 'obs', 0.0, False\n",
            "environment",
        ),
        Invalid(
            "def episode(env, policy):\n    obs = env.reset()\n    obs, r, done, _ = env.step(policy(obs))\n",
            "environment",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.functions: list[set[str]] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        methods = {s.name.value for s in body if isinstance(s, cst.FunctionDef)}
        if {"reset", "step"} <= methods:
            self.report(node, "environment", f"{node.name.value} defines reset() and step()")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(set())

    def visit_Call(self, node: cst.Call) -> None:
        if self.functions and (is_env_step(node) or method(node) == "reset"):
            self.functions[-1].add("step" if method(node) == "step" else "reset")

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if self.functions.pop() == {"reset", "step"}:
            self.report(
                original_node, "environment", f"{original_node.name.value}() resets and steps an environment"
            )
