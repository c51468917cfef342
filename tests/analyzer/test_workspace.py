"""A file classified in its workspace gets the stages of the workspace code it calls."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from click.testing import CliRunner

from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.workspace import MAX_DEPTH, classify_workspaces, definitions, module_index, uses
from arb_audit.cli import main

SFT_LOOP = """
import torch.nn.functional as F

def run_training(loader, model, optimizer):
    for batch in loader:
        logits = model(batch["input_ids"]).logits
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
        loss.backward()
        optimizer.step()
"""

GRPO_LOSS = """
import torch

def grpo_loss(logp, old_logp, rewards, group):
    r = rewards.view(-1, group)
    adv = ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-6)).flatten()
    ratio = torch.exp(logp - old_logp)
    return -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()

def step(batch, optimizer):
    loss = grpo_loss(batch.logp, batch.old_logp, batch.rewards, 8)
    loss.backward()
    optimizer.step()
"""


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, code in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(code))
    return root


def _by_name(root: Path) -> dict[str, Classification]:
    return {Path(c.path).relative_to(root).as_posix(): c for c in classify_workspaces([root])}


def test_entry_script_gets_the_route_of_the_module_it_calls(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {"trainer.py": SFT_LOOP, "train.py": "from trainer import run_training\nrun_training(dl, m, opt)\n"},
    )
    result = _by_name(root)["train.py"]
    assert result.primary == "SFT" and result.role == "training"
    evidence = result.stages[0].evidence
    assert evidence[0].detector == "WorkspaceImport" and evidence[0].line == 2
    assert any(f.path == "trainer.py" and f.signal == "gradient_step" for f in evidence)
    assert result.stages[0].decided_by == "loss"


def test_a_training_run_named_for_a_route_takes_the_route_its_module_shows(tmp_path: Path) -> None:
    """Alone, ``train_grpo()`` of another module names its stage; with the module read, its loss decides."""
    module = SFT_LOOP.replace("def run_training(", "def train_grpo(")
    entry = "from trainers.grpo import train_grpo\nif __name__ == '__main__':\n    train_grpo(dl, m, opt)\n"
    root = _write(tmp_path, {"trainers/__init__.py": "", "trainers/grpo.py": module, "main.py": entry})
    result = _by_name(root)["main.py"]
    assert (result.primary, result.labels) == ("SFT", ["SFT"])
    assert result.stages[0].decided_by == "loss"
    alone = _by_name(_write(tmp_path / "alone", {"main.py": entry}))["main.py"]
    assert alone.primary == "GRPO" and alone.stages[0].decided_by == "name"


def test_relative_import_inside_a_package_and_a_subclass(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "rl/__init__.py": "",
            "rl/losses.py": GRPO_LOSS,
            "rl/run.py": "from .losses import step\nfor b in batches:\n    step(b, opt)\n",
        },
    )
    assert _by_name(root)["rl/run.py"].primary == "GRPO"


def test_imported_but_unused_module_is_not_followed(tmp_path: Path) -> None:
    root = _write(tmp_path, {"trainer.py": SFT_LOOP, "eval.py": "import trainer\nprint('score')\n"})
    assert _by_name(root)["eval.py"].primary == "NONE_TRAINING"


def test_a_file_with_its_own_stage_keeps_it(tmp_path: Path) -> None:
    own = "from losses import step\n" + SFT_LOOP + "\nrun_training(dl, m, opt)\nstep(b, opt)\n"
    root = _write(tmp_path, {"losses.py": GRPO_LOSS, "train.py": own})
    assert _by_name(root)["train.py"].primary == "SFT"


def test_cycles_and_depth_are_bounded(tmp_path: Path) -> None:
    files = {"a.py": "from b import f\nf()\n", "b.py": "from a import g\ng()\ndef f(): pass\n"}
    chain = {f"m{i}.py": f"from m{i + 1} import go\ngo()\n" for i in range(MAX_DEPTH + 2)}
    chain[f"m{MAX_DEPTH + 2}.py"] = SFT_LOOP.replace("run_training", "go")
    root = _write(tmp_path, {**files, **chain})
    found = _by_name(root)
    assert found["a.py"].primary == "NONE_TRAINING"
    assert found[f"m{MAX_DEPTH + 1}.py"].primary == "SFT"
    assert found["m0.py"].primary == "NONE_TRAINING"


def test_unreadable_and_broken_files_do_not_stop_the_workspace(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "trainer.py": SFT_LOOP,
            "broken.py": "def (:\n",
            "train.py": "from broken import x\nfrom trainer import run_training\n"
            "x()\nrun_training(a, b, c)\n",
        },
    )
    (root / "bytes.py").write_bytes(b"\xff\xfe\x00import trainer\n")
    found = _by_name(root)
    assert found["train.py"].primary == "SFT"
    assert found["broken.py"].error


def test_uses_reads_absolute_relative_and_folder_imports() -> None:
    index = module_index(["pkg/__init__.py", "pkg/a.py", "pkg/b.py", "tools/helper.py", "top.py"])
    text = (
        "from . import a\nfrom .b import run\nimport top as t\nfrom helper import h\n"
        "a.x()\nrun()\nt.go()\nh()\n"
    )
    assert [u.module for u in uses("pkg/c.py", text, index)] == ["pkg/a.py", "pkg/b.py", "top.py"]
    assert [u.module for u in uses("tools/main.py", "from helper import h\nh()\n", index)] == [
        "tools/helper.py"
    ]


def test_src_layout_packages_are_imported_by_their_names() -> None:
    """``scripts/run.py`` imports ``srlm.trainer`` from ``src/srlm/trainer.py`` (the src layout)."""
    index = module_index(["src/srlm/__init__.py", "src/srlm/trainer.py", "scripts/run.py", "srlm_x.py"])
    found = uses("scripts/run.py", "from srlm.trainer import Trainer\nTrainer(cfg).train()\n", index)
    assert [u.module for u in found] == ["src/srlm/trainer.py"]
    # a module named so from the root, or beside the importing file, is the one imported
    index = module_index(["src/tools/a.py", "tools/a.py", "b/trainer.py", "a/src/trainer.py"])
    assert [u.module for u in uses("run.py", "from tools.a import f\nf()\n", index)] == ["tools/a.py"]
    assert [u.module for u in uses("b/main.py", "from trainer import t\nt()\n", index)] == ["b/trainer.py"]
    # a src folder serves its own project only: a library cloned beside a script is not imported
    index = module_index(["peft/src/peft/__init__.py", "peft/src/peft/tuners.py", "train.py"])
    assert uses("train.py", "from peft import get_peft_model\nget_peft_model(m)\n", index) == []
    assert [
        u.module for u in uses("peft/examples/run.py", "from peft import tuners\ntuners.x()\n", index)
    ] == ["peft/src/peft/tuners.py"]


def test_classify_command_reads_folders_as_workspaces(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {"trainer.py": SFT_LOOP, "train.py": "from trainer import run_training\nrun_training(dl, m, opt)\n"},
    )
    out = CliRunner().invoke(main, ["classify", "--json", "--no-cache", "-j", "0", str(root)])
    rows = {Path(r["path"]).name: r for r in map(json.loads, out.output.splitlines())}
    assert rows["train.py"]["primary"] == "SFT"
    assert any(e.get("path") == "trainer.py" for e in rows["train.py"]["stages"][0]["evidence"])
    alone = CliRunner().invoke(main, ["classify", "--json", "--no-cache", "-j", "0", str(root / "train.py")])
    assert json.loads(alone.output)["primary"] == "NONE_TRAINING"


def test_an_audit_reads_the_script_a_command_ran_in_its_workspace(tmp_path: Path) -> None:
    """``python run.py`` whose loop lives in ``mylib/trainer.py``: SFT was attempted, shown there."""
    from tests.fixture_posttrainbench import TASK_DIR, _call, _init, _result, real_output_log, real_run
    from tests.test_cli import run_cli

    trainer = SFT_LOOP + "\n    model.save_pretrained('final_model')\n"
    main_script = "from mylib.trainer import run_training\nrun_training(loader, model, opt)\n"
    events: list[dict[str, object] | str] = [
        _init(),
        _call("w0", "Write", file_path=f"{TASK_DIR}/mylib/__init__.py", content=""),
        _result("w0", "ok"),
        _call("w1", "Write", file_path=f"{TASK_DIR}/mylib/trainer.py", content=trainer),
        _result("w1", "ok"),
        _call("w2", "Write", file_path=f"{TASK_DIR}/run.py", content=main_script),
        _result("w2", "ok"),
        _call("b1", "Bash", command="python run.py"),
        _result("b1", "done"),
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 5, "result": "done"},
    ]
    run = real_run(tmp_path, events, output_log=real_output_log(0, "ok"))
    code, out, err = run_cli(str(run), "--json")
    assert code == 0, err
    route = json.loads(out)["route"]
    assert "SFT" in route["attempted"]
    paths = [e.get("path") for e in route["evidence"]["attempted"]["SFT"]]
    assert "run.py" in paths and "mylib/trainer.py" in paths


GRPO_TRAINER_CLASS = (
    GRPO_LOSS
    + """

class GRPOTrainer:
    def train(self):
        for batch in self.batches:
            step(batch, self.optimizer)
"""
)


def test_a_step_whose_loss_is_in_a_workspace_class_takes_its_stage(tmp_path: Path) -> None:
    # trainer.train() of a class of the workspace: alone an honest UNKNOWN, in the workspace its code's stage
    run = "trainer = GRPOTrainer(model='m')\ntrainer.train()\n"
    root = _write(
        tmp_path,
        {
            "mypkg/__init__.py": "from .trainers.grpo_trainer import GRPOTrainer\n",
            "mypkg/trainers/__init__.py": "",
            "mypkg/trainers/grpo_trainer.py": GRPO_TRAINER_CLASS,
            "direct.py": "from mypkg.trainers.grpo_trainer import GRPOTrainer\n" + run,
            "through_package.py": "from mypkg import GRPOTrainer\n" + run,
            "aliased.py": "import mypkg as vf\n" + run.replace("GRPOTrainer(", "vf.GRPOTrainer("),
        },
    )
    found = _by_name(root)
    for name in ("direct.py", "through_package.py", "aliased.py"):
        assert found[name].primary == "GRPO", name
        assert any(f.path == "mypkg/trainers/grpo_trainer.py" for f in found[name].stages[0].evidence)
    # the package's __init__ only passes the class on: it runs nothing itself
    assert found["mypkg/__init__.py"].primary == "NONE_TRAINING"


def test_a_name_taken_from_a_package_is_followed_to_the_module_that_defines_it(tmp_path: Path) -> None:
    # ``from pkg import setup_logging`` uses pkg/logs.py, not the trainer pkg/__init__.py also re-exports
    root = _write(
        tmp_path,
        {
            "mypkg/__init__.py": (
                "from .logs import setup_logging\nfrom .trainers.grpo_trainer import GRPOTrainer\n"
                "def version():\n    return '1'\n"
            ),
            "mypkg/logs.py": "import logging\ndef setup_logging(level):\n    logging.basicConfig()\n",
            "mypkg/trainers/__init__.py": "",
            "mypkg/trainers/grpo_trainer.py": GRPO_TRAINER_CLASS,
            "evaluate.py": "from mypkg import setup_logging, version\nsetup_logging('INFO')\nversion()\n",
            "aliased.py": "import mypkg as vf\nvf.setup_logging('INFO')\n",
            "trains.py": "import mypkg as vf\nvf.setup_logging('INFO')\nvf.GRPOTrainer(model='m').train()\n",
        },
    )
    found = _by_name(root)
    assert found["evaluate.py"].primary == "NONE_TRAINING"
    assert found["aliased.py"].primary == "NONE_TRAINING"
    assert found["trains.py"].primary == "GRPO"


def test_a_class_taken_from_a_module_brings_its_own_stages_only(tmp_path: Path) -> None:
    # one module holds an SFT loop and a GRPO loss: the script that calls the SFT function is SFT
    both = SFT_LOOP + GRPO_LOSS
    root = _write(
        tmp_path,
        {
            "modules.py": both,
            "sft.py": "import modules\nmodules.run_training(dl, m, opt)\n",
            "grpo.py": "from modules import step\nstep(batch, opt)\n",
        },
    )
    found = _by_name(root)
    assert [s.kind for s in found["sft.py"].stages] == ["sft"]
    assert [s.kind for s in found["grpo.py"].stages] == ["grpo"]


def test_a_generic_trainer_trains_the_loss_of_the_workspace_model_it_is_given(tmp_path: Path) -> None:
    # transformers.Trainer is SFT by default; handed a model whose forward is a pairwise loss, it
    # trains a reward model
    model = """
    import torch

    class PairwiseRM(torch.nn.Module):
        def forward(self, chosen, rejected):
            return -torch.log(torch.sigmoid(self.head(chosen) - self.head(rejected))).mean()
    """
    train = """
    from transformers import Trainer
    from rm_model import PairwiseRM

    model = PairwiseRM()
    Trainer(model=model, args=args, train_dataset=pairs).train()
    """
    root = _write(tmp_path, {"rm_model.py": model, "train_rm.py": train})
    found = _by_name(root)
    assert found["rm_model.py"].primary == "REWARD_MODEL" and found["rm_model.py"].role == "component"
    result = found["train_rm.py"]
    assert result.primary == "REWARD_MODEL" and [s.kind for s in result.stages] == ["reward_model"]
    assert result.stages[0].decided_by == "loss"


def test_a_class_picked_by_getattr_from_a_module_that_chooses_the_route_is_config_dependent(
    tmp_path: Path,
) -> None:
    trainers = """
    import torch.nn.functional as F

    class BasicTrainer:
        def get_batch_metrics(self, batch, loss_config):
            if loss_config.name in {"dpo", "ipo"}:
                losses = -F.logsigmoid(loss_config.beta * ((pc - pr) - (rc - rr)))
            elif loss_config.name == "sft":
                losses = -policy_chosen_logps
            return losses.mean()
    """
    train = """
    import trainers

    def main(config):
        TrainerClass = getattr(trainers, config.trainer)
        trainer = TrainerClass(policy, config)
        trainer.train()
    """
    root = _write(tmp_path, {"trainers.py": trainers, "train.py": train})
    found = _by_name(root)
    assert found["trainers.py"].primary == "CONFIG_DEPENDENT"
    result = found["train.py"]
    assert result.primary == "CONFIG_DEPENDENT" and result.role == "launcher"
    assert set(result.possible_routes) == {"DPO", "SFT"}
    assert any(f.detector == "WorkspaceImport" and f.signal == "dispatch" for f in result.findings)


def test_a_class_picked_by_getattr_from_a_module_of_several_trainers_is_config_dependent(
    tmp_path: Path,
) -> None:
    trainers = SFT_LOOP.replace("def run_training", "def sft_step") + GRPO_LOSS
    train = "import trainers\nstep = getattr(trainers, config.loss.trainer)\nstep(batch, opt)\n"
    root = _write(tmp_path, {"trainers.py": trainers, "train.py": train})
    result = _by_name(root)["train.py"]
    assert result.primary == "CONFIG_DEPENDENT" and set(result.possible_routes) == {"SFT", "GRPO"}


def test_policy_gradient_on_a_workspace_rollout_s_episodes_is_online_rl(tmp_path: Path) -> None:
    # the script's trainer is a framework's; the multi-turn episodes are played by rollout.py, a
    # sibling in a folder no one could import by name
    rollout = """
    async def rollout(client, game, messages):
        while not game.over:
            reply = await client.chat.completions.create(model="policy", messages=messages)
            apply_move(game, reply.choices[0].message.content)
            messages.append({"role": "user", "content": render_board(game)})
    """
    train = """
    import art
    from rollout import rollout

    model = art.TrainableModel(name="agent", project="p", base_model="Qwen")
    groups = [art.TrajectoryGroup(rollout(model, g, []) for _ in range(8)) for g in games]
    await model.train(groups)
    """
    root = _write(tmp_path, {"examples/2048/rollout.py": rollout, "examples/2048/train.py": train})
    found = _by_name(root)
    assert found["examples/2048/rollout.py"].primary == "ONLINE_RL"
    result = found["examples/2048/train.py"]
    assert result.primary == "ONLINE_RL" and result.labels == ["ONLINE_RL", "GRPO"]


def test_a_used_module_is_parsed_once_for_its_imports_and_definitions() -> None:
    from arb_audit.analyzer import workspace

    text = "import torch\n\ndef sft_step(batch):\n    return batch\n"
    workspace._parsed_kept.cache_clear()
    workspace.uses("mod.py", text, {"torch_utils": "torch_utils.py"})
    workspace.definitions(text)
    workspace.bindings("mod.py", text, {})
    workspace.calls_of(text)  # (what a user of the module's names calls of them)
    info = workspace._parsed_kept.cache_info()
    assert (info.misses, info.hits) == (1, 3)


LIBRARY_OF_TRAINERS = """
import torch.nn.functional as F
from transformers import Trainer


class SFTTrainer(Trainer):
    def compute_loss(self, model, inputs):
        logits = model(inputs["input_ids"]).logits
        return F.cross_entropy(logits[:, :-1].flatten(0, 1), inputs["labels"][:, 1:].flatten())


class RewardTrainer(Trainer):
    def compute_loss(self, model, inputs):
        chosen, rejected = model(inputs["chosen"]), model(inputs["rejected"])
        return -F.logsigmoid(chosen - rejected).mean()


class AlignTrainer(Trainer):
    def compute_loss(self, model, inputs):
        pi = inputs["policy_chosen_logps"] - inputs["policy_rejected_logps"]
        ref = inputs["reference_chosen_logps"] - inputs["reference_rejected_logps"]
        return -F.logsigmoid(self.beta * (pi - ref)).mean()
"""


def test_the_entry_of_a_module_that_picks_the_stage_by_a_setting_leaves_its_user_config_dependent(
    tmp_path: Path,
) -> None:
    cli = """
    from pipelines import SFTPipeline, DPOPipeline

    def run_stage(cfg):
        if cfg.stage.name == "sft":
            return SFTPipeline(cfg).run()
        if cfg.stage.name == "dpo":
            return DPOPipeline(cfg).run()

    def main():
        run_stage(compose(config_name="config", overrides=sys.argv[1:]))
    """
    script = "from pkg.cli import main\n\nif __name__ == '__main__':\n    main()\n"
    root = _write(tmp_path, {"pkg/__init__.py": "", "pkg/cli.py": cli, "scripts/run_training.py": script})
    found = _by_name(root)
    assert found["pkg/cli.py"].primary == "CONFIG_DEPENDENT"
    result = found["scripts/run_training.py"]
    # (before, the user took the last of the stages the entry reaches: DPO, a route the setting may not pick)
    assert result.primary == "CONFIG_DEPENDENT" and result.role == "launcher"
    assert set(result.possible_routes) == {"SFT", "DPO"}
    assert any(f.detector == "WorkspaceImport" and f.signal == "dispatch" for f in result.findings)


def test_a_user_of_a_choosing_entry_gets_the_routes_chosen_and_their_default(tmp_path: Path) -> None:
    cli = """
    import argparse
    from trl import SFTTrainer, DPOTrainer, GRPOTrainer, PPOTrainer

    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--align", choices=["dpo", "grpo"], default="dpo")
        args = p.parse_args()
        SFTTrainer(model=m, train_dataset=d).train()
        if args.align == "dpo":
            DPOTrainer(model=m, train_dataset=d).train()
        elif args.align == "grpo":
            GRPOTrainer(model=m, reward_funcs=r, train_dataset=d).train()

    def main_rl():
        p = argparse.ArgumentParser()
        p.add_argument("--algo", choices=["grpo", "ppo"], default="grpo")
        args = p.parse_args()
        if args.algo == "grpo":
            GRPOTrainer(model=m, reward_funcs=r, train_dataset=d).train()
        elif args.algo == "ppo":
            PPOTrainer(model=m, train_dataset=d).train()
    """
    files = {
        "pkg/__init__.py": "",
        "pkg/cli.py": cli,
        "run.py": "from pkg.cli import main\nmain()\n",
        "run_rl.py": "from pkg.cli import main_rl\nmain_rl()\n",
        "warm.py": "from trl import SFTTrainer\nfrom pkg.cli import main_rl\n"
        "SFTTrainer(model=m, train_dataset=warmup).train()\nmain_rl()\n",
    }
    found = _by_name(_write(tmp_path, files))
    # (the SFT stage main always runs is no choice of the setting's)
    assert found["run.py"].primary == "CONFIG_DEPENDENT"
    assert set(found["run.py"].possible_routes) == {"DPO", "GRPO"}
    rl = found["run_rl.py"]
    assert (rl.primary, set(rl.possible_routes), rl.default_route) == (
        "CONFIG_DEPENDENT",
        {"GRPO", "PPO"},
        "GRPO",
    )
    # a stage of the user's own before the choosing entry leaves the choice standing
    warm = found["warm.py"]
    assert warm.primary == "CONFIG_DEPENDENT" and {"GRPO", "PPO"} <= set(warm.possible_routes)


def test_a_library_of_trainers_for_three_routes_is_config_dependent_and_a_script_gets_the_one_it_uses(
    tmp_path: Path,
) -> None:
    train = """
    from trainers import AlignTrainer

    if __name__ == "__main__":
        AlignTrainer(model=model, args=args, train_dataset=pairs).train()
    """
    root = _write(tmp_path, {"trainers.py": LIBRARY_OF_TRAINERS, "train_dpo.py": train})
    found = _by_name(root)
    library = found["trainers.py"]
    assert library.primary == "CONFIG_DEPENDENT" and library.role == "launcher"
    assert set(library.possible_routes) == {"SFT", "REWARD_MODEL", "DPO"}
    assert found["train_dpo.py"].primary == "DPO" and found["train_dpo.py"].role == "training"


SFT_SCRIPT = (
    SFT_LOOP.replace("def run_training(", "def train(")
    + """
PROMPT = "Answer: {q}"

def tokenize(tokenizer, text):
    return tokenizer(text, truncation=True)

def load_model(path):
    return AutoModelForCausalLM.from_pretrained(path)

def main():
    model = load_model("base")
    train(make_loader(), model, make_optimizer(model))

if __name__ == "__main__":
    main()
"""
)

EVALUATION = """
from sft import load_model, tokenize, PROMPT

model = load_model("out")
for q in questions:
    out = model.generate(**tokenize(tok, PROMPT.format(q=q)), max_new_tokens=64)
    print(tok.decode(out[0]))
"""


def test_a_helper_of_a_training_module_does_not_make_its_user_train(tmp_path: Path) -> None:
    """An evaluation taking the training script's model loader and prompt runs none of its training."""
    root = _write(tmp_path, {"sft.py": SFT_SCRIPT, "evaluate.py": EVALUATION})
    found = _by_name(root)
    assert found["sft.py"].primary == "SFT"
    assert found["evaluate.py"].primary == "EVAL_ONLY" and not found["evaluate.py"].stages


def test_a_definition_that_calls_the_training_beside_it_runs_that_training(tmp_path: Path) -> None:
    """``from sft import main``: main calls train, which lies elsewhere in the module."""
    entry = "from sft import main\nmain()\n"
    result = _by_name(_write(tmp_path, {"sft.py": SFT_SCRIPT, "run.py": entry}))["run.py"]
    assert result.primary == "SFT" and result.role == "training"
    assert any(f.path == "sft.py" and f.signal == "gradient_step" for f in result.stages[0].evidence)


def test_training_that_runs_when_its_module_is_imported_runs_for_any_name_taken(tmp_path: Path) -> None:
    """A script training at its top level (no main guard) trains on import, whatever is taken from it."""
    module = SFT_LOOP + "\ndef seed_all(n):\n    return n\n\nrun_training(loader, model, optimizer)\n"
    root = _write(tmp_path, {"trainer.py": module, "run.py": "from trainer import seed_all\nseed_all(0)\n"})
    assert _by_name(root)["run.py"].primary == "SFT"


def test_a_generic_base_trainer_beside_a_route_trains_that_route(tmp_path: Path) -> None:
    """A DPO trainer that also calls the project's ``transformers.Trainer`` subclass trains DPO only."""
    base = "from transformers import Trainer\n\nclass HPUTrainer(Trainer):\n    pass\n"
    dpo = (
        "from trl import DPOTrainer\nfrom trainers.base import HPUTrainer\n\n"
        "class HPUDPOTrainer(DPOTrainer):\n    def __init__(self, *a, **k):\n"
        "        HPUTrainer.__init__(self, *a, **k)\n"
    )
    entry = "from trainers.dpo import HPUDPOTrainer\n\nHPUDPOTrainer(model=m, args=a).train()\n"
    files = {"trainers/__init__.py": "", "trainers/base.py": base, "trainers/dpo.py": dpo, "train.py": entry}
    result = _by_name(_write(tmp_path, files))["train.py"]
    assert (result.primary, result.labels) == ("DPO", ["DPO"])


def test_a_workspace_trainer_built_only_to_evaluate_trains_nothing(tmp_path: Path) -> None:
    """``RewardTrainer(rm, tok).evaluate(ds)`` of the project's trainer: its accuracy, not its training."""
    trainer = (
        "import torch.nn.functional as F\n\nclass RewardTrainer:\n    def train(self, loader, opt):\n"
        "        for b in loader:\n            loss = -F.logsigmoid(b.chosen - b.rejected).mean()\n"
        "            loss.backward()\n            opt.step()\n\n    def evaluate(self, ds):\n"
        "        return {'accuracy': 1.0}\n"
    )
    entry = "from reward_trainer import RewardTrainer\n\nmetrics = RewardTrainer(rm, tok).evaluate(ds)\n"
    found = _by_name(_write(tmp_path, {"reward_trainer.py": trainer, "evaluate.py": entry}))
    assert found["reward_trainer.py"].primary == "REWARD_MODEL"
    assert found["evaluate.py"].primary == "EVAL_ONLY"


ENGINE = """
import torch.nn.functional as F


class Engine:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def train_step(self, batch):
        logits = self.model(batch["input_ids"]).logits
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
        loss.backward()
        self.optimizer.step()

    def generate(self, prompts):
        return self.model.generate(**prompts, max_new_tokens=64)
"""


def test_a_class_s_user_runs_only_the_methods_it_calls(tmp_path: Path) -> None:
    """An evaluation calling the project engine's ``generate`` runs none of its ``train_step``."""
    evaluation = (
        "from engine import Engine\n\nengine = Engine(model, None)\nprint(engine.generate(prompts))\n"
    )
    training = (
        "from engine import Engine\n\nengine = Engine(model, opt)\n"
        "for b in loader:\n    engine.train_step(b)\n"
    )
    found = _by_name(_write(tmp_path, {"engine.py": ENGINE, "evaluate.py": evaluation, "train.py": training}))
    assert found["engine.py"].primary == "SFT"
    assert found["evaluate.py"].primary == "EVAL_ONLY" and not found["evaluate.py"].stages
    assert found["train.py"].primary == "SFT"
    assert any(
        f.path == "engine.py" and f.signal == "gradient_step" for f in found["train.py"].stages[0].evidence
    )


def test_a_method_the_called_method_calls_runs_too(tmp_path: Path) -> None:
    """``engine.fit(loader)`` calls ``self.train_step``: the training runs (through a base class too)."""
    engine = ENGINE.replace("class Engine:", "class Base:") + (
        "\n\nclass Engine(Base):\n    def fit(self, loader):\n        for b in loader:\n"
        "            self.train_step(b)\n"
    )
    entry = "from engine import Engine\n\nEngine(model, opt).fit(loader)\n"
    found = _by_name(_write(tmp_path, {"engine.py": engine, "run.py": entry}))
    assert found["run.py"].primary == "SFT"


def test_a_subclass_of_a_library_class_runs_its_hooks(tmp_path: Path) -> None:
    """``compute_loss`` of a ``Trainer`` subclass is called by the library's ``train``, not by its user."""
    trainer = (
        "import torch.nn.functional as F\nfrom transformers import Trainer\n\n\nclass MyTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs):\n"
        "        return -F.logsigmoid(inputs['chosen'] - inputs['rejected']).mean()\n"
    )
    entry = "from my_trainer import MyTrainer\n\nMyTrainer(model=rm, train_dataset=pairs).train()\n"
    found = _by_name(_write(tmp_path, {"my_trainer.py": trainer, "run.py": entry}))
    assert found["run.py"].primary == found["my_trainer.py"].primary == "REWARD_MODEL"


def test_a_library_subclass_loaded_to_convert_its_weights_runs_none_of_its_hooks(tmp_path: Path) -> None:
    """A LightningModule loaded from a checkpoint and its weights saved: nothing calls ``training_step``."""
    module = (
        "import pytorch_lightning as pl\nimport torch.nn.functional as F\n\n\n"
        "class Model(pl.LightningModule):\n"
        "    def training_step(self, batch, idx):\n"
        "        return F.cross_entropy(self.model(batch['x']).logits, batch['labels'])\n"
    )
    convert = (
        "import torch\nfrom imitation import Model\n\n"
        "pl_model = Model.load_from_checkpoint(checkpoint_path=p)\npl_model.train(False)\n"
        "torch.save(pl_model.model.state_dict(), 'out.pth')\n"
    )
    fit = (
        "import pytorch_lightning as pl\nfrom imitation import Model\n\n"
        "pl.Trainer().fit(Model(args), loader)\n"
    )
    # a learner built on a library's base class, run by its user: the base's ``run`` calls its hooks
    learner = (
        "import torch.nn.functional as F\nfrom rl_lib import BaseLearner\n\n\nclass Learner(BaseLearner):\n"
        "    def compute_loss(self, batch):\n"
        "        return F.cross_entropy(self.model(batch['x']).logits, batch['labels'])\n"
    )
    run = "from learner import Learner\n\nLearner(model, opt).run(loader)\n"
    files = {
        "imitation.py": module,
        "convert.py": convert,
        "train.py": fit,
        "learner.py": learner,
        "run.py": run,
    }
    found = _by_name(_write(tmp_path, files))
    assert found["convert.py"].primary == "NONE_TRAINING"
    assert found["train.py"].primary == "SFT"
    assert found["run.py"].primary == found["learner.py"].primary == "SFT"


def test_a_class_handed_to_a_registry_runs_whatever_its_taker_calls(tmp_path: Path) -> None:
    """``registry.add(value=Experiment)``: the class is handed on; whoever takes it may call ``run``."""
    engine = ENGINE.replace("def train_step(self, batch):", "def run(self, batch):")
    registry = "from engine import Engine\n\nregistry = {}\nregistry.update(engine=Engine)\n"
    entry = "from registry import registry\n\nregistry.get(config.key)(model, opt).run(batch)\n"
    found = _by_name(_write(tmp_path, {"engine.py": engine, "registry.py": registry, "train.py": entry}))
    assert found["train.py"].primary == "SFT"


SETUP = """
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Trainer

IGNORE_INDEX = -100


def setup_trainer(cfg, model, tokenizer, train_dataset):
    collator = DataCollatorForSeq2Seq(tokenizer, label_pad_token_id=IGNORE_INDEX)
    trainer_cls = Trainer if cfg.decoder_only else Seq2SeqTrainer
    return trainer_cls(model=model, args=cfg, data_collator=collator, train_dataset=train_dataset)


def load_model(cfg):
    return AutoModelForCausalLM.from_pretrained(cfg.model)
"""


def test_a_step_whose_trainer_a_workspace_function_builds_takes_the_loss_it_builds(tmp_path: Path) -> None:
    """``trainer = setup_trainer(...)``; ``trainer.train()``: the collator masking targets says SFT."""
    entry = (
        "from utils import load_model, setup_trainer\n\nmodel = load_model(cfg)\n"
        "trainer = setup_trainer(cfg, model, tok, data)\ntrainer.train()\n"
    )
    found = _by_name(_write(tmp_path, {"utils.py": SETUP, "train.py": entry}))
    assert found["utils.py"].role == "component"
    result = found["train.py"]
    assert result.primary == "SFT" and result.role == "training"
    assert (result.stages[0].decided_by, result.stages[0].confidence) == ("data", "low")
    # a helper taken from the same module, whose code builds no loss, gives none
    helper_only = "from utils import load_model\n\nmodel = load_model(cfg)\nmake_trainer(model).train()\n"
    found = _by_name(_write(tmp_path, {"utils.py": SETUP, "train.py": helper_only}))
    assert found["train.py"].primary == "UNKNOWN"


def test_an_instance_handed_on_or_returned_runs_whatever_its_taker_calls(tmp_path: Path) -> None:
    """``fire.Fire(component=Engine(...))`` picks the method from the command line; a function returning
    ``Engine(...)`` hands it to its caller: neither says which methods run, so all may."""
    fired = (
        "import fire\nfrom engine import Engine\n\nengine = Engine(model, opt)\nfire.Fire(component=engine)\n"
    )
    built = "from engine import Engine\n\n\ndef make(model, opt):\n    return Engine(model, opt)\n"
    found = _by_name(_write(tmp_path, {"engine.py": ENGINE, "cli.py": fired, "factory.py": built}))
    assert found["cli.py"].primary == "SFT"
    assert found["factory.py"].primary == "SFT"


def test_a_hostile_module_of_method_chains_and_many_bases_is_read_in_linear_time() -> None:
    """Each definition, method and attribute name is taken once: a chain of 20,000 methods calling the
    next and nine levels of 30 classes each inheriting all 30 of the level above (30**8 paths) are read
    at once, with what runs right."""
    n = 20_000
    chain = "class Engine:\n" + "".join(
        f"    def m{i}(self):\n        return self.m{i + 1}()\n" for i in range(n)
    )
    chain += f"    def m{n}(self):\n        return 0\n    def unused(self):\n        return 1\n"
    spans = definitions(chain).reached("Engine", frozenset({"m0"}))
    assert spans is not None and len(spans) == n + 2  # the header and every method of the chain
    levels, width = 9, 30
    hierarchy = "".join(f"class C0_{j}(object):\n    pass\n" for j in range(width))
    for level in range(1, levels):
        bases = ", ".join(f"C{level - 1}_{j}" for j in range(width))
        hierarchy += "".join(
            f"class C{level}_{j}({bases}):\n    def f(self):\n        return 1\n" for j in range(width)
        )
    module = definitions(hierarchy)
    assert not module.extends_outside  # (``object`` is no code from elsewhere)
    reached = module.reached(f"C{levels - 1}_0", frozenset())
    assert reached is not None and len(reached) == 1 + (levels - 1) * width


def test_a_class_on_object_runs_only_the_methods_its_user_calls(tmp_path: Path) -> None:
    """``class Engine(object)`` extends nothing from elsewhere: an evaluation calling ``generate`` trains
    nothing."""
    engine = ENGINE.replace("class Engine:", "class Engine(object):")
    evaluation = "from engine import Engine\n\nprint(Engine(model, None).generate(prompts))\n"
    found = _by_name(_write(tmp_path, {"engine.py": engine, "evaluate.py": evaluation}))
    assert found["evaluate.py"].primary == "EVAL_ONLY"
