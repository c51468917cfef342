"""Claude Code's background task output files (``tasks/<id>.output``), read when the run folder keeps them.

A Bash command Claude Code moved to the background writes its stdout and stderr to a file of its own,
``<tmp>/claude-<uid>/<working directory, "/" as "-">/[<session id>/]tasks/<task id>.output``, named in
the launch answer ("Command running in background with ID: <id>. Output is being written to: <path>"),
and, once the command ends, closed by a line ``[exited with code N]``. The layout and that line are
taken from public reports, not guessed: anthropics/claude-code#22711, #31716 and #20261 (the
``…/tasks/<id>.output`` files under ``/tmp/claude-<uid>/<project>/``), meanllbrl/dreamcontext#219 (the
launch answer and the ``<session id>/`` folder of Claude Code 2.1), vanillagreencom/kendex#2052 (the
closing ``[exited with code N]`` line, probed with exits 0, 7 and 9).

The harness keeps these files beside the transcript: ``tasks/<id>.output`` in the transcript's folder,
or under the last folders of the announced path (``<session id>/tasks/<id>.output``). Their content is
the agent's programs' output, so hostile: only its head and tail are read, terminal escapes and control
characters are dropped, secrets redacted, and undecodable bytes are replaced with a problem naming the
file.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import PurePosixPath

from arb_audit.collectors.reading import RunFolder, text_int, whole_characters
from arb_audit.collectors.transcripts.events import ToolCall, Transcript
from arb_audit.collectors.transcripts.secrets import redact
from arb_audit.regular_files import open_regular

HEAD_BYTES = 8 * 1024
"""Bytes read from the start of a long output file (what the command printed first)."""
TAIL_BYTES = 64 * 1024
"""Bytes read from its end (the verdict and the closing ``[exited with code N]`` line)."""
ANNOUNCED = re.compile(r"Output is being written to:\s*(\S{1,1000})")
"""Where the launch answer says the output goes (a path on the agent's machine)."""
EXITED = re.compile(r"^\[exited with code (-?\d{1,9})\]$")
"""The line Claude Code closes a finished task's output file with."""
ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|\x1b[@-_]?")
"""Terminal escape sequences (colours, cursor moves, window titles)."""
CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
"""Control characters other than tab and line breaks."""
MAX_FOLDERS_KEPT = 3
"""Folders of the announced path, above ``tasks/``, that a run folder may keep (``<session id>/``...)."""


def read_task_outputs(folder: RunFolder, transcript: Transcript) -> None:
    """Give each background command of ``transcript`` what its output file, when kept, shows.

    The output replaces the launch answer; a closing ``[exited with code N]`` ends a command no report
    ended (its end time is the file's own, when that falls within the transcript's span), and is checked
    against the exit code a report gave. Problems go to ``folder``, naming the file.
    """
    for call in transcript.calls:
        if not call.background or call.task_id is None:
            continue
        rel = _find(folder, transcript.path, call)
        if rel is not None:
            _apply(folder, rel, call, transcript)


def candidates(transcript_rel: str, task_id: str, announced: str | None) -> list[str]:
    """List the places, relative to the run folder, where task ``task_id``'s output file may be kept."""
    base = PurePosixPath(transcript_rel).parent
    name = f"{task_id}.output"
    found = [base / "tasks" / name]
    parts = PurePosixPath(announced).parts if announced else ()
    if parts[-2:] == ("tasks", name):
        above = parts[:-2]
        for count in range(1, min(MAX_FOLDERS_KEPT, len(above)) + 1):
            kept = above[-count:]
            if any(p in ("", ".", "..", "/") for p in kept):
                break
            found.append(base.joinpath(*kept, "tasks", name))
    return [str(p) for p in found]


def _find(folder: RunFolder, transcript_rel: str, call: ToolCall) -> str | None:
    announced = ANNOUNCED.search(call.output or "")
    assert call.task_id is not None
    for rel in candidates(transcript_rel, call.task_id, announced[1] if announced else None):
        if folder.file(rel) is not None:
            return rel
    return None


def _apply(folder: RunFolder, rel: str, call: ToolCall, transcript: Transcript) -> None:
    read = _read(folder, rel)
    if read is None:
        return
    text, modified = read
    lines = text.rstrip("\n").split("\n")
    closing = EXITED.match(lines[-1].strip()) if lines else None
    exit_code = text_int(closing[1]) if closing else None
    shown = "\n".join(lines[:-1]) if closing else text
    if shown.strip():
        call.output = transcript.kept_output(f"[{rel}]\n{shown}")
    if exit_code is None:
        return
    assert call.task_id is not None
    if not call.finished:
        # The file's time is the end only when the run's own clock agrees: a copy made later has its own.
        start, last = call.started_at, transcript.last_at
        inside = start is not None and last is not None and start <= modified <= last
        transcript.background_ended(
            call.task_id,
            line=call.result_line or call.line,
            at=modified if inside else None,
            exit_code=exit_code,
            status="completed" if exit_code == 0 else "failed",
        )
        if call.error:
            call.error += f", as {rel} shows"
    elif call.exit_code is None:
        call.exit_code = exit_code
    elif call.exit_code != exit_code:
        folder.problem(
            rel,
            f"ends with exit code {exit_code}, but the transcript's report on task {call.task_id} (line"
            f" {call.result_line}) says {call.exit_code}; the report's code is kept",
        )


def _read(folder: RunFolder, rel: str) -> tuple[str, datetime] | None:
    """Read the head and tail of output file ``rel``, cleaned; with its modification time."""
    path = folder.file(rel)
    if path is None:
        return None
    try:
        with open_regular(path, follow_symlinks=True) as handle:
            opened = os.fstat(handle.fileno())
            size = opened.st_size
            modified = datetime.fromtimestamp(opened.st_mtime, UTC)
            if size <= HEAD_BYTES + TAIL_BYTES:
                head, tail = handle.read(HEAD_BYTES + TAIL_BYTES), b""
            else:
                head = handle.read(HEAD_BYTES)
                handle.seek(size - TAIL_BYTES)
                tail = handle.read(TAIL_BYTES)
    except (OSError, ValueError, OverflowError) as exc:
        folder.problem(rel, f"cannot be read: {getattr(exc, 'strerror', None) or exc}")
        return None
    if tail:
        folder.problem(
            rel, f"is {size:,} bytes; only its first {HEAD_BYTES:,} and last {TAIL_BYTES:,} were read"
        )
    # A cut may split a character: drop its pieces at the cut, so only real bad bytes are reported.
    head = whole_characters(head) if tail else head
    skip = 0
    while skip < 3 and skip < len(tail) and 0x80 <= tail[skip] < 0xC0:
        skip += 1
    tail = tail[skip:]
    pieces = []
    bad = False
    for chunk in (head, tail):
        try:
            pieces.append(chunk.decode("utf-8"))
        except UnicodeDecodeError:
            bad = True
            pieces.append(chunk.decode("utf-8", errors="replace"))
    if bad:
        folder.problem(rel, "is not valid UTF-8; undecodable bytes were replaced")
    text = pieces[0] + (
        f"\n… [{size - len(head) - len(tail):,} bytes not read] …\n{pieces[1]}" if tail else ""
    )
    return redact(_clean(text)), modified


def _clean(text: str) -> str:
    """Drop terminal escapes and control characters; a line redrawn with CR keeps its last drawing."""
    text = ESCAPES.sub("", text.replace("\r\n", "\n"))
    # Progress bars redraw one line with CR: what the terminal finally showed is the last drawing.
    lines = [next((p for p in reversed(line.split("\r")) if p), "") for line in text.split("\n")]
    return CONTROLS.sub("", "\n".join(lines))
