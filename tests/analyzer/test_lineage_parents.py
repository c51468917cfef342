"""Where a lineage step started from: the model a script trains (not its tokenizer), every model a merge
combines, and only what existed before the command that made the step."""

from __future__ import annotations

from pathlib import Path

from arb_audit.analyzer.routes import _loaded_model
from tests.analyzer.test_routes import BASE, MERGE, SFT, _bash, _run, _write
from tests.test_cli import run_cli

GRPO_TOKENIZER_FROM_BASE = f"""\
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig, GRPOTrainer

BASE = "{BASE}"
tokenizer = AutoTokenizer.from_pretrained(BASE)
model = AutoModelForCausalLM.from_pretrained("outputs/sft")


def correct(completions, answer, **kwargs):
    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]


trainer = GRPOTrainer(model=model, processing_class=tokenizer, reward_funcs=correct,
                      args=GRPOConfig(output_dir="outputs/grpo"))
trainer.train()
trainer.save_model("outputs/grpo")
"""


def test_a_tokenizer_from_the_base_does_not_make_the_base_the_parent(tmp_path: Path) -> None:
    events = [
        *_write("w1", "train_sft.py", SFT),
        *_bash("b1", "python train_sft.py"),
        *_write("w2", "train_grpo.py", GRPO_TOKENIZER_FROM_BASE),
        *_bash("b2", "python train_grpo.py"),
        *_bash("b3", "cp -r outputs/grpo final_model"),
    ]
    route = _run(tmp_path, events)
    assert [(s["kind"], s["artifact"], s["parent"]) for s in route["chain"]] == [
        ("sft", "outputs/sft", BASE),
        ("grpo", "outputs/grpo", "outputs/sft"),
        ("copy", "final_model", "outputs/grpo"),
    ]
    assert route["chain_text"] == "SFT→GRPO"


def test_what_a_script_loads_its_model_from() -> None:
    tokenizer_literal = f'tok = AutoTokenizer.from_pretrained("{BASE}")\nGRPOTrainer(model="outputs/sft")\n'
    assert _loaded_model(tokenizer_literal, BASE) == "outputs/sft"
    processor = (
        f'p = AutoProcessor.from_pretrained("{BASE}")\n'
        'm = Qwen2VLForConditionalGeneration.from_pretrained("outputs/sft")\n'
    )
    assert _loaded_model(processor, BASE) == "outputs/sft"
    bound = 'INIT = "outputs/dpo"\nmodel = AutoModelForCausalLM.from_pretrained(INIT)\n'
    assert _loaded_model(bound, BASE) == "outputs/dpo"
    # The base model, when it is what the script trains, or when nothing else says.
    assert _loaded_model(f'SFTTrainer(model="{BASE}")\n', BASE) == BASE
    assert _loaded_model(f'print("{BASE}")\nmodel = torch.load(args.init)\n', BASE) == BASE
    assert _loaded_model("base_model: outputs/sft\nstage: dpo\n", BASE) == "outputs/sft"
    assert _loaded_model(f'tok = AutoTokenizer.from_pretrained("{BASE}")\n', None) is None


def test_a_merge_records_every_parent_and_the_lineage_holds_each_branch(tmp_path: Path) -> None:
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
    steps = [(s["kind"], s["artifact"], s["parents"]) for s in route["chain"]]
    assert steps == [
        ("sft", "outputs/sft_a", [BASE]),
        ("sft", "outputs/sft_b", [BASE]),
        ("merge", "outputs/merged", ["outputs/sft_a", "outputs/sft_b"]),
        ("copy", "final_model", ["outputs/merged"]),
    ]
    assert route["chain"][2]["parent"] == "outputs/sft_a"  # the field older readers know stays
    assert (route["best_label"], route["chain_text"]) == ("COMPOSITE", "SFT→MERGE")
    assert route["lineage"]["final_model"] == route["chain"]
    # The readable report shows both branches.
    run = tmp_path / "claude_claude-opus-4-6_10h" / "gsm8k_Qwen_Qwen3-4B-Base_1"
    code, out, err = run_cli(str(run))
    assert code == 0, err
    assert "merge → outputs/merged from outputs/sft_a + outputs/sft_b" in " ".join(out.split())
    assert "sft → outputs/sft_b from" in " ".join(out.split())


WEIGHT_AVERAGE = """\
from safetensors.torch import load_file, save_file

a = load_file("outputs/sft/model.safetensors")
b = load_file("outputs/grpo/model.safetensors")
merged = {k: (a[k] + b[k]) / 2 for k in a}
OUT = "outputs/merged"
save_file(merged, f"{OUT}/model.safetensors")
"""

GRPO_ON_SFT = """\
from trl import GRPOConfig, GRPOTrainer

def correct(completions, answer, **kwargs):
    return [1.0 if a in c else 0.0 for c, a in zip(completions, answer)]

trainer = GRPOTrainer(model="outputs/sft", reward_funcs=correct, args=GRPOConfig(output_dir="outputs/grpo"))
trainer.train()
"""


def test_a_weight_average_of_a_model_and_its_own_descendant(tmp_path: Path) -> None:
    """Both branches start at the SFT model: it is in the lineage once, and the chain names each branch."""
    events = [
        *_write("w1", "train_sft.py", SFT),
        *_bash("b1", "python train_sft.py"),
        *_write("w2", "train_grpo.py", GRPO_ON_SFT),
        *_bash("b2", "python train_grpo.py"),
        *_write("w3", "merge.py", WEIGHT_AVERAGE),
        *_bash("b3", "python merge.py"),
        *_bash("b4", "cp -r outputs/merged final_model"),
    ]
    route = _run(tmp_path, events)
    steps = [(s["kind"], s["artifact"], s["parents"]) for s in route["chain"]]
    assert steps == [
        ("sft", "outputs/sft", [BASE]),
        ("grpo", "outputs/grpo", ["outputs/sft"]),
        ("merge", "outputs/merged", ["outputs/sft", "outputs/grpo"]),
        ("copy", "final_model", ["outputs/merged"]),
    ]
    assert route["chain_text"] == "(SFT + SFT→GRPO)→MERGE(weight_average)"
    assert route["adopted"] == ["GRPO", "MERGE", "SFT"]


DPO_NAMING_A_FOLDER = f"""\
from trl import DPOConfig, DPOTrainer

previous_runs = ["outputs/best"]
trainer = DPOTrainer(model="{BASE}", args=DPOConfig(output_dir="outputs/dpo"), train_dataset=None)
trainer.train()
"""

GRPO_ON_BEST = GRPO_ON_SFT.replace('model="outputs/sft"', 'model="outputs/best"')


def test_a_later_script_that_names_a_parent_is_not_its_producer(tmp_path: Path) -> None:
    """outputs/best was copied before the GRPO run that read it; a DPO script written after only names it."""
    events = [
        *_write("w1", "train_sft.py", SFT),
        *_bash("b1", "python train_sft.py"),
        *_bash("b2", "cp -r outputs/sft outputs/best"),
        *_write("w2", "train_grpo.py", GRPO_ON_BEST),
        *_bash("b3", "python train_grpo.py"),
        *_bash("b4", "cp -r outputs/grpo final_model"),
        *_write("w3", "train_dpo.py", DPO_NAMING_A_FOLDER),
        *_bash("b5", "python train_dpo.py"),
    ]
    route = _run(tmp_path, events)
    assert [(s["kind"], s["artifact"], s["parent"]) for s in route["chain"]] == [
        ("sft", "outputs/sft", BASE),
        ("copy", "outputs/best", "outputs/sft"),
        ("grpo", "outputs/grpo", "outputs/best"),
        ("copy", "final_model", "outputs/grpo"),
    ]
    assert route["chain_text"] == "SFT→GRPO" and "DPO" not in route["adopted"]
