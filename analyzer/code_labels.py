"""The static analyzer's verdict on every code file of a run's revisions, once per distinct content.

Files are read from the run's revisions.git by blob sha, written to a private folder, and classified by
:func:`analyzer.batch.classify_many` (worker processes bounded in time and memory, results cached per
content and analyzer version in the run store).
"""

from __future__ import annotations

import posixpath
import tempfile
from pathlib import Path

from analyzer.batch import classify_many
from analyzer.classify import Classification
from analyzer.source import kind_for
from arb_audit.model import RunRecord
from arb_audit.revisions import read_blob
from arb_audit.store import RunStore

MAX_BLOBS = 5000
"""Most distinct code files classified per run (a history of more is cut, the latest kept)."""


def code_blobs(record: RunRecord) -> dict[str, str]:
    """Return blob sha → one path it had, for every code file of every revision (latest revisions first)."""
    found: dict[str, str] = {}
    for revision in reversed(record.revisions):
        for f in revision.files:
            if f.blob_sha and f.blob_sha not in found and kind_for(f.path) != "other":
                found[f.blob_sha] = f.path
                if len(found) >= MAX_BLOBS:
                    return found
    return found


def classify_blobs(
    record: RunRecord, git_dir: Path | None, store: RunStore | None, jobs: int = 0
) -> dict[str, Classification]:
    """Classify every distinct code blob of the run's revisions; blob sha → classification."""
    if git_dir is None:
        return {}
    blobs = code_blobs(record)
    if not blobs:
        return {}
    with tempfile.TemporaryDirectory(prefix="arb-audit-blobs-") as tmp:
        paths: dict[Path, str] = {}
        for sha, path in blobs.items():
            raw = read_blob(git_dir, sha)
            if raw is None:
                continue
            # Named by content so that each file is its own, whatever the run's paths look like.
            local = Path(tmp) / f"{sha}{posixpath.splitext(path)[1].lower()}"
            local.write_bytes(raw)
            paths[local] = sha
        results = classify_many(sorted(paths), jobs=jobs, cache=store)
        return {paths[Path(c.path)]: c for c in results}
