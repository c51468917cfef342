"""The verdicts of one run.

For each field, agree with the analyzer or override it with a value from the taxonomy, with a note;
every verdict is appended to the store's hash-chained ledger at once.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from arb_audit.inert import inert
from arb_audit.store import StoreError
from arb_audit.taxonomy.review import FIELDS, analyzer_values, choices
from arb_audit.tui.messages import VerdictRecorded
from arb_audit.tui.screens.override import OverrideModal
from arb_audit.tui.session import ReviewSession
from arb_audit.tui.widgets import FieldTable, KeyBar
from arb_audit.verdicts import VerdictRefused


class VerdictScreen(Screen[None]):
    """The review fields of one run; a agrees, o overrides, e writes the note the next verdict carries."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "agree", "Agree"),
        Binding("o", "override", "Override"),
        Binding("A", "agree_rest", "Agree with the rest"),
        Binding("e", "note", "Note"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.run_key = ""
        """The run ruled on."""
        self.analyzer: dict[str, str | None] = {}
        """The analyzer's value of each field."""
        self.fresh = False
        """Whether the run changed since the screen was last shown."""

    def show_run(self, run_key: str) -> None:
        """Point the screen at ``run_key`` (one VerdictScreen serves every run, as one RunScreen does)."""
        self.run_key = run_key
        self.analyzer = analyzer_values(self.session.audit(run_key))
        self.fresh = True

    def compose(self) -> ComposeResult:
        """Lay out the title, the field table, the note box and the footer."""
        yield Static(id="verdict-title")
        yield FieldTable(id="fields")
        yield Input(placeholder="note for the next verdict (enter keeps it)", id="note")
        yield KeyBar()

    def on_screen_resume(self) -> None:
        """Fill the table (back from the override modal too: a verdict may have been recorded)."""
        if not self.fresh:
            self.refresh_fields()
            return
        self.fresh = False
        blind = " · blind: the analyzer's and others' values show once you rule" if self.session.blind else ""
        self.query_one("#verdict-title", Static).update(
            Text.assemble(
                ("verdicts on ", "bold"), inert(f"{self.run_key} · reviewer {self.session.reviewer}{blind}")
            )
        )
        self.refresh_fields()
        self.query_one(FieldTable).move_cursor(row=0)
        self.query_one("#note", Input).value = ""
        self.query_one(FieldTable).focus()

    def refresh_fields(self) -> None:
        """Show every field's values as the ledger holds them now."""
        self.query_one(FieldTable).show(
            FIELDS,
            self.analyzer,
            self.session.standing(self.run_key),
            self.session.reviewer,
            {f: self.session.may_see(self.run_key, f) for f in FIELDS},
        )

    @property
    def field(self) -> str:
        """The field under the cursor."""
        return FIELDS[self.query_one(FieldTable).cursor_row]

    def record(self, values: dict[str, str]) -> None:
        """Append the verdicts (with the note typed, then cleared) and show the ledger again."""
        note_box = self.query_one("#note", Input)
        try:
            self.session.record_all(self.run_key, values, note_box.value.strip())
        except (VerdictRefused, StoreError) as exc:
            # the note stays typed: the reviewer can try again
            self.notify(inert(str(exc)), severity="error", markup=False)
            return
        note_box.value = ""
        self.refresh_fields()
        for field, value in values.items():
            self.app.post_message(VerdictRecorded(self.run_key, field, value))
        table = self.query_one(FieldTable)
        table.move_cursor(row=min(table.cursor_row + 1, len(FIELDS) - 1))

    def action_agree(self) -> None:
        """Rule that the analyzer's value of the field is right."""
        field = self.field
        if not self.session.may_see(self.run_key, field):
            self.notify("blind review: choose your own value with o", severity="warning")
            return
        value = self.analyzer.get(field)
        if value is None:
            self.notify(f"the analyzer gave no {field}: choose a value with o", severity="warning")
            return
        self.record({field: value})

    def action_agree_rest(self) -> None:
        """Agree with the analyzer on every field not ruled on yet (where it gave a value)."""
        if self.session.blind:
            self.notify("blind review: rule on each field with o", severity="warning")
            return
        ruled = self.session.ruled()
        rest = {
            f: value
            for f in FIELDS
            if (self.run_key, f) not in ruled and (value := self.analyzer.get(f)) is not None
        }
        if rest:
            self.record(rest)

    def action_override(self) -> None:
        """Choose another value of the field from the taxonomy."""
        field = self.field

        def chosen(value: str | None) -> None:
            if value:
                self.record({field: value})

        current = self.analyzer.get(field) if self.session.may_see(self.run_key, field) else None
        self.app.push_screen(OverrideModal(field, choices(field), current), chosen)

    def action_note(self) -> None:
        """Write the note the next verdict carries."""
        self.query_one("#note", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Keep the note and go back to the fields."""
        self.query_one(FieldTable).focus()

    def action_back(self) -> None:
        """Back to the run (from the note box: back to the fields)."""
        if self.query_one("#note", Input).has_focus:
            self.query_one(FieldTable).focus()
        else:
            self.app.pop_screen()
