"""Files that shell commands write with a here-document (``cat > f <<'EOF' … EOF``, ``tee f <<EOF``).

Agents without a file tool (Codex's ``file_change`` holds no content) write whole scripts this way; the
here-document is the file's content. With an unquoted delimiter the shell expands ``$vars`` and
backquotes inside the body, so the content is marked as possibly different from what landed. A ``cd``
earlier in the script moves where relative targets land. Every line is scanned once: a hostile command
costs time linear in its length.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass

_SEPARATORS = re.compile(r"&&|\|\||[;|(&]")
_HEADER = re.compile(r"^(?:(?:then|do|else|\{|!|sudo)\s+)*(?P<cmd>cat|tee)\b(?P<before>[^<]*)$")
_DELIMITER = re.compile(r"^(?P<dash>-?)\s*(?P<q>['\"]?)(?P<tag>[A-Za-z_][\w.-]*)(?P=q)(?P<after>.*)$")
_REDIRECT = re.compile(r"(?P<op>>>?)\s*(?P<path>\"[^\"]+\"|'[^']+'|[^\s;&|>]+)")
_CD = re.compile(r"^cd\s+(?P<path>\"[^\"]+\"|'[^']+'|[^\s;&|]+)\s*$")


@dataclass(frozen=True, slots=True)
class ShellWrite:
    """One here-document written to a file."""

    path: str
    """The target: absolute when the script or its directory says where, else as written."""
    content: str
    """The here-document's body, with a final newline as the shell writes it."""
    append: bool
    """``>>`` (or ``tee -a``): the body is appended."""
    expanded: bool
    """The delimiter was unquoted: the shell expanded ``$…`` in the body, which may differ."""


def _unquote(word: str) -> str:
    return word[1:-1] if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"" else word


def _tee_target(args: str) -> tuple[str, bool] | None:
    try:
        words = shlex.split(args)
    except ValueError:
        return None
    paths = [w for w in words if not w.startswith("-") and not w.startswith(">")]
    return (paths[0], "-a" in words or "--append" in words) if paths else None


def _target(cmd: str, before: str, after: str) -> tuple[str, bool] | None:
    """Return the file a ``cat``/``tee`` here-document goes to and whether it appends; None if none."""
    if cmd == "tee":
        return _tee_target(_REDIRECT.sub("", before))
    for text in (before, after):
        if match := _REDIRECT.search(text):
            return _unquote(match["path"]), match["op"] == ">>"
    return None


def _header(line: str) -> tuple[str, str, str, str, bool, bool] | None:
    """Split a here-document's opening line: (command, text before ``<<``, tag, after, quoted, ``<<-``)."""
    head, sep, tail = line.partition("<<")
    if not sep:
        return None
    segment = _SEPARATORS.split(head)[-1].strip()
    command = _HEADER.match(segment)
    delimiter = _DELIMITER.match(tail.strip())
    if command is None or delimiter is None:
        return None
    quoted, dash = bool(delimiter["q"]), bool(delimiter["dash"])
    return command["cmd"], command["before"], delimiter["tag"], delimiter["after"], quoted, dash


def _moved(cwd: str | None, line: str) -> str | None:
    """Follow ``cd DIR`` segments of a script line (the last one wins)."""
    for segment in _SEPARATORS.split(line):
        if match := _CD.match(segment.strip()):
            target = _unquote(match["path"])
            if target.startswith("~") or "$" in target:
                return None  # somewhere this audit cannot know
            if target.startswith("/"):
                cwd = posixpath.normpath(target)
            elif cwd:
                cwd = posixpath.normpath(posixpath.join(cwd, target))
    return cwd


def shell_writes(script: str, cwd: str | None = None) -> list[ShellWrite]:
    """Return the here-document file writes of a shell script started in ``cwd``, in order."""
    writes: list[ShellWrite] = []
    lines = script.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        header = _header(line)
        i += 1
        if header is None:
            if "cd" in line:
                cwd = _moved(cwd, line)
            continue
        cmd, before, tag, after, quoted, dash = header
        if "cd" in line:
            cwd = _moved(cwd, line.partition("<<")[0])
        body: list[str] = []
        while i < len(lines) and (lines[i].lstrip("\t") if dash else lines[i]) != tag:
            body.append(lines[i].lstrip("\t") if dash else lines[i])
            i += 1
        closed = i < len(lines)
        i += 1
        target = _target(cmd, before, after)
        if target is None or not closed or target[0].startswith("/dev/"):
            continue
        path, append = target
        if cwd and not path.startswith("/"):
            path = posixpath.join(cwd, path)
        writes.append(ShellWrite(path, "\n".join(body) + "\n", append, not quoted))
    return writes
