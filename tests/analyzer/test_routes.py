"""Routes of a run: what was written, what ran, and the lineage of the best submission, with evidence."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arb_audit.analyzer.scripts_run import scripts_run
from arb_audit.model import Command, FileEntry, Revision
from arb_audit.taxonomy.trainer_logs import kind_from_card, kind_from_log_keys
from tests.test_cli import run_cli
from tests.transcript_lines import claude_call, claude_end, claude_init, claude_result, jsonl

BASE = "Qwen/Qwen3-4B-Base"
TASK = "/home/ben/task"

SFT = f"""\
from peft import LoraConfig
from transformers import AutoModelForCausalLM
from trl import SFTConfig, SFTTrainer

model = AutoModelForCausalLM.from_pretrained("{BASE}")
trainer = SFTTrainer(model=model, args=SFTConfig(output_dir="outputs/sft"), peft_config=LoraConfig(r=8))
trainer.train()
trainer.save_model("outputs/sft")
"""

GRPO = """\
from trl import GRPOConfig, GRPOTrainer

def correct(completions, answer, **kwargs):
    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]

trainer = GRPOTrainer(model="outputs/sft", reward_funcs=correct, args=GRPOConfig(output_dir="outputs/grpo"))
trainer.train()
trainer.save_model("outputs/grpo")
"""

ONLINE = """\
from trl import GRPOConfig, GRPOTrainer


class KeyRoom:
    def reset(self):
        return "A locked door. A key on the floor."

    def step(self, action):
        opened = "unlock door" in action
        return ("The door opens." if opened else "Nothing happens."), float(opened), opened


def reward(completions, environments, **kwargs):
    return [env.reward for env in environments]


trainer = GRPOTrainer(model="outputs/sft", reward_funcs=reward, environment_factory=KeyRoom,
                      args=GRPOConfig(output_dir="outputs/online"))
trainer.train()
trainer.save_model("outputs/online")
"""

DPO = """\
from trl import DPOConfig, DPOTrainer

trainer = DPOTrainer(model="outputs/sft", args=DPOConfig(output_dir="outputs/dpo"), train_dataset=None)
trainer.train()
"""

DIRECT = f"""\
from trl import SFTTrainer

trainer = SFTTrainer(model="{BASE}", train_dataset=None)
trainer.train()
trainer.save_model("final_model")
"""


def _write(call_id: str, name: str, text: str) -> list[dict[str, Any] | str]:
    return [
        claude_call(call_id, "Write", file_path=f"{TASK}/{name}", content=text),
        claude_result(call_id, "ok"),
    ]


def _bash(call_id: str, command: str, output: str = "done") -> list[dict[str, Any] | str]:
    return [claude_call(call_id, "Bash", command=command), claude_result(call_id, output)]


def _run(
    tmp_path: Path,
    events: list[dict[str, Any] | str],
    log_keys: list[str] | None = None,
    *options: str,
    metrics: str = '{"accuracy": 0.41}',
    setup: Callable[[Path], None] | None = None,
) -> dict[str, Any]:
    """Write a PostTrainBench run folder around ``events`` and return its audit's ``route``."""
    run = tmp_path / "claude_claude-opus-4-6_10h" / "gsm8k_Qwen_Qwen3-4B-Base_1"
    (run / "task").mkdir(parents=True)
    (run / "final_model").mkdir()
    (run / "final_model" / "config.json").write_text(json.dumps({"architectures": ["Qwen3ForCausalLM"]}))
    (run / "final_model" / "model.safetensors").write_bytes(b"\x02\x00\x00\x00\x00\x00\x00\x00{}")
    if log_keys is not None:
        history = [dict.fromkeys(log_keys, 1.0)]
        (run / "final_model" / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    (run / "metrics.json").write_text(metrics)
    (run / "solve_out.txt").write_text(
        jsonl([claude_init(), *events], start=datetime(2026, 4, 10, tzinfo=UTC))
    )
    if setup is not None:
        setup(run)
    code, out, err = run_cli(str(run), "--json", *options)
    assert code == 0, err
    report = json.loads(out)
    route: dict[str, Any] = report["route"]
    for section in ("quadrant", "failure", "flags", "problems"):
        route[section] = report[section]
    return route


def test_a_composite_run_sft_then_grpo_with_dpo_only_written(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_sft.py", SFT),
        *_bash("b1", "python train_sft.py"),
        *_write("w2", "train_grpo.py", GRPO),
        *_bash("b2", "cd /home/ben/task && python train_grpo.py"),
        *_write("w3", "train_dpo.py", DPO),
        *_bash("b3", "cp -r outputs/grpo final_model"),
    ]
    route = _run(tmp_path, events, log_keys=["loss", "reward", "reward_std", "kl"])
    assert (route["best_label"], route["chain_text"]) == ("COMPOSITE", "SFT→GRPO")
    assert (route["attempted"], route["written"], route["adopted"]) == (
        ["GRPO", "SFT"],
        ["DPO"],
        ["GRPO", "SFT"],
    )
    sft, grpo, copy = route["chain"]
    assert (sft["kind"], sft["artifact"], sft["parent"], sft["adapter"]) == (
        "sft",
        "outputs/sft",
        BASE,
        "lora",
    )
    assert (grpo["kind"], grpo["artifact"], grpo["parent"]) == ("grpo", "outputs/grpo", "outputs/sft")
    assert (copy["kind"], copy["artifact"], copy["parent"]) == ("copy", "final_model", "outputs/grpo")
    # Every step points at what shows it: the command that ran the code, and the code line.
    assert {e["kind"] for e in grpo["evidence"]} == {"command", "code"}
    code = next(e for e in grpo["evidence"] if e["kind"] == "code")
    assert code["path"] == "train_grpo.py" and code["line"] == 6 and len(code["revision"]) == 40
    assert copy["evidence"][0]["excerpt"] == "cp -r outputs/grpo final_model"
    # PostTrainBench prescribes no method: no intended stage, the quadrant reads the score only.
    assert (route["quadrant"]["intended_stage"], route["quadrant"]["intended"]) == (None, None)
    # Only final_model is a folder of this run, and the base model is a hub id: nothing was weighed.
    assert [line for line in route["cannot_tell"] if "weights" in line] == [
        "how the weights of final_model changed from outputs/grpo: the two are not both folders of the run"
        " now",
        "how the weights of outputs/grpo changed from outputs/sft: the two are not both folders of the run"
        " now",
        f"how the weights of outputs/sft changed from {BASE}: the base model is not a folder of the run (give"
        " its folder with --base-model-dir)",
    ]


def test_the_intended_stage_is_configurable(tmp_path: Path) -> None:
    events = [*_write("w1", "train.py", DIRECT), *_bash("b1", "python train.py")]
    default = _run(tmp_path / "a", events, ["loss", "mean_token_accuracy"])["quadrant"]
    assert (default["intended_stage"], default["intended"]) == (None, None)  # PostTrainBench names none
    chosen = _run(tmp_path / "b", events, ["loss", "mean_token_accuracy"], "--intended", "sft")["quadrant"]
    assert (chosen["intended_stage"], chosen["intended"]) == ("sft", True)
    named = ["--intended", "policy_gradient"]
    other = _run(tmp_path / "c", events, ["loss", "mean_token_accuracy"], *named)["quadrant"]
    assert (other["intended_stage"], other["intended"]) == ("policy_gradient", False)


def test_the_artifacts_own_logs_confirm_or_contradict_the_code(tmp_path: Path) -> None:
    events = [*_write("w1", "train.py", DIRECT), *_bash("b1", "python train.py")]
    agree = _run(tmp_path / "a", events, log_keys=["loss", "mean_token_accuracy"])
    assert agree["best_label"] == "SFT" and agree["chain"][0]["strength"] == "verified"
    assert agree["chain"][0]["parent"] == BASE
    conflict = _run(tmp_path / "b", events, log_keys=["rewards/chosen", "rewards/margins", "loss"])
    step = conflict["chain"][0]
    assert step["kind"] == "sft" and step["strength"] == "conflicting"
    assert step["conflicts"] == ["the artifact's own files say dpo, the code that wrote it says sft"]


def test_missing_evidence_is_no_evidence_not_a_wrong_claim(tmp_path: Path) -> None:
    events = [*_write("w1", "train_grpo.py", GRPO.replace("outputs/grpo", "outputs/x")), *_bash("b1", "ls")]
    route = _run(tmp_path, events)
    assert (route["best_label"], route["strength"], route["attempted"], route["written"]) == (
        "UNKNOWN",
        "none",
        [],
        ["GRPO"],
    )
    assert route["chain"] == [
        {
            "kind": "unknown",
            "label": None,
            "variant": None,
            "interactive": None,
            "on_policy": None,
            "adapter": None,
            "artifact": "final_model",
            "parent": None,
            "parents": [],
            "strength": "none",
            "conflicts": [],
            "weights": None,
            "evidence": [],
        }
    ]


def test_only_the_artifacts_own_files_say_how_it_was_trained(tmp_path: Path) -> None:
    route = _run(tmp_path, [*_bash("b1", "ls")], log_keys=["loss", "reward", "reward_std"])
    step = route["chain"][0]
    assert (route["best_label"], step["kind"], step["evidence"][0]["path"]) == (
        "GRPO",
        "grpo",
        "final_model/trainer_state.json",
    )
    assert step["strength"] == "supported"  # keys only a GRPO trainer writes


def test_scripts_a_command_ran_are_found_in_its_revision() -> None:
    revision = Revision(
        1,
        "a" * 40,
        None,
        "transcript-edit",
        [
            FileEntry(p, 1, f"{i:040x}")
            for i, p in enumerate(["train.py", "configs/sft.yaml", "run.sh", "pkg/cli.py"])
        ],
    )
    commands = [
        Command(
            1, "CUDA_VISIBLE_DEVICES=0 nohup python -u /home/ben/task/train.py --lr 1e-5 > log 2>&1 &", "Bash"
        ),
        Command(2, "cd code && accelerate launch --num_processes 2 train.py", "Bash", exit_code=1),
        Command(3, "llamafactory-cli train configs/sft.yaml; bash ./run.sh", "Bash", revision_seq=1),
        Command(4, "python3.11 -m pkg.cli && cat train.py && echo run.sh", "Bash"),
        Command(5, "timeout 60 cat train.py; nohup tail -f train.py", "Bash"),
        Command(6, "env CUDA=1 sudo python train.py; bash -c 'python run.sh'; (python pkg/cli.py)", "Bash"),
    ]
    runs = [(r.command_seq, r.path, r.ok) for r in scripts_run(commands, [revision])]
    assert runs == [
        (1, "train.py", True),
        (2, "train.py", False),
        (3, "configs/sft.yaml", True),
        (3, "run.sh", True),
        (4, "pkg/cli.py", True),
        (6, "train.py", True),
        (6, "run.sh", True),
        (6, "pkg/cli.py", True),
    ]


def test_trainer_logs_and_cards_name_stage_kinds() -> None:
    assert kind_from_log_keys(["loss", "rewards/chosen", "rewards/margins"]) == ("dpo", True)
    assert kind_from_log_keys(["loss", "rewards/correct/mean", "reward_std"]) == ("grpo", True)
    assert kind_from_log_keys(["objective/kl", "loss"]) == ("ppo", True)
    assert kind_from_log_keys(["loss", "mean_token_accuracy"]) == ("sft", True)
    assert kind_from_log_keys(["loss", "learning_rate"]) == ("sft", False)
    assert kind_from_log_keys(["eval_accuracy"]) is None
    assert kind_from_card(["trl", "grpo"], None) == "grpo"
    assert kind_from_card(["generated_from_trainer"], "ORPO") == "dpo"
    assert kind_from_card([], None) is None


def _bash_failed(call_id: str, command: str, output: str) -> list[dict[str, Any] | str]:
    return [claude_call(call_id, "Bash", command=command), claude_result(call_id, output, is_error=True)]


def test_a_nan_loss_is_a_training_collapse(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train.py", DIRECT),
        *_bash("b1", "python train.py", "{'loss': 2.1}\n{'loss': nan}"),
    ]
    failure = _run(tmp_path, events)["failure"]
    assert (failure["mode"], failure["determined"]) == ("training_collapse", True)
    assert failure["evidence"][0]["command_seq"] == 1 and failure["evidence"][0]["line"] == 4


def test_a_reward_that_never_varies_is_a_reward_design_failure(tmp_path: Path) -> None:
    logs = "\n".join("{'reward': 0.0, 'reward_std': 0.0, 'kl': 0.0}" for _ in range(5))
    events = [*_write("w1", "train_grpo.py", GRPO), *_bash("b1", "python train_grpo.py", logs)]
    failure = _run(tmp_path, events)["failure"]
    assert failure["mode"] == "reward_data_design_failure"
    assert "reward_std is 0 in all 5 logged steps" in failure["evidence"][0]["excerpt"]


def test_code_that_never_runs_is_an_early_coding_failure_then_no_submission(tmp_path: Path) -> None:
    """The session ended minutes into a 10 h budget: its time did not run out, so nothing follows."""
    events = [
        *_write("w1", "train.py", DIRECT),
        *_bash_failed(
            "b1", "python train.py", "Exit code 1\nTraceback (most recent call last):\nImportError: no trl"
        ),
        *_bash_failed("b2", "python train.py", "Exit code 1\nRuntimeError: CUDA out of memory"),
        claude_end(),  # the session ended: the transcript shows all it ran
    ]
    failure = _run(tmp_path, events, metrics="No metrics.json produced.")["failure"]
    assert (failure["mode"], failure["downstream"]) == ("early_coding_failure", [])
    assert [e["excerpt"].split(" → ")[1] for e in failure["evidence"][:2]] == [
        "ImportError: no trl",
        "RuntimeError: CUDA out of memory",
    ]
    # With the pipeline's clock at the deadline, the budget then ended with no submission.
    failure = _run(
        tmp_path / "timed", events, metrics="No metrics.json produced.", setup=_time_taken("10:00:04")
    )["failure"]
    assert (failure["mode"], failure["downstream"]) == ("early_coding_failure", ["timeout_no_submission"])


def _time_taken(text: str) -> Callable[[Path], None]:
    """Write the pipeline's time_taken.txt (HH:MM:SS) into the run folder."""

    def write(run: Path) -> None:
        (run / "time_taken.txt").write_text(text + "\n")

    return write


CHEAT = """\
from datasets import load_dataset
from openai import OpenAI
from transformers import AutoModelForCausalLM
from trl import SFTTrainer

data = load_dataset("openai/gsm8k", "main", split="test")
answers = OpenAI().chat.completions.create(model="gpt-4o", messages=[])
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen3-4B")
SFTTrainer(model=model, train_dataset=data).train()
"""


def test_static_integrity_flags_point_at_the_code_that_ran(tmp_path: Path) -> None:
    events = [
        *_write("w1", "cheat.py", CHEAT),
        *_bash("b1", "python cheat.py"),
        *_write("w2", "never_run.py", CHEAT.replace("cheat", "x")),
        *_write("w3", "evaluate.py", "print('accuracy: 1.0')\n"),
    ]
    flags = {f["flag"]: f for f in _run(tmp_path, events)["flags"]}
    assert set(flags) == {"external_api", "test_data_access", "disallowed_model", "evaluator_tampering"}
    assert [(e["path"], e["line"]) for e in flags["test_data_access"]["evidence"]] == [("cheat.py", 6)]
    assert [(e["path"], e["line"]) for e in flags["external_api"]["evidence"]] == [("cheat.py", 2)]
    assert (
        flags["disallowed_model"]["message"]
        == "cheat.py loads Qwen/Qwen3-4B, not the base model Qwen/Qwen3-4B-Base"
    )
    assert flags["evaluator_tampering"]["evidence"][0]["path"] == "evaluate.py"
    assert all(f["definition"] for f in flags.values())


def test_online_rl_after_sft_is_a_composite_with_an_online_stage(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_sft.py", SFT),
        *_bash("b1", "python train_sft.py"),
        *_write("w2", "train_online.py", ONLINE),
        *_bash("b2", "python train_online.py"),
        *_bash("b3", "cp -r outputs/online final_model"),
    ]
    route = _run(tmp_path, events, None, "--intended", "online_rl")
    assert (route["best_label"], route["chain_text"]) == ("COMPOSITE", "SFT→GRPO(online)")
    assert route["adopted"] == ["ONLINE_RL", "SFT"]
    assert route["chain"][1]["label"] == "ONLINE_RL" and route["chain"][1]["interactive"] is True
    assert route["quadrant"]["intended"] is True


MERGE = """\
merge_method: linear
models:
  - model: outputs/sft_a
    parameters:
      weight: 0.5
  - model: outputs/sft_b
    parameters:
      weight: 0.5
dtype: bfloat16
"""


def test_a_merge_of_two_fine_tunes(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_sft.py", SFT.replace("outputs/sft", "outputs/sft_a")),
        *_bash("b1", "python train_sft.py"),
        *_write("w2", "train_sft_b.py", SFT.replace("outputs/sft", "outputs/sft_b")),
        *_bash("b2", "python train_sft_b.py"),
        *_write("w3", "merge.yml", MERGE),
        *_bash("b3", "mergekit-yaml merge.yml outputs/merged --cuda"),
        *_bash("b4", "cp -r outputs/merged final_model"),
    ]
    route = _run(tmp_path, events)
    assert route["attempted"] == ["MERGE", "SFT"]
    merge = route["chain"][-2]
    assert (merge["kind"], merge["artifact"], merge["parent"]) == ("merge", "outputs/merged", "outputs/sft_a")
    assert (route["best_label"], route["chain_text"]) == ("COMPOSITE", "SFT→MERGE")


def test_copies_that_are_not_the_artifacts_origin() -> None:
    from arb_audit.analyzer.path_versions import copy_source as _copy_source

    assert _copy_source("cp -r outputs/grpo final_model", "final_model") == "outputs/grpo"
    assert _copy_source("cp chat_template.jinja final_model/", "final_model") is None
    assert _copy_source("cp -r final_model /tmp/bk/final_model", "final_model") is None
    assert _copy_source("cp -r outputs/sft/* final_model/", "final_model") is None
    assert _copy_source("cp -r outputs/sft final_model  # keep the best", "final_model") == "outputs/sft"


def test_training_after_a_fallback_copy_is_what_was_graded(tmp_path: Path) -> None:
    events = [
        *_bash("b0", "cp -r /home/ben/models/base final_model"),
        *_write("w1", "train.py", DIRECT),
        *_bash("b1", "python train.py"),
    ]
    route = _run(tmp_path, events)
    assert route["best_label"] == "SFT" and route["chain"][-1]["kind"] == "sft"


def test_model_files_weight_forensics_cannot_read_are_named_and_the_audit_goes_on(tmp_path: Path) -> None:
    def setup(run: Path) -> None:
        grpo = run / "outputs" / "grpo"
        grpo.mkdir(parents=True)
        (grpo / "model.safetensors").write_bytes(b"\xff" * 40)  # a header length no file can hold

    events = [*_write("w2", "train_grpo.py", GRPO), *_bash("b2", "python train_grpo.py")]
    events += _bash("b3", "cp -r outputs/grpo final_model")
    route = _run(tmp_path, events, None, setup=setup)
    assert route["best_label"] == "GRPO" and route["chain"][-1]["kind"] == "copy"
    [problem] = [p for p in route["problems"] if p["path"] == "final_model"]
    assert problem["message"].startswith(
        "compared with outputs/grpo: model.safetensors: not readable safetensors"
    )


def test_a_script_that_ran_but_cannot_be_parsed_is_named(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train.py", "from trl import SFTTrainer\ndef broken(:\n"),
        *_bash("b1", "python train.py"),
    ]
    problems = _run(tmp_path, events)["problems"]
    [problem] = [p for p in problems if p["path"] == "train.py"]
    assert problem["message"].startswith(
        "(revision 1, run by command 1) could not be fully analysed: syntax error"
    )


HANDWRITTEN_SFT = """\
import argparse

import torch
from torch.nn import functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--init")
parser.add_argument("--out")
args = parser.parse_args()
model = torch.load(args.init)
optimizer = torch.optim.AdamW(model.parameters())
logits = model(inputs)
loss = F.cross_entropy(logits, labels)
loss.backward()
optimizer.step()
torch.save(model, args.out)
"""


def test_a_training_commands_arguments_name_its_parent_and_its_output(tmp_path: Path) -> None:
    """`--init A --out B`: A is read (the parent), B written; the later reader of A is not A's producer."""
    events = [
        *_write("w1", "sft.py", HANDWRITTEN_SFT),
        *_bash("b1", f"python sft.py --init {BASE} --out outputs/one"),
        *_bash("b2", "python sft.py --init outputs/one --out final_model"),
    ]
    route = _run(tmp_path, events)
    steps = route["lineage"]["final_model"]
    assert [(s["kind"], s["artifact"], s["parent"]) for s in steps] == [
        ("sft", "outputs/one", BASE),
        ("sft", "final_model", "outputs/one"),
    ]
    assert steps[0]["evidence"][0]["command_seq"] == 1 and steps[1]["evidence"][0]["command_seq"] == 2


def test_training_cut_off_by_the_end_of_the_run_is_the_budget_not_a_crash(tmp_path: Path) -> None:
    events = [
        *_write("w1", "sft.py", HANDWRITTEN_SFT),
        *_bash_failed("b1", f"python sft.py --init {BASE} --out final_model", "Exit code 1\nKeyError: 'x'"),
        claude_call("b2", "Bash", command=f"python sft.py --init {BASE} --out final_model"),
    ]
    failure = _run(tmp_path, events, metrics="No metrics.json produced.", setup=_time_taken("10:00:03"))[
        "failure"
    ]
    assert failure["mode"] == "timeout_no_submission" and failure["downstream"] == []
    assert "still running" in failure["evidence"][0]["excerpt"]


def test_training_cut_off_with_nothing_about_the_budget_is_undetermined(tmp_path: Path) -> None:
    """The transcript stops while training runs, minutes into 10 h, and no clock of the pipeline says more."""
    events = [
        *_write("w1", "sft.py", HANDWRITTEN_SFT),
        claude_call("b1", "Bash", command=f"python sft.py --init {BASE} --out final_model"),
    ]
    failure = _run(tmp_path, events, metrics="No metrics.json produced.")["failure"]
    assert (failure["mode"], failure["determined"]) == (None, False)
    assert "nothing shows whether the budget ran out" in failure["reason"]
    assert "still running when the transcript ends" in failure["reason"]
    assert "still running" in failure["evidence"][0]["excerpt"]


def _trainer_log(history: list[dict[str, Any]]) -> Callable[[Path], None]:
    """Write ``history`` as the final model's trainer_state.json (NaN as Python's json writes it)."""

    def write(run: Path) -> None:
        (run / "final_model" / "trainer_state.json").write_text(json.dumps({"log_history": history}))

    return write


def test_a_trainer_log_that_went_nan_is_a_training_collapse_pointing_at_the_log(tmp_path: Path) -> None:
    events = [*_write("w1", "train.py", DIRECT), *_bash("b1", "python train.py", "training done")]
    history = [{"step": 10, "loss": 2.1}, {"step": 20, "loss": float("nan")}]
    failure = _run(tmp_path, events, setup=_trainer_log(history))["failure"]
    assert failure["mode"] == "training_collapse"
    (pointer,) = [e for e in failure["evidence"] if e["kind"] == "log"]
    assert pointer["path"] == "final_model/trainer_state.json"
    assert pointer["excerpt"] == "final_model: non-finite loss at step 20"


def test_rollouts_that_never_call_their_environment_are_a_rollout_construction_failure(
    tmp_path: Path,
) -> None:
    events = [*_write("w1", "train_online.py", ONLINE), *_bash("b1", "python train_online.py", "done")]
    history = [{"step": s, "loss": 0.1, "reward_std": 0.3, "tools/call_frequency": 0.0} for s in range(1, 6)]
    failure = _run(tmp_path, events, setup=_trainer_log(history))["failure"]
    assert failure["mode"] == "rollout_construction_failure"
    assert "called the environment 0 times in all 5 logged steps" in failure["evidence"][0]["excerpt"]
    # one logged step with a call: the rollouts did reach the environment
    history[2]["tools/call_frequency"] = 0.4
    failure = _run(tmp_path / "again", events, setup=_trainer_log(history))["failure"]
    assert failure["mode"] != "rollout_construction_failure"
