"""A shell command line's words, as the shell splits them, within a bound on what is read so."""

from __future__ import annotations

import shlex

MAX_SHLEX_CHARS = 20_000
"""Longest text split with :mod:`shlex`, which is pure Python and quadratic in the length of one word
(a quoted megabyte took seconds); a command anyone runs is far shorter."""


def shell_words(text: str, comments: bool = False) -> list[str] | None:
    """Return the words of ``text`` as a POSIX shell splits them (quotes removed), or None.

    None when the text cannot be split so: an unclosed quote, or text longer than
    :data:`MAX_SHLEX_CHARS`. ``comments``: drop a ``#`` comment and what follows it.
    """
    if len(text) > MAX_SHLEX_CHARS:
        return None
    try:
        return shlex.split(text, comments=comments)
    except ValueError:
        return None
