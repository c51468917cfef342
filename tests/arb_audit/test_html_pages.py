"""The audit pages of the bundled reference runs and of a hostile run folder, as Chromium shows them.

What a person would check: the route, the best score, an evidence pointer open at its code; and
that nothing a run wrote ran in the page (issue 23, item 4).
"""

from __future__ import annotations

import html
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from matplotlib.testing.compare import compare_images

import arb_audit
from tests.browser import chromium, load, needs_chromium
from tests.fixture_posttrainbench import TASK_DIR, _call, _init, _result, real_output_log, real_run
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "recording").is_dir())
PWN = "document.documentElement.setAttribute('data-pwned','yes')"
HOSTILE = (
    f'<script>{PWN}</script><img src=x onerror="{PWN}"></textarea><a href="javascript:{PWN}">x</a>'
    "\x1b]0;title\x07\x1b[31mred\x1b[0m"
)

pytestmark = [pytest.mark.slow, needs_chromium]


def _page(tmp_path: Path, run: Path) -> tuple[Path, str, list[str]]:
    page = tmp_path / "page.html"
    code, _, err = run_cli(str(run), "--html", str(page))
    assert code == 0, err
    dom, console = load(page, tmp_path / "profile")
    return page, dom, console


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_reference_page_shows_the_route_the_best_score_and_open_evidence(
    scenario: str, tmp_path: Path
) -> None:
    for needed in {scenario, "base"}:
        shutil.copytree(REFERENCE / needed, tmp_path / needed, ignore=shutil.ignore_patterns(".arb-audit"))
    run = tmp_path / scenario / "recording"
    _, dom, console = _page(tmp_path, run)
    report = arb_audit.audit(run)
    assert "How the best submission was made" in dom
    shown_route = report.route.chain_text or report.route.best_label  # a chain is shown as its chain
    if shown_route is not None:
        assert html.escape(shown_route, quote=False) in dom
    if report.best is not None and report.best.score is not None:
        assert f"{report.best.score:g}" in dom or f"{report.best.score:.2f}" in dom
    if report.route.chain:
        # the lineage's evidence is open: its pointer and the cited code are on the screen, not folded
        assert re.search(r"<details open=\"\"><summary>", dom)
    assert "data-pwned" not in dom and not [line for line in console if "Refused" in line or "Error" in line]


def _hostile_run(root: Path) -> Path:
    events: list[dict[str, Any] | str] = [
        _init(),
        _call("w1", "Write", file_path=f"{TASK_DIR}/train.py", content=f"# {HOSTILE}\nprint('{HOSTILE}')\n"),
        _result("w1", "ok"),
        _call("b1", "Bash", command=f"python train.py  # {HOSTILE}"),
        _result("b1", HOSTILE * 3),
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": HOSTILE},
    ]
    return real_run(root, events, output_log=real_output_log(0, "ok"))


def test_nothing_a_hostile_run_wrote_runs_in_its_page(tmp_path: Path) -> None:
    page, dom, console = _page(tmp_path, _hostile_run(tmp_path / "runs"))
    raw = page.read_text(encoding="utf-8")
    assert "<script>" not in raw.split("</head>", 1)[-1]  # no script element in the body at all
    assert 'data-pwned="yes"' not in dom  # neither the script nor the onerror handler ran
    assert not re.search(r'<a\s[^>]*href="javascript:', dom) and "\x1b" not in dom  # as text only
    assert "&lt;script&gt;" in raw  # the text is shown, as text
    assert not [line for line in console if "Uncaught" in line]


def test_the_reference_page_screenshot_is_what_docs_show(tmp_path: Path) -> None:
    """docs/reference_page.png, a screenshot of the sft_grpo page (UPDATE_FIGURES=1 rewrites it)."""
    for needed in ("sft_grpo", "base"):
        shutil.copytree(REFERENCE / needed, tmp_path / needed, ignore=shutil.ignore_patterns(".arb-audit"))
    page = tmp_path / "page.html"
    assert run_cli(str(tmp_path / "sft_grpo" / "recording"), "--html", str(page))[0] == 0
    shot = tmp_path / "page.png"
    chromium(
        tmp_path / "profile",
        f"--screenshot={shot}",
        "--window-size=1100,1400",
        "--hide-scrollbars",
        page.as_uri(),
    )
    expected = ROOT / "docs" / "reference_page.png"
    if os.environ.get("UPDATE_FIGURES"):
        expected.write_bytes(shot.read_bytes())
    assert compare_images(str(expected), str(shot), tol=4.0) is None
