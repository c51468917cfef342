"""SVG snapshots of every screen at a fixed size (pytest-textual-snapshot; ``--snapshot-update``
rewrites them). Nothing in them depends on the clock, a temp path or a blinking cursor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from arb_audit.tui.app import ReviewApp
from arb_audit.tui.session import ReviewSession
from tests.tui.conftest import KEY

SIZE = (120, 36)
Compare = Callable[..., bool]


@pytest.fixture(autouse=True)
def _no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blinking cursor would make two screenshots of one state differ."""
    monkeypatch.setattr("textual.widgets.Input.cursor_blink", False)


def _first_code_evidence(run_store: Path) -> int:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    from arb_audit.tui.evidence import evidence_items

    report = app.session.audit(KEY)
    return next(
        i
        for i, item in enumerate(evidence_items(report))
        if item.kind == "code" and item.pointer.path == "code/grpo_env.py"
    )


def test_runs_list(snap_compare: Compare, study: Path) -> None:
    assert snap_compare(ReviewApp(ReviewSession.open(study, "ann")), terminal_size=SIZE)


def test_runs_list_filtered(snap_compare: Compare, study: Path) -> None:
    app = ReviewApp(ReviewSession.open(study, "ann"))
    assert snap_compare(app, press=["slash", *"flag:evaluator", "enter"], terminal_size=SIZE)


def test_run(snap_compare: Compare, run_store: Path) -> None:
    assert snap_compare(ReviewApp(ReviewSession.open(run_store, "ann")), press=["enter"], terminal_size=SIZE)


def test_run_blind(snap_compare: Compare, run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann", blind=True))
    assert snap_compare(app, press=["enter"], terminal_size=SIZE)


def test_evidence_code(snap_compare: Compare, run_store: Path) -> None:
    down = ["down"] * _first_code_evidence(run_store)
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    assert snap_compare(app, press=["enter", *down, "enter"], terminal_size=SIZE)


def test_evidence_diff(snap_compare: Compare, run_store: Path) -> None:
    down = ["down"] * _first_code_evidence(run_store)
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    assert snap_compare(app, press=["enter", *down, "enter", "d"], terminal_size=SIZE)


def test_verdicts(snap_compare: Compare, run_store: Path) -> None:
    ReviewSession.open(run_store, "bob").record(KEY, "failure", "regression")
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    assert snap_compare(app, press=["enter", "v", "a"], terminal_size=SIZE)


def test_override(snap_compare: Compare, run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    assert snap_compare(app, press=["enter", "v", "down", "down", "o"], terminal_size=SIZE)


def test_help(snap_compare: Compare, study: Path) -> None:
    async def settle(pilot: Pilot[None]) -> None:
        await pilot.pause()

    app = ReviewApp(ReviewSession.open(study, "ann"))
    assert snap_compare(app, press=["question_mark"], terminal_size=SIZE, run_before=settle)
