"""The code history a transcript shows: every file write and edit applied in order, file by file.

Each tool call that changes a file's rebuilt contents is a step; the caller commits each step as a
revision (trigger ``transcript-edit``). An edit that cannot be applied (its old string is not in the
file, the file was never seen, its text was cut) is a gap: the file keeps its last known contents and
the history goes on. A file first seen through an edit can be seeded from an earlier whole ``Read`` of
it. Edits whose tool reported failure are not applied: the agent's file did not change either.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from arb_audit.collectors.transcripts.events import MAX_BODY_CHARS, FileEdit, ToolCall, Transcript
from arb_audit.collectors.transcripts.patches import PatchError, apply_patch, find_patches, split_apply_patch
from arb_audit.collectors.transcripts.paths import PathMap
from arb_audit.collectors.transcripts.shell_writes import shell_writes

MAX_FILES = 5000
"""Most files a rebuilt tree holds; later new files are gaps."""
MAX_TREE_CHARS = 64 * 1024 * 1024
"""Most characters the rebuilt tree holds in all (a workspace's code is a few megabytes); a change that
would grow it past this is a gap. Without it, files each grown to :data:`MAX_BODY_CHARS` by one small
``replace_all`` edit could ask for gigabytes."""
MAX_GAPS_LISTED = 20
"""Gaps reported one by one; the rest are counted."""
_READ_LINE = re.compile(r"^ *(\d+)(?:\t|→|\| ?)(.*)$")
"""A line of a ``Read`` output: ``cat -n`` numbering, then a tab or an arrow (Claude Code), or
zero-padded numbering and a bar (OpenCode's ``00001| …`` inside ``<file>`` tags)."""
READ_PAGE_LINES = 2000
"""Claude Code's ``Read`` returns at most this many lines: a read that long may not be the whole file."""


@dataclass(frozen=True, slots=True)
class Gap:
    """An edit the history could not apply."""

    line: int
    """Transcript line of the call."""
    path: str
    """The file (workspace-relative)."""
    reason: str
    """Why it could not be applied."""


@dataclass(frozen=True, slots=True)
class Step:
    """One tool call that changed the rebuilt tree."""

    call_index: int
    """Index of the call in ``transcript.calls``."""
    line: int
    """Transcript line of the call."""
    at: datetime | None
    """When the call was made, if known."""
    tool: str
    """The tool that made the change."""
    changed: dict[str, bytes | None]
    """Files changed: new contents, or None for a deleted file."""
    note: str = ""
    """How the change was recovered when it is not a plain file tool (here-document, seeded Read)."""


@dataclass(slots=True)
class History:
    """The rebuilt history's final state and what could not be rebuilt."""

    files: dict[str, str] = field(default_factory=dict)
    """Every file's last rebuilt contents (workspace-relative path → text)."""
    steps: int = 0
    """Steps taken (each one a revision)."""
    gaps: list[Gap] = field(default_factory=list)
    """Edits that could not be applied."""
    unapplied_failed: int = 0
    """Edits not applied because their tool reported failure."""
    unknown_content: set[str] = field(default_factory=set)
    """Files known to have changed in ways the transcript does not show (Codex ``file_change``)."""
    seeded: set[str] = field(default_factory=set)
    """Files whose first contents came from a ``Read`` rather than a write."""


def read_output_text(output: str) -> str | None:
    """Rebuild a file from a whole ``Read`` output (numbered lines from 1); None if it is not one."""
    lines: list[str] = []
    for raw in output.split("\n"):
        match = _READ_LINE.match(raw)
        if match is None:
            if lines:
                break  # what follows the numbered block (a system reminder, a closing tag) is not the file
            if raw.strip() and raw.strip() != "<file>":
                return None
            continue
        if int(match[1]) != len(lines) + 1:
            return None
        lines.append(match[2])
    if not lines or len(lines) >= READ_PAGE_LINES:
        return None
    return "\n".join(lines) + "\n"


class _Builder:
    def __init__(self, transcript: Transcript, paths: PathMap, on_step: Callable[[Step], None]) -> None:
        self.transcript, self.paths, self.on_step = transcript, paths, on_step
        self.history = History()
        self.reads: dict[str, str] = {}
        self.cwd: dict[int, str | None] = {s.number: s.cwd for s in transcript.sessions}
        self.folders: Counter[str] = Counter()
        """How many rebuilt files lie under each folder path."""
        self.chars = 0
        """Characters the rebuilt files hold in all."""

    def gap(self, call: ToolCall, path: str, reason: str) -> None:
        self.history.gaps.append(Gap(call.line, path, reason))

    def run(self) -> History:
        for index, call in enumerate(self.transcript.calls):
            if call.kind == "read":
                self._remember_read(call)
            elif call.kind == "edit":
                self._file_tool(index, call)
            elif call.kind == "command" and call.command:
                self._shell(index, call)
        return self.history

    def _rel(self, call: ToolCall, path: str) -> str | None:
        return self.paths.rel(path, call.cwd or self.cwd.get(call.session))

    def _remember_read(self, call: ToolCall) -> None:
        if call.read_path and call.read_whole and call.full_output and not call.is_error:
            rel = self._rel(call, call.read_path)
            text = read_output_text(call.full_output)
            if rel is not None and text is not None:
                self.reads[rel] = text

    def _file_tool(self, index: int, call: ToolCall) -> None:
        if call.is_error:
            self.history.unapplied_failed += len(call.edits)
            return
        staged: dict[str, str | None] = {}
        notes: list[str] = []
        failed: set[str] = set()
        for edit in call.edits:
            rel = self._rel(call, edit.path)
            if rel is None:
                self.gap(call, edit.path[:200], "the path cannot be placed in the workspace")
            elif rel not in failed and not self._apply(call, edit, rel, staged, notes):
                # Several edits of one file apply all or nothing (MultiEdit); other files still change.
                failed.add(rel)
                staged.pop(rel, None)
        self._commit(index, call, staged, "; ".join(notes))

    def _current(self, rel: str, staged: dict[str, str | None], notes: list[str]) -> str | None:
        if rel in staged:
            return staged[rel]
        if rel in self.history.files:
            return self.history.files[rel]
        if rel in self.reads:
            self.history.seeded.add(rel)
            notes.append(f"{rel} first seen through a Read")
            return self.reads[rel]
        return None

    def _apply(
        self, call: ToolCall, edit: FileEdit, rel: str, staged: dict[str, str | None], notes: list[str]
    ) -> bool:
        if edit.cut:
            self.gap(call, rel, f"the {edit.op} is too long or was cut off in the transcript")
            return False
        if edit.op == "write" or (edit.op == "replace" and not edit.old and rel not in self.history.files):
            # An Edit with an empty old string creates the file (Claude Code, Gemini CLI).
            staged[rel] = (edit.content if edit.op == "write" else edit.new) or ""
        elif edit.op == "delete":
            staged[rel] = None
        elif edit.op == "touch":
            self.history.unknown_content.add(rel)
            return True
        else:
            before = self._current(rel, staged, notes)
            if before is None:
                self.gap(call, rel, f"a {edit.op} of a file whose contents were never seen")
                return False
            after = self._changed(call, edit, rel, before)
            if after is None:
                return False
            staged[rel] = after
            if edit.op == "patch" and edit.move_to and (target := self._rel(call, edit.move_to)):
                staged[rel], staged[target] = None, after
        return True

    def _changed(self, call: ToolCall, edit: FileEdit, rel: str, before: str) -> str | None:
        if edit.op == "replace":
            old, new = edit.old or "", edit.new or ""
            count = before.count(old) if old else 0
            if count == 0:
                self.gap(call, rel, "the text to replace is not in the rebuilt file")
                return None
            if count > 1 and not edit.replace_all:
                self.gap(call, rel, f"the text to replace occurs {count} times; the edit is ambiguous")
                return None
            if len(before) + (count if edit.replace_all else 1) * (len(new) - len(old)) > MAX_BODY_CHARS:
                self.gap(call, rel, "the file would grow past the size the history keeps")
                return None
            return before.replace(old, new) if edit.replace_all else before.replace(old, new, 1)
        if edit.op == "patch":
            try:
                return apply_patch(before, edit.patch or "")
            except PatchError as exc:
                self.gap(call, rel, f"the patch does not apply: {exc}")
                return None
        return _notebook(before, edit, lambda why: self.gap(call, rel, why))

    def _shell(self, index: int, call: ToolCall) -> None:
        # A here-document is written before the rest of the script runs, so a later failure in the
        # same command does not undo it; a command that never ran (declined, no result) wrote nothing.
        ran = call.finished and (call.exit_code is not None or not call.is_error)
        if not ran or call.command_cut:
            return
        script = call.command or ""
        staged: dict[str, str | None] = {}
        notes: list[str] = []
        for write in shell_writes(script, call.cwd or self.cwd.get(call.session)):
            rel = self._rel(call, write.path)
            if rel is None:
                continue
            before = self._current(rel, staged, notes) if write.append else ""
            if before is None:
                self.gap(call, rel, "an append to a file whose contents were never seen")
                continue
            staged[rel] = before + write.content
            notes.append(
                f"{rel} from a here-document"
                + (" (the shell may have expanded $… in it)" if write.expanded else "")
            )
        for patch in find_patches(script):
            for edit in split_apply_patch(patch):
                rel = self._rel(call, edit.path)
                if rel is not None and self._apply(call, edit, rel, staged, notes):
                    notes.append(f"{rel} from an apply_patch command")
        self._commit(index, call, staged, "; ".join(notes))

    def _commit(self, index: int, call: ToolCall, staged: dict[str, str | None], note: str) -> None:
        files = self.history.files
        changed: dict[str, bytes | None] = {}
        for rel, text in staged.items():
            if text is not None and (clash := self._clash(rel)) is not None:
                self.gap(call, rel, clash)
            elif text is None:
                if rel in files:
                    self.chars -= len(files.pop(rel))
                    self._file_removed(rel)
                    changed[rel] = None
            elif files.get(rel) != text:
                if rel not in files and len(files) >= MAX_FILES:
                    self.gap(call, rel, f"the rebuilt tree already holds {MAX_FILES:,} files")
                    continue
                if len(text) > MAX_BODY_CHARS:
                    self.gap(call, rel, "the file grew past the size the history keeps")
                    continue
                grown = self.chars - len(files.get(rel, "")) + len(text)
                if grown > MAX_TREE_CHARS:
                    self.gap(call, rel, f"the rebuilt tree would hold over {MAX_TREE_CHARS:,} characters")
                    continue
                if rel not in files:
                    self._file_added(rel)
                files[rel] = text
                self.chars = grown
                changed[rel] = text.encode("utf-8", errors="replace")
        if changed:
            self.history.steps += 1
            self.on_step(Step(index, call.line, call.started_at, call.tool, changed, note))

    def _clash(self, rel: str) -> str | None:
        """Say why ``rel`` cannot be a file of the tree (a folder of that name, or a file on its path)."""
        if self.folders[rel]:
            return "a folder of that name holds rebuilt files"
        for folder in _parents(rel):
            if folder in self.history.files:
                return f"{folder} is a rebuilt file, not a folder"
        return None

    def _file_added(self, rel: str) -> None:
        self.folders.update(_parents(rel))

    def _file_removed(self, rel: str) -> None:
        self.folders.subtract(_parents(rel))


def _parents(rel: str) -> list[str]:
    """``a/b/c.py`` → ``["a", "a/b"]``."""
    parts = rel.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


def _notebook(before: str, edit: FileEdit, gap: Callable[[str], None]) -> str | None:
    """Apply a NotebookEdit (replace, insert after, or delete one cell) to a notebook's JSON text."""
    try:
        notebook = json.loads(before)
    except (ValueError, RecursionError):
        notebook = None
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(notebook, dict) or not isinstance(cells, list):
        gap("the notebook's rebuilt text is not a notebook")
        return None
    if not all(isinstance(c, dict) for c in cells):
        gap("the notebook's rebuilt cells are not all cells")
        return None
    where = next((i for i, c in enumerate(cells) if c.get("id") == edit.cell), None)
    if where is None and edit.cell is not None and edit.cell.isdigit() and len(edit.cell) < 7:
        where = int(edit.cell) if int(edit.cell) < len(cells) else None
    mode = edit.cell_mode or "replace"
    if where is None and not (mode == "insert" and edit.cell is None):
        gap(f"cell {edit.cell!r} is not in the rebuilt notebook")
        return None
    if mode == "delete":
        del cells[where]  # type: ignore[arg-type]
    elif mode == "insert":
        cells.insert(
            0 if where is None else where + 1, {"cell_type": "code", "metadata": {}, "source": edit.new}
        )
    else:
        cells[where]["source"] = edit.new  # type: ignore[index]
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def rebuild(transcript: Transcript, paths: PathMap, on_step: Callable[[Step], None]) -> History:
    """Replay the transcript's file changes in order, calling ``on_step`` for each change of the tree."""
    return _Builder(transcript, paths, on_step).run()
