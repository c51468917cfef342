"""The route analysis of one stored run: its code classified, the scripts its commands ran, its lineage."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.code_labels import classify_blobs
from arb_audit.analyzer.ledger_flags import WeightDigest, weight_digests
from arb_audit.analyzer.lineage_weights import AVAILABLE, Weigher, likely_pairs, record_tensor_changes, weigh
from arb_audit.analyzer.metrics import best_submission
from arb_audit.analyzer.routes import Routes, RunCode, StageStep, analyze
from arb_audit.analyzer.run_signals import Signals, log_signals, run_signals
from arb_audit.analyzer.scripts_run import ScriptRun, scripts_run
from arb_audit.analyzer.static_flags import static_flags
from arb_audit.model import ArtifactManifest, Flag, Problem, RunRecord
from arb_audit.revisions import read_blob
from arb_audit.store import RunStore, StoreError

MAX_TEXT_BYTES = 2 * 1024 * 1024
"""Largest script searched for an artifact's path."""


@dataclass(slots=True)
class RouteAnalysis:
    """The route analysis of one run: what the audit's failure, quadrant, flags and route section read."""

    routes: Routes
    """The routes written, attempted and adopted, and the lineages (:func:`.routes.analyze`)."""
    signals: Signals = field(default_factory=Signals)
    """What went wrong in the training the commands ran (:mod:`arb_audit.analyzer.run_signals`)."""
    flags: list[Flag] = field(default_factory=list)
    """The integrity flags the code that ran, the code history and the weights show."""
    probing: dict[str, WeightDigest] = field(default_factory=dict)
    """What each graded artifact's kept manifest says of its weights (for ``grader_probing``)."""
    problems: list[Problem] = field(default_factory=list)
    """The scripts commands ran that could not be (fully) analysed."""
    weights_available: bool = AVAILABLE
    """Whether weight forensics could run (torch installed)."""


def route_analysis(
    record: RunRecord,
    git_dir: Path | None,
    store: RunStore | None,
    base_dir: Path | None = None,
    weigher: Weigher | None = None,
) -> RouteAnalysis | None:
    """Return the route analysis of ``record`` (None when the run has no code revisions to read).

    ``base_dir`` is the base model's folder, for comparing weights with it. ``weigher`` compares
    weights (by default in a process of its own, started here; a caller may start one earlier).
    """
    if git_dir is None or not record.revisions:
        return None
    if weigher is not None:
        return _route_analysis(record, git_dir, store, base_dir, weigher)
    with Weigher(separate=True) as own:
        return _route_analysis(record, git_dir, store, base_dir, own)


def _route_analysis(
    record: RunRecord, git_dir: Path, store: RunStore | None, base_dir: Path | None, weigher: Weigher
) -> RouteAnalysis:
    run_dir = artifact_root(record)
    # What will likely be weighed is weighed ahead, in the weigher's own process, while worker
    # processes classify the code (a hostile file costs its worker, not the audit).
    for model, reference, trusted in likely_pairs(record, run_dir, base_dir):
        weigher.start(model, reference, trusted)
    runs = scripts_run(record.commands, record.revisions)
    labels = classify_blobs(record, git_dir, store, min(4, os.cpu_count() or 1), {r.blob_sha for r in runs})
    texts: dict[str, str | None] = {}

    def text(sha: str) -> str | None:
        if sha not in texts:
            raw = read_blob(git_dir, sha)
            texts[sha] = (
                raw.decode("utf-8", "replace") if raw is not None and len(raw) <= MAX_TEXT_BYTES else None
            )
        return texts[sha]

    code = RunCode(record, labels, runs, text)

    weighed: list[Flag] = []

    def refine(steps: list[StageStep]) -> None:
        weighed.extend(weigh(steps, run_dir, record.run.base_model, base_dir, weigher))

    routes = analyze(code, best_submission(record.submissions), refine)
    # The store keeps each graded artifact's tensors; how far each moved from the base is known here.
    if store is not None:
        record_tensor_changes(store, record, run_dir, base_dir, weigher)
    signals = run_signals(record.commands, runs, labels)
    log_signals(record.artifacts, signals)
    problems = _unread_scripts(runs, labels)
    return RouteAnalysis(
        routes,
        signals,
        static_flags(record, runs, text) + weighed,
        # A recording keeps each graded artifact's manifest: gradings of the same weights are probing.
        _kept_weights(record, store, problems) if store is not None else {},
        problems,
        AVAILABLE,
    )


def _kept_weights(record: RunRecord, store: RunStore, problems: list[Problem]) -> dict[str, WeightDigest]:
    """Return what the manifests ``store`` keeps say of the graded artifacts' weights, keyed ones only.

    A manifest this user's secret did not key (a store planted in the run folder, one written by
    another user's recorder) decides nothing: which gradings share weights is then unknown, and one
    problem on the store says so.
    """
    untrusted: dict[str, str] = {}

    def keyed(artifact_id: str) -> ArtifactManifest | None:
        try:
            return store.keyed_manifest(artifact_id)
        except (StoreError, duckdb.Error) as exc:
            untrusted[artifact_id] = str(exc).removeprefix(f"{store.path}: ")
            return None

    weights = weight_digests(record, keyed)
    if untrusted:
        ids = ", ".join(a[:12] for a in list(untrusted)[:3]) + (", …" if len(untrusted) > 3 else "")
        problems.append(
            Problem(
                _shown(store.path, Path(record.run.source_path)),
                f"the manifest(s) it keeps of {len(untrusted)} graded artifact(s) ({ids}) are not used:"
                f" {next(iter(untrusted.values()))}; whether those gradings share weights is unknown",
            )
        )
    return weights


def _shown(path: Path, run_dir: Path) -> str:
    """Return ``path`` relative to the run folder when inside it, else as it is."""
    return path.relative_to(run_dir).as_posix() if path.is_relative_to(run_dir) else str(path)


def artifact_root(record: RunRecord) -> Path:
    """Return the folder submitted paths are relative to: the run folder, or a recording's workspace.

    A recording keeps the workspace apart from the run folder; an imported run's workspace path is the
    agent's machine's (and the agent's to write), so only a recording's is followed.
    """
    workspace = record.run.workspace_path
    if record.run.source_format == "recorded" and workspace and Path(workspace).is_dir():
        return Path(workspace)
    return Path(record.run.source_path)


def _unread_scripts(runs: list[ScriptRun], labels: dict[str, Classification]) -> list[Problem]:
    """Name each script a command ran that the static analyzer could not (fully) read, once."""
    found: dict[str, Problem] = {}
    for run in runs:
        error = (
            labels[run.blob_sha].error if run.blob_sha in labels else "its content is not in revisions.git"
        )
        if error and run.blob_sha not in found:
            found[run.blob_sha] = Problem(
                run.path,
                f"(revision {run.revision_seq}, run by command {run.command_seq}) could not be"
                f" fully analysed: {error}",
            )
    return list(found.values())
