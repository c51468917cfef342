"""Lines of a transcript file as JSON events: timestamp prefixes stripped, stderr lines counted, secrets gone.

Every line passes through :func:`arb_audit.collectors.transcripts.secrets.redact` before anything looks at it.
A line may carry PostTrainBench's ``[YYYY-MM-DDTHH:MM:SSZ] `` prefix (its time is the event's time when
the event has none of its own). A line that is not a JSON object is stderr the agent's process
interleaved: counted, not an error. A JSON event that does not parse is reported (the last line of a
killed run is usually cut short).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from arb_audit.collectors.clock import from_epoch, parse_time
from arb_audit.collectors.reading import RunFolder, Tally, parse_json
from arb_audit.collectors.transcripts.secrets import redact

MAX_EVENT_BYTES = 16 * 1024 * 1024
"""Longest transcript line read; a Write of a large file is one line. Longer lines are cut (a gap)."""
PREFIX = re.compile(r"^\[(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\] ?")
"""PostTrainBench's per-line UTC stamp (``src/utils/timestamp_lines.py``), since 2026-04-04."""
MAX_NESTED_DECODES = 2
"""A JSON string holding a JSON event is decoded again, at most this many times."""


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a transcript after its prefix is taken off."""

    number: int
    """1-based line number in the file."""
    stamp: datetime | None
    """The time of the ``[...Z]`` prefix, if the line had one."""
    text: str
    """The rest of the line, secrets redacted."""


@dataclass(frozen=True, slots=True)
class Event:
    """One JSON event of a transcript."""

    line: int
    """1-based line number in the file."""
    stamp: datetime | None
    """The time of the line's prefix, if any."""
    data: dict[str, Any]
    """The event object."""


def parse_stamp(text: str) -> datetime | None:
    """Parse an ISO-8601 time (``Z`` or an offset; naive times are UTC); None if it is not a plausible one."""
    moment = parse_time(text.replace("Z", "+00:00"))
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def epoch_ms(value: Any) -> datetime | None:
    """Read epoch milliseconds (OpenCode's ``timestamp``); None for anything that is not a plausible one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return from_epoch(value / 1000)


def lines(folder: RunFolder, rel: str) -> Iterator[Line]:
    """Stream the lines of transcript ``rel``, prefixes split off and secrets redacted."""
    for number, raw in folder.lines(rel, max_line=MAX_EVENT_BYTES):
        text = redact(raw)
        stamp = None
        if match := PREFIX.match(text):
            stamp = parse_stamp(match[1])
            text = text[match.end() :]
        yield Line(number, stamp, text)


def _decode(text: str) -> tuple[dict[str, Any] | None, str | None]:
    """Decode one event; return ``(event, why not)``; a JSON string holding an event is decoded again."""
    value: Any = text
    for depth in range(MAX_NESTED_DECODES + 1):
        if not isinstance(value, str):
            break
        # An event inside a JSON string had its quotes escaped when the line was redacted: once
        # unwrapped, it is redacted again.
        value, error, _non_finite = parse_json(value if depth == 0 else redact(value))
        if error is not None:
            return None, error
    if isinstance(value, dict):
        return value, None
    return None, "is JSON but not an event object"


def events(folder: RunFolder, rel: str, *, non_json: Tally, bad_json: Tally) -> Iterator[Event | Line]:
    """Stream ``rel`` as JSON events; lines that are not JSON come through as :class:`Line`.

    ``non_json`` counts the lines that do not look like JSON (stderr), ``bad_json`` those that look
    like JSON but do not parse (with the first one's reason as its example).
    """
    for line in lines(folder, rel):
        stripped = line.text.strip()
        if not stripped:
            continue
        if not stripped.startswith(("{", '"{')):
            non_json.add(line.number, stripped[:120])
            yield line
            continue
        data, why = _decode(stripped)
        if data is None:
            bad_json.add(line.number, why or "")
            yield line
            continue
        yield Event(line.number, line.stamp, data)


def first_json_objects(
    folder: RunFolder, rel: str, limit: int = 200, max_lines: int = 20_000
) -> Iterator[dict[str, Any]]:
    """Yield the first ``limit`` JSON objects of ``rel`` (within ``max_lines`` lines), one at a time.

    They decide the format; stderr before the first event (package-manager warnings) is skipped.
    """
    probe = RunFolder(folder.root)  # problems of the probe are the full read's to report
    found = 0
    for line in lines(probe, rel):
        if line.number > max_lines or found >= limit:
            break
        stripped = line.text.strip()
        if stripped.startswith(("{", '"{')):
            data, _ = _decode(stripped)
            if data is not None:
                found += 1
                yield data


def dumps_short(value: Any, limit: int = 400) -> str:
    """Return a compact JSON rendering of ``value`` for an excerpt."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
