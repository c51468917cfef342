"""Rewards named for a process or outcome reward model, in a file that also trains a policy on rewards."""

from __future__ import annotations

from pathlib import Path

from arb_audit.analyzer.batch import classify_path

TWO_PHASES = """\
from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer


class ProcessRewardCalculator:
    \"\"\"Scores every step of a trajectory (process rewards).\"\"\"

    def step_rewards(self, steps):
        return [1.0 if "ok" in s else 0.0 for s in steps]


prm = ProcessRewardCalculator()


def process_reward(completions, **kwargs):
    return [sum(prm.step_rewards(c.split("\\n"))) for c in completions]


def main():
    warm = Dataset.from_list([{"prompt": "p", "completion": "c"}])
    SFTTrainer(model="Qwen/Qwen2.5-0.5B", train_dataset=warm, args=SFTConfig(output_dir="sft")).train()
    prompts = Dataset.from_list([{"prompt": "solve"}])
    GRPOTrainer(
        model="sft", reward_funcs=[process_reward], train_dataset=prompts, args=GRPOConfig(output_dir="grpo")
    ).train()


if __name__ == "__main__":
    main()
"""


def test_a_warm_start_beside_a_policy_trained_on_process_rewards_trains_the_policy(tmp_path: Path) -> None:
    """The process rewards are the GRPO stage's; the supervised warm start is SFT, not a reward model."""
    path = tmp_path / "two_phases.py"
    path.write_text(TWO_PHASES)
    result = classify_path(path)
    assert result.labels == ["GRPO", "SFT"]
    assert [s.kind for s in result.stages] == ["sft", "grpo"]
