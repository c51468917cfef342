"""The assembled audit: what the ledger decides, and what it honestly leaves undetermined."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from arb_audit.analyzer.audit import build_audit
from arb_audit.analyzer.routes import Routes, StageStep
from arb_audit.analyzer.run_analysis import RouteAnalysis
from arb_audit.collectors.autorl_bench.tasks import describe_task
from arb_audit.model import ReportedIteration, RunInfo, RunRecord, Submission, TaskDescription


def _audit_json(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The audit as ``--json`` prints it: what these tests read."""
    return build_audit(*args, **kwargs).to_json()


T = datetime(2026, 3, 10, 2, 30, tzinfo=UTC)


def record(task: str, base: float | None, *scores: float) -> RunRecord:
    """An AutoRL-Bench run of ``task``, described as its collector describes it."""
    run = RunInfo(
        "r",
        "autorl_bench",
        "/r",
        task=task,
        task_description=describe_task(task),
        base_score=base,
        utc_offset_s=8 * 3600,
    )
    subs = [Submission(i, "scored", f"output/v{i}", score=s, completed_at=T) for i, s in enumerate(scores, 1)]
    return RunRecord(run=run, submissions=subs)


@pytest.mark.parametrize(
    ("task", "base", "scores", "mode", "score_up"),
    [
        ("gsm8k", 62.7, (60.0, 68.9), None, True),  # +6.2 > 2.75
        ("gsm8k", 62.7, (64.0,), None, False),  # +1.3 within 2.75
        ("gsm8k", 62.7, (50.0, 55.0), "regression", False),  # -7.7 below -2.75
        ("alfworld", 5.97, (12.69,), None, False),  # +6.72 within 8.64
        ("smith-x", 1.0, (90.0,), None, None),  # unknown task: no noise threshold
        ("gsm8k", None, (50.0,), None, None),  # unknown base
    ],
)
def test_failure_and_quadrant_from_the_ledger(
    task: str, base: float | None, scores: tuple[float, ...], mode: str | None, score_up: bool | None
) -> None:
    report = _audit_json(record(task, base, *scores))
    assert report["failure"]["mode"] == mode
    assert report["failure"]["determined"] is (mode is not None)
    assert report["quadrant"]["score_up"] is score_up
    assert report["quadrant"]["intended"] is None and report["quadrant"]["cell"] is None
    expected_stage = {"gsm8k": "policy_gradient", "alfworld": "online_rl"}.get(task)
    assert report["quadrant"]["intended_stage"] == expected_stage


def test_no_valid_submission_when_the_agent_timed_out_is_timeout_no_submission() -> None:
    rec = record("gsm8k", 62.7)
    rec.submissions = [
        Submission(1, "error", "output/v1", error="Model not found"),
        Submission(2, "rejected", None, error="ValueError: Invalid model_path"),
    ]
    rec.run.agent_timed_out = True
    report = _audit_json(rec)
    assert (report["failure"]["mode"], report["failure"]["determined"]) == ("timeout_no_submission", True)
    assert "timed out" in report["failure"]["reason"]
    assert [e["submission_seq"] for e in report["failure"]["evidence"]] == [1, 2]
    assert report["best"] is None and report["quadrant"]["score_up"] is False


def test_no_valid_submission_and_nothing_about_the_budget_is_undetermined() -> None:
    rec = record("gsm8k", 62.7)
    rec.submissions = [Submission(1, "error", "output/v1", error="Model not found")]
    failure = _audit_json(rec)["failure"]
    assert (failure["mode"], failure["determined"]) == (None, False)
    assert "nothing shows whether the budget ran out (no budget" in failure["reason"]
    assert [e["submission_seq"] for e in failure["evidence"]] == [1]


def test_a_timeout_exit_code_shows_the_budget_ran_out() -> None:
    rec = record("gsm8k", 62.7)
    rec.run.agent_exit_code = 124
    assert _audit_json(rec)["failure"]["mode"] == "timeout_no_submission"


def test_noise_override_and_times_in_the_run_clock() -> None:
    report = _audit_json(record("gsm8k", 62.7, 64.0), noise=1.0)
    assert report["quadrant"]["score_up"] is True and report["quadrant"]["noise_threshold"] == 1.0
    assert report["submissions"][0]["completed_at"] == "2026-03-10T10:30:00+08:00"


def test_route_section_says_what_it_cannot_tell_and_lists_claims() -> None:
    rec = record("gsm8k", 62.7, 64.0)
    rec.reports = [
        ReportedIteration("summary.md", 1, train_type="SFT"),
        ReportedIteration("summary.jsonl", 1, train_type="SFT"),
        ReportedIteration("summary.md", 2, train_type="GRPO"),
    ]
    route = _audit_json(rec)["route"]
    assert route["status"] == "not_analyzed" and route["best_label"] is None and route["adopted"] == []
    assert route["agent_claims"] == [
        {"train_type": "SFT", "iterations": [1]},
        {"train_type": "GRPO", "iterations": [2]},
    ]
    assert any("route of the best submission" in line for line in route["cannot_tell"])


@pytest.mark.parametrize(
    ("sources", "interrupted_by", "reason"),
    [
        ([], None, "no submission record"),
        (["run.log"], "SIGTERM", "interrupted (SIGTERM)"),
    ],
)
def test_no_valid_submission_is_not_a_timeout_when_the_end_was_not_seen(
    sources: list[str], interrupted_by: str | None, reason: str
) -> None:
    rec = record("gsm8k", 62.7)
    rec.run.ledger_sources, rec.run.interrupted_by = sources, interrupted_by
    report = _audit_json(rec)
    assert report["failure"]["mode"] is None and reason in report["failure"]["reason"]
    assert report["quadrant"]["score_up"] is None


def test_the_same_content_graded_again_and_again_is_grader_probing() -> None:
    run = record("gsm8k", 60.0, 61.0, 60.5, 61.2, 70.0)
    for s, content in zip(run.submissions, ["a" * 64, "a" * 64, "a" * 64, "b" * 64], strict=True):
        s.artifact_id = content
    flags = _audit_json(run)["flags"]
    assert [f["flag"] for f in flags] == ["grader_probing"]
    assert flags[0]["message"] == "the same model content was submitted 3 times (submissions 1, 2, 3)"
    assert [e["submission_seq"] for e in flags[0]["evidence"]] == [1, 2, 3]
    run.submissions[2].artifact_id = "c" * 64
    assert _audit_json(run)["flags"] == []


def _lineage_record(parent_score: float, child_score: float) -> tuple[RunRecord, RouteAnalysis]:
    run = RunInfo("r", "autorl_bench", "/r", task="gsm8k", base_model="Qwen/Qwen3-4B", base_score=40.0)
    subs = [
        Submission(
            1, "scored", "outputs/sft", score=parent_score, completed_at=T, artifact_path="outputs/sft"
        ),
        Submission(
            2, "scored", "outputs/grpo", score=child_score, completed_at=T, artifact_path="outputs/grpo"
        ),
    ]
    step = StageStep("grpo", "outputs/grpo", "outputs/sft", strength="supported").to_stage()
    sft = StageStep("sft", "outputs/sft", "Qwen/Qwen3-4B", strength="supported").to_stage()
    routes = Routes(chain=[sft], lineage={"outputs/sft": [sft], "outputs/grpo": [sft, step]})
    return RunRecord(run=run, submissions=subs), RouteAnalysis(routes)


def test_a_stage_scoring_below_its_parent_beyond_noise_is_a_training_collapse() -> None:
    from arb_audit.analyzer.failure import decide_failure

    record, routes = _lineage_record(parent_score=55.0, child_score=45.0)
    failure = decide_failure(record, record.submissions[0], 2.75, routes, "policy_gradient")
    assert failure.mode == "none"  # the run still improved (55 over 40): it recovered
    assert "recovered from training_collapse" in failure.reason
    record.run.base_score = 56.0  # now it did not: the collapse is the first failure
    failure = decide_failure(record, record.submissions[0], 2.75, routes, "policy_gradient")
    assert failure.mode == "training_collapse"
    assert [e.submission_seq for e in failure.evidence[:2]] == [2, 1]
    assert "outputs/grpo scored 45.0; its parent outputs/sft scored 55.0" in failure.evidence[0].excerpt
    record, routes = _lineage_record(parent_score=55.0, child_score=53.0)  # within noise
    assert (
        decide_failure(record, record.submissions[0], 2.75, routes, "policy_gradient").mode
        != "training_collapse"
    )


def test_no_valid_submission_says_how_much_of_the_budget_was_used() -> None:
    run = RunInfo("r", "autorl_bench", "/r", task="gsm8k", budget_s=3600.0, started_at=T)
    run.ended_at = datetime(2026, 3, 10, 3, 28, tzinfo=UTC)  # 58 of 60 minutes: at the deadline
    rec = RunRecord(run=run, submissions=[Submission(1, "error", "output/v1", error="no such model")])
    failure = _audit_json(rec)["failure"]
    assert failure["mode"] == "timeout_no_submission" and "97% of the budget used" in failure["reason"]


def test_an_agent_that_stopped_early_without_a_submission_did_not_run_out_of_time() -> None:
    """TAXONOMY.md: the pipeline never produced a trained artifact that scored; the budget did not end."""
    run = RunInfo("r", "autorl_bench", "/r", task="gsm8k", budget_s=3600.0, started_at=T)
    run.ended_at = datetime(2026, 3, 10, 3, 0, tzinfo=UTC)  # 30 of 60 minutes
    run.agent_exit_code = 0
    rec = RunRecord(run=run, submissions=[Submission(1, "error", "output/v1", error="no such model")])
    failure = _audit_json(rec)["failure"]
    assert (failure["mode"], failure["determined"]) == ("early_coding_failure", True)
    assert "stopped before its deadline (50% of the budget used, exit code 0)" in failure["reason"]


def test_the_task_is_read_from_the_run_record_never_looked_up_by_name() -> None:
    undescribed = record("gsm8k", 62.7, 70.0)
    undescribed.run.task_description = None  # a run that says nothing of its task
    report = _audit_json(undescribed)
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (None, None)
    assert (report["quadrant"]["score_up"], report["quadrant"]["intended_stage"]) == (None, None)
    renamed = record("any-name", 62.7, 70.0)
    renamed.run.task_description = TaskDescription("a test", level=2, n_eval=100, intended="dpo")
    report = _audit_json(renamed)
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (2, 10.0)
    assert (report["quadrant"]["score_up"], report["quadrant"]["intended_stage"]) == (False, "dpo")


def test_a_benchmark_that_prescribes_no_method_says_so_on_its_run() -> None:
    run = RunInfo(
        "toy:r",
        "toybench",  # a format the analyzer knows nothing of: the run record carries the fact
        "/r",
        task="t",
        task_description=TaskDescription("ToyBench", no_method="ToyBench prescribes no training method"),
    )
    report = _audit_json(RunRecord(run=run, submissions=[Submission(1, "scored", "out/v1", score=5.0)]))
    quadrant = report["quadrant"]
    assert (quadrant["intended_stage"], quadrant["intended"], quadrant["cell"]) == (None, None, None)
    assert quadrant["reason"].startswith("ToyBench prescribes no training method: no intended stage")
    named = _audit_json(RunRecord(run=run, submissions=[]), intended_stage="sft")
    assert (named["quadrant"]["intended_stage"], named["quadrant"]["intended"]) == ("sft", False)
