"""A study: many runs' audits in one store, one row per run, for the paper tables and figures.

``arb-audit ingest`` audits each run folder into its own run store as ``arb-audit RUN_DIR`` does, then
keeps one row per run in the study store's ``study_runs`` table (a run store file with that table):
the run's cell keys (task, level, scaffold, driver, mode, seed), the audit's headline facts and the
whole audit as JSON. A run is keyed by its folder's path and remembered with a fingerprint of its
files, so ingesting it again unchanged is a lookup (unless its row holds an audit of another schema
version: that run is audited anew).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.store import RunStore, StoreError
from arb_audit.taxonomy.review import analyzer_values
from arb_audit.taxonomy.tables import CELL_COLUMNS
from arb_audit.taxonomy.timelines import FigureData, RunTimeline, TimedSubmission, TimelineStep, instant

CELL_KEYS = CELL_COLUMNS
"""What identifies a cell of a study (the tables' own definition)."""
LATER_COLUMNS = {"strength": ("m011_study_strength", "VARCHAR")}
"""Study columns added after ``study_runs`` was made: the migration that added each, and its type."""

CellValue = str | int | None
"""A cell key's value as a mapping file sets it: ``level`` a whole number, the others text."""


@dataclass(frozen=True, slots=True)
class StudyRun:
    """One run to ingest: its folder and the cell keys a mapping file sets for it."""

    folder: Path
    """The run folder."""
    overrides: dict[str, CellValue]
    """Cell keys that replace what the run's metadata says."""


@dataclass(slots=True)
class StudyRow:
    """One run's row of ``study_runs``: a field per column of :data:`STUDY_SCHEMA`, in its order."""

    run_key: str
    """The run folder's resolved path (or, on the desk, the run id)."""
    fingerprint: str | None
    """BLAKE3 of the run's files and mapped keys; None makes the next ingest audit the run again."""
    ingested_at: datetime
    """When the row was made (UTC, naive)."""
    error: str | None
    """Why the run has no audit; the audit's columns are then empty."""
    run_id: str | None = None
    """The run's id as its audit says."""
    format: str | None = None
    """The collector that read the run."""
    task: str | None = None
    """The benchmark task (a cell key)."""
    level: int | None = None
    """The task's difficulty level (a cell key)."""
    scaffold: str | None = None
    """The agent scaffold (a cell key)."""
    driver: str | None = None
    """The model driving the agent (a cell key)."""
    mode: str | None = None
    """The benchmark mode (a cell key)."""
    seed: str | None = None
    """The seed, which only a study's mapping gives (a cell key)."""
    base_score: float | None = None
    """The base model's score."""
    best_score: float | None = None
    """The best valid submission's score."""
    best_seq: int | None = None
    """The best valid submission's sequence number."""
    n_submissions: int | None = None
    """How many submissions the run made."""
    n_valid: int | None = None
    """How many of them were scored."""
    valid_rate: float | None = None
    """Scored over made."""
    time_to_first_valid_s: float | None = None
    """Seconds from the run's start to its first scored submission."""
    time_to_best_s: float | None = None
    """Seconds from the run's start to its best submission."""
    route_label: str | None = None
    """The best submission's route label (SFT, COMPOSITE, ...)."""
    chain: str | None = None
    """Its chain as tables print it (SFT→GRPO(online))."""
    strength: str | None = None
    """The route's evidence level (verified, supported, weak, ...)."""
    written: list[str] | None = None
    """Route labels whose code was only written."""
    attempted: list[str] | None = None
    """Route labels whose code ran."""
    adopted: list[str] | None = None
    """Route labels in the best lineage."""
    failure: str | None = None
    """The run's failure mode."""
    quadrant: str | None = None
    """Its quadrant (score went up × intended training happened)."""
    flags: list[str] | None = None
    """The integrity flags raised."""
    report: str | None = None
    """The whole audit, JSON."""


_DTYPES: dict[str, pl.DataType] = {
    "str": pl.String(),
    "int": pl.Int32(),
    "float": pl.Float64(),
    "datetime": pl.Datetime("us"),
    "list[str]": pl.List(pl.String()),
}
"""The polars type of each Python type a :class:`StudyRow` field holds (None aside)."""

STUDY_SCHEMA = pl.Schema({f.name: _DTYPES[str(f.type).removesuffix(" | None")] for f in fields(StudyRow)})
"""The columns of ``study_runs`` as polars reads them: :class:`StudyRow`'s fields, which say what each
holds."""


def row_from_audit(
    key: str,
    print_: str,
    report: AuditReport | None,
    error: str | None,
    overrides: Mapping[str, CellValue],
) -> StudyRow:
    """Build a run's ``study_runs`` row from its audit, or from why there is none (``error``).

    ``overrides`` are the cell keys a study's mapping file sets for the run.
    """
    row = StudyRow(
        run_key=key,
        fingerprint=print_,
        ingested_at=datetime.now(UTC).replace(tzinfo=None),
        error=error,
    )
    if report is not None:
        run, metrics, best, route = report.run, report.metrics, report.best, report.route
        facts = analyzer_values(report)  # the route, chain, failure and quadrant as reviewers see them
        row.run_id, row.format = run.run_id, run.format
        # a cell key is a field of the run; the seed, which no run says, only the study's overrides give
        for name in CELL_KEYS:
            setattr(row, name, getattr(run, name, None))
        row.base_score = run.base_score
        row.best_score, row.best_seq = (best.score, best.seq) if best else (None, None)
        row.n_submissions, row.n_valid = metrics.n_submissions, metrics.n_scored
        row.valid_rate = metrics.valid_rate
        row.time_to_first_valid_s = metrics.time_to_first_valid_s
        row.time_to_best_s = metrics.time_to_best_s
        row.route_label, row.chain = facts["route"], facts["chain"]
        row.strength = route.strength
        row.written, row.attempted, row.adopted = (
            list(route.written),
            list(route.attempted),
            list(route.adopted),
        )
        row.failure, row.quadrant = facts["failure"], facts["quadrant"]
        row.flags = sorted({f.flag for f in report.flags})
        row.report = report.to_json_text()
    for name, value in overrides.items():
        if name in CELL_KEYS:
            setattr(row, name, value)
    if row.level is not None:
        row.level = int(row.level)
    if row.seed is not None:
        row.seed = str(row.seed)
    return row


def study_frame(rows: list[StudyRow]) -> pl.DataFrame:
    """Return ``rows`` as a DataFrame of :data:`STUDY_SCHEMA`."""
    return pl.DataFrame(
        [{name: getattr(row, name) for name in STUDY_SCHEMA} for row in rows], schema=STUDY_SCHEMA
    )


def fingerprints(store: RunStore) -> dict[str, str]:
    """Return the fingerprint of each ingested run whose row need not be made again, by run key.

    A row holding an audit of another schema version (an older arb-audit's, or one that is not JSON) is
    left out: its run is audited anew by the next ingest even when its folder is unchanged, never read
    as this version's (:mod:`arb_audit.schema`). A row kept with an error only is left as it is.
    """
    rows = store.con.execute(
        "SELECT run_key, fingerprint FROM study_runs"
        " WHERE report IS NULL OR try(json_extract(report, '$.schema_version'))::VARCHAR = ?",
        [str(SCHEMA_VERSION)],
    ).fetchall()
    return dict(rows)


def save_rows(store: RunStore, rows: list[StudyRow]) -> None:
    """Insert or replace rows of ``study_runs`` in one transaction."""
    if not rows:
        return
    store.con.register("incoming", study_frame(rows))
    store.con.execute("BEGIN TRANSACTION")
    try:
        store.con.execute("DELETE FROM study_runs WHERE run_key IN (SELECT run_key FROM incoming)")
        store.con.execute(f"INSERT INTO study_runs ({', '.join(STUDY_SCHEMA)}) SELECT * FROM incoming")
        store.con.execute("COMMIT")
    except Exception:
        store.con.execute("ROLLBACK")
        raise
    finally:
        store.con.unregister("incoming")


def study_columns(store: RunStore, names: Iterable[str]) -> str:
    """Return a select list of ``names`` from ``study_runs``, also for a study made before a column.

    A study opened read-only is not migrated: a column added since reads as empty.
    """
    migrated = set(store.applied_migrations())
    return ", ".join(
        f"NULL::{LATER_COLUMNS[name][1]} AS {name}"
        if name in LATER_COLUMNS and LATER_COLUMNS[name][0] not in migrated
        else name
        for name in names
    )


AUDIT_COLUMNS = tuple(
    c
    for c in STUDY_SCHEMA
    if c not in ("run_key", "fingerprint", "ingested_at", "error", "run_id", "format", "report", *CELL_KEYS)
)
"""The headline columns a row's audit fills: what they mean is what its schema version meant."""
_VERSION = "_schema_version"


def load_study(path: Path | str) -> pl.DataFrame:
    """Read a study store's runs as a polars DataFrame (the columns of :data:`STUDY_SCHEMA`).

    A row whose audit is of another schema version (an older arb-audit's, or no audit's JSON) is read as
    a run not audited: ``error`` says why and to ingest it again, its headline columns
    (:data:`AUDIT_COLUMNS`) are empty, so no table or figure reads them as this version's. Its ``report``
    is kept as stored: whatever reads it validates it (:class:`arb_audit.schema.AuditReport` refuses
    it), and says so (:func:`older_audits` lists those rows).
    """
    with RunStore.open(Path(path), read_only=True) as store:
        try:
            table = store.con.sql(
                f"SELECT {study_columns(store, STUDY_SCHEMA)},"
                f" try(json_extract(report, '$.schema_version'))::VARCHAR AS {_VERSION}"
                " FROM study_runs ORDER BY run_key"
            ).to_arrow_table()
        except duckdb.Error as exc:
            raise StoreError(f"{path}: not a study store (arb-audit ingest makes one): {exc}") from exc
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    version = pl.col(_VERSION)
    older = pl.col("report").is_not_null() & (version.fill_null("") != str(SCHEMA_VERSION))
    why = (
        pl.when(version.is_null())
        .then(pl.lit("its stored audit is not an audit's JSON"))
        .otherwise(pl.concat_str(pl.lit("its stored audit is of schema version "), version))
    )
    frame = frame.with_columns(
        pl.when(older)
        .then(pl.concat_str(why, pl.lit(f", not {SCHEMA_VERSION}: ingest it again to audit it anew")))
        .otherwise(pl.col("error"))
        .alias("error"),
        *(pl.when(older).then(None).otherwise(pl.col(c)).alias(c) for c in AUDIT_COLUMNS),
    )
    return frame.drop(_VERSION).cast(STUDY_SCHEMA)


def older_audits(study: pl.DataFrame) -> list[str]:
    """Return the run keys of ``study``'s rows (:func:`load_study`) that hold an audit of another version.

    They are the rows with a stored audit that are not audited all the same.
    """
    return study.filter(pl.col("error").is_not_null() & pl.col("report").is_not_null())["run_key"].to_list()


def timeline(report: AuditReport) -> RunTimeline:
    """Copy what the study figures read of an audit into the taxonomy's typed :class:`RunTimeline`."""
    run, route = report.run, report.route
    return RunTimeline(
        started_at=instant(run.started_at),
        agent_launched_at=instant(run.agent_launched_at),
        best_seq=report.best.seq if report.best else None,
        chain_text=route.chain_text,
        submissions=tuple(
            TimedSubmission(
                seq=s.seq,
                status=s.status,
                score=s.score,
                requested_at=instant(s.requested_at),
                completed_at=instant(s.completed_at),
                artifact_path=s.artifact_path,
            )
            for s in report.submissions
        ),
        lineage={
            path: tuple(TimelineStep(step.kind, step.label) for step in steps)
            for path, steps in (route.lineage or {}).items()
        },
    )


def figure_data(study: pl.DataFrame) -> FigureData:
    """Return what the study figures draw from: ``study`` (:func:`load_study`) and each run's timeline.

    Each row with an audit of this schema version is read back through
    :class:`arb_audit.schema.AuditReport` (a row of another version already has an ``error``). One whose
    audit does not validate has no timeline: its run key is in ``unreadable``, the rest go on.
    """
    timelines = {}
    unreadable = []
    audited = study.filter(pl.col("error").is_null() & pl.col("report").is_not_null())
    for key, text in audited.select("run_key", "report").iter_rows():
        try:
            report = AuditReport.model_validate_json(text)
        except ValueError:  # pydantic's ValidationError is one
            unreadable.append(key)
            continue
        timelines[key] = timeline(report)
    return FigureData(study, timelines, tuple(unreadable))
