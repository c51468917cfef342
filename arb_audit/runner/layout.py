"""Where a recording keeps its files and finds its workspace (for the recorder, verifier and collector).

Read by the recorder, the verifier and the `recorded` collector. Kept apart from the recorder so that
reading a recording imports none of the recording machinery.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from arb_audit.model import TaskDescription
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


MAX_RUN_ID_CHARS = 200
"""Longest run id taken from ``recording.json``."""


@dataclass(frozen=True, slots=True)
class Marker:
    """What ``recording.json`` says that a reader uses, each field checked once, here.

    A field that is missing is None; one that cannot be used is None too, and ``problems`` says why under
    its name (the messages do not name ``recording.json``: the reader says where they come from). The
    recorder also writes what was run (agent, evaluator, task, base model): no reader uses those.
    """

    run_id: str | None = None
    """The run's id (1 to :data:`MAX_RUN_ID_CHARS` characters); None in a recording made before ids."""
    workspace_relative: str | None = None
    """The workspace's path relative to the recording (a non-empty relative path); found there first."""
    workspace: str | None = None
    """The workspace's absolute path on the machine that recorded it: only a fallback."""
    task_description: TaskDescription | None = None
    """What the task is (level, grading split, intended training)."""
    anchored: bool = False
    """Whether it names the ledger's anchor (:data:`ANCHOR_NAME`): one that is gone is then a mismatch."""
    problems: Mapping[str, str] = field(default_factory=dict)
    """Per field that cannot be used: why."""
    workspace_named: bool = False
    """Whether it has a ``workspace`` field, usable or not (the run store's path is then not the fallback)."""


def parse_marker(data: Mapping[str, object]) -> Marker:
    """Check each field a reader uses of ``recording.json`` (a JSON object) into a :class:`Marker`."""
    problems: dict[str, str] = {}
    run_id = data.get("run_id")
    if run_id is not None and (not isinstance(run_id, str) or not 0 < len(run_id) <= MAX_RUN_ID_CHARS):
        shown = _kind(run_id)
        if isinstance(run_id, str) and run_id:  # too long to be an id
            shown = f"{run_id[:40]!r}… ({len(run_id):,} characters, over {MAX_RUN_ID_CHARS:,})"
        problems["run_id"] = f"its run_id is {shown}, not a run id; not used"
        run_id = None
    relative = data.get("workspace_relative")
    if relative is not None:
        if (
            not isinstance(relative, str)
            or not relative
            or "\x00" in relative
            or len(relative) > MAX_PATH_CHARS
        ):
            problems["workspace_relative"] = (
                f"workspace_relative is {_kind(relative)}, not a relative path; not used"
            )
            relative = None
        elif PurePosixPath(relative).is_absolute():
            problems["workspace_relative"] = f"workspace_relative {relative!r} is an absolute path; not used"
            relative = None
    absolute = data.get("workspace")
    if absolute is not None and (why := _not_absolute(absolute, RECORDING_MARKER)) is not None:
        problems["workspace"] = why
    described = data.get("task_description")
    task = None
    if described is not None:
        try:
            if not isinstance(described, dict):
                raise ValueError("not an object")
            task = TaskDescription.from_json(described, RECORDING_MARKER)
        except ValueError as exc:
            problems["task_description"] = (
                f"its task_description cannot be used ({exc}): the task is not described"
            )
    anchor = data.get("anchor")
    if anchor is not None and anchor != ANCHOR_NAME:
        shown = repr(anchor[:40]) if isinstance(anchor, str) else _kind(anchor)
        problems["anchor"] = (
            f"its anchor is {shown}, not {ANCHOR_NAME}; not used (were the anchor gone, the recording would"
            " read as one made before anchors)"
        )
    return Marker(
        run_id=run_id if isinstance(run_id, str) else None,
        workspace_relative=relative if isinstance(relative, str) else None,
        workspace=absolute if isinstance(absolute, str) and "workspace" not in problems else None,
        task_description=task,
        anchored=anchor == ANCHOR_NAME,
        problems=problems,
        workspace_named=absolute is not None,
    )


def read_marker(run_dir: Path) -> tuple[Marker | None, str | None]:
    """Return ``recording.json`` of ``run_dir`` as a :class:`Marker`, or None and why it cannot be read."""
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
    return parse_marker(data), None


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


def _not_absolute(value: object, source: str) -> str | None:
    """Say why ``value`` (a ``workspace`` field, from ``source``) is not an absolute path; None if it is."""
    if not isinstance(value, str) or "\x00" in value or len(value) > MAX_PATH_CHARS:
        return f"workspace ({source}) is {_kind(value)}, not a path; not used"
    if not PurePosixPath(value).is_absolute():
        return f"workspace ({source}) {value!r} is not an absolute path; not used"
    return None


def locate_workspace(run_dir: Path, marker: Marker | None, recorded: str | None = None) -> Workspace:
    """Find the workspace of the recording at ``run_dir``: beside the recording first, then by absolute path.

    ``marker`` is ``recording.json`` as read (None when it could not be); ``recorded`` is the absolute
    path the run store keeps, used when ``recording.json`` gives none. The path relative to the
    recording wins: a recording moved or cloned together with its workspace reads its own workspace,
    never the one it was copied from. It must stay in the folder the recording lies in (the recorder
    writes ``../workspace``-like paths only); one that leads elsewhere is not followed. An absolute
    path is only a fallback, and using it is said (``fallback``). The problems include those of
    ``marker``'s two workspace fields. The messages do not name ``recording.json``: the caller says
    where they come from.
    """
    found = Workspace()
    home = run_dir.resolve()
    tried: list[str] = []
    marker = marker or Marker()
    if "workspace_relative" in marker.problems:
        found.problems.append(marker.problems["workspace_relative"])
    relative = marker.workspace_relative
    if relative is not None:
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
    if "workspace" in marker.problems:
        found.problems.append(marker.problems["workspace"])
    for source, value in ((RECORDING_MARKER, marker.workspace), ("the run store", recorded)):
        if value is None or (source == "the run store" and marker.workspace_named):
            continue
        if source != RECORDING_MARKER and (why := _not_absolute(value, source)) is not None:
            found.problems.append(why)
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
