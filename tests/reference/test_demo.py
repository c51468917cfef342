"""``arb-audit demo``: list, refuse what cannot run, record and audit a scenario end to end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arb_audit.cli import main
from arb_audit.runner.reference.agent import interpreter_shims
from arb_audit.runner.reference.scenarios import SCENARIOS


def test_list_names_every_scenario() -> None:
    result = CliRunner().invoke(main, ["demo", "--list"])
    assert result.exit_code == 0
    for scenario in SCENARIOS:
        assert scenario.name in result.output


def test_an_unknown_scenario_is_refused_with_the_names_there_are() -> None:
    result = CliRunner().invoke(main, ["demo", "sft_ppo"])
    assert result.exit_code == 2 and "no scenario 'sft_ppo'" in result.output and "sft_grpo" in result.output


def test_a_scenario_and_all_together_are_refused() -> None:
    result = CliRunner().invoke(main, ["demo", "sft_only", "--all"])
    assert result.exit_code == 2 and "not both" in result.output


def test_a_folder_that_is_not_a_recording_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "copy_base").mkdir()
    (tmp_path / "copy_base" / "precious.txt").write_text("mine")
    result = CliRunner().invoke(main, ["demo", "copy_base", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "not a scenario recording" in result.output
    assert (tmp_path / "copy_base" / "precious.txt").read_text() == "mine"


@pytest.mark.slow
def test_demo_records_and_audits_a_scenario(world: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "copy_base", "--out", str(world)])
    assert result.exit_code == 0, result.output
    assert "NO_TRAINING" in result.output and "✗" not in result.output
    assert (world / "copy_base" / "recording" / "run.duckdb").is_file()


def test_the_agents_commands_run_this_interpreter_whatever_path_says(tmp_path: Path) -> None:
    # the shell a user starts arb-audit from rarely has its venv activated: PATH finds a system python
    env = interpreter_shims(tmp_path / "shims")
    env["PATH"] = os.pathsep.join([str(tmp_path / "shims"), "/usr/bin:/bin"])
    for name in ("python", "python3"):
        done = subprocess.run(
            ["bash", "-c", f"{name} -c 'import sys; print(sys.executable)'"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip() == sys.executable
