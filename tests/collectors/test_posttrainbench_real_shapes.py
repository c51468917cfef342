"""Real PostTrainBench shapes (issue 20), each through ``arb-audit RUN_DIR --json``.

The runs are written by ``tests.fixture_posttrainbench`` (no copied transcripts); each reproduces a
shape in which held-out real runs were misread.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixture_posttrainbench import (
    AUTH_MESSAGE,
    TRAIN_SFT,
    VLLM_FAILURE,
    auth_failure_run,
    cut_off_run,
    grader_failure_run,
    published_run,
    real_output_log,
    real_run,
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


def test_posttrainbench_prescribes_no_method_unless_the_user_names_one(tmp_path: Path) -> None:
    run = real_run(
        tmp_path,
        trained_events(),
        output_log=real_output_log(0, "exited normally"),
        metrics={"accuracy": 0.52, "stderr": 0.01},
        task={"train_sft.py": TRAIN_SFT},
    )
    quadrant = _audit(run)["quadrant"]
    assert (quadrant["intended_stage"], quadrant["intended"], quadrant["cell"]) == (None, None, None)
    assert "prescribes no training method" in quadrant["reason"]
    assert _audit(run)["failure"]["mode"] != "static_shortcut_without_transfer"
    named = _audit(run, "--intended", "sft")["quadrant"]
    assert (named["intended_stage"], named["intended"]) == ("sft", True)
