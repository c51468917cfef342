"""The evidence list of a run: one row per pointer, with the claim it backs."""

from __future__ import annotations

from typing import ClassVar

from arb_audit.tui.evidence import EvidenceItem
from arb_audit.tui.widgets.line_table import LineTable

MAX_EXCERPT_CHARS = 80


class EvidenceTable(LineTable):
    """Every pointer of the audit; selecting one opens it."""

    HEADERS: ClassVar[tuple[str, ...]] = ("claim", "kind", "where", "excerpt")

    def show(self, items: list[EvidenceItem]) -> None:
        """Replace the rows with ``items``."""
        rows = []
        for item in items:
            excerpt = " ".join(item.pointer.excerpt.split())
            if len(excerpt) > MAX_EXCERPT_CHARS:
                excerpt = excerpt[: MAX_EXCERPT_CHARS - 1] + "…"
            rows.append((item.claim, item.kind, item.where, excerpt))
        self.set_rows(rows)
