"""Tool inputs into calls: what each tool does, and the command, file read or file edits its input holds."""

from __future__ import annotations

from typing import Any

from arb_audit.collectors.transcripts.events import MAX_BODY_CHARS, CallKind, FileEdit, ToolCall
from arb_audit.collectors.transcripts.rendered.blocks import as_text
from arb_audit.collectors.transcripts.rendered.dumps import Dump

_ROLES = {
    "bash": "command",
    "run_shell_command": "command",
    "shell": "command",
    "write": "write",
    "write_file": "write",
    "edit": "replace",
    "replace": "replace",
    "multiedit": "multi",
    "notebookedit": "notebook",
    "read": "read",
    "read_file": "read",
}
"""What a tool does, by its lower-cased name (Claude Code, Gemini CLI and OpenCode names)."""
_INPUT_KEYS = {
    "command": frozenset({"command", "description", "timeout", "run_in_background", "directory", "workdir"}),
    "write": frozenset({"file_path", "filePath", "content"}),
    "replace": frozenset(
        {"file_path", "filePath", "old_string", "new_string", "oldString", "newString", "replace_all"}
        | {"replaceAll", "expected_replacements", "instruction"}
    ),
    "multi": frozenset({"file_path", "edits", "old_string", "new_string", "replace_all"}),
    "notebook": frozenset({"notebook_path", "new_source", "cell_id", "cell_type", "edit_mode"}),
    "read": frozenset({"file_path", "filePath", "absolute_path", "offset", "limit"}),
}
"""The input fields of each kind of tool: inside a dump, only these start a new field."""
_KINDS: dict[str, CallKind] = {"command": "command", "read": "read"}
_PATH_KEYS = ("file_path", "filePath", "absolute_path", "notebook_path", "path")


def _role(tool: str) -> str | None:
    return _ROLES.get(tool.lower())


def kind_of(tool: str) -> CallKind:
    """Return what a call of ``tool`` does (``other`` for a tool not known by name)."""
    role = _role(tool)
    if role is None:
        return "other"
    return _KINDS.get(role, "edit")


def known_keys(tool: str) -> frozenset[str]:
    """Return the input fields of ``tool`` (none for a tool not known by name)."""
    role = _role(tool)
    return _INPUT_KEYS[role] if role is not None else frozenset()


def _path(values: dict[str, Any]) -> str | None:
    for key in _PATH_KEYS:
        if isinstance(values.get(key), str) and values[key]:
            return str(values[key])
    return None


def command_text(value: Any) -> str | None:
    """Return a command given as a string, or as a list (its parts joined with spaces)."""
    if isinstance(value, list):
        return " ".join(str(part) for part in value)
    return as_text(value)


def _too_long(*texts: str | None) -> bool:
    return any(text is not None and len(text) > MAX_BODY_CHARS for text in texts)


def _replace(path: str, values: dict[str, Any], inexact: bool) -> FileEdit:
    old = as_text(values.get("old_string", values.get("oldString")))
    new = as_text(values.get("new_string", values.get("newString")))
    every = values.get("replace_all", values.get("replaceAll")) is True
    cut = inexact or old is None or new is None or _too_long(old, new)
    return FileEdit(path, "replace", old=old, new=new, replace_all=every, cut=cut)


def _edits(role: str, values: dict[str, Any], inexact: bool) -> list[FileEdit]:
    """Return the file edits a write/replace/multi-edit/notebook input asks for (none without a path)."""
    path = _path(values)
    if path is None:
        return []
    if role == "write":
        content = as_text(values.get("content"))
        return [
            FileEdit(path, "write", content=content, cut=inexact or content is None or _too_long(content))
        ]
    if role == "replace":
        return [_replace(path, values, inexact)]
    if role == "multi":
        items = values.get("edits")
        if not isinstance(items, list) or not items:
            return [FileEdit(path, "replace", cut=True)]
        return [_replace(path, item if isinstance(item, dict) else {}, inexact) for item in items]
    source = as_text(values.get("new_source"))
    mode = as_text(values.get("edit_mode")) or "replace"
    cell = values.get("cell_id")
    cell_text = cell if isinstance(cell, str) else None
    cut = inexact or (source is None and mode != "delete")
    return [FileEdit(path, "notebook", new=source, cell=cell_text, cell_mode=mode, cut=cut)]


def apply_input(call: ToolCall, dump: Dump, *, cut: bool) -> None:
    """Fill a call from its input's dump: the command, the file read, or the file edits."""
    values = dump.values
    role = _role(call.tool)
    if role == "command":
        call.command = command_text(values.get("command"))
        call.cwd = as_text(values.get("directory")) or as_text(values.get("workdir"))
    elif role == "read":
        call.read_path = _path(values)
        call.read_whole = values.get("offset") is None and values.get("limit") is None
    elif role is not None:
        call.edits = _edits(role, values, cut or not dump.exact or not dump.complete)
