"""The audit pipeline: locate the run's store, read back a kept audit, collect, analyse, save.

This is what :func:`arb_audit.audit` runs and every caller uses: the ``audit`` command, ``ingest``'s
workers, the demo and the reviewer's desk. Rooms are imported inside the functions that need them, so
importing this module costs nothing, and an unchanged run's kept audit is read back (DuckDB and the
schema only) before any collector or the analyzer is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arb_audit.analyzer.lineage_weights import Weigher
    from arb_audit.collectors.base import Collector, RunListing
    from arb_audit.schema import AuditReport, AuditTree
    from arb_audit.store import RunStore


class NoRunFound(ValueError):
    """The folder holds no run of a supported format (the message says what was tried and what fits)."""


@dataclass(frozen=True, slots=True)
class AuditRequest:
    """What an audit is asked with besides the run folder; the kept audit's key covers all of it."""

    store: Path | None = None
    """The run store to write (None: the run folder's ``.arb-audit/run.duckdb``, else the user cache)."""
    format: str | None = None
    """The collector to read the folder with (None: detected)."""
    results_csv: Path | None = None
    """AutoRL-Bench's results.csv to take the run's row from."""
    hash_artifacts: bool = False
    """Hash every model artifact found for its content id."""
    noise: float | None = None
    """Score change within which a difference is noise (None: the task's)."""
    intended: str | None = None
    """The training the task exists to test (None: the task's)."""
    base_model_dir: Path | None = None
    """The base model's folder, to compare weights of stages trained from it."""

    def key_inputs(self, store_file: Path) -> dict[str, Any]:
        """Return the options as the kept audit's key covers them (:mod:`arb_audit.audit_cache`)."""
        return {
            "format": self.format,
            "results_csv": str(self.results_csv) if self.results_csv else None,
            "hash_artifacts": self.hash_artifacts,
            "noise": self.noise,
            "intended": self.intended,
            "base_dir": str(self.base_model_dir) if self.base_model_dir else None,
            "store": str(store_file),
        }


def kept_audit(run_dir: Path, request: AuditRequest, listed: str | None = None) -> AuditReport | None:
    """Return the audit a store beside the run (or the one asked for) kept for these very inputs, if any.

    Looked for before any collector is loaded, and without creating anything: a folder that is not a
    run is left as it was. ``listed`` is the folder's listing when already taken.
    """
    from arb_audit.audit_cache import input_key, listing, read_back
    from arb_audit.cache_dirs import cache_store_path
    from arb_audit.model import STORE_DIRNAME

    stores = (
        [request.store]
        if request.store
        else [run_dir / STORE_DIRNAME / "run.duckdb", cache_store_path(run_dir)]
    )
    listed = listed or listing(run_dir)
    for store_file in stores:
        key = input_key(run_dir, request.key_inputs(store_file), listed)
        if (report := read_back(store_file, key)) is not None:
            return report
    return None


def _ingest_and_audit(
    collector: Collector,
    run_dir: Path,
    store_file: Path,
    why_not_default: str | None,
    request: AuditRequest,
    listed: str | None,
) -> AuditReport:
    """Collect ``run_dir`` into ``store_file``, then build, store and return its audit.

    An audit the store kept for the same inputs (:mod:`arb_audit.audit_cache`) is returned as it is.
    """
    from arb_audit.audit_cache import input_key, kept_in
    from arb_audit.store import RunStore

    key = input_key(run_dir, request.key_inputs(store_file), listed)
    # The store is opened (and so locked) first: a second audit of the same run waits for this one.
    with RunStore.open(store_file) as store:
        if (report := kept_in(store.con, key)) is not None:
            return report
        # Only an audit made anew needs the analyzer (libcst, and torch for weights: seconds to import).
        from arb_audit.analyzer.lineage_weights import Weigher

        with Weigher(separate=True) as weigher:
            report, broken, outside = _audit_anew(
                collector, run_dir, store, store_file, why_not_default, request, weigher
            )
        # An audit that found the store edited tells of that moment: the next audit is made anew.
        kept_for = None if broken is not None else key
        store.save_audit(report, kept_for, outside)
    return report


def _audit_anew(
    collector: Collector,
    run_dir: Path,
    store: RunStore,
    store_file: Path,
    why_not_default: str | None,
    request: AuditRequest,
    weigher: Weigher,
) -> tuple[AuditReport, int | None, dict[str, str]]:
    """Collect ``run_dir`` into ``store`` and build its audit.

    Return it, the submission at which the ledger an earlier audit stored no longer holds (None), and
    what it read outside the run folder with their listings as they were read.
    """
    from arb_audit.analyzer.audit import build_audit
    from arb_audit.analyzer.run_analysis import route_analysis
    from arb_audit.audit_cache import depends_on
    from arb_audit.collectors.base import CollectOptions
    from arb_audit.model import STORE_DIRNAME, LedgerCheck, LedgerMismatch, Problem
    from arb_audit.redaction import redact_all, redact_fields
    from arb_audit.schema import AuditReport
    from arb_audit.store import revisions_path_for

    options = CollectOptions(results_csv=request.results_csv, hash_artifacts=request.hash_artifacts)
    # Every string the run folder gave is redacted here, before anything stores, analyses or shows it.
    record = redact_fields(
        collector.collect(run_dir, revisions_git=revisions_path_for(store_file), options=options)
    )
    # listed now, before they are read: a change while the audit runs has the next audit made anew
    outside = depends_on(run_dir, [record.run.workspace_path, request.base_model_dir, request.results_csv])
    weigher.warm_for(record)  # torch is imported in the weigher's process while the run is stored
    broken = store.verify_submission_chain(record.run.run_id)
    if broken is not None:
        # a fact of the run's ledger, as a recording's collector reports its own: the analyzer flags it
        check = record.run.ledger_check or LedgerCheck()
        check.mismatches.append(
            LedgerMismatch(
                "ledger",
                f"submission {broken}",
                f"the row an earlier audit stored no longer matches its hash chain: {store_file} was"
                " edited after it was written",
            )
        )
        record.run.ledger_check = check
    if why_not_default:
        record.problems.insert(0, Problem(STORE_DIRNAME, f"{why_not_default}; the store is {store_file}"))
    revisions = record.revisions_path
    store.save_record(record, Path(revisions) if revisions else None)
    stored = store.load_record(record.run.run_id)
    base_dir = request.base_model_dir
    analysis = route_analysis(stored, Path(revisions) if revisions else None, store, base_dir, weigher)
    report = build_audit(
        stored,
        store_path=str(store_file),
        revisions_path=revisions,
        noise=request.noise,
        analysis=analysis,
        intended_stage=request.intended,
    )
    # The analyzer quotes code and files it read itself (from revisions.git, the run folder): the audit
    # leaves here, for the store, --json, the report and the desk, with those quotes redacted too.
    report = AuditReport.model_validate(redact_all(report.to_json()))
    return report, broken, outside


def audit_run(
    collector: Collector, run_dir: Path, request: AuditRequest, listed: str | None = None
) -> AuditReport:
    """Audit one run folder with ``collector`` into its store (the run folder's own, else the cache).

    ``listed`` is the folder's listing (:func:`arb_audit.audit_cache.listing`) when already taken: a
    run folder is listed once per audit (small files are read for it). Raises StoreError when the store
    asked for cannot be used.
    """
    from arb_audit.cache_dirs import cache_store_path
    from arb_audit.model import STORE_DIRNAME
    from arb_audit.store import StoreLocked, StoreUnusable, locate_store

    store_file, why_not_default = locate_store(run_dir, request.store)
    try:
        return _ingest_and_audit(collector, run_dir, store_file, why_not_default, request, listed)
    except StoreUnusable as exc:
        if exc.path != store_file or request.store is not None or why_not_default is not None:
            raise
        # The store in the run folder does not open (an agent could have planted it): use the cache.
        why = f"{STORE_DIRNAME}/run.duckdb is not a usable store ({exc})"
        return _ingest_and_audit(collector, run_dir, cache_store_path(run_dir), why, request, listed)
    except StoreLocked as exc:
        if request.store is not None or why_not_default is not None:
            raise
        # A process in the run folder (an agent, a recording still running) holds the store past the
        # wait: the audit goes on in the cache rather than failing.
        why = f"{STORE_DIRNAME}/run.duckdb is held by another process ({exc})"
        return _ingest_and_audit(collector, run_dir, cache_store_path(run_dir), why, request, listed)


def collector_for(run_dir: Path, format_name: str | None = None) -> Collector | None:
    """Return the collector that reads ``run_dir`` (``format_name``'s, else the one detected), or None.

    Raises ``registry.CollectorLoadError`` when the format asked for cannot be loaded.
    """
    from arb_audit.collectors import registry

    return registry.load(format_name) if format_name else registry.detect(run_dir)


def no_run_message(run_dir: Path) -> str:
    """Say that ``run_dir`` holds no run: the formats tried and what each needs.

    What a format needs is its collector's own ``description``: a collector registered later is
    described here without this message changing.
    """
    from arb_audit.collectors import registry

    tried = []
    for name in registry.available():
        try:
            tried.append(f"{name}: {registry.load(name).description}")
        except registry.CollectorLoadError:  # named by the detection that just failed to load it
            tried.append(name)
    return f"{run_dir}: no supported run format found (tried {'; '.join(tried)})"


def audit(
    run_dir: str | Path,
    *,
    store: str | Path | None = None,
    format: str | None = None,  # noqa: A002 - the CLI's option name, kept for the API
    results_csv: str | Path | None = None,
    hash_artifacts: bool = False,
    noise: float | None = None,
    intended: str | None = None,
    base_model_dir: str | Path | None = None,
) -> AuditReport:
    """Audit one run folder and return its :class:`~arb_audit.schema.AuditReport`.

    The same audit ``arb-audit RUN_DIR --json`` prints (``report.to_json_text()`` is that line), made
    the same way: kept in the run's store, and read back while nothing it was made from has changed.

    >>> from arb_audit import audit
    >>> report = audit("fixtures/reference/sft_grpo/recording")  # doctest: +SKIP
    >>> report.route.chain_text  # doctest: +SKIP
    'SFT→GRPO(online)'

    Raises :class:`NoRunFound` when no format fits the folder (a tree of runs: use :func:`audit_tree`),
    ``StoreError`` when its store cannot be used, ``FileNotFoundError`` when the folder is not there.
    """
    folder = Path(run_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such folder")
    folder = folder.resolve()
    request = AuditRequest(
        store=Path(store) if store is not None else None,
        format=format,
        results_csv=Path(results_csv) if results_csv is not None else None,
        hash_artifacts=hash_artifacts,
        noise=noise,
        intended=intended,
        base_model_dir=Path(base_model_dir) if base_model_dir is not None else None,
    )
    from arb_audit.audit_cache import listing

    listed = listing(folder)  # taken once, before anything is read: the kept audit's key and a new one's
    if (kept := kept_audit(folder, request, listed)) is not None:
        return kept
    collector = collector_for(folder, format)
    if collector is None:
        raise NoRunFound(no_run_message(folder))
    return audit_run(collector, folder, request, listed)


def run_tree(folder: Path) -> tuple[Collector, RunListing] | None:
    """Find the collector for which ``folder`` is a tree of runs (a PostTrainBench results folder)."""
    from arb_audit.collectors import registry

    for name in registry.available():
        collector = registry.load(name)
        listing = collector.runs_in(folder)
        if listing is not None and (listing.runs or listing.dropped):
            return collector, listing
    return None


def audit_tree(root: Path, collector: Collector, listing: RunListing, request: AuditRequest) -> AuditTree:
    """Audit every run of a tree that counts (each into its own store) and return them together.

    One run that cannot be audited is listed under ``failed`` with why; the others go on.
    """
    from arb_audit.schema import AuditTree, DroppedRun, Problem
    from arb_audit.store import StoreError

    each = AuditRequest(
        format=collector.name,
        hash_artifacts=request.hash_artifacts,
        noise=request.noise,
        intended=request.intended,
    )
    reports: list[AuditReport] = []
    failed: list[Problem] = []
    for run in listing.runs:
        try:
            reports.append(audit_run(collector, run, each))
        except StoreError as exc:
            failed.append(Problem(path=str(run), message=str(exc)))
        except Exception as exc:
            # One run's folder is untrusted input: whatever breaks on it must not cost the other runs.
            failed.append(
                Problem(path=str(run), message=f"could not be audited: {type(exc).__name__}: {exc}")
            )
    return AuditTree(
        tree=str(root),
        format=collector.name,
        runs=reports,
        failed=failed,
        dropped=[DroppedRun(path=str(path), reason=reason) for path, reason in listing.dropped],
        problems=[Problem(path=p.path, message=p.message) for p in listing.problems],
    )


MAX_SCAN_DEPTH = 8
"""How deep a folder is searched for run folders."""


def discover_runs(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """Return the run folders under ``paths`` (each a run, a tree of runs, or a folder holding them).

    A folder that a collector recognises is one run and is not searched further; a results tree is
    expanded the way the collector counts its runs. The second list says what was not usable.
    """
    from arb_audit.collectors import registry
    from arb_audit.model import STORE_DIRNAME

    found: dict[Path, None] = {}
    problems: list[str] = []
    pending = [(p, 0) for p in paths]
    while pending:
        folder, depth = pending.pop(0)
        if not folder.is_dir():
            problems.append(f"{folder}: not a folder")
            continue
        if registry.detect(folder) is not None:
            found[folder.resolve()] = None
            continue
        listing = next(
            (listing for name in registry.available() if (listing := registry.load(name).runs_in(folder))),
            None,
        )
        if listing is not None and listing.runs:
            found.update(dict.fromkeys(r.resolve() for r in listing.runs))
            continue
        if depth >= MAX_SCAN_DEPTH:
            continue
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
        except OSError as exc:
            problems.append(f"{folder}: cannot be listed: {exc.strerror or exc}")
            continue
        pending.extend(
            (c, depth + 1) for c in children if not c.name.startswith(".") and c.name != STORE_DIRNAME
        )
    return list(found), problems
