"""How the agent's time ended: the budget ran out, the agent stopped before it, or the files do not say.

``timeout_no_submission`` means the budget ended before any valid submission (TAXONOMY.md), so it needs
evidence that the budget was used: the harness recording a timeout, a timeout's exit code, or the run
ending near its deadline. An agent whose own end came well before the deadline stopped early: its time
did not run out. Neither is read from a clock that may not be the agent's: the last event of a transcript
that is itself cut off says where the transcript stops, not where the agent did.
"""

from __future__ import annotations

from dataclasses import dataclass

from arb_audit.analyzer.metrics import compute_metrics
from arb_audit.model import RunRecord

NEAR_DEADLINE = 0.95
"""Share of the budget from which the run's end counts as the deadline: harnesses stop an agent a few
seconds to minutes after its limit, or just before it (a wrapper's own margin), never at the exact second."""
TIMEOUT_EXIT_CODES = frozenset({124})
"""Exit codes that are a timeout's own (coreutils ``timeout``, which PostTrainBench wraps the agent in)."""


@dataclass(frozen=True, slots=True)
class BudgetEnd:
    """What the run's files show of how the agent's time ended."""

    ran_out: bool | None
    """True: the budget ended; False: the agent's own end came before it; None: the files do not say."""
    reason: str
    """The evidence in words (or what is missing)."""
    used: float | None = None
    """The share of the budget used, where known."""


def _used(record: RunRecord) -> float | None:
    """Return the share of the budget the agent used: the harness's own clock first, else the run's span."""
    if record.run.budget_used is not None:
        return record.run.budget_used
    return compute_metrics(record).time_used_ratio


def _cut_transcript(record: RunRecord) -> str | None:
    """Say why the transcript looks cut off, or None."""
    summary = record.run.transcript
    return (summary.cut_off or None) if summary is not None else None


def budget_end(record: RunRecord) -> BudgetEnd:
    """Decide whether the run's budget ran out, the agent stopped before it, or its files do not say."""
    run = record.run
    used = _used(record)
    share = f"{used:.0%} of the budget used" if used is not None else None
    exit_code = run.agent_exit_code
    if run.agent_timed_out is True:
        why = "the harness records that the agent timed out" + (f" ({share})" if share else "")
        return BudgetEnd(True, why, used)
    if exit_code in TIMEOUT_EXIT_CODES:
        why = f"the agent exited with code {exit_code}, a timeout's" + (f" ({share})" if share else "")
        return BudgetEnd(True, why, used)
    if used is None:
        missing = "no budget" if not run.budget_s and run.budget_used is None else "no end time"
        return BudgetEnd(None, f"nothing shows whether the budget ran out ({missing} to measure it against)")
    if used >= NEAR_DEADLINE:
        return BudgetEnd(True, f"the run ended at its deadline ({share})", used)
    cut = _cut_transcript(record)
    if cut and exit_code is None and run.budget_used is None:
        # The run's end is the transcript's last event, and the transcript stops short: the agent may
        # have gone on after it.
        return BudgetEnd(
            None,
            f"nothing shows whether the budget ran out: the run's end ({share}) is where its transcript"
            f" stops, and it looks cut off ({cut})",
            used,
        )
    how = f", exit code {exit_code}" if exit_code is not None else ""
    return BudgetEnd(False, f"the agent stopped before its deadline ({share}{how})", used)
