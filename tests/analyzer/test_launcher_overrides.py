"""A launcher's route in an audit is the one its command's own settings picked, else its default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arb_audit.analyzer.launchers import chosen_route
from tests.fixture_posttrainbench import TASK_DIR, _call, _init, _result, real_output_log, real_run
from tests.test_cli import run_cli

LAUNCHER = """import argparse
from trl import DPOTrainer, SFTTrainer

p = argparse.ArgumentParser()
p.add_argument("--stage", choices=["sft", "dpo"], default="sft")
args = p.parse_args()
if args.stage == "sft":
    SFTTrainer(model=m, train_dataset=d).train()
elif args.stage == "dpo":
    DPOTrainer(model=m, ref_model=r, train_dataset=d).train()
"""


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("python train.py --stage dpo", ("DPO", "stage=dpo")),
        ("python train.py stage=dpo", ("DPO", "stage=dpo")),
        (
            "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo",
            ("GRPO", "algorithm.adv_estimator=grpo"),
        ),
        ("python train.py --stage kto", ("DPO", "stage=kto")),  # the preference family
        ("python train.py --stage ppo", None),  # not one of this launcher's routes
        ("python train.py", None),
        ("python train.py --stage 'unterminated", None),
    ],
)
def test_chosen_route(command: str, expected: tuple[str, str] | None) -> None:
    assert chosen_route(command, ["SFT", "DPO", "GRPO"]) == expected


def _audit(tmp_path: Path, command: str) -> dict[str, Any]:
    events: list[dict[str, Any] | str] = [
        _init(),
        _call("w1", "Write", file_path=f"{TASK_DIR}/train.py", content=LAUNCHER),
        _result("w1", "ok"),
        _call("b1", "Bash", command=command),
        _result("b1", "done"),
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": "done"},
    ]
    run = real_run(tmp_path, events, output_log=real_output_log(0, "ok"))
    code, out, err = run_cli(str(run), "--json")
    assert code == 0, err
    route: dict[str, Any] = json.loads(out)["route"]
    return route


def test_the_command_s_own_flag_picks_what_ran(tmp_path: Path) -> None:
    route = _audit(tmp_path, "python train.py --stage dpo")
    assert "DPO" in route["attempted"]
    assert any("stage=dpo" in (e.get("excerpt") or "") for e in route["evidence"]["attempted"]["DPO"])
