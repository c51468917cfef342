"""One run: its header, scores, best lineage, failure, flags and the evidence behind them."""

from __future__ import annotations

from typing import ClassVar

import polars as pl
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Static

from arb_audit.inert import inert
from arb_audit.schema import AuditReport
from arb_audit.taxonomy.render import cell_text
from arb_audit.taxonomy.review import FIELDS, FLAG_PREFIX
from arb_audit.tui.evidence import EvidenceItem, evidence_items
from arb_audit.tui.screens.evidence import EvidenceScreen
from arb_audit.tui.screens.verdict import VerdictScreen
from arb_audit.tui.session import NOT_AUDITED, ReviewSession, Unread
from arb_audit.tui.widgets import EvidenceTable, KeyBar, ScoreStrip

BLIND = "(blind review: record your verdict first)"
"""What a blind reviewer sees in place of an analyzer label they have not ruled on."""


def header(report: AuditReport | None) -> str:
    """Return the run's first line: run, task, stack, base and best score (unknowns without an audit)."""
    if report is None:
        unknown = cell_text(None, "score")
        return f"? · task ? (level ?) · — × — · base {unknown} → best {unknown}"
    run, best = report.run, report.best
    return (
        f"{run.run_id or '?'} · task {run.task or '?'} (level {run.level or '?'}) · "
        f"{run.scaffold or '—'} × {run.driver or '—'} · "
        f"base {cell_text(run.base_score, 'score')} → best {cell_text(best.score if best else None, 'score')}"
    )


class RunScreen(Screen[None]):
    """The audit of one run; enter on an evidence row opens it, v opens the verdicts."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "verdict", "Verdict"),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.run_key = ""
        """The run shown."""
        self.report: AuditReport | Unread = NOT_AUDITED
        """Its audit, or why it has none to show."""
        self.items: list[EvidenceItem] = []
        """The evidence listed, in order."""
        self.shown_with: pl.DataFrame | None = None
        """The ledger the facts were last shown under (blind review shows more as verdicts come)."""
        self.evidence_screen = EvidenceScreen(session)
        """The one screen that shows whichever pointer is opened."""
        self.verdict_screen = VerdictScreen(session)
        """The one screen that records verdicts on whichever run is shown."""

    def compose(self) -> ComposeResult:
        """Lay out the header line, score strip, facts, evidence list and footer."""
        yield Static(id="run-header")
        yield ScoreStrip(id="scores")
        yield Static(id="facts")
        yield EvidenceTable(id="evidence")
        yield KeyBar()

    def show_run(self, run_key: str) -> None:
        """Point the screen at ``run_key`` (drawn when it is shown).

        One RunScreen serves every run: composing and styling a new screen for each cost more than
        100 ms a keystroke (benchmarks/bench_review.py).
        """
        self.run_key = run_key
        self.report = self.session.report(run_key)
        self.shown_with = None
        self.app.clear_notifications()  # notices about the last run shown are not about this one

    def on_screen_resume(self) -> None:
        """Draw the run if it is new, or again if a verdict recorded since may lift blind review."""
        if self.shown_with is self.session.ledger or (self.shown_with is not None and not self.session.blind):
            return
        fresh = self.shown_with is None
        self.shown_with = self.session.ledger
        audit = self.audit
        self.query_one("#run-header", Static).update(Text(inert(header(audit)), style="bold"))
        self.query_one(ScoreStrip).show(audit, self.session.may_see(self.run_key, "route"))
        self.query_one("#facts", Static).update(self.facts())
        self.items = [
            item
            if self.session.may_see(self.run_key, item.field)
            else EvidenceItem(BLIND, item.field, item.pointer)
            for item in evidence_items(audit)
            if self.session.may_see(self.run_key, item.field) or not item.field.startswith("flag:")
        ]
        table = self.query_one(EvidenceTable)
        table.show(self.items)
        if fresh:
            table.move_cursor(row=0)
            table.focus()

    @property
    def audit(self) -> AuditReport | None:
        """The run's audit; None when it has none to show."""
        return self.report if isinstance(self.report, AuditReport) else None

    def _seen(self, field: str, value: str) -> str:
        return value if self.session.may_see(self.run_key, field) else BLIND

    def facts(self) -> Text:
        """Return the run's facts, each hidden under blind review until ruled on.

        The best lineage as a chain, the route, the failure with its downstream effects, the quadrant
        and the flags.
        """
        if isinstance(self.report, Unread):
            return Text(inert(self.report.problem), style="bold red")
        route, failure = self.report.route, self.report.failure
        downstream = ", ".join(failure.downstream)
        flags = [f.flag for f in self.report.flags]
        shown_flags = [f for f in flags if self.session.may_see(self.run_key, f"flag:{f}")]
        # Under blind review even "no flags" is the analyzer's word: hidden until every flag is ruled on.
        flags_hidden = any(
            not self.session.may_see(self.run_key, f) for f in FIELDS if f.startswith(FLAG_PREFIX)
        )
        lines = [
            ("chain", self._seen("chain", route.chain_text or "—")),
            (
                "route",
                self._seen("route", f"{route.best_label or '—'} (evidence {route.strength or 'none'})"),
            ),
            (
                "failure",
                self._seen("failure", str(failure.mode) + (f" → {downstream}" if downstream else "")),
            ),
            ("quadrant", self._seen("quadrant", str(self.report.quadrant.cell))),
            ("flags", " ".join([", ".join(shown_flags), BLIND if flags_hidden else ""]).strip() or "—"),
        ]
        text = Text()
        for name, value in lines:
            text.append(f"{name:>9}  ", style="dim")
            text.append(f"{inert(value)}\n")
        return text

    @on(EvidenceTable.Selected, "#evidence")
    def open_evidence(self, event: EvidenceTable.Selected) -> None:
        """Open the selected pointer."""
        if self.audit is None:  # a run without an audit lists no evidence
            return
        self.evidence_screen.show_pointer(self.audit, self.items, event.row)
        self.app.push_screen(self.evidence_screen)

    def action_verdict(self) -> None:
        """Open the verdicts of this run."""
        self.verdict_screen.show_run(self.run_key)
        self.app.push_screen(self.verdict_screen)
