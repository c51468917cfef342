"""Runs recorded by ``arb-audit record``: the runner's own store, read as it was written.

The recording's store (``run.duckdb``) and revisions (``run.revisions.git``) are only read; the audit
goes into a store of its own like any other format's.
"""

from __future__ import annotations

from pathlib import Path

from arb_audit.model import RunRecord
from arb_audit.store import RunStore, StoreError, revisions_path_for
from collectors.base import CollectOptions, Collector
from collectors.reading import RunFolder
from runner.layout import STORE_NAME, is_recording


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
        record.problems.extend(folder.problems)
        return record
