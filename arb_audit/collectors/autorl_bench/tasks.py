"""AutoRL-Bench's built-in tasks, as that benchmark defines them: its data, kept with its collector.

A run folder names its task (``workspace/<task>/...``, run.log's header) but not what the task is: its
``description.md`` is a link out of the folder into the benchmark's checkout (not followed, and absent
from a copied run). The grading split sizes are the harness's evaluators'
(``../shared/reference/autorl_bench.md`` §2); the intended training follows the benchmark's levels
(online RL with trajectory collection on the interactive level 3, a policy-gradient stage on the
static levels 1 and 2).
"""

from __future__ import annotations

from arb_audit.model import TaskDescription

SOURCE = "AutoRL-Bench's built-in tasks"
"""Where these descriptions come from, as the run record says it."""

BUILT_IN: dict[str, TaskDescription] = {
    name: TaskDescription(SOURCE, level, n_eval, "online_rl" if level == 3 else "policy_gradient")
    for name, level, n_eval in (
        ("gsm8k", 1, 1319),
        ("humaneval", 1, 82),
        ("alpacaeval", 2, 805),
        ("alfworld", 3, 134),
        ("webshop", 3, 100),
        ("deepsearchqa", 3, 200),
    )
}
"""Each built-in task: level, the number of items in its grading split, the training it exists to test.
A task of the benchmark's generator (``smith-*``) is not described: its run says nothing of it."""


def describe_task(task: str | None) -> TaskDescription | None:
    """Return what AutoRL-Bench says task ``task`` is, or None (a generated or unknown task)."""
    return BUILT_IN.get(task or "")
