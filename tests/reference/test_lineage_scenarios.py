"""The reference runs that exercise lineage in time (issue 20, items 1 and 8): a backup restored over a
later training, and a training launched in the background that never finishes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arb_audit.pipeline import audit
from tests.reference.recordings import copy_out


def _steps(steps: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(s["kind"], s["artifact"], s["parent"]) for s in steps]


def test_a_restored_backup_is_the_first_trainings_model(tmp_path: Path) -> None:
    route = audit(copy_out("backup_restore", tmp_path)).to_json()["route"]
    sft, _, restore = route["chain"]
    assert _steps(route["chain"]) == [
        ("sft", sft["artifact"], "models/base"),
        ("copy", "output/bak", sft["artifact"]),
        ("copy", "output/v1", "output/bak"),
    ]
    # The SFT model's folder was trained over since: its version is named by the command that made it.
    assert sft["artifact"].startswith("output/v1@")
    assert restore["evidence"][0]["excerpt"] == "rm -rf output/v1 && cp -r output/bak output/v1"
    # The DPO model graded first keeps the lineage it was graded with.
    assert _steps(route["submission_lineages"]["1"]) == [
        ("sft", sft["artifact"], "models/base"),
        ("dpo", "output/v1", sft["artifact"]),
    ]


def test_a_background_training_never_reported_done_made_nothing(tmp_path: Path) -> None:
    report = audit(copy_out("background_unfinished", tmp_path)).to_json()
    [launched] = [c for c in report["commands"] if "grpo_env.py" in c["command"]]
    assert (launched["finished"], launched["exit_code"]) == (False, None)
    route = report["route"]
    [sft] = route["chain"]
    assert (sft["kind"], sft["artifact"], sft["parent"]) == ("sft", "output/v1", "models/base")
    assert sft["evidence"][0]["command_seq"] < launched["seq"]
    assert "ONLINE_RL" in route["attempted"] and route["adopted"] == ["SFT"]
