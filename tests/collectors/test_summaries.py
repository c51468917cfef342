"""The agent's self-reports in every form: three Markdown headings, two label languages, two JSON forms."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.autorl_bench.summaries import (
    read_jsonl,
    read_markdown,
    read_pipeline_results,
    read_reports,
)
from arb_audit.collectors.reading import RunFolder
from tests.fixture_runs import ATTEMPTS_EN, OPENHANDS_SUMMARY, PIPELINE_RESULTS, SKILL_JSONL, SKILL_SUMMARY_ZH

SKILL_EN = """\
# Run Summary
## Iteration 3 (2026-03-10 12:00, took 75s)
- **Status**: ❌ Failed (exit_code=137)
- **Score**: 0 | Improvement: -5 | Best: 9 (iter 2)
- **Training Type**: GRPO
- **Key Configuration**: lr=1e-6
- **Issues/Progress**: OOM while generating rollouts; failure_type=code_error_runtime
"""


def _folder(tmp_path: Path, files: dict[str, str]) -> RunFolder:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return RunFolder(tmp_path)


def test_skill_summary_in_chinese(tmp_path: Path) -> None:
    its = read_markdown(_folder(tmp_path, {"reports/summary.md": SKILL_SUMMARY_ZH}), "reports/summary.md")
    assert [(i.number, i.status, i.exit_code, i.score, i.train_type, i.duration_s) for i in its] == [
        (1, "success", 0, 60.1, "SFT", 540.0),
        (2, "success", 0, 66.4, "SFT", 600.0),
    ]
    assert its[0].reported_at == datetime(2026, 3, 10, 10, 25)
    assert its[1].improvement == 3.7 and its[1].best == 66.4
    assert its[1].labelled["config"] == "lr=2e-5, epochs=2, batch=8"
    assert "trainer.train()" in its[1].labelled["code_snippet"]


def test_skill_summary_in_english_with_failure_type(tmp_path: Path) -> None:
    (it,) = read_markdown(_folder(tmp_path, {"reports/summary.md": SKILL_EN}), "reports/summary.md")
    assert (it.number, it.status, it.exit_code, it.score, it.train_type, it.duration_s) == (
        3,
        "failed",
        137,
        0.0,
        "GRPO",
        75.0,
    )
    assert it.failure_type == "code_error_runtime"


def test_openhands_fallback_summary(tmp_path: Path) -> None:
    its = read_markdown(_folder(tmp_path, {"summary.md": OPENHANDS_SUMMARY}), "summary.md")
    assert [(i.number, i.status, i.exit_code, i.score, i.train_type) for i in its] == [
        (1, "success", None, 12.7, "SFT"),
        (2, "failed", 1, None, "GRPO"),
    ]
    assert its[0].labelled["model_path"] == "output/v1"
    assert its[1].reported_at == datetime(2026, 3, 10, 10, 52) and its[1].duration_s == 1200.0


def test_agents_md_attempts_in_english(tmp_path: Path) -> None:
    its = read_markdown(_folder(tmp_path, {"summary.md": ATTEMPTS_EN}), "summary.md")
    assert [(i.number, i.status, i.score, i.train_type, i.failure_type) for i in its] == [
        (1, "success", 14.0, "GRPO", None),
        (2, "failed", 0.0, "GRPO", "training_diverged"),
    ]
    assert its[0].labelled["next_step"] == "longer rollouts"


def test_jsonl_keeps_good_lines_and_reports_bad_ones(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"reports/summary.jsonl": SKILL_JSONL + "not json\n[1, 2]\n\n"})
    its = read_jsonl(folder)
    assert [(i.number, i.score, i.train_type, i.line) for i in its] == [
        (1, 60.1, "SFT", 1),
        (2, 66.4, "SFT", 2),
    ]
    assert folder.problems[0].message.startswith("2 line(s) are not iteration objects (first: line 3)")


def test_pipeline_results(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"pipeline_results.json": json.dumps(PIPELINE_RESULTS)})
    its, totals = read_pipeline_results(folder)
    assert [(i.number, i.status, i.exit_code, i.score, i.duration_s) for i in its] == [
        (1, "failed", 1, None, 310.2),
        (2, "success", 0, 0.0, 820.0),
    ]
    assert totals is not None and totals.total_agent_tokens == 412000 and its[0].agent_cost == 0.9


def test_malformed_pipeline_results_is_a_problem(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"pipeline_results.json": '{"iterations": [{"iteration": "one"}, 3]}'})
    its, _ = read_pipeline_results(folder)
    assert its == []
    assert [p.message for p in folder.problems] == [
        "iteration entry 1 has no integer `iteration`; skipped",
        "iteration entry 2 has no integer `iteration`; skipped",
    ]


def test_every_source_is_read_together(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {
            "reports/summary.md": SKILL_SUMMARY_ZH,
            "summary.md": ATTEMPTS_EN,
            "reports/summary.jsonl": SKILL_JSONL,
        },
    )
    its, _ = read_reports(folder)
    assert sorted({i.source for i in its}) == ["reports/summary.jsonl", "reports/summary.md", "summary.md"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=60),
            st.builds(lambda n, r: f"## Iteration {n} {r}", st.integers(0, 10**6), st.text(max_size=30)),
            st.builds(
                lambda k, v: f"- **{k}**: {v}",
                st.sampled_from(["状态", "Score", "训练类型", "Status", "x"]),
                st.text(max_size=40),
            ),
        ),
        max_size=25,
    )
)
def test_any_markdown_parses_without_crashing(tmp_path_factory, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("md")
    (folder / "summary.md").write_text("\n".join(lines), encoding="utf-8", errors="replace")
    for it in read_markdown(RunFolder(folder), "summary.md"):
        assert it.number >= 0
        assert all(len(v) <= 2000 for v in it.labelled.values())
