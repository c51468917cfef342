"""Safe, bounded reading of an untrusted run folder.

Every reader returns what it could read and records a :class:`Problem` naming the file for what it
could not: missing, too large, not UTF-8, not JSON, truncated, or a symlink that leaves the folder.
Line readers stream, so a log of any size costs bounded memory.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arb_audit.model import Problem

MAX_JSON_BYTES = 64 * 1024 * 1024
"""Largest JSON document read whole; anything larger is refused with a problem."""
MAX_LINE_BYTES = 64 * 1024
"""Longest line kept from a streamed log; longer lines are cut and counted."""


def json_number(value: Any) -> float | None:
    """Return a JSON number as a finite float; None for anything else (bools, strings, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) or math.isinf(value) else float(value)


def json_int(value: Any) -> int | None:
    """Return a JSON integer; None for anything else (bools included)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


@dataclass
class _Tally:
    """How many lines had a defect, and the first of them (constant memory on hostile files)."""

    count: int = 0
    first: int | None = None

    def add(self, line: int) -> None:
        self.count += 1
        self.first = self.first or line


@dataclass
class RunFolder:
    """An untrusted run folder and the problems found while reading it."""

    root: Path
    """The run folder (absolute)."""
    problems: list[Problem] = field(default_factory=list)
    """Problems found so far, in the order they were found."""

    def problem(self, rel: str, message: str) -> None:
        """Record a problem about ``rel`` (a path relative to the folder)."""
        self.problems.append(Problem(path=rel, message=message))

    def contains(self, path: Path) -> bool:
        """Tell whether ``path``, with every symlink resolved, stays inside the folder."""
        try:
            path.resolve(strict=False).relative_to(self.root.resolve())
        except (ValueError, OSError, RuntimeError):
            return False
        return True

    def file(self, rel: str) -> Path | None:
        """Return the path of a regular file ``rel`` that is safe to read, or None.

        A missing file returns None silently (the caller knows which files are optional); a symlink
        that leaves the folder, or something that is not a regular file, is recorded as a problem.
        """
        path = self.root / rel
        if not path.exists() and not path.is_symlink():
            return None
        if path.is_symlink() and not self.contains(path):
            self.problem(rel, f"is a symlink to {os.readlink(path)!r}, outside the run folder; not read")
            return None
        if not path.is_file():
            self.problem(rel, "is not a regular file; not read")
            return None
        return path

    def read_json(
        self,
        rel: str,
        *,
        expect: type[dict[str, Any]] | type[list[Any]] | None = None,
        max_bytes: int = MAX_JSON_BYTES,
    ) -> Any | None:
        """Return the parsed JSON document ``rel``, or None with a problem if it cannot be read.

        With ``expect`` (``dict`` or ``list``), a document of another JSON type is a problem too.
        """
        path = self.file(rel)
        if path is None:
            return None
        try:
            size = path.stat().st_size
            if size > max_bytes:
                self.problem(rel, f"is {size:,} bytes, over the {max_bytes:,}-byte limit for JSON; not read")
                return None
            raw = path.read_bytes()
        except OSError as exc:
            self.problem(rel, f"cannot be read: {exc.strerror or exc}")
            return None
        if not raw.strip():
            self.problem(rel, "is empty")
            return None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.problem(rel, f"is not UTF-8 (byte {exc.start}); not read")
            return None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(text.rstrip()) - 1
            what = "is truncated" if truncated else "is not valid JSON"
            self.problem(rel, f"{what}: {exc.msg} at line {exc.lineno}, column {exc.colno}")
            return None
        if expect is not None and not isinstance(data, expect):
            wanted = "an object" if expect is dict else "a list"
            self.problem(rel, f"holds a JSON {_json_type(data)}, not {wanted}")
            return None
        return data

    def lines(self, rel: str, *, max_line: int = MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
        """Stream ``(line number, text)`` of a text file in bounded memory.

        Undecodable bytes become U+FFFD and overlong lines are cut to ``max_line`` bytes; both are
        counted and reported once, when the stream ends, with the first line affected.
        """
        path = self.file(rel)
        if path is None:
            return
        bad_utf8 = _Tally()
        overlong = _Tally()
        number = 0
        try:
            with path.open("rb") as handle:
                while chunk := handle.readline(max_line):
                    number += 1
                    if len(chunk) == max_line and not chunk.endswith(b"\n"):
                        overlong.add(number)
                        while (rest := handle.readline(max_line)) and not rest.endswith(b"\n"):
                            pass
                    try:
                        text = chunk.decode("utf-8")
                    except UnicodeDecodeError:
                        bad_utf8.add(number)
                        text = chunk.decode("utf-8", errors="replace")
                    yield number, text.rstrip("\r\n")
        except OSError as exc:
            self.problem(rel, f"reading stopped at line {number}: {exc.strerror or exc}")
        if bad_utf8.count:
            self.problem(
                rel,
                f"{bad_utf8.count:,} line(s) are not valid UTF-8 (first: line {bad_utf8.first});"
                " undecodable bytes were replaced",
            )
        if overlong.count:
            self.problem(
                rel,
                f"{overlong.count:,} line(s) exceed {max_line:,} bytes (first: line"
                f" {overlong.first}); they were cut",
            )
