"""Gemini CLI renderings: ``tool_use`` (``Tool call: name [id]``, ``Parameters:``), ``tool_result``."""

from __future__ import annotations

import re

from arb_audit.collectors.reading import text_int
from arb_audit.collectors.transcripts.events import ToolCall, Transcript
from arb_audit.collectors.transcripts.rendered.blocks import block_text, dedent, first_line, real_id, sections
from arb_audit.collectors.transcripts.rendered.dumps import parse_dump
from arb_audit.collectors.transcripts.rendered.event_blocks import Event, Notes
from arb_audit.collectors.transcripts.rendered.inputs import apply_input, kind_of, known_keys

GEMINI_TYPES = frozenset({"init", "message", "tool_result", "result"})
"""The event types only Gemini CLI's renderer writes."""
_LABELS = re.compile(
    r"^  (?P<label>Timestamp|Session|Model|Role|Content|Parameters|Output|Error|Status):(?: (?P<rest>.*))?$"
)
_CALL = re.compile(r"^  Tool call: (?P<name>.*) \[(?P<id>[^\[\]]*)\]$")
_COMMAND = re.compile(r"^    Command: (?P<command>.*)$")
_RESULT = re.compile(r"^  Tool result for (?P<id>.*) \((?P<status>[^()]*)\)$")
_EXIT = re.compile(r"^Exit Code: (?P<code>-?\d+)\s*$", re.M)

_MISSING = [
    "exit codes of commands (except where the output text states one)",
    "trailing whitespace at the end of each tool output",
    "the quoting of multi-line strings in tool parameters (file bodies are recovered from the dump's layout)",
]


class GeminiReader:
    """Gemini CLI renderings: ``tool_use`` (``Tool call: name [id]``, ``Parameters:``), ``tool_result``."""

    def __init__(self, transcript: Transcript, notes: Notes) -> None:
        self.t = transcript
        self.notes = notes

    def feed(self, event: Event) -> None:
        """Read one event."""
        if "method" in event.fields:
            self.notes.api_events += 1
            self.t.unknown(f"method {event.fields['method']}")
        elif event.type == "init":
            found = sections(event.body, _LABELS)
            self.t.start_session(
                event.line,
                session_id=real_id(first_line(found, "Session")),
                model=real_id(first_line(found, "Model")),
                started_at=event.at,
            )
        elif event.type == "tool_use":
            self._call(event)
        elif event.type == "tool_result":
            self._result(event)
        elif event.type == "result":
            if not self.t.sessions:
                self.t.start_session(event.line)
            self.t.sessions[-1].outcome = first_line(sections(event.body, _LABELS), "Status")
            self.t.sessions[-1].ended_at = event.at
        elif event.type not in ("message", "error"):
            self.t.unknown(event.type or "?")

    def _call(self, event: Event) -> None:
        head = next((m for text in event.body if (m := _CALL.match(text))), None)
        name = head["name"] if head else "?"
        call = ToolCall(
            line=event.line,
            session=self.t.session,
            tool=name,
            kind=kind_of(name),
            call_id=real_id(head["id"]) if head else None,
            started_at=event.at,
        )
        params = sections(event.body, _LABELS).get("Parameters")
        if params and (dump := parse_dump(dedent(params[1:], 4), known_keys(name))) is not None:
            apply_input(call, dump, cut=event.cut)
        listed = next((m["command"] for text in event.body if (m := _COMMAND.match(text))), None)
        if call.kind == "command" and listed and not call.command:
            call.command = listed  # a command given as a list is printed joined on its own line
        self.t.add_call(call)

    def _result(self, event: Event) -> None:
        head = next((m for text in event.body if (m := _RESULT.match(text))), None)
        if head is None:
            return
        found = sections(event.body, _LABELS)
        output = block_text(found.get("Output"), 4)
        code = _EXIT.search(output or "")
        status = head["status"].strip()
        self.t.finish(
            real_id(head["id"]),
            line=event.line,
            at=event.at,
            output=output,
            exit_code=text_int(code["code"]) if code else None,
            is_error=None if not status or status == "unknown" else status != "success",
            error=_error_text(found.get("Error")),
        )

    def missing(self) -> list[str]:
        """Return what a Gemini CLI rendering could not show."""
        found = list(_MISSING)
        if self.notes.api_events:
            found.append(
                f"tool calls inside {self.notes.api_events:,} API-log (method) event(s), which are not read"
            )
        return found


def _error_text(section: list[str] | None) -> str | None:
    """Read an error printed as a dump (``{"message": …}``) or as text."""
    text = block_text(section, 4)
    if text is None:
        return None
    dump = parse_dump(text.splitlines())
    if dump is not None and isinstance(dump.values.get("message"), str):
        return str(dump.values["message"])
    return text
