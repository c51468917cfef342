"""Patches as agents write them: Codex's ``*** Begin Patch`` format and unified diffs, applied in memory.

A hunk is found by its old lines (context and removals), first exactly, then ignoring trailing and then
surrounding whitespace (as Codex's own applier tolerates), searching forward from the previous hunk.
Line numbers in ``@@`` headers are not trusted: agents write them wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from collectors.transcripts.events import MAX_BODY_CHARS, FileEdit

BEGIN, END = "*** Begin Patch", "*** End Patch"
_FILE_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")
_MOVE = re.compile(r"^\*\*\* Move to: (.+?)\s*$")
_HEREDOC_PATCH = re.compile(r"\*\*\* Begin Patch\n.*?\n\*\*\* End Patch", re.S)


class PatchError(Exception):
    """A patch does not apply; the message says which hunk and why."""


def find_patches(text: str) -> list[str]:
    """Return every ``*** Begin Patch`` … ``*** End Patch`` block in ``text`` (a command, a tool input)."""
    return _HEREDOC_PATCH.findall(text)


def split_apply_patch(text: str) -> list[FileEdit]:
    """Split a ``*** Begin Patch`` text into one edit per file section."""
    edits: list[FileEdit] = []
    current: FileEdit | None = None
    body: list[str] = []

    def close() -> None:
        if current is None:
            return
        joined = "\n".join(body)
        if current.op == "write":
            content = "\n".join(line[1:] for line in body if line.startswith("+"))
            current.content = content + "\n" if body else ""
        elif current.op == "patch":
            current.patch = joined
        current.cut = len(joined) > MAX_BODY_CHARS
        edits.append(current)

    for line in text.splitlines():
        if line.strip() in (BEGIN, END):
            continue
        if header := _FILE_HEADER.match(line):
            close()
            op = {"Add": "write", "Update": "patch", "Delete": "delete"}[header[1]]
            current, body = FileEdit(header[2], op), []  # type: ignore[arg-type]
        elif current is not None and (move := _MOVE.match(line)):
            current.move_to = move[1]
        elif current is not None:
            body.append(line)
    close()
    return edits


def _hunks(patch: str) -> list[tuple[list[str], list[str]]]:
    """Parse hunk text (``@@`` separated; `` ``/``-``/``+`` lines) into (old lines, new lines) pairs."""
    hunks: list[tuple[list[str], list[str]]] = []
    old: list[str] = []
    new: list[str] = []
    for line in patch.splitlines():
        if line.startswith("@@"):
            if old or new:
                hunks.append((old, new))
            old, new = [], []
        elif line.startswith(("--- ", "+++ ", "diff --git", "index ", "*** End of File", "\\ No newline")):
            continue
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            # A context line; an empty line inside a hunk is an empty context line.
            text = line[1:] if line.startswith(" ") else line
            old.append(text)
            new.append(text)
    if old or new:
        hunks.append((old, new))
    return hunks


_LOOSENESS: tuple[Callable[[str], str], ...] = (lambda s: s, str.rstrip, str.strip)


def _find(lines: list[str], wanted: list[str], start: int) -> int | None:
    """Index where ``wanted`` occurs in ``lines`` at or after ``start`` (then anywhere), or None."""
    if not wanted:
        return start
    for norm in _LOOSENESS:
        target = [norm(w) for w in wanted]
        for origin in (start, 0):
            for i in range(origin, len(lines) - len(wanted) + 1):
                if norm(lines[i]) == target[0] and [norm(x) for x in lines[i : i + len(wanted)]] == target:
                    return i
    return None


def apply_patch(content: str, patch: str) -> str:
    """Apply the hunks of ``patch`` to ``content``; raise :class:`PatchError` when a hunk is not found."""
    lines = content.split("\n")
    trailing_newline = content.endswith("\n")
    if trailing_newline:
        lines.pop()
    position = 0
    for number, (old, new) in enumerate(_hunks(patch), 1):
        at = _find(lines, old, position)
        if at is None:
            shown = next((line for line in old if line.strip()), "")
            raise PatchError(f"hunk {number} not found (its first line: {shown[:80]!r})")
        lines[at : at + len(old)] = new
        position = at + len(new)
    return "\n".join(lines) + ("\n" if trailing_newline or not lines else "")
