"""The runs list: one line per run, drawn only where it is visible.

A study holds thousands of runs; a ``DataTable`` of 5,000 rows took seconds to fill and to size its
columns on every re-sort (benchmarks/bench_review.py). Here every run's cells and the column widths
are computed once, with polars; a re-sort, a filter or a verdict only reorders the keys listed, and
only the lines on screen are drawn (with their tick, and under blind review their hidden labels).
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from rich.cells import cell_len

from arb_audit.inert import UNSAFE, inert
from arb_audit.tui.widgets.line_table import LINE_BREAKS, LineTable

HEADERS = ("✓", "run", "task", "stack", "best", "route", "failure", "quadrant", "flags")
"""The list's columns (✓: this reviewer has recorded a verdict on the run)."""
HIDDEN = "·"
"""An analyzer label a blind reviewer has not ruled on yet."""
MAX_KEY_CHARS = 48
"""A run key (a folder path) is shown by its end, where the runs differ."""


def cells(runs: pl.DataFrame) -> pl.DataFrame:
    """Return the list's cells as text, one column per header but ✓, computed column-wise."""
    key = pl.col("run_key")
    dash = pl.lit("—")
    laid_out = runs.select(
        pl.when(key.str.len_chars() <= MAX_KEY_CHARS)
        .then(key)
        .otherwise(pl.lit("…") + key.str.slice(-(MAX_KEY_CHARS - 1)))
        .alias("run"),
        pl.col("task").fill_null("—"),
        pl.format("{} × {}", pl.col("scaffold").fill_null("—"), pl.col("driver").fill_null("—")).alias(
            "stack"
        ),
        pl.col("best_score").round(1).cast(pl.String).fill_null("—").alias("best"),
        pl.coalesce(
            pl.col("chain"),
            pl.col("route_label"),
            pl.when(pl.col("error").is_not_null()).then(pl.lit("(error)")).otherwise(dash),
        ).alias("route"),
        pl.col("failure").fill_null("—"),
        pl.col("quadrant").fill_null("—"),
        pl.col("flags").list.join(", ").fill_null("").alias("flags"),
    )
    one_line = laid_out.with_columns(pl.all().str.replace_all(LINE_BREAKS, " "))
    # agent-written names may hold terminal escapes: a column holding any is made inert cell by cell
    unsafe = [name for name in one_line.columns if one_line[name].str.contains(UNSAFE.pattern).any()]
    return one_line.with_columns(pl.col(name).map_elements(inert, return_dtype=pl.String) for name in unsafe)


def blinded(
    run_key: str, row: tuple[str, ...], flags: list[str], ruled: set[tuple[str, str]]
) -> tuple[str, ...]:
    """Return ``row`` (✓ first) with the analyzer's labels the reviewer has not ruled on as :data:`HIDDEN`.

    The route column shows the chain, and a chain tells its route label: it shows once both are ruled.
    A flag shows once ruled on; with none shown the column is hidden.
    """
    tick, run, task, stack, best, route, failure, quadrant, _ = row
    seen = {f for k, f in ruled if k == run_key}
    shown_flags = [f for f in flags if f"flag:{f}" in seen]
    return (
        tick,
        run,
        task,
        stack,
        best,
        route if {"route", "chain"} <= seen else HIDDEN,
        failure if "failure" in seen else HIDDEN,
        quadrant if "quadrant" in seen else HIDDEN,
        ", ".join(shown_flags) or HIDDEN,
    )


class RunsTable(LineTable):
    """The runs of the session, in the order and under the filter the runs screen chose."""

    HEADERS: ClassVar[tuple[str, ...]] = HEADERS

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 -- Textual's widget keyword
        super().__init__(id=id)
        self.keys: list[str] = []
        """The run key of each row, in the order listed."""
        self._cells: dict[str, tuple[str, ...]] = {}
        self._flags: dict[str, list[str]] = {}
        self._reviewed: set[str] = set()
        self._ruled: set[tuple[str, str]] | None = None

    @property
    def row_count(self) -> int:
        """How many runs are listed."""
        return len(self.keys)

    def load(self, runs: pl.DataFrame) -> None:
        """Work out every run's cells and the columns' widths, once for the session's runs.

        Re-sorting, filtering and ticking a run then only reorder keys; the widths fit every run, so
        the columns stay put whatever is listed (under blind review they also fit the hidden labels).
        """
        table = cells(runs)
        keys = runs["run_key"].to_list()
        self._cells = dict(zip(keys, table.rows(), strict=True))
        self._flags = dict(zip(keys, [f or [] for f in runs["flags"].to_list()], strict=True))
        self.widths = [cell_len(HEADERS[0])] + [
            max([cell_len(h), cell_len(HIDDEN), *(cell_len(v) for v in table[name].unique().to_list())])
            for h, name in zip(HEADERS[1:], table.columns, strict=True)
        ]

    def row(self, run_key: str) -> tuple[str, ...]:
        """Return the cells of the run ``run_key`` as shown (KeyError when it is not listed)."""
        if run_key not in self.keys:
            raise KeyError(run_key)
        return self._shown(run_key)

    def row_at(self, index: int) -> tuple[str, ...]:
        """Return the cells shown on row ``index``: its tick, and under blind review its hidden labels."""
        return self._shown(self.keys[index])

    def _shown(self, run_key: str) -> tuple[str, ...]:
        row = ("✓" if run_key in self._reviewed else " ", *self._cells[run_key])
        if self._ruled is not None:
            return blinded(run_key, row, self._flags[run_key], self._ruled)
        return row

    def show(self, keys: list[str], reviewed: set[str], ruled: set[tuple[str, str]] | None = None) -> None:
        """List the runs ``keys`` (of those loaded), in that order; the cursor goes back to the top.

        ``reviewed`` are ticked. Under blind review ``ruled`` holds the (run, field) pairs the reviewer
        has ruled on: the analyzer's labels of the others are shown as :data:`HIDDEN`.
        """
        self.keys = keys
        self._reviewed, self._ruled = reviewed, ruled
        self.rows_changed()
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False)

    def key_at(self, row: int) -> str:
        """Return the run key listed on ``row``."""
        return self.keys[row]
