"""Where arb-audit keeps what it makes outside run folders: the per-user cache."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def cache_root() -> Path:
    """Return arb-audit's per-user cache folder (``$XDG_CACHE_HOME/arb-audit`` or ``~/.cache/arb-audit``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arb-audit"


def cache_store_path(run_dir: Path) -> Path:
    """Return the per-user cache store of a run folder."""
    key = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:16]
    return cache_root() / f"{run_dir.resolve().name}-{key}" / "run.duckdb"
