"""The desk's own widgets: the line tables' text, and the key bar."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.inert import UNSAFE, inert
from arb_audit.tui.app import ReviewApp
from arb_audit.tui.screens import RunsScreen
from arb_audit.tui.session import ReviewSession
from arb_audit.tui.widgets import KeyBar
from arb_audit.tui.widgets.line_table import plain
from arb_audit.tui.widgets.runs_table import cells

SIZE = (120, 36)


@given(st.text())
def test_plain_text_is_one_line_without_control_characters(text: str) -> None:
    shown = plain(text)
    assert not UNSAFE.search(shown)
    # each tab or line break a space, each other unsafe character a visible escape, the rest as written
    assert shown == "".join(" " if c in "\t\n\r" else inert(c) for c in text)


def test_a_terminal_escape_in_a_run_key_is_shown_not_sent() -> None:
    runs = pl.DataFrame(
        {
            "run_key": ["/runs/\x1b[2J\x07evil\nrun"],
            "task": ["gsm8k\ttab"],
            "scaffold": [None],
            "driver": ["claude"],
            "best_score": [41.25],
            "route_label": ["SFT"],
            "chain": [None],
            "error": [None],
            "failure": ["none"],
            "quadrant": [None],
            "flags": [["external_api", "test\x1bdata"]],
        },
        schema_overrides={
            "scaffold": pl.String,
            "chain": pl.String,
            "error": pl.String,
            "quadrant": pl.String,
        },
    )
    row = cells(runs).row(0)
    assert row == (
        "/runs/\\x1b[2J\\x07evil run",
        "gsm8k tab",
        "— × claude",
        "41.2",
        "SFT",
        "none",
        "—",
        "external_api, test\\x1bdata",
    )


async def test_the_key_bar_shows_the_screens_keys_and_a_click_presses_one(study: Path) -> None:
    app = ReviewApp(ReviewSession.open(study, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        bar = screen.query_one(KeyBar)
        assert [k.description for k in bar.keys] == ["Filter", "Sort", "Needs review", "Help", "Quit"]
        text = str(bar.render())
        assert " / Filter " in text and " s Sort " in text
        await pilot.click(KeyBar, offset=(text.index(" s Sort") + 1, 0))
        assert screen.sort_name == "run"
        await pilot.press("enter")  # another screen, other keys
        assert [k.description for k in app.screen.query_one(KeyBar).keys] == [
            "Verdict",
            "Back",
            "Help",
            "Quit",
        ]
