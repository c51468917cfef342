"""Reading a request body with bounds the server sets, whatever the request's headers say.

A body is read from a ``Content-Length`` of plain digits or from ``Transfer-Encoding: chunked``,
never past ``limit`` bytes and never past a deadline: a negative, non-numeric, repeated or huge length,
an unknown transfer coding, both framings at once or neither, a malformed chunk and a body over the
limit are each refused with a 4xx and a reason, and memory stays within the limit. A body that stops
arriving (the client went away or went quiet) is told apart from a refused one: nobody may be left to
answer, and it was never a whole request.
"""

from __future__ import annotations

import re
import socket
import time
from email.message import Message
from io import BufferedIOBase

PIECE_BYTES = 64 * 1024
"""Most bytes read at once (the socket's timeout is set again before each read)."""
MAX_CHUNK_LINE = 1024
"""Longest chunk-size line (with extensions) or trailer line taken."""
MAX_TRAILERS = 32
"""Most trailer lines taken after the last chunk."""
_DIGITS = re.compile(r"[0-9]{1,19}")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,16}")


class BodyRefused(Exception):
    """The body is not read; answer ``status`` with ``reason``."""

    def __init__(self, status: int, reason: str, whole: bool, unread: bool) -> None:
        super().__init__(reason)
        self.status = status
        """The HTTP status to answer (400, 408, 411, 413)."""
        self.reason = reason
        """Why, for the answer."""
        self.whole = whole
        """The request arrived as far as the server needed to judge it (a refusal to record); False
        when it stopped arriving (an incomplete request: not an attempt)."""
        self.unread = unread
        """Bytes of it may still be on their way: drain them before closing, so that the client
        reads the answer rather than a reset."""


class _Incomplete(Exception):
    """The body stopped arriving: the peer closed, or the deadline passed."""

    def __init__(self, timed_out: bool) -> None:
        super().__init__("timed out" if timed_out else "closed")
        self.timed_out = timed_out


class _Reader:
    """Reads from ``rfile`` with the socket's timeout set to what is left before ``deadline``."""

    def __init__(self, rfile: BufferedIOBase, sock: socket.socket, deadline: float) -> None:
        self.rfile, self.sock, self.deadline = rfile, sock, deadline

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Incomplete(timed_out=True)
        self.sock.settimeout(left)

    def exactly(self, size: int) -> bytes:
        """Read ``size`` bytes, in pieces; _Incomplete when they do not all come in time."""
        pieces: list[bytes] = []
        while size > 0:
            self._arm()
            try:
                piece = self.rfile.read(min(size, PIECE_BYTES))
            except TimeoutError as exc:
                raise _Incomplete(timed_out=True) from exc
            except OSError as exc:
                raise _Incomplete(timed_out=False) from exc
            if not piece:
                raise _Incomplete(timed_out=False)
            pieces.append(piece)
            size -= len(piece)
        return b"".join(pieces)

    def line(self) -> bytes:
        """Read one line of at most MAX_CHUNK_LINE bytes (longer: BodyRefused)."""
        self._arm()
        try:
            line = self.rfile.readline(MAX_CHUNK_LINE + 1)
        except TimeoutError as exc:
            raise _Incomplete(timed_out=True) from exc
        except OSError as exc:
            raise _Incomplete(timed_out=False) from exc
        if not line.endswith(b"\n"):
            if len(line) > MAX_CHUNK_LINE:
                raise BodyRefused(400, "Malformed chunked body: a line is too long", True, True)
            raise _Incomplete(timed_out=False)
        return line


def read_body(
    rfile: BufferedIOBase, sock: socket.socket, headers: Message, limit: int, timeout_s: float
) -> bytes:
    """Read the request body framed by ``headers``: at most ``limit`` bytes, within ``timeout_s``.

    Raises BodyRefused with the status and reason to answer.
    """
    reader = _Reader(rfile, sock, time.monotonic() + timeout_s)
    codings = headers.get_all("Transfer-Encoding") or []
    lengths = headers.get_all("Content-Length") or []
    try:
        if codings:
            if lengths:  # which one frames it is how requests are smuggled past a proxy: refuse both
                raise BodyRefused(400, "Both Transfer-Encoding and Content-Length were sent", True, True)
            coding = ",".join(codings).strip().lower()
            if coding != "chunked":
                raise BodyRefused(
                    400, f"Transfer-Encoding {coding[:40]!r} is not supported; send chunked", True, True
                )
            return _chunked(reader, limit)
        if not lengths:
            raise BodyRefused(411, "Length Required: send Content-Length or a chunked body", True, True)
        values = {value.strip() for value in lengths}
        if len(values) > 1:
            raise BodyRefused(400, "Content-Length was sent more than once, differently", True, True)
        value = values.pop()
        if not _DIGITS.fullmatch(value):
            raise BodyRefused(400, f"Content-Length {value[:40]!r} is not a number of bytes", True, True)
        if int(value) > limit:
            raise BodyRefused(413, f"Request body over {limit} bytes", True, True)
        return reader.exactly(int(value))
    except _Incomplete as stopped:
        if stopped.timed_out:
            raise BodyRefused(
                408, f"Request body not received within {timeout_s:g}s", False, True
            ) from stopped
        raise BodyRefused(400, "Request body ended early", False, False) from stopped


def _chunked(reader: _Reader, limit: int) -> bytes:
    """Decode a chunked body (chunk extensions and trailers read and dropped)."""
    pieces: list[bytes] = []
    total = 0
    while True:
        size_field = reader.line().split(b";", 1)[0].strip()
        if not _HEX.fullmatch(size_field):
            raise BodyRefused(400, "Malformed chunked body: a chunk size is not hexadecimal", True, True)
        size = int(size_field, 16)
        if size == 0:
            break
        total += size
        if total > limit:
            raise BodyRefused(413, f"Request body over {limit} bytes", True, True)
        pieces.append(reader.exactly(size))
        if reader.exactly(2) != b"\r\n":
            raise BodyRefused(400, "Malformed chunked body: a chunk does not end with CRLF", True, True)
    for _ in range(MAX_TRAILERS):
        if reader.line() in (b"\r\n", b"\n"):
            return b"".join(pieces)
    raise BodyRefused(400, f"Malformed chunked body: over {MAX_TRAILERS} trailer lines", True, True)
