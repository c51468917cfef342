"""The agent's claimed scores set against the measured one: what it says is shown, never believed."""

from __future__ import annotations

from arb_audit.model import RunRecord, Submission
from arb_audit.schema import ScoreClaim

CLAIM_TOLERANCE = 1.0
"""Points (of a percent score) a claim may differ from the measured score and still agree: agents round
and evaluate on samples; a larger gap is a claim the benchmark's own grading does not bear out."""


def score_claims(record: RunRecord, best: Submission | None) -> list[ScoreClaim]:
    """Return each score the agent claims for its run, with the measured best and whether they agree."""
    measured = best.score if best is not None else None
    found = []
    for it in record.reports:
        # only the claims that speak for the whole run (iterations are set against their own attempts)
        kind = it.claim
        if kind is None or it.score is None:
            continue
        found.append(
            ScoreClaim(
                source=it.source,
                line=it.line,
                kind=kind,
                claimed=it.score,
                measured=measured,
                agrees=None if measured is None else abs(it.score - measured) <= CLAIM_TOLERANCE,
                excerpt=it.excerpt or "",
            )
        )
    return found
