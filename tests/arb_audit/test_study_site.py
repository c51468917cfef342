"""A study as a static site: the runs table filters, sorts and pages in the page, run text stays inert,
reviewers' verdicts sit beside the analyzer's values, and every run links to its own page."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arb_audit.schema import AuditReport
from arb_audit.store import RunStore
from arb_audit.study import row_from_audit, save_rows
from arb_audit.study_site import PAGE_ROWS, SCRIPT, page_name, write_site
from arb_audit.verdicts import Verdict, append_verdicts
from tests.audit_records import complete_report
from tests.browser import dump_dom, load, needs_chromium
from tests.taxonomy.study_cases import CASES
from tests.test_cli import run_cli

HOSTILE = (
    "</script><script>document.body.setAttribute('data-pwned','1')</script>"
    "<img src=x onerror=\"document.title='pwned'\"></textarea>javascript:alert(1)\x1b[31mred\x1b[0m"
)
COPIES = 42
"""Copies of the hard cases: 6 × 42 = 252 runs, three pages of the index."""


def _hostile_report() -> AuditReport:
    return complete_report(
        {
            "run": {"run_id": "arl:evil/" + HOSTILE, "task": "evil", "scaffold": HOSTILE, "driver": "x"},
            "best": {"seq": 1, "score": 99.5},
            "route": {"best_label": "SFT", "chain_text": "SFT"},
            "failure": {"mode": "none", "reason": HOSTILE},
        }
    )


def _study(path: Path) -> Path:
    rows = [
        row_from_audit(f"{key}/{copy:02d}", "fp", report, error, keys)
        for copy in range(COPIES)
        for key, report, error, keys in CASES
    ]
    rows.append(row_from_audit("/runs/evil/" + HOSTILE, "fp", _hostile_report(), None, {}))
    with RunStore.open(path) as store:
        save_rows(store, rows)
        append_verdicts(
            store,
            [
                Verdict("/runs/a/00", "arl:gsm8k/a", "route", "SFT", "ann", "SFT"),
                Verdict("/runs/a/00", "arl:gsm8k/a", "failure", "early_coding_failure", "bob", "none"),
                Verdict("/runs/d/00", "arl:alfworld/d_1", "flag:grader_probing", "no", "ann", "yes"),
            ],
        )
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    study = _study(root / "study.duckdb")
    code, _, err = run_cli("site", str(study), "-o", str(root / "site"))
    assert code == 0, err
    assert f"wrote {root / 'site' / 'index.html'}: {6 * COPIES + 1} runs, {5 * COPIES + 1} run pages" in err
    return root / "site"


def _payload(index: str) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="runs-data">(.*?)</script>', index, re.S)
    assert found is not None
    data: dict[str, Any] = json.loads(found[1])
    return data


class Scripts(HTMLParser):
    """Collects every script element of a page: its attributes and text."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._open: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self._open = dict(attrs)

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            self.scripts.append((self._open, data))
            self._open = None


def test_the_index_runs_only_its_own_script_and_holds_run_text_as_data(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    parser = Scripts()
    parser.feed(index)
    kinds = [attrs.get("type") for attrs, _ in parser.scripts]
    assert kinds == ["application/json", None]  # the rows (never executed), then our one script
    assert parser.scripts[1][1] == SCRIPT
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in index and "default-src 'none'" in index
    assert "http://" not in index and "https://" not in index
    rows = _payload(index)["rows"]
    evil = next(r for r in rows if r["task"] == "evil")
    assert evil["agent"].startswith(HOSTILE)  # kept whole, as data
    assert "</script>" not in parser.scripts[0][1] and "<img" not in index.split("runs-data")[1]


def test_every_audited_run_links_to_its_own_page(site: Path) -> None:
    rows = _payload((site / "index.html").read_text(encoding="utf-8"))["rows"]
    assert len(rows) == 6 * COPIES + 1
    linked = [r for r in rows if r["href"]]
    assert len(linked) == 5 * COPIES + 1  # the run that could not be audited has no page, but a note
    assert all(re.fullmatch(r"runs/[A-Za-z0-9._-]+\.html", r["href"]) for r in linked)
    assert all((site / r["href"]).is_file() for r in linked)
    unaudited = next(r for r in rows if not r["href"])
    assert unaudited["note"].startswith("not audited: ValueError")
    evil = next(r for r in rows if r["task"] == "evil")
    page = (site / evil["href"]).read_text(encoding="utf-8")
    assert "../index.html" in page and "<script" not in page and "&lt;/script&gt;" in page


def test_reviewers_verdicts_sit_beside_the_analyzers_values(site: Path) -> None:
    rows = _payload((site / "index.html").read_text(encoding="utf-8"))["rows"]
    first = next(r for r in rows if r["run"] == "arl:gsm8k/a" and r["verdicts"])
    assert first["verdicts"]["route"] == [["ann", "SFT", True]]
    assert first["verdicts"]["failure"] == [["bob", "early_coding_failure", False]]
    assert first["disputed"]
    flagged = next(r for r in rows if r["run"] == "arl:alfworld/d_1" and r["verdicts"])
    assert flagged["verdicts"]["flags"] == [["ann", "grader_probing no", False]]
    assert sum(1 for r in rows if r["verdicts"]) == 2


def test_page_names_are_safe_and_unique() -> None:
    names = {page_name(f"/runs/{HOSTILE}/{i}", HOSTILE) for i in range(50)}
    assert len(names) == 50
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+\.html", n) and len(n) < 90 for n in names)


def test_a_study_that_is_not_there_or_empty_is_refused(tmp_path: Path) -> None:
    code, _, err = run_cli("site", str(tmp_path / "none.duckdb"), "-o", str(tmp_path / "out"))
    assert code == 2 and "no such study" in err
    with RunStore.open(tmp_path / "empty.duckdb"):
        pass
    code, _, err = run_cli("site", str(tmp_path / "empty.duckdb"), "-o", str(tmp_path / "out"))
    assert code == 2 and "holds no ingested runs" in err


def _files(folder: Path) -> dict[str, bytes]:
    return {str(f.relative_to(folder)): f.read_bytes() for f in sorted(folder.rglob("*")) if f.is_file()}


def test_pages_written_by_worker_processes_are_those_written_here(tmp_path: Path) -> None:
    """The site is the same whether worker processes write its pages and draw its figures or not, a run
    whose stored audit does not read back included."""
    study = _study(tmp_path / "study.duckdb")
    old = row_from_audit("/runs/old", "fp", complete_report({"run": {"run_id": "arl:old/x"}}), None, {})
    old.report = json.dumps({"schema_version": 0, "made_by": "an older arb-audit"})
    with RunStore.open(study) as store:
        save_rows(store, [old])
    here = write_site(study, tmp_path / "here", jobs=1)
    workers = write_site(study, tmp_path / "workers", jobs=2)
    assert here == workers
    assert workers.pages == 5 * COPIES + 1 and workers.runs == 6 * COPIES + 2
    assert workers.skipped[0] == "/runs/old: its stored audit is of another schema (ingest again)"
    assert workers.figures and (tmp_path / "workers" / "figures" / f"{workers.figures[0]}.png").is_file()
    assert _files(tmp_path / "here") == _files(tmp_path / "workers")


def _body(dom: str) -> str:
    found = re.search(r'<tbody id="runs-body">(.*?)</tbody>', dom, re.S)
    assert found is not None, dom[-3000:]
    return found[1]


@pytest.mark.slow  # five browser starts
@needs_chromium
def test_the_browser_pages_sorts_and_filters_the_runs(site: Path, tmp_path: Path) -> None:
    dom = dump_dom(site / "index.html", tmp_path / "p1")
    assert f'data-rendered="{PAGE_ROWS}"' in dom
    assert f"runs 1–{PAGE_ROWS} of {6 * COPIES + 1} · page 1 of 3" in dom
    dom = dump_dom(site / "index.html", tmp_path / "p2", "sort=-best&page=3")
    assert f"runs 201–{6 * COPIES + 1} of {6 * COPIES + 1} · page 3 of 3" in dom
    dom = dump_dom(site / "index.html", tmp_path / "p3", "sort=-best")
    assert '<th id="col-best" aria-sort="descending">' in dom
    assert _body(dom).index("99.5") < _body(dom).index(">71<")  # the hostile run's 99.5 sorts first
    dom = dump_dom(site / "index.html", tmp_path / "p4", "failure=timeout_no_submission&q=alfworld")
    assert f"runs 1–{COPIES} of {COPIES} ({6 * COPIES + 1} in the study)" in dom
    dom = dump_dom(site / "index.html", tmp_path / "p5", "disputed=1")
    body = _body(dom)
    assert (
        "runs 1–2 of 2" in dom and "bob: early_coding_failure" in body and 'class="verdict differs"' in body
    )


@needs_chromium
def test_no_script_from_a_run_runs_in_the_browser(site: Path, tmp_path: Path) -> None:
    dom, console = load(site / "index.html", tmp_path / "p", "task=evil")
    assert console == []  # no refusal by the policy (figures included), no script error
    body = _body(dom)
    assert "runs 1–1 of 1" in dom
    assert "data-pwned" not in dom.split("<body", 1)[1].split(">", 1)[0]  # the body carries no mark
    assert "<title>arb-audit · study</title>" in dom
    assert "<img" not in body and "<script" not in body and "&lt;/script&gt;&lt;script&gt;" in body
