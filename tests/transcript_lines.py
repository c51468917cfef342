"""Builders of transcript lines in each agent's JSON-lines format, for tests and fixtures.

Each function returns one event as a dict; :func:`jsonl` joins events into file text, with the
PostTrainBench ``[YYYY-MM-DDTHH:MM:SSZ] `` prefix when a time is given. :func:`read_lines` reads
lines back as a transcript of an expected format.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.events import ToolCall, Transcript
from arb_audit.collectors.transcripts.read import read_transcript


def jsonl(events: Sequence[dict[str, Any] | str], *, start: datetime | None = None, step_s: int = 5) -> str:
    """Join events (dicts, or raw strings for stderr lines) into transcript text, one per line."""
    out = []
    for i, event in enumerate(events):
        text = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
        if start is not None:
            moment = datetime.fromtimestamp(start.timestamp() + i * step_s, tz=start.tzinfo)
            text = f"[{moment.strftime('%Y-%m-%dT%H:%M:%SZ')}] {text}"
        out.append(text)
    return "\n".join(out) + "\n"


def read_lines(folder: Path, lines: Sequence[str], expected_format: str) -> Transcript:
    """Write ``lines`` as ``t.jsonl`` in ``folder`` and read it back, checking the detected format."""
    (folder / "t.jsonl").write_text("\n".join(lines) + "\n")
    transcript = read_transcript(RunFolder(folder), "t.jsonl")
    assert transcript is not None and transcript.format == expected_format
    return transcript


def calls_by_id(transcript: Transcript) -> dict[str | None, ToolCall]:
    """Return the transcript's calls by their id."""
    return {c.call_id: c for c in transcript.calls}


# Claude Code stream-json


def claude_init(cwd: str = "/home/ben/task", session: str = "sess-1") -> dict[str, Any]:
    """A ``system`` ``init`` event."""
    return {
        "type": "system",
        "subtype": "init",
        "session_id": session,
        "model": "claude-opus-4-6",
        "cwd": cwd,
        "tools": ["Bash", "Edit", "Write", "Read", "MultiEdit", "TodoWrite"],
    }


def claude_call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """An ``assistant`` event holding one ``tool_use`` block."""
    return {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": call_id, "name": name, "input": args}],
        },
    }


def claude_result(call_id: str, content: str, *, is_error: bool = False) -> dict[str, Any]:
    """A ``user`` event holding the ``tool_result`` of ``call_id``."""
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
            ],
        },
    }


def claude_end(subtype: str = "success", cost: float = 3.5) -> dict[str, Any]:
    """The ``result`` event that ends a session."""
    return {"type": "result", "subtype": subtype, "is_error": False, "num_turns": 9, "total_cost_usd": cost}


def claude_compaction(pre_tokens: int = 180000) -> dict[str, Any]:
    """A ``compact_boundary`` system event."""
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "compact_metadata": {"trigger": "auto", "pre_tokens": pre_tokens},
    }


# Codex exec --json (modern)


def codex_thread(thread_id: str = "0199aa00-demo") -> dict[str, Any]:
    """``thread.started``."""
    return {"type": "thread.started", "thread_id": thread_id}


def codex_command(item_id: str, script: str, output: str = "", exit_code: int = 0) -> dict[str, Any]:
    """A completed ``command_execution`` item, wrapped in ``bash -lc`` as Codex runs it."""
    quoted = "'" + script.replace("'", "'\"'\"'") + "'"
    return {
        "type": "item.completed",
        "item": {
            "id": item_id,
            "type": "command_execution",
            "command": f"/bin/bash -lc {quoted}",
            "aggregated_output": output,
            "exit_code": exit_code,
            "status": "completed" if exit_code == 0 else "failed",
        },
    }


def codex_file_change(item_id: str, *changes: tuple[str, str]) -> dict[str, Any]:
    """A completed ``file_change`` item: (path, kind) pairs, no content."""
    return {
        "type": "item.completed",
        "item": {
            "id": item_id,
            "type": "file_change",
            "changes": [{"path": p, "kind": k} for p, k in changes],
            "status": "completed",
        },
    }


# Codex legacy envelope


def legacy(event_id: str, msg_type: str, **fields: Any) -> dict[str, Any]:
    """A legacy ``{"id", "msg"}`` event."""
    return {"id": event_id, "msg": {"type": msg_type, **fields}}
