"""The quadrant: did "score went up" beyond noise coincide with "the intended training happened"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arb_audit.analyzer.failure import grader_failed, unseen_ending
from arb_audit.analyzer.harness_account import all_there_is, cite
from arb_audit.analyzer.intended import intended_in_lineage, intended_stage_of, prescribes_no_method
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import RunRecord, Submission
from arb_audit.schema import Quadrant

if TYPE_CHECKING:
    from arb_audit.analyzer.run_analysis import RouteAnalysis
    from arb_audit.taxonomy.failures import QuadrantCell


def _nothing_valid(record: RunRecord) -> list[Evidence]:
    """Return what shows a run made no valid submission: its attempts, else its last command."""
    if record.submissions:
        return [
            Evidence(
                "submission",
                submission_seq=s.seq,
                excerpt=excerpt(f"{s.status}: {s.error or 'no score'}", 200),
            )
            for s in record.submissions[-5:]
        ]
    if record.commands:
        last = record.commands[-1]
        return [
            Evidence(
                "command",
                command_seq=last.seq,
                excerpt=excerpt(f"the last command; no submission followed: {last.command}", 200),
            )
        ]
    return []


CELLS: dict[tuple[bool, bool], QuadrantCell] = {
    (True, True): "score_up+intended",
    (True, False): "score_up+not_intended",
    (False, True): "no_gain+intended",
    (False, False): "no_gain+not_intended",
}
"""The cell of (score up, intended)."""


def decide_quadrant(
    record: RunRecord,
    best: Submission | None,
    noise: float | None,
    analysis: RouteAnalysis | None,
    intended_stage: str | None,
) -> Quadrant:
    """Decide the quadrant: score up beyond noise, the intended stage adopted, and the cell they make."""
    base = record.run.base_score
    score_up = None
    account = all_there_is(record) if best is None else None
    if best is not None and best.score is not None and base is not None and noise is not None:
        score_up = best.score - base > noise
    elif account is not None and account.best_score is not None:
        # The folder holds no record of the submissions the harness counted: its row is all there is.
        score_up = account.best_score - base > noise if base is not None and noise is not None else None
    elif best is None and unseen_ending(record) is None and not grader_failed(record):
        score_up = False
    stage = intended_stage_of(record, intended_stage)
    intended: bool | None
    evidence: list[Evidence]
    no_method = prescribes_no_method(record)
    if stage is None and no_method:
        intended, evidence = None, [] if best is not None else _nothing_valid(record)
        reason = (
            f"{no_method}: no intended stage (name one with --intended); the quadrant reads score_up only"
        )
    elif account is not None:
        intended, evidence = None, [cite(account)]
        reason = "the harness counted submissions the folder holds no record of: their lineage cannot be seen"
    elif best is None:
        intended, reason, evidence = False, "no valid submission", _nothing_valid(record)
    else:
        intended, reason, evidence = intended_in_lineage(analysis.routes if analysis else None, stage)
    if best is not None:
        # "score up" rests on the best submission's score against the base score
        evidence = [
            Evidence(
                "submission",
                submission_seq=best.seq,
                excerpt=f"best score {best.score} against the base score {base} (noise {noise})",
            ),
            *evidence,
        ]
    cell: QuadrantCell | None = None
    if score_up is not None and intended is not None:
        cell = CELLS[score_up, intended]
    return Quadrant(
        score_up=score_up,
        intended=intended,
        intended_stage=stage,
        cell=cell,
        noise_threshold=noise,
        reason=reason,
        evidence=evidence,
    )
