"""A script that ran but could not be read leaves its stages unknown — said, never shown as an absence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixture_posttrainbench import TASK_DIR, _call, _init, _result, real_output_log, real_run
from tests.test_cli import run_cli


def _route(tmp_path: Path, script: str) -> dict[str, Any]:
    events: list[dict[str, Any] | str] = [
        _init(),
        _call("w1", "Write", file_path=f"{TASK_DIR}/train.py", content=script),
        _result("w1", "ok"),
        _call("b1", "Bash", command="python train.py"),
        _result("b1", "done"),
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": "done"},
    ]
    code, out, err = run_cli(str(real_run(tmp_path, events, output_log=real_output_log(0, "ok"))), "--json")
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def test_an_unreadable_script_that_ran_makes_attempted_incomplete(tmp_path: Path) -> None:
    report = _route(tmp_path, "import torch\ndef train(:\n    loss.backward()\n")
    route = report["route"]
    assert route["attempted_complete"] is False
    assert any("train.py" in line and "route.attempted may lack it" in line for line in route["cannot_tell"])
    assert any(p["path"] == "train.py" for p in report["problems"])


def test_a_readable_script_keeps_attempted_complete(tmp_path: Path) -> None:
    route = _route(tmp_path, "from trl import SFTTrainer\nSFTTrainer(model=m, train_dataset=d).train()\n")[
        "route"
    ]
    assert route["attempted_complete"] is True and "SFT" in route["attempted"]
