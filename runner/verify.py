"""Check a recording against itself and against the disk.

First the ledger's hash chain; then, for each graded artifact, the kept manifest against the identity
the ledger chained (so an edited manifest row is caught), and the files still on disk against the
manifest, file by file and tensor by tensor, so the message names what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arb_audit.model import ArtifactManifest, FileDigest
from arb_audit.runner.artifact_hash import hash_artifact, manifest_id
from arb_audit.runner.layout import STORE_NAME
from arb_audit.store import RunStore

MAX_NAMED = 5
"""Changed tensors named in one message; the rest are counted."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One record or file that no longer matches."""

    what: str
    """``ledger``, ``manifest`` or ``artifact``."""
    where: str
    """The submission (``submission 3``) or the artifact path."""
    message: str
    """What no longer matches."""


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


def verify(run_dir: Path) -> list[Mismatch]:
    """Return everything in the recording at ``run_dir`` that no longer matches (empty when all hold)."""
    found: list[Mismatch] = []
    with RunStore.open(run_dir / STORE_NAME, read_only=True) as store:
        for (run_id,) in store.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall():
            broken = store.verify_submission_chain(run_id)
            if broken is not None:
                found.append(
                    Mismatch(
                        "ledger",
                        f"submission {broken}",
                        "its row no longer matches the hash chain: the ledger was edited",
                    )
                )
            record = store.load_record(run_id)
            workspace = Path(record.run.workspace_path or ".")
            hashed: dict[Path, ArtifactManifest | str] = {}  # a path submitted many times is read once
            for s in record.submissions:
                if s.artifact_id is None or s.artifact_path is None:
                    continue
                where = f"{s.artifact_path} (submission {s.seq})"
                kept = store.load_manifest(s.artifact_id)
                if kept is not None and manifest_id(kept.files) != s.artifact_id:
                    found.append(
                        Mismatch("manifest", where, "its kept manifest no longer matches the ledger")
                    )
                    kept = None
                path = workspace / s.artifact_path
                if not path.exists() and not path.is_symlink():
                    found.append(Mismatch("artifact", where, f"{path} is gone"))
                    continue
                if path not in hashed:
                    try:
                        hashed[path] = hash_artifact(path)
                    except OSError as exc:
                        hashed[path] = f"{exc.filename or path} cannot be read: {exc.strerror or exc}"
                now = hashed[path]
                if isinstance(now, str):
                    found.append(Mismatch("artifact", where, now))
                    continue
                if now.artifact_id == s.artifact_id:
                    continue
                changes = compare(kept, now) if kept is not None else []
                found.append(
                    Mismatch(
                        "artifact",
                        where,
                        f"{path} has changed since it was graded"
                        + (": " + "; ".join(changes[:MAX_NAMED]) if changes else ""),
                    )
                )
    return found
