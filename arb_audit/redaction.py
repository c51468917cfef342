r"""Secrets redacted from every string a run folder gives the audit: one function, :func:`redact`.

Run folders are written by agents, and agents print keys: PostTrainBench's Codex launcher echoed the API
keys into ``solve_out.txt``, agents dump ``env``, ``cat .env`` and pass tokens to curl. A key is
recognised by the shape its provider gives it, or by the name of the variable, header, flag or file it
is assigned in, and in each escaping the tool reads (JSON strings with ``\uXXXX`` escapes, shell
backslashes, URL percent-encoding): the text is searched as written and as those escapes decode, and
a secret found in either is replaced where it is written.

Applied where run strings enter the audit: each transcript line (before it is parsed), the collected
record (:func:`redact_fields`), the assembled audit, cached classifications, verdict notes and code
read back from ``revisions.git`` to be shown. A replacement keeps the line breaks of what it replaces,
so line numbers stay true.
"""

from __future__ import annotations

import dataclasses
import re
from array import array
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any, TypeVar

MARK = "<redacted>"
"""What a secret is replaced with."""

T = TypeVar("T")

_SHAPES = [
    r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
    r"sk-(?=[A-Za-z_\-]*\d)(?:proj-|svcacct-|admin-|or-v1-|or-)?[A-Za-z0-9_\-]{20,}",  # OpenAI, OpenRouter
    r"AIza[0-9A-Za-z_\-]{35}",  # Google (Gemini) API keys
    # Hugging Face: letters (and digits) after hf_; a digit or a capital tells it from an identifier
    r"hf_(?=[A-Za-z0-9]*[A-Z0-9])(?=[A-Za-z0-9]*[a-z])[A-Za-z0-9]{30,}",
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{40,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Z])",  # AWS access key ids
    r"wandb[-_](?:v1[-_])?(?=[A-Za-z]*\d)[A-Za-z0-9]{30,}",  # Weights & Biases (new-style keys)
    r"local-[0-9a-f]{40}(?![0-9a-f])",  # Weights & Biases, a local server's keys
    r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
]
# Never inside a longer word ("task-specific-..." holds "sk-"). A JSON line escapes a line break as
# backslash-n, a terminal colour ends in "m" after a digit: a key right after either starts a word too.
_SHAPE = re.compile(
    r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[ntr])|(?<=\dm))(?:" + "|".join(f"(?:{s})" for s in _SHAPES) + ")"
)

_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----"
    r"(?:[A-Za-z0-9+/=:, \t\r\n]|-(?!----)|\\+[nrt])*"
    r"(?:-----END[A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----)?"
)
"""A private key block, whole, or from its first line to where the text was cut."""

_VALUE = r"(?P<value>(?![$\{<])[^\s\"'\\,;`)]{12,})"
"""A secret value after a name: 12 or more characters, not a ``$VAR``, ``{expression}`` or mark."""
_DIGIT_VALUE = r"(?P<value>(?![$\{<])(?=[^\s\"'\\,;`)]*\d)[^\s\"'\\,;`)]{12,})"
"""The same with a digit: where a name alone is weak evidence (``Bearer``, a ``password`` word)."""

_NAMED = re.compile(
    r"(?P<head>\b[A-Z][A-Z0-9_]*(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?)\b"
    r"\\?[\"']?\s*[=:]\s*\\?[\"']?)"
    r"(?P<value>(?![$\{<])(?:(?=[A-Za-z0-9_\-./+=]*\d)[A-Za-z0-9_\-./+=]{12,}|[A-Za-z0-9_\-/+=]{20,}))"
    r"(?![\w.(\[])"
)
"""``OPENAI_API_KEY=...``, ``"HF_TOKEN": "..."``, ``export WANDB_API_KEY=...`` (also inside JSON strings).
Upper-case names only, and a value that is not code (``HF_TOKEN = os.environ.get(...)`` and ``pad_token
= tokenizer.eos_token`` stay as they are)."""

_AWS_SECRET = re.compile(
    r"(?P<head>(?i:aws_?secret_?access_?key|secret_?access_?key)\\?[\"']?\s*[=:]\s*\\?[\"']?)"
    r"(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"
)
"""An AWS secret access key (40 characters of base64) where credentials files and ``.env`` name it."""

_HEADER = re.compile(
    r"(?P<head>(?:Authorization|Proxy-Authorization|x-api-key|api-key|x-goog-api-key)\\?[\"']?\s*:\s*"
    r"\\?[\"']?(?:(?:Bearer|Basic|token)\s+)?)" + _VALUE,
    re.I,
)
"""``Authorization: Bearer ...`` and ``x-api-key: ...`` in curl commands, and ``{"Authorization": ...}``."""

_BEARER = re.compile(r"(?P<head>\bBearer\s+)" + _DIGIT_VALUE)
"""A bearer token wherever it is written."""

_LOWER_NAMED = re.compile(
    r"(?P<head>\b(?:api_key|apikey|access_token|auth_token|secret_key|client_secret|password|hf_token"
    r"|wandb_api_key|token)\\?[\"']?\s*[=:]\s*\\?[\"'])" + _VALUE,
    re.I,
)
"""``api_key="..."`` as code and configs write it: only a quoted literal (a variable is not a secret)."""

_FLAG = re.compile(
    r"(?P<head>--(?:api[-_]key|token|hf[-_]token|access[-_]token|password|secret)[= ]\s*\\?[\"']?)" + _VALUE,
    re.I,
)
"""``--api-key VALUE`` on a command line."""

_NETRC = re.compile(r"(?P<head>\b(?:password|passwd)[ \t]+)" + _DIGIT_VALUE)
"""``machine api.wandb.ai login user password <key>`` in a ``.netrc``."""

_URL_CREDENTIALS = re.compile(
    r"(?P<head>\b[a-z][a-z0-9+.\-]*://[^\s:/@\"'\\]+:)(?P<value>[^\s@/\"'\\]{3,})(?=@)", re.I
)
"""The password of ``scheme://user:password@host``."""

_ENV_LINE = re.compile(
    r"(?:(?<![A-Za-z0-9_.\-\\])|(?<=\\n))[ \t]*"
    r"(?P<head>(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_.\-]*[ \t]*=[ \t]*\\?[\"']?)"
    r"(?P<value>(?:(?!\\n)[^\n\"'\\#])+?)(?=[ \t]*(?:\\?[\"']|\\n|\n|#|$))"
)
"""Every ``KEY=value`` line of a ``.env`` file: its values are the file's reason to exist."""

_HINTS: dict[re.Pattern[str], tuple[str, ...]] = {
    _SHAPE: (
        "sk-",
        "AIza",
        "hf_",
        "gh",
        "github_pat_",
        "xox",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
        "wandb",
        "local-",
        "eyJ",
    ),
    _PEM: ("PRIVATE KEY",),
    _NAMED: ("KEY", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL"),
    _BEARER: ("Bearer",),
}
_LOWER_HINTS: dict[re.Pattern[str], tuple[str, ...]] = {
    _AWS_SECRET: ("access_key", "accesskey"),
    _HEADER: ("authorization", "api-key"),
    _LOWER_NAMED: ("key", "token", "secret", "password"),
    _FLAG: ("--",),
    _NETRC: ("password", "passwd"),
    _URL_CREDENTIALS: ("://",),
}
"""Substrings without which a pattern cannot match (in the text as written, and lower-cased for the
patterns that ignore case): a plain search for them is ~50x faster than the patterns themselves, and
almost every line of a transcript has none of them."""

_ESCAPE = re.compile(r"\\+u([0-9a-fA-F]{4})|\\+x([0-9a-fA-F]{2})|%([0-9a-fA-F]{2})|\\+(.)", re.S)
"""An escape the tool reads: JSON's ``\\u0041`` (also escaped again), ``\\x41``, a URL's ``%41``, and a
backslash before any character (JSON's ``\\n`` and ``\\"``, a shell's ``\\-``)."""
_PLAIN_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}


def _spans_in(text: str, env_file: bool) -> Iterator[tuple[int, int]]:
    """Yield the (start, end) of every secret in ``text`` as it is written."""
    lowered = text.lower()
    for hints, source in ((_HINTS, text), (_LOWER_HINTS, lowered)):
        for pattern, words in hints.items():
            if not any(w in source for w in words):
                continue
            has_value = "value" in pattern.groupindex
            for match in pattern.finditer(text):
                yield match.span("value") if has_value else match.span()
    if env_file:
        yield from (m.span("value") for m in _ENV_LINE.finditer(text))


def _unescaped(match: re.Match[str]) -> str:
    """Return the one character an escape (a match of :data:`_ESCAPE`) stands for."""
    code = match[1] or match[2] or match[3]
    return chr(int(code, 16)) if code else _PLAIN_ESCAPES.get(match[4], match[4])


def _decoded(text: str) -> tuple[str, array[int], array[int], array[int]] | None:
    """Return ``text`` with its escapes decoded and where each piece came from, or None without escapes.

    Pieces are runs of plain text (one character for one) and single escapes (one character for the
    whole escape): the decoded text, each piece's start in it, its start in ``text`` and its length
    in ``text`` (0 for a plain run). The offsets are machine integers: a line of escapes has millions.
    """
    pieces: list[str] = []
    decoded_at = array("q")
    written_at = array("q")
    escape_len = array("q")
    at = 0
    size = 0
    for match in _ESCAPE.finditer(text):
        if match.start() > at:
            pieces.append(text[at : match.start()])
            decoded_at.append(size)
            written_at.append(at)
            escape_len.append(0)
            size += match.start() - at
        pieces.append(_unescaped(match))
        decoded_at.append(size)
        written_at.append(match.start())
        escape_len.append(match.end() - match.start())
        size += 1
        at = match.end()
    if not escape_len:
        return None
    pieces.append(text[at:])
    decoded_at.append(size)
    written_at.append(at)
    escape_len.append(0)
    return "".join(pieces), decoded_at, written_at, escape_len


def _written_span(
    view: tuple[str, array[int], array[int], array[int]], start: int, end: int
) -> tuple[int, int]:
    """Map a span of the decoded text back to the span of ``text`` it was decoded from."""
    _, decoded_at, written_at, escape_len = view

    def where(i: int, last: bool) -> int:
        piece = bisect_right(decoded_at, i) - 1
        if escape_len[piece]:
            return written_at[piece] + (escape_len[piece] if last else 0)
        return written_at[piece] + (i - decoded_at[piece]) + (1 if last else 0)

    return where(start, False), where(end - 1, True)


def _may_escape(text: str) -> bool:
    return "\\" in text or "%" in text


def redact(text: str, *, env_file: bool = False) -> str:
    """Return ``text`` with every recognised secret replaced by :data:`MARK`.

    ``env_file``: the text is (part of) a ``.env`` file, whose every ``KEY=value`` is a secret.
    Line breaks inside a secret are kept after the mark, so the text keeps its lines.
    """
    if not text:
        return text
    spans = list(_spans_in(text, env_file))
    if _may_escape(text):
        # The decoded text alone first: where each piece came from is worked out only for a text whose
        # decoding holds a key (a 16 MB line of escapes has millions of pieces).
        decoded = _ESCAPE.sub(_unescaped, text)
        found = [(s, e) for s, e in _spans_in(decoded, env_file) if e > s] if decoded != text else []
        if found and (view := _decoded(text)) is not None:
            spans.extend(_written_span(view, s, e) for s, e in found)
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    at = 0
    for start, end in spans:
        if end <= at:
            continue
        start = max(start, at)
        out.append(text[at:start])
        out.append(MARK + "\n" * text.count("\n", start, end))
        at = end
    out.append(text[at:])
    return "".join(out)


def is_env_file(path: str | None) -> bool:
    """Whether ``path`` names a dotenv file (``.env``, ``.env.local``, ``prod.env``)."""
    if not path:
        return False
    name = PurePosixPath(path.replace("\\", "/")).name
    return name == ".env" or name.startswith(".env.") or name.endswith(".env") or name == ".netrc"


_ENV_COMMAND = re.compile(r"(?:^|[\s/'\"])\.env(?:\.[\w.-]+)?(?:$|[\s'\";|&>)])|\.netrc\b")


def shows_env_file(command: str | None) -> bool:
    """Whether a command line reads a dotenv file, so that its output is one (``cat .env``)."""
    return bool(command) and _ENV_COMMAND.search(command or "") is not None


def redact_all(value: Any, *, env_file: bool = False) -> Any:
    """Return ``value`` (JSON-like: dicts, lists, strings, numbers) with every string redacted.

    A dict that names a dotenv file under ``path`` (an evidence pointer) or reads one under ``command``
    has its strings redacted as that file's lines.
    """
    if isinstance(value, str):
        return redact(value, env_file=env_file)
    if isinstance(value, dict):
        inner = env_file or _names_env(value.get("path"), value.get("command"))
        return {
            redact(k) if isinstance(k, str) else k: redact_all(v, env_file=inner) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact_all(v, env_file=env_file) for v in value]
    return value


def _names_env(path: Any, command: Any) -> bool:
    return (isinstance(path, str) and is_env_file(path)) or (
        isinstance(command, str) and shows_env_file(command)
    )


def redact_fields(record: T) -> T:
    """Redact every string held by ``record`` (dataclasses, dicts, lists) and return it.

    Mutable dataclasses are changed in place; frozen ones (evidence pointers) are replaced. A part that
    names a dotenv file (``path``) or a command that reads one (``command``) has its strings redacted as
    that file's lines.
    """
    result: T = _redacted(record, False)
    return result


def _redacted(value: Any, env_file: bool) -> Any:
    if isinstance(value, str):
        return redact(value, env_file=env_file)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = env_file or _names_env(getattr(value, "path", None), getattr(value, "command", None))
        changed = {}
        for item in dataclasses.fields(value):
            old = getattr(value, item.name)
            new = _redacted(old, inner)
            if new is not old and new != old:
                changed[item.name] = new
        if not changed:
            return value
        params = getattr(type(value), "__dataclass_params__", None)
        if params is not None and params.frozen:
            return dataclasses.replace(value, **changed)
        for name, new in changed.items():
            setattr(value, name, new)
        return value
    if isinstance(value, dict):
        return {k: _redacted(v, env_file) for k, v in value.items()}
    if isinstance(value, list):
        for i, item in enumerate(value):
            value[i] = _redacted(item, env_file)
        return value
    if isinstance(value, tuple):
        return tuple(_redacted(v, env_file) for v in value)
    return value
