"""Gemini CLI ``--output-format stream-json``: typed events, each with an ISO ``timestamp``.

The types are ``init``, ``message``, ``tool_use``, ``tool_result``, ``error`` and ``result``. An
``init`` opens a session and a ``result`` ends it; tool calls pair with their results by ``tool_id``.
The tool names are Gemini CLI's own (``run_shell_command``, ``write_file``, ``replace``, ``read_file``,
...). The older API-log form (one ``{"method": ..., "response": {"candidates": ...}}`` object per model
call) is read too: its ``functionCall`` parts are calls, its ``functionResponse`` parts their outcomes.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Any

from arb_audit.collectors.reading import Tally, text_int
from arb_audit.collectors.transcripts.events import MAX_MESSAGE_CHARS, FileEdit, ToolCall, Transcript
from arb_audit.collectors.transcripts.formats import (
    EventFormat,
    dict_of,
    edit_body,
    int_of,
    list_of,
    text_of,
    when,
)
from arb_audit.collectors.transcripts.stream import Event, parse_stamp

TYPES = frozenset({"init", "message", "tool_use", "tool_result", "error", "result"})
"""The event types of the stream-json form."""
EXIT_CODE = re.compile(r"^[ \t]*(?:Exit Code:|Command exited with code:?)[ \t]*(-?\d{1,10})\.?[ \t]*$", re.M)
"""The shell tool's own verdict line (``Exit Code: 1``); ``Exit Code: (none)`` holds no code."""
UNNAMED = "?"
"""The tool name recorded when an event does not give one."""

_SHAPES: dict[str, Callable[[dict[str, Any]], bool]] = {
    "init": lambda d: isinstance(d.get("session_id"), str),
    "message": lambda d: isinstance(d.get("role"), str) and isinstance(d.get("content"), str),
    "tool_use": lambda d: isinstance(d.get("tool_name"), str),
    "tool_result": lambda d: isinstance(d.get("tool_id"), str),
    "error": lambda d: isinstance(d.get("severity"), str) and isinstance(d.get("message"), str),
    "result": lambda d: isinstance(d.get("stats"), dict),
}
"""What makes an event of each type surely Gemini's (Claude, Codex and OpenCode reuse some type names)."""


class GeminiFormat(EventFormat):
    """Reads Gemini CLI stream-json (and its older API-log form)."""

    name = "gemini"

    def __init__(self) -> None:
        self._orphans = Tally()
        # API-log calls come without ids: they wait under a made-up key, per tool name, oldest first.
        self._unnamed_keys: dict[str, deque[str]] = {}
        self._made_up: dict[str, ToolCall] = {}
        self._reply = ""  # the agent's reply so far, while its pieces keep coming

    @classmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """Gemini's events: a known type with Gemini's fields and an ISO time, or an API-log entry."""
        kind = text_of(data.get("type"))
        if kind is None:
            return _is_api_log(data)
        # OpenCode's events carry ``part``/``sessionID`` and epoch-ms times; Claude's ``result`` a subtype.
        if "part" in data or "sessionID" in data or "subtype" in data:
            return False
        if not isinstance(kind, str) or not isinstance(data.get("timestamp", ""), str):
            return False
        shape = _SHAPES.get(kind)
        return shape is not None and shape(data)

    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event."""
        data = event.data
        stamp = text_of(data.get("timestamp"))
        at = when(event, parse_stamp(stamp) if stamp is not None else None)
        transcript.seen(at)
        kind = text_of(data.get("type"))
        if not (kind == "message" and data.get("role") == "assistant"):
            self._reply = ""
        if kind == "init":
            transcript.start_session(
                event.line,
                session_id=text_of(data.get("session_id")),
                model=text_of(data.get("model")),
                started_at=at,
            )
        elif kind == "tool_use":
            name = text_of(data.get("tool_name")) or UNNAMED
            params = dict_of(data.get("parameters"))
            transcript.add_call(
                _call(name, params, event, transcript.session, text_of(data.get("tool_id")), at)
            )
        elif kind == "tool_result":
            self._tool_result(event, at, transcript)
        elif kind == "result":
            if not transcript.sessions:
                transcript.start_session(event.line)
            session = transcript.sessions[-1]
            session.ended_at = at
            session.outcome = text_of(data.get("status"))
        elif kind == "message":
            if data.get("role") == "assistant":
                # stream-json sends the reply in pieces (delta); a piece continues the message before it.
                piece = text_of(data.get("content")) or ""
                self._reply = ((self._reply if data.get("delta") is True else "") + piece)[:MAX_MESSAGE_CHARS]
                transcript.said(self._reply, event.line, at)
        elif kind == "error":
            pass  # the CLI's warnings hold no call or outcome
        elif kind is None and isinstance(data.get("method"), str):
            self._api_log(event, at, transcript)
        else:
            transcript.unknown(kind)

    def finish(self, transcript: Transcript) -> None:
        """End of file: report results that answered no call; made-up keys of unanswered calls go."""
        for call in self._made_up.values():
            call.call_id = None
        self._made_up.clear()
        if self._orphans.count:
            transcript.problem(
                f"{self._orphans.count:,} tool result(s) answer no call seen before them (first: line"
                f" {self._orphans.first}); the call's line may be lost"
            )

    def _tool_result(self, event: Event, at: datetime | None, transcript: Transcript) -> None:
        data = event.data
        call_id = text_of(data.get("tool_id"))
        output = text_of(data.get("output"))
        error = _error_text(data.get("error"))
        status = text_of(data.get("status"))
        done = self._finish(
            transcript,
            call_id,
            event,
            at,
            output=output,
            error=error,
            is_error={"error": True, "success": False}.get(status) if status is not None else None,
        )
        if done is None:
            self._orphans.add(event.line, call_id or "")

    def _finish(
        self,
        transcript: Transcript,
        call_id: str | None,
        event: Event,
        at: datetime | None,
        *,
        output: str | None,
        error: str | None,
        is_error: bool | None,
    ) -> ToolCall | None:
        """Attach an outcome; a shell command's exit code is read from the tool's verdict line."""
        call = transcript.pending(call_id)
        exit_code = None
        if call is not None and call.kind == "command":
            exit_code = _exit_code(output) if output is not None else None
            if exit_code is None and error is not None:
                exit_code = _exit_code(error)
        if exit_code:
            is_error = True  # a command that exits non-zero failed, though the tool reports success
        done = transcript.finish(
            call_id,
            line=event.line,
            at=at,
            output=output,
            exit_code=exit_code,
            is_error=is_error,
            error=error,
        )
        if done is not None and call_id in self._made_up:
            done.call_id = None
            del self._made_up[call_id]
        return done

    def _api_log(self, event: Event, at: datetime | None, transcript: Transcript) -> None:
        """One API-log entry: the calls and outcomes among its response's parts."""
        response = dict_of(event.data.get("response"))
        index = 0
        for candidate in list_of(response.get("candidates")):
            for part in list_of(dict_of(dict_of(candidate).get("content")).get("parts")):
                part = dict_of(part)
                if "functionCall" in part:
                    self._function_call(dict_of(part["functionCall"]), event, at, index, transcript)
                    index += 1
                elif "functionResponse" in part:
                    self._function_response(dict_of(part["functionResponse"]), event, at, transcript)

    def _function_call(
        self, spec: dict[str, Any], event: Event, at: datetime | None, index: int, transcript: Transcript
    ) -> None:
        name = text_of(spec.get("name")) or UNNAMED
        call_id = text_of(spec.get("id"))
        key = call_id
        if key is None:
            key = f"\0{event.line}.{index}"  # the NUL keeps it apart from the ids Gemini writes
            self._unnamed_keys.setdefault(name, deque()).append(key)
        call = transcript.add_call(_call(name, dict_of(spec.get("args")), event, transcript.session, key, at))
        if call_id is None:
            self._made_up[key] = call

    def _function_response(
        self, spec: dict[str, Any], event: Event, at: datetime | None, transcript: Transcript
    ) -> None:
        name = text_of(spec.get("name")) or UNNAMED
        key = text_of(spec.get("id"))
        if key is None and (waiting := self._unnamed_keys.get(name)):
            key = waiting.popleft()
        response = dict_of(spec.get("response"))
        error = _error_text(response.get("error"))
        done = self._finish(
            transcript,
            key,
            event,
            at,
            output=text_of(response.get("output")),
            error=error,
            is_error=error is not None,
        )
        if done is None:
            self._orphans.add(event.line, name)


def _is_api_log(data: dict[str, Any]) -> bool:
    return isinstance(data.get("method"), str) and isinstance(
        dict_of(data.get("response")).get("candidates"), list
    )


def _call(
    name: str, params: dict[str, Any], event: Event, session: int, call_id: str | None, at: datetime | None
) -> ToolCall:
    call = ToolCall(
        line=event.line, session=session, tool=name[:80], kind="other", call_id=call_id, started_at=at
    )
    reader = _TOOLS.get(name)
    if reader is not None:
        reader(call, params)
    return call


def _shell(call: ToolCall, params: dict[str, Any]) -> None:
    call.kind = "command"
    call.command = text_of(params.get("command"))
    call.cwd = text_of(params.get("directory"))


def _read(call: ToolCall, params: dict[str, Any]) -> None:
    call.kind = "read"
    # ``absolute_path`` in Gemini CLI before 0.4, ``file_path`` after.
    call.read_path = text_of(params.get("absolute_path")) or text_of(params.get("file_path"))
    call.read_whole = int_of(params.get("offset")) is None and int_of(params.get("limit")) is None


def _write(call: ToolCall, params: dict[str, Any]) -> None:
    call.kind = "edit"
    path = text_of(params.get("file_path"))
    if path is not None:
        content, cut = edit_body(params.get("content"))
        call.edits.append(FileEdit(path, "write", content=content, cut=cut or content is None))


def _replace(call: ToolCall, params: dict[str, Any]) -> None:
    call.kind = "edit"
    path = text_of(params.get("file_path"))
    if path is None:
        return
    old, cut_old = edit_body(params.get("old_string"))
    new, cut_new = edit_body(params.get("new_string"))
    if old == "" and new is not None:
        # An empty old_string makes the tool create the file with new_string (it refuses if it exists).
        call.edits.append(FileEdit(path, "write", content=new, cut=cut_new))
        return
    expected = int_of(params.get("expected_replacements"))
    call.edits.append(
        FileEdit(
            path,
            "replace",
            old=old,
            new=new,
            replace_all=expected is not None and expected > 1,
            cut=cut_old or cut_new or old is None or new is None,
        )
    )


_TOOLS: dict[str, Callable[[ToolCall, dict[str, Any]], None]] = {
    "run_shell_command": _shell,
    "read_file": _read,
    "write_file": _write,
    "replace": _replace,
}
"""Gemini CLI's tools the audit reads; every other tool (search, web, memory, todos) is ``other``."""


def _error_text(value: Any) -> str | None:
    """Return a result's ``error``: a string, or an object's ``message`` (else its ``type``)."""
    if isinstance(value, str):
        return value
    error = dict_of(value)
    return text_of(error.get("message")) or text_of(error.get("type"))


def _exit_code(text: str) -> int | None:
    """Return the last verdict line's code (the command's own output comes before the tool's verdict)."""
    code = None
    for match in EXIT_CODE.finditer(text):
        code = text_int(match[1])
    return code
