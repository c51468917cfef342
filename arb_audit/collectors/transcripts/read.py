"""Read a transcript file of any supported format, detected from its content."""

from __future__ import annotations

from collections import Counter

from arb_audit.collectors.reading import RunFolder, Tally
from arb_audit.collectors.transcripts.claude_code import ClaudeCodeFormat
from arb_audit.collectors.transcripts.codex import CodexFormat, CodexLegacyFormat
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.formats import EventFormat
from arb_audit.collectors.transcripts.gemini import GeminiFormat
from arb_audit.collectors.transcripts.opencode import OpenCodeFormat
from arb_audit.collectors.transcripts.rendered import read_rendered
from arb_audit.collectors.transcripts.stream import Event, events, first_json_objects
from arb_audit.collectors.transcripts.task_outputs import read_task_outputs
from arb_audit.regular_files import open_regular

FORMATS: tuple[type[EventFormat], ...] = (
    ClaudeCodeFormat,
    CodexFormat,
    CodexLegacyFormat,
    GeminiFormat,
    OpenCodeFormat,
)
"""The JSON-lines formats, tried in this order on each of the first events."""


def detect(folder: RunFolder, rel: str) -> type[EventFormat] | None:
    """Return the JSON-lines format most of the first events of ``rel`` belong to, or None."""
    votes: Counter[type[EventFormat]] = Counter()
    for data in first_json_objects(folder, rel):
        for fmt in FORMATS:
            if fmt.sniff(data):
                votes[fmt] += 1
                break
    return votes.most_common(1)[0][0] if votes else None


def read_transcript(folder: RunFolder, rel: str) -> Transcript | None:
    """Read transcript ``rel`` of ``folder``; None when it is absent or holds no transcript at all.

    Problems (unreadable lines, unknown events, calls without results) are in the transcript's
    ``problems``, each naming ``rel``.
    """
    path = folder.file(rel)
    if path is None:
        return None
    try:  # the detectors probe quietly: a file no one can open would read as no transcript at all
        open_regular(path, follow_symlinks=True).close()
    except OSError as exc:
        folder.problem(rel, f"cannot be read: {exc.strerror or exc}")
        return None
    fmt = detect(folder, rel)
    if fmt is None:
        return read_rendered(folder, rel)
    own = RunFolder(folder.root)  # this file's read problems go to the transcript, not the folder
    transcript = Transcript(rel, format=fmt.name)
    reader = fmt()
    non_json, bad_json, unreadable = Tally(), Tally(), Tally()
    for item in events(own, rel, non_json=non_json, bad_json=bad_json):
        if isinstance(item, Event):
            transcript.lines = item.line
            transcript.seen(item.stamp)
            try:
                reader.feed(item, transcript)
            except Exception as exc:
                # A shape no parser foresaw must cost that event only, never the audit.
                unreadable.add(item.line, f"{type(exc).__name__}: {exc}"[:200])
        else:
            transcript.lines = item.number
    reader.finish(transcript)
    transcript.non_json_lines = non_json.count
    if unreadable.count:
        transcript.problem(
            f"{unreadable.count:,} event(s) have a shape that could not be read (first: line"
            f" {unreadable.first}: {unreadable.example}); they were skipped"
        )
    cut = bad_json.example.startswith("is truncated")
    if bad_json.count == 1 and bad_json.first == transcript.lines and cut:
        transcript.problem(f"the last line is cut short ({bad_json.example}); its event is lost")
    elif bad_json.count:
        transcript.problem(
            f"{bad_json.count:,} line(s) look like JSON events but do not parse"
            f" (first: line {bad_json.first}: {bad_json.example}); their events are lost"
        )
    if fmt is ClaudeCodeFormat:
        read_task_outputs(own, transcript)  # before close(): a task its file shows ended was not left started
    transcript.problems[:0] = own.problems
    transcript.close()
    return transcript
