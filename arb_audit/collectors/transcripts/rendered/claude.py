"""The Claude Code rendering: its header lines, and the reader of its blocks.

Its records: ``Session start — <id>``, ``Assistant — turn N | <ts>``, ``  Tool call — <Name> (<id>)``
followed by ``$ <command>`` or a dump of the input, ``  Tool result — <Name> (<id>)``,
``System event — <subtype>``, ``Result — <subtype>``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from arb_audit.collectors.reading import json_number
from arb_audit.collectors.transcripts.events import ToolCall, Transcript
from arb_audit.collectors.transcripts.rendered.blocks import (
    Block,
    dedent,
    first_line,
    indented,
    real_id,
    sections,
)
from arb_audit.collectors.transcripts.rendered.dumps import parse_dump
from arb_audit.collectors.transcripts.rendered.inputs import apply_input, kind_of, known_keys
from arb_audit.collectors.transcripts.stream import parse_stamp

_SESSION = re.compile(r"^Session start — (?P<id>.*)$")
_SYSTEM = re.compile(r"^System event — (?P<sub>.*)$")
_RESULT = re.compile(r"^Result — (?P<sub>.*)$")
_MESSAGE = re.compile(r"^(?P<role>[A-Z][A-Za-z_]*) — turn (?P<turn>\d+)(?: \| (?P<ts>.*))?$")
_UNHANDLED = re.compile(r"^Unhandled event type '(?P<type>.*)' on source line \d+:$")
_SESSION_LABELS = re.compile(r"^  (?P<label>Model|Tools|Working dir):(?: (?P<rest>.*))?$")
_CLAUDE_TOP = (_SESSION, _SYSTEM, _RESULT, _MESSAGE, _UNHANDLED)
_CALL = re.compile(r"^  Tool call — (?P<name>.*) \((?P<id>[^()]*)\)$")
_CALL_RESULT = re.compile(r"^  Tool result — (?P<name>.*) \((?P<id>[^()]*)\)$")
_SUB_PREFIXES = ("  Tool call — ", "  Tool result — ", "  [")
_OTHER_BLOCK = re.compile(r"^  \[[^\]]*\bblock\]$")

_CLAUDE_MISSING = [
    "tool results' is_error flags (a failed tool call reads like a successful one)",
    "exit codes of commands",
    "the structured tool_use_result (stdout and stderr apart, patch details)",
    "token usage of each message (only each session's final cost is shown)",
    "event types the renderer drops without notice (stream_event, rate_limit_event and others)",
    "lines of the agent's output that were not JSON events (the renderer sent them to its stderr)",
    "trailing whitespace at the ends of output and file-body lines (the renderer strips it)",
    "the quoting of multi-line strings in tool inputs (file bodies are recovered from the dump's layout)",
]


def claude_line(text: str) -> bool:
    """Whether a line is one only the Claude Code rendering writes (a session start or a message header)."""
    return _SESSION.match(text) is not None or _MESSAGE.match(text) is not None


class ClaudeHeaders:
    """Tells the header lines of a Claude rendering; a call or result header counts only inside a message."""

    def __init__(self) -> None:
        self.in_message = False

    def __call__(self, text: str) -> bool:
        """Whether ``text`` is a header line (and so whether a message is open after it)."""
        # Most lines are indented body text: a prefix test settles them before any pattern runs.
        if text.startswith(" "):
            if not self.in_message or not text.startswith(_SUB_PREFIXES):
                return False
            return (_CALL.match(text) or _CALL_RESULT.match(text) or _OTHER_BLOCK.match(text)) is not None
        if text[:1].isupper() and any(pattern.match(text) for pattern in _CLAUDE_TOP):
            self.in_message = _MESSAGE.match(text) is not None
            return True
        return False


class ClaudeReader:
    """Reads the blocks of a Claude Code rendering into a transcript."""

    format = "claude_code_rendered"
    """The format's name."""

    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript
        self.at: datetime | None = None
        """The time of the message the current blocks belong to."""

    def feed(self, block: Block) -> None:
        """Read one block."""
        text = block.header
        if match := _CALL.match(text):
            self._call(block, match["name"], match["id"])
        elif match := _CALL_RESULT.match(text):
            self._result(block, match["id"])
        elif match := _MESSAGE.match(text):
            self.at = (parse_stamp(match["ts"]) if match["ts"] else None) or block.stamp
            self.t.seen(self.at)
        elif match := _SESSION.match(text):
            self._session(block, match["id"])
        elif match := _SYSTEM.match(text):
            self._system(block, match["sub"].strip())
        elif match := _RESULT.match(text):
            self._end(block, match["sub"].strip())
        elif match := _UNHANDLED.match(text):
            self.t.unknown(match["type"] or "?")

    def _call(self, block: Block, name: str, raw_id: str) -> None:
        body = indented(block.body, 4)
        call = ToolCall(
            line=block.line,
            session=self.t.session,
            tool=name,
            kind=kind_of(name),
            call_id=real_id(raw_id),
            started_at=self.at,
        )
        if body and (body[0] == "$" or body[0].startswith("$ ")):
            # The renderer prints ``$ command`` for an input of at most two keys holding ``command``.
            call.kind = "command" if call.kind == "other" else call.kind
            call.command = "\n".join([body[0][2:], *body[1:]])
        elif (dump := parse_dump(body, known_keys(name))) is not None:
            apply_input(call, dump, cut=block.cut)
        self.t.add_call(call)

    def _result(self, block: Block, raw_id: str) -> None:
        output = "\n".join(indented(block.body, 4))
        self.t.finish(real_id(raw_id), line=block.line, at=self.at, output=output)

    def _session(self, block: Block, raw_id: str) -> None:
        body = sections(block.body, _SESSION_LABELS)
        self.t.start_session(
            block.line,
            session_id=real_id(raw_id),
            model=first_line(body, "Model"),
            cwd=first_line(body, "Working dir"),
            started_at=block.stamp,
        )
        self.t.seen(block.stamp)

    def _system(self, block: Block, subtype: str) -> None:
        if subtype != "compact_boundary":
            self.t.unknown(f"system {subtype}")
            return
        dump = parse_dump(dedent(block.body, 2))
        values = dump.values if dump is not None else {}
        meta = values.get("compact_metadata")
        meta = meta if isinstance(meta, dict) else {}
        detail = ", ".join(f"{key}: {meta[key]}" for key in ("trigger", "pre_tokens") if key in meta)
        at = _dump_time(values) or block.stamp
        self.t.seen(at)
        self.t.compaction(block.line, at, detail)

    def _end(self, block: Block, subtype: str) -> None:
        if not self.t.sessions:
            self.t.start_session(block.line)
        session = self.t.sessions[-1]
        dump = parse_dump(dedent(block.body, 2))
        values = dump.values if dump is not None else {}
        session.outcome = subtype or None
        session.cost_usd = json_number(values.get("total_cost_usd"))
        session.ended_at = _dump_time(values) or block.stamp
        self.t.seen(session.ended_at)

    def finish(self) -> list[str]:
        """End of file: return what this rendering could not show."""
        found = list(_CLAUDE_MISSING)
        if self.t.first_at is None:
            found.append("event times (no [..Z] prefix and no time in the turn headers)")
        return found


def _dump_time(values: dict[str, Any]) -> datetime | None:
    """Return the wall time a newer renderer adds to dumped events (``_wall_ts``), if any."""
    for key in ("_wall_ts", "timestamp"):
        if isinstance(values.get(key), str):
            return parse_stamp(values[key])
    return None
