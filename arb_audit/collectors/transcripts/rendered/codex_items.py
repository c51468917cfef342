"""Codex item events: an item's fields, from new_judge_v2's labelled lines or from main's dump."""

from __future__ import annotations

import re
from typing import Any

from arb_audit.collectors.reading import json_int, text_int
from arb_audit.collectors.transcripts.events import FileEdit
from arb_audit.collectors.transcripts.rendered.blocks import (
    as_text,
    block_text,
    dedent,
    first_line,
    joined,
    sections,
)
from arb_audit.collectors.transcripts.rendered.dumps import parse_dump
from arb_audit.collectors.transcripts.rendered.event_blocks import Event, Notes

CODEX_LABELS = re.compile(
    r"^  (?P<label>Item ID|Command|Status|Exit code|Output|Thread|Call ID|Working directory|Stdout|Stderr"
    r"|Session|Model|Provider|Patch|Success|Error|Reasoning|Message):(?: (?P<rest>.*))?$"
)
"""The label lines of the Codex renderings' events."""
_ITEM_KEYS = frozenset(
    {"item", "id", "type", "command", "aggregated_output", "exit_code", "status", "text", "changes", "path"}
    | {"kind", "server", "tool", "arguments", "result", "error", "query", "action", "items", "thread_id"}
)


def read_item(event: Event, notes: Notes) -> dict[str, Any] | None:
    """Return the item's fields, from new_judge_v2's labels or from main's dump (None when unreadable)."""
    if event.sub is not None:
        notes.untimed_items += event.at is None
        return _labelled_item(event)
    dump = parse_dump(dedent(event.body, 2), _ITEM_KEYS)
    item = dump.values.get("item") if dump is not None else None
    if dump is None or not isinstance(item, dict):
        notes.unreadable.add(event.line)
        return None
    notes.loose_dumps += not (dump.exact and dump.complete)
    return item


def _labelled_item(event: Event) -> dict[str, Any]:
    found = sections(event.body, CODEX_LABELS)
    item: dict[str, Any] = {
        "type": event.sub,
        "id": first_line(found, "Item ID") or event.fields.get("id"),
    }
    if event.sub == "command_execution":
        item["command"] = joined(found.get("Command"), 2)
        item["status"] = first_line(found, "Status")
        item["exit_code"] = text_int(first_line(found, "Exit code") or "")
        item["aggregated_output"] = block_text(found.get("Output"), 4)
        return item
    # file_change, web_search and unknown items are JSON dumps under the Item ID line.
    start = next((index for index, text in enumerate(event.body) if text == "  {"), None)
    if start is not None:
        dump = parse_dump(dedent(event.body[start:], 2), _ITEM_KEYS)
        if dump is not None:
            item.update({key: value for key, value in dump.values.items() if key not in ("id", "type")})
    return item


def changes(value: Any) -> list[FileEdit]:
    """Read a ``file_change`` item's changes: paths and kinds only, so each is a ``touch`` (or a delete)."""
    edits: list[FileEdit] = []
    for change in value if isinstance(value, list) else []:
        if isinstance(change, dict) and isinstance(change.get("path"), str):
            edits.append(FileEdit(change["path"], "delete" if change.get("kind") == "delete" else "touch"))
    return edits


def outcome(event: Event, item: dict[str, Any], output: str | None) -> dict[str, Any]:
    """Return the outcome of a completed Codex item (for :meth:`Transcript.complete`)."""
    status = as_text(item.get("status"))
    code = json_int(item.get("exit_code"))
    if status in ("failed", "declined"):
        failed: bool | None = True
    elif code is not None:
        failed = code != 0
    else:
        failed = False if status == "completed" else None
    return {"line": event.line, "at": event.at, "output": output, "exit_code": code, "is_error": failed}
