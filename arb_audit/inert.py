r"""Agent-written text made inert before it reaches a terminal: the one place that decides how.

A run folder's strings (transcripts, file names, commands, task names, tool output) are written by the
agent under audit. Sent to a terminal as they are, a control character or escape sequence could
retitle the window (``ESC ]0;``), write the clipboard (``ESC ]52;``), clear or redraw the screen (CSI,
also as the single C1 byte ``\x9b``), or start a device control string; a bidirectional override or
isolate could reorder what a line seems to say, and a line separator could forge a line of its own.
Each such character is shown as a visible escape (``\x1b``, ``\u202e``), so the reviewer sees what
the agent wrote without the terminal acting on it. Rich markup (``[bold red]``, ``[link=...]``) is not
a character matter: agent text is never given to rich or textual as markup, only as plain ``Text`` or
with markup off, and the tests check that it shows literally.
"""

from __future__ import annotations

import re

_BEYOND_C0 = r"\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
"""DEL, the C1 controls (CSI, OSC, DCS as one byte each), the bidirectional marks, embeddings, overrides
and isolates, and the line and paragraph separators."""
UNSAFE = re.compile(rf"[\x00-\x1f{_BEYOND_C0}]")
"""C0 and C1 control characters (ESC, CSI, OSC, DCS, BEL...), line and paragraph separators, and the
bidirectional marks, embeddings, overrides and isolates: each could forge, hide or reorder a line."""
_SURROGATES = r"\ud800-\udfff"
"""Lone surrogates: a file name's bytes that are not UTF-8 come as U+DC80-U+DCFF, and no terminal can be
sent one. Escaped by the functions here, but kept out of :data:`UNSAFE`, whose pattern polars' regex
engine also reads (it has no surrogates)."""
_UNSAFE_IN_LINE = re.compile(rf"[\x00-\x1f{_BEYOND_C0}{_SURROGATES}]")
_UNSAFE_IN_BLOCK = re.compile(rf"[\x00-\x08\x0b-\x1f{_BEYOND_C0}{_SURROGATES}]")
"""The same, less the tab and the line feed, which a block of text (code, a command's output) keeps."""
_UNSAFE_IN_JSON = re.compile(f"[{_BEYOND_C0}{_SURROGATES}]")
"""What JSON lets stand raw in a string (it escapes the C0 controls itself)."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a name that is not UTF-8, shown as that byte
        code -= 0xDC00
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def inert(text: str) -> str:
    """Return ``text`` for one terminal line: every unsafe character (see :data:`UNSAFE`) as an escape."""
    return _UNSAFE_IN_LINE.sub(_escape, text)


def inert_block(text: str) -> str:
    """Return ``text`` for a block of lines: tabs and line feeds kept, every other unsafe character escaped.

    A carriage return ending a line is dropped; any other is escaped: alone it would move the cursor
    back over a line already drawn.
    """
    return _UNSAFE_IN_BLOCK.sub(_escape, text.replace("\r\n", "\n"))


def inert_json(text: str) -> str:
    r"""Return JSON text with each unsafe character JSON lets stand raw (DEL, C1, bidi) as a ``\u`` escape.

    The text decodes to the same value: these characters only occur inside strings, where the escape
    means the character. A terminal shown ``--json`` then acts on none of them.
    """
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
