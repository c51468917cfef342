"""``arb-audit ingest RUN_DIR... --study S``: audit many runs in parallel into one study store."""

from __future__ import annotations

import fnmatch
import json
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from arb_audit.inert import inert

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport
    from arb_audit.store import RunStore

MAX_SCAN_DEPTH = 8
"""How deep a folder is searched for run folders."""
SAVE_EVERY = 50
"""Rows written to the study store at a time (an interrupted ingest keeps what was saved)."""


def discover(paths: list[Path]) -> tuple[list[Path], list[str]]:
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


def read_mapping(path: Path | None) -> list[tuple[str, dict[str, Any]]]:
    """Read a mapping file: ``{glob: {task|level|scaffold|driver|mode|seed: value}}`` (YAML or JSON).

    A glob matches a run folder's path (absolute) or its name; later globs override earlier ones.
    """
    import yaml

    from arb_audit.study import CELL_KEYS

    if path is None:
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise click.ClickException(f"{path}: the mapping cannot be read: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise click.ClickException(f"{path}: the mapping must be {{glob: {{cell key: value}}}}")
    mapping = []
    for pattern, keys in data.items():
        unknown = set(keys) - set(CELL_KEYS)
        if unknown:
            names = ", ".join(sorted(map(str, unknown)))
            raise click.ClickException(
                f"{path}: {pattern}: {names} are not cell keys ({', '.join(CELL_KEYS)})"
            )
        mapping.append((str(pattern), {k: _cell_value(path, pattern, k, v) for k, v in keys.items()}))
    return mapping


def _cell_value(path: Path, pattern: object, key: str, value: object) -> str | int | None:
    """Check one mapped cell key: ``level`` a whole number 0-99, the others a scalar kept as text."""
    if value is None:
        return None
    if key == "level":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 99:
            raise click.ClickException(f"{path}: {pattern}: level {value!r} is not a whole number 0-99")
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise click.ClickException(f"{path}: {pattern}: {key} {value!r} is not a name or a number")
    return str(value)


def overrides_for(folder: Path, mapping: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """Return the cell keys the mapping sets for ``folder``."""
    found: dict[str, Any] = {}
    for pattern, keys in mapping:
        if fnmatch.fnmatch(str(folder), pattern) or fnmatch.fnmatch(folder.name, pattern):
            found.update(keys)
    return found


def audit_worker(folder: str) -> tuple[AuditReport | None, str | None]:
    """Audit one run in a worker process; return its audit, or why there is none (never raises)."""
    from arb_audit.pipeline import audit

    try:
        return audit(Path(folder)), None
    except Exception as exc:  # one bad run must never stop the study
        return None, f"{type(exc).__name__}: {exc}"[:2000]


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--study", required=True, type=click.Path(path_type=Path, dir_okay=False), help="The study store."
)
@click.option(
    "--mapping", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="Cell keys by glob."
)
@click.option("--jobs", type=int, default=None, help="Worker processes (default: the CPU count).")
def ingest(paths: tuple[Path, ...], study: Path, mapping: Path | None, jobs: int | None) -> None:
    """Audit every run under PATHS (run folders, results trees, or folders holding them) into STUDY.

    Each run is audited in a worker process into its own store, as `arb-audit RUN_DIR` does, and one
    row per run goes into the study store. A run already ingested and unchanged since (same files,
    same mapping) is not audited again. A run that cannot be audited is listed and kept as a row with
    its error; the others go on. Exit status 0 when every run has an audit, 1 when some failed, 2 when
    there was nothing to ingest.
    """
    import blake3

    from arb_audit.audit_cache import fingerprint
    from arb_audit.store import RunStore, StoreError
    from arb_audit.study import fingerprints

    runs, problems = discover(list(paths))
    for problem in problems:
        click.echo(inert(f"arb-audit ingest: {problem}"), err=True)
    if not runs:
        click.echo("arb-audit ingest: no run folders found", err=True)
        sys.exit(2)
    rules = read_mapping(mapping)
    try:
        with RunStore.open(study) as store:
            known = fingerprints(store)
            todo: dict[str, tuple[Path, str, dict[str, Any]]] = {}
            for folder in runs:
                keys = overrides_for(folder, rules)
                print_ = blake3.blake3(
                    (fingerprint(folder) + json.dumps(keys, sort_keys=True, default=str)).encode()
                ).hexdigest()
                if known.get(str(folder)) != print_:
                    todo[str(folder)] = (folder, print_, keys)
            failed = _audit_all(store, todo, jobs)
    except StoreError as exc:
        click.echo(inert(f"arb-audit ingest: {exc}"), err=True)
        sys.exit(2)
    cached = len(runs) - len(todo)
    click.echo(
        inert(
            f"{len(runs)} run(s): {len(todo) - len(failed)} audited, {cached} unchanged since the last"
            f" ingest, {len(failed)} failed; study {study}"
        )
    )
    for key, error in failed:
        click.echo(inert(f"  failed: {key}: {error}"))
    sys.exit(1 if failed else 0)


def _audit_all(
    store: RunStore, todo: dict[str, tuple[Path, str, dict[str, Any]]], jobs: int | None
) -> list[tuple[str, str]]:
    """Audit the runs of ``todo`` in worker processes, saving rows as they come; return the failures."""
    from rich.progress import Progress

    from arb_audit.study import row_from_audit, save_rows

    failed: list[tuple[str, str]] = []
    rows: list[dict[str, Any]] = []
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    # Spawned, not forked: a fork would copy the open study store's connection and its threads.
    context = multiprocessing.get_context("spawn")
    with Progress(transient=True) as progress, ProcessPoolExecutor(workers, mp_context=context) as pool:
        bar = progress.add_task("auditing", total=len(todo))
        futures = {pool.submit(audit_worker, key): key for key in todo}
        try:
            for future in as_completed(futures):
                key = futures[future]
                _, print_, keys = todo[key]
                try:
                    report, error = future.result()
                except BrokenProcessPool as exc:  # a worker was killed (out of memory, a signal)
                    report, error = None, f"the worker auditing it died: {exc}"
                if error is not None:
                    failed.append((key, error))
                rows.append(row_from_audit(key, print_, report, error, keys))
                if len(rows) >= SAVE_EVERY:
                    save_rows(store, rows)
                    rows = []
                progress.advance(bar)
        finally:
            save_rows(store, rows)  # what was audited before an interruption is kept
    return sorted(failed)
