"""A file at a revision with the cited lines highlighted, or the diff between two of its versions."""

from __future__ import annotations

import difflib

from rich.syntax import Syntax
from textual.widgets import Static

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


class CodeView(Static):
    """Code with line numbers; the cited lines highlighted."""

    def show_code(self, text: str, path: str, lines: tuple[int, int] | None) -> None:
        """Show ``text`` (the file ``path``) with ``lines`` (first, last; 1-based) highlighted."""
        highlighted = set(range(lines[0], lines[1] + 1)) if lines else set()
        self.update(
            Syntax(
                text,
                lexer_for(path),
                theme=THEME,
                line_numbers=True,
                highlight_lines=highlighted,
                word_wrap=False,
            )
        )

    def show_diff(self, diff: str) -> None:
        """Show a unified diff (or say that the versions are the same)."""
        self.update(Syntax(diff or "(no difference)\n", "diff", theme=THEME, word_wrap=False))

    def show_text(self, text: str) -> None:
        """Show plain text (a command's output, a log excerpt)."""
        self.update(Syntax(text, "text", theme=THEME, word_wrap=True))
