"""Safe, bounded reading of an untrusted run folder.

Every reader returns what it could read and records a :class:`Problem` naming the file for what it
could not: missing, too large, not UTF-8, not JSON, truncated, or reached through a symlink that
leaves the folder. Line readers stream in blocks, so a log of any size, with lines of any length and
any line ending (LF, CRLF, CR), costs bounded memory.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from arb_audit.model import Problem
from arb_audit.regular_files import open_regular, read_regular

MAX_JSON_BYTES = 64 * 1024 * 1024
"""Largest JSON document read whole; anything larger is refused with a problem."""
MAX_LINE_BYTES = 64 * 1024
"""Longest line kept from a streamed log; longer lines are cut and counted."""
BLOCK_BYTES = 1024 * 1024
"""Bytes read at a time by the line reader."""
INT32_MAX = 2**31 - 1
"""Counters, ids and exit codes beyond this are not believed (and would not fit the store)."""
_DIGITS = re.compile(r"[-+]?\d{1,10}")


def json_number(value: Any) -> float | None:
    """Return a JSON number as a finite float; None for anything else (bools, strings, NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def json_int(value: Any) -> int | None:
    """Return a JSON integer within the 32-bit range; None for anything else (bools included)."""
    if isinstance(value, int) and not isinstance(value, bool) and -INT32_MAX <= value <= INT32_MAX:
        return value
    return None


def text_int(text: str) -> int | None:
    """Parse a decimal integer written in a log, within the 32-bit range; None otherwise."""
    if not _DIGITS.fullmatch(text.strip()):
        return None
    value = int(text)
    return value if -INT32_MAX <= value <= INT32_MAX else None


def text_number(text: str) -> float | None:
    """Parse a number written in a log; None unless it is finite."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def utf8_name(name: str) -> bool:
    """Tell whether a file name read from the disk is UTF-8 (else it holds surrogate escapes).

    An agent can name a file with any bytes; a name that is not UTF-8 cannot be stored or printed.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


BOM = b"\xef\xbb\xbf"
"""A UTF-8 byte-order mark, dropped from the start of a file as ``utf-8-sig`` does for JSON."""


def whole_characters(cut: bytes) -> bytes:
    """Drop a multi-byte character that a cut split in two, so the cut is not mistaken for bad UTF-8."""
    for back in range(1, min(4, len(cut)) + 1):
        byte = cut[-back]
        if byte < 0x80:
            return cut
        if byte >= 0xC0:  # a lead byte: keep it only if its whole sequence is there
            needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return cut if back >= needed else cut[:-back]
    return cut


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", int: "number", float: "number"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


@dataclass
class Tally:
    """How often a defect occurred and where first, in constant memory however hostile the input."""

    count: int = 0
    """Occurrences so far."""
    first: int | None = None
    """Line, entry or position of the first occurrence."""
    example: str = ""
    """What the first occurrence looked like, shortened."""

    def add(self, where: int, example: str = "") -> None:
        """Count one occurrence at ``where``."""
        self.count += 1
        if self.first is None:
            self.first, self.example = where, example


def split_lines(handle: BinaryIO, max_line: int) -> Iterator[tuple[bytes, bool]]:
    """Yield ``(line without its ending, was cut)`` from a binary stream, in bounded memory.

    LF, CRLF and lone CR all end a line (``bytes.splitlines``), wherever the blocks happen to split
    them; a line longer than ``max_line`` is cut to that length and the rest is skipped unheld.
    """
    kept = bytearray()  # the start of a line that began in an earlier block, at most max_line bytes
    cut = False  # that line is longer than what is kept
    after_cr = False  # the previous block ended with CR: an LF opening this block belongs to it
    while block := handle.read(BLOCK_BYTES):
        if after_cr and block[:1] == b"\n":
            block = block[1:]
        after_cr = False
        pieces = block.splitlines(keepends=True)
        if not pieces:
            continue
        tail = b""
        if not pieces[-1].endswith((b"\n", b"\r")):
            tail = pieces.pop()
        after_cr = not tail and pieces[-1].endswith(b"\r")
        for piece in pieces:
            line = piece.rstrip(b"\r\n")
            if kept or cut:
                room = max_line - len(kept)
                yield bytes(kept) + line[: max(room, 0)], cut or len(line) > room
                kept.clear()
                cut = False
            else:
                yield (line[:max_line], True) if len(line) > max_line else (line, False)
        room = max_line - len(kept)
        cut = cut or len(tail) > room
        kept += tail[: max(room, 0)]
    if kept or cut:
        yield bytes(kept), cut


@dataclass
class RunFolder:
    """An untrusted run folder and the problems found while reading it."""

    root: Path
    """The run folder (absolute, symlinks resolved)."""
    problems: list[Problem] = field(default_factory=list)
    """Problems found so far, in the order they were found."""

    def problem(self, rel: str, message: str) -> None:
        """Record a problem about ``rel`` (a path relative to the folder)."""
        self.problems.append(Problem(path=rel, message=message))

    def contains(self, path: Path) -> bool:
        """Tell whether ``path``, with every symlink on it resolved, stays inside the folder."""
        try:
            path.resolve(strict=False).relative_to(self.root.resolve())
        except (ValueError, OSError, RuntimeError):
            return False
        return True

    def file(self, rel: str) -> Path | None:
        """Return the path of a regular file ``rel`` that is safe to read, or None.

        A missing file returns None silently (the caller knows which files are optional); a path that
        leads out of the folder through any symlink on it, or something that is not a regular file
        (a folder, a FIFO, a device), is recorded as a problem.
        """
        path = self.root / rel
        try:
            if not path.exists() and not path.is_symlink():
                return None
        except (OSError, ValueError) as exc:  # a folder on its way that cannot be searched, a NUL byte
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            self.problem(rel, f"cannot be examined: {reason}")
            return None
        if not self.contains(path):
            try:
                target = str(path.resolve(strict=False))
            except (OSError, RuntimeError):
                target = "an unresolvable place"
            self.problem(rel, f"leads out of the run folder through a symlink (to {target!r}); not read")
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
        ``NaN`` and ``Infinity`` (which Python's json writes) are read as null and reported.
        """
        path = self.file(rel)
        if path is None:
            return None
        try:
            size = path.stat().st_size
            if size > max_bytes:
                self.problem(rel, f"is {size:,} bytes, over the {max_bytes:,}-byte limit for JSON; not read")
                return None
            # opened as a regular file only (a FIFO swapped in after file() checked is not waited on)
            raw = read_regular(path, max_bytes, follow_symlinks=True)
        except OSError as exc:
            self.problem(rel, f"cannot be read: {exc.strerror or exc}")
            return None
        if len(raw) > max_bytes:
            self.problem(rel, f"grew past the {max_bytes:,}-byte limit for JSON while it was read; not read")
            return None
        if not raw.strip():
            self.problem(rel, "is empty")
            return None
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.problem(rel, f"is not UTF-8 (byte {exc.start}); not read")
            return None
        data, error, non_finite = parse_json(text)
        if error is not None:
            self.problem(rel, error)
            return None
        if non_finite:
            self.problem(rel, "holds NaN, Infinity or out-of-range numbers; read as null")
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
        bad_utf8 = Tally()
        overlong = Tally()
        number = 0
        try:
            with open_regular(path, follow_symlinks=True) as handle:
                for chunk, cut in split_lines(handle, max_line):
                    number += 1
                    if number == 1 and chunk.startswith(BOM):
                        chunk = chunk[len(BOM) :]
                    if cut:
                        overlong.add(number)
                        chunk = whole_characters(chunk)
                    try:
                        text = chunk.decode("utf-8")
                    except UnicodeDecodeError:
                        bad_utf8.add(number)
                        text = chunk.decode("utf-8", errors="replace")
                    yield number, text
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
                f"{overlong.count:,} line(s) exceed {max_line:,} bytes (first: line {overlong.first});"
                " they were cut",
            )


_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(text: str) -> str:
    """Replace lone surrogates (JSON escapes such as backslash-ud800 that pair with nothing) by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def _scrub(data: Any) -> Any:
    """Return ``data`` with every string free of lone surrogates (they cannot be stored or printed)."""
    if isinstance(data, str):
        return _without_surrogates(data)
    root = [data]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in pairs:
            if isinstance(value, str):
                node[key] = _without_surrogates(value)
            elif isinstance(value, dict | list):
                stack.append(value)
            if isinstance(node, dict) and isinstance(key, str) and (clean := _without_surrogates(key)) != key:
                node[clean] = node.pop(key)
    return root[0]


def parse_json(text: str) -> tuple[Any, str | None, bool]:
    """Parse ``text`` as JSON; return ``(data, why it could not be read, whether NaN/Infinity were seen)``.

    Deep nesting and giant integers are refused with a reason instead of raising; ``NaN``,
    ``Infinity`` and numbers too large for a float are read as null.
    """
    seen = False

    def constant(_: str) -> None:
        nonlocal seen
        seen = True

    def number(literal: str) -> float | None:
        nonlocal seen
        value = float(literal)
        if math.isfinite(value):
            return value
        seen = True
        return None

    try:
        data = json.loads(text, parse_constant=constant, parse_float=number)
    except json.JSONDecodeError as exc:
        truncated = exc.pos >= len(text.rstrip()) - 1 or exc.msg.startswith("Unterminated string")
        what = "is truncated" if truncated else "is not valid JSON"
        return None, f"{what}: {exc.msg} at line {exc.lineno}, column {exc.colno}", seen
    except RecursionError:
        return None, "is nested too deeply to read", seen
    except ValueError as exc:
        return None, f"is not readable JSON: {exc}", seen
    if "\\ud" in text or "\\uD" in text:
        data = _scrub(data)
    return data, None, seen
