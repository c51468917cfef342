"""Audit a large recorded run cold and warm, with the share of each part, against plain baselines.

Run on demand: ``python benchmarks/bench_audit.py [--scale S] [--keep DIR]`` (default scale 1: 300
code revisions, 500 distinct code blobs, 150 submissions, three ~500 MB safetensors models).

A recording is written the way ``arb-audit record`` writes one, through the runner's own classes
(``Recorder`` snapshots the workspace into ``run.revisions.git`` after every edit; submissions go into
the hash-chained ledger with the manifest ``hash_artifact`` makes) and a Claude Code transcript of
the agent's Write and Bash calls. Its code is TRL training scripts (SFTTrainer, DPOTrainer,
GRPOTrainer) edited revision after revision; its models are a base, an SFT of it and a GRPO of the
SFT (the lineage base → sft → grpo, each weighed against its parent). ``arb-audit RUN_DIR`` is then
run as a user runs it, cold (no store beside the run, an empty per-user cache, where weight
comparisons are kept) and warm (what the first audit left: its audit is read back); and the audit
again in a process that times it whole and part by part (exclusive wall time of the real phases; it
imports every part up front, so its warm figure holds imports the command skips). Baselines measured
in the same run:
reading and SHA-256 of the models' bytes, and ``ast.parse`` of every code blob. Goals (issue 5): cold
under 10 s and warm under 1 s on 2 cores. The operating system's page cache is not dropped (that
needs root): "cold" means arb-audit's own caches are empty.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a file: the project's packages come from the checkout

REVISIONS = 300
BLOBS = 500
SUBMISSIONS = 150
MODEL_BYTES = 500 * 1024**2
"""Size of each of the three models (bf16 weights) at scale 1."""
SCRIPTS = 36
"""Code files of the workspace, edited in turn."""
TASK = "gsm8k"
BASE_SCORE = 31.0

# --------------------------------------------------------------------------------------------------
# The agent's code: TRL scripts with the variations an agent's edits make.

SFT = '''"""Supervised fine-tuning of {model} on the task's solutions ({note})."""

import argparse

import torch
from datasets import load_dataset
from peft import LoraConfig
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import SFTConfig, SFTTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--model_name_or_path", default="models/base")
parser.add_argument("--output_dir", default="output/sft")
parser.add_argument("--data", default="data/train.jsonl")
parser.add_argument("--epochs", type=float, default={epochs})
args = parser.parse_args()

tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)


def to_text(row):
    messages = [
        {{"role": "system", "content": "{system}"}},
        {{"role": "user", "content": row["question"]}},
        {{"role": "assistant", "content": row["answer"]}},
    ]
    return {{"text": tokenizer.apply_chat_template(messages, tokenize=False)}}


dataset = load_dataset("json", data_files=args.data, split="train").map(to_text)
dataset = dataset.train_test_split(test_size={test_size}, seed={seed})
config = SFTConfig(
    output_dir=args.output_dir,
    num_train_epochs=args.epochs,
    per_device_train_batch_size={batch},
    gradient_accumulation_steps={accum},
    learning_rate={lr},
    lr_scheduler_type="{scheduler}",
    warmup_ratio={warmup},
    max_seq_length={seq},
    bf16=True,
    logging_steps=10,
    save_strategy="no",
    report_to=[],
)
peft_config = {peft}
trainer = SFTTrainer(
    model=model,
    args=config,
    train_dataset=dataset["train"],
    eval_dataset=dataset["test"],
    processing_class=tokenizer,
    peft_config=peft_config,
)
trainer.train()
{save}
tokenizer.save_pretrained(args.output_dir)
print("saved", args.output_dir)
'''

GRPO = '''"""GRPO on the task's questions with a verifiable reward ({note})."""

import argparse
import re

from datasets import load_dataset
from trl import GRPOConfig, GRPOTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--model_name_or_path", default="output/sft")
parser.add_argument("--output_dir", default="output/grpo")
parser.add_argument("--data", default="data/train.jsonl")
args = parser.parse_args()

ANSWER = re.compile(r"{pattern}")


def extract(text):
    found = ANSWER.findall(text)
    return found[-1].replace(",", "") if found else None


def correctness_reward(prompts, completions, answer, **kwargs):
    texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
    return [{right} if extract(t) == a else {wrong} for t, a in zip(texts, answer)]


def format_reward(completions, **kwargs):
    texts = [c[0]["content"] if isinstance(c, list) else c for c in completions]
    return [{fmt} if "####" in t else 0.0 for t in texts]


dataset = load_dataset("json", data_files=args.data, split="train")
dataset = dataset.map(lambda row: {{"prompt": [{{"role": "user", "content": row["question"]}}],
                                    "answer": row["answer"].split("####")[-1].strip()}})
config = GRPOConfig(
    output_dir=args.output_dir,
    learning_rate={lr},
    num_generations={generations},
    per_device_train_batch_size={batch},
    gradient_accumulation_steps={accum},
    max_prompt_length={prompt_len},
    max_completion_length={completion_len},
    beta={beta},
    temperature={temperature},
    num_train_epochs=1,
    bf16=True,
    logging_steps=5,
    save_strategy="no",
    report_to=[],
)
trainer = GRPOTrainer(
    model=args.model_name_or_path,
    reward_funcs=[correctness_reward, format_reward],
    args=config,
    train_dataset=dataset,
)
trainer.train()
trainer.save_model(args.output_dir)
print("saved", args.output_dir)
'''

DPO = '''"""DPO on preference pairs sampled from the SFT model ({note})."""

import argparse

from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import DPOConfig, DPOTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--model_name_or_path", default="output/sft")
parser.add_argument("--output_dir", default="output/dpo")
parser.add_argument("--pairs", default="data/pairs.jsonl")
args = parser.parse_args()

model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
reference = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
pairs = load_dataset("json", data_files=args.pairs, split="train")
pairs = pairs.filter(lambda row: row["chosen"] != row["rejected"] and len(row["chosen"]) < {max_chars})
config = DPOConfig(
    output_dir=args.output_dir,
    beta={beta},
    loss_type="{loss}",
    learning_rate={lr},
    per_device_train_batch_size={batch},
    gradient_accumulation_steps={accum},
    max_length={seq},
    num_train_epochs={epochs},
    bf16=True,
    report_to=[],
)
trainer = DPOTrainer(model=model, ref_model=reference, args=config, train_dataset=pairs,
                     processing_class=tokenizer)
trainer.train()
trainer.save_model(args.output_dir)
'''

HELPER = '''"""{what} ({note})."""

import json
import re
from pathlib import Path

PATTERN = re.compile(r"{pattern}")


def read_rows(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def normalise(text):
    text = text.strip().lower()
    return re.sub(r"\\s+", " ", text)[:{limit}]


def main(src="data/raw.jsonl", dst="data/{dst}.jsonl"):
    rows = read_rows(src)
    kept = [r for r in rows if PATTERN.search(r.get("answer", ""))]
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "w") as out:
        for row in kept[: {keep}]:
            out.write(json.dumps({{"question": normalise(row["question"]), "answer": row["answer"]}}) + "\\n")
    print(len(kept), "rows kept of", len(rows))


if __name__ == "__main__":
    main()
'''

SUBMIT = '''"""Send a model folder to the grading server and print its answer."""

import json
import os
import sys
import urllib.request

body = json.dumps({"model_path": sys.argv[1]}).encode()
request = urllib.request.Request(os.environ["GRADING_SERVER_URL"] + "/submit", data=body,
                                 headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(request, timeout=7200).read().decode())
'''

LORA = 'LoraConfig(r={r}, lora_alpha={alpha}, lora_dropout=0.05, target_modules="all-linear")'


def variant(kind: str, serial: int, rng: random.Random) -> str:
    """Return one version of a script of ``kind``: its hyperparameters and details as an agent edits them."""
    note = f"attempt {serial}"
    if kind == "sft":
        lora = rng.random() < 0.4
        return SFT.format(
            model="the base model",
            note=note,
            epochs=rng.choice([1, 2, 3]),
            system=rng.choice(["Solve step by step.", "You are a careful math tutor.", "Answer briefly."]),
            test_size=rng.choice([0.02, 0.05, 0.1]),
            seed=rng.randrange(100),
            batch=rng.choice([2, 4, 8]),
            accum=rng.choice([2, 4, 8, 16]),
            lr=rng.choice(["1e-5", "2e-5", "5e-6", "1e-4"]),
            scheduler=rng.choice(["cosine", "linear", "constant_with_warmup"]),
            warmup=rng.choice([0.0, 0.03, 0.1]),
            seq=rng.choice([1024, 2048, 4096]),
            peft=LORA.format(r=rng.choice([8, 16, 64]), alpha=rng.choice([16, 32])) if lora else "None",
            save="trainer.model = trainer.model.merge_and_unload()\ntrainer.save_model(args.output_dir)"
            if lora
            else "trainer.save_model(args.output_dir)",
        )
    if kind == "grpo":
        return GRPO.format(
            note=note,
            pattern=rng.choice([r"####\s*(-?[\d,\.]+)", r"(-?\d+(?:\.\d+)?)", r"\\boxed\{(.+?)\}"]),
            right=rng.choice(["1.0", "2.0"]),
            wrong=rng.choice(["0.0", "-0.5"]),
            fmt=rng.choice(["0.1", "0.2", "0.5"]),
            lr=rng.choice(["1e-6", "5e-7", "3e-6"]),
            generations=rng.choice([4, 8, 16]),
            batch=rng.choice([4, 8, 16]),
            accum=rng.choice([1, 2, 4]),
            prompt_len=rng.choice([256, 512]),
            completion_len=rng.choice([256, 512, 1024]),
            beta=rng.choice([0.0, 0.04, 0.1]),
            temperature=rng.choice([0.7, 0.9, 1.0]),
        )
    if kind == "dpo":
        return DPO.format(
            note=note,
            max_chars=rng.choice([2000, 4000, 8000]),
            beta=rng.choice([0.05, 0.1, 0.3]),
            loss=rng.choice(["sigmoid", "ipo", "hinge"]),
            lr=rng.choice(["5e-7", "1e-6", "5e-6"]),
            batch=rng.choice([2, 4]),
            accum=rng.choice([4, 8]),
            seq=rng.choice([1024, 2048]),
            epochs=rng.choice([1, 2]),
        )
    return HELPER.format(
        what=rng.choice(["Clean the training data", "Build preference pairs", "Split the data"]),
        note=note,
        pattern=rng.choice([r"####\s*-?\d", r"\d+", r"answer"]),
        limit=rng.choice([2000, 4000, 8000]),
        dst=rng.choice(["train", "clean", "pairs"]),
        keep=rng.choice([1000, 5000, 7473]),
    )


def script_plan(count: int) -> list[tuple[str, str]]:
    """(path, kind) of the workspace's code files."""
    kinds = ["sft", "grpo", "dpo", "helper"]
    plan = [("code/sft_train.py", "sft"), ("code/grpo_train.py", "grpo"), ("code/submit.py", "submit")]
    for i in range(count - len(plan)):
        kind = kinds[i % len(kinds)]
        plan.append((f"code/{kind}_v{i // len(kinds) + 2}.py", kind))
    return plan


# --------------------------------------------------------------------------------------------------
# The models: safetensors files written directly (header + bytes), bf16 values of a realistic spread.


def layer_shapes(total_bytes: int) -> list[tuple[str, tuple[int, ...]]]:
    """Tensor names and shapes of a small Qwen-like decoder whose bf16 weights fill ``total_bytes``."""
    hidden, inter, vocab = 1024, 2816, 32000
    per_layer = 4 * hidden * hidden + 3 * hidden * inter + 2 * hidden
    layers = max(1, (total_bytes // 2 - vocab * hidden) // per_layer)
    shapes: list[tuple[str, tuple[int, ...]]] = [("model.embed_tokens.weight", (vocab, hidden))]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [
            (p + "input_layernorm.weight", (hidden,)),
            (p + "self_attn.q_proj.weight", (hidden, hidden)),
            (p + "self_attn.k_proj.weight", (hidden, hidden)),
            (p + "self_attn.v_proj.weight", (hidden, hidden)),
            (p + "self_attn.o_proj.weight", (hidden, hidden)),
            (p + "post_attention_layernorm.weight", (hidden,)),
            (p + "mlp.gate_proj.weight", (inter, hidden)),
            (p + "mlp.up_proj.weight", (inter, hidden)),
            (p + "mlp.down_proj.weight", (hidden, inter)),
        ]
    shapes.append(("model.norm.weight", (hidden,)))
    return shapes


def write_model(folder: Path, name_or_path: str, total_bytes: int, steps: list[tuple[int, float]]) -> None:
    """Write a model folder: the base's values moved by each training step ``(seed, share of tensors)``.

    The values repeat a few random blocks (bf16 of a normal spread): writing 500 MB of fresh random
    numbers would cost more than the audit; what the audit does with them does not depend on it.
    """
    import numpy as np

    block = 1 << 20
    base = np.random.default_rng(0).normal(0.0, 0.02, size=(8, block)).astype(np.float32)
    moves = [
        (
            np.random.default_rng(seed).normal(0.0, 0.002, size=(8, block)).astype(np.float32),
            random.Random(seed),
            share,
        )
        for seed, share in steps
    ]
    shapes = layer_shapes(total_bytes)
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, shape in shapes:
        size = 2 * int(np.prod(shape))
        header[name] = {"dtype": "BF16", "shape": list(shape), "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "model.safetensors").open("wb") as out:
        out.write(len(encoded).to_bytes(8, "little") + encoded)
        for index, (_, shape) in enumerate(shapes):
            count = int(np.prod(shape))
            values = base[index % 8].copy()
            for noise, picker, share in moves:
                # drawn for every tensor, so that a later step's choice does not depend on the earlier's
                if picker.random() < share:
                    values += noise[index % 8]
            # float32 → bf16 by keeping the upper half of each value
            halves = (values.view(np.uint32) >> 16).astype(np.uint16)
            reps = -(-count // block)
            out.write(np.tile(halves, reps)[:count].tobytes())
    config = {
        "_name_or_path": name_or_path,
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 1024,
        "torch_dtype": "bfloat16",
    }
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    (folder / "generation_config.json").write_text('{"do_sample": true, "temperature": 0.7}\n')
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{% for m in messages %}{{ m['content'] }}{% endfor %}"})
    )


# --------------------------------------------------------------------------------------------------
# The recording.


class Transcript:
    """The agent's Claude Code ``stream-json`` transcript, each line stamped as it happens."""

    def __init__(self, path: Path, workspace: Path) -> None:
        self.handle = path.open("w")
        self.workspace = workspace
        self.calls = 0
        self.emit(
            {
                "type": "system",
                "subtype": "init",
                "session_id": "bench",
                "model": "bench-agent",
                "cwd": str(workspace),
                "tools": ["Bash", "Write"],
            }
        )

    def emit(self, event: dict[str, Any]) -> None:
        """Write one event, stamped with the present UTC time as PostTrainBench's launcher does."""
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        self.handle.write(f"[{stamp}] {json.dumps(event)}\n")

    def _call(self, name: str, arguments: dict[str, Any], result: str, is_error: bool) -> None:
        self.calls += 1
        call_id = f"toolu_{self.calls:04d}"
        content = [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]
        self.emit(
            {
                "type": "assistant",
                "message": {"role": "assistant", "model": "bench-agent", "content": content},
            }
        )
        block = {"type": "tool_result", "tool_use_id": call_id, "content": result, "is_error": is_error}
        self.emit({"type": "user", "message": {"role": "user", "content": [block]}})

    def write(self, rel: str, text: str) -> None:
        """Write a file in the workspace, as the agent's Write tool does, and log the call."""
        target = self.workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        self._call("Write", {"file_path": str(target), "content": text}, f"File created at: {target}", False)

    def bash(self, command: str, exit_code: int, output: str) -> None:
        """Log a Bash call and what it printed."""
        failed = exit_code != 0
        result = f"Exit code {exit_code}\n{output}" if failed else output
        self._call("Bash", {"command": command, "description": "run"}, result, failed)

    def close(self) -> None:
        """End the session and the file."""
        self.emit({"type": "result", "subtype": "success", "is_error": False, "session_id": "bench"})
        self.handle.close()


FAILURES = (
    'Traceback (most recent call last):\n  File "{path}", line 31, in <module>\n'
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    'Traceback (most recent call last):\n  File "{path}", line 9, in <module>\n'
    "ImportError: cannot import name 'SFTConfig' from 'trl'",
    "Traceback (most recent call last):\n  File \"{path}\", line 40, in <module>\nKeyError: 'answer'",
)


def build_run(root: Path, scale: float) -> tuple[Path, list[Path]]:
    """Write the workspace and its recording under ``root``; return the recording and the model files."""
    from arb_audit.evidence import Evidence
    from arb_audit.model import RecordingFacts, Submission
    from arb_audit.runner.artifact_hash import hash_artifact
    from arb_audit.runner.layout import AGENT_OUTPUT, RECORDING_MARKER, STORE_NAME
    from arb_audit.runner.record import Recorder, RecordOptions
    from arb_audit.store import RunStore

    rng = random.Random(5)
    revisions = max(6, round(REVISIONS * scale))
    blobs = max(8, round(BLOBS * scale))
    submissions = max(3, round(SUBMISSIONS * scale))
    model_bytes = max(8 * 1024**2, round(MODEL_BYTES * scale))
    workspace, recording = root / "workspace", root / "recording"
    write_model(workspace / "models" / "base", "Qwen/Qwen2.5-0.5B", model_bytes, [])
    (workspace / "data").mkdir(parents=True)
    (workspace / "data" / "train.jsonl").write_text(
        "".join(json.dumps({"question": f"q{i}", "answer": f"... #### {i}"}) + "\n" for i in range(200))
    )
    recording.mkdir(parents=True)
    (recording / RECORDING_MARKER).write_text(
        json.dumps(
            {
                "workspace": str(workspace),
                "workspace_relative": "../workspace",
                "agent": ["bench-agent"],
                "evaluator": ["bench-eval"],
                "task": TASK,
                "base_model": "models/base",
            }
        )
    )
    options = RecordOptions(
        workspace=workspace,
        run_dir=recording,
        agent=["bench-agent"],
        evaluator=["bench-eval"],
        task=TASK,
        base_model="models/base",
        baseline_score=BASE_SCORE,
        scaffold="bench",
        driver="bench",
    )
    plan = script_plan(min(SCRIPTS, blobs))
    transcript = Transcript(recording / AGENT_OUTPUT, workspace)
    serial = 0
    # every revision edits one or two files (the two training scripts only when they run), so that
    # the distinct contents come to ``blobs``
    extra_edits = max(0, blobs - len(plan) - (revisions - 1) - 2)
    editable = plan[3:]
    sft_at, grpo_at = revisions // 3, (2 * revisions) // 3
    manifests: dict[str, Any] = {}
    done_submissions = 0
    with RunStore.open(recording / STORE_NAME) as store:
        recorder = Recorder(options, store)
        for path, kind in plan:
            serial += 1
            transcript.write(path, SUBMIT if kind == "submit" else variant(kind, serial, rng))
        recorder.take_snapshot("timer")
        for step in range(revisions - 1):
            for path, kind in rng.sample(editable, 1 + (step < extra_edits)):
                serial += 1
                transcript.write(path, variant(kind, serial, rng))
            if step == sft_at:
                transcript.write("code/sft_train.py", variant("sft", serial, rng))
                command = "python code/sft_train.py --model_name_or_path models/base --output_dir output/sft"
                write_model(workspace / "output" / "sft", "models/base", model_bytes, [(1, 1.0)])
                transcript.bash(command, 0, "{'loss': 1.21, 'epoch': 1.0}\nsaved output/sft\n")
            elif step == grpo_at:
                transcript.write("code/grpo_train.py", variant("grpo", serial, rng))
                command = "python code/grpo_train.py --model_name_or_path output/sft --output_dir output/grpo"
                write_model(workspace / "output" / "grpo", "output/sft", model_bytes, [(1, 1.0), (2, 0.5)])
                transcript.bash(command, 0, "{'reward': 0.61, 'kl': 0.02}\nsaved output/grpo\n")
            elif step % 3 == 0:
                script, kind = rng.choice(plan[3:])
                if rng.random() < 0.6:
                    transcript.bash(f"python {script}", 1, rng.choice(FAILURES).format(path=script))
                else:
                    transcript.bash(f"python {script} --max_steps 5", 0, "{'loss': 2.3}\n")
            recorder.take_snapshot("timer")
            # the submissions: from the SFT model on, paced to reach ``submissions`` by the end
            left = revisions - 1 - step
            due = submissions - done_submissions
            if step > sft_at and due > 0 and (left <= due or rng.random() < due / left):
                for _ in range(1 if left > due else due - left + 1):
                    model = "output/grpo" if step > grpo_at else "output/sft"
                    if rng.random() < 0.05:
                        model = "output/checkpoint-missing"
                    done_submissions += 1
                    submit(
                        recorder,
                        transcript,
                        workspace,
                        model,
                        manifests,
                        rng,
                        hash_artifact,
                        Submission,
                        Evidence,
                    )
        recorder.take_snapshot("final")
        recorder.finish(RecordingFacts(["bench-agent"]), 0, False)
    transcript.close()
    models = [workspace / "models/base/model.safetensors"]
    models += [workspace / f"output/{n}/model.safetensors" for n in ("sft", "grpo")]
    return recording, models


def submit(
    recorder: Any,
    transcript: Transcript,
    workspace: Path,
    model: str,
    manifests: dict[str, Any],
    rng: random.Random,
    hash_artifact: Callable[[Path], Any],
    submission: Any,
    evidence: Any,
) -> None:
    """Append one graded attempt as the runner's grader does (its manifest hashed once per model)."""
    recorder.take_snapshot("submission")
    requested = datetime.now(UTC)
    resolved = workspace / model
    if model not in manifests:
        manifests[model] = hash_artifact(resolved) if resolved.exists() else None
    manifest = manifests[model]
    error = None if manifest else f"{model}: no such model folder"
    score = 0.0 if error else (41.0 if "sft" in model else 52.0) + rng.uniform(-2, 2)
    attempt = recorder.append(
        submission(
            seq=0,
            status="error" if error else "scored",
            model_path=model,
            requested_at=requested,
            completed_at=datetime.now(UTC),
            score=round(score, 2),
            error=error,
            elapsed_s=61.0,
            baseline_score=BASE_SCORE,
            artifact_path=model,
            artifact_id=manifest.artifact_id if manifest else None,
            evidence=[evidence("artifact", path=model, excerpt=manifest.artifact_id if manifest else "")],
        ),
        manifest,
    )
    transcript.bash(f"python code/submit.py {model}", 0, json.dumps({"score": attempt.score}) + "\n")


# --------------------------------------------------------------------------------------------------
# Timing the audit, part by part.

PARTS: tuple[tuple[str, str, str], ...] = (
    # (part, module, attribute): each wrapped where the caller looks it up
    (
        "ingest: recording, transcript, artifacts",
        "arb_audit.collectors.recorded",
        "RecordedCollector.collect",
    ),
    ("store writes", "arb_audit.store", "RunStore.save_record"),
    ("store writes", "arb_audit.store", "RunStore.save_audit"),
    ("store writes", "arb_audit.store", "RunStore.save_classifications"),
    ("store reads", "arb_audit.store", "RunStore.load_record"),
    ("store reads", "arb_audit.store", "RunStore.load_classifications"),
    ("blob classification", "arb_audit.analyzer.run_analysis", "classify_blobs"),
    ("reading blobs (revisions.git)", "arb_audit.revisions", "read_blob"),
    ("reading blobs (revisions.git)", "arb_audit.analyzer.code_labels", "read_blob"),
    ("reading blobs (revisions.git)", "arb_audit.analyzer.run_analysis", "read_blob"),
    ("hashing (blob ids)", "arb_audit.analyzer.batch", "blob_sha"),
    ("lineage, scripts, signals, flags", "arb_audit.analyzer.run_analysis", "analyze"),
    ("lineage, scripts, signals, flags", "arb_audit.analyzer.run_analysis", "scripts_run"),
    ("lineage, scripts, signals, flags", "arb_audit.analyzer.run_analysis", "run_signals"),
    ("lineage, scripts, signals, flags", "arb_audit.analyzer.run_analysis", "static_flags"),
    ("weight forensics (torch import included)", "arb_audit.analyzer.run_analysis", "weigh"),
    ("weight forensics (torch import included)", "arb_audit.analyzer.run_analysis", "record_tensor_changes"),
    ("assembling the audit", "arb_audit.analyzer.audit", "build_audit"),
    ("rendering", "arb_audit.report", "render"),
)


class Phases:
    """Exclusive wall time per part: a part's time excludes the parts it calls."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.inner: list[float] = []
        """Time spent in wrapped calls, for each wrapped call under way."""

    def wrap(self, part: str, func: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``func`` counting its time, less that of the wrapped calls it makes, towards ``part``."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            self.inner.append(0.0)
            try:
                return func(*args, **kwargs)
            finally:
                inner = self.inner.pop()
                took = time.perf_counter() - start
                self.spent[part] = self.spent.get(part, 0.0) + took - inner
                if self.inner:
                    self.inner[-1] += took

        return timed


def child(run_dir: Path) -> None:
    """Audit ``run_dir`` as ``arb-audit RUN_DIR`` does (readable report), timing each part; print JSON."""
    import importlib

    started = time.perf_counter()
    phases = Phases()
    # the modules the audit imports lazily are imported here, so that their names can be wrapped
    for lazy in (
        "arb_audit.analyzer.run_analysis",
        "arb_audit.report",
        "arb_audit.analyzer.audit",
        "arb_audit.collectors.recorded",
    ):
        importlib.import_module(lazy)
    for part, module_name, attribute in PARTS:
        module = importlib.import_module(module_name)
        owner: Any = module
        *path, name = attribute.split(".")
        for step in path:
            owner = getattr(owner, step)
        if hasattr(owner, name):
            setattr(owner, name, phases.wrap(part, getattr(owner, name)))
    imported = time.perf_counter() - started
    from arb_audit.analyzer.cache import analyzer_version
    from arb_audit.collectors import registry
    from arb_audit.pipeline import AuditRequest, audit_run
    from arb_audit.report import render

    with open(os.devnull, "w") as sink:
        real = sys.stdout
        sys.stdout = sink
        try:
            collector = registry.detect(run_dir)
            assert collector is not None, f"{run_dir}: not recognised"
            report = audit_run(collector, run_dir, AuditRequest())
            render(report)
        finally:
            sys.stdout = real
    total = time.perf_counter() - started
    route = report.route
    own, workers = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    print(
        json.dumps(
            {
                "total": total,
                "imports": imported,
                "cpu": own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime,
                "parts": phases.spent,
                "chain": route.chain_text,
                "weights": [
                    (s.artifact, s.parent, s.weights.changed if s.weights else None)
                    for steps in (route.lineage or {}).values()
                    for s in steps
                ],
                "revisions": len(report.revisions),
                "submissions": len(report.submissions),
                "commands": len(report.commands),
                "failure": report.failure.mode,
                "cell": report.quadrant.cell,
                "analyzer_version": analyzer_version(),
            }
        )
    )


def _timed_run(args: list[str], user_cache: Path) -> tuple[float, str]:
    """Run ``args`` in a fresh interpreter with ``user_cache`` as the per-user cache; return its wall
    time (interpreter start included) and what it printed."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "XDG_CACHE_HOME": str(user_cache)},
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"the audit failed:\n{done.stderr[-4000:]}")
    return elapsed, done.stdout


def audit_in_child(run_dir: Path, user_cache: Path) -> tuple[float, dict[str, Any]]:
    """Audit in a fresh process, part by part; return its wall time and its figures."""
    elapsed, printed = _timed_run([__file__, "--child", str(run_dir)], user_cache)
    return elapsed, json.loads(printed.strip().splitlines()[-1])


def audit_by_cli(run_dir: Path, user_cache: Path) -> float:
    """Run ``arb-audit RUN_DIR`` as a user does (its readable report is dropped); return its wall time."""
    return _timed_run(["-c", "from arb_audit.cli import main; main()", str(run_dir)], user_cache)[0]


def timed(action: Callable[[], object]) -> float:
    """Seconds ``action`` takes."""
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def baselines(recording: Path, models: list[Path]) -> tuple[float, float, int, int]:
    """Seconds to read and SHA-256 the models' bytes, and to ``ast.parse`` every code blob once."""
    from arb_audit.revisions import read_blob

    def read_and_hash() -> None:
        for model in models:
            digest = hashlib.sha256()
            with model.open("rb") as handle:
                while chunk := handle.read(8 * 1024 * 1024):
                    digest.update(chunk)

    git_dir = recording / "run.revisions.git"
    listed = subprocess.run(
        ["git", f"--git-dir={git_dir}", "cat-file", "--batch-all-objects", "--batch-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    sources = []
    for line in listed:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            raw = read_blob(git_dir, parts[0])
            if raw is not None and raw.startswith(b'"""'):
                sources.append(raw)
    hashed = min(timed(read_and_hash) for _ in range(2))
    parsed = min(timed(lambda: [ast.parse(s) for s in sources]) for _ in range(2))
    return hashed, parsed, sum(m.stat().st_size for m in models), len(sources)


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes): other work shares these cores."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def report_run(label: str, wall: float, figures: dict[str, Any], goal: float) -> None:
    """Print one audit's times and each part's share of it, largest first."""
    inside = figures["total"]
    print(
        f"{label}: {wall:.2f} s wall (goal < {goal:.0f} s), {inside:.2f} s inside the process,"
        f" {figures['cpu']:.2f} s of CPU (its own and its workers')"
    )
    parts = dict(figures["parts"])
    parts["start-up, imports, locating the store, other"] = inside - sum(parts.values())
    for part, spent in sorted(parts.items(), key=lambda kv: -kv[1]):
        print(f"  {part:<46} {spent:7.2f} s  {100 * spent / inside:5.1f}%")


def main() -> None:
    """Build the run, audit it cold and warm, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="size of the run (1: as the issue says)")
    parser.add_argument("--keep", type=Path, help="build the run in this folder and keep it")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as scratch:
        root = args.keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        print(f"machine: {os.cpu_count()} cores, load {load()} (1, 5, 15 min) before building")
        start = time.perf_counter()
        recording, models = build_run(root / "run", args.scale)
        took = time.perf_counter() - start
        hashed, parsed, size, sources = baselines(recording, models)
        print(f"built in {took:.1f} s: {size / 1e6:,.0f} MB of models; load {load()} before auditing")
        # cold: no store beside the run and an empty per-user cache (where weight comparisons go)
        user_cache = root / "user-cache"
        shutil.rmtree(recording / ".arb-audit", ignore_errors=True)
        shutil.rmtree(user_cache, ignore_errors=True)
        cold_wall, cold = audit_in_child(recording, user_cache)
        warm_wall, warm = audit_in_child(recording, user_cache)
        # the command itself, which imports only what it uses (the timed child imports every part)
        colds = []
        for _ in range(3):
            shutil.rmtree(recording / ".arb-audit", ignore_errors=True)
            shutil.rmtree(user_cache, ignore_errors=True)
            colds.append(audit_by_cli(recording, user_cache))
        warms = [audit_by_cli(recording, user_cache) for _ in range(3)]
        if cold["analyzer_version"] != warm["analyzer_version"]:
            print(
                "WARNING: the analyzer's code changed between the two audits (someone edited it):"
                " the warm audit could not use the cold one's classifications"
            )
        print(
            f"run: {cold['revisions']} revisions, {sources} distinct Python blobs, {cold['submissions']}"
            f" submissions, {cold['commands']} commands; chain {cold['chain']}; failure {cold['failure']};"
            f" quadrant {cold['cell']}"
        )
        print("weighed steps (artifact, parent, tensors changed):", cold["weights"])
        verdict = {True: "ok", False: "over"}
        cli_cold, cli_warm = statistics.median(colds), statistics.median(warms)
        print(
            f"arb-audit RUN_DIR, as run by a user (median of 3; max): cold {cli_cold:.2f} s"
            f" ({max(colds):.2f}; goal < 10 s: {verdict[cli_cold < 10]}), warm {cli_warm:.2f} s"
            f" ({max(warms):.2f}; goal < 1 s: {verdict[cli_warm < 1]})"
        )
        report_run("cold audit, part by part (no store beside the run)", cold_wall, cold, 10)
        report_run(
            "warm audit, part by part (every part imported up front; the command is above)",
            warm_wall,
            warm,
            1,
        )
        weights = cold["parts"].get("weight forensics (torch import included)", 0.0)
        classify = cold["parts"].get("blob classification", 0.0)
        print(
            f"baseline: read + SHA-256 of the {size / 1e6:,.0f} MB of models {hashed:.2f} s;"
            f" cold weight forensics {weights:.2f} s = {weights / hashed:.2f}x"
        )
        print(
            f"baseline: ast.parse of the {sources} blobs {parsed:.2f} s;"
            f" cold blob classification {classify:.2f} s = {classify / parsed:.2f}x"
        )
        print(f"cold / warm: {cold_wall / warm_wall:.1f}x; load {load()} after")


if __name__ == "__main__":
    main()
