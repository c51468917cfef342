"""What a run's files say beside its header is typed fields, kept by the run store and read back.

An older store kept the same facts as an untyped bag (``runs.extra``, ``reported_iterations.fields``):
its keys read into the typed fields, and a value that does not read as its field's type is left out and
said, never misread.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import get_type_hints

import pytest
from pydantic import ValidationError

from arb_audit.evidence import Evidence
from arb_audit.model import (
    RUN_FACTS,
    AgentLogFacts,
    AutoRLBenchFacts,
    BaselineReset,
    EvalLog,
    ExternalVerdict,
    FinalCheck,
    HarnessAccount,
    HarnessError,
    LedgerCheck,
    LedgerMismatch,
    PipelineTotals,
    PostTrainBenchFacts,
    PromptExcerpt,
    RecordingFacts,
    ReportedIteration,
    RunInfo,
    RunRecord,
    StderrLog,
    TrainingTrace,
    TranscriptCompaction,
    TranscriptHistory,
    TranscriptSession,
    TranscriptSummary,
    read_run_facts,
    run_facts_json,
)
from arb_audit.schema import Run
from arb_audit.store import RunStore

T = datetime(2026, 3, 10, 2, 0, tzinfo=UTC)


def _transcript() -> TranscriptSummary:
    return TranscriptSummary(
        path="agent.jsonl",
        format="claude_code",
        lossy=False,
        missing=[],
        sessions=[TranscriptSession(1, "s1", "claude", "/workspace", 1, "success", None, 0.5)],
        lines=10,
        tool_calls=4,
        commands=2,
        file_edit_calls=1,
        reads=1,
        compactions=[TranscriptCompaction(7, 1, "auto")],
        unknown_events={"odd": 2},
        non_json_lines=0,
        cut_off=None,
        workspace_roots=["/workspace"],
        history=TranscriptHistory(1, 1, 0, 0, [], []),
        final_check=FinalCheck("code", ["train.py"], [], []),
    )


def _every_fact() -> RunInfo:
    return RunInfo(
        "autorl_bench:gsm8k/r1",
        "autorl_bench",
        "/runs/r1",
        agent_exit_code=0,
        agent_timed_out=False,
        interrupted_by="SIGTERM",
        budget_used=0.5,
        artifacts_in_layout=False,
        file_times_kept=True,
        ledger_sources=["run.log"],
        baseline_resets=[BaselineReset(70.0, "set again", [Evidence("log", path="run.log", line=3)])],
        harness_errors=[HarnessError("agent", "agent.jsonl", 4, "Invalid API key")],
        training_traces=[TrainingTrace("task/out/trainer_state.json", "written by a trainer")],
        ledger_check=LedgerCheck([LedgerMismatch("ledger", "submission 2", "recomputed")], ["no anchor"]),
        harness_account=HarnessAccount("results.csv", 2, success=True, best_score=68.9),
        transcript=_transcript(),
        posttrainbench=PostTrainBenchFacts(
            method="claude_10h",
            agent="claude",
            gpus=1,
            cluster_id=7,
            prompt=PromptExcerpt(10, "Train", "Train a model"),
            diagnostics={"exit_code": "0"},
            metrics={"accuracy": 0.5},
            final_evals=[EvalLog("final_eval.txt", "done", None)],
            stderr=[StderrLog("error.log", False, False)],
            external_verdicts=[
                ExternalVerdict(
                    "judge_result.json", "judge_result", None, False, "contamination", False, True, "no"
                )
            ],
            layout="pipeline",
        ),
        autorl_bench=AutoRLBenchFacts(
            harness_summary={"best": "68.9"},
            run_log_lines=40,
            agent_log=AgentLogFacts("codex", {}, {"elapsed": "00:50:01"}, 0, 3, 12),
            harness_metrics={"score_trajectory": [60.1, 66.4]},
            pipeline_results=PipelineTotals("gsm8k", None, 68.9, 2, 100.0, 1.82, 4000),
        ),
        recording=RecordingFacts(["codex", "exec"], None),
    )


def test_every_fact_is_a_field_the_store_keeps(tmp_path: Path) -> None:
    run = _every_fact()
    assert all(getattr(run, name) is not None for name in RUN_FACTS)
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.save_record(RunRecord(run=run), None)
        back = store.load_record(run.run_id)
    assert all(getattr(back.run, name) == getattr(run, name) for name in RUN_FACTS)
    assert back.problems == []


def test_the_report_shows_each_fact_through_the_same_records() -> None:
    run = _every_fact()
    header = {
        "run_id": run.run_id,
        "format": run.source_format,
        "source_path": run.source_path,
        **dict.fromkeys(("task", "level", "scaffold", "driver", "mode", "base_model", "base_score")),
        **dict.fromkeys(("budget_s", "started_at", "agent_launched_at", "ended_at", "workspace_path")),
        **dict.fromkeys(("utc_offset_s", "store_path", "revisions_path")),
        "analyzer_version": "x",
    }
    facts = {name: getattr(run, name) for name in RUN_FACTS if name != "harness_account"}
    shown = Run.model_validate({**header, **facts})
    assert Run.model_validate_json(shown.model_dump_json()) == shown
    assert shown.posttrainbench == run.posttrainbench and shown.transcript == run.transcript
    with pytest.raises(ValidationError, match="agent_log"):
        Run.model_validate({**header, "agent_log": {"cli_exit": 0}})  # the old bag's key: refused


OLD_BAG = {
    "agent_exit_code": 0,
    "agent_timed_out": False,
    "agent": ["codex", "exec"],
    "agent_error": None,
    "interrupted_by": None,
    "harness_summary": {"best": "68.9"},
    "run_log_lines": 40,
    "agent_log": {
        "title": "codex",
        "header": {},
        "diagnostics": {"elapsed": "00:50:01"},
        "cli_exit": 0,
        "json_event_lines": 3,
        "lines": 12,
    },
    "harness_metrics": {"score_trajectory": [60.1, 66.4]},
    "ledger_sources": ["run.log", "scores.json"],
    "file_times_kept": True,
    "baseline_resets": [{"baseline": 70.0, "seen": "set again", "evidence": [{"kind": "log", "line": 3}]}],
    "transcript": {
        **json.loads(
            json.dumps(run_facts_json(RunInfo("r", "f", "/", transcript=_transcript()))["transcript"])
        ),
    },
}
"""``runs.extra`` as arb-audit kept it before the facts were typed: one bag, format facts at its top."""


def _store_with_bag(tmp_path: Path, bag: object) -> Path:
    path = tmp_path / "old.duckdb"
    with RunStore.open(path) as store:
        store.save_record(RunRecord(run=RunInfo("recorded:t/r", "recorded", "/r")), None)
        store.con.execute("UPDATE runs SET extra = ?", [json.dumps(bag)])
    return path


def test_an_older_stores_bag_of_facts_reads_into_the_typed_fields(tmp_path: Path) -> None:
    with RunStore.open(_store_with_bag(tmp_path, OLD_BAG)) as store:
        back = store.load_record("recorded:t/r")
    run = back.run
    assert (run.agent_exit_code, run.agent_timed_out, run.interrupted_by) == (0, False, None)
    assert run.recording == RecordingFacts(["codex", "exec"], None)
    assert run.autorl_bench is not None and run.autorl_bench.agent_log is not None
    assert run.autorl_bench.agent_log.diagnostics == {"elapsed": "00:50:01"}
    assert run.autorl_bench.harness_metrics == {"score_trajectory": [60.1, 66.4]}
    assert run.baseline_resets == [BaselineReset(70.0, "set again", [Evidence("log", line=3)])]
    assert run.transcript == _transcript() and run.file_times_kept is True
    assert back.problems == []


def test_a_posttrainbench_bag_moves_its_top_level_facts_into_its_part() -> None:
    facts, unread = read_run_facts(
        {
            "method": "claude_10h",
            "agent": "claude",
            "posttrainbench_run_id": "r7",
            "posttrainbench": {"layout": "pipeline"},
        }
    )
    assert unread == []
    assert facts["posttrainbench"] == PostTrainBenchFacts(
        method="claude_10h", agent="claude", run_id="r7", layout="pipeline"
    )


def test_a_kept_fact_that_does_not_read_is_left_out_and_said(tmp_path: Path) -> None:
    bag = {"agent_exit_code": 3, "agent_timed_out": "maybe", "surprise": 1}
    with RunStore.open(_store_with_bag(tmp_path, bag)) as store:
        back = store.load_record("recorded:t/r")
    assert back.run.agent_exit_code == 3 and back.run.agent_timed_out is None  # not said, never misread
    [problem] = back.problems
    assert "agent_timed_out" in problem.message and "surprise (no such fact)" in problem.message


def test_an_older_stores_iteration_fields_read_into_the_typed_fields(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    it = ReportedIteration("reports/summary.md", 1, improvement=1.0, labelled={"config": "lr=1"})
    with RunStore.open(path) as store:
        store.save_record(RunRecord(run=RunInfo("r", "autorl_bench", "/r"), reports=[it]), None)
        assert store.load_record("r").reports == [it]
        old = {"improvement": 3.7, "best": 66.4, "config": "lr=2e-5", "agent_tokens": "many", "odd": 1}
        store.con.execute("UPDATE reported_iterations SET fields = ?", [json.dumps(old)])
        [back] = store.load_record("r").reports
    assert (back.improvement, back.best, back.agent_tokens) == (3.7, 66.4, None)
    assert back.labelled == {"config": "lr=2e-5"}


def test_the_reports_run_holds_each_fact_as_the_collectors_type_it() -> None:
    """schema.Run's facts are RunInfo's, typed by the same records: the two cannot drift apart."""
    typed = get_type_hints(RunInfo)
    shown = {name: field for name, field in Run.model_fields.items() if name in RUN_FACTS}
    assert set(shown) == set(RUN_FACTS)
    for name, field in shown.items():
        if name != "harness_account":  # the audit shows the account with where it disagrees
            assert field.annotation == typed[name], name
            assert field.description, name
