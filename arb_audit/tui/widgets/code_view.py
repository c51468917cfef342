"""A file at a revision with the cited lines highlighted, or the diff between two of its versions."""

from __future__ import annotations

import difflib

from rich.cells import cell_len
from rich.syntax import Syntax
from textual.widgets import RichLog

from arb_audit.inert import inert_block

THEME = "ansi_dark"
"""Syntax colours from the terminal's own palette (readable on any background, stable in snapshots)."""


def lexer_for(path: str) -> str:
    """Return the syntax-colouring lexer for ``path`` by its suffix (plain text when unknown)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return {
        "py": "python",
        "sh": "bash",
        "yaml": "yaml",
        "yml": "yaml",
        "json": "json",
        "jsonl": "json",
        "toml": "toml",
        "md": "markdown",
    }.get(suffix, "text")


def unified_diff(old: str, new: str, path: str, old_name: str, new_name: str) -> str:
    """Return the unified diff of two versions of ``path`` (empty when they are the same)."""
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{path} @{old_name}",
            tofile=f"{path} @{new_name}",
        )
    )


class CodeView(RichLog):
    """Code with line numbers and the cited lines highlighted, a diff, or plain text; scrolled here.

    A RichLog, not a Static: it renders (and so highlights) the code once when it is shown, where a
    Static re-highlighted it on every layout pass (benchmarks/bench_review.py). Everything shown was
    written by the agent: each public method makes it inert first (:func:`arb_audit.inert.inert_block`),
    and the log runs with markup off.
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 -- Textual's widget keyword
        super().__init__(id=id, wrap=False, highlight=False, markup=False, auto_scroll=False)

    def _show(self, content: Syntax, text: str, wrap: bool = False, first_line: int | None = None) -> None:
        """Render ``content`` once: as wide as its longest line (scrolled sideways), or wrapped."""
        view = self.scrollable_content_region.width or self.min_width
        lines = text.splitlines() or [""]
        gutter = len(str(len(lines))) + 3 if content.line_numbers else 0
        longest = max(cell_len(line.expandtabs(4)) for line in lines) + gutter + 1
        self.clear()
        self.write(content, width=view if wrap else max(view, longest))
        self.call_after_refresh(self.scroll_to, x=0, y=max(0, (first_line or 1) - 5), animate=False)

    def show_code(self, text: str, path: str, lines: tuple[int, int] | None) -> None:
        """Show ``text`` (the file ``path``) with ``lines`` (first, last; 1-based) highlighted."""
        text = inert_block(text)
        count = len(text.splitlines())
        # the range comes from agent-written data: only lines the file has are highlighted
        first, last = (min(lines[0], count + 1), min(lines[1], count)) if lines else (count + 1, count)
        highlighted = set(range(first, last + 1))
        syntax = Syntax(text, lexer_for(path), theme=THEME, line_numbers=True, highlight_lines=highlighted)
        self._show(syntax, text, first_line=first if lines else None)

    def show_diff(self, diff: str) -> None:
        """Show a unified diff (or say that the versions are the same)."""
        diff = inert_block(diff) or "(no difference)\n"
        self._show(Syntax(diff, "diff", theme=THEME), diff)

    def show_text(self, text: str) -> None:
        """Show plain text (a command's output, a log excerpt), wrapped to the view."""
        text = inert_block(text)
        self._show(Syntax(text, "text", theme=THEME, word_wrap=True), text, wrap=True)

    @property
    def text(self) -> str:
        """What is shown, as plain text."""
        return "\n".join(strip.text for strip in self.lines)
