"""Codex renderings: new_judge_v2's labelled items, main's dumps of ``{"item": …}``, and legacy events."""

from __future__ import annotations

from typing import Any

from arb_audit.collectors.reading import text_int
from arb_audit.collectors.transcripts.events import CallKind, ToolCall, Transcript
from arb_audit.collectors.transcripts.patches import split_apply_patch
from arb_audit.collectors.transcripts.rendered.blocks import (
    as_text,
    block_text,
    dedent,
    first_line,
    joined,
    real_id,
    sections,
)
from arb_audit.collectors.transcripts.rendered.codex_items import CODEX_LABELS, changes, outcome, read_item
from arb_audit.collectors.transcripts.rendered.dumps import parse_dump
from arb_audit.collectors.transcripts.rendered.event_blocks import Event, Notes
from arb_audit.collectors.transcripts.rendered.inputs import command_text

CODEX_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "session_configured",
        "task_started",
        "task_complete",
        "turn_started",
        "turn_complete",
        "agent_message",
        "agent_message_delta",
        "user_message",
        "exec_command_begin",
        "exec_command_output_delta",
        "exec_command_end",
        "agent_reasoning",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content",
        "agent_reasoning_raw_content_delta",
        "token_count",
        "warning",
        "mcp_tool_call_begin",
        "mcp_tool_call_end",
        "patch_apply_begin",
        "patch_apply_end",
        "turn_aborted",
    }
)
"""The event types only Codex's renderers write."""
_QUIET = CODEX_TYPES - {
    "thread.started",
    "item.started",
    "item.updated",
    "item.completed",
    "session_configured",
    "exec_command_begin",
    "exec_command_end",
    "patch_apply_begin",
    "patch_apply_end",
}
"""Codex events that hold no tool activity (messages, reasoning, token counts, turn marks)."""
_QUIET_ITEMS = frozenset({"reasoning", "agent_message", "todo_list", "error", "plan"})
_TOOL_ITEMS = frozenset({"mcp_tool_call", "web_search", "collab_tool_call"})

_MISSING = [
    "file contents of file_change items (only each file's path and kind are shown)",
    "trailing whitespace at the end of each command's output",
]


class CodexReader:
    """Codex renderings: new_judge_v2's labelled items and main's JSON dumps of ``{"item": …}``."""

    def __init__(self, transcript: Transcript, notes: Notes) -> None:
        self.t = transcript
        self.notes = notes

    def feed(self, event: Event) -> None:
        """Read one event."""
        if event.type == "thread.started":
            self._thread(event)
        elif event.type in ("item.started", "item.updated", "item.completed"):
            item = read_item(event, self.notes)
            if item is not None:
                self._on_item(event, item)
        elif event.type == "session_configured":
            self._configured(event)
        elif event.type in ("exec_command_begin", "exec_command_end"):
            self._exec(event)
        elif event.type in ("patch_apply_begin", "patch_apply_end"):
            self._patch(event)
        elif event.type not in _QUIET:
            self.t.unknown(event.type or "?")

    def _thread(self, event: Event) -> None:
        thread = first_line(sections(event.body, CODEX_LABELS), "Thread")
        if thread is None and (dump := parse_dump(dedent(event.body, 2))) is not None:
            thread = as_text(dump.values.get("thread_id"))
        self.t.start_session(event.line, session_id=thread, started_at=event.at)

    def _on_item(self, event: Event, item: dict[str, Any]) -> None:
        kind = as_text(item.get("type")) or event.sub or "?"
        item_id = real_id(as_text(item.get("id")) or event.fields.get("id"))
        if kind == "command_execution":
            call = self._open(event, item_id, "command_execution", "command")
            call.command = call.command or command_text(item.get("command"))
            self._close(event, call, item, output=as_text(item.get("aggregated_output")))
        elif kind == "file_change":
            call = self._open(event, item_id, "file_change", "edit")
            call.edits = changes(item.get("changes")) or call.edits
            self._close(event, call, item)
        elif kind in _TOOL_ITEMS:
            call = self._open(event, item_id, kind, "other")
            self._close(event, call, item)
        elif kind not in _QUIET_ITEMS:
            self.t.unknown(f"item {kind}")

    def _open(self, event: Event, item_id: str | None, tool: str, kind: CallKind) -> ToolCall:
        """Return the call an ``item.started`` opened, or a new one (appended now only if it has an id)."""
        call = self.t.pending(item_id)
        if call is not None:
            return call
        call = ToolCall(
            line=event.line,
            session=self.t.session,
            tool=tool,
            kind=kind,
            call_id=item_id,
            started_at=event.at,
        )
        if item_id is not None:
            self.t.add_call(call)
        return call

    def _close(self, event: Event, call: ToolCall, item: dict[str, Any], output: str | None = None) -> None:
        """Finish the call on ``item.completed``; a call without an id is appended here either way."""
        if call.call_id is None:
            self.t.add_call(call)
        if event.type == "item.completed":
            self.t.complete(call, **outcome(event, item, output))

    def _configured(self, event: Event) -> None:
        found = sections(event.body, CODEX_LABELS)
        self.t.start_session(
            event.line,
            session_id=first_line(found, "Session"),
            model=first_line(found, "Model"),
            cwd=first_line(found, "Working directory"),
            started_at=event.at,
        )

    def _exec(self, event: Event) -> None:
        found = sections(event.body, CODEX_LABELS)
        call_id = real_id(first_line(found, "Call ID"))
        call = self.t.pending(call_id)
        if call is None:
            call = ToolCall(
                event.line, self.t.session, "exec_command", "command", call_id, started_at=event.at
            )
            call.command = joined(found.get("Command"), 2)
            call.cwd = first_line(found, "Working directory")
        if event.type == "exec_command_begin":
            self.t.add_call(call)
            return
        if self.t.pending(call_id) is not call:
            self.t.add_call(call)  # no begin event was seen: the call and its end are one record
        parts = [block_text(found.get(name), 4) for name in ("Stdout", "Stderr")]
        code = text_int(first_line(found, "Exit code") or "")
        self.t.complete(
            call,
            line=event.line,
            at=event.at,
            output="\n".join(part for part in parts if part) or None,
            exit_code=code,
            is_error=None if code is None else code != 0,
        )

    def _patch(self, event: Event) -> None:
        found = sections(event.body, CODEX_LABELS)
        call_id = real_id(first_line(found, "Call ID"))
        if event.type == "patch_apply_begin":
            call = ToolCall(event.line, self.t.session, "apply_patch", "edit", call_id, started_at=event.at)
            call.edits = split_apply_patch(block_text(found.get("Patch"), 4) or "")
            self.t.add_call(call)
            return
        failed = "Success" not in found  # the renderer prints ``Success:`` only when it is true
        error = joined(found.get("Error"), 2) if failed else None
        self.t.finish(call_id, line=event.line, at=event.at, is_error=failed, error=error)

    def missing(self) -> list[str]:
        """Return what a Codex rendering could not show."""
        found = list(_MISSING)
        if self.notes.untimed_items:
            found.append(f"event times of item events ({self.notes.untimed_items:,} item headers carry none)")
        if self.notes.loose_dumps:
            found.append(
                f"the quoting of multi-line values in {self.notes.loose_dumps:,} item dump(s)"
                " (read by their layout; their text may be inexact)"
            )
        return found
