"""Transcript paths (absolute on the agent's machine) mapped onto the run's workspace.

An agent on PostTrainBench writes ``/home/ben/task/train.py``; on AutoRL-Bench
``/data/.../workspace/gsm8k/<run>/code/train.py``. Both become paths relative to the workspace root,
whatever machine audits the run. A path outside every known root is kept under ``_outside/`` (the agent
may run a script it wrote to ``/tmp``), never resolved on the auditing machine.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

OUTSIDE = "_outside"
"""The folder of the rebuilt tree that holds files written outside the workspace root."""
MAX_PATH_CHARS = 1024
"""Longer paths are not taken (no real script has one; a hostile transcript might)."""


class PathMap:
    """Maps a transcript's paths onto workspace-relative paths, given the workspace's roots."""

    def __init__(self, roots: Iterable[str | None], default_cwd: str | None = None) -> None:
        # "/" as a root would take in the whole machine: a session started there names no workspace.
        cleaned = {posixpath.normpath(r) for r in roots if r and r.startswith("/")} - {"/"}
        self.roots = sorted(cleaned, key=len, reverse=True)
        """Absolute workspace roots as the agent's machine saw them, longest first."""
        self.default_cwd = default_cwd if default_cwd and default_cwd.startswith("/") else None
        """Where relative paths start when the transcript does not say (the agent's start folder)."""

    def rel(self, path: str, cwd: str | None = None) -> str | None:
        """Return ``path`` relative to the workspace (or under ``_outside/``); None when it is unusable."""
        if not path or len(path) > MAX_PATH_CHARS or "\x00" in path:
            return None
        path = path.replace("\\", "/")
        if path.startswith("~"):
            return None
        if not path.startswith("/"):
            base = (
                cwd
                if cwd and cwd.startswith("/")
                else self.default_cwd or (self.roots[-1] if self.roots else None)
            )
            if base is None:
                inside = posixpath.normpath(path)
                return None if inside in (".", "") or inside.startswith("../") or inside == ".." else inside
            path = posixpath.join(base, path)
        path = posixpath.normpath(path)
        for root in self.roots:
            if path.startswith(root.rstrip("/") + "/"):
                return path[len(root.rstrip("/")) + 1 :]
        return f"{OUTSIDE}/{path.lstrip('/')}" if path != "/" else None
