"""Process metrics, checked against values worked out by hand from the scenarios in tests/fixture_runs."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from arb_audit.analyzer.metrics import best_submission, compute_metrics
from arb_audit.collectors.autorl_bench import AutoRLBenchCollector
from arb_audit.collectors.base import CollectOptions
from arb_audit.model import RunInfo, RunRecord, Submission


def collect(run: Path) -> RunRecord:
    return AutoRLBenchCollector().collect(run, revisions_git=run.parent / "r.git", options=CollectOptions())


def test_messy_run_metrics_by_hand(make_run: Callable[[str], Path]) -> None:
    m = compute_metrics(collect(make_run("messy")))
    # 6 attempts: scored, duplicate, rejected, crashed, errored, scored
    assert (m.n_submissions, m.n_scored, m.n_errors, m.n_rejected, m.n_duplicates, m.n_zero_score) == (
        6,
        2,
        2,
        1,
        1,
        0,
    )
    assert m.valid_rate == round(2 / 6, 4)
    # launched 10:15:04; first valid completed 10:27:04 (asked at minute 10, 120 s evaluation)
    assert m.time_to_first_valid_s == 720.0
    assert m.time_to_best_s == 720.0  # 12.69 is never beaten (9.7 comes later)
    assert m.clock_origin == "agent_launch"
    # harness clock 10:15:02 -> end 11:05:04 over a 3600 s budget
    assert m.time_used_ratio == round(3002 / 3600, 4)
    assert m.best_improvement == round(12.69 - 5.97, 6)


def test_improving_run_metrics_by_hand(make_run: Callable[[str], Path]) -> None:
    m = compute_metrics(collect(make_run("improves")))
    assert (m.n_submissions, m.n_scored, m.valid_rate) == (3, 3, 1.0)
    assert m.time_to_first_valid_s == 10 * 60 + 80  # asked at minute 10, graded in 80 s
    assert m.time_to_best_s == 45 * 60 + 85
    assert m.best_improvement == round(68.9 - 62.7, 6)


def test_errors_are_not_zero_scores_and_ties_go_to_the_first() -> None:
    t = datetime(2026, 1, 1, tzinfo=UTC)
    subs = [
        Submission(1, "error", "a", score=0.0, completed_at=t),
        Submission(2, "scored", "b", score=0.0, completed_at=t + timedelta(seconds=10)),
        Submission(3, "scored", "c", score=4.0, completed_at=t + timedelta(seconds=20)),
        Submission(4, "scored", "d", score=4.0, completed_at=t + timedelta(seconds=30)),
        Submission(5, "duplicate", "d", score=4.0, completed_at=t + timedelta(seconds=40)),
    ]
    record = RunRecord(run=RunInfo("r", "x", "/r", started_at=t), submissions=subs)
    m = compute_metrics(record)
    assert (m.n_errors, m.n_zero_score, m.n_scored, m.n_duplicates) == (1, 1, 3, 1)
    assert best_submission(subs) is subs[2]
    assert m.clock_origin == "run_start" and m.time_to_first_valid_s == 10.0 and m.time_to_best_s == 20.0
    assert m.valid_rate == 0.6 and m.best_improvement is None and m.time_used_ratio is None


def test_no_attempt_at_all() -> None:
    m = compute_metrics(RunRecord(run=RunInfo("r", "x", "/r")))
    assert (m.n_submissions, m.valid_rate, m.time_to_first_valid_s, m.clock_origin) == (0, None, None, None)


def test_graded_order_decides_first_valid_and_ties() -> None:
    # B asked first but C was graded first (the evaluation lock is not first-come-first-served).
    t = datetime(2026, 1, 1, tzinfo=UTC)
    b = Submission(1, "scored", "b", score=5.0, requested_at=t, completed_at=t + timedelta(minutes=30))
    c = Submission(
        2,
        "scored",
        "c",
        score=5.0,
        requested_at=t + timedelta(minutes=1),
        completed_at=t + timedelta(minutes=25),
    )
    record = RunRecord(run=RunInfo("r", "x", "/r", agent_launched_at=t), submissions=[b, c])
    assert best_submission([b, c]) is c
    m = compute_metrics(record)
    assert m.time_to_first_valid_s == 1500.0 and m.time_to_best_s == 1500.0
