"""``arb-audit site S -o DIR``: a study as a static site, for readers who will not install a CLI."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from arb_audit.inert import inert


def _fail(message: str) -> NoReturn:
    """Say what went wrong on one line of stderr and exit 2."""
    click.echo(inert(f"arb-audit site: {message}"), err=True)
    sys.exit(2)


@click.command()
@click.argument("study", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The folder to write the site into (made when missing; its pages are replaced).",
)
@click.option("--no-figures", is_flag=True, help="Leave the study figures out (quicker for a large study).")
@click.option(
    "--jobs", type=click.IntRange(min=1), default=None, help="Worker processes (default: the CPU count)."
)
def site(study: Path, output: Path, no_figures: bool, jobs: int | None) -> None:
    """Write the study store STUDY (made by `arb-audit ingest`) as a static site into a folder.

    DIR/index.html lists every run (task, agent, route, scores, failure, quadrant, flags, and reviewers'
    verdicts beside the analyzer's values), filterable and sortable in the page, with the study's
    figures; each run links to its own audit page in DIR/runs/. No server and no network: open
    index.html from disk, or copy the folder to any static host. Exit status 2 when the study cannot be
    read or holds no runs.
    """
    from arb_audit.store import StoreError
    from arb_audit.study_site import write_site

    if not study.is_file():
        _fail(f"{study}: no such study (make one with arb-audit ingest)")
    try:
        summary = write_site(study, output, figures=not no_figures, jobs=jobs)
    except StoreError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"{output}: {exc.strerror or exc}")
    if summary.runs == 0:
        _fail(f"{study}: holds no ingested runs (arb-audit ingest RUN_DIR... --study)")
    for line in summary.skipped:
        click.echo(inert(f"arb-audit site: note: {line}"), err=True)
    click.echo(
        f"wrote {output / 'index.html'}: {summary.runs} runs, {summary.pages} run pages,"
        f" {len(summary.figures)} figures",
        err=True,
    )
