"""``arb-audit verify RUN_DIR``: whether a recording still holds, its ledger and the artifacts it graded."""

from __future__ import annotations

import sys
from pathlib import Path

import click


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
def verify(run_dir: Path) -> None:
    """Re-compute the ledger's hash chain and the graded artifacts' content ids of the recording RUN_DIR.

    Exit status 0 when everything holds, 1 with one line per record or file that no longer matches,
    2 when RUN_DIR is not a recording.
    """
    from arb_audit.store import StoreError
    from runner.layout import RECORDING_MARKER, STORE_NAME, is_recording
    from runner.verify import verify as check

    if not is_recording(run_dir):
        click.echo(
            f"arb-audit verify: {run_dir}: not a recording (no {RECORDING_MARKER} and {STORE_NAME})", err=True
        )
        sys.exit(2)
    try:
        mismatches = check(run_dir)
    except StoreError as exc:
        click.echo(f"arb-audit verify: {exc}", err=True)
        sys.exit(2)
    for m in mismatches:
        click.echo(f"{m.what}: {m.where}: {m.message}")
    if mismatches:
        sys.exit(1)
    click.echo("all records and graded artifacts hold")
