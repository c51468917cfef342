"""The run's final code tree (AutoRL-Bench ``code/``, PostTrainBench ``task/``), its last revision."""

from __future__ import annotations

from pathlib import Path

from arb_audit.collectors.reading import RunFolder
from arb_audit.model import Revision
from arb_audit.revisions import RevisionError, run_ref, snapshot


def final_tree(folder: RunFolder, rel: str, revisions_git: Path, run_id: str, seq: int) -> list[Revision]:
    """Snapshot the run's folder ``rel`` as revision ``seq`` (trigger ``final``); [] and a problem if not."""
    tree = folder.root / rel
    if tree.is_symlink():
        folder.problem(rel, "is a symlink; the code tree was not read")
        return []
    if not tree.is_dir():
        folder.problem(rel, "is missing: no final code revision can be stored")
        return []

    def on_problem(path: str, message: str) -> None:
        folder.problem(rel if path == "." else f"{rel}/{path}", message)

    try:
        revision = snapshot(
            revisions_git,
            tree,
            ref=run_ref(run_id),
            seq=seq,
            trigger="final",
            message=f"final {rel}/ tree of {run_id}",
            on_problem=on_problem,
        )
    except RevisionError as exc:
        folder.problem(rel, f"could not be stored as a revision: {exc}")
        return []
    return [revision]
