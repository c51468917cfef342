"""A transcript turned into run facts: the command timeline and the code history as revisions.

Used by every collector whose run folder holds a transcript (PostTrainBench's ``solve_out.txt``,
AutoRL-Bench's ``agent.jsonl``).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.history import MAX_GAPS_LISTED, History, Step, rebuild
from arb_audit.collectors.transcripts.paths import OUTSIDE, PathMap
from arb_audit.collectors.transcripts.read import read_transcript
from arb_audit.collectors.transcripts.secrets import redact
from arb_audit.model import (
    Command,
    FinalCheck,
    Problem,
    Revision,
    TranscriptCompaction,
    TranscriptHistory,
    TranscriptSession,
    TranscriptSummary,
)
from arb_audit.regular_files import read_regular
from arb_audit.revisions import RevisionError, TreeCommitter

MAX_COMPARED_BYTES = 4 * 1024 * 1024
"""Largest workspace file compared with its rebuilt contents."""
MAX_FILE_ROWS = 200_000
"""Most files all of a history's revisions may list together (each revision lists its whole tree).
Each listed file is a row of the store read back whole with the record (~1 KB of memory each): a
million of them, from thousands of one-file writes, took the audit past 1 GB."""


@dataclass(slots=True)
class TranscriptFacts:
    """What one transcript adds to a run record."""

    transcript: Transcript
    """The transcript as read."""
    revisions: list[Revision] = field(default_factory=list)
    """The rebuilt code history, one revision per change (trigger ``transcript-edit``)."""
    commands: list[Command] = field(default_factory=list)
    """The command timeline."""
    summary: TranscriptSummary | None = None
    """Counts and checks: the run's ``transcript``."""
    problems: list[Problem] = field(default_factory=list)
    """The transcript's problems and the history's gaps."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The final workspace the rebuilt history is checked against."""

    folder: Path
    """The snapshot's folder on this machine (PostTrainBench ``task/``, AutoRL-Bench ``code/``)."""
    rel: str
    """The folder relative to the run folder, for messages."""
    prefix: str = ""
    """The workspace-relative path the folder stands for (``code/`` when it holds the workspace's code/)."""


def ingest_transcript(
    folder: RunFolder,
    rel: str,
    *,
    roots: list[str | None],
    git_dir: Path,
    ref: str,
    snapshot: Snapshot | None = None,
    session_root_suffix: str = "",
    default_cwd: str | None = None,
) -> TranscriptFacts | None:
    """Read transcript ``rel``, commit its code history to ``ref`` of ``git_dir``, list its commands.

    ``roots`` are the absolute paths, on the agent's machine, of the tree the revisions hold; each
    session's working directory plus ``session_root_suffix`` is one too (AutoRL-Bench agents start in
    the workspace, whose ``code/`` is the tree). ``default_cwd`` is where relative paths start when the
    transcript does not say. None when the file is absent.
    """
    transcript = read_transcript(folder, rel)
    if transcript is None:
        return None
    facts = TranscriptFacts(transcript, problems=list(transcript.problems))
    paths = PathMap(
        [*roots, *(s.cwd + session_root_suffix for s in transcript.sessions if s.cwd)], default_cwd
    )
    revision_at_call: list[tuple[int, int]] = []  # (call index, revision seq) in order
    rows = [0]  # files listed by the revisions so far

    def problem(path: str, message: str) -> None:
        facts.problems.append(Problem(rel, f"rebuilt file {path}: {message}"))

    try:
        committer: TreeCommitter | None = TreeCommitter(git_dir, ref, problem)
    except RevisionError as exc:
        facts.problems.append(Problem(rel, f"the code history cannot be stored: {exc}"))
        committer = None

    def on_step(step: Step) -> None:
        nonlocal committer
        if committer is None:
            return
        seq = len(facts.revisions) + 1
        names = ", ".join(sorted(step.changed))
        message = f"transcript-edit {seq}: {step.tool} {names[:400]} ({rel} line {step.line})"
        if step.note:
            message += f"\n\n{step.note[:2000]}"
        try:
            revision = committer.commit(
                step.changed, seq=seq, trigger="transcript-edit", message=message, taken_at=step.at
            )
        except RevisionError as exc:
            facts.problems.append(Problem(rel, f"the code history stops at revision {seq - 1}: {exc}"))
            committer = None
            return
        if revision is None:
            return
        rows[0] += len(revision.files)
        if rows[0] > MAX_FILE_ROWS:
            facts.problems.append(
                Problem(
                    rel,
                    f"the code history stops at revision {seq - 1} at line {step.line}: its revisions would"
                    f" list more than {MAX_FILE_ROWS:,} files in all",
                )
            )
            committer = None
            return
        facts.revisions.append(revision)
        revision_at_call.append((step.call_index, seq))

    history = rebuild(transcript, paths, on_step)
    if committer is not None:
        try:
            committer.finish()
        except RevisionError as exc:
            # The commits are stored; only the name that keeps them from a git gc is missing.
            facts.problems.append(Problem(rel, f"the code history's ref cannot be written: {exc}"))
    facts.commands = _commands(transcript, revision_at_call)
    facts.problems.extend(_gap_problems(rel, history))
    facts.summary = _summary(transcript, history, paths)
    if snapshot is not None:
        facts.summary.final_check = _check(history, snapshot, facts.problems, rel)
    return facts


def transcript_commands(folder: RunFolder, rel: str, revisions: list[Revision]) -> TranscriptFacts | None:
    """Read transcript ``rel`` for its command timeline only, against revisions recorded elsewhere.

    A run recorded by the runner has its real code history already; each command's revision is the
    last one taken at or before the command started. None when the file holds no transcript.
    """
    transcript = read_transcript(folder, rel)
    if transcript is None:
        return None
    starts: list[float] = []
    for call in transcript.calls:  # a call without a time happened no earlier than the one before it
        starts.append(call.started_at.timestamp() if call.started_at else (starts[-1] if starts else 0.0))
    revision_at_call = [
        (bisect.bisect_left(starts, r.taken_at.timestamp()) if r.taken_at else 0, r.seq)
        for r in sorted(revisions, key=lambda r: r.seq)
    ]
    facts = TranscriptFacts(transcript, problems=list(transcript.problems))
    facts.commands = _commands(transcript, revision_at_call)
    facts.summary = _transcript_summary(transcript)  # the code history is the runner's, not rebuilt here
    return facts


def _commands(transcript: Transcript, revision_at_call: list[tuple[int, int]]) -> list[Command]:
    commands: list[Command] = []
    position, in_force = 0, None
    for index, call in enumerate(transcript.calls):
        # The revision in force is the last one made by an earlier call, or by this command itself:
        # a here-document it writes lands before the rest of its script runs.
        while position < len(revision_at_call) and revision_at_call[position][0] <= index:
            in_force = revision_at_call[position][1]
            position += 1
        if call.kind != "command" or call.command is None:
            continue
        commands.append(
            Command(
                seq=len(commands) + 1,
                command=call.command,
                tool=call.tool,
                source_path=transcript.path,
                line=call.line,
                session=call.session,
                started_at=call.started_at,
                ended_at=call.ended_at,
                exit_code=call.exit_code,
                error=call.error,
                cwd=call.cwd,
                revision_seq=in_force,
                output_excerpt=call.output,
                finished=call.finished,
            )
        )
    return commands


def _gap_problems(rel: str, history: History) -> list[Problem]:
    problems = [
        Problem(rel, f"line {g.line}: {g.path}: {g.reason}; the history keeps its last known contents")
        for g in history.gaps[:MAX_GAPS_LISTED]
    ]
    if len(history.gaps) > MAX_GAPS_LISTED:
        problems.append(
            Problem(rel, f"{len(history.gaps) - MAX_GAPS_LISTED:,} more edits could not be applied")
        )
    if history.unknown_content:
        shown = ", ".join(sorted(history.unknown_content)[:10])
        problems.append(
            Problem(
                rel,
                f"{len(history.unknown_content)} file(s) changed by edits the transcript does not show the"
                f" content of (e.g. Codex file_change): {shown}",
            )
        )
    return problems


def _summary(transcript: Transcript, history: History, paths: PathMap) -> TranscriptSummary:
    summary = _transcript_summary(transcript)
    summary.workspace_roots = list(paths.roots)
    summary.history = TranscriptHistory(
        revisions=history.steps,
        files=len(history.files),
        gaps=len(history.gaps),
        failed_edits_not_applied=history.unapplied_failed,
        seeded_from_reads=sorted(history.seeded),
        content_unknown=sorted(history.unknown_content),
    )
    return summary


def _transcript_summary(transcript: Transcript) -> TranscriptSummary:
    """Summarise what the transcript itself holds: sessions, calls, compactions, what was unreadable."""
    kinds = {kind: sum(1 for c in transcript.calls if c.kind == kind) for kind in ("command", "edit", "read")}
    return TranscriptSummary(
        path=transcript.path,
        format=transcript.format,
        lossy=transcript.lossy,
        missing=list(transcript.missing),
        sessions=[
            TranscriptSession(
                number=s.number,
                session_id=s.session_id,
                model=s.model,
                cwd=s.cwd,
                line=s.line,
                outcome=s.outcome,
                error=s.error,
                cost_usd=s.cost_usd,
            )
            for s in transcript.sessions
        ],
        lines=transcript.lines,
        tool_calls=len(transcript.calls),
        commands=kinds["command"],
        file_edit_calls=kinds["edit"],
        reads=kinds["read"],
        compactions=[TranscriptCompaction(c.line, c.session, c.detail) for c in transcript.compactions],
        unknown_events=dict(transcript.unknown_events),
        non_json_lines=transcript.non_json_lines,
        cut_off=_cut_off(transcript),
    )


ENDED_BY_RESULT = frozenset({"claude_code", "gemini"})
"""Formats whose sessions end with a result event: a last session without one was cut off."""


def _cut_off(transcript: Transcript) -> str | None:
    """Say why the transcript looks cut off (it cannot show what happened after), or None."""
    if transcript.cut_off:
        return transcript.cut_off
    last = transcript.sessions[-1] if transcript.sessions else None
    if transcript.format in ENDED_BY_RESULT and last is not None and last.outcome is None:
        return f"its last session (line {last.line}) has no result event"
    return None


def _check(history: History, snapshot: Snapshot, problems: list[Problem], rel: str) -> FinalCheck:
    """Compare each rebuilt file with the final workspace's copy."""
    same: list[str] = []
    differs: list[str] = []
    absent: list[str] = []
    for path, text in sorted(history.files.items()):
        if path.startswith(OUTSIDE + "/") or not path.startswith(snapshot.prefix):
            continue
        target = snapshot.folder / path[len(snapshot.prefix) :]
        try:
            # Every folder on the way could be a symlink the agent left: never read out of the snapshot.
            inside = target.resolve().is_relative_to(snapshot.folder.resolve())
            if not inside or target.is_symlink() or not target.is_file():
                absent.append(path)
                continue
            if target.stat().st_size > MAX_COMPARED_BYTES:
                continue
            raw = read_regular(target, MAX_COMPARED_BYTES, follow_symlinks=True)
            final = redact(raw.decode("utf-8", errors="replace"))
        except OSError:
            absent.append(path)
            continue
        (same if final == text else differs).append(path)
    if differs:
        problems.append(
            Problem(
                rel,
                f"{len(differs)} rebuilt file(s) differ from {snapshot.rel}/ (changed outside the"
                f" transcript's file tools, e.g. by a shell command): {', '.join(differs[:10])}",
            )
        )
    return FinalCheck(snapshot=snapshot.rel, same=same, differs=differs, absent=absent)
