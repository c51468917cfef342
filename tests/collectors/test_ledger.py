"""The attempt ledger: run.log and scores.json merged, every kind of attempt kept apart."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from arb_audit.collectors.autorl_bench.ledger import build_ledger
from arb_audit.collectors.autorl_bench.runlog import SubmitEvent
from arb_audit.collectors.autorl_bench.scores import ScoreEntry
from arb_audit.collectors.clock import localize
from arb_audit.collectors.reading import RunFolder

T0 = datetime(2026, 3, 10, 10, 0, 0)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def entry(
    index: int,
    sid: int,
    minutes: float,
    elapsed: float,
    score: float,
    path: str,
    error: str | None = None,
    baseline: float = 5.0,
) -> ScoreEntry:
    return ScoreEntry(index, sid, at(minutes), path, score, baseline, score - baseline, elapsed, error)


def here(moment: datetime | None) -> datetime | None:
    return localize(moment, 3600)


def test_every_kind_of_attempt_in_arrival_order(tmp_path: Path) -> None:
    events = [
        SubmitEvent("started", 10, at(1), "", number=1, model_path="output/v1"),
        SubmitEvent("done", 11, at(2), "", number=1, score=12.0, best=12.0),
        SubmitEvent("cache_hit", 12, at(3), "", model_path="output/v1", score=12.0),
        SubmitEvent("invalid", 13, at(4), "", reason="ValueError: Invalid model_path"),
        SubmitEvent("started", 16, at(5), "", number=2, model_path="output/v2"),
        SubmitEvent("internal_error", 17, at(6), "", reason="OSError: disk full"),
        SubmitEvent("started", 20, at(7), "", number=2, model_path="output/v3"),
        SubmitEvent("done", 21, at(8), "", number=2, score=0.0, best=12.0),
        SubmitEvent("started", 22, at(9), "", number=3, model_path="output/v4"),
    ]
    entries = [
        entry(0, 1, 2, 60, 12.0, "output/v1"),
        entry(1, 2, 8, 60, 0.0, "output/v3", error="vLLM inference failed"),
    ]
    folder = RunFolder(tmp_path)
    ledger = build_ledger(events, entries, here, folder)
    assert [(s.seq, s.status, s.model_path, s.harness_id) for s in ledger] == [
        (1, "scored", "output/v1", 1),
        (2, "duplicate", "output/v1", None),
        (3, "rejected", None, None),
        (4, "error", "output/v2", 2),
        (5, "error", "output/v3", 2),
        (6, "error", "output/v4", 3),
    ]
    assert ledger[2].error == "ValueError: Invalid model_path"
    assert ledger[3].error == "OSError: disk full"
    assert ledger[4].error == "vLLM inference failed" and ledger[4].score == 0.0
    assert "still running when run.log ended" in (ledger[5].error or "")
    # request time is completion minus elapsed, in the run's local clock
    assert ledger[0].requested_at == here(at(1)) and ledger[0].completed_at == here(at(2))
    assert ledger[0].evidence[0].path == "scores.json" and ledger[0].evidence[1].line == 10
    assert folder.problems == []


def test_server_error_of_another_request_does_not_eat_an_evaluation(tmp_path: Path) -> None:
    events = [
        SubmitEvent("started", 1, at(1), "", number=1, model_path="output/v1"),
        SubmitEvent("internal_error", 2, at(2), "", reason="OSError: bad path"),
        SubmitEvent("done", 3, at(3), "", number=1, score=7.0, best=7.0),
    ]
    ledger = build_ledger(events, [entry(0, 1, 3, 120, 7.0, "output/v1")], here, RunFolder(tmp_path))
    assert [(s.status, s.error) for s in ledger] == [("scored", None), ("error", "OSError: bad path")]


def test_without_run_log_the_entries_make_the_ledger(tmp_path: Path) -> None:
    entries = [entry(0, 1, 5, 60, 1.0, "a"), entry(1, 2, 9, 60, 2.0, "b")]
    ledger = build_ledger([], entries, here, RunFolder(tmp_path))
    assert [(s.seq, s.status, s.score) for s in ledger] == [(1, "scored", 1.0), (2, "scored", 2.0)]


def test_without_scores_json_the_log_makes_the_ledger_and_disagreements_are_reported(tmp_path: Path) -> None:
    events = [
        SubmitEvent("started", 1, at(1), "", number=1, model_path="a"),
        SubmitEvent("done", 2, at(2), "", number=1, score=3.0, best=3.0),
    ]
    alone = build_ledger(events, [], here, RunFolder(tmp_path))
    assert [(s.status, s.score, s.requested_at) for s in alone] == [("scored", 3.0, here(at(1)))]
    folder = RunFolder(tmp_path)
    build_ledger(events, [entry(0, 1, 2, 60, 4.0, "b")], here, folder)
    messages = [p.message for p in folder.problems]
    assert any("says score 4.0 but run.log line 2 says 3.0" in m for m in messages)
    assert any("names 'b' but run.log line 1 names 'a'" in m for m in messages)


def test_a_queued_evaluation_starts_before_the_previous_done_is_logged(tmp_path: Path) -> None:
    # The lock is released before scores.json is saved and Done logged: B's Started can come first.
    events = [
        SubmitEvent("started", 1, at(1), "", number=1, model_path="a"),
        SubmitEvent("started", 2, at(3), "", number=2, model_path="b"),
        SubmitEvent("done", 3, at(3), "", number=1, score=5.0, best=5.0),
        SubmitEvent("done", 4, at(6), "", number=2, score=7.0, best=7.0),
    ]
    entries = [entry(0, 1, 3, 120, 5.0, "a"), entry(1, 2, 6, 240, 7.0, "b")]
    ledger = build_ledger(events, entries, here, RunFolder(tmp_path))
    assert [(s.status, s.model_path, s.score) for s in ledger] == [("scored", "a", 5.0), ("scored", "b", 7.0)]


def test_two_evaluations_that_raced_for_one_id_keep_both_results(tmp_path: Path) -> None:
    # B read scores.json before A saved: both are #1 and B's save overwrote A's entry.
    events = [
        SubmitEvent("started", 1, at(1), "", number=1, model_path="a"),
        SubmitEvent("started", 2, at(3), "", number=1, model_path="b"),
        SubmitEvent("done", 3, at(3), "", number=1, score=5.0, best=5.0),
        SubmitEvent("done", 4, at(6), "", number=1, score=7.0, best=7.0),
    ]
    folder = RunFolder(tmp_path)
    ledger = build_ledger(events, [entry(0, 1, 6, 180, 7.0, "b")], here, folder)
    assert [(s.status, s.model_path, s.score, bool(s.evidence[0].path == "scores.json")) for s in ledger] == [
        ("scored", "a", 5.0, False),
        ("scored", "b", 7.0, True),
    ]
    assert "the later save overwrote the earlier result" in folder.problems[0].message


def test_without_scores_json_an_evaluator_error_turns_a_zero_into_an_error(tmp_path: Path) -> None:
    events = [
        SubmitEvent("started", 1, at(1), "", number=1, model_path="a"),
        SubmitEvent("evaluator_note", 2, at(2), "OpenCompass failed: exit code 1"),
        SubmitEvent("done", 3, at(3), "", number=1, score=0.0, best=0.0),
        SubmitEvent("started", 4, at(4), "", number=1, model_path="b"),
        SubmitEvent("done", 5, at(5), "", number=1, score=0.0, best=0.0),
    ]
    ledger = build_ledger(events, [], here, RunFolder(tmp_path))
    assert [(s.status, s.score) for s in ledger] == [("error", 0.0), ("scored", 0.0)]
    assert ledger[0].error == "OpenCompass failed: exit code 1 (run.log; not in scores.json)"
