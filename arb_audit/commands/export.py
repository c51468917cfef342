"""``arb-audit export S --table T --format F [-o FILE]``: a study table for a paper."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    import polars as pl

FORMAT_CHOICES = ("latex", "markdown", "csv", "parquet")


@click.command()
@click.argument("study", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--table",
    "table_name",
    required=True,
    help="A paper table (cells, routes, failures, quadrants, flags) or a data table with one row per"
    " fact (runs, submissions, stages, commands).",
)
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write to this file.")
@click.option(
    "--width",
    type=click.Choice(("column", "page")),
    default="column",
    show_default=True,
    help="LaTeX: lay the table out to fit one column of a two-column paper, or the page's text.",
)
@click.option("--columns", help="Comma-separated column names to keep, in this order (every format).")
@click.option("--caption", help="LaTeX: the caption (default: the table's own).")
@click.option("--label", help="LaTeX: the \\label (default: tab:<study>-<table>).")
@click.option(
    "--star/--no-star", default=None, help="LaTeX: table* spanning both columns (default: with --width page)."
)
@click.option(
    "--bold",
    type=click.Choice(("best", "unique", "none")),
    default="best",
    show_default=True,
    help="Mark each column's best value: every tie, only a best no other row ties, or nothing.",
)
@click.option("--notes", help="LaTeX: a footnote printed under the table.")
@click.option(
    "--labels",
    "labels_file",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help='A TOML file of display names over the taxonomy\'s ([route] ONLINE_RL = "Online RL").',
)
def export(
    study: Path,
    table_name: str,
    fmt: str,
    output: Path | None,
    width: str,
    columns: str | None,
    caption: str | None,
    label: str | None,
    star: bool | None,
    bold: str,
    notes: str | None,
    labels_file: Path | None,
) -> None:
    r"""Compute table TABLE of the study store STUDY (made by `arb-audit ingest`) and write it.

    Paper tables aggregate: LaTeX uses booktabs, prints display names, marks each column's best value in
    bold and is laid out to fit --width (what it took is a comment in its first lines; a table scaled
    with \resizebox is reported on stderr); CSV and Parquet keep the raw values. Data tables (runs,
    submissions, stages, commands) keep one row per fact, typed by the audit's schema, for an analysis
    of one's own (CSV, Parquet, Markdown).
    Exit status 2 when the study or the table cannot be read.
    """
    from arb_audit.store import StoreError
    from arb_audit.study import load_study, older_audits
    from arb_audit.study_data import DATA_TABLES
    from arb_audit.taxonomy.labels import DEFAULT_LABELS, load_labels
    from arb_audit.taxonomy.render import TableOptions, latex_layout, write
    from arb_audit.taxonomy.tables import TABLES, table

    if table_name not in TABLES and table_name not in DATA_TABLES:
        names = ", ".join([*TABLES, *DATA_TABLES])
        click.echo(f"arb-audit export: no table {table_name!r} (there are: {names})", err=True)
        sys.exit(2)
    if table_name in DATA_TABLES and fmt == "latex":
        click.echo(
            f"arb-audit export: {table_name} is a data table (one row per fact): write it as csv, parquet"
            " or markdown",
            err=True,
        )
        sys.exit(2)
    if not study.is_file():
        click.echo(f"arb-audit export: {study}: no such study (make one with arb-audit ingest)", err=True)
        sys.exit(2)
    try:
        frame = load_study(study)
    except StoreError as exc:
        click.echo(f"arb-audit export: {exc}", err=True)
        sys.exit(2)
    if frame.is_empty():
        click.echo(
            f"arb-audit export: {study}: holds no ingested runs (arb-audit ingest RUN_DIR... --study)",
            err=True,
        )
        sys.exit(2)
    try:
        if table_name in DATA_TABLES:
            text = _write_data(table_name, frame, fmt, output)
        else:
            options = TableOptions(
                width=width,
                columns=tuple(c.strip() for c in columns.split(",") if c.strip()) if columns else None,
                caption=caption,
                label=label,
                study=study.stem,
                star=star,
                bold=bold,
                notes=notes,
                labels=load_labels(labels_file) if labels_file else DEFAULT_LABELS,
            )
            if older := older_audits(frame):
                click.echo(
                    f"arb-audit export: warning: {len(older)} run(s) counted as not audited: their stored"
                    f" audit is not of this arb-audit's schema (ingest them again), e.g. {older[0]}",
                    err=True,
                )
            computed, spec = table(table_name, frame), TABLES[table_name]
            if fmt == "latex":
                layout = latex_layout(computed, spec, options)
                if layout.resized:
                    click.echo(f"arb-audit export: note: {table_name}: {layout.steps[-1]}", err=True)
            text = write(computed, spec, fmt, output, options)
    except (ValueError, OSError) as exc:
        click.echo(f"arb-audit export: {exc}", err=True)
        sys.exit(2)
    if text is not None:
        click.echo(text, nl=False)


def _write_data(name: str, frame: pl.DataFrame, fmt: str, output: Path | None) -> str | None:
    """Write data table ``name`` of the study ``frame``; say which runs could not be read back."""
    from arb_audit.study_data import DATA_TABLES, data_table
    from arb_audit.taxonomy.render import write
    from arb_audit.taxonomy.tables import Column, TableSpec

    found = data_table(name, frame)
    if found.unreadable:
        click.echo(
            f"arb-audit export: warning: {len(found.unreadable)} run(s) left out: their stored audit is not"
            f" of this arb-audit's schema (ingest them again), e.g. {found.unreadable[0]}",
            err=True,
        )
    spec = TableSpec(
        name,
        DATA_TABLES[name].row,
        tuple(Column(c, c) for c in found.frame.columns),
        lambda study: study,
    )
    return write(found.frame, spec, fmt, output)
