"""Agent text is inert on every screen: the bytes written for the readable report, ingest's progress
and the reviewer's desk hold none of the escape sequences or markup an agent planted (issue 21, item 5).

The run is written by the test with the hostile text in its task name, a code file's name, the paths
it submitted and a grader error; the report and ingest run in a subprocess, as a user runs them, and
their raw output is searched.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arb_audit.inert import inert, inert_block
from tests.fixture_runs import SCENARIOS, Attempt, write_run

MARKUP = "[bold red]x[/][link=javascript:alert(1)]y[/link]"
HOSTILE = (
    "\x1b]0;PWNED\x07"  # OSC: retitle the terminal
    "\x1b]52;c;aGk=\x07"  # OSC 52: write the clipboard
    "\x1b[2J\x1b[7;33m"  # CSI: clear the screen, reverse video
    "\x1bP1$qm\x1b\\"  # DCS ... ST
    "\x9b1;1H"  # C1 CSI, one byte
    "\u202eevil\u202c"  # bidi override
    "\u2028" + MARKUP
)
RAW = ["\x1b]", "\x1b[2J", "\x1b[7;33m", "\x1bP", "\x9b", "\x07", "\u202e", "\u2028"]
"""What must never reach the terminal as written (rich's own colour codes are not among them)."""


def _hostile_run(root: Path) -> Path:
    scenario = SCENARIOS["improves"]()
    name = HOSTILE.replace("/", "_")
    scenario = dataclasses.replace(
        scenario,
        task="gsm8k" + name,
        attempts=[
            *scenario.attempts,
            Attempt("crash", 47, f"output/{name}", error=f"grader said {HOSTILE}"),
        ],
        code={**scenario.code, f"code/{name}.py": "print('hi')\n"},
    )
    return write_run(scenario, root)


def _cli(*args: str, color: bool) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "COLUMNS": "400", "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    if color:
        env["FORCE_COLOR"] = "1"
    else:
        env["NO_COLOR"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "arb_audit", *args], capture_output=True, env=env, timeout=300, check=False
    )


def _assert_inert(raw: bytes) -> str:
    text = raw.decode("utf-8")
    for sequence in RAW:
        assert sequence not in text, f"{sequence!r} reached the terminal"
    assert "\x1b]8;" not in text  # no hyperlink made from [link=...]
    return text


def test_inert_escapes_every_control_and_bidi_character_and_keeps_markup_literal() -> None:
    shown = inert(HOSTILE)
    assert shown.isprintable()
    assert "\\x1b]0;PWNED\\x07" in shown and "\\x9b" in shown and "\\u202e" in shown and "\\u2028" in shown
    assert shown.endswith(MARKUP)  # markup is text: never parsed, so nothing to escape
    assert inert_block("a\tb\r\nc\rd\x1b") == "a\tb\nc\\x0dd\\x1b"


@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_the_readable_report_writes_no_planted_sequence(tmp_path: Path, color: bool) -> None:
    run = _hostile_run(tmp_path / "runs")
    result = _cli(str(run), color=color)
    assert result.returncode == 0, result.stderr.decode()
    out = _assert_inert(result.stdout)
    _assert_inert(result.stderr)
    if not color:
        assert "\x1b" not in out
    assert "\\x1b]0;PWNED" in out and "\\u202e" in out  # shown, escaped
    assert MARKUP in out  # literally, not styled or linked
    assert "grader said" in out


def test_ingest_progress_writes_no_planted_sequence(tmp_path: Path) -> None:
    run = _hostile_run(tmp_path / "runs")
    planted = tmp_path / "runs" / f"not-a-run{HOSTILE.replace('/', '_')}"
    planted.write_text("a file where a run folder was expected")
    result = _cli("ingest", str(run), str(planted), "--study", str(tmp_path / "study.duckdb"), color=True)
    out = _assert_inert(result.stdout)
    err = _assert_inert(result.stderr)
    assert "1 run(s): 1 audited" in out
    assert "not a folder" in err and "\\x1b]52;c;" in err and MARKUP.replace("/", "_") in err


async def test_the_desk_shows_planted_sequences_escaped_on_every_screen(tmp_path: Path) -> None:
    from textual.widgets import Static

    from arb_audit.pipeline import audit
    from arb_audit.tui.app import ReviewApp
    from arb_audit.tui.screens import EvidenceScreen, RunScreen
    from arb_audit.tui.session import ReviewSession
    from arb_audit.tui.widgets import CodeView

    run = _hostile_run(tmp_path / "runs")
    store = Path(audit(run).to_json()["run"]["store_path"])
    app = ReviewApp(ReviewSession.open(store, "ann"))
    async with app.run_test(size=(160, 40)) as pilot:
        _assert_inert(app.export_screenshot().encode())
        await pilot.press("enter")
        screen = app.screen
        assert isinstance(screen, RunScreen)
        header = _assert_inert(str(screen.query_one("#run-header", Static).render()).encode())
        assert "gsm8k\\x1b]0;PWNED" in header
        _assert_inert(app.export_screenshot().encode())
        assert screen.items
        await pilot.press("enter")
        evidence = app.screen
        assert isinstance(evidence, EvidenceScreen)
        for _ in evidence.items:
            _assert_inert(str(evidence.query_one("#evidence-title", Static).render()).encode())
            _assert_inert(evidence.query_one(CodeView).text.encode())
            _assert_inert(app.export_screenshot().encode())
            await pilot.press("n")
        # a command's output, shown as text: escapes shown, markup literal
        view = evidence.query_one(CodeView)
        view.show_text(f"$ echo {HOSTILE}")
        await pilot.pause()
        shown = _assert_inert(view.text.encode())
        assert "\\x1b]52;c;aGk=\\x07" in shown and MARKUP in shown
        _assert_inert(app.export_screenshot().encode())
