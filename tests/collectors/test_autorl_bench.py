"""The AutoRL-Bench collector on whole run folders, good and bad."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from arb_audit.analyzer.ledger_flags import baseline_reset_flags
from arb_audit.analyzer.overwrite_flags import mtime_overwritten_flags
from arb_audit.collectors.autorl_bench import AutoRLBenchCollector
from arb_audit.collectors.base import CollectOptions
from arb_audit.model import RunRecord

MakeRun = Callable[[str], Path]


def collect(run: Path, **options: object) -> RunRecord:
    git_dir = run.parent / "revisions.git"
    return AutoRLBenchCollector().collect(run, revisions_git=git_dir, options=CollectOptions(**options))  # type: ignore[arg-type]


def messages(record: RunRecord) -> list[str]:
    return [f"{p.path}: {p.message}" for p in record.problems]


def test_improving_run_is_read_whole(make_run: MakeRun) -> None:
    run = make_run("improves")
    record = collect(run)
    info = record.run
    assert info.run_id == "autorl_bench:gsm8k/20260310T101500_codex"
    assert (info.task, info.scaffold, info.driver, info.base_model) == (
        "gsm8k",
        "codex",
        "gpt-5.2",
        "Qwen/Qwen2.5-1.5B",
    )
    assert info.base_score == 62.7 and info.budget_s == 3600
    assert info.utc_offset_s == 8 * 3600
    assert info.agent_launched_at == datetime(2026, 3, 10, 2, 15, 4, tzinfo=UTC)
    assert info.started_at == datetime(2026, 3, 10, 2, 15, 2, tzinfo=UTC)
    assert info.autorl_bench is not None and (log := info.autorl_bench.agent_log) is not None
    assert log.diagnostics["elapsed"] == "00:50:01"
    assert log.diagnostics["gpu_memory"] == "0, 81559 MiB, 120 MiB"
    assert log.cli_exit == 0 and log.json_event_lines == 3
    assert (info.autorl_bench.harness_metrics or {})["score_trajectory"] == [60.1, 66.4, 68.9]
    assert [(s.seq, s.status, s.score, s.artifact_path) for s in record.submissions] == [
        (1, "scored", 60.1, "output/v1"),
        (2, "scored", 66.4, "output/v2"),
        (3, "scored", 68.9, "output/v3"),
    ]
    assert [(a.path, a.kind, a.parent_ref, a.n_files) for a in record.artifacts] == [
        ("output/v1", "full", "Qwen/Qwen2.5-1.5B", 2),
        ("output/v2", "full", "Qwen/Qwen2.5-1.5B", 2),
        ("output/v3", "full", "Qwen/Qwen2.5-1.5B", 2),
    ]
    assert [f.path for f in record.revisions[-1].files] == ["README.md", "train.py"]
    # agent.jsonl: train.py written by a here-document, patched, rewritten; then the final code/ tree.
    assert [r.trigger for r in record.revisions] == ["transcript-edit"] * 3 + ["final"]
    assert [(c.command.split("\n")[0][:20], c.exit_code) for c in record.commands][2:4] == [
        ("python code/train.py", 1),
        ("python code/train.py", 0),
    ]
    transcript = record.run.transcript
    assert transcript is not None and transcript.final_check is not None
    assert transcript.final_check.same == ["train.py"]
    assert {(r.source, r.number) for r in record.reports} == {
        ("reports/summary.md", 1),
        ("reports/summary.md", 2),
        ("reports/summary.jsonl", 1),
        ("reports/summary.jsonl", 2),
    }
    assert record.flags == []
    assert record.problems == []


def test_messy_run_keeps_every_attempt_and_raises_flags(make_run: MakeRun) -> None:
    record = collect(make_run("messy"))
    assert [s.status for s in record.submissions] == [
        "scored",
        "duplicate",
        "rejected",
        "error",
        "error",
        "scored",
    ]
    assert record.submissions[5].artifact_path == "output/v3"  # absolute path of the run machine, mapped
    assert record.submissions[1].duplicate_of == 1
    assert record.submissions[5].requested_at is not None
    assert record.submissions[5].elapsed_s == 170.0
    # the collector reports the facts; the analyzer raises the flags from them
    assert record.flags == [] and record.run.file_times_kept is True
    overwritten = [f.message.split(" ")[0] for f in mtime_overwritten_flags(record)]
    assert overwritten == ["output/v1"]
    (probing,) = baseline_reset_flags(record)  # one reset, seen in both files
    assert probing.flag == "grader_probing"
    assert [e.path for e in probing.evidence] == ["run.log", "scores.json"]
    assert [it.train_type for it in record.reports] == ["SFT", "GRPO"]


def test_run_with_no_valid_submission(make_run: MakeRun) -> None:
    record = collect(make_run("no_valid"))
    assert [s.status for s in record.submissions] == ["rejected", "error", "error"]
    assert record.run.agent_exit_code == -9
    assert record.run.autorl_bench is not None and record.run.autorl_bench.pipeline_results is not None
    assert record.run.autorl_bench.pipeline_results.total_agent_cost == 1.82
    assert [it.source for it in record.reports] == ["pipeline_results.json"] * 2


def test_results_csv_row_in_either_schema(make_run: MakeRun, tmp_path: Path) -> None:
    run = make_run("improves")
    new = tmp_path / "results.csv"
    new.write_text(
        "run_id,timestamp,task,agent,driver_model,base_model,baseline,best_score,improvement,"
        "submissions,duration_s,success,workspace\n20260310T101500,2026-03-10 10:15:00,gsm8k,codex,"
        f"gpt-5.2,Qwen/Qwen2.5-1.5B,62.7,68.9,6.2,3,3004,True,/w/gsm8k/{run.name}\n"
    )
    account = collect(run, results_csv=new).run.harness_account
    assert account is not None and account.success is True
    old = tmp_path / "old.csv"
    old.write_text(
        "run_id,timestamp,task,agent,base_model,baseline,best_score,improvement,submissions,"
        "duration_s,success,workspace\nx,t,gsm8k,codex,gpt-5.2,Qwen/Qwen2.5-1.5B,62.7,68.9,6.2,3,"
        f"3004,True,/w/gsm8k/{run.name}\n"
    )
    record = collect(run, results_csv=old)
    assert record.run.harness_account is not None and record.run.harness_account.driver_model == "gpt-5.2"
    assert any("13 values under a 12-column header" in m for m in messages(record))
    missing = tmp_path / "other.csv"
    missing.write_text(new.read_text().replace(run.name, "someone-else").replace("20260310T101500,", "y,"))
    assert any("has no row for the run folder" in m for m in messages(collect(run, results_csv=missing)))


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "scores.json: is missing: recorded scores come from run.log alone"),
        (b"", "scores.json: is empty"),
        (b'[{"submission_id": 1, "score": 60.1', "scores.json: is truncated"),
        (b"<html>not json</html>", "scores.json: is not valid JSON"),
        (b'{"submission_id": 1}', "scores.json: holds a JSON object, not a list"),
        (
            b'[1, {"submission_id": "x", "score": "high", "timestamp": 3}]',
            "scores.json: entries that are not objects (skipped): 1 (first: entry 1, found 1)",
        ),
        (b"\xff\xfe[]", "scores.json: is not UTF-8"),
    ],
)
def test_bad_scores_json_is_reported_and_the_log_still_counts(
    make_run: MakeRun, content: bytes | None, expected: str
) -> None:
    run = make_run("improves")
    if content is None:
        (run / "scores.json").unlink()
    else:
        (run / "scores.json").write_bytes(content)
    record = collect(run)
    assert any(m.startswith(expected) for m in messages(record)), messages(record)
    assert [s.status for s in record.submissions] == ["scored", "scored", "scored"]
    assert [s.score for s in record.submissions] == [60.1, 66.4, 68.9]


def test_symlinks_out_of_the_folder_are_never_followed(make_run: MakeRun, tmp_path: Path) -> None:
    run = make_run("improves")
    secret = tmp_path / "secret.py"
    secret.write_text("API_KEY = 'do not read'\n")
    (run / "code" / "leak.py").symlink_to(secret)
    outside_scores = tmp_path / "scores.json"
    shutil.move(run / "scores.json", outside_scores)
    (run / "scores.json").symlink_to(outside_scores)
    shutil.rmtree(run / "output" / "v3")
    (run / "output" / "v3").symlink_to(tmp_path)
    record = collect(run)
    leak = next(f for f in record.revisions[-1].files if f.path == "leak.py")
    assert leak.note == f"symlink to {str(secret)!r} (not followed)"
    assert any(
        m.startswith("scores.json: leads out of the run folder through a symlink") for m in messages(record)
    )
    v3 = next(a for a in record.artifacts if a.path == "output/v3")
    assert v3.n_files == 0 and "not followed" in (v3.note or "")


def test_hostile_log_noise_and_foreign_lines(make_run: MakeRun) -> None:
    run = make_run("improves")
    original = (run / "run.log").read_bytes()
    noise = b"\x00\xff garbage " * 5000 + b"\n" + b"[trainer] step 10 loss=nan\n" * 1000
    (run / "run.log").write_bytes(noise + original)
    record = collect(run)
    assert [s.score for s in record.submissions] == [60.1, 66.4, 68.9]
    problems = messages(record)
    assert any("not valid UTF-8" in m for m in problems)
    assert any("1,001 line(s) are neither" in m for m in problems)


def test_submitted_path_outside_the_run_is_reported(make_run: MakeRun) -> None:
    run = make_run("improves")
    scores = json.loads((run / "scores.json").read_text())
    scores[0]["model_path"] = "/etc/passwd"
    (run / "scores.json").write_text(json.dumps(scores))
    record = collect(run)
    assert record.submissions[0].artifact_path is None
    assert any("'/etc/passwd' lies outside the run folder" in m for m in messages(record))


def test_copied_folder_with_fresh_file_times_does_not_cry_overwrite(make_run: MakeRun) -> None:
    run = make_run("messy")
    now = datetime.now().timestamp()
    for path in run.rglob("*"):
        if not path.is_symlink():
            os.utime(path, (now, now))
    record = collect(run)
    assert record.run.file_times_kept is False and mtime_overwritten_flags(record) == []
    assert any("file times postdate the run" in m for m in messages(record))


def test_empty_and_foreign_folders_are_not_detected(tmp_path: Path) -> None:
    collector = AutoRLBenchCollector()
    assert collector.detect(tmp_path) == 0.0
    (tmp_path / "solve_out.txt").write_text("PostTrainBench run\n")
    (tmp_path / "metrics.json").write_text("{}")
    assert collector.detect(tmp_path) == 0.0


def test_missing_everything_but_run_meta_still_collects(tmp_path: Path) -> None:
    run = tmp_path / "gsm8k" / "20260310T101500_codex"
    run.mkdir(parents=True)
    (run / "run_meta.json").write_text('{"start_time": 1773108902, "timeout_s": "3600"}')
    record = collect(run)
    assert record.submissions == []
    assert record.run.budget_s is None
    assert record.run.task == "gsm8k" and record.run.scaffold == "codex"
    problems = messages(record)
    assert "run_meta.json: `timeout_s` is '3600', not a duration in seconds; ignored" in problems
    assert any(m.startswith("scores.json: is missing, and so is run.log") for m in problems)
    assert any(m.startswith("code: is missing") for m in problems)


def test_a_built_in_task_is_described_from_the_benchmarks_data_a_generated_one_is_not(tmp_path: Path) -> None:
    described = {}
    for task in ("alfworld", "smith-sorting"):
        run = tmp_path / task / "20260310T101500_codex"
        run.mkdir(parents=True)
        (run / "run_meta.json").write_text('{"start_time": 1773108902, "timeout_s": 3600}')
        described[task] = collect(run).run.task_description
    alfworld = described["alfworld"]
    assert alfworld is not None and (alfworld.level, alfworld.n_eval, alfworld.intended) == (
        3,
        134,
        "online_rl",
    )
    assert alfworld.source == "AutoRL-Bench's built-in tasks"
    assert described["smith-sorting"] is None  # the run says nothing of a generated task
