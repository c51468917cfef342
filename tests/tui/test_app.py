"""The reviewer's desk driven from the keyboard with the Pilot: each screen, and the verdicts it records."""

from __future__ import annotations

import gc
from pathlib import Path

import polars as pl
import pytest
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from arb_audit.store import RunStore
from arb_audit.taxonomy.review import FIELDS
from arb_audit.tui.app import ReviewApp
from arb_audit.tui.messages import VerdictRecorded
from arb_audit.tui.screens import (
    EvidenceScreen,
    HelpScreen,
    OverrideModal,
    RunScreen,
    RunsScreen,
    VerdictScreen,
)
from arb_audit.tui.session import ReviewSession
from arb_audit.tui.widgets import CodeView, FieldTable, RunsTable
from arb_audit.verdicts import chain_break, load_verdicts
from tests.audit_records import complete_report
from tests.test_cli import run_cli
from tests.tui.conftest import KEY

SIZE = (120, 36)


def _summary(app: ReviewApp) -> str:
    return str(app.screen.query_one("#summary", Static).render())


async def test_the_runs_list_filters_sorts_and_says_n_of_m(study: Path) -> None:
    app = ReviewApp(ReviewSession.open(study, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert _summary(app).startswith("6 runs · 0 reviewed by ann · order: needs review")
        assert screen.shown[-1] == "/runs/f"  # could not be audited: last
        await pilot.press("slash", *"task:alfworld", "enter")
        assert sorted(screen.shown) == ["/runs/d", "/runs/e"]
        assert _summary(app).startswith("2 of 6 runs")
        assert app.screen.query_one(RunsTable).row_count == 2
        await pilot.press("escape")
        assert _summary(app).startswith("6 runs") and len(screen.shown) == 6
        await pilot.press("slash", *"colour:red", "enter")
        assert "no filter key 'colour'" in _summary(app)
        await pilot.press("escape", "s")
        assert screen.sort_name == "run" and screen.shown == sorted(screen.shown)
        await pilot.press("s", "s")
        assert screen.sort_name == "best score"
        await pilot.press("n")
        assert screen.sort_name == "needs review"


async def test_a_reviewer_walks_a_run_its_evidence_and_a_diff(run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        run = app.screen
        assert isinstance(run, RunScreen) and run.run_key == KEY
        facts = str(run.query_one("#facts", Static).render())
        assert "SFT→GRPO(online)" in facts and "score_up+intended" in facts
        code_at = next(i for i, item in enumerate(run.items) if item.kind == "code")
        await pilot.press(*["down"] * code_at, "enter")
        evidence = app.screen
        assert isinstance(evidence, EvidenceScreen) and evidence.item.kind == "code"
        assert evidence.diff_pair is None
        await pilot.press("n")
        assert evidence.index == code_at + 1
        await pilot.press("p")
        assert evidence.index == code_at
        if evidence.item.pointer.path == "code/grpo_env.py":
            await pilot.press("d")
            assert evidence.diff_pair == (0, 1)
            await pilot.press("d")
            assert evidence.diff_pair is None
        await pilot.press("escape", "escape")
        assert isinstance(app.screen, RunsScreen)


async def test_verdicts_are_recorded_from_the_keyboard_and_survive_a_restart(run_store: Path) -> None:
    seen: list[Message] = []
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    async with app.run_test(size=SIZE, message_hook=seen.append) as pilot:
        await pilot.press("enter", "v")
        assert isinstance(app.screen, VerdictScreen)
        await pilot.press("a")  # route: agree
        await pilot.press("e", *"stages look right", "enter", "a")  # chain: agree, with a note
        await pilot.press("o")  # failure: override
        assert isinstance(app.screen, OverrideModal)
        await pilot.press("home", "down", "down", "enter")  # the third failure mode
        await pilot.press("o", "escape")  # quadrant: a cancelled override records nothing
        await pilot.press("escape", "escape")
        assert "1 reviewed by ann" in _summary(app)
        assert app.screen.query_one(RunsTable).row_at(0)[0] == "✓"
    recorded = [m for m in seen if isinstance(m, VerdictRecorded)]
    assert [(m.field, m.value) for m in recorded] == [
        ("route", "COMPOSITE"),
        ("chain", "SFT→GRPO(online)"),
        ("failure", "reward_data_design_failure"),
    ]
    again = ReviewSession.open(run_store, "ann")
    rows = again.ledger.select("field", "value", "analyzer", "note", "reviewer").rows()
    assert rows == [
        ("route", "COMPOSITE", "COMPOSITE", "", "ann"),
        ("chain", "SFT→GRPO(online)", "SFT→GRPO(online)", "stages look right", "ann"),
        ("failure", "reward_data_design_failure", "none", "", "ann"),
    ]
    code, out, _ = run_cli("verify", str(run_store))
    assert code == 0 and "verdicts hold" in out


async def test_a_chain_is_typed_and_checked(run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter", "v", "down", "o")
        modal = app.screen
        assert isinstance(modal, OverrideModal)
        box = modal.query_one(Input)
        box.value = "SFT -> BANANA"
        await pilot.press("enter")
        assert "'BANANA' is not a stage" in str(modal.query_one("#override-problem", Static).render())
        box.value = "SFT -> GRPO"
        await pilot.press("enter")
        assert isinstance(app.screen, VerdictScreen)
    assert ReviewSession.open(run_store, "ann").ledger["value"].to_list() == ["SFT→GRPO"]


async def test_blind_review_hides_the_analyzer_until_the_reviewer_rules(run_store: Path) -> None:
    ReviewSession.open(run_store, "ann").record(KEY, "failure", "none")
    app = ReviewApp(ReviewSession.open(run_store, "bob", blind=True))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        facts = str(app.screen.query_one("#facts", Static).render())
        assert "SFT→GRPO" not in facts and "score_up+intended" not in facts and "blind review" in facts
        claims = {item.claim for item in app.screen.items}  # type: ignore[attr-defined]
        assert all(c.startswith("(blind") for c in claims)
        await pilot.press("v")
        table = app.screen.query_one(FieldTable)

        def row(name: str) -> list[str]:
            return list(table.row_at(FIELDS.index(name)))

        assert row("failure")[1:] == ["(hidden until you rule)", "", "", "(hidden until you rule)"]
        await pilot.press("down", "down", "a")  # agreeing is not possible unseen
        assert ReviewSession.open(run_store, "bob").ledger.filter(pl.col("reviewer") == "bob").is_empty()
        await pilot.press("o", "home", "end", "enter")  # bob's own value: the last failure mode
        assert row("failure")[1] == "none" and "ann: none" in row("failure")[4]
        await pilot.press("escape")
        facts = str(app.screen.query_one("#facts", Static).render())
        assert "failure  none\n" in facts and "SFT→GRPO" not in facts
    with RunStore.open(run_store, read_only=True) as store:
        assert chain_break(load_verdicts(store)) is None


async def test_help_lists_the_keys_and_closes(study: Path) -> None:
    app = ReviewApp(ReviewSession.open(study, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_the_evidence_screen_shows_commands_and_tensor_tables(run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        kinds = [item.kind for item in app.screen.items]  # type: ignore[attr-defined]
        await pilot.press(*["down"] * kinds.index("command"), "enter")
        evidence = app.screen
        assert isinstance(evidence, EvidenceScreen)
        assert evidence.query_one(CodeView).text.startswith("$ python code/sft.py")
        await pilot.press(*["n"] * ((kinds.index("artifact") - kinds.index("command")) % len(kinds)))
        assert evidence.item.kind == "artifact"
        tensors = evidence.query_one("#tensors", DataTable)
        assert tensors.display and tensors.row_count > 5
        assert str(tensors.get_row_at(0)[0]) == "compared against"


async def test_a_blind_list_hides_the_analyzer_labels_until_ruled_on(study: Path) -> None:
    session = ReviewSession.open(study, "ann", blind=True)
    session.record("/runs/d", "failure", "regression")
    app = ReviewApp(session)
    async with app.run_test(size=SIZE) as pilot:
        table = app.screen.query_one(RunsTable)
        row = table.row("/runs/d")
        assert row[0] == "✓" and row[5:] == ("·", "static_shortcut_without_transfer", "·", "·")
        assert table.row("/runs/a")[5:] == ("·", "·", "·", "·")
        session.record("/runs/b", "chain", "SFT→GRPO")  # a chain tells its route: still hidden
        app.screen.refresh_list()  # type: ignore[attr-defined]
        assert table.row("/runs/b")[5] == "·"
        session.record("/runs/b", "route", "COMPOSITE")
        app.screen.refresh_list()  # type: ignore[attr-defined]
        assert table.row("/runs/b")[5] == "SFT→GRPO"
        await pilot.press("s", "s", "s", "s")
        assert app.screen.sort_name == "needs review"  # type: ignore[attr-defined]


def test_review_says_why_it_cannot_open(tmp_path: Path, study: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli("review", str(tmp_path / "empty"), "--reviewer", "ann")
    assert code == 2 and "no supported run format" in err
    monkeypatch.delenv("ARB_AUDIT_REVIEWER", raising=False)
    monkeypatch.setattr("getpass.getuser", lambda: "")
    code, _, err = run_cli("review", str(study))
    assert code == 2 and "who is reviewing?" in err


async def test_a_cited_range_past_the_end_of_the_file_highlights_only_its_lines(run_store: Path) -> None:
    app = ReviewApp(ReviewSession.open(run_store, "ann"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        view = CodeView()
        await app.screen.mount(view)
        view.show_code("a = 1\nb = 2\n", "x.py", (2, 10**9))  # an agent's audit may say anything
        await pilot.pause()
        assert "❱ 2 b = 2" in view.text and len(view.lines) <= 3


def test_the_facts_show_the_failure_then_its_downstream_effects(study: Path) -> None:
    screen = RunScreen(ReviewSession.open(study, "ann"))
    screen.run_key = "/runs/a"
    screen.report = complete_report(
        {"failure": {"mode": "early_coding_failure", "downstream": ["timeout_no_submission"], "evidence": []}}
    )
    assert "early_coding_failure → timeout_no_submission" in str(screen.facts())


async def test_the_desk_lets_go_of_what_it_held_when_it_exits(study: Path) -> None:
    """The frozen objects and the store's DuckDB instance (hundreds of MB of address space each)."""
    session = ReviewSession.open(study, "ann")
    async with ReviewApp(session).run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert session.host.running and gc.get_freeze_count() > 0
    assert not session.host.running and gc.get_freeze_count() == 0


def test_review_exits_non_zero_when_the_desk_fails(study: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the wheel once lacked app.tcss: Textual printed the error and the command still exited 0
    monkeypatch.setattr(ReviewApp, "CSS_PATH", "no-such-stylesheet.tcss")
    code, out, err = run_cli("review", str(study), "--reviewer", "ann")
    assert code != 0, (out, err)
    assert "no-such-stylesheet.tcss" in out + err
