"""``arb-audit export S --table T --format F [-o FILE]``: a study table for a paper."""

from __future__ import annotations

import sys
from pathlib import Path

import click

FORMAT_CHOICES = ("latex", "markdown", "csv", "parquet")


@click.command()
@click.argument("study", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--table", "table_name", required=True, help="cells, routes, failures, quadrants or flags.")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write to this file.")
def export(study: Path, table_name: str, fmt: str, output: Path | None) -> None:
    """Compute table TABLE of the study store STUDY (made by `arb-audit ingest`) and write it.

    LaTeX uses booktabs, escapes names and marks each column's best value in bold; CSV and Parquet
    keep the raw values. Exit status 2 when the study or the table cannot be read.
    """
    from arb_audit.store import StoreError
    from arb_audit.study import load_study
    from arb_audit.taxonomy.render import write
    from arb_audit.taxonomy.tables import TABLES, table

    if table_name not in TABLES:
        click.echo(f"arb-audit export: no table {table_name!r} (there are: {', '.join(TABLES)})", err=True)
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
        text = write(table(table_name, frame), TABLES[table_name], fmt, output)
    except (ValueError, OSError) as exc:
        click.echo(f"arb-audit export: {exc}", err=True)
        sys.exit(2)
    if text is not None:
        click.echo(text, nl=False)
