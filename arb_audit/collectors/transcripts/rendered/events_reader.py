"""The ``=== Event N | … ===`` renderings: which agent's renderer wrote the file, and the reader for it."""

from __future__ import annotations

from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.rendered.blocks import Block
from arb_audit.collectors.transcripts.rendered.codex import CODEX_TYPES, CodexReader
from arb_audit.collectors.transcripts.rendered.event_blocks import Event, Notes, read_event
from arb_audit.collectors.transcripts.rendered.gemini import GEMINI_TYPES, GeminiReader
from arb_audit.collectors.transcripts.rendered.opencode import OPENCODE_TS, OPENCODE_TYPES, OpenCodeReader


def family_of(event: Event) -> str | None:
    """Which agent's renderer wrote the event, when its header says (None when it does not)."""
    if "tool" in event.fields or "status" in event.fields or OPENCODE_TS.match(event.fields.get("ts", "")):
        return "opencode"
    if "method" in event.fields or event.type in GEMINI_TYPES or event.type == "tool_use":
        return "gemini"
    if event.type in CODEX_TYPES:
        return "codex"
    if event.type in OPENCODE_TYPES:
        return "opencode"
    return None


class EventsReader:
    """Reads ``=== Event N | … ===`` blocks, each by the reader of the agent whose renderer wrote the file."""

    def __init__(self, transcript: Transcript) -> None:
        self.t = transcript
        self.notes = Notes()
        self.family: str | None = None
        self.readers: dict[str, CodexReader | GeminiReader | OpenCodeReader] = {
            "codex": CodexReader(transcript, self.notes),
            "gemini": GeminiReader(transcript, self.notes),
            "opencode": OpenCodeReader(transcript, self.notes),
        }

    def feed(self, block: Block) -> None:
        """Read one block."""
        if not block.header:
            # Lines before the first event: Codex's renderer copies non-JSON lines through verbatim.
            self.t.non_json_lines += sum(1 for text in block.body if text.strip())
            return
        event, stray = read_event(block)
        self.t.non_json_lines += stray
        self.t.seen(event.at)
        if event.type == "NOT PARSABLE":
            self.t.non_json_lines += 1
            return
        self.family = self.family or family_of(event)
        if self.family is not None:
            self.readers[self.family].feed(event)
        elif event.type != "error":
            self.t.unknown(event.type or "?")

    @property
    def format(self) -> str:
        """The format's name, by the agent whose events were seen."""
        return f"{self.family}_rendered" if self.family else "events_rendered"

    def finish(self) -> list[str]:
        """End of file: report what could not be read; return what this rendering could not show."""
        if self.family is not None:
            found = self.readers[self.family].missing()
        else:
            found = ["every event (no event in the file shows which agent's renderer wrote it)"]
        if self.t.first_at is None:
            found.append("event times (no [..Z] prefix and no time in the event headers)")
        unreadable = self.notes.unreadable
        if unreadable.count:
            found.append(f"the items of {unreadable.count:,} event(s) whose dump could not be read")
            self.t.problem(
                f"{unreadable.count:,} item event(s) hold a dump that could not be read"
                f" (first at line {unreadable.first}); their tool calls are lost"
            )
        return found
