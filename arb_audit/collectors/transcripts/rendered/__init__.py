"""Readable renderings of agent transcripts: PostTrainBench's ``solve_parsed.txt``, alias ``trace.txt``.

When only the rendering survives, the tool calls are recovered from its text. Two families exist:

- the Claude Code rendering: ``Session start — <id>``, ``Assistant — turn N | <ts>``, ``  Tool call — <Name>
  (<id>)`` followed by ``$ <command>`` or a JSON-like dump of the input, ``  Tool result — <Name> (<id>)``,
  ``System event — <subtype>``, ``Result — <subtype>`` (:mod:`.claude`);
- the ``=== Event N | type: … ===`` blocks of the Codex, Gemini and OpenCode renderers
  (:mod:`.event_blocks`, :mod:`.events_reader`, :mod:`.codex`, :mod:`.gemini`, :mod:`.opencode`).

Both are lossy, and the dumps print multi-line strings raw and unquoted, so nothing here parses strictly:
the headers separate the records (:mod:`.blocks`), the dumps are read by their layout (:mod:`.dumps`), and
what a form cannot show is listed in the transcript's ``missing``. A block longer than
:data:`.blocks.MAX_BLOCK_CHARS` is cut.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from arb_audit.collectors.reading import RunFolder, Tally
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.rendered import blocks as _blocks
from arb_audit.collectors.transcripts.rendered.claude import ClaudeHeaders, ClaudeReader, claude_line
from arb_audit.collectors.transcripts.rendered.event_blocks import is_event_header
from arb_audit.collectors.transcripts.rendered.events_reader import EventsReader
from arb_audit.collectors.transcripts.stream import Line, lines

__all__ = ["detect", "read_rendered"]

DETECT_LINES = 200
"""The form is detected from this many first lines."""


def detect(folder: RunFolder, rel: str) -> str | None:
    """Tell the rendering of ``rel`` from its first lines: ``claude``, ``events``, or None for neither."""
    probe = RunFolder(folder.root)  # the full read reports the file's problems
    for line in lines(probe, rel):
        if line.number > DETECT_LINES:
            break
        if is_event_header(line.text):
            return "events"
        if claude_line(line.text):
            return "claude"
    return None


def _counted(stream: Iterable[Line], transcript: Transcript) -> Iterator[Line]:
    for line in stream:
        transcript.lines = line.number
        yield line


def _cut_edits(transcript: Transcript) -> int:
    return sum(edit.cut for call in transcript.calls for edit in call.edits)


def read_rendered(folder: RunFolder, rel: str) -> Transcript | None:
    """Read the readable rendering ``rel`` of ``folder``; None when it is not one (or is absent).

    The transcript is ``lossy``; its ``missing`` says what the form cannot show, and its problems name
    the blocks that were cut and the calls that never got a result.
    """
    if folder.file(rel) is None:
        return None
    form = detect(folder, rel)
    if form is None:
        return None
    own = RunFolder(folder.root)  # this file's read problems go to the transcript, not the folder
    transcript = Transcript(rel, lossy=True)
    reader: ClaudeReader | EventsReader
    if form == "claude":
        reader = ClaudeReader(transcript)
        headers: Callable[[str], bool] = ClaudeHeaders()
    else:
        reader = EventsReader(transcript)
        headers = is_event_header
    cut = Tally()
    for block in _blocks.blocks(_counted(lines(own, rel), transcript), headers):
        if block.cut:
            cut.add(block.line)
        reader.feed(block)
    transcript.format = reader.format
    transcript.missing = reader.finish()
    _report_cuts(transcript, cut)
    transcript.problems[:0] = own.problems
    transcript.close()
    return transcript


def _report_cuts(transcript: Transcript, cut: Tally) -> None:
    """Say which edits and blocks were cut (the limit is read now, so a test may lower it)."""
    limit = _blocks.MAX_BLOCK_CHARS
    if edits := _cut_edits(transcript):
        transcript.missing.append(
            f"the exact bodies of {edits:,} file edit(s) whose dump lost its quoting or was cut (marked cut)"
        )
    if cut.count:
        transcript.missing.append(f"the ends of {cut.count:,} block(s) longer than {limit:,} characters")
        transcript.problem(
            f"{cut.count:,} block(s) exceed {limit:,} characters (first at line {cut.first});"
            " their ends were skipped"
        )
