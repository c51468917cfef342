"""OpenCode ``run --format json``: events with a ``type``, an epoch-ms ``timestamp`` and a ``sessionID``.

Most events carry a ``part``; an ``error`` event carries an ``error`` instead. Each ``tool_use`` event
is a call already done: its ``part.state`` holds the input, the outcome and the call's own start and
end times. Tool inputs are camelCase (``filePath``, ``oldString``). A ``sessionID`` that differs from
the current session's opens a new session (``opencode run --continue`` appends to the same file);
``step_finish`` adds to the session's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from arb_audit.collectors.reading import json_number
from arb_audit.collectors.transcripts.events import FileEdit, Session, ToolCall, Transcript
from arb_audit.collectors.transcripts.formats import (
    EventFormat,
    dict_of,
    edit_body,
    int_of,
    list_of,
    text_of,
    when,
)
from arb_audit.collectors.transcripts.patches import split_apply_patch
from arb_audit.collectors.transcripts.stream import Event, epoch_ms

QUIET = frozenset({"step_start", "text", "reasoning"})
"""Event types that hold no call or outcome (a step begins, the agent's prose, its thinking)."""
DONE = frozenset({"completed", "error"})
"""The states of a finished tool call."""
UNNAMED = "?"
"""The tool name recorded when an event does not give one."""


class OpenCodeFormat(EventFormat):
    """Reads OpenCode's JSON event stream."""

    name = "opencode"

    @classmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """OpenCode's events: a type, an integer epoch-ms ``timestamp``, and a ``part`` or ``sessionID``."""
        stamp = data.get("timestamp")
        if isinstance(stamp, bool) or not isinstance(stamp, int) or epoch_ms(stamp) is None:
            return False
        has_part = isinstance(data.get("part"), dict) or isinstance(data.get("sessionID"), str)
        return isinstance(data.get("type"), str) and has_part

    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event."""
        data = event.data
        part = dict_of(data.get("part"))
        at = when(event, epoch_ms(data.get("timestamp")))
        transcript.seen(at)
        _follow_session(
            text_of(data.get("sessionID")) or text_of(part.get("sessionID")), event, at, transcript
        )
        kind = text_of(data.get("type"))
        if kind == "tool_use":
            _tool_use(part, event, at, transcript)
        elif kind == "step_finish":
            session = _current(event, transcript)
            cost = json_number(part.get("cost"))
            if cost is not None:
                session.cost_usd = (session.cost_usd or 0.0) + cost
            session.outcome = text_of(part.get("reason")) or session.outcome
            session.ended_at = at
        elif kind == "text":
            transcript.said(text_of(part.get("text")), event.line, at)
        elif kind == "error":
            session = _current(event, transcript)
            name = text_of(dict_of(data.get("error")).get("name"))
            session.outcome = f"error: {name}" if name else "error"
            session.ended_at = at
        elif not (isinstance(kind, str) and kind in QUIET):
            transcript.unknown(kind)


def _follow_session(
    session_id: str | None, event: Event, at: datetime | None, transcript: Transcript
) -> None:
    """Open a session when the event names one other than the current session's."""
    if session_id is None:
        return
    if transcript.sessions and transcript.sessions[-1].session_id == session_id:
        return
    transcript.start_session(event.line, session_id=session_id, started_at=at)


def _current(event: Event, transcript: Transcript) -> Session:
    """Return the current session, opening one when the file named none yet."""
    if not transcript.sessions:
        transcript.start_session(event.line)
    return transcript.sessions[-1]


def _tool_use(part: dict[str, Any], event: Event, at: datetime | None, transcript: Transcript) -> None:
    """Record one call together with its outcome (the event is written once the call is done)."""
    state = dict_of(part.get("state"))
    times = dict_of(state.get("time"))
    started = epoch_ms(times.get("start")) or at
    ended = epoch_ms(times.get("end")) or at
    transcript.seen(started)
    transcript.seen(ended)
    call_id = text_of(part.get("callID"))
    status = text_of(state.get("status"))
    call = transcript.pending(call_id)  # an earlier event showed this call still running
    if call is None:
        call = _call(
            text_of(part.get("tool")) or UNNAMED, dict_of(state.get("input")), event, transcript, started
        )
        call.call_id = call_id
        transcript.add_call(call)
    if status not in DONE:
        return  # still running when written: close() reports it if no later event finishes it
    exit_code = int_of(dict_of(state.get("metadata")).get("exit")) if call.kind == "command" else None
    transcript.complete(
        call,
        line=event.line,
        at=ended,
        output=text_of(state.get("output")),
        exit_code=exit_code,
        # a command that exits non-zero failed, though the tool itself reports success
        is_error=status == "error" or bool(exit_code),
        error=_error_text(state.get("error")) if status == "error" else None,
    )


def _call(
    name: str, inputs: dict[str, Any], event: Event, transcript: Transcript, at: datetime | None
) -> ToolCall:
    """Return the call of tool ``name`` with ``inputs``, its kind and details read from them."""
    call = ToolCall(line=event.line, session=transcript.session, tool=name[:80], kind="other", started_at=at)
    reader = _TOOLS.get(name)
    if reader is not None:
        reader(call, inputs)
    return call


def _shell(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "command"
    call.command = text_of(inputs.get("command"))
    call.cwd = text_of(inputs.get("workdir"))


def _read(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "read"
    call.read_path = text_of(inputs.get("filePath"))
    call.read_whole = int_of(inputs.get("offset")) is None and int_of(inputs.get("limit")) is None


def _write(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "edit"
    path = text_of(inputs.get("filePath"))
    if path is not None:
        content, cut = edit_body(inputs.get("content"))
        call.edits.append(FileEdit(path, "write", content=content, cut=cut or content is None))


def _edit(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "edit"
    path = text_of(inputs.get("filePath"))
    if path is not None:
        call.edits.append(_replacement(path, inputs))


def _multiedit(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "edit"
    path = text_of(inputs.get("filePath"))
    for piece in list_of(inputs.get("edits")):
        piece = dict_of(piece)
        target = text_of(piece.get("filePath")) or path
        if target is not None:
            call.edits.append(_replacement(target, piece))


def _patch(call: ToolCall, inputs: dict[str, Any]) -> None:
    call.kind = "edit"
    text = text_of(inputs.get("patchText"))
    if text is not None:
        call.edits.extend(split_apply_patch(text))


_TOOLS: dict[str, Callable[[ToolCall, dict[str, Any]], None]] = {
    "bash": _shell,
    "read": _read,
    "write": _write,
    "edit": _edit,
    "multiedit": _multiedit,
    "patch": _patch,
    "apply_patch": _patch,
}
"""OpenCode's tools the audit reads; every other tool (glob, grep, list, todos, web, task) is ``other``."""


def _replacement(path: str, inputs: dict[str, Any]) -> FileEdit:
    """Return the edit of one ``oldString`` → ``newString`` input."""
    old, cut_old = edit_body(inputs.get("oldString"))
    new, cut_new = edit_body(inputs.get("newString"))
    if old == "" and new is not None:
        # An empty oldString makes the edit tool write newString as the whole file.
        return FileEdit(path, "write", content=new, cut=cut_new)
    return FileEdit(
        path,
        "replace",
        old=old,
        new=new,
        replace_all=inputs.get("replaceAll") is True,
        cut=cut_old or cut_new or old is None or new is None,
    )


def _error_text(value: Any) -> str | None:
    """Return a state's ``error``: a string, or an object's ``message`` (else its ``name``)."""
    if isinstance(value, str):
        return value
    error = dict_of(value)
    return text_of(error.get("message")) or text_of(error.get("name"))
