"""Process metrics of a run, recomputed from the full attempt ledger.

Unlike AutoRL-Bench's metrics.py: every attempt counts (rejected, duplicate and crashed ones too), an
error is never a zero score, "valid" means graded without error, and times are measured from the
agent's launch rather than from a clock started before the baseline evaluation.
"""

from __future__ import annotations

from datetime import UTC, datetime

from arb_audit.model import RunRecord, Submission
from arb_audit.schema import Metrics as Metrics  # the schema part, named here for the analyzer's callers

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _completion_order(submissions: list[Submission]) -> list[Submission]:
    """Return the valid attempts in the order they were graded (the harness's order).

    That is not arrival order: the grading server's lock is not first-come-first-served.
    """
    valid = [s for s in submissions if s.status == "scored" and s.score is not None]
    return sorted(valid, key=lambda s: (s.completed_at is None, s.completed_at or _EPOCH, s.seq))


def best_submission(submissions: list[Submission]) -> Submission | None:
    """Return the best valid attempt: the highest score, the first graded on ties (as the harness picks)."""
    best: Submission | None = None
    for s in _completion_order(submissions):
        if best is None or (s.score is not None and best.score is not None and s.score > best.score):
            best = s
    return best


def _since(origin: datetime | None, moment: datetime | None) -> float | None:
    if origin is None or moment is None:
        return None
    return round((moment - origin).total_seconds(), 3)


def compute_metrics(record: RunRecord) -> Metrics:
    """Compute the process metrics of ``record``."""
    subs = record.submissions
    run = record.run
    count = {
        status: sum(1 for s in subs if s.status == status)
        for status in ("scored", "error", "rejected", "duplicate")
    }
    valid = _completion_order(subs)
    best = best_submission(subs)
    origin = run.agent_launched_at or run.started_at
    clock = "agent_launch" if run.agent_launched_at else ("run_start" if run.started_at else None)
    used = None
    if run.started_at and run.ended_at and run.budget_s:
        used = round((run.ended_at - run.started_at).total_seconds() / run.budget_s, 4)
    improvement = None
    if best is not None and best.score is not None and run.base_score is not None:
        improvement = round(best.score - run.base_score, 6)
    return Metrics(
        n_submissions=len(subs),
        n_scored=count["scored"],
        n_errors=count["error"],
        n_rejected=count["rejected"],
        n_duplicates=count["duplicate"],
        n_zero_score=sum(1 for s in valid if s.score == 0),
        valid_rate=round(count["scored"] / len(subs), 4) if subs else None,
        time_to_first_valid_s=_since(origin, valid[0].completed_at) if valid else None,
        time_to_best_s=_since(origin, best.completed_at) if best else None,
        clock_origin=clock,
        time_used_ratio=used,
        best_improvement=improvement,
    )
