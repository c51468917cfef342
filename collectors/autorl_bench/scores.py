"""AutoRL-Bench ``scores.json``: the grading server's list of recorded submissions.

Each entry is validated on its own: a malformed entry is reported and skipped, the others are kept.
``timestamp`` is the naive local completion time; ``elapsed_seconds`` includes queueing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from collectors.clock import parse_naive
from collectors.reading import RunFolder, json_int, json_number

SCORES = "scores.json"


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    """One recorded submission of scores.json."""

    index: int
    """0-based position in the file."""
    submission_id: int | None
    """The harness's id (1-based, dense over recorded entries)."""
    completed_at: datetime | None
    """Naive local completion time."""
    model_path: str | None
    """The raw path string the agent sent."""
    score: float | None
    """The recorded score."""
    baseline_score: float | None
    """The server's baseline at that moment."""
    improvement: float | None
    """score - baseline as recorded."""
    elapsed_s: float | None
    """Queueing plus evaluation seconds."""
    error: str | None
    """The evaluator's error, when it returned one."""


def read_scores(folder: RunFolder) -> list[ScoreEntry] | None:
    """Return the valid entries of scores.json; None when the file is missing or unreadable."""
    data = folder.read_json(SCORES, expect=list)
    if data is None:
        return None
    entries: list[ScoreEntry] = []
    for index, item in enumerate(data):
        where = f"entry {index + 1}"
        if not isinstance(item, dict):
            folder.problem(SCORES, f"{where} is not an object (found {type(item).__name__}); skipped")
            continue
        score = json_number(item.get("score"))
        if score is None:
            folder.problem(SCORES, f"{where} has no numeric score ({item.get('score')!r}); kept without one")
        raw_id = item.get("submission_id")
        sid = json_int(raw_id)
        if sid is None:
            folder.problem(SCORES, f"{where} has no integer submission_id ({raw_id!r})")
        completed = parse_naive(item.get("timestamp"))
        if completed is None:
            folder.problem(SCORES, f"{where} has no readable timestamp ({item.get('timestamp')!r})")
        path = item.get("model_path")
        error = item.get("error")
        entries.append(
            ScoreEntry(
                index=index,
                submission_id=sid,
                completed_at=completed,
                model_path=path if isinstance(path, str) else None,
                score=score,
                baseline_score=json_number(item.get("baseline_score")),
                improvement=json_number(item.get("improvement")),
                elapsed_s=json_number(item.get("elapsed_seconds")),
                error=str(error) if error not in (None, "") else None,
            )
        )
    return entries
