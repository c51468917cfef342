"""arb-audit as a library: audit a run, classify files, read a study (what the commands call).

    >>> import arb_audit
    >>> report = arb_audit.audit("fixtures/reference/sft_grpo/recording")  # doctest: +SKIP
    >>> report.route.chain_text, report.quadrant.cell  # doctest: +SKIP
    ('SFT→GRPO(online)', 'score_up+intended')

Every function here imports what it needs when called: ``import arb_audit`` loads none of it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arb_audit.pipeline import AuditRequest, NoRunFound, audit

if TYPE_CHECKING:
    import polars as pl

    from arb_audit.analyzer.classify import Classification
    from arb_audit.schema import AuditTree

__all__ = ["NoRunFound", "audit", "audit_results_tree", "classify", "load_study"]


def audit_results_tree(
    folder: str | Path,
    *,
    hash_artifacts: bool = False,
    noise: float | None = None,
    intended: str | None = None,
) -> AuditTree:
    """Audit every run of a tree of runs (a PostTrainBench results folder), each into its own store.

    Raises :class:`NoRunFound` when no format lists runs under ``folder``.
    """
    from arb_audit.pipeline import audit_tree, run_tree

    root = Path(folder).resolve()
    found = run_tree(root)
    if found is None:
        raise NoRunFound(f"{root}: no tree of runs of a supported format found")
    request = AuditRequest(hash_artifacts=hash_artifacts, noise=noise, intended=intended)
    return audit_tree(root, *found, request)


def classify(paths: Sequence[str | Path] | str | Path, *, jobs: int | None = None) -> list[Classification]:
    """Classify Python files, notebooks, YAML configs and shell launchers (folders: recursively).

    Each result has the file's labels, primary label, role, stages and the evidence for each (see
    ``Classification.to_json``). Nothing is imported or executed; ``jobs`` worker processes (default:
    the CPU count; 0: this process) bound each file's time and memory.
    """
    from arb_audit.analyzer.batch import classify_many

    given = [paths] if isinstance(paths, str | Path) else list(paths)
    workers = (os.cpu_count() or 1) if jobs is None else jobs
    return list(classify_many([Path(p) for p in given], workers))


def load_study(path: str | Path) -> pl.DataFrame:
    """Read a study store (``arb-audit ingest``) as a polars DataFrame, one row per run."""
    from arb_audit.study import load_study as load

    return load(path)
