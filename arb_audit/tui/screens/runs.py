"""The runs list: filter, sort, and the "needs review" order."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from arb_audit.inert import inert
from arb_audit.tui.query import BLIND_SORTS, SORTS, FilterError, apply_filter
from arb_audit.tui.screens.run import RunScreen
from arb_audit.tui.session import ReviewSession
from arb_audit.tui.widgets import KeyBar, RunsTable


class RunsScreen(Screen[None]):
    """Every run of the session; enter opens one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("s", "sort", "Sort"),
        Binding("n", "needs_review", "Needs review"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
    ]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.filter_text = ""
        """The filter in force."""
        self.sort_names = BLIND_SORTS if session.blind else tuple(SORTS)
        """The orders ``s`` cycles through."""
        self.sort_name = self.sort_names[0]
        """The order in force (a key of ``arb_audit.tui.query.SORTS``)."""
        self.shown: list[str] = []
        """The run keys listed, in order."""
        self.stale = False
        """Whether verdicts were recorded since the list was made (it is remade when shown again)."""
        self.run_screen = RunScreen(session)
        """The one screen that shows whichever run is opened."""

    def compose(self) -> ComposeResult:
        """Lay out the summary line, the filter box, the list and the keys."""
        yield Static(id="summary")
        # Always shown (one line): showing and hiding it made every filter relayout the whole list.
        yield Input(
            placeholder="/ to filter: task:gsm8k route:sft failure:none flag:… reviewed:no",
            id="filter",
            compact=True,
        )
        yield RunsTable(id="runs")
        yield KeyBar()

    def on_mount(self) -> None:
        """List the runs in the "needs review" order."""
        self.query_one(RunsTable).load(self.session.runs)
        self.refresh_list()
        self.query_one(RunsTable).focus()

    def refresh_list(self) -> None:
        """List the runs again under the filter and order in force."""
        reviewed = self.session.reviewed_keys()
        try:
            runs = apply_filter(self.session.runs, self.filter_text, reviewed, self.session.blind)
        except FilterError as exc:
            self.query_one("#summary", Static).update(
                Text.assemble(("filter: ", "bold red"), inert(str(exc)))
            )
            return
        runs = SORTS[self.sort_name](runs, reviewed)
        self.shown = runs["run_key"].to_list()
        self.query_one(RunsTable).show(
            self.shown, reviewed, self.session.ruled() if self.session.blind else None
        )
        total = self.session.runs.height
        count = f"{runs.height} of {total} runs" if self.filter_text else f"{total} runs"
        done = len(reviewed & set(self.session.runs["run_key"]))
        shown_filter = f" · filter: {self.filter_text}" if self.filter_text else ""
        blind = " (blind)" if self.session.blind else ""
        self.query_one("#summary", Static).update(
            Text(
                inert(
                    f"{count} · {done} reviewed by {self.session.reviewer}{blind} · "
                    f"order: {self.sort_name}{shown_filter} · {self.session.store_path.name}"
                )
            )
        )

    def action_filter(self) -> None:
        """Type in the filter box (it starts from the filter in force)."""
        box = self.query_one("#filter", Input)
        box.value = self.filter_text
        box.focus()

    @on(Input.Submitted, "#filter")
    def apply(self, event: Input.Submitted) -> None:
        """Apply the typed filter and go back to the list."""
        self.filter_text = event.value.strip()
        self.refresh_list()
        self.query_one(RunsTable).focus()

    def action_clear_filter(self) -> None:
        """Drop the filter (escape)."""
        self.query_one("#filter", Input).value = ""
        self.filter_text = ""
        self.refresh_list()
        self.query_one(RunsTable).focus()

    def action_sort(self) -> None:
        """Cycle through the orders."""
        names = self.sort_names
        self.sort_name = names[(names.index(self.sort_name) + 1) % len(names)]
        self.refresh_list()

    def action_needs_review(self) -> None:
        """Put the runs that most need a reviewer first."""
        self.sort_name = self.sort_names[0]
        self.refresh_list()

    @on(RunsTable.Selected)
    def open_run(self, event: RunsTable.Selected) -> None:
        """Open the selected run."""
        self.run_screen.show_run(self.query_one(RunsTable).key_at(event.row))
        self.app.push_screen(self.run_screen)

    def on_screen_resume(self) -> None:
        """List the runs again if a verdict was recorded meanwhile (a tick, and the order may move)."""
        if self.stale:
            self.stale = False
            self.refresh_list()
