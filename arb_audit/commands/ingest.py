"""``arb-audit ingest RUN_DIR... --study S``: audit many runs in parallel into one study store.

The ingest itself is :func:`arb_audit.study_ingest.ingest`; this command finds the runs, reads the
mapping, shows progress and says what was done.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arb_audit.inert import inert
from arb_audit.study_workers import RUN_DEADLINE_S

if TYPE_CHECKING:
    from arb_audit.study_ingest import Progress
    from arb_audit.study_workers import Outcome

INTERRUPTED = 130
"""Exit status of an interrupted ingest (128 + SIGINT), as a shell reports one."""


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--study", required=True, type=click.Path(path_type=Path, dir_okay=False), help="The study store."
)
@click.option(
    "--mapping", type=click.Path(path_type=Path, dir_okay=False, exists=True), help="Cell keys by glob."
)
@click.option("--jobs", type=int, default=None, help="Worker processes (default: the CPU count).")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=RUN_DEADLINE_S,
    show_default=True,
    help="Seconds one run's audit may take; a run past it is stopped and kept with a row saying so.",
)
def ingest(
    paths: tuple[Path, ...], study: Path, mapping: Path | None, jobs: int | None, timeout: float
) -> None:
    """Audit every run under PATHS (run folders, results trees, or folders holding them) into STUDY.

    Each run is audited in a worker process into its own store, as `arb-audit RUN_DIR` does, under
    its own deadline, and its row goes into the study store as soon as its audit ends: an interrupted
    ingest keeps what was done. A run already ingested and unchanged since (same files, same mapping)
    is not audited again. A run that cannot be audited, or is stopped at the deadline, is kept as a
    row with why; the others go on (a stopped one is audited again by the next ingest). Exit status 0
    when every run has an audit, 1 when some failed, 2 when there was nothing to ingest, 130 when
    interrupted.
    """
    import os

    from arb_audit.pipeline import discover_runs
    from arb_audit.store import StoreError
    from arb_audit.study_ingest import MappingError, read_mapping
    from arb_audit.study_ingest import ingest as ingest_runs

    runs, problems = discover_runs(list(paths))
    for problem in problems:
        click.echo(inert(f"arb-audit ingest: {problem}"), err=True)
    if not runs:
        click.echo("arb-audit ingest: no run folders found", err=True)
        sys.exit(2)
    try:
        rules = read_mapping(mapping)
    except MappingError as exc:
        raise click.ClickException(inert(str(exc))) from exc
    workers = max(1, jobs or os.cpu_count() or 1)
    try:
        with _progress() as progress:
            summary = ingest_runs(study, runs, rules, jobs=workers, deadline_s=timeout, progress=progress)
    except StoreError as exc:
        click.echo(inert(f"arb-audit ingest: {exc}"), err=True)
        sys.exit(2)
    click.echo(
        inert(
            f"{summary.runs} run(s): {summary.audited} audited, {summary.unchanged} unchanged since the last"
            f" ingest, {len(summary.failed)} failed"
            + (f", {summary.not_begun} not begun (interrupted)" if summary.interrupted else "")
            + f"; study {study}"
        )
    )
    for key, error in summary.failed:
        click.echo(inert(f"  failed: {key}: {error}"))
    if summary.interrupted:
        sys.exit(INTERRUPTED)
    sys.exit(1 if summary.failed else 0)


@contextmanager
def _progress() -> Iterator[Progress]:
    """Show each run's end: a bar on a terminal, else one line per run on stderr (logs, pipes)."""
    from rich.progress import Progress as Bar

    if not sys.stderr.isatty():

        def line(outcome: Outcome, ended: int, total: int) -> None:
            said = "audited" if outcome.error is None else f"failed: {outcome.error}"
            click.echo(inert(f"arb-audit ingest: [{ended}/{total}] {outcome.key}: {said}"), err=True)

        yield line
        return
    with Bar(transient=True) as bar:
        task = bar.add_task("auditing", total=None)

        def advance(outcome: Outcome, ended: int, total: int) -> None:
            bar.update(task, completed=ended, total=total)

        yield advance
