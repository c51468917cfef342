"""Record a live run: the agent's code revisions and every submission, into a run folder of our own.

The recording (``RUN_DIR/run.duckdb`` and ``RUN_DIR/run.revisions.git``) lives outside the workspace;
the runner owns its store while it runs. ``RUN_DIR/recording.json`` says what was recorded: the run's id
(minted once, so every recording has its own and keeps it on any machine), the workspace relative to
the recording (how a recording moved or cloned with its workspace finds it) and, unless the recording is
made portable, its absolute path too (a fallback for a recording moved without it), and what the task
is as the recording was told (the audit reads the task from the run, never from a table). The agent is
started in its own process group with the variables AutoRL-Bench gives (``GRADING_SERVER_URL``,
``WORKSPACE``, ``OUTPUT_DIR``, ...); the code is snapshotted when the run starts, on a timer, before
every evaluation and at the end; when the agent exits or the budget ends, its whole process group is
ended.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from arb_audit.model import (
    ArtifactManifest,
    RecordingFacts,
    RevisionTrigger,
    RunInfo,
    Submission,
    TaskDescription,
)
from arb_audit.revisions import RevisionError, Snapshotter, run_ref
from arb_audit.runner.anchor import AnchorWriter, anchor_head
from arb_audit.runner.grading import Grader, command_evaluator, serve, upstream_evaluator
from arb_audit.runner.layout import AGENT_OUTPUT, ANCHOR_NAME, RECORDING_MARKER, STORE_NAME, read_marker
from arb_audit.store import RunStore, StoreError, revisions_path_for


class RecordError(Exception):
    """The recording cannot be made as asked; the message says why."""


@dataclass(frozen=True, slots=True)
class RecordOptions:
    """What to record and how."""

    workspace: Path
    """The agent's workspace."""
    run_dir: Path
    """Where the recording goes (outside the workspace)."""
    agent: list[str]
    """The agent command."""
    evaluator: list[str] | None
    """The evaluator command (the model path is appended), or None with ``upstream``."""
    port: int = 0
    """Port of the grading API (0: any free port)."""
    snapshot_every_s: float = 60.0
    """Seconds between timer snapshots."""
    budget_s: float | None = None
    """Time budget; the agent is ended when it runs out."""
    task: str | None = None
    """Task id."""
    task_description: TaskDescription | None = None
    """What the task is (level, grading split, intended training), written into ``recording.json``:
    the audit reads it from there (its ``source`` is not written: the reader knows where it read it)."""
    base_model: str | None = None
    """Base model id."""
    baseline_score: float | None = None
    """The base model's score, for ``improvement``."""
    upstream: str | None = None
    """A real grading server to forward submissions to, instead of an evaluator command."""
    scaffold: str | None = None
    """The agent scaffold (a study's cell key)."""
    driver: str | None = None
    """The model or program driving the agent (a study's cell key)."""
    name: str | None = None
    """A short name for the run, in its id (default: the recording folder's name)."""
    portable: bool = False
    """Keep no absolute path of this machine: the workspace is found relative to the recording only
    (it must lie beside it). For recordings that are shipped, such as the bundled fixtures."""
    env: Mapping[str, str] | None = None
    """The environment the agent and the evaluator start with (None: this process's)."""


RUN_ID_TOKEN_BYTES = 6
"""Random bytes in a minted run id (12 hex digits): unique across any study of recordings."""


def mint_run_id(task: str | None, name: str) -> str:
    """Return a new run id: ``recorded:<task>/<name>-<random hex>``, readable and unique."""
    return f"recorded:{task or 'task'}/{name}-{secrets.token_hex(RUN_ID_TOKEN_BYTES)}"


def beside(workspace: Path, run_dir: Path) -> bool:
    """Tell whether ``workspace`` lies in the folder ``run_dir`` lies in (so they move together)."""
    workspace, parent = workspace.resolve(), run_dir.resolve().parent
    return workspace.is_relative_to(parent) and workspace != parent


def _check(options: RecordOptions) -> None:
    """Refuse, before anything is started or written, what cannot be recorded as asked."""
    workspace, run_dir = options.workspace.resolve(), options.run_dir.resolve()
    if (options.evaluator is None) == (options.upstream is None):
        raise RecordError("give either --evaluator or --upstream (one of them)")
    if options.evaluator == []:
        raise RecordError("the evaluator command is empty")
    if options.upstream is not None and not options.upstream.startswith(("http://", "https://")):
        raise RecordError(f"{options.upstream}: the upstream grading server must be an http(s) URL")
    if not options.agent:
        raise RecordError("no agent command was given (put it after --)")
    if not workspace.is_dir():
        raise RecordError(f"{options.workspace}: the workspace is not a folder")
    if run_dir.is_relative_to(workspace) or workspace.is_relative_to(run_dir):
        raise RecordError(f"{options.run_dir}: the recording must lie outside the workspace {workspace}")
    if options.portable and not beside(workspace, run_dir):
        raise RecordError(
            f"{options.run_dir}: a portable recording finds its workspace relative to itself, so the"
            f" workspace must lie in the folder the recording lies in ({run_dir.parent}), not at {workspace}"
        )


class Recorder:
    """One recording: the store, the revisions and the grading API, shared by the agent's lifetime."""

    def __init__(self, options: RecordOptions, store: RunStore, run_id: str | None = None) -> None:
        self.options = options
        self.store = store
        self.lock = threading.Lock()
        self.git_dir = revisions_path_for(store.path)
        portable = options.portable
        self.run = RunInfo(
            run_id=run_id or mint_run_id(options.task, options.name or options.run_dir.resolve().name),
            source_format="recorded",
            # a portable recording names no folder of this machine: "." is the recording itself
            source_path="." if portable else str(options.run_dir.resolve()),
            task=options.task,
            scaffold=options.scaffold,
            driver=options.driver,
            base_model=options.base_model,
            base_score=options.baseline_score,
            budget_s=options.budget_s,
            started_at=datetime.now(UTC),
            workspace_path=None if portable else str(options.workspace.resolve()),
            utc_offset_s=0,
        )
        store.ensure_run(self.run, Path(self.git_dir.name) if portable else self.git_dir.resolve())
        # The ledger's head, outside the store, at the start (or resume) and after every append:
        # a resumed recording anchors what the store holds now, so an append a kill left unanchored
        # is anchored before anything else is.
        self.anchor = AnchorWriter.open(options.run_dir / ANCHOR_NAME)
        self.head = anchor_head(self.anchor, store, self.run.run_id)
        self.snapshotter = Snapshotter(
            self.git_dir,
            options.workspace,
            run_ref(self.run.run_id),
            lambda path, message: print(f"arb-audit record: workspace {path}: {message}"),
        )

    def take_snapshot(self, trigger: RevisionTrigger) -> None:
        """Snapshot the workspace; an unchanged one costs a stat walk and adds no revision."""
        try:
            revision = self.snapshotter.take(trigger)
            if revision is not None:
                with self.lock:
                    self.store.append_revision(self.run.run_id, revision)
        except (RevisionError, duckdb.Error) as exc:  # a full disk: the next snapshot tries again
            print(f"arb-audit record: {trigger} snapshot failed: {exc}", file=sys.stderr)

    def append(self, submission: Submission, manifest: ArtifactManifest | None) -> Submission:
        """Append an attempt and what it graded to the ledger (one transaction, before the answer)."""
        with self.lock:
            stored = self.store.append_submission(self.run.run_id, submission, manifest)
            try:
                self.head = anchor_head(self.anchor, self.store, self.run.run_id)
            except (OSError, duckdb.Error) as exc:  # recorded all the same; verify names it unanchored
                print(
                    f"arb-audit record: submission {stored.seq} could not be anchored: {exc}", file=sys.stderr
                )
            return stored

    def finish(
        self,
        recording: RecordingFacts,
        exit_code: int | None = None,
        timed_out: bool | None = None,
        grader: Grader | None = None,
    ) -> None:
        """Record the end of the run, after the attempts the ledger could not take until now.

        ``recording`` is what is known of the agent that ran; ``exit_code`` and ``timed_out`` how its
        process ended (None: it never started).

        What still cannot be written is said on stderr; what was recorded stays as it is.
        """
        for attempt in grader.catch_up() if grader else []:
            print(
                f"arb-audit record: an attempt answered at {attempt.completed_at} could not be recorded:"
                f" {attempt.error}",
                file=sys.stderr,
            )
        try:
            with self.lock:
                self.run.recording = recording
                self.run.agent_exit_code, self.run.agent_timed_out = exit_code, timed_out
                self.store.end_run(self.run, datetime.now(UTC))
        except duckdb.Error as exc:
            print(f"arb-audit record: the end of the run could not be recorded: {exc}", file=sys.stderr)
        seq, head = self.head
        # Printed to be kept elsewhere: whoever can rewrite the recording can rewrite its anchor too.
        print(
            f"arb-audit record: ledger head: submission {seq}, record hash {head}"
            f" (check later: arb-audit verify {self.options.run_dir} --head {head})"
        )


def record(options: RecordOptions) -> int:
    """Run the agent under recording; return the agent's exit status (or -9 when the budget ended it)."""
    _check(options)
    try:
        options.run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(
            f"{options.run_dir}: the recording folder cannot be made: {exc.strerror or exc}"
        ) from exc
    run_id, named = _run_id(options)
    marker = options.run_dir / RECORDING_MARKER
    try:
        marker.write_text(json.dumps(_marker(options, run_id if named else None), indent=2) + "\n")
    except OSError as exc:
        raise RecordError(f"{marker}: the recording cannot be written: {exc.strerror or exc}") from exc
    with RunStore.open(options.run_dir / STORE_NAME) as store:
        recorder = Recorder(options, store, run_id)
        start = int(time.time())
        evaluate = (
            upstream_evaluator(options.upstream)
            if options.upstream
            else command_evaluator(options.evaluator or [], env=options.env)
        )
        grader = Grader(
            workspace=options.workspace,
            evaluate=evaluate,
            record=recorder.append,
            snapshot=lambda: recorder.take_snapshot("submission"),
            meta={"start_time": start, "timeout_s": int(options.budget_s) if options.budget_s else None},
            task=options.task,
            baseline_score=options.baseline_score,
        )
        # A restart with the same run dir resumes: ids, best and totals continue from the ledger.
        grader.recorded = [
            s for s in store.load_record(recorder.run.run_id).submissions if s.status in ("scored", "error")
        ]
        try:
            server = serve(grader, "127.0.0.1", options.port)
        except OSError as exc:
            raise RecordError(
                f"port {options.port}: the grading API cannot listen: {exc.strerror or exc}"
            ) from exc
        url = f"http://127.0.0.1:{server.server_address[1]}"
        print(f"arb-audit record: grading API at {url}; recording run {run_id} into {options.run_dir}")
        recorder.take_snapshot("timer")
        env = {
            **(os.environ if options.env is None else options.env),
            "GRADING_SERVER_URL": url,
            "WORKSPACE": str(options.workspace.resolve()),
            "OUTPUT_DIR": str(options.workspace.resolve() / "output"),
            "TASK": options.task or "",
            "BASE_MODEL": options.base_model or "",
        }
        # Appended to, never truncated: a recording resumed after a kill keeps the transcript of the
        # session that was killed (the agent's own account of what it did up to then).
        with (options.run_dir / AGENT_OUTPUT).open("ab") as log:
            try:
                agent = subprocess.Popen(
                    options.agent,
                    cwd=options.workspace,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                server.shutdown()
                grader.close()
                why = f"{options.agent[0]}: the agent cannot be started: {exc.strerror or exc}"
                recorder.finish(RecordingFacts(list(options.agent), agent_error=why))
                raise RecordError(why) from exc
            try:
                status, timed_out = _supervise(agent, recorder, options)
            except BaseException:  # interrupted: no evaluator outlives the runner
                server.shutdown()
                grader.close()
                raise
        recorder.take_snapshot("final")
        server.shutdown()
        # What is still waiting for the evaluator is answered and recorded before the ledger closes.
        grader.close()
        recorder.finish(RecordingFacts(list(options.agent)), status, timed_out, grader)
    return status


def _run_id(options: RecordOptions) -> tuple[str, bool]:
    """Return the run's id and whether ``recording.json`` names it.

    A restart into the same run folder resumes its run under the id its ledger holds; one recorded
    before ``recording.json`` named its id stays unnamed there (readers derive one from its ledger).
    Else a new id is minted.
    """
    store = options.run_dir / STORE_NAME
    if store.is_file():
        try:
            with RunStore.open(store, read_only=True) as existing:
                ids = [r[0] for r in existing.con.execute("SELECT run_id FROM runs LIMIT 2").fetchall()]
        except (StoreError, duckdb.Error):
            ids = []  # opening it to record says why it cannot be used
        if len(ids) == 1:
            marker, _ = read_marker(options.run_dir)
            return ids[0], marker is not None and marker.run_id == ids[0]
    return mint_run_id(options.task, options.name or options.run_dir.resolve().name), True


def _marker(options: RecordOptions, run_id: str | None) -> dict[str, object]:
    """Return what ``recording.json`` says: the run's id, where its workspace is, what was run."""
    workspace, run_dir = options.workspace.resolve(), options.run_dir.resolve()
    found: dict[str, object] = {} if run_id is None else {"run_id": run_id}
    if beside(workspace, run_dir):
        # found first: a recording moved or cloned together with its workspace reads that one
        found["workspace_relative"] = os.path.relpath(workspace, run_dir)
    if not options.portable:
        found["workspace"] = str(workspace)  # a fallback for a recording moved without its workspace
    return found | {
        "agent": options.agent,
        "evaluator": options.evaluator,
        "task": options.task,
        "task_description": options.task_description.to_json() if options.task_description else None,
        "base_model": options.base_model,
        "anchor": ANCHOR_NAME,  # verify fails when it is gone, rather than taking it for an older recording
    }


def _supervise(
    agent: subprocess.Popen[bytes], recorder: Recorder, options: RecordOptions
) -> tuple[int, bool]:
    """Wait for the agent, snapshotting on the timer; end its process group when the budget runs out."""
    deadline = time.monotonic() + options.budget_s if options.budget_s else None
    while True:
        wait = options.snapshot_every_s
        if deadline is not None:
            wait = min(wait, max(deadline - time.monotonic(), 0))
        try:
            return agent.wait(timeout=wait), False
        except subprocess.TimeoutExpired:
            pass
        if deadline is not None and time.monotonic() >= deadline:
            _end_group(agent)
            return agent.wait(), True
        recorder.take_snapshot("timer")


def _end_group(agent: subprocess.Popen[bytes]) -> None:
    """End the agent's whole process group: SIGTERM, then SIGKILL after a grace period."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(agent.pid, sig)
        except ProcessLookupError:
            return
        try:
            agent.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue
