"""The evidence list of a run: one row per pointer, with the claim it backs."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable

from tui.evidence import EvidenceItem

MAX_EXCERPT_CHARS = 80


class EvidenceTable(DataTable[Text]):
    """Every pointer of the audit; selecting one opens it."""

    def on_mount(self) -> None:
        """Lay out the columns."""
        self.cursor_type = "row"
        self.add_columns("claim", "kind", "where", "excerpt")

    def show(self, items: list[EvidenceItem]) -> None:
        """Replace the rows with ``items``."""
        self.clear()
        for i, item in enumerate(items):
            excerpt = " ".join(str(item.pointer.get("excerpt") or "").split())
            if len(excerpt) > MAX_EXCERPT_CHARS:
                excerpt = excerpt[: MAX_EXCERPT_CHARS - 1] + "…"
            # Text, not str: a DataTable reads a str cell as markup, and an agent's text is not markup
            self.add_row(*(Text(c) for c in (item.claim, item.kind, item.where, excerpt)), key=str(i))
