"""Dumps: the JSON the renderers print with its multi-line strings raw and unquoted, read by their layout."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from arb_audit.collectors.reading import parse_json
from arb_audit.collectors.transcripts.rendered.blocks import trim

MAX_DUMP_DEPTH = 32
"""Deepest nesting read in a dump; deeper values are kept as raw text."""

_FIELD_LINE = re.compile(r'^ *"[^"]*": \S')
"""A line that looks like a dump field (``"key": value``)."""
_STRING_KEYS = frozenset(
    {"content", "old_string", "new_string", "oldString", "newString", "new_source", "command"}
    | {"aggregated_output", "text", "description", "prompt", "output"}
)
"""Fields that always hold a string, so a value that looks like ``{`` … ``}`` is text, not an object."""


@dataclass(slots=True)
class Dump:
    """What a JSON-like dump holds, read by its layout."""

    values: dict[str, Any]
    """The top-level fields (nested objects as dicts, lists as lists, raw strings as text)."""
    exact: bool = True
    """Where each multi-line string ends is certain (a strict parse worked, or the layout is unambiguous)."""
    complete: bool = True
    """The dump's closing brace was seen."""


class _LooseReader:
    """Reads the renderers' dump layout, field by field.

    Fields are ``"key": value`` lines indented two spaces a level; a multi-line string is printed raw: its
    first line after the key, the rest unindented, and a ``,`` stuck to its last line when more fields follow.
    """

    def __init__(self, known: frozenset[str]) -> None:
        self.known = known
        self.exact = True

    def _key_lines(self, body: list[str], pad: int) -> list[tuple[int, str, str]]:
        start = " " * pad + '"'
        found: list[tuple[int, str, str]] = []
        for index, text in enumerate(body):
            if not text.startswith(start):
                continue
            key, sep, rest = text[pad + 1 :].partition('":')
            if not sep or '"' in key or (rest and not rest.startswith(" ")):
                continue
            if self.known and key not in self.known:
                continue
            found.append((index, key, rest[1:]))
        return found

    def read_object(self, body: list[str], pad: int, depth: int = 0) -> dict[str, Any]:
        """Read the lines between an object's braces; its keys are indented ``pad`` spaces."""
        marks = self._key_lines(body, pad)
        counts = Counter(key for _, key, _ in marks)
        chosen: list[tuple[int, str, str]] = []
        taken: set[str] = set()
        for mark in marks:
            # A key seen already is the text of a raw string before it (the real key came first).
            if mark[1] not in taken:
                chosen.append(mark)
                taken.add(mark[1])
        head = chosen[0][0] if chosen else len(body)
        if any(text.strip() for text in body[:head]):
            self.exact = False  # text before the first field: not the renderer's layout
        values: dict[str, Any] = {}
        for number, (index, key, rest) in enumerate(chosen):
            last = number + 1 == len(chosen)
            end = len(body) if last else chosen[number + 1][0]
            value, raw = self._value(key, rest, body[index + 1 : end], pad, last, depth)
            if raw and not last and counts[chosen[number + 1][1]] > 1:
                self.exact = False  # the string may go on past the first line that looks like the next key
            values[key] = value
        return values

    def _value(
        self, key: str, first: str, span: list[str], pad: int, last: bool, depth: int
    ) -> tuple[Any, bool]:
        """Read one field's value; say whether it was a raw multi-line string."""
        closing = " " * pad + ("}" if first == "{" else "]")
        if first in ("{", "[") and span and key not in _STRING_KEYS and depth < MAX_DUMP_DEPTH:
            tail = span[-1] if last else span[-1].removesuffix(",")
            if tail == closing:
                inner = span[:-1]
                if first == "{":
                    return self.read_object(inner, pad + 2, depth + 1), False
                return self.read_list(inner, pad + 2, depth + 1), False
        if not span:
            text = first if last else first.removesuffix(",")
            data, error, _ = parse_json(text)
            if error is None:
                return data, False
            self.exact = False
            return text, False
        rest = list(span)
        if _FIELD_LINE.match(rest[-1]) and rest[-1].startswith(" " * pad + '"'):
            # A field the input should not have (``"mode": "w"`` after a Write's content) would end here.
            self.exact = False
        if not last:
            if rest[-1].endswith(","):
                rest[-1] = rest[-1][:-1]
            else:
                self.exact = False
        return "\n".join([first, *rest]), True

    def read_list(self, body: list[str], pad: int, depth: int) -> list[Any]:
        """Read the lines between a list's brackets; its items are indented ``pad`` spaces."""
        opener = " " * pad + "{"
        items: list[Any] = []
        starts = [index for index, text in enumerate(body) if text == opener]
        scalars = body[: starts[0]] if starts else body
        for text in scalars:
            if text.startswith(" " * pad) and text.strip():
                data, error, _ = parse_json(text.strip().removesuffix(","))
                items.append(data if error is None else text.strip())
                self.exact = self.exact and error is None
            elif text.strip():
                self.exact = False
        for number, start in enumerate(starts):
            end = starts[number + 1] if number + 1 < len(starts) else len(body)
            span = body[start + 1 : end]
            if span and span[-1].removesuffix(",") == " " * pad + "}":
                items.append(self.read_object(span[:-1], pad + 2, depth + 1))
            else:
                self.exact = False
        return items


def parse_dump(body: list[str], known: frozenset[str] = frozenset()) -> Dump | None:
    """Read a dump whose first line is ``{`` (lines already dedented); None when it is not one.

    A strict JSON parse is tried first (a dump without multi-line strings is valid JSON). Otherwise it
    is read by its layout; with ``known`` field names, only those start a field, so a raw file body
    holding ``"key": value`` lines of its own is not split there.
    """
    body = trim(body)
    start = next((index for index, text in enumerate(body) if text.strip()), len(body))
    body = body[start:]
    if not body or not body[0].startswith("{"):
        return None
    data, error, _ = parse_json("\n".join(body))
    if error is None and isinstance(data, dict):
        return Dump(data)
    if body[0] != "{":
        return None
    complete = len(body) > 1 and body[-1] == "}"
    reader = _LooseReader(known)
    values = reader.read_object(body[1:-1] if complete else body[1:], 2)
    return Dump(values, exact=reader.exact, complete=complete)
