"""The verdict table of a run: each field with the analyzer's value, this reviewer's and the others'."""

from __future__ import annotations

import polars as pl
from rich.text import Text
from textual.widgets import DataTable

HIDDEN = "(hidden until you rule)"
"""What blind review shows in place of a value."""


class FieldTable(DataTable[Text]):
    """One row per review field (``taxonomy.review.FIELDS``)."""

    def on_mount(self) -> None:
        """Lay out the columns."""
        self.cursor_type = "row"
        self.add_columns("field", "analyzer", "yours", "note", "other reviewers")

    def show(
        self,
        fields: tuple[str, ...],
        analyzer: dict[str, str | None],
        standing: pl.DataFrame,
        reviewer: str,
        visible: dict[str, bool],
    ) -> None:
        """Fill the rows, one per field.

        ``standing`` holds every reviewer's standing verdicts on the run, ``visible`` whether each
        field's analyzer and other values may be shown (blind review).
        """
        cursor = self.cursor_row
        self.clear()
        mine = {r["field"]: r for r in standing.iter_rows(named=True) if r["reviewer"] == reviewer}
        for name in fields:
            others = [
                f"{r['reviewer']}: {r['value']}"
                for r in standing.iter_rows(named=True)
                if r["field"] == name and r["reviewer"] != reviewer
            ]
            shown = visible[name]
            own = mine.get(name)
            row = (
                name,
                (analyzer.get(name) or "—") if shown else HIDDEN,
                own["value"] if own else "",
                (own["note"] or "") if own else "",
                ("; ".join(others) or "—") if shown else HIDDEN,
            )
            # Text, not str: a DataTable reads a str cell as markup, and a reviewer's note is not markup
            self.add_row(*(Text(c) for c in row), key=name)
        self.move_cursor(row=min(cursor, len(fields) - 1))
