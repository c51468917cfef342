"""Patches as agents write them: Codex's ``*** Begin Patch`` format and unified diffs, applied in memory.

A hunk is found by its old lines (context and removals), first exactly, then ignoring trailing and then
surrounding whitespace (as Codex's own applier tolerates), searching forward from the previous hunk (and
from the line a Codex ``@@ <context>`` header names). Line numbers in unified ``@@ -a,b +c,d @@``
headers are not trusted: agents write them wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from arb_audit.collectors.transcripts.events import MAX_BODY_CHARS, FileEdit

BEGIN, END = "*** Begin Patch", "*** End Patch"
_FILE_HEADER = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+)$")
_MOVE = re.compile(r"^\*\*\* Move to: (.+)$")
_UNIFIED_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


class PatchError(Exception):
    """A patch does not apply; the message says which hunk and why."""


def find_patches(text: str) -> list[str]:
    """Return every ``*** Begin Patch`` … ``*** End Patch`` block in ``text`` (a command, a tool input)."""
    found: list[str] = []
    start: int | None = None
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.strip() == BEGIN:
            start = number
        elif line.strip() == END and start is not None:
            found.append("\n".join(lines[start : number + 1]))
            start = None
    return found


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
            current, body = FileEdit(header[2].strip(), op), []  # type: ignore[arg-type]
        elif current is not None and (move := _MOVE.match(line)):
            current.move_to = move[1].strip()
        elif current is not None:
            body.append(line)
    close()
    return edits


@dataclass(slots=True)
class _Hunk:
    anchor: str
    """The text after ``@@`` in a Codex patch (a line the hunk comes after), or empty."""
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)


def _hunks(patch: str) -> list[_Hunk]:
    """Parse hunk text (``@@`` separated; `` ``/``-``/``+`` lines) into hunks."""
    hunks: list[_Hunk] = []
    current: _Hunk | None = None
    for line in patch.splitlines():
        if line.startswith("@@"):
            anchor = "" if _UNIFIED_HUNK.match(line) else line[2:].strip()
            current = _Hunk(anchor)
            hunks.append(current)
            continue
        if current is None:
            if line.startswith(("--- ", "+++ ", "diff --git", "index ")):
                continue  # a unified diff's file header, before its first hunk
            current = _Hunk("")
            hunks.append(current)
        if line.startswith(("*** End of File", "\\ No newline")):
            continue
        if line.startswith("-"):
            current.old.append(line[1:])
        elif line.startswith("+"):
            current.new.append(line[1:])
        else:
            # A context line; an empty line inside a hunk is an empty context line.
            text = line[1:] if line.startswith(" ") else line
            current.old.append(text)
            current.new.append(text)
    return [h for h in hunks if h.old or h.new]


_LOOSENESS: tuple[Callable[[str], str], ...] = (lambda s: s, str.rstrip, str.strip)


def _find(lines: list[str], wanted: list[str], start: int) -> int | None:
    """Index where ``wanted`` occurs in ``lines`` at or after ``start`` (then anywhere), or None."""
    if not wanted:
        return start
    for norm in _LOOSENESS:
        normed = [norm(line) for line in lines]
        target = [norm(w) for w in wanted]
        for origin in (start, 0):
            for i in range(origin, len(lines) - len(wanted) + 1):
                if normed[i] == target[0] and normed[i : i + len(wanted)] == target:
                    return i
    return None


def apply_patch(content: str, patch: str) -> str:
    """Apply the hunks of ``patch`` to ``content``; raise :class:`PatchError` when a hunk is not found."""
    lines = content.split("\n")
    trailing_newline = content.endswith("\n")
    if trailing_newline:
        lines.pop()
    position = 0
    for number, hunk in enumerate(_hunks(patch), 1):
        if hunk.anchor:
            # ``@@ def b():`` places the hunk after that line (the same text may occur earlier).
            anchor = _find(lines, [hunk.anchor], position)
            if anchor is None:
                raise PatchError(f"hunk {number}'s anchor {hunk.anchor[:80]!r} not found")
            position = anchor + 1
        at = _find(lines, hunk.old, position)
        if at is None:
            shown = next((line for line in hunk.old if line.strip()), "")
            raise PatchError(f"hunk {number} not found (its first line: {shown[:80]!r})")
        lines[at : at + len(hunk.old)] = hunk.new
        position = at + len(hunk.new)
    return "\n".join(lines) + ("\n" if trailing_newline or not lines else "")
