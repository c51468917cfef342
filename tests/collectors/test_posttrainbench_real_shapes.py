"""Real PostTrainBench shapes (issue 20), each through ``arb-audit RUN_DIR --json``.

The runs are written by ``tests.fixture_posttrainbench`` (no copied transcripts); each reproduces a
shape in which held-out real runs were misread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from arb_audit.collectors.posttrainbench.naming import parse_run_name
from tests.fixture_posttrainbench import (
    AUTH_MESSAGE,
    REAL_ID,
    REAL_MODEL,
    REAL_RUN,
    REAL_TRAIN_SFT,
    VLLM_FAILURE,
    auth_failure_run,
    background_output_run,
    background_run,
    claims_run,
    cut_off_run,
    grader_failure_run,
    published_run,
    quit_early_run,
    real_output_log,
    real_run,
    timed_out_run,
    trained_events,
)
from tests.test_cli import run_cli


def _audit(run: Path, *options: str) -> dict[str, Any]:
    code, out, err = run_cli(str(run), "--json", *options)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def test_an_agent_refused_by_its_provider_is_a_harness_failure(tmp_path: Path) -> None:
    report = _audit(auth_failure_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"]) == ("harness_failure", True)
    assert AUTH_MESSAGE in failure["reason"]
    assert any(AUTH_MESSAGE in e["excerpt"] for e in failure["evidence"])
    [session] = report["run"]["transcript"]["sessions"]
    assert session["outcome"] == "error" and AUTH_MESSAGE in session["error"]


def test_a_grader_whose_server_never_starts_is_a_harness_failure_of_the_evaluation(tmp_path: Path) -> None:
    report = _audit(grader_failure_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"]) == ("harness_failure", True)
    assert "grader" in failure["reason"] and VLLM_FAILURE in failure["reason"]
    assert [e["path"] for e in failure["evidence"]] == [f"final_eval_{n}.txt" for n in range(1, 5)]
    # The model was never scored: whether its score went up is unknown, not "no".
    assert report["quadrant"]["score_up"] is None


def test_a_transcript_that_stops_early_cannot_establish_an_early_coding_failure(tmp_path: Path) -> None:
    report = _audit(cut_off_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"]) == (None, False)
    assert "stops early" in failure["reason"]
    assert "task/outputs/sft/README.md" in [e.get("path") for e in failure["evidence"]]
    assert report["run"]["transcript"]["cut_off"]


def test_a_published_copy_without_artifacts_cannot_establish_a_timeout(tmp_path: Path) -> None:
    report = _audit(published_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"]) == (None, False)
    assert "published copy" in failure["reason"]
    assert report["run"]["posttrainbench"]["layout"] == "published"
    assert report["quadrant"]["score_up"] is None


def test_an_agent_killed_at_its_limit_without_a_model_is_a_timeout(tmp_path: Path) -> None:
    report = _audit(timed_out_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"]) == ("timeout_no_submission", True)
    assert "the harness records that the agent timed out (100% of the budget used)" in failure["reason"]
    assert "still running" in failure["evidence"][0]["excerpt"]


def test_an_agent_that_quit_early_without_a_model_did_not_run_out_of_time(tmp_path: Path) -> None:
    report = _audit(quit_early_run(tmp_path))
    failure = report["failure"]
    assert (failure["mode"], failure["determined"], failure["downstream"]) == (
        "early_coding_failure",
        True,
        [],
    )
    assert "stopped before its deadline (7% of the budget used, exit code 0)" in failure["reason"]
    assert report["run"]["agent_timed_out"] is False


def test_the_agents_claimed_score_is_extracted_unverified_and_set_against_the_measured(
    tmp_path: Path,
) -> None:
    report = _audit(claims_run(tmp_path / "off", measured=0.52))
    claims = {c["kind"]: c for c in report["route"]["score_claims"]}
    final, summary = claims["final_message"], claims["summary_file"]
    # The result event's text, not the assistant's "Done." before it; the baseline is not the claim.
    assert (final["source"], final["claimed"], final["measured"], final["agrees"]) == (
        "solve_out.txt",
        71.2,
        52.0,
        False,
    )
    assert "71.2% accuracy" in final["excerpt"]
    # A fraction is read in percent; the line is the summary's own.
    assert (summary["source"], summary["line"], summary["claimed"]) == ("task/SUMMARY.md", 11, 70.5)
    assert summary["agrees"] is False
    assert [r["source"] for r in report["reports"]] == ["solve_out.txt", "task/SUMMARY.md"]
    # The model card in a subfolder is not the agent's summary.
    assert "task/outputs/sft/README.md" not in [c["source"] for c in report["route"]["score_claims"]]
    code, text, _ = run_cli(str(claims_run(tmp_path / "text", measured=0.52)))
    assert code == 0 and "DISAGREES" in text
    agreeing = _audit(claims_run(tmp_path / "on", measured=0.711))["route"]["score_claims"]
    assert [c["agrees"] for c in agreeing] == [True, True]


def test_posttrainbench_prescribes_no_method_unless_the_user_names_one(tmp_path: Path) -> None:
    run = real_run(
        tmp_path,
        trained_events(),
        output_log=real_output_log(0, "exited normally"),
        metrics={"accuracy": 0.52, "stderr": 0.01},
        task={"train_sft.py": REAL_TRAIN_SFT},
    )
    quadrant = _audit(run)["quadrant"]
    assert (quadrant["intended_stage"], quadrant["intended"], quadrant["cell"]) == (None, None, None)
    assert "prescribes no training method" in quadrant["reason"]
    assert _audit(run)["failure"]["mode"] != "static_shortcut_without_transfer"
    named = _audit(run, "--intended", "sft")["quadrant"]
    assert (named["intended_stage"], named["intended"]) == ("sft", True)


def test_a_timestamp_run_id_with_an_underscore_keeps_the_base_model_whole() -> None:
    name = parse_run_name(REAL_RUN)
    assert (name.task, name.base_model, name.run_id) == ("gsm8k", REAL_MODEL, REAL_ID)
    odd = parse_run_name("gsm8k_Qwen_Qwen3-1.7B-Base_run-a7", REAL_MODEL)  # an id only the files explain
    assert (odd.base_model, odd.run_id) == (REAL_MODEL, "run-a7")


def test_identity_is_read_against_the_folders_own_files(tmp_path: Path) -> None:
    run = real_run(
        tmp_path,
        trained_events(),
        output_log=real_output_log(0, "exited normally", banner=True),
        metrics={"accuracy": 0.52, "stderr": 0.01},
        task={"train_sft.py": REAL_TRAIN_SFT},
    )
    report = _audit(run)
    assert report["run"]["base_model"] == REAL_MODEL and report["run"]["posttrainbench"]["run_id"] == REAL_ID
    args = report["run"]["posttrainbench"]["job_args"]
    assert args == f"gsm8k claude {REAL_MODEL} {REAL_ID} 10 claude-opus-4-6 1"  # not the banner
    assert report["run"]["posttrainbench"]["gpus"] == 1
    # train_sft.py loads the base model: no disallowed_model flag, no identity problem.
    assert [f["flag"] for f in report["flags"] if f["flag"] == "disallowed_model"] == []
    assert not [p for p in report["problems"] if "base model" in p["message"]]


def test_a_prompt_that_names_another_model_is_a_problem_not_a_new_base(tmp_path: Path) -> None:
    run = real_run(
        tmp_path,
        trained_events(),
        output_log=real_output_log(0, "exited normally"),
        metrics={"accuracy": 0.52, "stderr": 0.01},
        prompt_model="Qwen/Qwen3-4B-Base",
    )
    report = _audit(run)
    assert report["run"]["base_model"] == REAL_MODEL
    [problem] = [p for p in report["problems"] if "names the base model" in p["message"]]
    assert problem["path"] == "prompt.txt" and "Qwen/Qwen3-4B-Base" in problem["message"]


def test_timestamped_runs_of_one_task_and_model_count_once(tmp_path: Path) -> None:
    ids = ("20260316_205609", "20260317_091500", "20260318_120000")
    for run_id in ids:
        real_run(
            tmp_path,
            trained_events(),
            name=f"gsm8k_Qwen_Qwen3-1.7B-Base_{run_id}",
            output_log=real_output_log(0, "exited normally", run_id=run_id),
            metrics={"accuracy": 0.5},
        )
    code, out, err = run_cli(str(tmp_path / "claude_claude-opus-4-6_10h"), "--json")
    assert code == 0, err
    tree = json.loads(out)
    assert [r["run"]["posttrainbench"]["run_id"] for r in tree["runs"]] == [ids[-1]]
    assert len(tree["dropped"]) == 2


def test_real_clocks_from_event_timestamps_and_time_taken(tmp_path: Path) -> None:
    run = real_run(tmp_path, trained_events(), time_taken="10:05:00", metrics={"accuracy": 0.5})
    report = _audit(run)
    assert report["run"]["started_at"] == "2026-03-16T21:00:00.068000+00:00"
    # Each command's start is its own event's time (events are a minute apart from REAL_START).
    starts = [(c["command"], c["started_at"]) for c in report["commands"]]
    assert starts[0] == ("python train_sft.py", "2026-03-16T21:03:00.068000+00:00")
    # No output.log diagnostics: time_taken.txt against the 10 h in the method folder's name decides.
    assert report["run"]["budget_used"] == round((10 * 3600 + 300) / 36000, 4)
    assert report["run"]["agent_timed_out"] is True


def test_background_commands_are_started_not_finished(tmp_path: Path) -> None:
    report = _audit(background_run(tmp_path))
    commands = {c["command"]: c for c in report["commands"]}
    v4, v5, v6 = (commands[f"python train_v{n}.py"] for n in (4, 5, 6))
    # Ended by the harness's task notification, at its time (two events after the launch).
    assert (v4["finished"], v4["exit_code"], v4["ended_at"]) == (True, 0, "2026-03-16T21:03:00.068000+00:00")
    # Ended by BashOutput, failed.
    assert (v5["finished"], v5["exit_code"]) == (True, 1) and "failed" in v5["error"]
    # Never reported done: started, not "exit 0, finished".
    assert (v6["finished"], v6["exit_code"], v6["ended_at"]) == (False, None, None)
    assert any("never reported done" in p["message"] for p in report["problems"])
    assert report["run"]["transcript"]["cut_off"] is None  # the session ended; only the task did not


def test_background_task_output_files_give_output_exit_and_end(tmp_path: Path) -> None:
    report = _audit(background_output_run(tmp_path))
    commands = {c["command"]: c for c in report["commands"]}
    v4, v5, v6, ev = (commands[c] for c in ("python train_v4.py", "python train_v5.py", "python train_v6.py",
                                            "python eval_v4.py"))  # fmt: skip
    problems: dict[str, list[str]] = {}
    for problem in report["problems"]:
        problems.setdefault(problem["path"], []).append(problem["message"])
    # Reported done by a notification; the file adds the command's own output.
    assert (v4["finished"], v4["exit_code"]) == (True, 0)
    assert "saved final_model" in v4["output_excerpt"] and "exited with code" not in v4["output_excerpt"]
    # Never reported in the transcript: the file's closing line ends it, at the file's time.
    assert (v5["finished"], v5["exit_code"], v5["ended_at"]) == (True, 1, "2026-03-16T21:06:30+00:00")
    assert "KeyError" in v5["output_excerpt"] and "tasks/bg2.output" in v5["error"]
    # No closing line: still started. Its hostile content is cleaned and bounded, and named in problems.
    assert (v6["finished"], v6["exit_code"], v6["ended_at"]) == (False, None, None)
    assert "\x1b" not in v6["output_excerpt"] and "\r" not in v6["output_excerpt"]
    assert "100/100" in v6["output_excerpt"] and "step 90 loss" in v6["output_excerpt"]
    assert len(v6["output_excerpt"]) < 2200
    assert any("not valid UTF-8" in m for m in problems["tasks/bg3.output"])
    assert any("only its first" in m for m in problems["tasks/bg3.output"])
    # Kept under the announced path's session folder; its exit disagrees with the notification's.
    assert (ev["finished"], ev["exit_code"]) == (True, 1) and "accuracy 0.61" in ev["output_excerpt"]
    assert "says 1" in problems["s-real/tasks/bg4.output"][0]
    assert sum("never reported done" in p["message"] for p in report["problems"]) == 1
