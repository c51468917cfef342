"""Choose a field's value from the taxonomy (a chain is typed, then checked)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static

from arb_audit.taxonomy.review import check_value, normalise_chain


class OverrideModal(ModalScreen[str | None]):
    """The taxonomy's values of one field; enter picks, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, field: str, allowed: tuple[str, ...] | None, current: str | None) -> None:
        super().__init__()
        self.field = field
        self.allowed = allowed
        """The values to choose from; None for a chain, which is typed."""
        self.current = current

    def compose(self) -> ComposeResult:
        """Lay out a list of values, or a box for a chain."""
        with Vertical(id="override"):
            yield Static(f"[b]{self.field}[/b]: your value", id="override-title")
            if self.allowed is None:
                yield Input(value=self.current or "", placeholder="SFT→GRPO(online)", id="chain")
            else:
                yield OptionList(*self.allowed, id="choices")
            yield Static(id="override-problem")

    def on_mount(self) -> None:
        """Put the cursor on the current value."""
        if self.allowed is not None and self.current in self.allowed:
            self.query_one(OptionList).highlighted = self.allowed.index(self.current)

    @on(OptionList.OptionSelected)
    def picked(self, event: OptionList.OptionSelected) -> None:
        """Return the chosen value."""
        self.dismiss(str(event.option.prompt))

    @on(Input.Submitted, "#chain")
    def typed(self, event: Input.Submitted) -> None:
        """Return the typed chain, or say why it is not one."""
        value = normalise_chain(event.value)
        problem = check_value(self.field, value)
        if problem:
            self.query_one("#override-problem", Static).update(Text(problem, style="red"))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        """Close without a value."""
        self.dismiss(None)
