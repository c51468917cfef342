"""The reviewer's desk: ``arb-audit review PATH``.

Laid out like harlequin: this app and its .tcss, ``screens/``, ``widgets/``, ``messages.py``; the
headless parts in ``session.py``, ``query.py`` and ``evidence.py``.
"""

from __future__ import annotations

import gc
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from arb_audit.tui.messages import VerdictRecorded
from arb_audit.tui.screens import HelpScreen, RunsScreen
from arb_audit.tui.session import ReviewSession


class ReviewApp(App[None]):
    """Walk the runs of a store, their evidence, and record verdicts."""

    CSS_PATH = "app.tcss"
    # The palette lists every command of every screen; the footer and the help already show them.
    ENABLE_COMMAND_PALETTE = False
    TITLE = "arb-audit review"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        """The runs under review and the ledger."""
        self.runs_screen = RunsScreen(session)
        """The list, kept so a verdict recorded elsewhere ticks its run."""

    def on_mount(self) -> None:
        """Show the list."""
        self.push_screen(self.runs_screen)
        # The list and the loaded study are long-lived: keep them out of every later collection, which
        # otherwise walked them all in the middle of keystrokes (benchmarks/bench_review.py).
        self.call_after_refresh(gc.freeze)

    def on_unmount(self) -> None:
        """Let go of what the desk held for its whole life: the frozen objects and the store's instance."""
        gc.unfreeze()
        self.session.host.close()

    def on_verdict_recorded(self, message: VerdictRecorded) -> None:
        """Have the list remade (ticks, order) when it is next shown, not while it is hidden."""
        self.runs_screen.stale = True

    def action_help(self) -> None:
        """Show the keys."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
