"""Opening files of an untrusted folder: only regular files, never blocking, read in bounded pieces.

A run folder, a workspace or a submitted model path is written by an agent. A FIFO named
``model.safetensors`` blocks an ``open()`` for reading until some writer comes, forever; a socket or a
device is no file to hash either; and a file truncated while it is mapped kills the reader with
SIGBUS. So every reader of such a folder opens through :func:`open_regular`: the path is checked with
``lstat`` (nothing is opened that is not a regular file, so a device sees no ``open``), then opened
with ``O_NONBLOCK`` and ``O_NOFOLLOW`` and checked again with ``fstat`` (a FIFO or symlink swapped in
between is refused, not waited on). Contents are read with ``pread`` in bounded pieces, never mapped,
and a file that shrinks or changes while it is read is an error, not a wrong answer. The errors are
``OSError`` subclasses naming the file, so every reader's existing ``except OSError`` reports them.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

PIECE_BYTES = 16 * 1024 * 1024
"""Bytes read at a time: large enough for BLAKE3's threads, small enough to bound memory."""

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISLNK, "a symlink"),
)


def kind(mode: int) -> str:
    """Name what a file of ``mode`` is (``a FIFO``, ``a socket``, ...; ``a regular file``)."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return next((name for test, name in _KINDS if test(mode)), "a special file")


def is_special(mode: int) -> bool:
    """Tell whether ``mode`` is neither a regular file, a folder nor a symlink (a FIFO, socket, device)."""
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


class NotRegularFile(OSError):
    """A path that is not a regular file (a FIFO, socket, device, folder or symlink): it is not read."""

    def __init__(self, path: Path | str, mode: int) -> None:
        super().__init__(errno.EINVAL, f"it is {kind(mode)}, not a regular file", str(path))


class ChangedWhileRead(OSError):
    """A file that shrank or was rewritten while it was read: what was read is not its content."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(errno.EAGAIN, "it changed while it was read", str(path))


def open_regular(path: Path | str, *, follow_symlinks: bool = False) -> io.BufferedReader:
    """Open ``path`` for reading if it is a regular file, without ever blocking; else NotRegularFile.

    A symlink is refused unless ``follow_symlinks`` (the caller has checked where it leads). The
    returned file is an ordinary buffered binary file, to be closed by the caller.
    """
    before = os.stat(path, follow_symlinks=follow_symlinks)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFile(path, before.st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode):  # swapped between the stat and the open
            raise NotRegularFile(path, now.st_mode)
        os.set_blocking(fd, True)  # a regular file: reads are ordinary from here on
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, max_bytes: int, *, follow_symlinks: bool = False) -> bytes:
    """Return the bytes of the regular file ``path``, at most ``max_bytes + 1`` of them.

    One byte more than the limit tells the caller that the file is larger (it may have grown since
    it was measured); nothing beyond that is read.
    """
    with open_regular(path, follow_symlinks=follow_symlinks) as handle:
        return handle.read(max_bytes + 1)


def pieces(handle: BinaryIO, start: int, end: int, *, name: Path | str = "") -> Iterator[bytes]:
    """Yield the bytes ``start:end`` of an open file in pieces of at most PIECE_BYTES (pread: no seek).

    A file that ends before ``end`` (truncated while read) raises ChangedWhileRead naming ``name``.
    """
    fd, position = handle.fileno(), start
    while position < end:
        piece = os.pread(fd, min(PIECE_BYTES, end - position), position)
        if not piece:
            raise ChangedWhileRead(name or getattr(handle, "name", ""))
        yield piece
        position += len(piece)


def feed(update: Callable[[bytes], object], handle: BinaryIO, start: int, end: int, name: Path | str) -> None:
    """Pass the bytes ``start:end`` of an open file to ``update`` (a hasher's), piece by piece."""
    for piece in pieces(handle, start, end, name=name):
        update(piece)


def check_unchanged(handle: BinaryIO, before: os.stat_result, name: Path | str) -> None:
    """Raise ChangedWhileRead if the open file is no longer as ``before`` (its fstat when first read)."""
    now = os.fstat(handle.fileno())
    if (now.st_size, now.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        raise ChangedWhileRead(name)
