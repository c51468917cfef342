"""What the reviewer's desk works on, without any widget.

The runs to review, their audits, the code behind the evidence, and the verdict ledger.

A session opens a study store (``arb-audit ingest``), a run store, or a run folder (audited first,
as ``arb-audit RUN_DIR`` does). The store is opened only for the moment of each read or append, so two
reviewers can work on one study from two terminals.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from arb_audit.revisions import read_blob, shown_text
from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.store import RunStore, StoreError, StoreHost
from arb_audit.store_bounds import MAX_TEXT_CHARS, TooManyRows, bounded_rows, capped, too_long
from arb_audit.study import StudyRow, row_from_audit, study_columns, study_frame
from arb_audit.taxonomy.review import analyzer_values
from arb_audit.verdicts import LEDGER_SCHEMA, Verdict, append_verdicts, current_verdicts, load_verdicts

DISAGREEING = ("score_up+not_intended", "no_gain+intended")
"""Quadrants where the score and the intended training tell different stories."""
LIST_COLUMNS = (
    "run_key",
    "run_id",
    "task",
    "level",
    "scaffold",
    "driver",
    "mode",
    "seed",
    "base_score",
    "best_score",
    "route_label",
    "chain",
    "failure",
    "quadrant",
    "flags",
    "error",
)
"""The study columns the runs list shows and filters on (the audits stay in the store until opened)."""
STORE_WAIT_S = 5.0
"""How long the desk waits for a store another process holds before saying so."""
MAX_CACHED_REPORTS = 64
"""Audits kept read (a reviewer goes back and forth between a few runs)."""
MAX_CODE_BYTES = 2_000_000
"""A file at a revision larger than this is shown cut: an agent may have committed anything."""
MAX_LISTED_RUNS = 1_000_000
"""Most runs the list reads from a store (a study of every run of a benchmark holds some thousands); a
store holding more is not opened for review, rather than read whole: it may be a planted one."""
MAX_FILE_REVISIONS = 10_000
"""Most revisions of one file read for its history (a run commits a few hundred)."""


class ReviewError(Exception):
    """PATH cannot be reviewed (no store, no runs), with the reason."""


@dataclass(frozen=True, slots=True)
class Unread:
    """A run's audit that the desk cannot show, and why (the screens show the reason in its place)."""

    problem: str
    """Why: the run could not be audited, its stored audit does not read as one of this schema
    version, or the store cannot be read now."""


NOT_AUDITED = Unread("no audit (the run could not be audited)")
"""A listed run whose row holds no audit (ingest kept its error instead)."""


@dataclass(frozen=True, slots=True)
class FileVersion:
    """One version of a file in a run's code history."""

    revision_seq: int
    """The first revision that holds it."""
    commit: str
    """That revision's commit in the run's revisions.git."""
    blob: str
    """The file's git blob."""


@dataclass(slots=True)
class ReviewSession:
    """The runs of one store under review by one reviewer."""

    store_path: Path
    """The store holding the audits and the verdict ledger."""
    runs: pl.DataFrame
    """One row per run (:data:`LIST_COLUMNS` plus ``strength`` and ``disagrees``)."""
    reviewer: str
    """Who records the verdicts."""
    blind: bool = False
    """Hide the analyzer's and other reviewers' values of a field until this reviewer has ruled on it."""
    study: bool = True
    """Whether the store is a study (audits in ``study_runs``) rather than a run store (``audits``)."""
    ledger: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=LEDGER_SCHEMA))
    """The verdict ledger, oldest first, as last read."""
    host: StoreHost = field(default_factory=StoreHost)
    """The DuckDB instance each read and append attaches the store to (not one started per key)."""
    _ruled: tuple[pl.DataFrame, set[tuple[str, str]]] | None = None
    _reports: dict[str, AuditReport | Unread] = field(default_factory=dict)
    _own_stamp: int | None = None

    @classmethod
    def open(cls, path: Path, reviewer: str, *, blind: bool = False) -> ReviewSession:
        """Open ``path`` (a study store, a run store or a run folder) for review by ``reviewer``."""
        audited: str | None = None
        if path.is_dir():
            path, audited = _audited_store(path)
        if not path.is_file():
            raise ReviewError(f"{path}: no such store or run folder")
        # Read-only: a DuckDB file that is not arb-audit's is refused untouched, not migrated; an older
        # store is migrated by the first verdict appended to it.
        host = StoreHost()
        with host.open(path, read_only=True) as store:
            # a run folder's store can hold rows the agent wrote (other runs' audits, a study's rows):
            # only the run just audited, whose row the audit keyed, is reviewed from it
            study, runs = _list_runs(store, only=audited)
            ledger = _ledger(store)
        if runs.is_empty():
            raise ReviewError(
                f"{path}: holds no audited runs (arb-audit RUN_DIR or arb-audit ingest makes some)"
            )
        if blind:  # the "needs review" order must not tell a blind reviewer what the analyzer found
            runs = runs.with_columns(disagrees=pl.lit(False), strength=pl.lit(None, pl.String))
        return cls(path, runs, reviewer, blind, study, ledger, host)

    def report(self, run_key: str) -> AuditReport | Unread:
        """Return ``run_key``'s audit, read back through the schema (:func:`read_audit`).

        :data:`NOT_AUDITED` when it has none; :class:`Unread` with why when the store cannot be read
        now (another process holds it) or the audit does not read as an audit of this schema version.
        """
        try:
            stamp = self._stamp()
            if stamp != self._own_stamp:  # another process changed the store: read its audits again
                self._own_stamp = stamp
                self._reports.clear()
            if run_key not in self._reports:
                if len(self._reports) >= MAX_CACHED_REPORTS:
                    self._reports.pop(next(iter(self._reports)))
                self._reports[run_key] = _report(self.host, self.store_path, self.study, run_key)
            return self._reports[run_key]
        except (StoreError, OSError, duckdb.Error) as exc:
            return Unread(str(exc))

    def audit(self, run_key: str) -> AuditReport | None:
        """Return ``run_key``'s audit; None when it has none to show (:meth:`report` says why)."""
        found = self.report(run_key)
        return found if isinstance(found, AuditReport) else None

    def _stamp(self) -> int:
        """Return the store's modification time (a changed store's audits are read again)."""
        return self.store_path.stat().st_mtime_ns

    def standing(self, run_key: str) -> pl.DataFrame:
        """Return every reviewer's standing verdict on ``run_key``, one row per reviewer and field."""
        return current_verdicts(self.ledger.filter(pl.col("run_key") == run_key))

    def reviewed_keys(self) -> set[str]:
        """Return the runs this reviewer has recorded at least one verdict on."""
        return {key for key, _ in self.ruled()}

    def ruled(self) -> set[tuple[str, str]]:
        """Return the (run key, field) pairs this reviewer has recorded a verdict on."""
        # Asked for every field and pointer shown: worked out once per ledger, not per question.
        if self._ruled is None or self._ruled[0] is not self.ledger:
            mine = self.ledger.filter(pl.col("reviewer") == self.reviewer)
            self._ruled = (self.ledger, set(zip(mine["run_key"], mine["field"], strict=True)))
        return self._ruled[1]

    def may_see(self, run_key: str, field_name: str) -> bool:
        """Whether the analyzer's and other reviewers' values of the field are shown to this reviewer."""
        if not self.blind:
            return True
        return (run_key, field_name) in self.ruled()

    def record(
        self, run_key: str, field_name: str, value: str, note: str = "", now: datetime | None = None
    ) -> None:
        """Append this reviewer's verdict on one field of ``run_key`` and read the ledger again.

        Raises ``arb_audit.verdicts.VerdictRefused`` for a value outside the taxonomy.
        """
        self.record_all(run_key, {field_name: value}, note, now)

    def record_all(
        self, run_key: str, values: dict[str, str], note: str = "", now: datetime | None = None
    ) -> None:
        """Append this reviewer's verdicts on several fields of ``run_key`` at once (one transaction).

        Raises ``arb_audit.verdicts.VerdictRefused`` for a value outside the taxonomy; then none is
        written.
        """
        audit = self.audit(run_key)
        run_id = audit.run.run_id if audit else None
        analyzer = analyzer_values(audit)
        verdicts = [
            Verdict(
                run_key=run_key,
                run_id=run_id,
                field=name,
                value=value,
                reviewer=self.reviewer,
                analyzer=analyzer.get(name),
                note=note,
                blind=self.blind and not self.may_see(run_key, name),
            )
            for name, value in values.items()
        ]
        # Another reviewer's append holds the store for milliseconds; a longer hold is reported, not
        # waited out with the desk frozen.
        with self.host.open(self.store_path, wait_s=STORE_WAIT_S) as store:
            append_verdicts(store, verdicts, now)
            self.ledger = load_verdicts(store)
        # This append changed the store, not its audits: the audits read stay (a re-ingest by another
        # process in the same moment would go unseen until the next change)
        self._own_stamp = self._stamp()

    def file_versions(self, report: AuditReport, path: str) -> list[FileVersion]:
        """Return the versions of ``path`` in the run's code history, oldest first (one per change)."""
        store, run_id = report.run.store_path, report.run.run_id
        if not store or not run_id:
            return []
        rows = _file_rows(self.host, store, run_id, path)
        versions: list[FileVersion] = []
        for seq, commit, blob in rows:
            if not versions or versions[-1].blob != blob:
                versions.append(FileVersion(seq, commit, blob))
        return versions

    def code(self, report: AuditReport, blob: str, path: str | None = None) -> str | None:
        """Return a file's text by its blob in the run's revisions.git (cut at :data:`MAX_CODE_BYTES`).

        Secrets in it are redacted (every value when ``path`` is a ``.env`` file).
        """
        git_dir = report.run.revisions_path
        if not git_dir:
            return None
        data = read_blob(Path(git_dir), blob)
        # redacted whole, then cut: a key cut in two would no longer have its shape
        return None if data is None else shown_text(data, path)[:MAX_CODE_BYTES]


def _audited_store(run_dir: Path) -> tuple[Path, str]:
    """Audit ``run_dir`` (as ``arb-audit RUN_DIR`` does); return the store it wrote and the run's id."""
    from arb_audit.pipeline import audit

    try:
        report = audit(run_dir)
    except (ValueError, StoreError) as exc:  # NoRunFound is a ValueError
        raise ReviewError(str(exc)) from exc
    return Path(report.run.store_path or ""), report.run.run_id


def _list_runs(store: RunStore, only: str | None = None) -> tuple[bool, pl.DataFrame]:
    """Return whether the store is a study, and its runs for the list (without their whole audits).

    ``only``: the store is a run store, and only that run's audit is listed.
    """
    try:
        if "m007_study_runs" not in store.applied_migrations():
            raise ReviewError(f"{store.path}: an arb-audit store older than this reviewer; audit it again")
        study = only is None and store.con.execute("SELECT count(*) FROM study_runs").fetchall()[0][0] > 0
        if study:
            columns = study_columns(store, [*LIST_COLUMNS, "strength"])
            table = store.con.sql(
                f"SELECT {columns} FROM study_runs ORDER BY run_key LIMIT {MAX_LISTED_RUNS + 1}"
            ).to_arrow_table()
            frame = pl.from_arrow(table)
            assert isinstance(frame, pl.DataFrame)
            if frame.height > MAX_LISTED_RUNS:
                raise TooManyRows(f"its study: more than {MAX_LISTED_RUNS:,} runs; not read")
        else:
            # every query on a store runs under its deadline (store_bounds); the rows and each audit's
            # text are bounded here: a store found in a run folder is the agent's to fill
            reports = bounded_rows(
                store.con,
                f"SELECT run_id, {capped('report')}, {too_long('report')} FROM audits"
                f" WHERE {'run_id = ?' if only is not None else 'true'} ORDER BY run_id",
                [only] if only is not None else [],
                "its audits",
                MAX_LISTED_RUNS,
            )
            rows: list[StudyRow] = []
            for run_id, text, long in reports:
                if long:
                    why = f"its stored audit is longer than {MAX_TEXT_CHARS:,} characters; not read"
                    rows.append(row_from_audit(run_id, "", None, why, {}))
                    continue
                try:
                    data = json.loads(text)
                except (TypeError, json.JSONDecodeError, RecursionError) as exc:
                    rows.append(row_from_audit(run_id, "", None, f"its stored audit is not JSON ({exc})", {}))
                    continue
                read = read_audit(data, f"the audit of {run_id}")
                if isinstance(read, Unread):
                    rows.append(row_from_audit(run_id, "", None, read.problem, {}))
                else:
                    rows.append(row_from_audit(run_id, "", read, None, {}))
            frame = study_frame(rows).select([*LIST_COLUMNS, "strength"])
    except duckdb.Error as exc:
        raise ReviewError(f"{store.path}: not an arb-audit store ({exc})") from exc
    except TooManyRows as exc:
        raise ReviewError(f"{store.path}: {exc}") from exc
    if frame.is_empty():
        return study, frame
    return study, frame.with_columns(disagrees=pl.col("quadrant").is_in(DISAGREEING).fill_null(False))


def _ledger(store: RunStore) -> pl.DataFrame:
    """Return the store's verdict ledger (empty for a store no verdict has been appended to yet)."""
    if "m008_verdict_ledger" not in store.applied_migrations():
        return pl.DataFrame(schema=LEDGER_SCHEMA)
    return load_verdicts(store)


def read_audit(data: object, what: str) -> AuditReport | Unread:
    """Return a stored audit (its JSON parsed) once it validates as an :class:`AuditReport`, else why not.

    A study store is a file anyone can edit, and an older arb-audit's audit has other fields: either
    would be misread field by field, so a value that does not validate is shown as what it is, with
    the first thing wrong, and never half-trusted. An audit of another schema version says so, and
    that the run is to be audited again (:mod:`arb_audit.schema`: an old record is never upgraded).
    """
    if not isinstance(data, dict):
        return Unread(f"{what} is not an audit (a JSON {type(data).__name__})")
    if data.get("schema_version") != SCHEMA_VERSION:
        return Unread(
            f"{what} was made by another arb-audit (schema version {data.get('schema_version')!r},"
            f" this one reads {SCHEMA_VERSION}): audit or ingest the run again"
        )
    try:
        return AuditReport.model_validate(data)
    except ValueError as exc:  # pydantic's ValidationError
        first = str(exc).splitlines()[1:3]
        return Unread(f"{what} does not read as an audit ({' '.join(s.strip() for s in first)})")


def _report(host: StoreHost, store_path: Path, study: bool, run_key: str) -> AuditReport | Unread:
    """Read one run's audit from the store through the schema (:func:`read_audit`)."""
    table, key = ("study_runs", "run_key") if study else ("audits", "run_id")
    sql = f"SELECT {capped('report')}, {too_long('report')} FROM {table} WHERE {key} = ? LIMIT 1"
    with host.open(store_path, read_only=True, wait_s=STORE_WAIT_S) as store:
        found = store.con.execute(sql, [run_key]).fetchall()
    if found and found[0][1]:
        return Unread(
            f"{store_path}: the audit of {run_key} is longer than {MAX_TEXT_CHARS:,} characters; not read"
        )
    if not found or found[0][0] is None:
        return NOT_AUDITED
    try:
        data = json.loads(found[0][0])
    except (json.JSONDecodeError, RecursionError) as exc:
        return Unread(f"{store_path}: the audit of {run_key} cannot be read ({exc})")
    return read_audit(data, f"{store_path}: the audit of {run_key}")


@lru_cache(maxsize=256)
def _file_rows(host: StoreHost, store_path: str, run_id: str, path: str) -> list[tuple[int, str, str]]:
    """Every revision's (seq, commit, blob) of one file of one run, oldest first."""
    try:
        with host.open(Path(store_path), read_only=True) as store:
            rows = store.con.execute(
                "SELECT r.seq, r.sha, f.blob_sha FROM files f JOIN revisions r "
                "ON r.run_id = f.run_id AND r.seq = f.revision_seq "
                "WHERE f.run_id = ? AND f.path = ? AND f.blob_sha IS NOT NULL ORDER BY r.seq"
                f" LIMIT {MAX_FILE_REVISIONS}",
                [run_id, path],
            ).fetchall()
    except (StoreError, duckdb.Error):
        return []
    return [(int(seq), str(sha), str(blob)) for seq, sha, blob in rows]
