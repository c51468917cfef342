"""Property tests: any JSON an agent (or a broken harness) writes is read without crashing."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.autorl_bench.agentlog import read_agent_log
from arb_audit.collectors.autorl_bench.metafiles import read_run_meta
from arb_audit.collectors.autorl_bench.scores import read_scores
from arb_audit.collectors.autorl_bench.summaries import read_pipeline_results
from arb_audit.collectors.reading import RunFolder
from arb_audit.model import PipelineTotals

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "submission_id": JSON,
        "timestamp": st.text(max_size=30) | JSON,
        "model_path": JSON,
        "score": JSON,
        "baseline_score": JSON,
        "elapsed_seconds": JSON,
        "error": JSON,
    },
)


@settings(max_examples=80, deadline=None)
@given(st.one_of(JSON, st.lists(ENTRY, max_size=6)))
def test_scores_json_of_any_shape(tmp_path_factory, data: object) -> None:  # type: ignore[no-untyped-def]
    folder_path = tmp_path_factory.mktemp("scores")
    (folder_path / "scores.json").write_text(json.dumps(data))
    folder = RunFolder(folder_path)
    entries = read_scores(folder)
    if not isinstance(data, list):
        assert entries is None and folder.problems
    else:
        assert entries is not None and len(entries) <= len(data)
        for e in entries:
            assert e.score is None or isinstance(e.score, float)


@settings(max_examples=60, deadline=None)
@given(JSON)
def test_run_meta_and_pipeline_results_of_any_shape(tmp_path_factory, data: object) -> None:  # type: ignore[no-untyped-def]
    folder_path = tmp_path_factory.mktemp("meta")
    for name in ("run_meta.json", "pipeline_results.json"):
        (folder_path / name).write_text(json.dumps(data))
    folder = RunFolder(folder_path)
    meta = read_run_meta(folder)
    assert meta is None or all(v is None or isinstance(v, int) for v in (meta.start_time, meta.end_time))
    iterations, totals = read_pipeline_results(folder)
    assert totals is None or isinstance(totals, PipelineTotals)
    assert all(isinstance(i.number, int) for i in iterations)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=50),
            st.sampled_from(
                [
                    "--- DIAGNOSTICS ---",
                    "--- END DIAGNOSTICS ---",
                    "exit_code: 1",
                    "  indented: x",
                    "=== X ===",
                    "Codex CLI exited with code: 124",
                    '{"type": "item.completed"}',
                    "Model: gpt-5.2",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_agent_log_of_any_text(tmp_path_factory, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    folder_path = tmp_path_factory.mktemp("agent")
    (folder_path / "agent.log").write_text("\n".join(lines), encoding="utf-8", errors="replace")
    log = read_agent_log(RunFolder(folder_path))
    assert log is not None and log.json_lines <= log.lines


def test_not_json_at_all_is_reported(tmp_path: Path) -> None:
    (tmp_path / "run_meta.json").write_text("start_time=5")
    folder = RunFolder(tmp_path)
    assert read_run_meta(folder) is None
    assert folder.problems[0].message.startswith("is not valid JSON")
