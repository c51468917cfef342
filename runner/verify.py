"""Check a recording against itself and against the disk.

First the ledger's hash chain, then each graded artifact's content id against the files still there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arb_audit.store import RunStore
from runner.artifact_hash import hash_artifact
from runner.layout import STORE_NAME


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One record or file that no longer matches."""

    what: str
    """``ledger`` or ``artifact``."""
    where: str
    """The submission (``submission 3``) or the artifact path."""
    message: str
    """What no longer matches."""


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
            for s in record.submissions:
                if s.artifact_id is None or s.artifact_path is None:
                    continue
                path = workspace / s.artifact_path
                now = hash_artifact(path).artifact_id if path.exists() else None
                if now != s.artifact_id:
                    state = "is gone" if now is None else "has changed since it was graded"
                    found.append(
                        Mismatch("artifact", f"{s.artifact_path} (submission {s.seq})", f"{path} {state}")
                    )
    return found
