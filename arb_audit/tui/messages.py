"""Messages between the reviewer's desk's screens (past-tense events, as harlequin names them)."""

from __future__ import annotations

from textual.message import Message


class VerdictRecorded(Message):
    """A verdict was appended to the ledger."""

    def __init__(self, run_key: str, field: str, value: str) -> None:
        super().__init__()
        self.run_key = run_key
        """The run it rules on."""
        self.field = field
        """The field."""
        self.value = value
        """The reviewer's value."""
