"""Codex CLI ``exec --json``: the modern ``thread.*``/``turn.*``/``item.*`` stream, and the legacy envelope.

The legacy envelope is ``{"id", "msg": {"type": ...}}``.

Modern ``file_change`` items name the files changed but hold no content; legacy ``patch_apply_begin``
events hold the change itself (a new file's content, or a unified diff). Commands arrive wrapped as
``/bin/bash -lc '<script>'``; the script is what the agent wrote, so that is what is kept.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from arb_audit.collectors.transcripts.events import MAX_BODY_CHARS, FileEdit, ToolCall, Transcript
from arb_audit.collectors.transcripts.formats import EventFormat, dict_of, int_of, list_of, text_of, when
from arb_audit.collectors.transcripts.patches import split_apply_patch
from arb_audit.collectors.transcripts.stream import Event

SHELLS = frozenset({"bash", "/bin/bash", "/usr/bin/bash", "sh", "/bin/sh", "zsh", "/bin/zsh"})
_WRAPPED = re.compile(r"^(?:/usr)?(?:/bin/)?(?:bash|sh|zsh) -l?c ")
MAX_SHLEX_CHARS = 100_000
"""Longest wrapped command unquoted by shlex (pure Python, ~20 µs a character)."""
MODERN_QUIET = frozenset(
    {"turn.started", "turn.completed", "turn.failed", "error", "item.plan.delta", "request_user_input"}
)
"""Modern events that carry no tool call (usage, failures of the model turn, plan deltas)."""
QUIET_ITEMS = frozenset({"agent_message", "reasoning", "todo_list", "web_search", "plan", "error"})
LEGACY_QUIET = frozenset(
    {
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "agent_message",
        "agent_message_delta",
        "agent_reasoning",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "user_message",
        "exec_command_output_delta",
        "token_count",
        "error",
        "warning",
        "stream_error",
        "background_event",
        "turn_diff",
        "turn_aborted",
        "plan_update",
        "get_history_entry_response",
        "exec_approval_request",
        "apply_patch_approval_request",
        "shutdown_complete",
        "web_search_begin",
        "web_search_end",
        "mcp_list_tools_response",
        "list_custom_prompts_response",
        "entered_review_mode",
        "exited_review_mode",
    }
)
"""Legacy events that carry no tool call or outcome the audit uses."""


def unwrap_shell(command: str | list[Any]) -> str:
    """Return the script of ``bash -lc '<script>'`` (string or argv form); other commands as one line."""
    if isinstance(command, list):
        argv = [a for a in command if isinstance(a, str)]
        if len(argv) == 3 and argv[0] in SHELLS and argv[1] in ("-lc", "-c"):
            return argv[2]
        return shlex.join(argv)
    match = _WRAPPED.match(command)
    if match is None:
        return command
    quoted = command[match.end() :]
    if len(quoted) >= 2 and quoted[0] == quoted[-1] == "'":
        # One single-quoted word whose own quotes are written '"'"' or '\'' (how Codex quotes scripts).
        inner = quoted[1:-1].replace("'\"'\"'", "\0").replace("'\\''", "\0")
        if "'" not in inner:
            return inner.replace("\0", "'")
    if len(quoted) > MAX_SHLEX_CHARS:
        return command  # shlex is slow on megabytes; the command is kept as it was
    try:
        argv = shlex.split(quoted)
    except ValueError:
        return command
    return argv[0] if len(argv) == 1 else command


class CodexFormat(EventFormat):
    """Reads the modern Codex ``exec --json`` stream."""

    name = "codex"

    @classmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """Modern Codex events are typed ``thread.*``, ``turn.*`` or ``item.*``."""
        kind = text_of(data.get("type"))
        return isinstance(kind, str) and kind.startswith(("thread.", "turn.", "item."))

    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event."""
        data = event.data
        kind = text_of(data.get("type"))
        if kind == "thread.started":
            transcript.start_session(
                event.line, session_id=text_of(data.get("thread_id")), started_at=event.stamp
            )
        elif kind in ("item.started", "item.updated", "item.completed"):
            self._item(dict_of(data.get("item")), kind == "item.completed", event, transcript)
        elif kind == "turn.completed" and transcript.sessions:
            transcript.sessions[-1].ended_at = event.stamp
        elif kind not in MODERN_QUIET:
            transcript.unknown(kind)

    def _item(self, item: dict[str, Any], completed: bool, event: Event, transcript: Transcript) -> None:
        kind = text_of(item.get("type"))
        item_id = text_of(item.get("id"))
        if kind in QUIET_ITEMS:
            if kind == "agent_message" and completed:
                transcript.said(text_of(item.get("text")), event.line, event.stamp)
            return
        call = transcript.pending(item_id)
        if call is None and not (kind in ("command_execution", "file_change", "mcp_tool_call") or completed):
            return
        if call is None:
            call = transcript.add_call(_modern_call(item, event, transcript.session))
        if not completed:
            return
        status = text_of(item.get("status"))
        failed = status in ("failed", "declined")
        error = text_of(dict_of(item.get("error")).get("message"))
        output = text_of(item.get("aggregated_output"))
        transcript.finish(
            call.call_id,
            line=event.line,
            at=when(event),
            output=output,
            exit_code=int_of(item.get("exit_code")),
            is_error=failed or (int_of(item.get("exit_code")) or 0) != 0 or error is not None,
            error=error or (f"status {status}" if failed else None),
        )


def _modern_call(item: dict[str, Any], event: Event, session: int) -> ToolCall:
    kind = text_of(item.get("type")) or "?"
    call = ToolCall(
        line=event.line,
        session=session,
        tool=kind[:80],
        kind="other",
        # An item without an id still has to pair with itself when it arrives completed.
        call_id=text_of(item.get("id")) or f"line-{event.line}",
        started_at=when(event),
    )
    if kind == "command_execution" and (command := item.get("command")) is not None:
        if isinstance(command, str | list):
            call.kind, call.command = "command", unwrap_shell(command)
    elif kind == "file_change":
        for change in list_of(item.get("changes")):
            change = dict_of(change)
            if (path := text_of(change.get("path"))) is not None:
                call.edits.append(FileEdit(path, "delete" if change.get("kind") == "delete" else "touch"))
        call.kind = "edit" if call.edits else "other"
    elif kind == "mcp_tool_call":
        call.tool = f"mcp:{text_of(item.get('server')) or '?'}/{text_of(item.get('tool')) or '?'}"[:80]
    return call


class CodexLegacyFormat(EventFormat):
    """Reads the legacy Codex envelope ``{"id": ..., "msg": {"type": ...}}``."""

    name = "codex_legacy"

    @classmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """Legacy events wrap a typed ``msg`` object."""
        return isinstance(dict_of(data.get("msg")).get("type"), str)

    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event."""
        msg = dict_of(event.data.get("msg"))
        kind = text_of(msg.get("type"))
        if not msg:
            # Codex writes its configuration (prompt, model, sandbox) as a first line without ``msg``.
            return
        if kind == "session_configured":
            transcript.start_session(
                event.line,
                session_id=text_of(msg.get("session_id")),
                model=text_of(msg.get("model")),
                cwd=text_of(msg.get("cwd")),
                started_at=event.stamp,
            )
        elif kind == "exec_command_begin":
            command = msg.get("command")
            transcript.add_call(
                ToolCall(
                    line=event.line,
                    session=transcript.session,
                    tool="exec_command",
                    kind="command" if isinstance(command, str | list) else "other",
                    call_id=text_of(msg.get("call_id")),
                    started_at=when(event),
                    command=unwrap_shell(command) if isinstance(command, str | list) else None,
                    cwd=text_of(msg.get("cwd")),
                )
            )
        elif kind == "exec_command_end":
            code = int_of(msg.get("exit_code"))
            output = text_of(msg.get("aggregated_output")) or "\n".join(
                t for t in (text_of(msg.get("stdout")), text_of(msg.get("stderr"))) if t
            )
            transcript.finish(
                text_of(msg.get("call_id")),
                line=event.line,
                at=when(event),
                output=output,
                exit_code=code,
                is_error=code is not None and code != 0,
                error=(text_of(msg.get("stderr")) or output)[:2000] if code else None,
            )
        elif kind == "patch_apply_begin":
            transcript.add_call(
                ToolCall(
                    line=event.line,
                    session=transcript.session,
                    tool="apply_patch",
                    kind="edit",
                    call_id=text_of(msg.get("call_id")),
                    started_at=when(event),
                    edits=_legacy_changes(msg),
                )
            )
        elif kind == "patch_apply_end":
            ok = msg.get("success") is not False
            transcript.finish(
                text_of(msg.get("call_id")),
                line=event.line,
                at=when(event),
                output=text_of(msg.get("stdout")),
                is_error=not ok,
                error=None if ok else (text_of(msg.get("stderr")) or "the patch did not apply"),
            )
        elif kind in ("mcp_tool_call_begin", "mcp_tool_call_end"):
            self._mcp(kind, msg, event, transcript)
        elif kind not in LEGACY_QUIET:
            transcript.unknown(kind)

    def _mcp(self, kind: str, msg: dict[str, Any], event: Event, transcript: Transcript) -> None:
        call_id = text_of(msg.get("call_id"))
        if kind == "mcp_tool_call_begin":
            invocation = dict_of(msg.get("invocation")) or msg
            server = text_of(invocation.get("server")) or text_of(invocation.get("server_name")) or "?"
            tool = text_of(invocation.get("tool")) or text_of(invocation.get("tool_name")) or "?"
            transcript.add_call(
                ToolCall(
                    event.line, transcript.session, f"mcp:{server}/{tool}"[:80], "other", call_id, when(event)
                )
            )
        else:
            transcript.finish(call_id, line=event.line, at=when(event))


def _legacy_changes(msg: dict[str, Any]) -> list[FileEdit]:
    """Return the per-file changes of ``patch_apply_begin`` (a ``changes`` map, or a ``patch`` text)."""
    edits: list[FileEdit] = []
    for path, change in dict_of(msg.get("changes")).items():
        change = dict_of(change)
        if "add" in change:
            content = text_of(dict_of(change["add"]).get("content"))
            too_long = content is not None and len(content) > MAX_BODY_CHARS
            edits.append(
                FileEdit(
                    path, "write", content=None if too_long else content, cut=content is None or too_long
                )
            )
        elif "delete" in change:
            edits.append(FileEdit(path, "delete"))
        elif "update" in change:
            update = dict_of(change["update"])
            diff = text_of(update.get("unified_diff"))
            edits.append(
                FileEdit(
                    path, "patch", patch=diff, move_to=text_of(update.get("move_path")), cut=diff is None
                )
            )
    if not edits and (patch := text_of(msg.get("patch"))) is not None:
        edits = split_apply_patch(patch)
    return edits
