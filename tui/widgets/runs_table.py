"""The runs list: one line per run, drawn only where it is visible.

A study holds thousands of runs; a ``DataTable`` of 5,000 rows took seconds to fill and to size its
columns on every re-sort (benchmarks/bench_review.py). Here the cells are computed with polars, the
column widths once per fill, and only the lines on screen are drawn.
"""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

HEADERS = ("✓", "run", "task", "stack", "best", "route", "failure", "quadrant", "flags")
"""The list's columns (✓: this reviewer has recorded a verdict on the run)."""
HIDDEN = "·"
"""An analyzer label a blind reviewer has not ruled on yet."""
MAX_KEY_CHARS = 48
"""A run key (a folder path) is shown by its end, where the runs differ."""
GAP = 2
"""Spaces between columns."""


def _blinded(runs: pl.DataFrame, ruled: set[tuple[str, str]]) -> pl.DataFrame:
    """Hide the analyzer's route, chain, failure, quadrant and flags of each run where not ruled on.

    The route column shows the chain, and a chain tells its route label: it shows once both are ruled.
    """
    key = pl.col("run_key")
    seen = {
        name: sorted(k for k, f in ruled if f == name) for name in ("route", "chain", "failure", "quadrant")
    }
    hidden = [
        pl.when(key.is_in(seen[name])).then(pl.col(name)).otherwise(pl.lit(HIDDEN)).alias(name)
        for name in ("failure", "quadrant")
    ]
    both = key.is_in(seen["chain"]) & key.is_in(seen["route"])
    hidden.append(pl.when(both).then(pl.col("chain")).otherwise(pl.lit(HIDDEN)).alias("chain"))
    hidden.append(pl.when(both).then(pl.col("route_label")).otherwise(pl.lit(HIDDEN)).alias("route_label"))
    flags_seen = {(k, f.removeprefix("flag:")) for k, f in ruled if f.startswith("flag:")}
    flags = pl.struct("run_key", "flags").map_elements(
        lambda r: [f for f in r["flags"] or [] if (r["run_key"], f) in flags_seen] or [HIDDEN],
        return_dtype=pl.List(pl.String()),
    )
    return runs.with_columns(*hidden, flags=flags)


def cells(runs: pl.DataFrame, reviewed: set[str], ruled: set[tuple[str, str]] | None = None) -> pl.DataFrame:
    """Return the list's cells as text, one column per header, computed column-wise.

    Under blind review ``ruled`` holds the (run, field) pairs the reviewer has ruled on: the analyzer's
    labels of the others are shown as :data:`HIDDEN`.
    """
    if ruled is not None:
        runs = _blinded(runs, ruled)
    key = pl.col("run_key")
    dash = pl.lit("—")
    return runs.select(
        pl.when(key.is_in(sorted(reviewed))).then(pl.lit("✓")).otherwise(pl.lit(" ")).alias("✓"),
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


class RunsTable(ScrollView, can_focus=True):
    """The runs of the session, in the order and under the filter the runs screen chose."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"runs-table--header", "runs-table--cursor", "runs-table--odd"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", show=False),
        Binding("down", "move(1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "jump(0)", show=False),
        Binding("end", "jump(-1)", show=False),
        Binding("enter", "select", show=False),
    ]
    cursor_row: reactive[int] = reactive(0)
    """The row under the cursor."""

    class Selected(Message):
        """The reviewer chose a run (enter)."""

        def __init__(self, run_key: str) -> None:
            super().__init__()
            self.run_key = run_key
            """The run chosen."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 -- Textual's widget keyword
        super().__init__(id=id)
        self.keys: list[str] = []
        """The run key of each row."""
        self.rows: list[tuple[str, ...]] = []
        """Each row's cells."""
        self.widths = [cell_len(h) for h in HEADERS]

    @property
    def row_count(self) -> int:
        """How many runs are listed."""
        return len(self.rows)

    def row(self, run_key: str) -> tuple[str, ...]:
        """Return the cells of the run ``run_key`` (KeyError when it is not listed)."""
        try:
            return self.rows[self.keys.index(run_key)]
        except ValueError:
            raise KeyError(run_key) from None

    def show(self, runs: pl.DataFrame, reviewed: set[str], ruled: set[tuple[str, str]] | None = None) -> None:
        """Replace the rows with ``runs`` (see :func:`cells`); the cursor goes back to the top."""
        table = cells(runs, reviewed, ruled)
        self.keys = runs["run_key"].to_list()
        self.rows = table.rows()
        self.widths = [
            max([cell_len(h), *(cell_len(v) for v in table[name].unique().to_list())])
            for h, name in zip(HEADERS, table.columns, strict=True)
        ]
        self.virtual_size = Size(sum(self.widths) + GAP * len(self.widths), len(self.rows) + 1)
        self.cursor_row = 0
        self.scroll_to(y=0, animate=False)
        self.refresh()

    def _line(self, row: tuple[str, ...]) -> str:
        return "".join(c + " " * (w - cell_len(c) + GAP) for c, w in zip(row, self.widths, strict=True))

    def render_line(self, y: int) -> Strip:
        """Draw line ``y`` of the widget: the header, then the rows scrolled into view."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            text, style = self._line(HEADERS), self.get_component_rich_style("runs-table--header")
        else:
            row = scroll_y + y - 1
            if row >= len(self.rows):
                return Strip.blank(width, self.rich_style)
            text = self._line(self.rows[row])
            if row == self.cursor_row:
                style = self.get_component_rich_style("runs-table--cursor")
            else:
                style = self.get_component_rich_style("runs-table--odd") if row % 2 else Style()
        return Strip([Segment(text, self.rich_style + style)]).crop_extend(
            scroll_x, scroll_x + width, self.rich_style
        )

    def watch_cursor_row(self, row: int) -> None:
        """Keep the cursor's row in view."""
        _, top = self.scroll_offset
        visible = max(1, self.scrollable_content_region.height - 1)
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + visible:
            self.scroll_to(y=row - visible + 1, animate=False)
        self.refresh()

    def move_cursor(self, row: int) -> None:
        """Put the cursor on ``row`` (clamped to the list)."""
        self.cursor_row = max(0, min(row, len(self.rows) - 1))

    def action_move(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, delta: int) -> None:
        """Move the cursor by ``delta`` screens."""
        self.move_cursor(self.cursor_row + delta * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, row: int) -> None:
        """Move the cursor to the first (0) or last (-1) row."""
        self.move_cursor(row if row >= 0 else len(self.rows) - 1)

    def action_select(self) -> None:
        """Open the run under the cursor."""
        if self.rows:
            self.post_message(self.Selected(self.keys[self.cursor_row]))

    def on_click(self, event: events.Click) -> None:
        """Put the cursor on the clicked run (a second click opens it)."""
        row = self.scroll_offset.y + event.y - 1
        if 0 <= row < len(self.rows):
            if row == self.cursor_row and event.chain > 1:
                self.action_select()
            self.move_cursor(row)
