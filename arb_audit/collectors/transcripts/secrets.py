"""Redaction of API keys and tokens: applied to every transcript line before it is parsed, stored or shown.

PostTrainBench's Codex launcher echoed the API keys into ``solve_out.txt``; agents print tokens in
``env`` dumps and curl commands. A key is recognised by the shape its provider gives it, or by the
name of the variable or header it is assigned to.
"""

from __future__ import annotations

import re
from typing import Any

MARK = "<redacted>"
"""What a secret is replaced with."""

_SHAPES = [
    r"sk-ant-[A-Za-z0-9_\-]{16,}",  # Anthropic
    r"sk-(?=[A-Za-z_\-]*\d)(?:proj-|svcacct-|or-v1-|or-)?[A-Za-z0-9_\-]{20,}",  # OpenAI, OpenRouter
    r"AIza[0-9A-Za-z_\-]{35}",  # Google (Gemini) API keys
    r"hf_(?=[A-Za-z]*\d)[A-Za-z0-9]{30,}",  # Hugging Face
    r"gh[pousr]_[A-Za-z0-9]{36,}",  # GitHub tokens
    r"github_pat_[A-Za-z0-9_]{40,}",
    r"xox[abprs]-[A-Za-z0-9\-]{10,}",  # Slack
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",  # AWS access key ids
    r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",  # JWTs
]
# Never inside a longer word ("task-specific-..." holds "sk-"); OpenAI-style keys always hold a digit.
# A JSON line escapes a line break as backslash-n, a terminal colour ends in "m" after a digit: a key right
# after either starts a word too.
_SHAPE = re.compile(
    r"(?:(?<![A-Za-z0-9_\-])|(?<=\\[ntr])|(?<=\dm))(?:" + "|".join(f"(?:{s})" for s in _SHAPES) + ")"
)

_NAMED = re.compile(
    r"(?P<name>\b[A-Z][A-Z0-9_]*(?:API_KEY|APIKEY|TOKEN|SECRET|SECRET_KEY|PASSWORD|ACCESS_KEY)\b)"
    r"(?P<sep>\\?[\"']?\s*[=:]\s*\\?[\"']?)"
    r"(?P<value>(?=[A-Za-z0-9_\-./+=]*\d)[A-Za-z0-9_\-./+=]{12,})(?![\w.(\[])"
)
"""``OPENAI_API_KEY=...``, ``"HF_TOKEN": "..."``, ``export WANDB_API_KEY=...`` (also inside JSON strings).
Upper-case names only, and a value with a digit that is not code (``HF_TOKEN = os.environ.get(...)``
and ``pad_token = tokenizer.eos_token`` stay as they are)."""

_TOKEN = r"(?P<value>(?![$\{])(?=[^\s\"'\\,;]*\d)[^\s\"'\\,;]{12,})"
"""A secret value: 12 or more characters with a digit, not a ``$VAR`` or ``{expression}`` reference."""

_HEADER = re.compile(
    r"(?P<head>(?:Authorization|x-api-key|api-key)\\?[\"']?\s*:\s*\\?[\"']?(?:Bearer\s+)?)" + _TOKEN, re.I
)
"""``Authorization: Bearer ...`` and ``x-api-key: ...`` in curl commands, and ``{"Authorization": ...}``."""

_LOWER_NAMED = re.compile(
    r"(?P<head>\b(?:api_key|apikey|access_token|auth_token|secret_key|client_secret|password|hf_token)"
    r"\\?[\"']?\s*[=:]\s*\\?[\"'])" + _TOKEN,
    re.I,
)
"""``api_key="..."`` as code and configs write it: only a quoted literal (a variable is not a secret)."""

_FLAG = re.compile(
    r"(?P<head>--(?:api[-_]key|token|hf[-_]token|access[-_]token|password)[= ]\s*)" + _TOKEN, re.I
)
"""``--api-key VALUE`` on a command line."""


_SHAPE_HINTS = (
    "sk-",
    "AIza",
    "hf_",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "xox",
    "AKIA",
    "ASIA",
    "eyJ",
)
_NAME_HINTS = ("API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "ACCESS_KEY")
_LOWER_HINTS = ("authorization", "api-key", "api_key", "apikey", "token", "secret", "password")
"""Substrings without which a pattern cannot match: a plain search for them is ~50x faster than the
patterns themselves, and almost every line of a transcript has none of them."""


def _keep_head(match: re.Match[str]) -> str:
    return match["head"] + MARK


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by :data:`MARK`."""
    if not text:
        return text
    if any(hint in text for hint in _SHAPE_HINTS):
        text = _SHAPE.sub(MARK, text)
    if any(hint in text for hint in _NAME_HINTS):
        text = _NAMED.sub(lambda m: m["name"] + m["sep"] + (m["value"] if m["value"] == MARK else MARK), text)
    lowered = text.lower()
    if any(hint in lowered for hint in _LOWER_HINTS):
        for pattern in (_HEADER, _LOWER_NAMED, _FLAG):
            text = pattern.sub(_keep_head, text)
    return text


def redact_all(value: Any) -> Any:
    """Return ``value`` (JSON-like: dicts, lists, strings, numbers) with every string redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_all(v) for v in value]
    return value
