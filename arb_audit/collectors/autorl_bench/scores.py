"""AutoRL-Bench ``scores.json``: the grading server's list of recorded submissions.

Each entry is validated on its own: a malformed entry is reported and skipped, the others are kept.
``timestamp`` is the naive local completion time; ``elapsed_seconds`` includes queueing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arb_audit.collectors.clock import parse_time
from arb_audit.collectors.reading import RunFolder, Tally, json_int, json_number
from arb_audit.evidence import excerpt

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


MAX_TEXT = 4000
"""Longest path or error text kept from an entry."""
MAX_ELAPSED_S = 30 * 24 * 3600
"""An evaluation said to take longer than thirty days is not believed."""
MAX_ENTRIES = 20_000
"""Entries read from scores.json; later ones are counted and reported. A grader that answers in a minute
records a few hundred in a run; each entry kept costs ~8 KB on its way through the audit (300,000 of
them took it past 3 GB)."""
MAX_SCORES_BYTES = 16 * 1024 * 1024
"""Largest scores.json read (~80,000 entries): parsed whole, a JSON file costs ~8 times its size."""


def read_scores(folder: RunFolder) -> list[ScoreEntry] | None:
    """Return the valid entries of scores.json; None when the file is missing or unreadable."""
    data = folder.read_json(SCORES, expect=list, max_bytes=MAX_SCORES_BYTES)
    if data is None:
        return None
    if len(data) > MAX_ENTRIES:
        folder.problem(SCORES, f"holds {len(data):,} entries; the first {MAX_ENTRIES:,} were read")
        data = data[:MAX_ENTRIES]
    defects: dict[str, Tally] = {}

    def defect(what: str, index: int, value: Any) -> None:
        defects.setdefault(what, Tally()).add(index + 1, excerpt(repr(value), 60))

    entries: list[ScoreEntry] = []
    for index, item in enumerate(data):
        if not isinstance(item, dict):
            defect("entries that are not objects (skipped)", index, item)
            continue
        score = json_number(item.get("score"))
        if score is None:
            defect("entries with no numeric score", index, item.get("score"))
        sid = json_int(item.get("submission_id"))
        if sid is None:
            defect("entries with no integer submission_id", index, item.get("submission_id"))
        completed = parse_time(item.get("timestamp"))
        if completed is None:
            defect("entries with no readable timestamp", index, item.get("timestamp"))
        elapsed = json_number(item.get("elapsed_seconds"))
        if elapsed is not None and not 0 <= elapsed <= MAX_ELAPSED_S:
            defect("entries with an impossible elapsed_seconds (ignored)", index, elapsed)
            elapsed = None
        path = item.get("model_path")
        if path is not None and not isinstance(path, str):
            defect("entries whose model_path is not a string (ignored)", index, path)
        error = item.get("error")
        entries.append(
            ScoreEntry(
                index=index,
                submission_id=sid,
                completed_at=completed,
                model_path=path[:MAX_TEXT] if isinstance(path, str) else None,
                score=score,
                baseline_score=json_number(item.get("baseline_score")),
                improvement=json_number(item.get("improvement")),
                elapsed_s=elapsed,
                error=str(error)[:MAX_TEXT] if error not in (None, "") else None,
            )
        )
    for what, tally in defects.items():
        folder.problem(SCORES, f"{what}: {tally.count:,} (first: entry {tally.first}, found {tally.example})")
    return entries
