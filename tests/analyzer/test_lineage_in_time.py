"""Lineage resolved in time, not by name (issue 20, item 1): a path is a variable, each command that
trains into it, copies or moves onto it or deletes it gives it a new version, and a submitted artifact's
producer is the version the path held when it was graded. A command only makes what it finished making."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arb_audit.taxonomy.strength import weakest
from tests.analyzer.test_routes import BASE, HANDWRITTEN_SFT, _bash, _bash_failed, _run, _write
from tests.transcript_lines import claude_call, claude_result

SFT_INTO_FINAL = f"""\
from trl import SFTConfig, SFTTrainer

trainer = SFTTrainer(model="{BASE}", args=SFTConfig(output_dir="final_model"), train_dataset=None)
trainer.train()
trainer.save_model("final_model")
"""

START = datetime(2026, 4, 10, tzinfo=UTC)
"""When tests.analyzer.test_routes._run's transcript starts."""

DPO_INTO_FINAL = """\
from trl import DPOConfig, DPOTrainer

trainer = DPOTrainer(model="final_model", args=DPOConfig(output_dir="final_model"), train_dataset=None)
trainer.train()
trainer.save_model("final_model")
"""


def _background(call_id: str, command: str, task_id: str) -> list[dict[str, Any] | str]:
    """A Bash call Claude Code sent to the background and never reported done."""
    return [
        claude_call(call_id, "Bash", command=command, run_in_background=True),
        claude_result(call_id, f"Command running in background with ID: {task_id}"),
    ]


def _steps(route: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(s["kind"], s["artifact"], s["parent"]) for s in route["chain"]]


def _made_by(step: dict[str, Any]) -> int | None:
    return next((e["command_seq"] for e in step["evidence"] if e["kind"] == "command"), None)


def _invariants(route: dict[str, Any]) -> None:
    """What every route must keep: adopted within attempted, no artifact its own parent, the strength of
    its weakest step, explained."""
    assert set(route["adopted"]) <= set(route["attempted"])
    for steps in [route["chain"], *(route["lineage"] or {}).values()]:
        assert all(s["artifact"] not in s["parents"] for s in steps), steps
    assert route["strength"] == weakest(s["strength"] for s in route["chain"])
    assert route["strength_reason"]


def test_a_backup_restored_over_a_later_training_is_the_first_trainings_model(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_v7.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v7.py"),
        *_bash("b2", "cp -r final_model bak"),
        *_write("w2", "train_v8.py", DPO_INTO_FINAL),
        *_bash("b3", "python train_v8.py"),
        *_bash("b4", "rm -rf final_model && cp -r bak final_model"),
    ]
    route = _run(tmp_path, events)
    # The older final_model is named with the command that made it: the lineage holds two of them.
    assert _steps(route) == [
        ("sft", "final_model@1", BASE),
        ("copy", "bak", "final_model@1"),
        ("copy", "final_model", "bak"),
    ]
    assert [_made_by(s) for s in route["chain"]] == [1, 2, 4]
    assert (route["best_label"], route["chain_text"]) == ("SFT", "SFT")
    assert (route["attempted"], route["adopted"]) == (["DPO", "SFT"], ["SFT"])
    _invariants(route)


def test_a_move_and_a_deletion_are_versions_too(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_v7.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v7.py"),
        *_bash("b2", "mv final_model keep"),
        *_write("w2", "train_v8.py", DPO_INTO_FINAL),
        *_bash("b3", "python train_v8.py"),
        *_bash("b4", "rm -rf final_model; mv keep final_model"),
    ]
    route = _run(tmp_path, events)
    assert _steps(route) == [
        ("sft", "final_model@1", BASE),
        ("copy", "keep", "final_model@1"),
        ("copy", "final_model", "keep"),
    ]
    assert route["best_label"] == "SFT"
    _invariants(route)


def test_a_background_launch_never_reported_done_made_nothing(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_v4.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v4.py"),
        *_write("w2", "train_v5.py", SFT_INTO_FINAL.replace("SFTConfig(", "SFTConfig(num_train_epochs=9, ")),
        *_background("b2", "python train_v5.py", "bg1"),
    ]
    route = _run(tmp_path, events)
    assert _steps(route) == [("sft", "final_model", BASE)]
    assert _made_by(route["chain"][0]) == 1
    _invariants(route)


def test_a_failed_training_made_nothing(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_v4.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v4.py"),
        *_write("w2", "train_v5.py", DPO_INTO_FINAL),
        *_bash_failed(
            "b2", "python train_v5.py", "Exit code 1\nTraceback (most recent call last):\nKeyError: 'x'"
        ),
    ]
    route = _run(tmp_path, events)
    assert (_steps(route), _made_by(route["chain"][0])) == ([("sft", "final_model", BASE)], 1)
    assert route["attempted"] == ["DPO", "SFT"] and route["adopted"] == ["SFT"]
    _invariants(route)


def test_an_unfinished_training_made_the_artifact_when_its_own_files_show_it(tmp_path: Path) -> None:
    """The artifact's trainer log names DPO: the DPO run that never reported done did save it."""
    events = [
        *_write("w1", "train_v4.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v4.py"),
        *_write("w2", "train_v5.py", DPO_INTO_FINAL),
        *_background("b2", "python train_v5.py", "bg1"),
    ]
    route = _run(tmp_path, events, log_keys=["loss", "rewards/chosen", "rewards/margins"])
    assert _steps(route) == [("sft", "final_model@1", BASE), ("dpo", "final_model", "final_model@1")]
    assert [_made_by(s) for s in route["chain"]] == [1, 2]
    dpo = route["chain"][-1]
    assert dpo["strength"] == "verified" and any(e["kind"] == "artifact" for e in dpo["evidence"])
    assert route["chain_text"] == "SFT→DPO"
    _invariants(route)


def test_an_unfinished_training_made_the_artifact_when_its_files_were_written_after_it_started(
    tmp_path: Path,
) -> None:
    """The model's files were last written while the background run ran (before the run ended)."""
    events = [
        *_write("w1", "train_v4.py", SFT_INTO_FINAL),
        *_bash("b1", "python train_v4.py"),
        *_write("w2", "train_v5.py", DPO_INTO_FINAL),
        *_background("b2", "python train_v5.py", "bg1"),
        *_bash("b3", "sleep 600"),
    ]

    def saved_late(run: Path) -> None:
        # The transcript starts at START, an event every 5 s: the launch is at 30 s, the last event at
        # 45 s. The files were saved at 40 s.
        moment = START.timestamp() + 40
        for f in (run / "final_model").iterdir():
            os.utime(f, (moment, moment))

    route = _run(tmp_path, events, setup=saved_late)
    assert [(s["kind"], _made_by(s)) for s in route["chain"]] == [("sft", 1), ("dpo", 2)]
    _invariants(route)


def test_the_routes_strength_is_its_weakest_step_and_says_so(tmp_path: Path) -> None:
    route = _run(tmp_path, [*_bash("b1", "ls")], log_keys=["loss", "learning_rate"])
    assert (route["best_label"], route["strength"]) == ("SFT", "weak")
    assert route["strength_reason"].startswith("weak: its weakest step, sft making final_model,")
    # A stage known only from the artifact's own files was run: it is attempted, with that evidence.
    assert route["attempted"] == ["SFT"] == route["adopted"]
    assert route["evidence"]["attempted"]["SFT"][0]["kind"] == "artifact"
    _invariants(route)


def test_training_in_place_starts_from_the_paths_earlier_version(tmp_path: Path) -> None:
    events = [
        *_write("w1", "sft.py", HANDWRITTEN_SFT),
        *_bash("b1", f"python sft.py --init {BASE} --out final_model"),
        *_bash("b2", "python sft.py --init final_model --out final_model"),
    ]
    route = _run(tmp_path, events)
    assert _steps(route) == [("sft", "final_model@1", BASE), ("sft", "final_model", "final_model@1")]
    assert [_made_by(s) for s in route["chain"]] == [1, 2]
    _invariants(route)
