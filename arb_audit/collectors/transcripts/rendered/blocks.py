"""A rendering split into blocks at its header lines, and the small text helpers that read their bodies."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from arb_audit.collectors.transcripts.stream import Line

MAX_BLOCK_CHARS = 4 * 1024 * 1024
"""Most characters kept of one block's body; the rest is skipped and the block is marked cut."""

_NO_ID = frozenset({"", "-", "unknown-tool", "unknown-session", "<unknown>"})
"""What the renderers print when an id is absent."""


@dataclass(slots=True)
class Block:
    """One record of a rendering: its header line and the lines up to the next header."""

    line: int
    """Line of the header (1 for the lines before the first header, which have none)."""
    stamp: datetime | None
    """The ``[...Z]`` prefix time of the header line, if it had one."""
    header: str
    """The header line (empty for the lines before the first header)."""
    body: list[str] = field(default_factory=list)
    """The lines after the header."""
    size: int = 0
    """Characters held in ``body``."""
    cut: bool = False
    """The block was longer than :data:`MAX_BLOCK_CHARS`; its end was not kept."""

    def add(self, text: str) -> None:
        """Append a body line, unless the block is already full."""
        if self.cut:
            return
        room = MAX_BLOCK_CHARS - self.size
        if len(text) >= room:
            self.body.append(text[: max(room, 0)])
            self.size = MAX_BLOCK_CHARS
            self.cut = True
            return
        self.body.append(text)
        self.size += len(text) + 1


def blocks(stream: Iterable[Line], is_header: Callable[[str], bool]) -> Iterator[Block]:
    """Split a rendering's lines into blocks at its header lines; only one block is held at a time."""
    block = Block(line=1, stamp=None, header="")
    for line in stream:
        if is_header(line.text):
            if block.header or any(text.strip() for text in block.body):
                yield block
            block = Block(line=line.number, stamp=line.stamp, header=line.text)
        else:
            block.add(line.text)
    if block.header or any(text.strip() for text in block.body):
        yield block


def trim(body: list[str]) -> list[str]:
    """Drop the blank lines at the end (the renderers separate records with them)."""
    end = len(body)
    while end and not body[end - 1].strip():
        end -= 1
    return body[:end]


def dedent(body: Iterable[str], width: int) -> list[str]:
    """Take ``width`` spaces of indentation off each line (a blank or shallower line loses what it has)."""
    pad = " " * width
    return [text[width:] if text.startswith(pad) else text.lstrip(" ") for text in body]


def indented(body: list[str], width: int) -> list[str]:
    """Keep the lines up to the first non-blank one indented less than ``width``; dedent and trim them."""
    pad = " " * width
    kept: list[str] = []
    for text in body:
        if text.strip() and not text.startswith(pad):
            break
        kept.append(text)
    return trim(dedent(kept, width))


def sections(body: list[str], labels: re.Pattern[str]) -> dict[str, list[str]]:
    """Split a body at its label lines (``  Label: rest``): each label's rest, then the lines up to the next.

    The first line of each label wins; a later line that looks like the same label is content.
    """
    found: dict[str, list[str]] = {}
    current: list[str] | None = None
    for text in body:
        match = labels.match(text)
        if match is not None and match["label"] not in found:
            current = [match["rest"] or ""]
            found[match["label"]] = current
        elif current is not None:
            current.append(text)
    return found


def first_line(found: dict[str, list[str]], label: str) -> str | None:
    """Return the text on a label's own line, or None when the label is absent or empty."""
    lines_of = found.get(label)
    return lines_of[0].strip() or None if lines_of else None


def joined(section: list[str] | None, width: int) -> str | None:
    """Return a label's value that continues on lines indented ``width`` (None when absent)."""
    if not section:
        return None
    text = "\n".join(trim([section[0], *dedent(section[1:], width)]))
    return text or None


def block_text(section: list[str] | None, width: int) -> str | None:
    """Return the text under a label line (``Output:``), indented ``width``; None when there is none."""
    if not section:
        return None
    text = "\n".join(trim(dedent(section[1:], width)))
    return text or None


def real_id(raw: str | None) -> str | None:
    """Return an id as printed, or None when the renderer printed a stand-in for a missing one."""
    if raw is None:
        return None
    raw = raw.strip()
    return None if raw in _NO_ID else raw


def as_text(value: Any) -> str | None:
    """Return ``value`` when it is a string, else None."""
    return value if isinstance(value, str) else None
