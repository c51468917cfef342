"""``arb-audit agreement S [--table kappa|confusion] [--format F] [-o FILE]``: how far reviewers agree."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NoReturn

import click

from arb_audit.install_hint import missing

TABLE_CHOICES = ("kappa", "confusion")
FORMAT_CHOICES = ("latex", "markdown", "csv", "parquet")
SKLEARN_STACK = frozenset({"sklearn", "numpy", "scipy"})
"""Modules whose absence means scikit-learn is not (fully) installed: the same fix for each."""


def _fail(message: str) -> NoReturn:
    """Say what went wrong on stderr and exit with status 2."""
    click.echo(f"arb-audit agreement: {message}", err=True)
    sys.exit(2)


@click.command()
@click.argument("store", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--table",
    "table_name",
    type=click.Choice(TABLE_CHOICES),
    default="kappa",
    show_default=True,
    help="kappa: Cohen's per pair of raters and Fleiss' across reviewers; confusion: the values behind them.",
)
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="markdown", show_default=True)
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), help="Write to this file.")
@click.option(
    "--blind-only",
    is_flag=True,
    help="Count only verdicts made under --blind review (a reviewer who saw the analyzer's value is "
    "not an independent rater).",
)
def agreement(store: Path, table_name: str, fmt: str, output: Path | None, blind_only: bool) -> None:
    """Agreement between the reviewers and the analyzer over the verdicts recorded in STORE.

    STORE is a study store (`arb-audit ingest`) or a run's store holding verdicts (`arb-audit review`).
    Each reviewer's standing verdict counts; the analyzer is one more rater. Exit status 2 when the
    store cannot be read or holds no verdicts.
    """
    if not store.is_file():
        _fail(f"{store}: no such store (a study from arb-audit ingest, or a run's .arb-audit/run.duckdb)")
    try:
        from arb_audit.taxonomy.agreement import AGREEMENT_TABLES
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] not in SKLEARN_STACK:
            raise
        click.echo(missing("arb-audit agreement", exc.name or "sklearn"), err=True)
        sys.exit(2)
    from arb_audit.store import RunStore, StoreError
    from arb_audit.taxonomy.render import write
    from arb_audit.verdicts import chain_break, current_verdicts, load_verdicts

    try:
        with RunStore.open(store, read_only=True) as opened:
            ledger = load_verdicts(opened)
    except StoreError as exc:  # an arbitrary DuckDB file, or a store from before the verdict ledger
        _fail(str(exc))
    broken = chain_break(ledger)
    if broken is not None:  # the table is still computed: a reviewer may want to see what was edited
        click.echo(
            f"arb-audit agreement: warning: {store}: the verdict ledger was edited (its hash chain fails at "
            f"verdict {broken}; arb-audit verify says more)",
            err=True,
        )
    if blind_only:
        ledger = ledger.filter(ledger["blind"])
    if ledger.is_empty():
        more = " made blind (arb-audit review --blind)" if blind_only else ""
        _fail(f"{store}: holds no verdicts{more}: record some with arb-audit review")
    spec = AGREEMENT_TABLES[table_name]
    try:
        text = write(spec.compute(current_verdicts(ledger)), spec, fmt, output)
    except (ValueError, OSError) as exc:
        _fail(str(exc))
    if text is not None:
        click.echo(text, nl=False)
