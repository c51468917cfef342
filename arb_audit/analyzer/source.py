"""One untrusted workspace file turned into Python source text and a libcst Module, never executed.

An agent's workspace can hold anything under a source name: binary blobs, Python 2, notebooks, text
in a declared legacy encoding, or code built so that a recursive parser exhausts its stack. Bytes are
read, decoded and parsed here; nothing is imported or run, and every failure comes back as a message
(``SourceFile.error``, ``Parsed.error``) rather than an exception.
"""

from __future__ import annotations

import ast
import bisect
import codecs
import io
import json
import os
import re
import stat
import threading
import tokenize
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import libcst

MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""Larger files are refused, with their size, before they are read."""

MAX_NESTING = 200
"""Bracket or indentation depth beyond which text is refused before parsing (libcst and ast recurse)."""

MAX_CHAIN = 400
"""Longest operator chain (open brackets included) or ``elif`` chain accepted before parsing.

``a + b + ...``, ``x.y.z...``, ``not not ...``, ``f()()...`` and ``elif`` runs nest one tree level per
link, and libcst's native parser recurses per level: a few thousand links overflow an 8 MiB stack and
kill the process, and its time grows faster than quadratically with the length (1,000 ``+`` links
take about a second, 4,000 about two minutes). Commas and, outside brackets, newlines end a chain.
"""

SourceKind = Literal["python", "notebook", "marimo", "yaml", "shell", "other"]
"""What a file is, decided by its suffix (and, for marimo, by its text)."""

_SUFFIX_KINDS: dict[str, SourceKind] = {
    ".py": "python",
    ".pyw": "python",
    ".ipynb": "notebook",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".sh": "shell",
    ".bash": "shell",
}
_BINARY_PROBE = 8192
_BOM = codecs.BOM_UTF8
# Decoders that PEP 263 would accept but that are quadratic or not meant for source text.
_REFUSED_CODECS = frozenset({"punycode", "idna"})
_PARSER_STACK_BYTES = 64 * 1024 * 1024
_STACK_LOCK = threading.Lock()
_MESSAGE_CHARS = 200
SKIPPED_LINE = "# arb-audit: unparsable lines skipped"
"""First line put in place of a chunk that did not parse (the rest of the chunk becomes blank lines)."""
_GROUP_LINES = 256  # lines of chunks tried in one libcst call before they are tried one by one
# IPython cell magics whose body is still Python; the body of any other (%%bash, %%writefile...) is not.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})


@dataclass(slots=True)
class SourceFile:
    """One file of the workspace, decoded (or the reason it could not be)."""

    path: str
    """The path as given by the caller."""
    kind: SourceKind
    """What the file is: by suffix, and ``marimo`` for a Python file that is a marimo notebook."""
    text: str | None
    """Python source (notebooks: the code cells joined), or the raw text; None when unreadable."""
    error: str | None
    """Why the file could not be read or decoded; None when it was. A file read with a caveat (UTF-16
    text, which CPython does not run) has both its text and the problem."""
    line_map: list[tuple[int, int]] | None = None
    """Notebooks: for each line of ``text`` (index = line - 1) its ``(cell_index, line_in_cell)``.

    ``cell_index`` counts every cell of the notebook from 0, ``line_in_cell`` from 1; the blank line
    put between two cells maps to ``(next_cell_index, 0)``. None for every other kind.
    """


@dataclass(slots=True)
class Parsed:
    """The outcome of parsing Python text."""

    module: libcst.Module | None
    """The parsed module; None when nothing could be parsed."""
    error: str | None
    """Why the text (or part of it) did not parse; None when it all did."""
    partial: bool
    """True when ``module`` holds only the top-level chunks that parsed, at their original lines."""


# ---------------------------------------------------------------------------------------- reading


def read_source(path: Path, display: str | None = None) -> SourceFile:
    """Read and decode one file without following a symlink; never raises.

    Args:
        path: The file to read.
        display: The path to report (``SourceFile.path``); ``str(path)`` when None.

    Returns:
        The decoded file, or one whose ``error`` says why it could not be read.
    """
    shown = str(path) if display is None else display
    raw, refused = read_bytes(path)
    if raw is None:
        return SourceFile(shown, kind_for(str(path)), None, refused)
    return _from_bytes(raw, shown, kind_for(str(path)))


def read_bytes(path: Path) -> tuple[bytes | None, str | None]:
    """Read a regular file of at most MAX_SOURCE_BYTES without following a symlink; never raises.

    Returns:
        The bytes, or None and why they could not be read.
    """
    try:
        info = os.lstat(path)
    except (OSError, ValueError) as exc:
        return None, f"cannot read: {_reason(exc)}"
    refused = _refuse_stat(info.st_mode, info.st_size)
    if refused:
        return None, refused
    try:
        # O_NOFOLLOW and the fstat below close the gap between lstat and open: a symlink or FIFO
        # swapped in meanwhile is refused rather than followed or waited on.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        return None, f"cannot read: {_reason(exc)}"
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            refused = _refuse_stat(info.st_mode, info.st_size)
            if refused:
                return None, refused
            raw = handle.read(MAX_SOURCE_BYTES + 1)
    except OSError as exc:
        return None, f"cannot read: {_reason(exc)}"
    if len(raw) > MAX_SOURCE_BYTES:  # grew after the fstat
        return None, _too_large(len(raw))
    return raw, None


def source_from_bytes(raw: bytes, path: str) -> SourceFile:
    """Decode a file's bytes (e.g. a blob from git) as ``read_source`` would; never raises.

    Args:
        raw: The file's content.
        path: Its path; the suffix decides the kind.

    Returns:
        The decoded file, or one whose ``error`` says why it could not be decoded.
    """
    return _from_bytes(raw, path, kind_for(path))


def kind_for(path: str) -> SourceKind:
    """Return the kind of file a path names, by its suffix."""
    return _SUFFIX_KINDS.get(os.path.splitext(path)[1].lower(), "other")


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


def _too_large(size: int) -> str:
    return f"too large: {size:,} bytes (the limit is {MAX_SOURCE_BYTES:,})"


def _refuse_stat(mode: int, size: int) -> str | None:
    """Say why a file with this mode and size is not read, or None when it may be."""
    if stat.S_ISLNK(mode):
        return "symlink, not followed"
    if stat.S_ISDIR(mode):
        return "a directory, not a file"
    if not stat.S_ISREG(mode):
        return "not a regular file (a device, socket or pipe)"
    if size > MAX_SOURCE_BYTES:
        return _too_large(size)
    return None


def _from_bytes(raw: bytes, path: str, kind: SourceKind) -> SourceFile:
    if len(raw) > MAX_SOURCE_BYTES:
        return SourceFile(path, kind, None, _too_large(len(raw)))
    wide = _wide_text(raw) if kind == "python" else None
    if wide is None and b"\x00" in raw[:_BINARY_PROBE]:
        return SourceFile(path, kind, None, "binary file (NUL bytes), not source")
    if kind == "notebook":
        return _notebook(raw, path)
    text: str | None
    error: str | None
    if wide is not None:
        text, error = wide
    else:
        text, error = _decode_python(raw) if kind == "python" else _decode(raw, "utf-8", None)
    if text is not None and kind == "python" and "import marimo" in text and "@app.cell" in text:
        kind = "marimo"
    elif text is not None and kind == "python":
        text = percent_script(text)
    return SourceFile(path, kind, text, error)


_PERCENT_CELL = re.compile(r"[ \t]*# ?%%")
"""A cell marker of a percent-format script (jupytext's, VS Code's and Spyder's ``# %%``)."""


def percent_script(text: str) -> str:
    """Return a percent-format script with its cells' IPython magics and shell escapes commented.

    A ``.py`` notebook (``# %%`` cells, as jupytext or VS Code write one) runs in a Jupyter kernel,
    where ``!pip install trl`` and ``%%bash`` cells are valid: each cell is read as a notebook's code
    cell is, line for line, so line numbers stay the file's. A file without cell markers is returned
    unchanged (a line starting with ``%`` may continue an expression there).
    """
    if "%%" not in text or not any(_PERCENT_CELL.match(line) for line in text.splitlines()):
        return text
    lines = _NEWLINE.split(text)
    out: list[str] = []
    cell: list[str] = []
    for line in [*lines, "# %%"]:
        if _PERCENT_CELL.match(line):
            converted = _code_lines("\n".join(cell)) if cell else []
            out.extend(converted + [""] * (len(cell) - len(converted)))
            out.append(line)
            cell = []
        else:
            cell.append(line)
    out.pop()  # (the marker added to end the last cell)
    return "\n".join(out)


_WIDE_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
"""Byte-order marks of UTF-32 and UTF-16 text (UTF-32's first: its little-endian mark starts as UTF-16's)."""


def _wide_text(raw: bytes) -> tuple[str | None, str] | None:
    """Decode text a byte-order mark says is UTF-16 or UTF-32, with a problem saying so; None otherwise.

    Editors on Windows save Python files so. CPython refuses to run them (its source must be
    ASCII-compatible), which the problem says; what the code would do is still read (for Python files).
    """
    for bom, encoding in _WIDE_BOMS:
        if not raw.startswith(bom):
            continue
        if raw[len(bom) :] and b"\x00" not in raw[len(bom) : len(bom) + _BINARY_PROBE]:
            # code in UTF-16 or UTF-32 has a zero byte in every ASCII character: bytes after the mark
            # with none are another encoding's (UTF-8 behind stray bytes), decoded as such
            return None
        try:
            text = raw[len(bom) :].decode(encoding)
        except UnicodeDecodeError as exc:
            if encoding.startswith("utf-32"):
                continue  # (UTF-16 text whose first character is U+0000 starts as UTF-32's mark)
            offset = len(bom) + exc.start
            return None, f"not {encoding} text, as its byte-order mark says (invalid at offset {offset})"
        return text, f"{encoding} text (byte-order mark): CPython does not run it as it is; read decoded"
    return None


def _decode_python(raw: bytes) -> tuple[str | None, str | None]:
    """Decode Python source as CPython would: a UTF-8 BOM, else a PEP 263 coding cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        if exc.msg == "invalid or missing encoding declaration":
            return _decode(raw, "utf-8", None)  # no cookie, bad UTF-8: the decoder says where
        return None, f"bad coding cookie: {exc.msg}"
    if encoding in ("utf-8", "utf-8-sig"):
        return _decode(raw, "utf-8", None)
    return _decode(raw, encoding, encoding)


def _decode(raw: bytes, encoding: str, cookie: str | None) -> tuple[str | None, str | None]:
    """Decode ``raw`` (after any UTF-8 BOM); ``cookie`` is the declared encoding, if one was."""
    start = len(_BOM) if raw.startswith(_BOM) else 0
    try:
        if codecs.lookup(encoding).name in _REFUSED_CODECS:
            return None, f"coding cookie {encoding!r} is not read"
        return raw[start:].decode(encoding), None
    except UnicodeDecodeError as exc:
        offset = start + exc.start
        what = f"{encoding} text, as its coding cookie declares" if cookie else "UTF-8 text"
        return None, f"not {what} (invalid byte 0x{raw[offset]:02x} at offset {offset})"
    except LookupError as exc:  # a codec that exists but decodes bytes to bytes (base64, rot13...)
        return None, f"coding cookie {encoding!r} is not a text encoding ({exc})"


# -------------------------------------------------------------------------------------- notebooks


def _notebook(raw: bytes, path: str) -> SourceFile:
    try:
        document = json.loads(raw[len(_BOM) :] if raw.startswith(_BOM) else raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return SourceFile(path, "notebook", None, f"malformed notebook JSON: {_shorten(str(exc))}")
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        return SourceFile(path, "notebook", None, "not a Jupyter notebook (no 'cells' list of nbformat 4)")
    lines: list[str] = []
    line_map: list[tuple[int, int]] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            return SourceFile(
                path, "notebook", None, f"not a Jupyter notebook (cell {index} is not an object)"
            )
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str):
            return SourceFile(
                path, "notebook", None, f"not a Jupyter notebook (cell {index}: source is not text)"
            )
        cell_lines = _code_lines(source)
        if not cell_lines:
            continue
        if lines:
            lines.append("")
            line_map.append((index, 0))
        lines.extend(cell_lines)
        line_map.extend((index, number) for number in range(1, len(cell_lines) + 1))
    text = "\n".join(lines) + "\n" if lines else ""
    return SourceFile(path, "notebook", text, None, line_map)


_NEWLINE = re.compile(r"\r\n|\r|\n")
# (a magic is ``%name``/``%%name``, an escape ``!command``: a line continuing an expression with ``% 2``
# or ``!= b`` is neither)
_MAGIC_LINE = re.compile(r"[ \t]*(?:!(?!=)|%%?[A-Za-z_]|[\w.]+[ \t]*=[ \t]*(?:!(?!=)|%%?[A-Za-z_]))")
_CELL_MAGIC = re.compile(r"[ \t]*%%(\w*)")


def _code_lines(source: str) -> list[str]:
    """Split a code cell into lines, with IPython magics and shell escapes turned into comments."""
    lines = _NEWLINE.split(source)
    if lines and lines[-1] == "":
        lines.pop()
    cell_magic = _CELL_MAGIC.match(lines[0]) if lines else None
    if cell_magic and cell_magic.group(1) not in _PYTHON_CELL_MAGICS:
        return [_commented(line) for line in lines]  # %%bash, %%writefile...: the body is not Python
    converted: list[str] = []
    continued = False
    for line in lines:
        if continued:  # a shell escape's backslash-continued lines belong to it
            converted.append(_commented(line))
        elif _MAGIC_LINE.match(line):
            # `pass` keeps the block valid where the escape was its only statement (`if ...: !pip ...`).
            converted.append(_commented(line, "pass  "))
        else:
            converted.append(line)
            continue
        continued = line.rstrip().endswith("\\")
    return converted


def _commented(line: str, keep: str = "") -> str:
    body = line.lstrip(" \t")
    return f"{line[: len(line) - len(body)]}{keep}# {body}"


# ----------------------------------------------------------------------------------------- parsing


def parse_python(text: str, guarded: bool = True) -> Parsed:
    """Parse Python text with libcst, tolerating what can be tolerated; never raises.

    Text nested deeper than ``MAX_NESTING`` (brackets, indentation) or ``MAX_CHAIN`` (operator or
    ``elif`` chains) is refused unparsed. On a syntax error the top-level chunks that parse on their
    own are kept, at their original line numbers, and ``partial`` is True. (libcst's time grows with
    size times bracket depth, which limits alone cannot bound, and it holds the GIL while it parses:
    :mod:`arb_audit.analyzer.batch` bounds each file's time in a worker process it can stop.)

    Args:
        text: Python source.
        guarded: Check the nesting first and parse on a thread with a large stack, so that hostile
            text cannot overflow this process's stack. A worker process that may die (its death is
            reported as the file's error) passes False: the guards cost about half a parse; text
            with a syntax error is still handled by the guarded path.

    Returns:
        The module (whole or partial) and the first error, if any.
    """
    if not guarded:
        module, syntax, _ = _try_parse(text)
        if module is not None or syntax is None:
            return Parsed(module, None, False) if module is not None else _on_parser_stack(_parse, text)
    return _on_parser_stack(_parse, text)


def _on_parser_stack(parse: Callable[[str], Parsed], text: str) -> Parsed:
    """Run ``parse`` on a thread with a large stack: libcst's native parser recurses on the C stack.

    Worker threads get 512 KiB on macOS and the main thread 1 MiB on Windows, too little for the
    nesting allowed here; a thread of known size makes the limits hold wherever this runs.
    """
    outcome: list[Parsed] = []
    failure: list[BaseException] = []

    def work() -> None:
        try:
            outcome.append(parse(text))
        except BaseException as exc:  # handed back to the caller's thread below
            failure.append(exc)

    try:
        with _STACK_LOCK:
            previous = threading.stack_size(_PARSER_STACK_BYTES)
            try:
                worker = threading.Thread(target=work, name="arb-audit-parser", daemon=True)
                worker.start()
            finally:
                threading.stack_size(previous)
    except (RuntimeError, ValueError):  # no control of thread stacks here: parse on this thread
        return parse(text)
    worker.join()
    if failure:
        raise failure[0]
    return outcome[0]


def _parse(text: str) -> Parsed:
    scan = _scan(text)
    if scan.problem is not None:
        return Parsed(None, scan.problem, False)
    module, syntax, crash = _try_parse(text)
    if module is not None:
        return Parsed(module, None, False)
    if syntax is None:
        return Parsed(None, crash, False)
    error = _describe(text, syntax)
    chunks = _chunks(scan)
    complaints = _complaints(scan.lines, chunks)
    failed = [(chunk, why) for chunk, why in zip(chunks, complaints, strict=True) if why is not None]
    error = _python2(scan, failed) or error
    if not failed or len(failed) == len(chunks):
        return Parsed(None, error, False)
    pieces: list[str] = []
    for (first, end), why in zip(chunks, complaints, strict=True):
        if why is None:
            pieces.extend(scan.lines[first:end])
        else:  # as many lines as the chunk had, so that line N stays line N
            pieces.append(SKIPPED_LINE + "\n" + "\n" * (end - first - 1))
    kept = "".join(pieces)
    module, _, _ = _try_parse(kept)
    if module is not None and module.code.rstrip("\r\n") != kept.rstrip("\r\n"):
        # libcst did not give the text back as it was (a file opening with a backslash continuation
        # loses that line): its line numbers would not be the file's, so nothing partial is kept
        module = None
    return Parsed(module, error, module is not None)


class _Parsing(threading.local):
    """Whether this thread is inside libcst's parser for :func:`_parse_module`."""

    active = False  # (a class default: a thread that never parsed reads it without a lookup failure)


_PARSING = _Parsing()
_VALIDATE = libcst.CSTNode.__post_init__


def _validate_unless_parsing(node: libcst.CSTNode) -> None:
    """Run libcst's own check of a node, unless its parser is building the node on this thread.

    libcst validates every node it constructs, those its native parser builds too: an eighth of a
    parse, for trees the grammar has already checked (its own comment asks for the work to move out
    of parsing). Nodes built anywhere else, on any thread, are still validated.
    """
    if not _PARSING.active:
        _VALIDATE(node)


setattr(libcst.CSTNode, "__post_init__", _validate_unless_parsing)  # noqa: B010 (mypy: a method)


def _parse_module(text: str) -> libcst.Module:
    """``libcst.parse_module`` without validating the nodes the parser builds (see above).

    With no other thread alive, nothing but the parser can build a node until it returns: the check
    is then switched off outright for the parse (``tuple``, a call in C that does nothing, instead of
    a Python-level test of the flag per node, a twentieth of a parse) and switched back on after it.
    A worker of ``arb-audit classify`` is such a process.
    """
    if threading.active_count() == 1:
        libcst.CSTNode.__post_init__ = tuple  # type: ignore[assignment,method-assign]
        try:
            return libcst.parse_module(text)
        finally:
            setattr(libcst.CSTNode, "__post_init__", _validate_unless_parsing)  # noqa: B010
    _PARSING.active = True
    try:
        return libcst.parse_module(text)
    finally:
        _PARSING.active = False


def _try_parse(text: str) -> tuple[libcst.Module | None, libcst.ParserSyntaxError | None, str | None]:
    """Parse with libcst: the module, or the syntax error, or why the parser itself failed."""
    try:
        return _parse_module(text), None, None
    except libcst.ParserSyntaxError as exc:
        return None, exc, None
    except RecursionError:
        return None, None, "too deeply nested for the parser"
    except MemoryError:
        return None, None, "out of memory while parsing"
    except Exception as exc:  # a lone surrogate (UnicodeEncodeError) or anything else from the parser
        return None, None, f"cannot parse: {_shorten(f'{type(exc).__name__}: {exc}')}"
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None, None, f"parser failed: {_shorten(f'{type(exc).__name__}: {exc}')}"


_LIBCST_AT = re.compile(r"parser error: error at (\d+):(\d+): ")


def _describe(text: str, exc: libcst.ParserSyntaxError) -> str:
    """Say where and why ``text`` does not parse.

    CPython's parser places errors better than libcst's native one (which is often a line off and puts
    every tokenizer error at 1:0) and words them for people, so it is asked first.
    """
    located = _cpython_error(text)
    if located is None:
        at = _LIBCST_AT.match(exc.message)
        if at:
            located = int(at.group(1)), int(at.group(2)) + 1, exc.message[at.end() :]
        else:
            located = exc.raw_line, exc.raw_column + 1, exc.message
    line, column, message = located
    return f"syntax error at line {line}, column {column}: {_shorten(message)}"


def _cpython_error(text: str) -> tuple[int, int, str] | None:
    """CPython's ``(line, column, message)`` for the text's first syntax error; None if it has none."""
    try:
        # Under ``-W error`` a warning (an invalid escape) would be raised in place of the real error.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as exc:
        return exc.lineno or 1, exc.offset or 1, exc.msg
    except (ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return None


def _shorten(message: str) -> str:
    flat = " ".join(message.split())
    return flat if len(flat) <= _MESSAGE_CHARS else flat[: _MESSAGE_CHARS - 1] + "…"


# ------------------------------------------------------------------------- the linear pre-parse scan


@dataclass(slots=True)
class _Scan:
    """What one linear pass over the text found, before any parser sees it."""

    lines: list[str]
    """The text's lines with their endings (``\\r\\n``, ``\\r`` or ``\\n``, as Python counts lines)."""
    logical: list[bool]
    """Per line: it starts a logical line (not inside brackets or a string, not after a backslash).

    A line that can only start a statement counts as one even after an unclosed bracket.
    """
    in_string: list[bool]
    """Per line: it starts inside a string literal."""
    problem: str | None
    """Why the text is refused unparsed (nesting too deep); None when it may be parsed."""


_TOKEN = re.compile(
    r"""
    (?P<nl>\r\n|\r|\n)
    | (?P<hash>\#)
    | (?P<quote>'''|\"\"\"|['"])
    | (?P<open>[(\[{])
    | (?P<close>[)\]}])
    | (?P<sep>[,;])
    | (?P<backslash>\\(?:\r\n|\r|\n)?)
    | (?P<op>\*\*?|//?|<<|>>|[-+%@&|^~.]|\b(?:and|or|not|if|else|lambda|await|in|is)\b)
    """,
    re.VERBOSE,
)
# String bodies as unrolled loops (``a*(?:b a*)*`` with disjoint a and b): linear, no backtracking blow-up.
_STRING_BODY = {
    "'": re.compile(r"[^'\\\r\n]*(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*)*"),
    '"': re.compile(r'[^"\\\r\n]*(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*)*'),
    "'''": re.compile(r"[^'\\]*(?:(?:\\[\s\S]|'(?!''))[^'\\]*)*"),
    '"""': re.compile(r'[^"\\]*(?:(?:\\[\s\S]|"(?!""))[^"\\]*)*'),
}
_TO_LINE_END = re.compile(r"[^\r\n]*")
# A line at column 0 that can only start a statement (no expression holds these keywords). An
# unclosed bracket above it is taken as a mistake, so that one bad line does not swallow the rest of
# the file into its chunk; libcst cannot parse past such a line either, so forgetting the bracket there
# hides no depth from the limits.
_FRESH_STATEMENT = re.compile(
    r"(?:def|class|import|try|while|with|return|raise|assert|del|pass|break|continue|global|nonlocal)\b"
    r"|async[ \t]+def\b|from[ \t]+[\w.]+[ \t]+import\b"
)
_INDENT = re.compile(r"[ \t\f]*")


def _scan(text: str) -> _Scan:
    """Split ``text`` into lines and measure its nesting in one linear, tokenizer-free pass.

    Brackets, quotes and comments are followed roughly (no f-string subtleties) but conservatively:
    a misreading makes the text look more nested, not less.
    """
    starts = [0] + [match.end() for match in _NEWLINE.finditer(text)]
    if starts[-1] == len(text):
        starts.pop()  # no line after a final newline (and none at all in empty text)
    lines = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)][: len(starts)], strict=True)]
    logical = [False] * len(lines)
    in_string = [False] * len(lines)
    if lines:
        logical[0] = True
    problem: str | None = None
    chain = [0]  # per open bracket level, the operators chained at that level so far
    chained = 0  # sum(chain)
    floor = 0  # bracket depth taken as top level when chunking, raised where a bad line seems to end
    pos = 0
    while problem is None:
        match = _TOKEN.search(text, pos)
        if match is None:
            break
        kind, pos = match.lastgroup, match.end()
        if kind == "nl":
            if len(chain) == 1 or _FRESH_STATEMENT.match(text, pos):
                chain, chained, floor = [0], 0, 0
            elif len(chain) - 1 > floor and _resumes(text, starts, pos):
                floor = len(chain) - 1
            if len(chain) - 1 <= floor and pos < len(text):
                logical[bisect.bisect_left(starts, pos)] = True
        elif kind == "hash":
            pos = _TO_LINE_END.match(text, pos).end()  # type: ignore[union-attr]  # always matches
        elif kind == "quote":
            quote = match.group()
            body = _STRING_BODY[quote].match(text, pos).end()  # type: ignore[union-attr]  # matches ""
            # unterminated: a one-line string stops at its line's end, a triple-quoted one at the end
            end = body + len(quote) if text.startswith(quote, body) else body
            for line in range(bisect.bisect_right(starts, match.start()), bisect.bisect_left(starts, end)):
                in_string[line] = True
            # Not a link of the chain: adjacent literals nest one level each, but libcst refuses a
            # run of a few thousand with a syntax error rather than overflowing its stack.
            pos = end
        elif kind == "open":
            chain[-1] += 1  # a call or subscript trailer nests its target one level
            chained += 1
            chain.append(0)
            if len(chain) - 1 > MAX_NESTING:
                problem = f"nesting deeper than {MAX_NESTING} (brackets, line {_line_of(starts, pos)})"
        elif kind == "close":
            if len(chain) > 1:
                chained -= chain.pop()
                floor = min(floor, len(chain) - 1)
        elif kind == "sep":
            chained -= chain[-1]
            chain[-1] = 0
        elif kind == "op":
            chain[-1] += 1
            chained += 1
        # a backslash (with or without its newline) needs nothing: the newline is consumed with it
        if problem is None and chained > MAX_CHAIN:
            problem = f"nesting deeper than {MAX_CHAIN} (a chain of operators, line {_line_of(starts, pos)})"
    return _Scan(lines, logical, in_string, problem or _indent_problem(lines, logical))


def _resumes(text: str, starts: list[int], pos: int) -> bool:
    """Whether the line at ``pos``, inside brackets, looks like top-level code resuming after a bad line.

    That is a name at column 0 after a blank or indented line, as in ``def f(:`` / ``    pass`` / (blank)
    / ``main()``. Only chunking believes it: libcst may well parse on, so the nesting measure does not.
    """
    if pos >= len(text) or not text[pos].isidentifier():
        return False
    previous = starts[bisect.bisect_left(starts, pos) - 1]
    return text[previous] in " \t\f\r\n"


def _line_of(starts: list[int], offset: int) -> int:
    return max(bisect.bisect_right(starts, offset - 1), 1)


def _indent_problem(lines: list[str], logical: list[bool]) -> str | None:
    """Measure indentation levels and ``elif`` runs as CPython's tokenizer counts them."""
    levels = [0]  # widths of the open indentation levels
    elifs = [0]  # per open level, the elif branches chained at it so far
    for number, (line, fresh) in enumerate(zip(lines, logical, strict=True), 1):
        if not fresh:
            continue
        indent = _INDENT.match(line).end()  # type: ignore[union-attr]  # always matches
        if indent == len(line) or line[indent] in "#\r\n":
            continue  # blank and comment-only lines open or close nothing
        width = 0
        for char in line[:indent]:
            width = 0 if char == "\f" else (width // 8 + 1) * 8 if char == "\t" else width + 1
        if width > levels[-1]:
            levels.append(width)
            elifs.append(0)
            if len(levels) - 1 > MAX_NESTING:
                return f"nesting deeper than {MAX_NESTING} (indentation, line {number})"
        while width < levels[-1] and len(levels) > 1:
            levels.pop()
            elifs.pop()
        if line.startswith("elif", indent):
            elifs[-1] += 1
            if elifs[-1] > MAX_CHAIN:
                return f"nesting deeper than {MAX_CHAIN} (a chain of elif, line {number})"
        elif not line.startswith("else", indent):
            elifs[-1] = 0
    return None


# ----------------------------------------------------------------------------- the tolerant fallback

_CONTINUES = re.compile(r"(?:else|elif|except|finally)\b")


def _chunks(scan: _Scan) -> list[tuple[int, int]]:
    """Split the lines into top-level chunks ``[first, end)`` that can be parsed one by one.

    A chunk starts at a logical line at column 0 that holds code, unless it continues the statement
    above (``else``, ``elif``, ``except``, ``finally``) or follows a decorator.
    """
    firsts = [0]
    after_decorator = False
    for index, line in enumerate(scan.lines):
        if not scan.logical[index] or not line or line[0] in " \t\f\r\n#":
            continue
        if index > 0 and not after_decorator and not _CONTINUES.match(line):
            firsts.append(index)
        after_decorator = line.startswith("@")
    return list(zip(firsts, [*firsts[1:], len(scan.lines)], strict=True))


def _complaints(lines: list[str], chunks: list[tuple[int, int]]) -> list[str | None]:
    """Per chunk: None when it parses on its own, else libcst's complaint about it.

    Chunks are tried in groups first: one libcst call costs about as much as a hundred short lines.
    """
    results: list[str | None] = []
    group_start = 0
    while group_start < len(chunks):
        group_end = group_start + 1
        while group_end < len(chunks) and chunks[group_end][1] - chunks[group_start][0] <= _GROUP_LINES:
            group_end += 1
        group = chunks[group_start:group_end]
        if len(group) > 1 and _try_parse("".join(lines[group[0][0] : group[-1][1]]))[0] is not None:
            results.extend([None] * len(group))
        else:
            for first, end in group:
                module, syntax, failed = _try_parse("".join(lines[first:end]))
                results.append(None if module is not None else syntax.message if syntax else failed or "")
        group_start = group_end
    return results


_NOT_AN_OPERAND = r"(?!(?:and|or|not|if|else|in|is|for)\b)"
_PYTHON2_STATEMENTS = (
    ("print statement", re.compile(rf"[ \t]*print[ \t]+{_NOT_AN_OPERAND}(?:[\w\"']|>>(?!=))")),
    ("exec statement", re.compile(rf"[ \t]*exec[ \t]+{_NOT_AN_OPERAND}[\w\"']")),
    ("except X, e", re.compile(r"[ \t]*except[ \t]+[\w.]+[ \t]*,[ \t]*\w+[ \t]*:")),
    ("raise X, message", re.compile(r"[ \t]*raise[ \t]+[\w.]+[ \t]*,")),
)
_UR_PREFIX = re.compile(r"(?<!\w)[uU][rR]['\"]")
# `x` is Python 2's repr(x); a Markdown fence (```python) pasted into a .py file is not Python 2.
_BACKTICK_REPR = re.compile(r"(?<!`)`[^`\r\n]+`(?!`)")


def _python2(scan: _Scan, failed: list[tuple[tuple[int, int], str]]) -> str | None:
    """Name the first Python 2 construct in the chunks that failed to parse, if there is one."""
    for (first, end), complaint in failed:
        backticks = "'`'" in complaint  # libcst's tokenizer rejects the backtick (Python 2's repr)
        for index in range(first, end):
            line = scan.lines[index]
            if scan.in_string[index]:
                continue
            what = None
            if scan.logical[index]:
                what = next((name for name, rule in _PYTHON2_STATEMENTS if rule.match(line)), None)
            if what is None and _UR_PREFIX.search(line):
                what = "ur'' string"
            if what is None and backticks and _BACKTICK_REPR.search(line) and not line.startswith("```"):
                what = "backticks"
            if what is not None:
                return f"Python 2 code ({what}) at line {index + 1}"
    return None
