"""The audit as one self-contained HTML page: inert agent text, code at its revision, in a real browser."""

from __future__ import annotations

import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

import arb_audit
from arb_audit.html_report import render_html
from arb_audit.schema import AuditReport
from tests.audit_records import complete_audit
from tests.browser import chromium, dump_dom, needs_chromium
from tests.test_cli import run_cli

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "reference"
HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\x1b[2J"
VOID = {"meta", "br", "img", "input", "link", "hr"}


class Tags(HTMLParser):
    """Collects the tags a page opens, and whether every one it opens is closed in order."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []
        self.stack: list[str] = []
        self.balanced = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.opened.append(tag)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.opened.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.balanced = False


def _tags(page: str) -> Tags:
    parser = Tags()
    parser.feed(page)
    parser.close()
    return parser


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, AuditReport]:
    root = tmp_path_factory.mktemp("html")
    for name in ("sft_grpo", "base"):
        shutil.copytree(REFERENCE / name, root / name, ignore=shutil.ignore_patterns(".arb-audit"))
    target = root / "sft_grpo.html"
    code, _, err = run_cli(str(root / "sft_grpo" / "recording"), "--json", "--html", str(target))
    assert code == 0 and f"wrote {target}" in err
    return target, arb_audit.audit(root / "sft_grpo" / "recording")


def test_the_page_stands_alone_and_runs_nothing(page: tuple[Path, AuditReport]) -> None:
    text = page[0].read_text(encoding="utf-8")
    tags = _tags(text)
    assert tags.balanced and "script" not in tags.opened
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "http://" not in text and "https://" not in text  # nothing to fetch
    assert len(text) < 1_000_000


def test_the_page_shows_the_verdict_and_the_code_at_its_revision(page: tuple[Path, AuditReport]) -> None:
    text, report = page[0].read_text(encoding="utf-8"), page[1]
    assert report.route.chain_text is not None and report.route.chain_text in text
    assert f"evidence {report.route.strength}" in text and (report.quadrant.cell or "") in text
    # the GRPO step's evidence shows grpo_env.py at the cited revision with the cited line marked
    assert '<span class="hit">' in text and "loss.backward()" in text
    assert "<svg" in text and text.count("<circle") >= len(report.submissions)


def test_agent_text_is_escaped_everywhere() -> None:
    report = AuditReport.model_validate(
        complete_audit(
            {
                "run": {"run_id": HOSTILE, "task": HOSTILE, "scaffold": HOSTILE},
                "submissions": [
                    {
                        "seq": 1,
                        "status": "error",
                        "score": None,
                        "requested_at": None,
                        "completed_at": None,
                        "model_path": HOSTILE,
                        "artifact_id": None,
                        "artifact_path": None,
                        "harness_id": None,
                        "error": HOSTILE,
                        "elapsed_s": None,
                        "gpu": None,
                        "baseline_score": None,
                        "duplicate_of": None,
                        "evidence": [{"kind": "submission", "submission_seq": 1, "excerpt": HOSTILE}],
                    }
                ],
                "failure": {"mode": None, "reason": HOSTILE},
                "flags": [{"flag": "external_api", "message": HOSTILE}],
                "problems": [{"path": HOSTILE, "message": HOSTILE}],
            }
        )
    )
    text = render_html(report)
    tags = _tags(text)
    assert tags.balanced and "script" not in tags.opened and "img" not in tags.opened
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "onerror=alert(2)" in text  # shown, as text


@needs_chromium
def test_a_real_browser_renders_it(page: tuple[Path, AuditReport], tmp_path: Path) -> None:
    dom = dump_dom(page[0], tmp_path / "profile")
    assert page[1].run.run_id in dom and "How the best submission was made" in dom
    shot = tmp_path / "page.png"
    chromium(tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,1600", page[0].as_uri())
    assert shot.stat().st_size > 10_000


def test_code_evidence_keeps_its_diff_against_the_previous_version_closed(
    page: tuple[Path, AuditReport],
) -> None:
    text = page[0].read_text(encoding="utf-8")
    # grpo_env.py at the cited revision, against its version before: one import line renamed
    assert "<details><summary>diff against the previous version (" in text  # a closed details
    assert '<span class="del">-from arb_audit.runner.reference.tasks import KeyRoom, keyroom_splits' in text
    assert (
        '<span class="add">+from arb_audit.runner.reference.tasks import KeyRoom, keyroom_split</span>'
        in text
    )


def test_a_command_shows_the_head_and_tail_of_its_output_without_terminal_escapes() -> None:
    output = "\x1b[32mepoch 0\x1b[0m\r\n" + "\n".join(f"epoch {i}" for i in range(1, 60)) + "\nDONE\x07"
    command = {
        "seq": 1,
        "command": "python train.py",
        "started_at": None,
        "ended_at": None,
        "exit_code": 0,
        "error": None,
        "finished": True,
        "tool": "Bash",
        "cwd": None,
        "revision_seq": None,
        "output_excerpt": output,
        "evidence": {"kind": "command", "command_seq": 1},
    }
    text = render_html(AuditReport.model_validate(complete_audit({"commands": [command]})))
    assert "<pre class='head'>epoch 0\nepoch 1\n" in text and "\x1b" not in text
    assert "<details><summary>41 more lines</summary><pre>epoch 10\n" in text
    assert "<pre class='tail'>epoch 51\n" in text and "DONE\u2407</pre>" in text
