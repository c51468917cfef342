"""The interface of a JSON-lines transcript format: recognise an event, and read events into a Transcript."""

from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import datetime
from typing import Any, ClassVar

from arb_audit.collectors.reading import json_int
from arb_audit.collectors.transcripts.events import MAX_BODY_CHARS, Transcript
from arb_audit.collectors.transcripts.stream import Event


class EventFormat(ABC):
    """One JSON-lines transcript format. A fresh instance reads one file (it may keep state across events)."""

    name: ClassVar[str]
    """The format's name, as a transcript's ``format`` records it."""

    @classmethod
    @abstractmethod
    def sniff(cls, data: dict[str, Any]) -> bool:
        """Tell whether the event object ``data`` is surely of this format (used on the first events)."""

    @abstractmethod
    def feed(self, event: Event, transcript: Transcript) -> None:
        """Read one event into ``transcript``; an unknown event type is counted in ``unknown_events``.

        A field of the wrong JSON type must not raise: treat it as absent.
        """

    def finish(self, transcript: Transcript) -> None:
        """End of file: flush what the format buffers (merged deltas). Nothing by default."""
        del transcript


def text_of(value: Any) -> str | None:
    """Return ``value`` if it is a string, else None (fields from an untrusted file)."""
    return value if isinstance(value, str) else None


def dict_of(value: Any) -> dict[str, Any]:
    """Return ``value`` if it is an object, else an empty one."""
    return value if isinstance(value, dict) else {}


def list_of(value: Any) -> list[Any]:
    """Return ``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def int_of(value: Any) -> int | None:
    """Return ``value`` if it is a 32-bit integer, else None."""
    return json_int(value)


def when(event: Event, own: datetime | None = None) -> datetime | None:
    """Return the event's time: its own field when it has one, else its line's ``[...Z]`` prefix."""
    return own if own is not None else event.stamp


def edit_body(value: Any) -> tuple[str | None, bool]:
    """Return a string field of an edit (a body, an old or new string) and whether it was too long to keep.

    Too long means over :data:`MAX_BODY_CHARS`: the field is dropped and the edit becomes a gap.
    """
    text = text_of(value)
    if text is None or len(text) <= MAX_BODY_CHARS:
        return text, False
    return None, True
