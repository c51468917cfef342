"""The keys of every screen."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# arb-audit review

**Runs** — `/` filter (`task:gsm8k route:sft failure:none quadrant:score_up flag:test reviewed:no`,
bare words match run, task, route or chain), `escape` clears it · `s` next order · `n` needs-review
order (unreviewed first, then score and intended training disagreeing, then weakest evidence) ·
`enter` opens a run.

**Run** — `enter` opens the evidence under the cursor · `v` verdicts · `escape` back.

**Evidence** — `n` / `p` next and previous pointer · `d` diff of the cited file against its
version before (again: back to the code) · `[` `]` move the diff's older side, `<` `>` its newer side ·
`escape` back.

**Verdicts** — `a` agree with the analyzer · `o` override with a value from the taxonomy · `A` agree
with the analyzer on every field not ruled on yet · `e` write the note the next verdict carries ·
`escape` back. Every verdict is appended at once to the store's
hash-chained ledger (`arb-audit verify` checks it); nothing is overwritten. Under `--blind`, the
analyzer's and other reviewers' values of a field show once you have ruled on it.

`?` this help · `q` quit
"""


class HelpScreen(ModalScreen[None]):
    """The keys, by screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("question_mark", "dismiss", "Close"),
    ]

    def compose(self) -> ComposeResult:
        """Lay out the help text."""
        with VerticalScroll(id="help"):
            yield Markdown(HELP)
