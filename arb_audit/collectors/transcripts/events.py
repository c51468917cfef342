"""What every transcript format is read into: sessions, tool calls (commands, file edits) and counts.

A format parser (``claude_code``, ``codex``, ``gemini``, ``opencode``, ``rendered``) turns its events
into these records through :class:`Transcript`'s methods; everything downstream (the command timeline,
the rebuilt code history) reads only these records, never a format's own events.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from arb_audit.model import Problem

EditOp = Literal["write", "replace", "delete", "patch", "notebook", "touch"]
"""write: the whole new body; replace: old → new string; delete: the file is removed; patch: an
apply_patch or unified-diff text for this file; notebook: one cell of a .ipynb changed; touch: the file
changed but the transcript does not hold how (Codex ``file_change``)."""

CallKind = Literal["command", "edit", "read", "other"]
"""command: a shell command ran; edit: one or more files were written; read: a file was read whole or
in part; other: any other tool (search, todo list, web, sub-agent)."""

MAX_OUTPUT_CHARS = 2000
"""Longest command output kept per call (the head and the tail, which hold the command's verdict)."""
MAX_OTHER_OUTPUT_CHARS = 300
"""Longest output kept for a call that is not a command (searches, file listings, web pages)."""
MAX_BODY_CHARS = 4 * 1024 * 1024
"""Longest file body, old or new string kept per edit; longer ones are cut and the edit is a gap."""
MAX_RETAINED_CHARS = 256 * 1024 * 1024
"""File bodies, edit strings, command lines and read outputs kept for one transcript in all; past this,
edits are gaps and commands are clipped. With the caps below, this bounds the memory a transcript of any
size costs."""
MAX_CALLS = 50_000
"""Tool calls kept per transcript; later ones are counted and reported. A kept call costs ~8 KB on its
way through the audit (its call, its command row, its place in the report): 100,000 calls without any
output took an audit to 910 MB."""
MAX_OUTPUTS_CHARS = 16 * 1024 * 1024
"""Command and tool outputs kept for one transcript in all (each is copied several times on its way to
the report); past this, each output is clipped to :data:`CLIPPED_OUTPUT_CHARS`."""
CLIPPED_OUTPUT_CHARS = 200
"""What is kept of an output (its head and tail) once :data:`MAX_OUTPUTS_CHARS` is spent."""
MAX_OTHER_CALLS = 20_000
"""Calls of other tools (searches, todo lists, web) kept; later ones are counted only."""
MAX_SESSIONS = 10_000
"""Sessions kept; later session starts continue the last one."""
MAX_EVENT_TYPES = 1_000
"""Distinct unknown event types counted by name; the rest are counted together."""
MAX_DETAIL_CHARS = 500
"""Longest free text kept from an event (compaction details, session fields)."""
MAX_MESSAGE_CHARS = 8_000
"""Longest agent message kept (its last word: the claims it makes are read from it)."""
CLIPPED_COMMAND_CHARS = 4000
"""What is kept of a command line once the budget is spent."""


def clip_output(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """Keep the head and the tail of a long output, marking what was dropped between them."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half:,} characters not kept] …\n{text[-half:]}"


@dataclass(slots=True)
class FileEdit:
    """One change to one file, as the agent asked for it."""

    path: str
    """The path exactly as the transcript writes it (absolute on the agent's machine, or relative)."""
    op: EditOp
    """What kind of change (see :data:`EditOp`)."""
    content: str | None = None
    """write: the whole new body."""
    old: str | None = None
    """replace: the text to find."""
    new: str | None = None
    """replace: the text put in its place; notebook: the cell's new source."""
    replace_all: bool = False
    """replace: every occurrence instead of exactly one."""
    patch: str | None = None
    """patch: the hunks for this file (``*** Begin Patch`` body or a unified diff)."""
    move_to: str | None = None
    """patch: the file's new path when the patch moves it."""
    cell: str | None = None
    """notebook: the cell id (or its 0-based index, as text) the edit targets."""
    cell_mode: str | None = None
    """notebook: ``replace`` (default), ``insert`` or ``delete``."""
    cut: bool = False
    """A body or string was longer than :data:`MAX_BODY_CHARS` (or its line was cut): it cannot apply."""


@dataclass(slots=True)
class ToolCall:
    """One tool call of the agent and, once seen, its outcome."""

    line: int
    """Line of the transcript where the call is."""
    session: int
    """1-based session (a file can hold several ``claude --continue`` / ``codex exec resume`` runs)."""
    tool: str
    """The tool's name as the transcript writes it (``Bash``, ``command_execution``, ``write_file``)."""
    kind: CallKind
    """What the call does (see :data:`CallKind`)."""
    call_id: str | None = None
    """The id that pairs the call with its result, when the format has one."""
    started_at: datetime | None = None
    """When the call was made (event time, or the line's ``[...Z]`` prefix), if known."""
    command: str | None = None
    """command: the shell command line."""
    command_cut: bool = False
    """command: the line was clipped (the budget was spent), so files it writes cannot be rebuilt."""
    cwd: str | None = None
    """command: the working directory, when the format gives it."""
    background: bool = False
    """command: sent to the background, so its result is not its exit."""
    task_id: str | None = None
    """command: the id the harness gave the background task (``Command running in background with ID:
    <id>``), by which its later status reports name it."""
    edits: list[FileEdit] = field(default_factory=list)
    """edit: the changes, in the order they apply."""
    read_path: str | None = None
    """read: the file read."""
    read_whole: bool = False
    """read: no offset or limit was asked, so the output is the file's start (maybe all of it)."""
    finished: bool = False
    """Whether the outcome was seen."""
    ended_at: datetime | None = None
    """When the outcome was seen, if known."""
    exit_code: int | None = None
    """The command's exit code, when the format says it."""
    is_error: bool | None = None
    """Whether the tool reported failure (an edit that did not apply, a command that failed)."""
    error: str | None = None
    """The error message, when the call failed."""
    output: str | None = None
    """The output, clipped to :data:`MAX_OUTPUT_CHARS`."""
    full_output: str | None = None
    """read: the whole output (what the file held), kept only for reads so the history can seed
    a file it never saw written."""
    result_line: int | None = None
    """Line of the transcript where the outcome is."""


@dataclass(slots=True)
class Session:
    """One agent session inside the transcript."""

    number: int
    """1-based order in the file."""
    line: int
    """Line where the session starts."""
    session_id: str | None = None
    """The agent's own session or thread id."""
    model: str | None = None
    """The model driving the agent, when the transcript says."""
    cwd: str | None = None
    """The working directory the agent started in (the workspace root on its machine)."""
    started_at: datetime | None = None
    """When the session started, if known."""
    ended_at: datetime | None = None
    """When the session's final result was written, if known."""
    outcome: str | None = None
    """The session's end as reported (``success``, ``error_max_turns``, ...; ``error`` when the final
    result says ``is_error`` under another subtype)."""
    error: str | None = None
    """The error the agent's CLI itself reported for the session (an API or authentication error, the
    final result's text when it is an error), quoted and shortened; None when none."""
    cost_usd: float | None = None
    """The cost the agent reported for the session."""


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """A message the agent itself wrote (not a tool's output)."""

    text: str
    """Its text, cut to :data:`MAX_MESSAGE_CHARS`."""
    line: int
    """The transcript line it is on."""
    at: datetime | None
    """When, if known."""
    session: int
    """The session it belongs to."""
    final: bool
    """Whether it is the session's final result (Claude Code's ``result`` event), not ordinary prose."""


@dataclass(slots=True)
class Compaction:
    """A context compaction (the agent's history was summarised; constraints may be lost after it)."""

    line: int
    """Line of the event."""
    session: int
    """The session it happened in."""
    at: datetime | None = None
    """When, if known."""
    detail: str = ""
    """What the event says (trigger, tokens before)."""


@dataclass(slots=True)
class Transcript:
    """Everything read from one transcript file."""

    path: str
    """The transcript's path relative to the run folder."""
    format: str = "unknown"
    """The format it was read as (``claude_code``, ``codex``, ``codex_legacy``, ``gemini``, ...)."""
    lossy: bool = False
    """Read from a readable rendering, which drops parts of the events (see ``missing``)."""
    missing: list[str] = field(default_factory=list)
    """For a lossy form: what it cannot show (so what the audit cannot know)."""
    sessions: list[Session] = field(default_factory=list)
    """Sessions in file order."""
    calls: list[ToolCall] = field(default_factory=list)
    """Tool calls in file order."""
    compactions: list[Compaction] = field(default_factory=list)
    """Context compactions."""
    unknown_events: Counter[str] = field(default_factory=Counter)
    """Event types the parser does not know, with how often each occurred."""
    non_json_lines: int = 0
    """Lines that are not JSON events (stderr interleaved into the stream)."""
    lines: int = 0
    """Lines read."""
    first_at: datetime | None = None
    """The earliest time seen in the transcript."""
    last_at: datetime | None = None
    """The latest time seen in the transcript."""
    problems: list[Problem] = field(default_factory=list)
    """What could not be read, each naming this file."""
    dropped_calls: int = 0
    """Calls not kept because of :data:`MAX_CALLS` or :data:`MAX_OTHER_CALLS`."""
    cut_off: str | None = None
    """Why the transcript looks cut off (calls with no result, a session with no end), or None: what a
    cut-off transcript does not show, the audit may not conclude from its absence."""
    final_message: AgentMessage | None = None
    """The agent's own last word: the text of the last session's final result, else its last message
    (a claim to check, never a finding)."""
    _pending: dict[str, list[ToolCall]] = field(default_factory=dict, repr=False)
    _background: dict[str, ToolCall] = field(default_factory=dict, repr=False)
    _retained: int = field(default=0, repr=False)
    _outputs: int = field(default=0, repr=False)
    _outputs_clipped: int = field(default=0, repr=False)
    _other_calls: int = field(default=0, repr=False)

    def problem(self, message: str) -> None:
        """Record a problem about this transcript."""
        self.problems.append(Problem(self.path, message))

    def said(self, text: str | None, line: int, at: datetime | None, *, final: bool = False) -> None:
        """Keep ``text`` as the agent's last word so far; a final result is not replaced by later prose."""
        if not text or not text.strip():
            return
        kept = self.final_message
        if kept is not None and kept.final and not final and kept.session == self.session:
            return
        self.final_message = AgentMessage(text[:MAX_MESSAGE_CHARS], line, at, self.session, final)

    def seen(self, at: datetime | None) -> None:
        """Widen the transcript's time span to include ``at``."""
        if at is None:
            return
        if self.first_at is None or at < self.first_at:
            self.first_at = at
        if self.last_at is None or at > self.last_at:
            self.last_at = at

    @property
    def session(self) -> int:
        """The number of the current session (1 before any session start was seen)."""
        return self.sessions[-1].number if self.sessions else 1

    def start_session(self, line: int, **fields: object) -> Session:
        """Open a new session at ``line`` (fields as in :class:`Session`).

        Results never cross sessions, so calls still waiting stay unanswered (Codex restarts its item
        ids in a resumed session).
        """
        self._pending.clear()
        if len(self.sessions) >= MAX_SESSIONS:
            return self.sessions[-1]
        clipped = {k: v[:MAX_DETAIL_CHARS] if isinstance(v, str) else v for k, v in fields.items()}
        session = Session(number=len(self.sessions) + 1, line=line, **clipped)  # type: ignore[arg-type]
        self.sessions.append(session)
        return session

    def compaction(self, line: int, at: datetime | None, detail: str) -> None:
        """Record a context compaction in the current session."""
        if len(self.compactions) < MAX_SESSIONS:
            self.compactions.append(Compaction(line, self.session, at, detail[:MAX_DETAIL_CHARS]))

    def unknown(self, kind: object) -> None:
        """Count one event of a type the parser does not know."""
        name = "(no type)" if kind is None else str(kind)[:80]
        if name not in self.unknown_events and len(self.unknown_events) >= MAX_EVENT_TYPES:
            name = "(other types)"
        self.unknown_events[name] += 1

    def _retain(self, chars: int) -> bool:
        """Count ``chars`` more kept characters; False (nothing counted) when the budget is spent."""
        if self._retained + chars > MAX_RETAINED_CHARS:
            return False
        self._retained += chars
        return True

    def kept_output(self, output: str, limit: int = MAX_OUTPUT_CHARS) -> str:
        """Return what is kept of a call's output: its head and tail within ``limit``.

        Once the transcript's budget for outputs (:data:`MAX_OUTPUTS_CHARS`) is spent, shorter still.
        """
        kept = clip_output(output, limit)
        if self._outputs + len(kept) > MAX_OUTPUTS_CHARS and len(kept) > CLIPPED_OUTPUT_CHARS:
            kept = clip_output(output, CLIPPED_OUTPUT_CHARS)
            self._outputs_clipped += 1
        self._outputs += len(kept)
        return kept

    def add_call(self, call: ToolCall) -> ToolCall:
        """Append a call; a call with an id waits for its outcome under that id (first in, first out).

        Past :data:`MAX_CALLS` (or :data:`MAX_OTHER_CALLS` for other tools) the call is counted, not kept.
        """
        if call.kind == "other":
            self._other_calls += 1
        if len(self.calls) >= MAX_CALLS or (call.kind == "other" and self._other_calls > MAX_OTHER_CALLS):
            self.dropped_calls += 1
            return call
        for edit in call.edits:
            size = sum(len(t) for t in (edit.content, edit.old, edit.new, edit.patch) if t)
            if not self._retain(size):
                edit.content = edit.old = edit.new = edit.patch = None
                edit.cut = True
        if call.command is not None and not self._retain(len(call.command)):
            call.command, call.command_cut = call.command[:CLIPPED_COMMAND_CHARS], True
        self.calls.append(call)
        if call.call_id is not None and not call.finished:
            self._pending.setdefault(call.call_id, []).append(call)
        return call

    def launched(
        self, call: ToolCall, *, line: int, at: datetime | None, output: str, task_id: str | None
    ) -> None:
        """Record that ``call`` was moved to the background: started, not finished.

        Its end comes from a later status report (:meth:`background_ended`) or never.
        """
        waiting = self._pending.get(call.call_id) if call.call_id is not None else None
        if waiting and call in waiting:
            waiting.remove(call)
            if not waiting:
                del self._pending[call.call_id]  # type: ignore[arg-type]
        call.background, call.task_id, call.result_line = True, task_id, line
        call.output = self.kept_output(output)
        if task_id is not None and len(self._background) < MAX_CALLS:
            self._background[task_id] = call
        del at  # the launch's answer is not the command's end

    def background_ended(
        self, task_id: str, *, line: int, at: datetime | None, exit_code: int | None, status: str
    ) -> ToolCall | None:
        """Record the end of background task ``task_id`` as a later report gives it; the call, or None."""
        call = self._background.pop(task_id, None)
        if call is None:
            return None
        call.finished, call.ended_at, call.exit_code = True, at, exit_code
        call.result_line = line
        failed = status not in ("completed", "success") or (exit_code is not None and exit_code != 0)
        call.is_error = failed
        call.error = (
            f"background task {status}" + (f" (exit code {exit_code})" if exit_code is not None else "")
            if failed
            else None
        )
        return call

    def pending(self, call_id: str | None) -> ToolCall | None:
        """Return the oldest unfinished call with ``call_id`` (None when there is none)."""
        waiting = self._pending.get(call_id) if call_id is not None else None
        return waiting[0] if waiting else None

    def finish(self, call_id: str | None, *, line: int, **outcome: Any) -> ToolCall | None:
        """Attach an outcome to the oldest pending call ``call_id``; return it (None when none waits).

        ``outcome`` is as for :meth:`complete`.
        """
        call = self.pending(call_id)
        if call is None:
            return None
        self.complete(call, line=line, **outcome)
        return call

    def complete(
        self,
        call: ToolCall,
        *,
        line: int,
        at: datetime | None = None,
        output: str | None = None,
        exit_code: int | None = None,
        is_error: bool | None = None,
        error: str | None = None,
    ) -> None:
        """Record the outcome of ``call`` (seen at ``line``), paired or not."""
        waiting = self._pending.get(call.call_id) if call.call_id is not None else None
        if waiting and call in waiting:
            waiting.remove(call)
            if not waiting:
                del self._pending[call.call_id]  # type: ignore[arg-type]
        call.finished = True
        call.result_line = line
        call.ended_at = at
        if output is not None:
            # A whole read may seed a file the history never saw written; kept within the budget.
            whole = call.kind == "read" and call.read_whole and len(output) <= MAX_BODY_CHARS
            if whole and self._retain(len(output)):
                call.full_output = output
            call.output = self.kept_output(
                output, MAX_OUTPUT_CHARS if call.kind == "command" else MAX_OTHER_OUTPUT_CHARS
            )
        call.exit_code = exit_code if exit_code is not None else call.exit_code
        call.is_error = is_error
        call.error = error

    def close(self) -> None:
        """End of file: report calls whose outcome never came (the agent was killed mid-call)."""
        waiting = [c for c in self.calls if not c.finished and not c.background]
        if waiting:
            first = waiting[0]
            self.cut_off = (
                f"{len(waiting):,} tool call(s) have no result (first: {first.tool} at line {first.line})"
            )
            self.problem(f"{self.cut_off}; the run may have been cut off while they ran")
        self._pending.clear()
        started = [c for c in self.calls if c.background and not c.finished]
        if started:
            first = started[0]
            self.problem(
                f"{len(started):,} background command(s) were never reported done (first: line {first.line});"
                " they are recorded as started, not finished"
            )
        if self.dropped_calls:
            self.problem(
                f"{self.dropped_calls:,} tool calls past the first {MAX_CALLS:,} (or {MAX_OTHER_CALLS:,}"
                " calls of other tools) were counted but not kept"
            )
        if self._outputs_clipped:
            self.problem(
                f"{self._outputs_clipped:,} tool outputs past the first {MAX_OUTPUTS_CHARS:,} characters"
                f" of outputs were kept to {CLIPPED_OUTPUT_CHARS} characters each"
            )
        if self.unknown_events:
            listed = ", ".join(f"{name} ×{n:,}" for name, n in self.unknown_events.most_common(8))
            self.problem(f"event types not understood, counted and skipped: {listed}")
