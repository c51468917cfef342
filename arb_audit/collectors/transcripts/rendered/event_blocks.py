"""The ``=== Event N | type: … ===`` blocks of the Codex, Gemini and OpenCode renderings: headers read."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from arb_audit.collectors.reading import Tally
from arb_audit.collectors.transcripts.rendered.blocks import Block, trim
from arb_audit.collectors.transcripts.stream import parse_stamp

_EVENT = re.compile(r"^=== Event (?P<n>\d+) \| (?P<inner>.*) ===\s*$")
_TYPE_WITH_SUB = re.compile(r"^(?P<type>\S+) \((?P<sub>[^()]*)\)$")


def is_event_header(text: str) -> bool:
    """Whether a line is an ``=== Event N | … ===`` header."""
    return text.startswith("=== Event ") and _EVENT.match(text) is not None


@dataclass(slots=True)
class Event:
    """One ``=== Event N | … ===`` block, its header read."""

    line: int
    """Line of the header."""
    type: str
    """The event type (``item.completed``, ``tool_use``, ``NOT PARSABLE``); empty when the header has none."""
    sub: str | None
    """What the parentheses after the type say (Codex new_judge_v2's item type), if any."""
    fields: dict[str, str]
    """The header's other ``name: value`` parts (``id``, ``ts``, ``tool``, ``status``, ``method``)."""
    at: datetime | None
    """The header's time, if it has one."""
    body: list[str]
    """The body lines, without trailing blank lines and without stray unindented lines."""
    cut: bool
    """The block was longer than :data:`~arb_audit.collectors.transcripts.rendered.blocks.MAX_BLOCK_CHARS`."""


@dataclass(slots=True)
class Notes:
    """What the event readers saw that the ``missing`` list reports."""

    untimed_items: int = 0
    loose_dumps: int = 0
    unreadable: Tally = field(default_factory=Tally)
    truncated_outputs: int = 0
    api_events: int = 0


def _time(text: str | None) -> datetime | None:
    """Read a header's time: ISO, ``YYYY-MM-DD HH:MM:SS UTC`` (OpenCode), or the first of ``a -> b``."""
    if not text:
        return None
    text = text.split(" -> ")[0].strip()
    return parse_stamp(text.removesuffix(" UTC").strip())


def read_event(block: Block) -> tuple[Event, int]:
    """Read a block's header; return the event and how many stray lines were taken out of its body.

    Every body line a renderer writes is indented, so an unindented line is one Codex's renderer copied
    through verbatim (a line of the agent's output that was not JSON).
    """
    match = _EVENT.match(block.header)
    parts = match["inner"].split(" | ") if match else []
    fields: dict[str, str] = {}
    kind = ""
    for part in parts:
        if part.strip() == "NOT PARSABLE":
            kind = "NOT PARSABLE"
        name, sep, value = part.partition(": ")
        if sep:
            fields.setdefault(name.strip(), value.strip())
    kind = kind or fields.pop("type", "")
    sub = None
    if with_sub := _TYPE_WITH_SUB.match(kind):
        kind, sub = with_sub["type"], with_sub["sub"]
    body = [text for text in block.body if not text.strip() or text.startswith(" ")]
    stray = sum(1 for text in block.body if text.strip() and not text.startswith(" "))
    at = _time(fields.get("ts")) or block.stamp
    return Event(block.line, kind, sub, fields, at, trim(body), block.cut), stray
