"""Where a recording keeps its files and finds its workspace (for the recorder, verifier and collector).

Read by the recorder, the verifier and the `recorded` collector. Kept apart from the recorder so that
reading a recording imports none of the recording machinery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from arb_audit.regular_files import read_regular

RECORDING_MARKER = "recording.json"
"""The file that marks a folder as an arb-audit recording (and says what was recorded)."""
STORE_NAME = "run.duckdb"
"""The recording's run store, inside the recording folder."""
MAX_MARKER_BYTES = 1024 * 1024
"""Largest ``recording.json`` read (the recorder writes well under a kilobyte)."""
MAX_PATH_CHARS = 4096
"""Longest workspace path taken from ``recording.json``."""


def is_recording(run_dir: Path) -> bool:
    """Tell whether ``run_dir`` is a folder written by ``arb-audit record``."""
    return (run_dir / RECORDING_MARKER).is_file() and (run_dir / STORE_NAME).is_file()


ANCHOR_NAME = "ledger.anchor"
"""The recording's anchor of its ledger: the chain's head after every append, outside the store."""
AGENT_OUTPUT = "agent.log"
"""The agent's stdout and stderr; a transcript when the agent prints one (Claude Code ``stream-json``)."""


def read_marker(run_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
    """Return ``recording.json`` of ``run_dir`` as a JSON object, or None and why it cannot be read."""
    path = run_dir / RECORDING_MARKER
    try:
        if path.is_symlink() or not path.is_file():
            return None, "is not a regular file"
        if path.stat().st_size > MAX_MARKER_BYTES:
            return None, f"is over {MAX_MARKER_BYTES:,} bytes; not read"
        raw = read_regular(path, MAX_MARKER_BYTES)  # a FIFO swapped in meanwhile is not waited on
        if len(raw) > MAX_MARKER_BYTES:
            return None, f"is over {MAX_MARKER_BYTES:,} bytes; not read"
        data = json.loads(raw.decode("utf-8-sig"))
    except OSError as exc:
        return None, f"cannot be read: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        return None, f"is not UTF-8 (byte {exc.start}); not read"
    except json.JSONDecodeError as exc:
        return None, f"is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        return None, f"is not readable JSON: {str(exc)[:200]}"
    if not isinstance(data, dict):
        return None, f"holds a JSON {type(data).__name__}, not an object"
    return data, None


@dataclass(slots=True)
class Workspace:
    """Where a recording's workspace is on this machine, and how it was found."""

    path: Path | None = None
    """The workspace folder, or None when it cannot be found."""
    fallback: str | None = None
    """Set when it was found by an absolute path of the machine that recorded it, not beside the
    recording: the line saying so (a user must know which files were checked)."""
    problems: list[str] = field(default_factory=list)
    """What about the workspace cannot be used, and why it is not found; about ``recording.json``."""


def _kind(value: object) -> str:
    """Name what an unusable path field holds."""
    if value == "":
        return "an empty string"
    if isinstance(value, str):
        return f"a string with a NUL character or over {MAX_PATH_CHARS:,} characters"
    return f"a JSON {_JSON_TYPES.get(type(value), 'value')}"


_JSON_TYPES = {
    bool: "boolean",
    int: "number",
    float: "number",
    list: "list",
    dict: "object",
    type(None): "null",
}


def _is_dir(path: Path) -> bool:
    """Tell whether ``path`` is a folder; not when it cannot be looked at (a name too long, no access)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def locate_workspace(
    run_dir: Path, marker: Mapping[str, Any] | None, recorded: str | None = None
) -> Workspace:
    """Find the workspace of the recording at ``run_dir``: beside the recording first, then by absolute path.

    ``marker`` is ``recording.json`` as read (None when it could not be); ``recorded`` is the absolute
    path the run store keeps, used when ``recording.json`` gives none. The path relative to the
    recording wins: a recording moved or cloned together with its workspace reads its own workspace,
    never the one it was copied from. It must stay in the folder the recording lies in (the recorder
    writes ``../workspace``-like paths only); one that leads elsewhere is not followed. An absolute
    path is only a fallback, and using it is said (``fallback``). The messages do not name
    ``recording.json``: the caller says where they come from.
    """
    found = Workspace()
    home = run_dir.resolve()
    tried: list[str] = []
    relative = marker.get("workspace_relative") if marker is not None else None
    if relative is not None:
        if (
            not isinstance(relative, str)
            or not relative
            or "\x00" in relative
            or len(relative) > MAX_PATH_CHARS
        ):
            found.problems.append(f"workspace_relative is {_kind(relative)}, not a relative path; not used")
        elif PurePosixPath(relative).is_absolute():
            found.problems.append(f"workspace_relative {relative!r} is an absolute path; not used")
        else:
            candidate = _resolved(home / relative)
            if (
                candidate is None
                or not candidate.is_relative_to(home.parent)
                or candidate == home.parent
                or candidate.is_relative_to(home)
            ):
                found.problems.append(
                    f"workspace_relative {relative!r} leads out of the folder the recording lies in"
                    f" ({home.parent}); not followed"
                )
            elif _is_dir(candidate):
                found.path = candidate
                return found
            else:
                tried.append(f"{candidate} (beside the recording)")
    absolute = marker.get("workspace") if marker is not None else None
    for source, value in (("recording.json", absolute), ("the run store", recorded)):
        if value is None or (source == "the run store" and absolute is not None):
            continue
        if not isinstance(value, str) or "\x00" in value or len(value) > MAX_PATH_CHARS:
            found.problems.append(f"workspace ({source}) is {_kind(value)}, not a path; not used")
            continue
        if not PurePosixPath(value).is_absolute():
            found.problems.append(f"workspace ({source}) {value!r} is not an absolute path; not used")
            continue
        candidate = _resolved(Path(value))
        if candidate is not None and home.is_relative_to(candidate):
            found.problems.append(f"workspace ({source}) {value} holds the recording itself; not used")
            continue
        if candidate is not None and _is_dir(candidate):
            why = (
                f"it is not beside the recording at {tried[0].removesuffix(' (beside the recording)')}"
                if tried
                else "no path relative to the recording is given"
            )
            found.path = candidate
            found.fallback = (
                f"the workspace is read at {value}, the absolute path kept by {source} of the machine that"
                f" recorded it ({why})"
            )
            return found
        tried.append(value)
    if len(tried) == 1:
        found.problems.append(f"the workspace is gone: {tried[0]} is not a folder")
    elif tried:
        found.problems.append(f"the workspace is gone: neither {tried[0]} nor {tried[1]} is a folder")
    elif not found.problems:
        found.problems.append("names no workspace (neither workspace_relative nor workspace)")
    return found


def _resolved(path: Path) -> Path | None:
    """``path`` with its links followed, or None when that fails (a loop, an unreadable folder)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None
