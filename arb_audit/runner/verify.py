"""Check a recording against itself and against the disk.

First the ledger: its hash chain, the anchor kept beside it at every append (so deleted, reordered,
recomputed or forged rows are caught, see arb_audit.runner.anchor) and its kept manifests against the
identity the ledger chained (so an edited or deleted manifest is caught). Then the files still on disk
against the manifest, file by file and tensor by tensor, so the message names what changed. The files
are read in the recording's own workspace, found as the `recorded` collector finds it (beside the
recording first); an artifact that changed after grading is what the audit flags
``artifact_overwritten``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from arb_audit.model import ArtifactManifest, FileDigest, LedgerMismatch
from arb_audit.runner.anchor import check_ledger
from arb_audit.runner.artifact_hash import hash_artifact, manifest_id
from arb_audit.runner.layout import RECORDING_MARKER, STORE_NAME, Marker, locate_workspace, read_marker
from arb_audit.store import RunStore, StoreError
from arb_audit.store_bounds import bounded_rows

MAX_NAMED = 5
"""Changed tensors named in one message; the rest are counted."""


def _named(names: list[str]) -> str:
    shown = ", ".join(names[:MAX_NAMED])
    return shown + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")


def _file_change(kept: FileDigest, now: FileDigest) -> str:
    """Say how one file differs from what was graded."""
    if kept.tensors and now.tensors:
        before = {t.name: t for t in kept.tensors}
        after = {t.name: t for t in now.tensors}
        changed = sorted(n for n in before.keys() & after.keys() if before[n] != after[n])
        parts = [
            f"{label} {_named(names)}"
            for label, names in (
                ("tensors changed:", changed),
                ("tensors gone:", sorted(before.keys() - after.keys())),
                ("tensors added:", sorted(after.keys() - before.keys())),
            )
            if names
        ]
        if parts:
            return "; ".join(parts)
    return f"content changed ({kept.size:,} -> {now.size:,} bytes)"


def compare(kept: ArtifactManifest, now: ArtifactManifest) -> list[str]:
    """Describe, file by file, how ``now`` differs from the ``kept`` manifest (empty when identical)."""
    before = {f.path: f for f in kept.files}
    after = {f.path: f for f in now.files}
    found = [f"{path}: gone" for path in sorted(before.keys() - after.keys())]
    found += [f"{path}: added" for path in sorted(after.keys() - before.keys())]
    found += [
        f"{path}: {_file_change(before[path], after[path])}"
        for path in sorted(before.keys() & after.keys())
        if before[path].digest != after[path].digest or before[path].size != after[path].size
    ]
    return found


MAX_RUNS = 10_000
"""Most runs of a recording's store checked (it holds one; each is checked file by file)."""


@dataclass(slots=True)
class Verification:
    """What verifying a recording found."""

    mismatches: list[LedgerMismatch] = field(default_factory=list)
    """Everything that no longer matches (empty when all hold)."""
    notes: list[str] = field(default_factory=list)
    """How the files were found, when not beside the recording (the absolute path that was used)."""
    unchecked: list[str] = field(default_factory=list)
    """What could not be checked and is no failure (a recording made before anchors), said with the
    summary when all else holds."""


def verify(run_dir: Path, head: str | None = None) -> Verification:
    """Check the recording at ``run_dir``: its ledger, its anchor, its kept manifests and the graded files.

    ``head``, when given, is the ledger's head as ``record`` printed it: the ledger must still end there.
    """
    result = Verification()
    found = result.mismatches
    marker, unreadable = None, None
    if (run_dir / RECORDING_MARKER).exists() or (run_dir / RECORDING_MARKER).is_symlink():
        marker, unreadable = read_marker(run_dir)  # a store alone keeps the workspace's path itself
    if unreadable is not None:
        found.append(LedgerMismatch("workspace", str(run_dir / RECORDING_MARKER), unreadable))
    try:
        _verify_store(run_dir, marker, head, result)
    except (StoreError, duckdb.Error) as exc:
        # a store that does not open, holds what arb-audit never makes (a view, a macro, a table
        # defined otherwise) or goes past a bound or deadline while read: its ledger is not vouched for
        store = run_dir / STORE_NAME
        found.append(LedgerMismatch("ledger", str(store), str(exc).removeprefix(f"{store}: ")))
    return result


def _verify_store(run_dir: Path, marker: Marker | None, head: str | None, result: Verification) -> None:
    """Check the ledger and the graded files of each run in the recording's store into ``result``."""
    found = result.mismatches
    with RunStore.open(run_dir / STORE_NAME, read_only=True) as store:
        # a recording holds one run: a store listing more than MAX_RUNS is not checked run by run
        listed = bounded_rows(store.con, "SELECT run_id FROM runs ORDER BY run_id", [], "its runs", MAX_RUNS)
        for (run_id,) in listed:
            ledger = check_ledger(run_dir, marker, store, run_id, head)
            found += ledger.mismatches
            result.unchecked += ledger.notes
            record = store.load_record(run_id)
            located = locate_workspace(run_dir, marker, record.run.workspace_path)
            where_marker = str(run_dir / RECORDING_MARKER)
            if located.fallback is not None:
                result.notes.append(f"workspace: {where_marker}: {located.fallback}")
            if located.path is None:
                graded = sum(1 for s in record.submissions if s.artifact_id and s.artifact_path)
                found += [LedgerMismatch("workspace", where_marker, problem) for problem in located.problems]
                found.append(
                    LedgerMismatch(
                        "workspace", where_marker, f"{graded} graded artifact(s) could not be checked"
                    )
                )
            elif located.problems:
                result.notes += [f"workspace: {where_marker}: {problem}" for problem in located.problems]
            workspace = located.path
            hashed: dict[Path, ArtifactManifest | str] = {}  # a path submitted many times is read once
            for s in record.submissions:
                if s.artifact_id is None or s.artifact_path is None:
                    continue
                where = f"{s.artifact_path} (submission {s.seq})"
                kept = store.load_manifest(s.artifact_id)  # check_ledger named a missing or edited one
                if kept is not None and manifest_id(kept.files) != s.artifact_id:
                    kept = None
                if workspace is None:
                    continue
                path = workspace / s.artifact_path
                if not _inside(path, workspace):
                    found.append(
                        LedgerMismatch("artifact", where, f"{path} leads out of the workspace; not read")
                    )
                    continue
                if not path.exists() and not path.is_symlink():
                    found.append(LedgerMismatch("artifact", where, f"{path} is gone"))
                    continue
                if path not in hashed:
                    try:
                        hashed[path] = hash_artifact(path)
                    except OSError as exc:
                        hashed[path] = f"{exc.filename or path} cannot be read: {exc.strerror or exc}"
                now = hashed[path]
                if isinstance(now, str):
                    found.append(LedgerMismatch("artifact", where, now))
                    continue
                if now.artifact_id == s.artifact_id:
                    continue
                changes = compare(kept, now) if kept is not None else []
                found.append(
                    LedgerMismatch(
                        "artifact",
                        where,
                        f"{path} has changed since it was graded (artifact_overwritten)"
                        + (": " + "; ".join(changes[:MAX_NAMED]) if changes else ""),
                    )
                )


def _inside(path: Path, workspace: Path) -> bool:
    """Tell whether ``path`` (a graded path as the ledger keeps it) stays in the workspace."""
    try:
        return path.parent.resolve().is_relative_to(workspace.resolve())
    except (OSError, RuntimeError):
        return False
