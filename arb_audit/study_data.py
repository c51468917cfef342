"""A study's facts as flat tables for analysts: runs, submissions, lineage stages and commands.

The paper tables (:mod:`arb_audit.taxonomy.tables`) aggregate; these keep one row per fact, so a paper's
own analysis in polars, pandas or DuckDB needs no JSON digging. Each table's columns and types come from
the audit's schema (:mod:`arb_audit.schema`): a column is a field of a schema part, its polars type
the field's type, so the tables cannot drift from what ``--json`` prints. Each run's stored audit is
read back through :class:`~arb_audit.schema.AuditReport`; one that does not validate (made by an older
arb-audit, or edited) is left out and counted, never misread.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ValidationError

from arb_audit.schema import AuditReport, Command, Metrics, Run, Stage, Submission

KEY_COLUMNS = {"run_key": pl.String(), "run_id": pl.String()}
"""Every data table starts with the run's key in the study and its id."""


def polars_type(annotation: object) -> pl.DataType:
    """Return the polars type of a schema field's annotation (a nested part is kept as JSON text)."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return polars_type(args[0]) if len(args) == 1 else pl.String()
    if typing.get_origin(annotation) is Literal:
        return pl.String()
    if typing.get_origin(annotation) is list and args:
        scalar = args[0] in (str, int, float, bool) or typing.get_origin(args[0]) is Literal
        return pl.List(polars_type(args[0])) if scalar else pl.String()
    simple: dict[object, pl.DataType] = {
        bool: pl.Boolean(),
        int: pl.Int64(),
        float: pl.Float64(),
        str: pl.String(),
    }
    return simple.get(annotation, pl.String())


def _fields(model: type[BaseModel], skip: Sequence[str] = (), prefix: str = "") -> dict[str, pl.DataType]:
    return {
        f"{prefix}{name}": polars_type(field.annotation)
        for name, field in model.model_fields.items()
        if name not in skip
    }


def _value(value: Any, dtype: pl.DataType) -> Any:
    """Return a field's value as its column holds it (a nested part as JSON text)."""
    if dtype == pl.String() and isinstance(value, dict | list | BaseModel):
        data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        return json.dumps(data, ensure_ascii=False, sort_keys=True)
    return value


@dataclass(frozen=True, slots=True)
class DataTable:
    """One data table: its name (``arb-audit export --table``), what a row is, its columns and rows."""

    name: str
    """The name ``--table`` takes."""
    row: str
    """What one row is, one sentence."""
    schema: dict[str, pl.DataType]
    """Its columns and their types (key columns first)."""
    rows: Callable[[str, AuditReport], Iterator[dict[str, Any]]]
    """The rows of one run's audit (without the key columns)."""


SUBMISSION_SKIP = ("evidence",)
COMMAND_SKIP = ("evidence",)
STAGE_SKIP = ("evidence", "weights")
RUN_SKIP = ("store_path", "revisions_path")


def _run_rows(key: str, report: AuditReport) -> Iterator[dict[str, Any]]:
    run = report.run.model_dump(mode="json")
    facts = {name: run.get(name) for name in Run.model_fields if name not in RUN_SKIP}
    metrics = report.metrics.model_dump(mode="json")
    best, route, failure, quadrant = report.best, report.route, report.failure, report.quadrant
    yield {
        **facts,
        **metrics,
        "best_seq": best.seq if best else None,
        "best_score": best.score if best else None,
        "route_label": route.best_label,
        "chain": route.chain_text,
        "route_strength": route.strength,
        "written": route.written,
        "attempted": route.attempted,
        "adopted": route.adopted,
        "failure": failure.mode,
        "failure_determined": failure.determined,
        "score_up": quadrant.score_up,
        "intended": quadrant.intended,
        "quadrant": quadrant.cell,
        "flags": sorted({f.flag for f in report.flags}),
    }


def _submission_rows(key: str, report: AuditReport) -> Iterator[dict[str, Any]]:
    best = report.best.seq if report.best else None
    for s in report.submissions:
        yield {
            **{n: getattr(s, n) for n in Submission.model_fields if n not in SUBMISSION_SKIP},
            "best": s.seq == best,
        }


def _stage_rows(key: str, report: AuditReport) -> Iterator[dict[str, Any]]:
    best = report.best.artifact_path if report.best else None
    for artifact, steps in (report.route.lineage or {}).items():
        for number, step in enumerate(steps, 1):
            weights = step.weights
            yield {
                "lineage_of": artifact,
                "step": number,
                "in_best": artifact == best,
                **{n: getattr(step, n) for n in Stage.model_fields if n not in STAGE_SKIP},
                "weights_compared": weights.compared if weights else None,
                "weights_changed": weights.changed if weights else None,
                "max_rel_change": weights.max_rel_change if weights else None,
            }


def _command_rows(key: str, report: AuditReport) -> Iterator[dict[str, Any]]:
    for c in report.commands:
        yield {n: getattr(c, n) for n in Command.model_fields if n not in COMMAND_SKIP}


_RUN_SCHEMA = {
    **{k: v for k, v in _fields(Run).items() if k not in RUN_SKIP},
    **_fields(Metrics),
    "best_seq": pl.Int64(),
    "best_score": pl.Float64(),
    "route_label": pl.String(),
    "chain": pl.String(),
    "route_strength": pl.String(),
    "written": pl.List(pl.String()),
    "attempted": pl.List(pl.String()),
    "adopted": pl.List(pl.String()),
    "failure": pl.String(),
    "failure_determined": pl.Boolean(),
    "score_up": pl.Boolean(),
    "intended": pl.Boolean(),
    "quadrant": pl.String(),
    "flags": pl.List(pl.String()),
}
_RUN_SCHEMA.pop("run_id")

DATA_TABLES: dict[str, DataTable] = {
    t.name: t
    for t in (
        DataTable(
            "runs", "one audited run: its facts, metrics, route, failure and quadrant", _RUN_SCHEMA, _run_rows
        ),
        DataTable(
            "submissions",
            "one attempt at the grading API",
            {**_fields(Submission, SUBMISSION_SKIP), "best": pl.Boolean()},
            _submission_rows,
        ),
        DataTable(
            "stages",
            "one step of a scored artifact's lineage, base first",
            {
                "lineage_of": pl.String(),
                "step": pl.Int64(),
                "in_best": pl.Boolean(),
                **_fields(Stage, STAGE_SKIP),
                "weights_compared": pl.Int64(),
                "weights_changed": pl.Int64(),
                "max_rel_change": pl.Float64(),
            },
            _stage_rows,
        ),
        DataTable("commands", "one command the agent ran", _fields(Command, COMMAND_SKIP), _command_rows),
    )
}
"""Every data table ``arb-audit export`` writes (CSV, Parquet or Markdown)."""


@dataclass(frozen=True, slots=True)
class DataExport:
    """A data table's rows, and the runs left out because their stored audit did not read back."""

    frame: pl.DataFrame
    """The table."""
    unreadable: list[str]
    """Run keys whose audit does not validate against this schema (ingest them again)."""


def data_table(name: str, study: pl.DataFrame) -> DataExport:
    """Compute data table ``name`` from a study frame (``load_study``); a KeyError lists the tables."""
    if name not in DATA_TABLES:
        raise KeyError(f"no data table {name!r} (there are: {', '.join(DATA_TABLES)})")
    spec = DATA_TABLES[name]
    schema = {**KEY_COLUMNS, **spec.schema}
    rows: list[dict[str, Any]] = []
    unreadable: list[str] = []
    # every stored audit is validated: one of another schema version (load_study marks it not audited)
    # is named among the unreadable, never read as this version's
    for key, text in study.filter(pl.col("report").is_not_null()).select("run_key", "report").iter_rows():
        try:
            report = AuditReport.model_validate_json(text or "")
        except (ValidationError, ValueError):
            unreadable.append(key)
            continue
        for row in spec.rows(key, report):
            full = {"run_key": key, "run_id": report.run.run_id, **row}
            rows.append({column: _value(full.get(column), dtype) for column, dtype in schema.items()})
    return DataExport(pl.DataFrame(rows, schema=pl.Schema(schema)), unreadable)
