"""``arb-audit review PATH``: the reviewer's desk (tui/) on a study store, a run store or a run folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from arb_audit.install_hint import missing


@click.command()
@click.argument("path", type=click.Path(path_type=Path, exists=True))
@click.option(
    "--reviewer", help="Who records the verdicts (default: $ARB_AUDIT_REVIEWER, else the login name)."
)
@click.option(
    "--blind",
    is_flag=True,
    help="Hide the analyzer's and other reviewers' values of each field until you have ruled on it.",
)
def review(path: Path, reviewer: str | None, blind: bool) -> None:
    """Walk the runs of PATH and their evidence from the keyboard, and record verdicts.

    PATH is a study store (arb-audit ingest), a run store, or a run folder (audited first). Verdicts
    are appended to the store's hash-chained ledger (arb-audit verify checks it); arb-audit agreement
    measures how reviewers and the analyzer agree. Exit status 2 when PATH cannot be reviewed.
    """
    from arb_audit.store import StoreError
    from arb_audit.verdicts import REVIEWER_ENV, reviewer_name

    try:
        # imported here, not at the top: `arb-audit --help` and every other command start without Textual
        from arb_audit.tui.app import ReviewApp
        from arb_audit.tui.session import ReviewError, ReviewSession
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "textual":
            raise
        click.echo(missing("arb-audit review", exc.name or "textual"), err=True)
        sys.exit(2)
    name = reviewer_name(reviewer)
    if not name:
        click.echo(f"arb-audit review: who is reviewing? give --reviewer or set ${REVIEWER_ENV}", err=True)
        sys.exit(2)
    try:
        session = ReviewSession.open(path, name, blind=blind)
    except (ReviewError, StoreError) as exc:
        click.echo(f"arb-audit review: {exc}", err=True)
        sys.exit(2)
    app = ReviewApp(session)
    app.run()
    # Textual reports a failure (a stylesheet it cannot read, an exception in a handler) through the
    # app's return code after printing it; a desk that crashed must not exit 0.
    if app.return_code:
        sys.exit(app.return_code)
