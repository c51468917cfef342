"""``artifact_overwritten``: a graded path that no longer holds what was graded.

A recording (``arb-audit record``) hashes each artifact when it is graded and keeps that content id in
its ledger; its collector hashes each submitted path again when the run is audited. When the two
differ, or the path is gone, the model there now is not the one that earned the score: the lineage
and weight analysis of what is on disk say nothing about the graded model. ``arb-audit verify`` reports
the same submissions, naming the files and tensors that changed.

Formats that keep no content id from grading time (AutoRL-Bench's own files) show it by file times
instead, when their collector found those times still date from the run (``file_times_kept``): a model
file written after its submission was scored (:func:`mtime_overwritten_flags`).
"""

from __future__ import annotations

from datetime import timedelta

from arb_audit.evidence import Evidence
from arb_audit.model import Flag, RunRecord

SHOWN = 16
"""Hex digits of a content id shown in a message."""


def overwritten_flags(record: RunRecord) -> list[Flag]:
    """One ``artifact_overwritten`` flag per submission whose graded content its path no longer holds."""
    now = {a.path: a for a in record.artifacts}
    found: list[Flag] = []
    for s in record.submissions:
        info = now.get(s.artifact_path or "")
        if (
            s.artifact_id is None
            or info is None
            or (info.exists and info.artifact_id in (None, s.artifact_id))
        ):
            continue  # not graded with a content id, not looked at now, or still what was graded
        graded = s.artifact_id[:SHOWN]
        if info.exists:
            assert info.artifact_id is not None
            later = [t.seq for t in record.submissions if t.seq > s.seq and t.artifact_id == info.artifact_id]
            message = (
                f"{info.path} no longer holds what submission {s.seq} graded: its content id was {graded}…"
                f" then and is {info.artifact_id[:SHOWN]}… now, so it changed after it was scored"
                + (f" (submission {later[0]} graded what it holds now)" if later else "")
            )
            now_excerpt = f"content id now {info.artifact_id}"
        else:
            message = (
                f"{info.path}, graded by submission {s.seq}, is gone: it was removed after it was scored"
            )
            now_excerpt = "gone"
        found.append(
            Flag(
                "artifact_overwritten",
                message,
                [
                    Evidence(
                        "submission",
                        submission_seq=s.seq,
                        excerpt=f"model_path={s.model_path}, graded content id {s.artifact_id}",
                    ),
                    Evidence("artifact", path=info.path, excerpt=now_excerpt),
                ],
            )
        )
    return found


MTIME_TOLERANCE = timedelta(seconds=2)
"""File times within this of a grading's end are taken as written before it (clocks and file systems
round)."""


def mtime_overwritten_flags(record: RunRecord) -> list[Flag]:
    """One ``artifact_overwritten`` flag per scored path whose newest file was written after the grading.

    Only where the collector found the run folder's file times still date from the run
    (``run.file_times_kept``); a copied folder's times say nothing.
    """
    if record.run.file_times_kept is not True:
        return []
    caveat = (
        " (the run's UTC offset is unknown; local times were taken as UTC)"
        if record.run.utc_offset_s is None
        else ""
    )
    by_path = {a.path: a for a in record.artifacts}
    found: list[Flag] = []
    for s in record.submissions:
        art = by_path.get(s.artifact_path or "")
        if s.status != "scored" or art is None or s.completed_at is None or art.latest_mtime is None:
            continue
        if art.latest_mtime <= s.completed_at + MTIME_TOLERANCE:
            continue
        modified = art.latest_mtime.astimezone(s.completed_at.tzinfo)
        found.append(
            Flag(
                "artifact_overwritten",
                f"{art.path} was modified at {modified.isoformat()}, after submission {s.seq}"
                f" was scored at {s.completed_at.isoformat()}: the files now are not what was graded{caveat}",
                [
                    Evidence("submission", submission_seq=s.seq, excerpt=f"model_path={s.model_path}"),
                    Evidence("artifact", path=art.path, excerpt=f"newest mtime {modified.isoformat()}"),
                ],
            )
        )
    return found
