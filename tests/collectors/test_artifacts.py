"""What a model folder's own files say about how it was trained: trainer logs and the model card."""

from __future__ import annotations

import json
from pathlib import Path

from arb_audit.collectors.artifacts import describe
from arb_audit.collectors.reading import RunFolder
from arb_audit.model import LoggedSteps, TrainerEvidence

CARD = """\
---
base_model: Qwen/Qwen2.5-1.5B
library_name: transformers
model_name: grpo-out
tags:
- generated_from_trainer
- trl
- grpo
licence: license
---

# Model Card for grpo-out

This model is a fine-tuned version of [Qwen/Qwen2.5-1.5B](https://huggingface.co/Qwen/Qwen2.5-1.5B).
This model was trained with GRPO, a method introduced in [DeepSeekMath](https://huggingface.co/papers/2402.03300).
"""


def _model(folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"_name_or_path": "output/sft"}))
    (folder / "model.safetensors").write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")


def test_trainer_logs_and_the_model_card_are_read(tmp_path: Path) -> None:
    out = tmp_path / "output" / "grpo"
    _model(out)
    (out / "README.md").write_text(CARD)
    for step, keys in (
        (100, ["loss"]),
        (500, ["loss", "reward", "reward_std", "kl", "completions/mean_length"]),
    ):
        (out / f"checkpoint-{step}").mkdir()
        history = [dict.fromkeys([*keys, "step"], 1.0)]
        (out / f"checkpoint-{step}" / "trainer_state.json").write_text(json.dumps({"log_history": history}))
    info = describe(RunFolder(tmp_path), "output/grpo")
    assert info.kind == "full" and info.parent_ref == "output/sft"
    assert info.trainer_evidence == TrainerEvidence(
        trainer_state="output/grpo/checkpoint-500/trainer_state.json",
        log_keys=["completions/mean_length", "kl", "loss", "reward", "reward_std", "step"],
        log_steps=1,
        log_reward_std=LoggedSteps(logged=1, zero=0),
        card_trained_with="GRPO",
        card_tags=["generated_from_trainer", "trl", "grpo"],
    )
    # the run store keeps it as JSON and reads it back as it was
    assert (
        TrainerEvidence.from_json(json.loads(json.dumps(info.trainer_evidence.to_json())))
        == info.trainer_evidence
    )


def test_broken_trainer_files_are_problems_not_evidence(tmp_path: Path) -> None:
    out = tmp_path / "output" / "v1"
    _model(out)
    (out / "trainer_state.json").write_text('{"log_history": [{"loss": 1.0}, ')
    (out / "README.md").write_bytes(b"---\ntags: [sft, \xff]\n---\n")
    folder = RunFolder(tmp_path)
    info = describe(folder, "output/v1")
    assert info.trainer_evidence == TrainerEvidence(card_tags=["sft", "\ufffd"])
    assert [p.path for p in folder.problems] == ["output/v1/trainer_state.json", "output/v1/README.md"]


def test_a_trainer_log_shows_divergence_a_flat_reward_and_rollouts_without_environment(
    tmp_path: Path,
) -> None:
    out = tmp_path / "output" / "grpo"
    _model(out)
    history = [
        {"step": 1, "loss": 0.5, "reward_std": 0.0, "tools/call_frequency": 0.0},
        {
            "step": 2,
            "loss": float("nan"),
            "grad_norm": float("inf"),
            "reward_std": 0.0,
            "tools/call_frequency": 0,
        },
        {"step": 3, "loss": 0.4, "reward_std": 0.0, "tools/call_frequency": 0.0},
    ]
    (out / "trainer_state.json").write_text(json.dumps({"log_history": history}))  # NaN, as HF writes it
    folder = RunFolder(tmp_path)
    evidence = describe(folder, "output/grpo").trainer_evidence
    assert evidence.log_nonfinite == ["loss at step 2", "grad_norm at step 2"]
    assert evidence.log_reward_std == evidence.log_env_calls == LoggedSteps(logged=3, zero=3)
    assert any("NaN" in p.message for p in folder.problems)  # and the file says so, as read
