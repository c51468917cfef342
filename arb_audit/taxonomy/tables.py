"""The study tables of a paper, declared as data and computed with polars from a study's runs.

Each table is a :class:`TableSpec` (its columns, how each is formatted, which value is best) and a
function from the study frame (``arb_audit.study.load_study``) to a polars DataFrame with those
columns. Use them directly::

    from arb_audit.study import load_study
    from arb_audit.taxonomy import tables

    frame = tables.cells(load_study("study.duckdb"))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from arb_audit.taxonomy.failures import FAILURE_MODES, QuadrantCell
from arb_audit.taxonomy.labels import DEFAULT_LABELS
from arb_audit.taxonomy.routes import ROUTE_LABELS, literal_names

QUADRANT_CELLS = literal_names(QuadrantCell)
"""The four cells of score-up × intended training, in the order the tables show them."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table."""

    name: str
    """Its name in the DataFrame (and in CSV and Parquet)."""
    header: str
    """Its header in LaTeX and Markdown."""
    kind: str = "text"
    """``text``, ``int``, ``score`` (one decimal), ``ratio`` (two decimals), ``share`` (percent) or
    ``minutes`` (seconds shown in minutes)."""
    best: str | None = None
    """``max`` or ``min``: the best value of the column is marked (``--bold`` says whether ties are)."""
    vocab: str | None = None
    """The vocabulary its values are identifiers of (``route``, ``failure``, ``chain``, ...,
    :data:`arb_audit.taxonomy.labels.VOCABULARIES`): LaTeX and Markdown print their display names."""
    key: bool = False
    """Whether it identifies the row: a table split to fit repeats it in every part."""
    short: str | None = None
    """A shorter header a table too wide for its column may print, explained in the caption."""
    named: str | None = None
    """The vocabulary the column's own name is an identifier of: its header and short header are that
    name's display name and short form (so ``--labels`` renames them too)."""


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table: its name (``--table``), caption and columns."""

    name: str
    """The name ``arb-audit export --table`` takes."""
    caption: str
    """What it shows, one sentence."""
    columns: tuple[Column, ...]
    """Its columns, in order."""
    compute: Callable[[pl.DataFrame], pl.DataFrame]
    """Study frame → the table's rows."""


def _audited(study: pl.DataFrame) -> pl.DataFrame:
    """Keep the runs that have an audit (a run whose ingestion failed counts only where it says so)."""
    return study.filter(pl.col("error").is_null())


def _stack(frame: pl.DataFrame) -> pl.DataFrame:
    """Add ``stack``: scaffold × driver, ``—`` for an unknown half."""
    return frame.with_columns(
        stack=pl.concat_str(pl.col("scaffold").fill_null("—"), pl.lit(" × "), pl.col("driver").fill_null("—"))
    )


CELL_COLUMNS = ("task", "level", "scaffold", "driver", "mode", "seed")
"""What identifies a cell of a study (a task under one stack, mode and seed)."""


def cells(study: pl.DataFrame) -> pl.DataFrame:
    """One row per cell: base and best score, Δ, submissions, valid rate, times, best chain, quadrant.

    ``stack`` (scaffold × driver) is what LaTeX and Markdown print for the two.

    Where several runs share a cell, the best score is the best of them and the chain and quadrant
    are the best run's; counts add up and rates average. A run that could not be audited keeps its
    cell, empty.
    """
    frame = study.sort(["best_score", "run_key"], descending=[True, False], nulls_last=True)
    return (
        frame.group_by(CELL_COLUMNS, maintain_order=True)
        .agg(
            runs=pl.len(),
            base_score=pl.col("base_score").drop_nulls().first(),
            best_score=pl.col("best_score").max(),
            submissions=pl.when(pl.col("n_submissions").is_not_null().any()).then(
                pl.col("n_submissions").sum()
            ),
            valid_rate=pl.col("valid_rate").mean(),
            time_to_first_valid_min=pl.col("time_to_first_valid_s").min() / 60,
            time_to_best_min=pl.col("time_to_best_s").first() / 60,
            chain=pl.col("chain").first(),
            quadrant=pl.col("quadrant").first(),
        )
        .with_columns(delta=pl.col("best_score") - pl.col("base_score"))
        .pipe(_stack)
        .select(
            *CELL_COLUMNS,
            "stack",
            "runs",
            "base_score",
            "best_score",
            "delta",
            "submissions",
            "valid_rate",
            "time_to_first_valid_min",
            "time_to_best_min",
            "chain",
            "quadrant",
        )
        .sort(["task", "level", "scaffold", "driver", "mode", "seed"], nulls_last=True)
    )


STAGES = ("written", "attempted", "adopted")


def routes(study: pl.DataFrame) -> pl.DataFrame:
    """Per task level, scaffold and route label: in how many cells it was written, attempted, adopted.

    Written counts every cell whose code holds the route (whether it ran or not); attempted, the cells
    where a command ran it; adopted, the cells whose best lineage holds it.
    """
    frame = _audited(study).with_columns(written=pl.concat_list(*STAGES))
    long = pl.concat(
        [
            frame.select(*CELL_COLUMNS, stage=pl.lit(stage), route=pl.col(stage)).explode("route")
            for stage in STAGES
        ]
    )
    counts = (
        long.drop_nulls("route")
        .unique()
        .group_by("level", "scaffold", "route", "stage")
        .len()
        .pivot(on="stage", index=["level", "scaffold", "route"], values="len")
    )
    order = {d.name: i for i, d in enumerate(ROUTE_LABELS)}
    return (
        counts.with_columns(
            *(pl.col(s).fill_null(0) if s in counts.columns else pl.lit(0).alias(s) for s in STAGES)
        )
        .with_columns(pl.col(s).cast(pl.Int64) for s in STAGES)
        .with_columns(order=pl.col("route").replace_strict(order, default=len(order)))
        .sort(["level", "scaffold", "order", "route"], nulls_last=True)
        .select("level", "scaffold", "route", *STAGES)
    )


def failures(study: pl.DataFrame) -> pl.DataFrame:
    """Failure modes by task and by stack (scaffold × driver): counts and shares within each group.

    A run that could not be audited counts as ``not_audited``; an undetermined failure as
    ``undetermined``.
    """
    frame = _stack(study).with_columns(
        failure=pl.when(pl.col("error").is_not_null())
        .then(pl.lit("not_audited"))
        .otherwise(pl.col("failure").fill_null("undetermined"))
    )
    order = {d.name: i for i, d in enumerate(FAILURE_MODES)}
    parts = []
    for by, column in (("task", "task"), ("stack", "stack")):
        parts.append(
            frame.with_columns(by=pl.lit(by), group=pl.col(column).fill_null("—"))
            .group_by("by", "group", "failure")
            .len("runs")
            .with_columns(share=pl.col("runs") / pl.col("runs").sum().over("by", "group"))
        )
    return (
        pl.concat(parts)
        .with_columns(order=pl.col("failure").replace_strict(order, default=len(order)))
        .sort(["by", "group", "order", "failure"])
        .select("by", "group", "failure", pl.col("runs").cast(pl.Int64), "share")
    )


def quadrants(study: pl.DataFrame) -> pl.DataFrame:
    """Count the four cells of score-up × intended training by task and stack."""
    frame = _stack(_audited(study)).with_columns(quadrant=pl.col("quadrant").fill_null("undetermined"))
    columns = (*QUADRANT_CELLS, "undetermined")
    counted = frame.group_by("task", "stack").agg(
        *(pl.col("quadrant").eq(cell).sum().cast(pl.Int64).alias(cell) for cell in columns)
    )
    return counted.sort(["task", "stack"], nulls_last=True).select("task", "stack", *columns)


def flags(study: pl.DataFrame) -> pl.DataFrame:
    """Each integrity flag raised: how many runs, and which (their run ids, sorted)."""
    frame = (
        _audited(study)
        .select("run_key", pl.col("run_id").fill_null(pl.col("run_key")), "flags")
        .explode("flags")
    )
    # Runs are counted by their folder: recordings of several runs may share a run id.
    return (
        frame.drop_nulls("flags")
        .unique(["run_key", "flags"])
        .group_by(flag="flags")
        .agg(runs=pl.len().cast(pl.Int64), run_ids=pl.col("run_id").unique().sort().str.join(", "))
        .sort("flag")
    )


TABLES: dict[str, TableSpec] = {
    t.name: t
    for t in (
        TableSpec(
            "cells",
            "Per cell: base and best score, submissions, timing, and the best submission's route",
            (
                Column("task", "Task", key=True),
                Column("level", "Level", "int", key=True, short="L"),
                Column("stack", "Stack", key=True),
                Column("mode", "Mode", key=True),
                Column("seed", "Seed", key=True),
                Column("runs", "Runs", "int"),
                Column("base_score", "Base score", "score"),
                Column("best_score", "Best score", "score", best="max"),
                Column("delta", "Δ score", "score", best="max"),
                Column("submissions", "Submissions", "int", short="Subm."),
                Column("valid_rate", "Valid rate", "ratio", best="max"),
                Column("time_to_first_valid_min", "First valid (min)", "minutes", best="min"),
                Column("time_to_best_min", "Best at (min)", "minutes"),
                Column("chain", "Best route", vocab="chain"),
                Column("quadrant", "Quadrant", vocab="quadrant"),
            ),
            cells,
        ),
        TableSpec(
            "routes",
            "Route labels: in how many cells each was written, attempted and adopted",
            (
                Column("level", "Level", "int", key=True, short="L"),
                Column("scaffold", "Scaffold", key=True),
                Column("route", "Route", vocab="route", key=True),
                Column("written", "Written", "int"),
                Column("attempted", "Attempted", "int"),
                Column("adopted", "Adopted", "int"),
            ),
            routes,
        ),
        TableSpec(
            "failures",
            "Failure modes by task and by stack (scaffold × driver)",
            (
                Column("by", "By", vocab="group", key=True),
                Column("group", "Group", key=True),
                Column("failure", "Failure mode", vocab="failure", key=True),
                Column("runs", "Runs", "int"),
                Column("share", "Share", "share"),
            ),
            failures,
        ),
        TableSpec(
            "quadrants",
            "Score up beyond noise × intended training adopted, by task and stack",
            (
                Column("task", "Task", key=True),
                Column("stack", "Stack", key=True),
                *(
                    Column(c, DEFAULT_LABELS.name("quadrant", c), "int", named="quadrant")
                    for c in (*QUADRANT_CELLS, "undetermined")
                ),
            ),
            quadrants,
        ),
        TableSpec(
            "flags",
            "Integrity flags raised, with the runs behind each",
            (
                Column("flag", "Flag", vocab="flag", key=True),
                Column("runs", "Runs", "int"),
                Column("run_ids", "Run ids"),
            ),
            flags,
        ),
    )
}
"""Every table ``arb-audit export`` makes."""


def table(name: str, study: pl.DataFrame) -> pl.DataFrame:
    """Compute table ``name`` from a study frame; a KeyError lists the tables there are."""
    if name not in TABLES:
        raise KeyError(f"no table {name!r} (there are: {', '.join(TABLES)})")
    return TABLES[name].compute(study)
