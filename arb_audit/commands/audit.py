"""``arb-audit audit RUN_DIR`` (also ``arb-audit RUN_DIR``): ingest a run folder and print its audit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from arb_audit.analyzer.lineage_weights import Weigher
    from arb_audit.collectors.base import CollectOptions, Collector, RunListing
    from arb_audit.store import RunStore

NOTHING_USABLE = 2
"""Exit status when no audit could be produced."""


def _fail(message: str) -> None:
    click.echo(f"arb-audit: {message}", err=True)
    sys.exit(NOTHING_USABLE)


def _asked(
    format_key: str | None,
    options: CollectOptions,
    noise: float | None,
    intended: str | None,
    base_dir: Path | None,
    store_file: Path,
) -> dict[str, Any]:
    """Return the options an audit is asked with, as its key covers them (arb_audit.audit_cache)."""
    return {
        "format": format_key,
        "results_csv": str(options.results_csv) if options.results_csv else None,
        "hash_artifacts": options.hash_artifacts,
        "noise": noise,
        "intended": intended,
        "base_dir": str(base_dir) if base_dir else None,
        "store": str(store_file),
    }


def _kept_audit(
    run_dir: Path,
    store_path: Path | None,
    format_key: str | None,
    options: CollectOptions,
    noise: float | None,
    intended: str | None,
    base_dir: Path | None,
) -> dict[str, Any] | None:
    """Return the audit a store beside the run (or ``store_path``) kept for these very inputs, if any.

    Looked for before any collector is loaded, and without creating anything: a folder that is not a
    run is left as it was.
    """
    from arb_audit.audit_cache import input_key, listing, read_back
    from arb_audit.cache_dirs import cache_store_path
    from arb_audit.model import STORE_DIRNAME

    stores = (
        [store_path] if store_path else [run_dir / STORE_DIRNAME / "run.duckdb", cache_store_path(run_dir)]
    )
    listed = listing(run_dir)
    for store_file in stores:
        key = input_key(run_dir, _asked(format_key, options, noise, intended, base_dir, store_file), listed)
        if (report := read_back(store_file, key)) is not None:
            return report
    return None


def _ingest_and_audit(
    collector: Collector,
    run_dir: Path,
    store_file: Path,
    why_not_default: str | None,
    options: CollectOptions,
    noise: float | None,
    intended: str | None = None,
    base_dir: Path | None = None,
    format_key: str | None = None,
) -> dict[str, Any]:
    """Collect ``run_dir`` into ``store_file``, then build, store and return its audit.

    An audit the store kept for the same inputs (:mod:`arb_audit.audit_cache`) is returned as it is.
    ``format_key`` is the format asked for (None: the one detected).
    """
    from arb_audit.audit_cache import input_key, kept_in
    from arb_audit.store import RunStore

    key = input_key(run_dir, _asked(format_key, options, noise, intended, base_dir, store_file))
    # The store is opened (and so locked) first: a second audit of the same run waits for this one.
    with RunStore.open(store_file) as store:
        if (report := kept_in(store.con, key)) is not None:
            return report
        # Only an audit made anew needs the analyzer (libcst, and torch for weights: seconds to import).
        from arb_audit.analyzer.lineage_weights import Weigher

        with Weigher(separate=True) as weigher:
            report, broken, outside = _audit_anew(
                collector,
                run_dir,
                store,
                store_file,
                why_not_default,
                options,
                noise,
                intended,
                base_dir,
                weigher,
            )
        # An audit that found the store edited tells of that moment: the next audit is made anew.
        kept_for = None if broken is not None else key
        store.save_audit(report["run"]["run_id"], report, kept_for, outside)
    return report


def _audit_anew(
    collector: Collector,
    run_dir: Path,
    store: RunStore,
    store_file: Path,
    why_not_default: str | None,
    options: CollectOptions,
    noise: float | None,
    intended: str | None,
    base_dir: Path | None,
    weigher: Weigher,
) -> tuple[dict[str, Any], int | None, dict[str, str]]:
    """Collect ``run_dir`` into ``store`` and build its audit.

    Return it, the submission at which the ledger an earlier audit stored no longer holds (None), and
    what it read outside the run folder with their listings as they were read.
    """
    from arb_audit.analyzer.audit import build_audit
    from arb_audit.analyzer.run_analysis import route_analysis
    from arb_audit.audit_cache import depends_on
    from arb_audit.evidence import Evidence
    from arb_audit.model import STORE_DIRNAME, Flag, Problem
    from arb_audit.store import revisions_path_for

    record = collector.collect(run_dir, revisions_git=revisions_path_for(store_file), options=options)
    # listed now, before they are read: a change while the audit runs has the next audit made anew
    outside = depends_on(run_dir, [record.run.workspace_path, base_dir, options.results_csv])
    weigher.warm_for(record)  # torch is imported in the weigher's process while the run is stored
    broken = store.verify_submission_chain(record.run.run_id)
    if broken is not None:
        message = (
            f"submission {broken} of the ledger an earlier audit stored no longer matches its"
            f" hash chain: {store_file} was edited after it was written"
        )
        record.flags.append(Flag("ledger_broken", message, [Evidence("submission", submission_seq=broken)]))
    if why_not_default:
        record.problems.insert(0, Problem(STORE_DIRNAME, f"{why_not_default}; the store is {store_file}"))
    revisions = record.revisions_path
    store.save_record(record, Path(revisions) if revisions else None)
    stored = store.load_record(record.run.run_id)
    routes = route_analysis(stored, Path(revisions) if revisions else None, store, base_dir, weigher)
    report = build_audit(
        stored,
        store_path=str(store_file),
        revisions_path=revisions,
        noise=noise,
        routes=routes,
        intended_stage=intended,
    )
    return report, broken, outside


def _audit_one(
    collector: Collector,
    run_dir: Path,
    store_path: Path | None,
    options: CollectOptions,
    noise: float | None,
    intended: str | None = None,
    base_dir: Path | None = None,
    format_key: str | None = None,
) -> dict[str, Any]:
    """Audit one run folder into its store (the run folder's own, else the cache, or ``store_path``).

    ``format_key``: the format asked for, None when ``collector`` was detected.
    """
    from arb_audit.cache_dirs import cache_store_path
    from arb_audit.model import STORE_DIRNAME
    from arb_audit.store import StoreUnusable, locate_store

    store_file, why_not_default = locate_store(run_dir, store_path)
    try:
        return _ingest_and_audit(
            collector, run_dir, store_file, why_not_default, options, noise, intended, base_dir, format_key
        )
    except StoreUnusable as exc:
        if exc.path != store_file or store_path is not None or why_not_default is not None:
            raise
        # The store in the run folder does not open (an agent could have planted it): use the cache.
        why = f"{STORE_DIRNAME}/run.duckdb is not a usable store ({exc})"
        return _ingest_and_audit(
            collector, run_dir, cache_store_path(run_dir), why, options, noise, intended, base_dir, format_key
        )


def audit_folder(run_dir: Path) -> dict[str, Any]:
    """Audit one run folder (its format detected) into its own store, as ``arb-audit RUN_DIR`` does.

    Raises ValueError when no format fits the folder, StoreError when its store cannot be used.
    """
    from arb_audit.collectors import registry
    from arb_audit.collectors.base import CollectOptions

    run_dir = run_dir.resolve()
    collector = registry.detect(run_dir)
    if collector is None:
        raise ValueError(f"{run_dir}: no supported run format found")
    return _audit_one(collector, run_dir, None, CollectOptions(), None)


def _tree(folder: Path) -> tuple[Collector, RunListing] | None:
    """Find the collector for which ``folder`` is a tree of runs (a PostTrainBench results folder)."""
    from arb_audit.collectors import registry

    for name in registry.available():
        collector = registry.load(name)
        listing = collector.runs_in(folder)
        if listing is not None and (listing.runs or listing.dropped):
            return collector, listing
    return None


def _audit_tree(
    root: Path,
    collector: Collector,
    listing: RunListing,
    *,
    as_json: bool,
    noise: float | None,
    hash_artifacts: bool,
    intended: str | None,
) -> None:
    """Audit every run of a tree that counts (each into its own store) and report them together."""
    from arb_audit.collectors.base import CollectOptions
    from arb_audit.store import StoreError

    options = CollectOptions(hash_artifacts=hash_artifacts)
    reports: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    for run in listing.runs:
        try:
            reports.append(_audit_one(collector, run, None, options, noise, intended, None, collector.name))
        except StoreError as exc:
            failed.append({"path": str(run), "message": str(exc)})
        except Exception as exc:
            # One run's folder is untrusted input: whatever breaks on it must not cost the other runs.
            failed.append({"path": str(run), "message": f"could not be audited: {type(exc).__name__}: {exc}"})
    tree = {
        "tree": str(root),
        "format": collector.name,
        "runs": reports,
        "failed": failed,
        "dropped": [{"path": str(path), "reason": reason} for path, reason in listing.dropped],
        "problems": [{"path": p.path, "message": p.message} for p in listing.problems],
    }
    if as_json:
        click.echo(json.dumps(tree, ensure_ascii=False, allow_nan=False))
    else:
        from arb_audit.report import render_tree

        render_tree(tree)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=True, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the readable report.")
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Run store to write (default: RUN_DIR/.arb-audit/run.duckdb, or a per-user cache).",
)
@click.option(
    "--results-csv",
    type=click.Path(path_type=Path, dir_okay=False),
    help="AutoRL-Bench results.csv to take this run's row from.",
)
@click.option("--noise", type=float, help="Score change within which a difference is noise (score points).")
@click.option("--format", "format_name", help="Read the folder as this format instead of detecting it.")
@click.option(
    "--base-model-dir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="The base model's folder (safetensors), to compare the weights of stages trained from it.",
)
@click.option(
    "--intended",
    help="The training the task exists to test: online_rl, policy_gradient or a stage kind (sft, grpo, ...);"
    " default: the task's (online_rl on level-3 tasks, policy_gradient elsewhere).",
)
@click.option(
    "--hash-artifacts",
    is_flag=True,
    help="Hash every model artifact found (BLAKE3, per tensor for safetensors) for its content id.",
)
def audit(
    run_dir: Path,
    as_json: bool,
    store_path: Path | None,
    results_csv: Path | None,
    noise: float | None,
    format_name: str | None,
    hash_artifacts: bool,
    base_model_dir: Path | None,
    intended: str | None,
) -> None:
    """Audit the run folder RUN_DIR: ingest it into its run store and print the audit.

    RUN_DIR may also be a tree of runs (a PostTrainBench results folder): every run that counts is
    audited and the runs are reported together. Exit status 0 when an audit was produced (whatever the
    run's outcome), 2 when nothing usable was found.
    """
    from arb_audit.collectors.base import CollectOptions

    if not run_dir.exists():
        _fail(f"{run_dir}: no such folder")
    if not run_dir.is_dir():
        _fail(f"{run_dir}: not a folder (give the run folder, not one of its files)")
    run_dir = run_dir.resolve()
    options = CollectOptions(results_csv=results_csv, hash_artifacts=hash_artifacts)
    # An unchanged run's kept audit is shown without loading a collector or the analyzer.
    kept = _kept_audit(run_dir, store_path, format_name, options, noise, intended, base_model_dir)
    if kept is not None:
        _show(kept, as_json)
        return
    from arb_audit.collectors import registry
    from arb_audit.store import StoreError

    try:
        collector = registry.load(format_name) if format_name else registry.detect(run_dir)
    except registry.CollectorLoadError as exc:
        _fail(str(exc))
    if collector is None and (tree := _tree(run_dir)) is not None:
        _audit_tree(
            run_dir, *tree, as_json=as_json, noise=noise, hash_artifacts=hash_artifacts, intended=intended
        )
        return
    if collector is None:
        _fail(
            f"{run_dir}: no supported run format found (tried: {', '.join(registry.available())});"
            " an AutoRL-Bench run folder has scores.json, run_meta.json or run.log, a PostTrainBench one"
            " is named {task}_{org}_{model}_{cluster} and holds solve_out.txt or output.log"
        )
    assert collector is not None
    try:
        report = _audit_one(
            collector, run_dir, store_path, options, noise, intended, base_model_dir, format_name
        )
    except StoreError as exc:
        _fail(str(exc) if store_path else f"{exc} (choose where the store goes with --store PATH)")
    _show(report, as_json)


def _show(report: dict[str, Any], as_json: bool) -> None:
    """Print the audit: one JSON object, or the readable report."""
    if as_json:
        click.echo(json.dumps(report, ensure_ascii=False, allow_nan=False))
    else:
        from arb_audit.report import render

        render(report)
