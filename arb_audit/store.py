"""The run store: one DuckDB file per run, written in bulk through polars frames.

Opening a store applies the migrations it lacks (``arb_audit.migrations``). A collector's record replaces
the derived rows of its run in one transaction, so a failed ingest leaves the previous one intact;
``verdicts`` are never touched by an ingest. The store never lives among the run folder's own files:
by default it is ``<run_dir>/.arb-audit/run.duckdb`` when the folder is writable, else a per-user cache.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import stat
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb
import polars as pl

from arb_audit import __version__
from arb_audit.cache_dirs import cache_store_path
from arb_audit.chain import GENESIS_HASH, chain_hash, submission_chain_break
from arb_audit.evidence import Evidence
from arb_audit.migrations import MIGRATIONS, MIGRATIONS_TABLE
from arb_audit.model import (
    STORE_DIRNAME,
    ArtifactInfo,
    ArtifactManifest,
    Command,
    FileDigest,
    FileEntry,
    Flag,
    Problem,
    ReportedIteration,
    Revision,
    RunInfo,
    RunRecord,
    Submission,
    TaskDescription,
    TensorDigest,
    TrainerEvidence,
    iteration_fields_json,
    read_iteration_fields,
    read_run_facts,
    run_facts_json,
)
from arb_audit.redaction import redact, redact_all
from arb_audit.regular_files import kind
from arb_audit.store_bounds import (
    MAX_MIGRATION_ROWS,
    MAX_ROWS,
    TooManyRows,
    bounded_rows,
    capped,
    connect_config,
    lock_down,
    refusal_message,
    refusals,
)
from arb_audit.store_bounds import StoreError as StoreError  # defined with the bounds; taken from here

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport

T = TypeVar("T")
FRAME_THRESHOLD = 8
"""Up to this many rows are inserted with parameters; more go through a polars frame (Arrow scan)."""
LOCK_WAIT_S = 60.0
"""How long to wait for another process that holds a store."""


_TS = pl.Datetime("us")
_SCHEMAS: dict[str, dict[str, Any]] = {
    "runs": {
        "run_id": pl.String,
        "task": pl.String,
        "scaffold": pl.String,
        "driver": pl.String,
        "mode": pl.String,
        "base_model": pl.String,
        "base_score": pl.Float64,
        "budget_s": pl.Float64,
        "started_at": _TS,
        "ended_at": _TS,
        "source_format": pl.String,
        "source_path": pl.String,
        "recorder_version": pl.String,
        "agent_launched_at": _TS,
        "workspace_path": pl.String,
        "utc_offset_s": pl.Int32,
        "revisions_path": pl.String,
        "task_description": pl.String,
        "extra": pl.String,
    },
    "submissions": {
        "run_id": pl.String,
        "seq": pl.Int32,
        "requested_at": _TS,
        "completed_at": _TS,
        "model_path": pl.String,
        "artifact_id": pl.String,
        "score": pl.Float64,
        "error": pl.String,
        "status": pl.String,
        "best_so_far": pl.Float64,
        "prev_hash": pl.String,
        "record_hash": pl.String,
        "harness_id": pl.Int32,
        "elapsed_s": pl.Float64,
        "gpu": pl.String,
        "baseline_score": pl.Float64,
        "artifact_path": pl.String,
        "duplicate_of": pl.Int32,
        "evidence": pl.String,
    },
    "artifacts": {
        "run_id": pl.String,
        "artifact_id": pl.String,
        "kind": pl.String,
        "size": pl.Int64,
        "parent_ref": pl.String,
        "path": pl.String,
        "path_exists": pl.Boolean,
        "n_files": pl.Int32,
        "latest_mtime": _TS,
        "note": pl.String,
        "trainer_evidence": pl.String,
    },
    "revisions": {
        "run_id": pl.String,
        "seq": pl.Int32,
        "sha": pl.String,
        "taken_at": _TS,
        "trigger": pl.String,
        "files_changed": pl.Int32,
    },
    "files": {
        "run_id": pl.String,
        "revision_seq": pl.Int32,
        "path": pl.String,
        "blob_sha": pl.String,
        "size": pl.Int64,
        "note": pl.String,
        "content_hash": pl.String,
    },
    "commands": {
        "run_id": pl.String,
        "seq": pl.Int32,
        "started_at": _TS,
        "ended_at": _TS,
        "command": pl.String,
        "cwd": pl.String,
        "exit_code": pl.Int32,
        "source": pl.String,
        "revision_seq": pl.Int32,
        "output_excerpt": pl.String,
        "tool": pl.String,
        "source_path": pl.String,
        "line": pl.Int32,
        "session": pl.Int32,
        "error": pl.String,
        "finished": pl.Boolean,
    },
    "reported_iterations": {
        "run_id": pl.String,
        "source": pl.String,
        "number": pl.Int32,
        "reported_at": _TS,
        "status": pl.String,
        "exit_code": pl.Int32,
        "score": pl.Float64,
        "train_type": pl.String,
        "failure_type": pl.String,
        "duration_s": pl.Float64,
        "line": pl.Int32,
        "fields": pl.String,
    },
    "flags": {
        "run_id": pl.String,
        "seq": pl.Int32,
        "flag": pl.String,
        "message": pl.String,
        "evidence": pl.String,
    },
    "problems": {"run_id": pl.String, "seq": pl.Int32, "path": pl.String, "message": pl.String},
    "artifact_files": {
        "artifact_id": pl.String,
        "path": pl.String,
        "size": pl.Int64,
        "digest": pl.String,
        "note": pl.String,
        "mac": pl.String,
    },
    "tensors": {
        "artifact_id": pl.String,
        "file_path": pl.String,
        "name": pl.String,
        "dtype": pl.String,
        "shape": pl.List(pl.Int32),
        "content_hash": pl.String,
    },
}
_DERIVED_TABLES = (
    "runs",
    "submissions",
    "artifacts",
    "revisions",
    "files",
    "commands",
    "reported_iterations",
    "flags",
    "problems",
    "audits",
)


def classification_mac(key: bytes, blob_sha: str, file_kind: str, version: str, result: str) -> str:
    """Return the HMAC that keys one cached classification to this user's secret."""
    message = "\0".join((blob_sha, file_kind, version, result)).encode("utf-8", "surrogateescape")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


MAX_MANIFEST_FILES = 100_000
"""Most files a kept manifest is read with (an artifact of more is never hashed)."""
MAX_MANIFEST_TENSORS = 200_000
"""Most tensors a kept manifest is read with (a large mixture of experts lists tens of thousands)."""


def manifest_mac(key: bytes, manifest: ArtifactManifest) -> str:
    """Return the HMAC that keys a kept manifest to this user's secret.

    It covers the artifact id and every file (path, size, digest, note) with its tensors (name, dtype,
    shape, digest), in a canonical order: the order rows come back in does not matter.
    """
    files = [
        [
            f.path,
            f.size,
            f.digest,
            f.note,
            sorted([t.name, t.dtype, list(t.shape), t.digest] for t in f.tensors),
        ]
        for f in sorted(manifest.files, key=lambda f: f.path)
    ]
    message = json.dumps([manifest.artifact_id, files], separators=(",", ":")).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


class StoreLocked(StoreError):
    """Another process held the store for longer than we waited."""


class UnkeyedManifest(StoreError):
    """A kept manifest that this user's secret did not key: written or rewritten by another."""


class StoreUnusable(StoreError):
    """The file at the store's path is not a store that can be opened (corrupt, planted, a folder)."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path
        """The store that could not be opened."""


def _own_folder_usable(run_dir: Path) -> str | None:
    """Say why ``run_dir/.arb-audit`` cannot hold the store, or None when it can.

    The agent could write into its run folder, so arb-audit's folder there must be a real folder with
    no symlink where the store or its revisions will go. (A planted store file that does not open is
    found when it is opened: :class:`StoreUnusable`.)
    """
    inside = run_dir / STORE_DIRNAME
    if inside.is_symlink():
        return f"{STORE_DIRNAME} is a symlink"
    if inside.exists() and not inside.is_dir():
        return f"{STORE_DIRNAME} is not a folder"
    if (link := _first_symlink(inside)) is not None:
        return f"{link.relative_to(run_dir)} is a symlink"
    try:
        inside.mkdir(exist_ok=True)
        # mkstemp creates with O_EXCL, so a planted symlink is never written through.
        handle, probe = tempfile.mkstemp(dir=inside, prefix=".write-probe-")
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        return f"{STORE_DIRNAME} is not writable ({exc.strerror or exc})"
    return None


def _first_symlink(folder: Path, limit: int = 200_000) -> Path | None:
    """Return a symlink anywhere under ``folder`` (a store or git directory never has one), or None."""
    seen = 0
    for parent, dirs, files in os.walk(folder):
        for name in (*dirs, *files):
            path = Path(parent) / name
            if path.is_symlink():
                return path
            seen += 1
            if seen > limit:
                return None
    return None


def _is_lock_error(exc: duckdb.Error) -> bool:
    """Tell DuckDB's "another process holds this file" from every other failure to open it."""
    text = str(exc)
    return "Could not set lock on file" in text or "Conflicting lock is held" in text


def _when_free(path: Path, read_only: bool, wait_s: float | None, opening: Callable[[], T]) -> T:
    """Return what ``opening`` the store at ``path`` returns.

    Another process holding the file is waited for, up to ``wait_s`` seconds (default
    :data:`LOCK_WAIT_S`, read when called).
    """
    deadline = time.monotonic() + (LOCK_WAIT_S if wait_s is None else wait_s)
    while True:
        if (special := _not_a_file(path)) is not None:
            raise StoreUnusable(path, f"{path}: cannot open the run store: {special}")
        try:
            if not read_only:
                path.parent.mkdir(parents=True, exist_ok=True)
            return opening()
        except duckdb.Error as exc:
            if not _is_lock_error(exc):
                raise StoreUnusable(path, f"{path}: cannot open the run store: {exc}") from exc
            if time.monotonic() >= deadline:
                raise StoreLocked(f"{path}: another process holds the run store: {exc}") from exc
            time.sleep(0.2 + random.random() * 0.3)
        except OSError as exc:
            raise StoreUnusable(path, f"{path}: cannot open the run store: {exc.strerror or exc}") from exc


def _not_a_file(path: Path) -> str | None:
    """Say what the store at ``path`` or its write-ahead log is, when it is there but not a regular file.

    DuckDB opens both by path, blocking: a FIFO planted there (``.arb-audit/run.duckdb`` is in the
    agent's folder) would hold the audit for good, a device would be read for ever. Each is checked
    just before every try to open it (links are followed: a link to a FIFO is a FIFO).
    """
    for candidate in (path, path.with_name(path.name + ".wal")):
        try:
            mode = os.stat(candidate).st_mode
        except (OSError, ValueError):
            continue  # absent (made on open), or a name the file system refuses: DuckDB says so
        if not stat.S_ISREG(mode):
            return f"{candidate.name} is {kind(mode)}, not a regular file"
    return None


def _current_database(con: duckdb.DuckDBPyConnection) -> str:
    ((name,),) = con.execute("SELECT current_database()").fetchall()
    return str(name)


FileIdentity = tuple[str, int, int, int, int, int]
"""A file as :func:`_identity` tells it: path, device, inode, size, modification and change times."""
_CHECKED: set[FileIdentity] = set()
"""Store files checked (:func:`_check`) and found to hold only what arb-audit makes, as they were then."""
MAX_CHECKED = 4096
"""Checked files remembered at most (then forgotten all at once)."""


def _identity(path: Path) -> FileIdentity | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _check(con: duckdb.DuckDBPyConnection, path: Path, database: str, before: FileIdentity | None) -> None:
    """Raise :class:`StoreUnusable` when the store attached as ``database`` is not what arb-audit makes.

    What :func:`arb_audit.store_bounds.refusals` finds: a store an agent planted is queried no further.
    ``before`` is the file as it was just before it was opened: a file checked before and unchanged
    since (the same on both sides of the opening) is not checked again, as listing its catalog costs
    some 100 ms (DuckDB lists every built-in function to find the file's macros).
    """
    if before is not None and before in _CHECKED and _identity(path) == before:
        return
    try:
        findings = refusals(con, database)
    except duckdb.Error as exc:
        raise StoreUnusable(path, f"{path}: cannot read what the store holds: {exc}") from exc
    if findings:
        raise StoreUnusable(path, f"{path}: {refusal_message(findings)}")
    if before is not None and _identity(path) == before:
        if len(_CHECKED) >= MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED.add(before)


def locate_store(run_dir: Path, explicit: Path | None = None) -> tuple[Path, str | None]:
    """Return the store to use for ``run_dir`` and, when the default could not be used, why not.

    ``explicit`` (``--store``) wins. Else ``<run_dir>/.arb-audit/run.duckdb`` when usable, else the
    per-user cache store.
    """
    if explicit is not None:
        return explicit, None
    why_not = _own_folder_usable(run_dir)
    if why_not is None:
        return run_dir / STORE_DIRNAME / "run.duckdb", None
    return cache_store_path(run_dir), why_not


def revisions_path_for(store_path: Path) -> Path:
    """Return the git directory that holds the code revisions of the runs in ``store_path``."""
    return store_path.with_name(store_path.stem + ".revisions.git")


def _utc_naive(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _aware(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.replace(tzinfo=UTC)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _redacted_json(text: str) -> str:
    """Return JSON ``text`` with every string in it redacted (:func:`arb_audit.redaction.redact`)."""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return redact(text)
    return json.dumps(redact_all(value), ensure_ascii=False)


def _evidence_json(items: Sequence[Evidence]) -> str:
    return _json([e.to_json() for e in items])


def _evidence_list(text: str | None) -> list[Evidence]:
    return [Evidence.from_json(e) for e in json.loads(text or "[]")]


def _task_json(task: TaskDescription | None) -> str | None:
    return None if task is None else _json({"source": task.source, **task.to_json()})


def _task_description(text: str | None) -> TaskDescription | None:
    if not text:
        return None
    data = json.loads(text)
    return TaskDescription.from_json({k: v for k, v in data.items() if k != "source"}, data["source"])


def _row(record: Any, **columns: Any) -> dict[str, Any]:
    """Turn a record dataclass into a table row: times to naive UTC, ``columns`` added or overriding."""
    row = {}
    for f in fields(record):
        value = getattr(record, f.name)
        row[f.name] = _utc_naive(value) if isinstance(value, datetime) else value
    row.update(columns)
    return row


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _field_names(cls: type[Any]) -> tuple[str, ...]:
    """Return the field names of a record dataclass (asked once per row read: worked out once)."""
    if cls not in _FIELD_NAMES:
        _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return _FIELD_NAMES[cls]


def _build(cls: type[T], row: dict[str, Any], **values: Any) -> T:
    """Build a record dataclass from a table row: times to aware UTC, ``values`` taking precedence."""
    kwargs = {}
    for name in _field_names(cls):
        if name in values:
            kwargs[name] = values[name]
        elif name in row:
            value = row[name]
            kwargs[name] = _aware(value) if isinstance(value, datetime) else value
    return cls(**kwargs)


def _ledger_row(run_id: str, s: Submission, prev_hash: str, best: float | None) -> dict[str, Any]:
    """Return the ledger row of ``s``: best-so-far updated, chained to the row hashed ``prev_hash``."""
    if s.status == "scored" and s.score is not None and (best is None or s.score > best):
        best = s.score
    row = _row(s, run_id=run_id, best_so_far=best, evidence=_evidence_json(s.evidence))
    row["prev_hash"] = prev_hash
    row["record_hash"] = chain_hash(prev_hash, row)
    return row


def _chained(run_id: str, submissions: Sequence[Submission]) -> list[dict[str, Any]]:
    """Rows of the submission ledger with best-so-far and the hash chain filled in."""
    rows: list[dict[str, Any]] = []
    for s in submissions:
        previous = rows[-1] if rows else None
        prev_hash = previous["record_hash"] if previous else GENESIS_HASH
        rows.append(_ledger_row(run_id, s, prev_hash, previous["best_so_far"] if previous else None))
    return rows


NEW_FILE_CONFIG: dict[str, str | bool | int | float | list[str]] = {"default_block_size": "16384"}
"""A new store file's block size: a run's store is small, and DuckDB's 256 KiB default made each one
3.4 MB of mostly empty blocks (225 KB at 16 KiB); a file made before keeps its own block size."""


class RunStore:
    """An open run store. Use :meth:`open` (a context manager) rather than the constructor."""

    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path) -> None:
        self.con = con
        self.path = path
        self._tails: dict[str, tuple[int, str, float | None]] = {}
        self._manifests_kept: set[str] = set()
        """Last (seq, record_hash, best_so_far) of each run's ledger appended through this store."""
        self._manifest_macs: bool | None = None
        """Whether ``artifact_files`` has m015's key column (None until asked)."""

    @classmethod
    @contextmanager
    def open(cls, path: Path, *, read_only: bool = False, wait_s: float | None = None) -> Iterator[RunStore]:
        """Open (creating and migrating when writable) the store at ``path``.

        Another process holding the store (DuckDB allows one writer per file) is waited for, up to
        ``wait_s`` seconds.
        """
        before = _identity(path)
        con = _when_free(
            path,
            read_only,
            wait_s,
            lambda: duckdb.connect(
                str(path), read_only=read_only, config={**NEW_FILE_CONFIG, **connect_config()}
            ),
        )
        try:
            lock_down(con)
            _check(con, path, _current_database(con), before)
            store = cls(con, path)
            if not read_only:
                store.migrate()
            yield store
        finally:
            con.close()

    def migrate(self) -> list[str]:
        """Apply the migrations this store lacks, each in its own transaction; return their names."""
        self.con.execute(MIGRATIONS_TABLE)
        done = {r[0] for r in self._rows("SELECT name FROM _arb_migrations", [], MAX_MIGRATION_ROWS)}
        applied = []
        for step in MIGRATIONS:
            if step.__name__ in done:
                continue
            self.con.execute("BEGIN TRANSACTION")
            try:
                step(self.con)
                self.con.execute(
                    "INSERT INTO _arb_migrations VALUES (?, ?)",
                    [step.__name__, _utc_naive(datetime.now(UTC))],
                )
                self.con.execute("COMMIT")
            except duckdb.Error as exc:
                self.con.execute("ROLLBACK")
                raise StoreError(f"{self.path}: migration {step.__name__} failed: {exc}") from exc
            applied.append(step.__name__)
        return applied

    def applied_migrations(self) -> list[str]:
        """Return the names of the migrations applied to this store, in order."""
        rows = self._rows("SELECT name FROM _arb_migrations ORDER BY name", [], MAX_MIGRATION_ROWS)
        return [r[0] for r in rows]

    def _rows(
        self, sql: str, params: Sequence[Any], limit: int = MAX_ROWS, what: str | None = None
    ) -> list[tuple[Any, ...]]:
        """Return the rows of a SELECT (without LIMIT), bounded (:func:`arb_audit.store_bounds.bounded_rows`).

        More rows than the bound, or a query past its deadline, make the store unusable: its file is
        named, and ``what`` was read (else the query).
        """
        try:
            return bounded_rows(self.con, sql, params, what or sql, limit)
        except TooManyRows as exc:
            raise StoreUnusable(self.path, f"{self.path}: {exc}") from exc
        except duckdb.InterruptException as exc:
            raise StoreUnusable(self.path, f"{self.path}: a query ran past its deadline ({exc})") from exc

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        schema = _SCHEMAS[table]
        columns = ", ".join(schema)
        if len(rows) <= FRAME_THRESHOLD:
            # A few rows (the runner's appends): plain parameters beat building an Arrow frame.
            marks = ", ".join("?" * len(schema))
            for r in rows:
                self.con.execute(
                    f"INSERT INTO {table} ({columns}) VALUES ({marks})", [r.get(k) for k in schema]
                )
            return
        frame = pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=schema, orient="row")
        self.con.register("_arb_frame", frame)
        try:
            self.con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _arb_frame")
        finally:
            self.con.unregister("_arb_frame")

    def save_record(self, record: RunRecord, revisions_path: Path | None) -> None:
        """Replace everything derived for ``record.run.run_id`` with ``record``, in one transaction."""
        run_id = record.run.run_id
        self.con.execute("BEGIN TRANSACTION")
        try:
            for table in _DERIVED_TABLES:
                self.con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            self._insert(
                "runs",
                [
                    _row(
                        record.run,
                        extra=_json(run_facts_json(record.run)),
                        task_description=_task_json(record.run.task_description),
                        recorder_version=__version__,
                        revisions_path=str(revisions_path) if revisions_path else None,
                    )
                ],
            )
            self._insert("submissions", _chained(run_id, record.submissions))
            self._insert(
                "artifacts",
                [
                    _row(
                        a,
                        run_id=run_id,
                        path_exists=a.exists,
                        trainer_evidence=_json(a.trainer_evidence.to_json()),
                    )
                    for a in record.artifacts
                ],
            )
            self._insert(
                "revisions", [_row(r, run_id=run_id, files_changed=len(r.files)) for r in record.revisions]
            )
            self._insert(
                "files",
                [_row(f, run_id=run_id, revision_seq=r.seq) for r in record.revisions for f in r.files],
            )
            self._insert("commands", [_row(c, run_id=run_id) for c in record.commands])
            self._insert(
                "reported_iterations",
                [_row(it, run_id=run_id, fields=_json(iteration_fields_json(it))) for it in record.reports],
            )
            self._insert(
                "flags",
                [
                    _row(f, run_id=run_id, seq=i, evidence=_evidence_json(f.evidence))
                    for i, f in enumerate(record.flags, 1)
                ],
            )
            self._insert(
                "problems", [_row(p, run_id=run_id, seq=i) for i, p in enumerate(record.problems, 1)]
            )
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise

    def _dicts(
        self, sql: str, params: Sequence[Any], limit: int = MAX_ROWS, what: str | None = None
    ) -> list[dict[str, Any]]:
        rows = self._rows(sql, params, limit, what)
        names = [d[0] for d in self.con.description or []]
        return [dict(zip(names, row, strict=True)) for row in rows]

    def ensure_run(self, run: RunInfo, revisions_path: Path | None) -> None:
        """Write the run's header row unless the run is already there (a recording resumes)."""
        if self.con.execute("SELECT 1 FROM runs WHERE run_id = ?", [run.run_id]).fetchone() is None:
            self._insert(
                "runs",
                [
                    _row(
                        run,
                        extra=_json(run_facts_json(run)),
                        task_description=_task_json(run.task_description),
                        recorder_version=__version__,
                        revisions_path=str(revisions_path) if revisions_path else None,
                    )
                ],
            )

    def end_run(self, run: RunInfo, ended_at: datetime) -> None:
        """Record when a recorded run ended and what ``run`` says of its end (the agent's exit)."""
        self.con.execute(
            "UPDATE runs SET ended_at = ?, extra = ? WHERE run_id = ?",
            [_utc_naive(ended_at), _json(run_facts_json(run)), run.run_id],
        )

    def append_submission(
        self, run_id: str, submission: Submission, manifest: ArtifactManifest | None = None
    ) -> Submission:
        """Append one attempt to the ledger in one transaction, chained to the row before it.

        The seq is assigned here (one more than the last); the stored submission is returned. The
        graded artifact's ``manifest``, when given and not kept yet, goes into the same transaction.
        """
        # This process holds the store's only write lock, so the ledger's tail is read once and then
        # kept; an append of a known artifact is then one INSERT, one transaction.
        if run_id not in self._tails:
            self._tails[run_id] = self.con.execute(
                "SELECT seq, record_hash, best_so_far FROM submissions WHERE run_id = ?"
                " ORDER BY seq DESC LIMIT 1",
                [run_id],
            ).fetchone() or (0, GENESIS_HASH, None)
        seq, prev_hash, best = self._tails[run_id]
        submission.seq = int(seq) + 1
        row = _ledger_row(run_id, submission, prev_hash, best)
        if manifest is None or self._manifest_kept(manifest.artifact_id):
            self._insert("submissions", [row])
        else:
            self.con.execute("BEGIN TRANSACTION")
            try:
                self._insert_manifest(manifest)
                self._insert("submissions", [row])
                self.con.execute("COMMIT")
            except Exception:
                self.con.execute("ROLLBACK")
                raise
            self._manifests_kept.add(manifest.artifact_id)
        self._tails[run_id] = (submission.seq, row["record_hash"], row["best_so_far"])
        return submission

    def _manifest_kept(self, artifact_id: str) -> bool:
        if artifact_id not in self._manifests_kept and (
            self.con.execute(
                "SELECT 1 FROM artifact_files WHERE artifact_id = ? LIMIT 1", [artifact_id]
            ).fetchone()
            is not None
        ):
            self._manifests_kept.add(artifact_id)
        return artifact_id in self._manifests_kept

    def _insert_manifest(self, manifest: ArtifactManifest) -> None:
        from arb_audit.audit_cache import secret

        key = manifest.artifact_id
        # keyed when this user has a secret: only then can the audit trust it (keyed_manifest)
        secret_key = secret()
        mac = manifest_mac(secret_key, manifest) if secret_key is not None else None
        self._insert(
            "artifact_files",
            [
                {
                    "artifact_id": key,
                    "path": f.path,
                    "size": f.size,
                    "digest": f.digest,
                    "note": f.note,
                    "mac": mac,
                }
                for f in manifest.files
            ],
        )
        self._insert(
            "tensors",
            [
                {
                    "artifact_id": key,
                    "file_path": f.path,
                    "name": t.name,
                    "dtype": t.dtype,
                    "shape": list(t.shape),
                    "content_hash": t.digest,
                }
                for f in manifest.files
                for t in f.tensors
            ],
        )

    def load_classifications(
        self, keys: Sequence[tuple[str, str]], version: str
    ) -> dict[tuple[str, str], str]:
        """Return the cached analyzer results (JSON text) of ``(blob_sha, file_kind)`` keys at ``version``.

        Only rows this user's secret keyed (:func:`classification_mac`) are returned: a store found in
        a run folder is the agent's to write, and a result it holds is input, never a verdict.
        """
        from arb_audit.audit_cache import secret

        key = secret()
        if not keys or key is None:
            return {}
        frame = pl.DataFrame(
            {"blob_sha": [k[0] for k in keys], "file_kind": [k[1] for k in keys]},
            schema={"blob_sha": pl.String, "file_kind": pl.String},
        )
        self.con.register("_arb_keys", frame)
        try:
            rows = self._rows(
                # a result past the bound is NULL, and so not trusted: the file is classified anew
                f"SELECT c.blob_sha, c.file_kind, {capped('c.result')}, c.mac FROM classifications c"
                " JOIN _arb_keys k USING (blob_sha, file_kind) WHERE c.analyzer_version = ?",
                [version],
            )
        finally:
            self.con.unregister("_arb_keys")
        return {
            (sha, kind): result
            for sha, kind, result, mac in rows
            if isinstance(mac, str)
            and isinstance(result, str)
            and hmac.compare_digest(mac, classification_mac(key, sha, kind, version, result))
        }

    def save_classifications(self, results: dict[tuple[str, str], str], version: str) -> None:
        """Cache analyzer results (JSON text) by ``(blob_sha, file_kind)`` at ``version``, in one go.

        Each row is keyed with this user's secret; without one nothing is cached (nothing could be
        trusted when read back). The results quote the files (evidence excerpts): they are stored with
        secrets redacted.
        """
        from arb_audit.audit_cache import secret

        key = secret()
        if key is None:
            return
        kept = {k: _redacted_json(result) for k, result in results.items()}
        rows = [
            {
                "blob_sha": sha,
                "file_kind": kind,
                "analyzer_version": version,
                "result": result,
                "mac": classification_mac(key, sha, kind, version, result),
            }
            for (sha, kind), result in kept.items()
        ]
        if not rows:
            return
        frame = pl.DataFrame(rows, schema={k: pl.String for k in rows[0]})
        self.con.register("_arb_frame", frame)
        try:
            self.con.execute(
                "INSERT OR REPLACE INTO classifications"
                " SELECT blob_sha, file_kind, analyzer_version, result, mac FROM _arb_frame"
            )
        finally:
            self.con.unregister("_arb_frame")

    def load_manifest(self, artifact_id: str) -> ArtifactManifest | None:
        """Return the kept manifest of ``artifact_id`` (files by path, tensors by name), or None.

        Whoever wrote it: ``verify`` checks it against the ledger's chain. What the audit concludes from
        a manifest is read through :meth:`keyed_manifest`.
        """
        return self._manifest(artifact_id)[0]

    def keyed_manifest(self, artifact_id: str) -> ArtifactManifest | None:
        """Return the kept manifest of ``artifact_id`` when this user's secret keyed it, else None if none.

        Raises :class:`UnkeyedManifest` when the store keeps one that carries no valid key
        (:func:`manifest_mac`): a store found in a run folder is the agent's to write, and a manifest
        it holds is input, never a fact of ours. Raises :class:`StoreUnusable` for one larger than any
        model's (:data:`MAX_MANIFEST_FILES`, :data:`MAX_MANIFEST_TENSORS`).
        """
        from arb_audit.audit_cache import secret

        manifest, macs = self._manifest(artifact_id)
        if manifest is None:
            return None
        key = secret()
        if key is None:
            raise UnkeyedManifest(f"{self.path}: no secret of this user to check its key with")
        expected = manifest_mac(key, manifest)
        if len(macs) != 1 or not all(isinstance(m, str) and hmac.compare_digest(m, expected) for m in macs):
            raise UnkeyedManifest(
                f"{self.path}: it carries no key of this user (arb-audit record keys those it keeps)"
            )
        return manifest

    def _has_manifest_macs(self) -> bool:
        if self._manifest_macs is None:
            self._manifest_macs = bool(
                self.con.execute(
                    "SELECT 1 FROM duckdb_columns() WHERE database_name = current_database()"
                    " AND schema_name = 'main' AND table_name = 'artifact_files' AND column_name = 'mac'"
                ).fetchall()
            )
        return self._manifest_macs

    def _manifest(self, artifact_id: str) -> tuple[ArtifactManifest | None, set[str | None]]:
        """Return the kept manifest of ``artifact_id`` (or None) and the keys its rows carry."""
        # a store made before m015, opened read-only (a recording), has no key column: nothing is keyed
        mac = "mac" if self._has_manifest_macs() else "NULL AS mac"
        files = self._dicts(
            f"SELECT path, size, digest, note, {mac} FROM artifact_files WHERE artifact_id = ? ORDER BY path",
            [artifact_id],
            MAX_MANIFEST_FILES,
            f"the kept manifest of artifact {artifact_id[:12]}",
        )
        if not files:
            return None, set()
        tensors: dict[str, list[TensorDigest]] = {}
        for t in self._dicts(
            "SELECT file_path, name, dtype, shape, content_hash FROM tensors WHERE artifact_id = ?"
            " AND content_hash IS NOT NULL ORDER BY file_path, name",
            [artifact_id],
            MAX_MANIFEST_TENSORS,
            f"the tensors of artifact {artifact_id[:12]}",
        ):
            tensors.setdefault(t["file_path"], []).append(
                TensorDigest(t["name"], t["dtype"], tuple(t["shape"]), t["content_hash"])
            )
        manifest = ArtifactManifest(
            artifact_id,
            [
                FileDigest(f["path"], f["size"], f["digest"], tensors.get(f["path"], []), f["note"])
                for f in files
            ],
        )
        return manifest, {f["mac"] for f in files}

    def append_revision(self, run_id: str, revision: Revision) -> Revision | None:
        """Append a revision (seq assigned here) unless its commit is the last one recorded; return it."""
        last = self.con.execute(
            "SELECT seq, sha FROM revisions WHERE run_id = ? ORDER BY seq DESC LIMIT 1", [run_id]
        ).fetchone()
        if last is not None and last[1] == revision.sha:
            return None
        revision.seq = int(last[0]) + 1 if last else 1
        self.con.execute("BEGIN TRANSACTION")
        try:
            self._insert("revisions", [_row(revision, run_id=run_id, files_changed=len(revision.files))])
            self._insert("files", [_row(f, run_id=run_id, revision_seq=revision.seq) for f in revision.files])
            self.con.execute("COMMIT")
        except Exception:
            self.con.execute("ROLLBACK")
            raise
        return revision

    def load_record(self, run_id: str) -> RunRecord:
        """Read back the record of ``run_id`` (times as aware UTC datetimes)."""
        runs = self._dicts("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if not runs:
            raise StoreError(f"{self.path}: no run {run_id!r} in the store")
        # runs.extra holds the run's facts (model.RUN_FACTS); an older store's untyped bag of the same
        # facts reads into them, and what does not read is said, never misread
        facts, unread = read_run_facts(json.loads(runs[0]["extra"] or "{}"))
        record = RunRecord(
            run=_build(
                RunInfo,
                runs[0],
                **facts,
                task_description=_task_description(runs[0].get("task_description")),  # older stores: none
            )
        )

        def rows(table: str, order: str) -> list[dict[str, Any]]:
            return self._dicts(
                f"SELECT * FROM {table} WHERE run_id = ? ORDER BY {order}",
                [run_id],
                what=f"table {table} of {run_id}",
            )

        record.submissions = [
            _build(Submission, s, evidence=_evidence_list(s["evidence"])) for s in rows("submissions", "seq")
        ]
        record.artifacts = [
            _build(
                ArtifactInfo,
                a,
                exists=a["path_exists"],
                trainer_evidence=TrainerEvidence.from_json(json.loads(a["trainer_evidence"] or "{}")),
            )
            for a in rows("artifacts", "path")
        ]
        files: dict[int, list[FileEntry]] = {}
        for f in rows("files", "revision_seq, path"):
            files.setdefault(f["revision_seq"], []).append(_build(FileEntry, f))
        record.revisions = [
            _build(Revision, v, files=files.get(v["seq"], [])) for v in rows("revisions", "seq")
        ]
        record.commands = [_build(Command, c) for c in rows("commands", "seq")]
        record.reports = [
            _build(ReportedIteration, it, **read_iteration_fields(json.loads(it["fields"] or "{}")))
            for it in rows("reported_iterations", "source, line, number")
        ]
        record.flags = [_build(Flag, f, evidence=_evidence_list(f["evidence"])) for f in rows("flags", "seq")]
        record.problems = [_build(Problem, p) for p in rows("problems", "seq")]
        if unread:
            record.problems.append(
                Problem(
                    STORE_DIRNAME,
                    f"{self.path}: facts of the run it kept do not read as this arb-audit's and are left"
                    f" out: {', '.join(unread)[:500]}",
                )
            )
        return record

    def save_audit(
        self,
        audit: AuditReport,
        input_key: str | None = None,
        depends: dict[str, str] | None = None,
    ) -> None:
        """Store the assembled audit of its run (replacing an earlier one).

        ``input_key`` and ``depends`` say what it was made from (:mod:`arb_audit.audit_cache`).
        """
        run_id = audit.run.run_id
        from arb_audit.audit_cache import audit_mac

        # the summary columns are read from the typed record; the report column is its serialisation
        text = audit.to_json_text()
        depends_text = None if depends is None else _json(depends)
        # keyed to this user's secret: a row rewritten in a store the agent can write is not read back
        mac = audit_mac(input_key, text, depends_text) if input_key is not None else None
        self.con.execute("DELETE FROM audits WHERE run_id = ?", [run_id])
        self.con.execute(
            "INSERT INTO audits (run_id, best_seq, lineage, routes_attempted, routes_adopted, failure_mode,"
            " flags, quadrant, analyzer_version, evidence, report, input_key, depends, mac)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                run_id,
                audit.best.seq if audit.best is not None else None,
                _json(None if audit.route.chain is None else [s.to_json() for s in audit.route.chain]),
                _json(audit.route.attempted),
                _json(audit.route.adopted),
                audit.failure.mode,
                _json([f.to_json() for f in audit.flags]),
                audit.quadrant.cell,
                __version__,
                _json([e.to_json() for e in audit.failure.evidence]),
                text,
                input_key,
                depends_text,
                mac,
            ],
        )

    def verify_submission_chain(self, run_id: str) -> int | None:
        """Return the seq of the first submission whose hash chain no longer holds, or None if all hold."""
        return submission_chain_break(self.con, run_id)


class StoreHost:
    """One DuckDB instance that a long-lived process attaches each store to, for one read or write.

    The reviewer's desk reads an audit per run opened and appends a verdict per key. Starting a DuckDB
    instance, as :meth:`RunStore.open` does, costs some 35 ms; attaching a file to a running one some
    3 ms (benchmarks/bench_review.py). Detaching releases the file's lock as closing does, so other
    processes read and write the store between two uses, and each attach reads what they wrote. One
    thread at a time.
    """

    def __init__(self) -> None:
        self._con: duckdb.DuckDBPyConnection | None = None
        self._attached = 0

    @property
    def running(self) -> bool:
        """Whether an instance is started (stores are attached to it)."""
        return self._con is not None

    def close(self) -> None:
        """End the instance (it reserves hundreds of MB of address space); a later open starts another."""
        if self._con is not None:
            self._con.close()
            self._con = None

    @contextmanager
    def open(self, path: Path, *, read_only: bool = False, wait_s: float | None = None) -> Iterator[RunStore]:
        """Attach the store at ``path``, as :meth:`RunStore.open` opens it; detach it on leaving.

        A writable store is created and migrated.
        """
        if self._con is None:
            self._con = duckdb.connect(config=connect_config())
        con = self._con
        self._attached += 1
        alias = f"store{self._attached}"
        if read_only:
            options = " (READ_ONLY)"
        elif not path.exists():
            options = f" (BLOCK_SIZE {NEW_FILE_CONFIG['default_block_size']})"
        else:
            options = ""
        quoted = str(path).replace("'", "''")
        before = _identity(path)
        _when_free(path, read_only, wait_s, lambda: con.execute(f"ATTACH '{quoted}' AS {alias}{options}"))
        try:
            _check(con, path, alias, before)
            con.execute(f"USE {alias}")
            store = RunStore(con, path)
            if not read_only:
                store.migrate()
            yield store
        finally:
            with suppress(duckdb.Error):  # a transaction the caller left open (it raised) is dropped
                con.execute("ROLLBACK")
            con.execute("USE memory")
            con.execute(f"DETACH {alias}")
