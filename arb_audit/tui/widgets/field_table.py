"""The verdict table of a run: each field with the analyzer's value, this reviewer's and the others'."""

from __future__ import annotations

from typing import ClassVar

import polars as pl

from arb_audit.tui.widgets.line_table import LineTable

HIDDEN = "(hidden until you rule)"
"""What blind review shows in place of a value."""


class FieldTable(LineTable):
    """One row per review field (``arb_audit.taxonomy.review.FIELDS``)."""

    HEADERS: ClassVar[tuple[str, ...]] = ("field", "analyzer", "yours", "note", "other reviewers")

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
        rows = []
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
            rows.append(row)
        self.set_rows(rows)
