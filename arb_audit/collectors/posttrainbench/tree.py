"""Finding PostTrainBench run folders in a results tree, and the highest-cluster-id rule.

A root may be a results root (``results/<method>/<run>/``), one method folder, or one run folder; the
published copy (``collected_results/<method>/<run>/``) has the same shape. Every PostTrainBench
aggregator counts only the run with the highest cluster id per (method, task, model): the others are
earlier attempts that a resubmission replaced. Symlinks are never followed, so nothing outside the
root is listed.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from arb_audit.collectors.posttrainbench.naming import RunName, parse_run_name
from arb_audit.model import Problem

RUN_MARKERS = (
    "solve_out.txt",
    "solve_parsed.txt",
    "trace.txt",
    "output.log",
    "metrics.json",
    "final_model",
    "task",
)
"""A folder with a run-folder name holds at least one of these (pipeline or published layout)."""
MAX_SIBLINGS = 10_000
"""Most siblings of one run folder inspected by :func:`superseded_by`."""
MAX_ENTRIES = 100_000
"""Most entries of one folder listed while scanning a tree."""

RootKind = Literal["run", "method", "results", "empty"]
"""What the scanned root turned out to be."""


@dataclass(frozen=True, slots=True)
class FoundRun:
    """A run folder found in the tree."""

    path: Path
    """The run folder."""
    method: str
    """The name of the folder holding it (the method folder; for a lone run folder, its parent)."""
    name: RunName
    """Its parsed name."""


@dataclass(frozen=True, slots=True)
class DroppedRun:
    """A run folder that does not count, and why."""

    run: FoundRun
    """The run folder."""
    reason: str
    """Why it does not count (``superseded by <name> (higher cluster id)``)."""


@dataclass(slots=True)
class TreeScan:
    """The run folders under a root, split into those that count and those that do not."""

    root: Path
    """The root as scanned (absolute)."""
    kind: RootKind
    """run | method | results | empty."""
    kept: list[FoundRun] = field(default_factory=list)
    """Runs that count, sorted by (method, name)."""
    dropped: list[DroppedRun] = field(default_factory=list)
    """Runs that do not count, sorted by (method, name)."""
    problems: list[Problem] = field(default_factory=list)
    """What could not be listed, and symlinks that were not followed."""


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def is_run_folder(path: Path) -> bool:
    """Tell whether ``path`` is a run folder: a real folder named like one, holding a run file."""
    if not parse_run_name(path.name).complete or not _is_real_dir(path):
        return False
    return any(os.path.lexists(path / marker) for marker in RUN_MARKERS)


def _entries(folder: Path, limit: int, problems: list[Problem], root: Path) -> list[os.DirEntry[str]]:
    """List ``folder`` (at most ``limit`` entries); symlinked folders are reported and left out."""
    rel = folder.relative_to(root).as_posix() if folder != root else "."
    try:
        with os.scandir(folder) as scan:
            entries = list(itertools.islice(scan, limit + 1))
    except OSError as exc:
        problems.append(Problem(rel, f"cannot be listed: {exc.strerror or exc}"))
        return []
    if len(entries) > limit:
        problems.append(Problem(rel, f"holds more than {limit:,} entries; only {limit:,} were looked at"))
        entries = entries[:limit]
    kept = []
    for entry in entries:
        if entry.is_symlink():
            if os.path.isdir(entry.path):
                where = "inside" if _inside(Path(entry.path), root) else "outside"
                problems.append(
                    Problem(f"{rel}/{entry.name}", f"is a symlink to a folder {where} the root; not followed")
                )
        elif entry.is_dir(follow_symlinks=False):
            kept.append(entry)
    return sorted(kept, key=lambda e: e.name)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError, RuntimeError):
        return False
    return True


def _find_runs(root: Path, problems: list[Problem], limit: int) -> tuple[list[FoundRun], RootKind]:
    if is_run_folder(root):
        return [FoundRun(root, root.parent.name, parse_run_name(root.name))], "run"
    found: list[FoundRun] = []
    nested = False
    for entry in _entries(root, limit, problems, root):
        child = Path(entry.path)
        if is_run_folder(child):
            found.append(FoundRun(child, root.name, parse_run_name(child.name)))
            continue
        for inner in _entries(child, limit, problems, root):
            grandchild = Path(inner.path)
            if is_run_folder(grandchild):
                found.append(FoundRun(grandchild, child.name, parse_run_name(grandchild.name)))
                nested = True
    kind: RootKind = "results" if nested else "method" if found else "empty"
    return found, kind


def keep_highest(runs: list[FoundRun]) -> tuple[list[FoundRun], list[DroppedRun]]:
    """Keep the run with the highest cluster id per (method, task, base model); drop the others."""
    best: dict[tuple[str, str | None, str | None], FoundRun] = {}
    for run in runs:
        key = (run.method, run.name.task, run.name.base_model)
        if key not in best or (run.name.cluster_id or 0) > (best[key].name.cluster_id or 0):
            best[key] = run
    kept, dropped = [], []
    for run in sorted(runs, key=lambda r: (r.method, r.name.name)):
        winner = best[(run.method, run.name.task, run.name.base_model)]
        if (run.name.cluster_id or 0) < (winner.name.cluster_id or 0):
            dropped.append(DroppedRun(run, f"superseded by {winner.name.name} (higher cluster id)"))
        else:
            kept.append(run)
    return kept, dropped


def scan_tree(root: Path, *, limit: int = MAX_ENTRIES) -> TreeScan:
    """List the run folders under ``root`` (a results root, a method folder or a run folder).

    Runs are looked for in ``root`` itself, its children and its grandchildren, never through a symlink.
    """
    root = root.resolve()
    problems: list[Problem] = []
    if not _is_real_dir(root):
        problems.append(Problem(str(root), "is not a folder"))
        return TreeScan(root, "empty", problems=problems)
    runs, kind = _find_runs(root, problems, limit)
    kept, dropped = keep_highest(runs)
    return TreeScan(root, kind, kept, dropped, problems)


def superseded_by(run_dir: Path, *, limit: int = MAX_SIBLINGS) -> str | None:
    """Return the name of the sibling run folder that supersedes ``run_dir``, or None.

    That is the sibling with the same task and base model and the highest cluster id above this one's.
    At most ``limit`` siblings are looked at; symlinked siblings never count.
    """
    name = parse_run_name(run_dir.name)
    if not name.complete or name.cluster_id is None:
        return None
    best: str | None = None
    floor = name.cluster_id
    try:
        with os.scandir(run_dir.parent) as scan:
            for entry in itertools.islice(scan, limit):
                other = parse_run_name(entry.name)
                if (
                    other.cluster_id is not None
                    and other.cluster_id > floor
                    and (other.task, other.base_model) == (name.task, name.base_model)
                    and is_run_folder(Path(entry.path))
                ):
                    best, floor = other.name, other.cluster_id
    except OSError:
        return None
    return best
