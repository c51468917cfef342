"""Analyzer results cached by file content: a file unchanged across revisions and runs is analysed once.

The key is the content's git blob id (the id ``revisions.git`` already gives every committed file), the
kind of file (the same bytes mean other things as ``.py`` and ``.yaml``) and the analyzer's version: a
digest of the analyzer's own code and the file taxonomy, so that any change to a detector invalidates
what it decided before. Results too large to recompute that live outside a run store (weight
comparisons) are kept as JSON files in the per-user cache (:func:`load_result`, :func:`save_result`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from arb_audit import analyzer, taxonomy

VERSIONED = ("*.py", "detectors/*.py")
"""Files of the analyzer package whose content makes its version."""


def blob_sha(raw: bytes) -> str:
    """Return git's blob id of ``raw`` (SHA-1 of ``blob <size>``, a NUL byte, and the bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()


@cache
def analyzer_version() -> str:
    """Return a digest of the analyzer's code and the file taxonomy (computed once per process)."""
    digest = hashlib.sha256()
    root = Path(analyzer.__file__).parent
    files = sorted(p for pattern in VERSIONED for p in root.glob(pattern))
    files.append(Path(taxonomy.__file__).parent / "files.py")
    for path in files:
        digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


_KEY = re.compile(r"[0-9a-f]{16,128}")


def _result_path(kind: str, key: str) -> Path | None:
    from arb_audit.cache_dirs import cache_root

    return cache_root() / kind / f"{key}.json" if _KEY.fullmatch(key) and kind.isidentifier() else None


def load_result(kind: str, key: str) -> Any:
    """Return the JSON value :func:`save_result` kept for ``kind`` and hex ``key``; None when none is."""
    path = _result_path(kind, key)
    if path is None:
        return None
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None  # absent, or cut short by a crash: computed again


def save_result(kind: str, key: str, value: Any) -> None:
    """Keep ``value`` (JSON) for ``kind`` and hex ``key``; a cache that cannot be written is skipped."""
    path = _result_path(kind, key)
    if path is None:
        return
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        # written aside and renamed, so that a reader never sees half a result
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(handle, "w") as out:
                json.dump(value, out)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
