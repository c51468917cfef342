"""``arb-audit plot S --figure F -o FILE``: a study figure for a paper, as PDF, PNG or SVG."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from arb_audit.install_hint import missing


def _fail(message: str) -> NoReturn:
    """Say what went wrong on one line of stderr and exit 2."""
    click.echo(f"arb-audit plot: {message}", err=True)
    sys.exit(2)


@click.command()
@click.argument("study", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--figure", "figure_name", required=True, help="scores, routes, failures or quadrants.")
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write to this file; its suffix (.pdf, .png, .svg) sets the format.",
)
@click.option(
    "--width",
    type=click.Choice(["auto", "column", "page"]),
    default="auto",
    show_default=True,
    help="column: one column of a two-column paper; page: the full text width; auto: as the panels need.",
)
@click.option("--tasks", default=None, help="Only these tasks, comma-separated, in this order.")
@click.option("--label-runs", is_flag=True, help="Name each run beside its best submission.")
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="A TOML file of display names (as for `arb-audit export --labels`).",
)
def plot(
    study: Path,
    figure_name: str,
    output: Path,
    width: str,
    tasks: str | None,
    label_runs: bool,
    labels_file: Path | None,
) -> None:
    """Draw figure FIGURE of the study store STUDY (made by `arb-audit ingest`) into a file.

    The same study gives the same bytes, so a figure can be committed next to the paper. Exit status 2
    when the study cannot be read, has nothing to draw, or the figure or format is unknown.
    """
    try:
        from arb_audit.taxonomy.figures import FIGURES, FigureOptions, figure, format_of, save
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] != "matplotlib":
            raise
        click.echo(missing("arb-audit plot", exc.name or "matplotlib"), err=True)
        sys.exit(2)
    from arb_audit.store import StoreError
    from arb_audit.study import figure_data, load_study, older_audits
    from arb_audit.taxonomy.labels import DEFAULT_LABELS, load_labels

    if figure_name not in FIGURES:
        _fail(f"no figure {figure_name!r} (there are: {', '.join(FIGURES)})")
    try:
        format_of(output)
    except ValueError as exc:
        _fail(str(exc))
    labels = DEFAULT_LABELS
    if labels_file is not None:
        try:
            labels = load_labels(labels_file)
        except (OSError, ValueError) as exc:
            _fail(str(exc))
    chosen = tuple(t.strip() for t in tasks.split(",") if t.strip()) if tasks else None
    options = FigureOptions(width=width, tasks=chosen, run_labels=label_runs, labels=labels)  # type: ignore[arg-type]
    if not study.is_file():
        _fail(f"{study}: no such study (make one with arb-audit ingest)")
    try:
        frame = load_study(study)
    except StoreError as exc:
        _fail(str(exc))
    if frame.is_empty():
        _fail(f"{study}: holds no ingested runs (arb-audit ingest RUN_DIR... --study)")
    if older := older_audits(frame):
        click.echo(
            f"arb-audit plot: warning: {len(older)} run(s) left out: their stored audit is not of this"
            f" arb-audit's schema (ingest them again), e.g. {older[0]}",
            err=True,
        )
    data = figure_data(frame)
    if data.unreadable:
        click.echo(
            f"arb-audit plot: warning: {len(data.unreadable)} run(s) drawn without their submissions: their"
            f" stored audit does not validate against this arb-audit's schema (ingest them again),"
            f" e.g. {data.unreadable[0]}",
            err=True,
        )
    try:
        save(figure(figure_name, data, options), output)
    except ValueError as exc:
        _fail(f"{study}: {exc}")
    except OSError as exc:
        _fail(f"{output}: {exc.strerror or exc}")
