"""Benchmark tasks: level, intended stage and the noise threshold that decides "score went up".

The default noise threshold is two standard errors of a proportion at p = 0.5 over the task's
evaluation set, in score points (0-100): ``100 / sqrt(n_eval)``. It is a default, not a law: pass
another with ``--noise``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Task:
    """One benchmark task as the audit needs it."""

    name: str
    """Task id as the benchmark writes it."""
    level: int
    """1 static rule-based, 2 static judge-based, 3 interactive rollout."""
    n_eval: int
    """Number of items (games, problems) in the grading split."""
    intended: str
    """The training the task exists to test: ``online_rl`` or ``policy_gradient``."""

    @property
    def noise_threshold(self) -> float:
        """Score points within which a change is noise: two standard errors at p = 0.5."""
        return round(100.0 / math.sqrt(self.n_eval), 2)


AUTORL_BENCH_TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("gsm8k", 1, 1319, "policy_gradient"),
        Task("humaneval", 1, 82, "policy_gradient"),
        Task("alpacaeval", 2, 805, "policy_gradient"),
        Task("alfworld", 3, 134, "online_rl"),
        Task("webshop", 3, 100, "online_rl"),
        Task("deepsearchqa", 3, 200, "online_rl"),
    )
}
"""AutoRL-Bench's built-in tasks with their grading split sizes (reference/autorl_bench.md §2)."""


REFERENCE_TASKS: dict[str, Task] = {
    t.name: t for t in (Task("revstr", 1, 200, "policy_gradient"), Task("keyroom", 3, 100, "online_rl"))
}
"""The reference world's tasks (runner/reference/tasks.py), with their held-out split sizes."""


def find_task(name: str | None) -> Task | None:
    """Return the known task called ``name``, or None (``smith-*`` and unknown tasks)."""
    return AUTORL_BENCH_TASKS.get(name or "") or REFERENCE_TASKS.get(name or "")
