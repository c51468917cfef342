"""``arb-audit demo``: record scripted agents in the reference world, then audit what was recorded.

Each scenario's route chain, failure mode and quadrant are known by construction; the demo prints the
audit and says whether it found them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.table import Table

    from arb_audit.runner.reference.scenarios import Scenario
    from arb_audit.schema import AuditReport

DEFAULT_OUT = Path("arb-audit-demo")


def found(scenario: Scenario, report: AuditReport) -> dict[str, tuple[object, object]]:
    """Each fact known by construction: (expected, what the audit says)."""
    raised = {f.flag for f in report.flags}
    return {
        "submissions": (scenario.submissions, len(report.submissions)),
        "chain": (scenario.chain, report.route.chain_text),
        "failure": (scenario.failure, report.failure.mode),
        "quadrant": (scenario.quadrant, report.quadrant.cell),
        **{f"flag {flag}": (True, flag in raised) for flag in scenario.flags},
    }


@click.command()
@click.argument("scenario", required=False)
@click.option("--all", "run_all", is_flag=True, help="Record and audit every scenario.")
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=DEFAULT_OUT,
    show_default=True,
    help="Where the workspaces and recordings go (a scenario recorded before is replaced).",
)
@click.option("--list", "list_only", is_flag=True, help="List the scenarios and what each must show.")
def demo(scenario: str | None, run_all: bool, out: Path, list_only: bool) -> None:
    """Record SCENARIO (default: sft_grpo, SFT then online GRPO) in the reference world and audit it.

    A tiny language model is pre-trained on the CPU (once, into OUT/base), a scripted agent writes and
    runs real training code under `arb-audit record`, and the recording is audited. Exit status 0 when
    every audit finds what the scenario was built to show, 1 when one does not, 2 when nothing ran.
    """
    from rich.console import Console

    from arb_audit.runner.reference.scenarios import SCENARIOS, find

    console = Console()
    if list_only:
        table = _table("task", "chain", "failure", "quadrant", "story")
        for s in SCENARIOS:
            table.add_row(s.name, s.task, s.chain or "—", s.failure, s.quadrant, s.story)
        console.print(table)
        return
    if importlib.util.find_spec("torch") is None:
        from arb_audit.install_hint import missing

        click.echo(missing("arb-audit demo: the reference world", "torch", extra="reference"), err=True)
        sys.exit(2)
    if run_all and scenario:
        click.echo("arb-audit demo: give a scenario or --all, not both", err=True)
        sys.exit(2)
    try:
        chosen = list(SCENARIOS) if run_all else [find(scenario or SCENARIOS[0].name)]
    except KeyError as exc:
        click.echo(f"arb-audit demo: {exc.args[0]}", err=True)
        sys.exit(2)
    results = [(s, _record_and_audit(s, out, show=not run_all)) for s in chosen]
    table = _table("fact", "expected", "audit", "")
    misses = 0
    for s, report in results:
        for fact, (expected, got) in found(s, report).items():
            ok = expected == got
            misses += not ok
            table.add_row(s.name, fact, str(expected), str(got), "[green]✓[/]" if ok else "[red]✗[/]")
    console.print(table)
    console.print(f"recordings under {out}/<scenario>/recording; audit one again with arb-audit <recording>")
    sys.exit(1 if misses else 0)


def _table(*columns: str) -> Table:
    """Return a table whose first column, the scenario's name, never wraps."""
    from rich.table import Table

    table = Table()
    table.add_column("scenario", no_wrap=True)
    for column in columns:
        table.add_column(column)
    return table


def _record_and_audit(scenario: Scenario, out: Path, show: bool) -> AuditReport:
    """Record one scenario and return its audit (printed in full when ``show``)."""
    from arb_audit.pipeline import audit
    from arb_audit.runner.record import RecordError
    from arb_audit.runner.reference.world import WorldError, record_scenario

    click.echo(f"arb-audit demo: recording {scenario.name} — {scenario.story}", err=True)
    try:
        recording = record_scenario(scenario, out)
    except (RecordError, WorldError) as exc:
        click.echo(f"arb-audit demo: {scenario.name}: {exc}", err=True)
        sys.exit(2)
    report = audit(recording)
    if show:
        from arb_audit.report import render

        render(report)
    return report
