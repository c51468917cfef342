"""Claude Code ``--output-format stream-json``: ``system`` / ``assistant`` / ``user`` / ``result`` events.

Tool calls are ``tool_use`` blocks of assistant messages; their outcomes are ``tool_result`` blocks of
the next user messages, paired by id. A ``system`` ``init`` opens a session (``claude --continue``
appends sessions to the same file), ``compact_boundary`` marks a context compaction, ``result`` ends
a session.
"""

from __future__ import annotations

import re
from typing import Any

from arb_audit.collectors.reading import json_number
from arb_audit.collectors.transcripts.events import (
    MAX_DETAIL_CHARS,
    CallKind,
    FileEdit,
    ToolCall,
    Transcript,
)
from arb_audit.collectors.transcripts.formats import (
    EventFormat,
    dict_of,
    edit_body,
    int_of,
    list_of,
    text_of,
    when,
)
from arb_audit.collectors.transcripts.stream import Event, dumps_short, parse_stamp

TYPES = frozenset({"system", "assistant", "user", "result"})
IGNORED = frozenset({"stream_event", "rate_limit_event"})
"""Event types Claude Code writes that hold nothing the audit uses (partial deltas, rate limits)."""
EXIT_CODE = re.compile(r"^\s*(?:Error:\s*)?Exit code:?\s*(-?\d{1,9})\b")
BACKGROUND = re.compile(
    r"running in (?:the )?background (?:with ID|\((?:shell|task) ID)[:\s]\s*([\w.\-]{0,79}[\w\-])",
    re.IGNORECASE,
)
"""Claude Code's answer when it moved a Bash command to the background (by request or by itself); since
2.1 a sentence follows the id ("…with ID: b2prhow7g. Output is being written to: …"), so its period is
not the id's."""
STATUS_TAG = re.compile(r"<status>\s*(\w{1,20})\s*</status>")
EXIT_TAG = re.compile(r"<exit[_-]code>\s*(-?\d{1,9})\s*</exit[_-]code>|\(exit code (-?\d{1,9})\)")
TASK_TAG = re.compile(r"<(?:task|shell|bash)[_-]id>\s*([\w.\-]{1,80})\s*</(?:task|shell|bash)[_-]id>")
ENDED = frozenset({"completed", "failed", "killed", "error", "success"})
"""Statuses of a background task that has ended (``running`` has not)."""
STATUS_TOOLS = frozenset({"BashOutput", "TaskOutput"})
"""Tools that report a background task's status, naming it by ``bash_id`` / ``task_id``."""


class ClaudeCodeFormat(EventFormat):
    """Reads Claude Code stream-json."""

    name = "claude_code"

    @classmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """Claude's events: ``system`` with a subtype, messages with a ``message`` object, or ``result``."""
        kind = text_of(data.get("type"))
        if kind == "system":
            return isinstance(data.get("subtype"), str)
        if kind in ("assistant", "user"):
            return isinstance(data.get("message"), dict)
        return kind == "result" and "subtype" in data

    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event; Claude Code >= 2.1 gives each its own ISO ``timestamp``, used before the line's."""
        data = event.data
        stamp = text_of(data.get("timestamp"))
        if stamp is not None and (own := parse_stamp(stamp)) is not None:
            event = Event(event.line, own, data)
            transcript.seen(own)
        kind = text_of(data.get("type"))
        if kind == "system":
            self._system(event, transcript)
        elif kind == "assistant":
            if (error := text_of(data.get("error"))) is not None:
                self._error(error, event, transcript)
            for block in list_of(dict_of(data.get("message")).get("content")):
                block = dict_of(block)
                if block.get("type") == "tool_use":
                    transcript.add_call(_call(block, event, transcript.session))
                elif block.get("type") == "text" and data.get("error") is None:
                    transcript.said(text_of(block.get("text")), event.line, event.stamp)
        elif kind == "user":
            content = dict_of(data.get("message")).get("content")
            if isinstance(content, str):
                _notification(content, event, transcript)
            for block in list_of(content):
                block = dict_of(block)
                if block.get("type") == "tool_result":
                    _result(block, event, transcript)
                elif block.get("type") == "text" and isinstance(block.get("text"), str):
                    _notification(block["text"], event, transcript)
        elif kind == "result":
            self._result(event, transcript)
        elif kind not in IGNORED:
            transcript.unknown(kind)

    def _system(self, event: Event, transcript: Transcript) -> None:
        data = event.data
        subtype = data.get("subtype")
        if subtype == "init":
            transcript.start_session(
                event.line,
                session_id=text_of(data.get("session_id")),
                model=text_of(data.get("model")) or text_of(dict_of(data.get("settings")).get("model")),
                cwd=text_of(data.get("cwd")) or text_of(data.get("working_directory")),
                started_at=event.stamp,
            )
        elif subtype == "compact_boundary":
            meta = dict_of(data.get("compact_metadata"))
            detail = ", ".join(f"{k} {v}" for k, v in meta.items() if isinstance(v, str | int | float))
            transcript.compaction(event.line, event.stamp, detail or "context compacted")

    def _result(self, event: Event, transcript: Transcript) -> None:
        data = event.data
        if not transcript.sessions:
            transcript.start_session(event.line)
        session = transcript.sessions[-1]
        session.ended_at = event.stamp
        subtype = text_of(data.get("subtype"))
        session.outcome = subtype
        if data.get("is_error") is True:
            # An auth failure ends with subtype "success" and is_error: the session did not succeed.
            session.outcome = subtype if subtype and subtype.startswith("error") else "error"
            said = text_of(data.get("result")) or ", ".join(
                text for e in list_of(data.get("errors")) if (text := text_of(e))
            )
            if said and session.error is None:
                session.error = said[:MAX_DETAIL_CHARS]
            elif said:
                session.error = f"{session.error}; {said}"[:MAX_DETAIL_CHARS]
        session.cost_usd = json_number(data.get("total_cost_usd"))
        if data.get("is_error") is not True:
            transcript.said(text_of(data.get("result")), event.line, event.stamp, final=True)

    def _error(self, error: str, event: Event, transcript: Transcript) -> None:
        """Read an assistant message the CLI wrote for an API error (``"error": "authentication_failed"``)."""
        data = event.data
        if not transcript.sessions:
            transcript.start_session(event.line)
        words = [
            text
            for block in list_of(dict_of(data.get("message")).get("content"))
            if (text := text_of(dict_of(block).get("text")))
        ]
        said = f"{error}: {' '.join(words)}" if words else error
        session = transcript.sessions[-1]
        if session.error is None:
            session.error = said[:MAX_DETAIL_CHARS]


def _call(block: dict[str, Any], event: Event, session: int) -> ToolCall:
    name = text_of(block.get("name")) or "?"
    args = dict_of(block.get("input"))
    call = ToolCall(
        line=event.line,
        session=session,
        tool=name[:80],
        kind=_kind(name),
        call_id=text_of(block.get("id")),
        started_at=when(event),
    )
    if name == "Bash":
        call.command = text_of(args.get("command"))
        call.background = args.get("run_in_background") is True
        if call.command is None:
            call.kind = "other"
    elif name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        call.edits = _edits(name, args)
        if not call.edits:
            call.kind = "other"
    elif name in STATUS_TOOLS:
        call.task_id = (
            text_of(args.get("bash_id")) or text_of(args.get("task_id")) or text_of(args.get("shell_id"))
        )
    elif name == "Read":
        call.read_path = text_of(args.get("file_path"))
        call.read_whole = "offset" not in args and "limit" not in args
    return call


def _kind(name: str) -> CallKind:
    if name == "Bash":
        return "command"
    if name in ("Write", "Edit", "MultiEdit", "NotebookEdit"):
        return "edit"
    return "read" if name == "Read" else "other"


def _edits(name: str, args: dict[str, Any]) -> list[FileEdit]:
    path = text_of(args.get("file_path")) or text_of(args.get("notebook_path"))
    if path is None:
        return []
    if name == "Write":
        content, cut = edit_body(args.get("content"))
        return [FileEdit(path, "write", content=content, cut=cut or content is None)]
    if name == "NotebookEdit":
        source, cut = edit_body(args.get("new_source"))
        mode = text_of(args.get("edit_mode")) or "replace"
        cell = text_of(args.get("cell_id")) or (str(args["cell_number"]) if "cell_number" in args else None)
        return [FileEdit(path, "notebook", new=source, cell=cell, cell_mode=mode, cut=cut)]
    pieces = list_of(args.get("edits")) if name == "MultiEdit" else [args]
    edits = []
    for piece in pieces:
        piece = dict_of(piece)
        old, cut_old = edit_body(piece.get("old_string"))
        new, cut_new = edit_body(piece.get("new_string"))
        edits.append(
            FileEdit(
                path,
                "replace",
                old=old,
                new=new,
                replace_all=piece.get("replace_all") is True,
                cut=cut_old or cut_new or old is None or new is None,
            )
        )
    return edits


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for item in list_of(content):
        item = dict_of(item)
        if isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif "json" in item:
            parts.append(dumps_short(item["json"], 4000))
    return "\n".join(parts)


def _result(block: dict[str, Any], event: Event, transcript: Transcript) -> None:
    call_id = text_of(block.get("tool_use_id"))
    text = _result_text(block.get("content"))
    is_error = block.get("is_error") is True
    call = transcript.pending(call_id)
    exit_code = None
    moved = BACKGROUND.search(text) if call is not None and call.kind == "command" and not is_error else None
    if call is not None and (moved or (call.background and not is_error)):
        transcript.launched(
            call, line=event.line, at=when(event), output=text, task_id=moved[1] if moved else None
        )
        return
    if call is not None and call.tool in STATUS_TOOLS and call.task_id:
        _status_report(call.task_id, text, event, transcript)
    if call is not None and call.kind == "command":
        match = EXIT_CODE.match(text) if is_error else None
        # Claude Code reports a non-zero exit as an error result that starts "Exit code N"; a
        # successful result means exit 0, unless the command was sent to the background.
        exit_code = int_of(int(match[1])) if match else (None if is_error or call.background else 0)
    transcript.finish(
        call_id,
        line=event.line,
        at=when(event),
        output=text,
        exit_code=exit_code,
        is_error=is_error,
        error=text[:2000] if is_error else None,
    )


def _status_report(task_id: str, text: str, event: Event, transcript: Transcript) -> None:
    """Read a background task's status report; an ended task's call gets its end and exit code."""
    status = STATUS_TAG.search(text)
    if status is None or status[1].lower() not in ENDED:
        return
    code = EXIT_TAG.search(text)
    exit_code = int_of(int(code[1] or code[2])) if code else None
    transcript.background_ended(
        task_id, line=event.line, at=when(event), exit_code=exit_code, status=status[1].lower()
    )


def _notification(text: str, event: Event, transcript: Transcript) -> None:
    """Read a ``<task-notification>`` the harness put in the conversation when a background task ended."""
    if "<task-notification>" not in text:
        return
    task = TASK_TAG.search(text)
    if task is not None:
        _status_report(task[1], text, event, transcript)
