"""Analyzer results cached by file content: a file unchanged across revisions and runs is analysed once.

The key is the content's git blob id (the id ``revisions.git`` already gives every committed file), the
kind of file (the same bytes mean other things as ``.py`` and ``.yaml``) and the analyzer's version: a
digest of the analyzer's own code and the file taxonomy, so that any change to a detector invalidates
what it decided before.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

import analyzer
import taxonomy

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
