"""``arb-audit verify PATH``: whether the recorded facts and the reviewers' verdicts still hold."""

from __future__ import annotations

import sys
from pathlib import Path

import click

NOT_VERIFIABLE = 2
"""Exit status when PATH holds nothing to verify."""


def _audit_store(run_dir: Path) -> Path | None:
    """Return the store an audit of ``run_dir`` wrote (its own folder's, else the cache), if any."""
    from arb_audit.cache_dirs import cache_store_path
    from arb_audit.model import STORE_DIRNAME

    for candidate in (run_dir / STORE_DIRNAME / "run.duckdb", cache_store_path(run_dir)):
        if candidate.is_file() and not candidate.is_symlink():
            return candidate
    return None


MAX_RUNS = 10_000
"""Most runs of one store checked (each ledger is read whole): a store holding more is not checked."""


def _check_store(path: Path) -> tuple[list[str], str]:
    """Check the store at ``path``: each run's submission chain and the verdicts' chain.

    Returns what no longer holds, and a line on the verdict ledger (its length and head hash, to keep
    elsewhere: verdicts cut from the end leave a chain that holds, but a different head).
    """
    import duckdb

    from arb_audit.store import RunStore, StoreError
    from arb_audit.store_bounds import bounded_rows
    from arb_audit.verdicts import chain_break, ledger_head, load_verdicts

    found = []
    with RunStore.open(path, read_only=True) as store:
        try:
            migrations = store.applied_migrations()
            # a run store holds one run, a cache store a few: more is not a store to check run by run
            listed = bounded_rows(
                store.con, "SELECT run_id FROM runs ORDER BY run_id", [], f"{path}: its runs", MAX_RUNS
            )
            run_ids = [r[0] for r in listed]
        except duckdb.Error as exc:
            raise StoreError(f"{path}: not an arb-audit store ({str(exc).splitlines()[0]})") from exc
        for run_id in run_ids:
            broken = store.verify_submission_chain(run_id)
            if broken is not None:
                found.append(
                    f"ledger: {path}: submission {broken} of {run_id} no longer matches the hash chain"
                )
        if "m008_verdict_ledger" not in migrations:
            return found, f"verdicts: {path}: no verdict ledger (nothing was reviewed here)"
        ledger = load_verdicts(store)
        broken = chain_break(ledger)
        if broken is not None:
            found.append(f"verdicts: {path}: verdict {broken} no longer matches the hash chain")
        count, head = ledger_head(ledger)
    return found, f"verdicts: {path}: {count} verdicts, head {head}"


@click.command()
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--head",
    metavar="HASH",
    help="The ledger head `record` printed at its end: the recording's ledger must still end there.",
)
def verify(path: Path, head: str | None) -> None:
    """Re-compute the hash chains and graded artifacts' content ids under PATH.

    PATH is a recording (its ledger and the artifacts it graded are checked, in the workspace beside
    it; when that is not there, at the absolute path the recording keeps, and a line says so), a run
    folder that was audited or reviewed, or a store file (a study store or a run store): the
    submission ledgers and the reviewers' verdict ledger in the store are checked. A recording's ledger
    is checked against the anchor `record` kept beside it at every append (deleted, reordered,
    recomputed or forged rows, deleted manifests); one recorded before anchors says it has none.

    Exit status 0 when everything holds, 1 with one line per record or file that no longer matches,
    2 when PATH holds nothing to verify.
    """
    from arb_audit.runner.layout import is_recording
    from arb_audit.runner.verify import verify as check_recording
    from arb_audit.store import StoreError

    lines: list[str] = []
    ledgers: list[str] = []
    notes: list[str] = []  # how the recording's files were found, said whatever the outcome
    try:
        if path.is_file():
            problems, ledger = _check_store(path)
            lines, ledgers = lines + problems, [ledger]
        else:
            audited = _audit_store(path)
            if not is_recording(path) and audited is None:
                click.echo(
                    f"arb-audit verify: {path}: neither a recording nor an audited run folder "
                    "(audit or review it first)",
                    err=True,
                )
                sys.exit(NOT_VERIFIABLE)
            if is_recording(path):
                checked = check_recording(path, head)
                notes += checked.notes
                ledgers += checked.unchecked
                lines += [f"{m.what}: {m.where}: {m.message}" for m in checked.mismatches]
            if audited is None:
                ledgers.append(
                    f"verdicts: {path}: no verdict ledger (the run was not audited or reviewed here)"
                )
            else:
                problems, ledger = _check_store(audited)
                lines, ledgers = lines + problems, [*ledgers, ledger]
    except StoreError as exc:
        click.echo(f"arb-audit verify: {exc}", err=True)
        sys.exit(NOT_VERIFIABLE)
    for line in notes + lines:
        click.echo(line)
    if lines:
        sys.exit(1)
    for line in ledgers:
        click.echo(line)
    click.echo("all records, graded artifacts and verdicts hold")
