"""The collectors installed, listed from their entry points without importing them."""

from __future__ import annotations

import functools
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from arb_audit.collectors.base import Collector

GROUP = "arb_audit.collectors"
"""Entry-point group where collectors register (the built-ins too, in pyproject.toml)."""


class CollectorLoadError(Exception):
    """A registered collector could not be imported."""


@functools.cache
def _entry_points() -> dict[str, EntryPoint]:
    # Listing entry points reads every installed distribution's metadata (~9 ms); a study asks per folder.
    return {ep.name: ep for ep in entry_points(group=GROUP)}


def available() -> list[str]:
    """Return the names of the registered collectors (nothing is imported)."""
    return sorted(_entry_points())


def load(name: str) -> Collector:
    """Import and instantiate the collector called ``name``."""
    points = _entry_points()
    if name not in points:
        raise CollectorLoadError(
            f"no collector named {name!r}; installed: {', '.join(sorted(points)) or 'none'}"
        )
    try:
        cls = points[name].load()
    except Exception as exc:
        raise CollectorLoadError(f"collector {name!r} failed to import: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Collector)):
        raise CollectorLoadError(f"entry point {name!r} is not a Collector class")
    return cls()


def detect(run_dir: Path) -> Collector | None:
    """Return the collector most sure that ``run_dir`` is its format, or None when none is."""
    best: tuple[float, Collector] | None = None
    for name in available():
        collector = load(name)
        score = collector.detect(run_dir)
        if score > 0 and (best is None or score > best[0]):
            best = (score, collector)
    return best[1] if best else None
