"""Runs recorded by ``arb-audit record``: the runner's own store, read as it was written.

The recording's store (``run.duckdb``) and revisions (``run.revisions.git``) are only read; the audit
goes into a store of its own like any other format's.
"""

from __future__ import annotations

from pathlib import Path

from arb_audit.collectors.artifacts import describe, find_output_artifacts, identify
from arb_audit.collectors.base import CollectOptions, Collector
from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.ingest import transcript_commands
from arb_audit.model import ArtifactInfo, RunRecord
from arb_audit.runner.layout import AGENT_OUTPUT, RECORDING_MARKER, STORE_NAME, is_recording
from arb_audit.store import RunStore, StoreError, revisions_path_for


class RecordedCollector(Collector):
    """Collector for folders written by ``arb-audit record``."""

    name = "recorded"
    description = "a run recorded by arb-audit record (recording.json, run.duckdb, run.revisions.git)"

    def detect(self, run_dir: Path) -> float:
        """Score 1 for a recording folder, 0 otherwise."""
        return 1.0 if is_recording(run_dir) else 0.0

    def collect(self, run_dir: Path, *, revisions_git: Path, options: CollectOptions) -> RunRecord:
        """Read the recording's run (its only one) from its store, read-only."""
        folder = RunFolder(run_dir.resolve())
        store_file = folder.file(STORE_NAME)
        if store_file is None:
            raise StoreError(f"{run_dir / STORE_NAME}: the recording's store cannot be read")
        with RunStore.open(store_file, read_only=True) as store:
            run_ids = [r[0] for r in store.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]
            if len(run_ids) != 1:
                raise StoreError(f"{store_file}: a recording holds one run, this one holds {len(run_ids)}")
            record = store.load_record(run_ids[0])
            broken = store.verify_submission_chain(run_ids[0])
        if broken is not None:
            folder.problem(STORE_NAME, f"the ledger's hash chain breaks at submission {broken}")
        git_dir = revisions_path_for(store_file)
        record.revisions_path = str(git_dir) if record.revisions else None
        _relocate_workspace(folder, record)
        record.artifacts = _artifacts(record)
        facts = transcript_commands(folder, AGENT_OUTPUT, record.revisions)
        if facts is not None:
            record.commands = facts.commands
            record.run.extra["transcript"] = facts.summary
            record.problems.extend(facts.problems)
        record.problems.extend(folder.problems)
        return record


def _relocate_workspace(folder: RunFolder, record: RunRecord) -> None:
    """Point the run at its workspace when the recording was moved together with it (a fixture, a copy).

    The path relative to the recording that ``recording.json`` keeps wins when it is a folder beside
    the recording (moved with it, not elsewhere): a copy of a run reads its own workspace, not the one
    it was copied from. Else the recorded absolute path stays (a recording moved without it).
    """
    marker = folder.read_json(RECORDING_MARKER, expect=dict)
    relative = marker.get("workspace_relative") if marker else None
    if not isinstance(relative, str) or "\x00" in relative:
        return
    moved = (folder.root / relative).resolve()
    if moved.is_dir() and moved.parent == folder.root.resolve().parent:
        record.run.workspace_path = str(moved)


def _artifacts(record: RunRecord) -> list[ArtifactInfo]:
    """Describe the models in the workspace: every submitted path and every model folder under output/.

    The workspace is the runner's to name, so it is read where the recording says it is (or was moved
    to). Each submitted path is hashed as the recorder hashed it when it was graded: what it holds now
    may differ from what was graded (``artifact_overwritten``), which only its content id tells.
    """
    workspace = record.run.workspace_path
    if not workspace or not Path(workspace).is_dir():
        return []
    folder = RunFolder(Path(workspace))
    submitted = dict.fromkeys(
        s.artifact_path for s in record.submissions if s.artifact_path and s.artifact_id
    )
    paths = dict.fromkeys(s.artifact_path for s in record.submissions if s.artifact_path)
    paths.update(dict.fromkeys(find_output_artifacts(folder)))
    found = [describe(folder, rel) for rel in sorted(p for p in paths if p is not None)]
    identify(folder, [a for a in found if a.path in submitted])
    record.problems.extend(folder.problems)
    return found
