"""Runs recorded by ``arb-audit record``: the runner's own store, read as it was written.

The recording's store (``run.duckdb``) and revisions (``run.revisions.git``) are only read; the audit
goes into a store of its own like any other format's. The workspace is the one beside the recording
(a recording moved or cloned with its workspace reads its own); an absolute path of the machine that
recorded it is only a fallback, and using it is reported. The agent's transcript names the workspace as
the agent saw it (``/workspace`` in a container): its paths are mapped through its own working
directory, never through this machine's. The task is what ``recording.json`` describes (level, grading
split, intended training): the audit looks up no task by name.

The store is the agent's to reach in a hostile setting: one that does not open, holds what arb-audit
never makes (views, macros, tables defined otherwise: :mod:`arb_audit.store_bounds`) or goes past a
bound while read is named as a problem, and the run is audited from what else the recording holds
(``recording.json``, the transcript, the workspace), its ledger counted as broken.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import duckdb

from arb_audit.collectors.artifacts import describe, find_output_artifacts, identify
from arb_audit.collectors.base import CollectOptions, Collector
from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.ingest import transcript_commands
from arb_audit.model import ArtifactInfo, LedgerCheck, LedgerMismatch, RunInfo, RunRecord
from arb_audit.runner.anchor import check_ledger
from arb_audit.runner.layout import (
    AGENT_OUTPUT,
    MAX_RUN_ID_CHARS,
    RECORDING_MARKER,
    STORE_NAME,
    Marker,
    is_recording,
    locate_workspace,
    parse_marker,
)
from arb_audit.store import RunStore, StoreError, revisions_path_for

WORKSPACE_FIELDS = frozenset({"workspace_relative", "workspace"})
"""Fields of ``recording.json`` whose problems come with the workspace's search (:func:`_locate`)."""


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
        data = folder.read_json(RECORDING_MARKER, expect=dict)
        marker = parse_marker(data) if data is not None else None
        # its fields that cannot be used are named once; the workspace's, by _locate, with the search
        for name, why in (marker.problems if marker is not None else {}).items():
            if name not in WORKSPACE_FIELDS:
                folder.problem(RECORDING_MARKER, why)
        try:
            record = _from_store(folder, marker, store_file)
        except (StoreError, duckdb.Error) as exc:
            # a store that cannot be read, or not as ours: named, and the rest of the recording read
            why = str(exc).removeprefix(f"{store_file}: ")
            folder.problem(
                STORE_NAME, f"the recording's store cannot be read ({why}): no ledger or revisions are read"
            )
            record = _without_store(folder, marker, why)
        record.run.source_path = str(folder.root)  # the folder audited, wherever it was recorded
        git_dir = revisions_path_for(store_file)
        record.revisions_path = str(git_dir) if record.revisions else None
        _locate(folder, marker, record)
        record.run.task_description = marker.task_description if marker is not None else None
        record.artifacts = _artifacts(record)
        facts = transcript_commands(folder, AGENT_OUTPUT, record.revisions)
        if facts is not None:
            record.commands = facts.commands
            record.run.transcript = facts.summary
            record.problems.extend(facts.problems)
        record.problems.extend(folder.problems)
        return record


def _from_store(folder: RunFolder, marker: Marker | None, store_file: Path) -> RunRecord:
    """Read the recording's run from its store, with what `arb-audit verify` finds of its ledger."""
    with RunStore.open(store_file, read_only=True) as store:
        run_ids = [
            r[0] for r in store.con.execute("SELECT run_id FROM runs ORDER BY run_id LIMIT 2").fetchall()
        ]
        if len(run_ids) != 1:
            raise StoreError(f"{store_file}: a recording holds one run, this one holds {len(run_ids)}")
        record = store.load_record(run_ids[0])
        broken = store.verify_submission_chain(run_ids[0])
        # what `arb-audit verify` finds of the ledger (chain, anchor, manifests): a fact the
        # analyzer turns into ledger_broken
        ledger = check_ledger(folder.root, marker, store, run_ids[0])
        first = store.con.execute(
            "SELECT record_hash FROM submissions WHERE run_id = ? ORDER BY seq LIMIT 1", [run_ids[0]]
        ).fetchall()
    if broken is not None:
        folder.problem(STORE_NAME, f"the ledger's hash chain breaks at submission {broken}")
    record.run.ledger_check = ledger
    record.run.run_id = _run_id(folder, marker, record, first[0][0] if first else None)
    return record


def _without_store(folder: RunFolder, marker: Marker | None, why: str) -> RunRecord:
    """Return the run as far as it is known without its store.

    The id ``recording.json`` names, no submissions, and a ledger `arb-audit verify` would fail on
    (``why``).
    """
    named = marker.run_id if marker is not None and marker.run_id else f"recorded:{folder.root.name}"
    # the workspace is found from recording.json alone (_locate)
    run = RunInfo(run_id=named, source_format=RecordedCollector.name, source_path=str(folder.root))
    run.ledger_check = LedgerCheck([LedgerMismatch("ledger", STORE_NAME, f"cannot be read: {why}")])
    return RunRecord(run=run)


def _run_id(folder: RunFolder, marker: Marker | None, record: RunRecord, first_hash: str | None) -> str:
    """Return the run's id: the one ``recording.json`` names, when it is the one its ledger is kept under.

    A recording made before ``recording.json`` named its id (every recording of a task then had
    ``recorded:<task>/<folder>``) gets one derived from its own content, stable wherever it is audited:
    the ledger's first record hash, or without submissions the run's start and first revision.
    """
    stored = record.run.run_id
    named = marker.run_id if marker is not None else None
    if named == stored:
        return stored
    if named is not None:  # one that is not an id at all is named where the marker is read
        shown = repr(named)[:MAX_RUN_ID_CHARS]
        folder.problem(
            RECORDING_MARKER,
            f"its run_id ({shown}) is not the id its store keeps the run under ({stored});"
            " an id derived from the recording's ledger is used",
        )
    if first_hash is not None:
        seed = f"ledger {first_hash}"
    else:
        started = record.run.started_at.isoformat() if record.run.started_at else ""
        seed = f"started {started} revision {record.revisions[0].sha if record.revisions else ''}"
    digest = hashlib.sha256(f"{stored}\n{seed}".encode()).hexdigest()
    return f"{stored}-{digest[:12]}"


def _locate(folder: RunFolder, marker: Marker | None, record: RunRecord) -> None:
    """Point the run at its workspace on this machine (beside the recording first), or at none.

    Using the absolute path of the machine that recorded it, and a workspace that cannot be found, are
    problems of the audit: a reader must know which files were read, or that none were.
    """
    located = locate_workspace(folder.root, marker, record.run.workspace_path)
    if located.fallback is not None:
        folder.problem(RECORDING_MARKER, located.fallback)
    for problem in located.problems:
        folder.problem(RECORDING_MARKER, problem)
    record.run.workspace_path = str(located.path) if located.path is not None else None


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
