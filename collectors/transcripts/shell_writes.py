"""Files that shell commands write with a here-document (``cat > f <<'EOF' … EOF``, ``tee f <<EOF``).

Agents without a file tool (Codex's ``file_change`` holds no content) write whole scripts this way; the
here-document is the file's content. With an unquoted delimiter the shell expands ``$vars`` and
backquotes inside the body, so the content is marked as possibly different from what landed.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

_HEADER = re.compile(
    r"(?:^|[;&|(]\s*)(?P<cmd>cat|tee)\b(?P<before>[^<\n]*?)<<(?P<dash>-?)\s*(?P<q>['\"]?)(?P<tag>[A-Za-z_][\w.-]*)(?P=q)"
    r"(?P<after>[^\n]*)$"
)
_TARGET = re.compile(r"(?P<op>>>?)\s*(?P<path>\"[^\"]+\"|'[^']+'|[^\s;&|>]+)")


@dataclass(frozen=True, slots=True)
class ShellWrite:
    """One here-document written to a file."""

    path: str
    """The target as the command writes it (relative to the command's directory, or absolute)."""
    content: str
    """The here-document's body, with a final newline as the shell writes it."""
    append: bool
    """``>>`` (or ``tee -a``): the body is appended."""
    expanded: bool
    """The delimiter was unquoted: the shell expanded ``$…`` in the body, which may differ."""


def _target(cmd: str, before: str, after: str) -> tuple[str, bool] | None:
    for text in (before, after):
        if match := _TARGET.search(text):
            return _unquote(match["path"]), match["op"] == ">>"
    if cmd == "tee":
        try:
            words = shlex.split(before)
        except ValueError:
            return None
        paths = [w for w in words if not w.startswith("-")]
        if paths:
            return paths[0], "-a" in words or "--append" in words
    return None


def _unquote(word: str) -> str:
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"" else word


def shell_writes(script: str) -> list[ShellWrite]:
    """Return the here-document file writes of a shell script, in order."""
    writes: list[ShellWrite] = []
    lines = script.split("\n")
    i = 0
    while i < len(lines):
        header = _HEADER.search(lines[i])
        i += 1
        if header is None:
            continue
        target = _target(header["cmd"], header["before"], header["after"])
        tag, dash = header["tag"], bool(header["dash"])
        body: list[str] = []
        while i < len(lines) and (lines[i].lstrip("\t") if dash else lines[i]) != tag:
            body.append(lines[i].lstrip("\t") if dash else lines[i])
            i += 1
        closed = i < len(lines)
        i += 1
        if target is None or not closed:
            continue
        path, append = target
        writes.append(ShellWrite(path, "\n".join(body) + "\n", append, not header["q"]))
    return writes
