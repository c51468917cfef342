"""A launcher's default route from the config files of its workspace (Hydra, YAML it loads, agreement)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.detectors.route_dispatch import _setting_key
from arb_audit.analyzer.workspace import classify_workspaces
from tests.fixture_posttrainbench import TASK_DIR, _call, _init, _result, real_output_log, real_run
from tests.test_cli import run_cli

HYDRA_SCRIPT = """import hydra
from trl import DPOTrainer, GRPOTrainer


@hydra.main(config_path="conf", config_name="train", version_base=None)
def main(cfg):
    if cfg.algorithm.name == "dpo":
        DPOTrainer(model=cfg.model, train_dataset=d).train()
    elif cfg.algorithm.name == "grpo":
        GRPOTrainer(model=cfg.model, reward_funcs=[r], train_dataset=d).train()


main()
"""

LOADED_SCRIPT = """import argparse
import yaml
from trl import DPOTrainer, SFTTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="configs/run.yaml")
cfg = yaml.safe_load(open(parser.parse_args().config))
if cfg["stage"] == "sft":
    SFTTrainer(model=m, train_dataset=d).train()
elif cfg["stage"] == "dpo":
    DPOTrainer(model=m, ref_model=r, train_dataset=d).train()
"""

FLAG_SCRIPT = """import argparse
from trl import DPOTrainer, SFTTrainer

p = argparse.ArgumentParser()
p.add_argument("--stage", choices=["sft", "dpo"])
args = p.parse_args()
if args.stage == "sft":
    SFTTrainer(model=m, train_dataset=d).train()
elif args.stage == "dpo":
    DPOTrainer(model=m, ref_model=r, train_dataset=d).train()
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _classified(root: Path, name: str) -> Classification:
    by_path = {Path(c.path).relative_to(root).as_posix(): c for c in classify_workspaces([root], jobs=1)}
    return by_path[name]


def _config_evidence(result: Classification) -> list[dict[str, Any]]:
    return [e for e in result.to_json()["evidence"] if e["detector"] == "WorkspaceConfig"]


def test_hydra_defaults_list_picks_the_algorithm(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "train.py": HYDRA_SCRIPT,
            "conf/train.yaml": "defaults:\n  - algorithm: grpo\n  - _self_\nmodel: Qwen/Qwen2.5-0.5B\n",
            "conf/algorithm/grpo.yaml": "name: grpo\nnum_generations: 8\n",
            "conf/algorithm/dpo.yaml": "name: dpo\nbeta: 0.1\n",
        },
    )
    result = _classified(root, "train.py")
    assert result.primary == "CONFIG_DEPENDENT"
    assert set(result.possible_routes) >= {"DPO", "GRPO"}
    assert result.default_route == "GRPO"
    [evidence] = _config_evidence(result)
    assert evidence["path"] == "conf/algorithm/grpo.yaml" and evidence["line"] == 1
    assert "algorithm.name: grpo" in evidence["message"]


def test_the_yaml_a_script_loads_gives_the_default(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "train.py": LOADED_SCRIPT,
            "configs/run.yaml": "model: m\nstage: dpo\n",
            "configs/other.yaml": "stage: sft\n",  # not the one the script loads
        },
    )
    result = _classified(root, "train.py")
    assert result.default_route == "DPO"
    assert _config_evidence(result)[0]["path"] == "configs/run.yaml"


@pytest.mark.parametrize(
    ("configs", "expected"),
    [
        ({"a.yaml": "stage: dpo\n"}, "DPO"),
        ({"a.yaml": "stage: dpo\n", "sub/b.yaml": "stage: dpo\n"}, "DPO"),
        ({"a.yaml": "stage: dpo\n", "b.yaml": "stage: sft\n"}, None),  # they disagree: no default
        ({"a.yaml": "stage: ppo\n"}, None),  # not one of the script's routes
        ({"a.yaml": "[not: a mapping\n"}, None),
        ({"a.yaml": "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nstage: dpo\n"}, "DPO"),
    ],
)
def test_configs_the_script_does_not_name_must_agree(
    tmp_path: Path, configs: dict[str, str], expected: str | None
) -> None:
    root = _write(tmp_path, {"train.py": FLAG_SCRIPT, **configs})
    assert _classified(root, "train.py").default_route == expected


def test_a_default_of_the_script_s_own_stands(tmp_path: Path) -> None:
    own = FLAG_SCRIPT.replace('choices=["sft", "dpo"]', 'choices=["sft", "dpo"], default="sft"')
    root = _write(tmp_path, {"train.py": own, "a.yaml": "stage: dpo\n"})
    result = _classified(root, "train.py")
    assert result.default_route == "SFT" and not _config_evidence(result)


def test_hydra_includes_stay_inside_the_workspace_and_end(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "ws",
        {
            "train.py": HYDRA_SCRIPT,
            "conf/train.yaml": "defaults:\n  - ../../outside\n  - train\n  - algorithm: dpo\n",
            "conf/algorithm/dpo.yaml": "name: dpo\n",
        },
    )
    (tmp_path / "outside.yaml").write_text("algorithm:\n  name: grpo\n")
    assert _classified(root, "train.py").default_route == "DPO"


@pytest.mark.parametrize(
    ("subject", "key"),
    [
        ("cfg.algorithm.name", "algorithm.name"),
        ('cfg["algorithm"]["name"]', "algorithm.name"),
        ("self.config.rl", "rl"),
        ("args.stage", "stage"),
        ("stage", None),
        ("load(x).stage", None),
        ("cfg[key]", None),
    ],
)
def test_the_setting_a_comparison_reads(subject: str, key: str | None) -> None:
    assert _setting_key(subject) == key


HYDRA_DEFAULTS = "defaults:\n  - algorithm: grpo\n"


def _audit(tmp_path: Path, command: str) -> dict[str, Any]:
    events: list[dict[str, Any] | str] = [
        _init(),
        _call("w1", "Write", file_path=f"{TASK_DIR}/train.py", content=HYDRA_SCRIPT),
        _result("w1", "ok"),
        _call("w2", "Write", file_path=f"{TASK_DIR}/conf/train.yaml", content=HYDRA_DEFAULTS),
        _result("w2", "ok"),
        _call("w3", "Write", file_path=f"{TASK_DIR}/conf/algorithm/grpo.yaml", content="name: grpo\n"),
        _result("w3", "ok"),
        _call("w4", "Write", file_path=f"{TASK_DIR}/conf/algorithm/dpo.yaml", content="name: dpo\n"),
        _result("w4", "ok"),
        _call("b1", "Bash", command=command),
        _result("b1", "done"),
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 3, "result": "done"},
    ]
    run = real_run(tmp_path, events, output_log=real_output_log(0, "ok"))
    code, out, err = run_cli(str(run), "--json")
    assert code == 0, err
    route: dict[str, Any] = json.loads(out)["route"]
    return route


def test_an_audit_runs_the_config_s_default_unless_the_command_overrides_it(tmp_path: Path) -> None:
    plain = _audit(tmp_path / "plain", "python train.py")
    assert "GRPO" in plain["attempted"] and "DPO" not in plain["attempted"]
    overridden = _audit(tmp_path / "override", "python train.py algorithm.name=dpo")
    assert "DPO" in overridden["attempted"] and "GRPO" not in overridden["attempted"]
