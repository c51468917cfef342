"""A table of text, one line per row, drawn only where it is visible; a cursor picks a row.

Textual's ``DataTable`` renders each cell through rich with its own caches, which every change
throws away: re-filling the twelve rows of the verdict table after a verdict took some 35 ms, and
5,000 runs took seconds (benchmarks/bench_review.py). The desk's tables show text only; this one
draws a row as one segment, from cells already laid out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

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

from arb_audit.inert import inert

GAP = 2
"""Spaces between columns."""
LINE_BREAKS = r"[\t\n\r]"
"""Control characters shown as a space: a cell is one line."""
_LINE_BREAKS = re.compile(LINE_BREAKS)


def plain(text: str) -> str:
    r"""Return ``text`` on one line: tabs and line breaks as spaces, the rest made inert (shown escaped).

    An agent's text may hold terminal escapes: :func:`arb_audit.inert.inert` shows each as ``\x1b``.
    """
    return inert(_LINE_BREAKS.sub(" ", text))


class LineTable(ScrollView, can_focus=True):
    """Rows of text cells under a header line; enter selects the row under the cursor."""

    HEADERS: ClassVar[tuple[str, ...]] = ()
    """The column headers."""
    COMPONENT_CLASSES: ClassVar[set[str]] = {"line-table--header", "line-table--cursor", "line-table--odd"}
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
        """The reviewer chose a row (enter, or a second click)."""

        def __init__(self, table: LineTable, row: int) -> None:
            super().__init__()
            self.table = table
            """The table."""
            self.row = row
            """The row chosen."""

        @property
        def control(self) -> LineTable:
            """The table (so that ``@on(..., "#id")`` selects by the table's id)."""
            return self.table

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 -- Textual's widget keyword
        super().__init__(id=id)
        self.rows: list[tuple[str, ...]] = []
        """Each row's cells (what :meth:`set_rows` was given, control characters shown as ``�``)."""
        self.widths = [cell_len(h) for h in self.HEADERS]
        """Each column's width."""

    @property
    def row_count(self) -> int:
        """How many rows are listed."""
        return len(self.rows)

    def row_at(self, index: int) -> tuple[str, ...]:
        """Return the cells shown on row ``index``."""
        return self.rows[index]

    def set_rows(self, rows: Sequence[tuple[str, ...]]) -> None:
        """Replace the rows; the columns fit them and the cursor stays where it was (within them)."""
        self.rows = [tuple(plain(c) for c in row) for row in rows]
        self.widths = [
            max([cell_len(h), *(cell_len(row[i]) for row in self.rows)]) for i, h in enumerate(self.HEADERS)
        ]
        self.rows_changed()
        self.move_cursor(self.cursor_row)

    def rows_changed(self) -> None:
        """Size the scrolled area to the rows and redraw (after the rows or the widths changed)."""
        self.virtual_size = Size(sum(self.widths) + GAP * len(self.widths), self.row_count + 1)
        self.refresh()

    def _line(self, row: tuple[str, ...]) -> str:
        return "".join(c + " " * (w - cell_len(c) + GAP) for c, w in zip(row, self.widths, strict=True))

    def render_line(self, y: int) -> Strip:
        """Draw line ``y`` of the widget: the header, then the rows scrolled into view."""
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        if y == 0:
            text, style = self._line(self.HEADERS), self.get_component_rich_style("line-table--header")
        else:
            row = scroll_y + y - 1
            if row >= self.row_count:
                return Strip.blank(width, self.rich_style)
            text = self._line(self.row_at(row))
            if row == self.cursor_row:
                style = self.get_component_rich_style("line-table--cursor")
            else:
                style = self.get_component_rich_style("line-table--odd") if row % 2 else Style()
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
        """Put the cursor on ``row`` (clamped to the rows)."""
        self.cursor_row = max(0, min(row, self.row_count - 1))

    def action_move(self, delta: int) -> None:
        """Move the cursor by ``delta`` rows."""
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, delta: int) -> None:
        """Move the cursor by ``delta`` screens."""
        self.move_cursor(self.cursor_row + delta * max(1, self.scrollable_content_region.height - 1))

    def action_jump(self, row: int) -> None:
        """Move the cursor to the first (0) or last (-1) row."""
        self.move_cursor(row if row >= 0 else self.row_count - 1)

    def action_select(self) -> None:
        """Choose the row under the cursor."""
        if self.row_count:
            self.post_message(self.Selected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        """Put the cursor on the clicked row (a second click chooses it)."""
        row = self.scroll_offset.y + event.y - 1
        if 0 <= row < self.row_count:
            if row == self.cursor_row and event.chain > 1:
                self.action_select()
            self.move_cursor(row)
