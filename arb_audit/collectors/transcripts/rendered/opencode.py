"""OpenCode renderings: one ``tool_use`` block per finished call (``Input:``, ``Output:``, ``Duration:``)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from arb_audit.collectors.reading import text_int
from arb_audit.collectors.transcripts.events import ToolCall, Transcript
from arb_audit.collectors.transcripts.rendered.blocks import block_text, dedent, first_line, sections, trim
from arb_audit.collectors.transcripts.rendered.dumps import Dump, parse_dump
from arb_audit.collectors.transcripts.rendered.event_blocks import Event, Notes
from arb_audit.collectors.transcripts.rendered.inputs import apply_input, kind_of, known_keys

OPENCODE_TYPES = frozenset({"text", "step_start", "step_finish"})
"""The event types only OpenCode's renderer writes (``tool_use`` is Gemini's too)."""
OPENCODE_TS = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$")
"""OpenCode's header time (``YYYY-MM-DD HH:MM:SS UTC``), which no other renderer writes."""
_LABELS = re.compile(r"^  (?P<label>Title|Input|Output|Error|Duration):(?: (?P<rest>.*))?$")
_SESSION = re.compile(r'"sessionID": "(?P<id>[^"]+)"')
_TRUNCATED = "... [truncated]"
_DURATION = re.compile(r"^(?P<ms>\d+)ms$")

_MISSING = [
    "exit codes of commands",
    "tool outputs beyond 2,000 characters (the renderer truncates them)",
    "event times finer than a second",
    "the session id (shown only in dumps of event types the renderer does not know)",
    "the quoting of multi-line strings in file tools' inputs (bodies are recovered from the dump's layout)",
]


class OpenCodeReader:
    """OpenCode renderings: one block per finished call (``Input:``, ``Output:``, ``Duration:``)."""

    def __init__(self, transcript: Transcript, notes: Notes) -> None:
        self.t = transcript
        self.notes = notes

    def feed(self, event: Event) -> None:
        """Read one event."""
        if event.type == "tool_use":
            self._call(event)
            return
        if event.type not in OPENCODE_TYPES and event.type != "error":
            self.t.unknown(event.type or "?")
            self._session(event)

    def _session(self, event: Event) -> None:
        """Start a session when a dumped event names a new ``sessionID`` (the only place one shows)."""
        found = next((m["id"] for text in event.body if (m := _SESSION.search(text))), None)
        current = self.t.sessions[-1].session_id if self.t.sessions else None
        if found is not None and found != current:
            self.t.start_session(event.line, session_id=found, started_at=event.at)

    def _call(self, event: Event) -> None:
        tool = event.fields.get("tool", "?")
        status = event.fields.get("status")
        found = sections(event.body, _LABELS)
        call = ToolCall(line=event.line, session=self.t.session, tool=tool, kind=kind_of(tool))
        _input(call, trim(dedent(found.get("Input", [""])[1:], 4)), event.cut)
        output = block_text(found.get("Output"), 4)
        if output is not None and output.endswith(_TRUNCATED):
            self.notes.truncated_outputs += 1
        duration = _DURATION.match(first_line(found, "Duration") or "")
        call.started_at = _minus_ms(event.at, text_int(duration["ms"]) if duration else None) or event.at
        self.t.add_call(call)
        if status not in ("completed", "error"):
            return  # still running when the run ended
        failed = status == "error"
        error = block_text(found.get("Error"), 4) if failed else None
        self.t.complete(call, line=event.line, at=event.at, output=output, is_error=failed, error=error)

    def missing(self) -> list[str]:
        """Return what an OpenCode rendering could not show."""
        found = list(_MISSING)
        if self.notes.truncated_outputs:
            found.append(
                f"the rest of {self.notes.truncated_outputs:,} tool output(s) cut at 2,000 characters"
            )
        return found


def _input(call: ToolCall, body: list[str], cut: bool) -> None:
    if not body:
        return
    if body[0] == "$" or body[0].startswith("$ "):
        call.kind = "command" if call.kind == "other" else call.kind
        call.command = "\n".join([body[0][2:], *body[1:]])
    elif body[0].startswith("File: "):
        apply_input(call, _file_form(body, known_keys(call.tool)), cut=cut)
    elif (dump := parse_dump(body, known_keys(call.tool))) is not None:
        apply_input(call, dump, cut=cut)


def _file_form(body: list[str], known: frozenset[str]) -> Dump:
    """Read OpenCode's ``File: <path>`` then ``key: value`` input form (values printed with ``str()``)."""
    parts: dict[str, list[str]] = {}
    exact = True
    for text in body[1:]:
        name, sep, value = text.partition(": ")
        if sep and name in known and name not in parts and name != "file_path":
            exact = exact and all(len(lines_of) == 1 for lines_of in parts.values())
            parts[name] = [value]
        elif parts:
            parts[next(reversed(parts))].append(text)
        else:
            exact = False
    values: dict[str, Any] = {name: "\n".join(lines_of) for name, lines_of in parts.items()}
    values["file_path"] = body[0].removeprefix("File: ")
    for name in ("replace_all", "replaceAll"):
        if name in values:
            values[name] = values[name] == "True"
    return Dump(values, exact=exact)


def _minus_ms(at: datetime | None, milliseconds: int | None) -> datetime | None:
    if at is None or milliseconds is None:
        return None
    try:
        return at - timedelta(milliseconds=milliseconds)
    except OverflowError:
        return None
