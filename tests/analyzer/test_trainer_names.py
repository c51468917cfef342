"""Which classes are known trainers by their qualified name, and which are not."""

from __future__ import annotations

import pytest

from arb_audit.analyzer.trainers import route_word, trainer_of


@pytest.mark.parametrize(
    ("qualified", "kind"),
    [
        ("trl.GRPOTrainer", "grpo"),
        ("trl.trainer.dpo_trainer.DPOTrainer", "dpo"),
        ("transformers.Trainer", "sft"),
        ("llamafactory.train.dpo.trainer.CustomDPOTrainer", "dpo"),
        # another package's trainer with a specific name runs that stage, whoever wrote it
        ("verifiers.GRPOTrainer", "grpo"),
        ("mypkg.trainers.DPOTrainer", "dpo"),
        # a project's copy says how it differs after the library's name
        ("src.ppo_trainer.PPOTrainerForZero3", "ppo"),
        ("mypkg.GRPOTrainerV2", "grpo"),
        # a fork of a framework that has no trainers of its own (open-r1 uses TRL's)
        ("open_r1.grpo_trainer_gsm.GRPOTrainer", "grpo"),
        # but not its generic Trainer, a prefixed name, or a framework whose table entry decides
        ("mylib.trainer.Trainer", None),
        ("mylib.Seq2SeqTrainer", None),
        ("mylib.MyGRPOTrainer", None),
        ("skyrl.train.trainer.RayPPOTrainer", None),
        ("GRPOTrainer", None),
        ("mypkg.DPOTrainerConfig", None),
        ("mypkg.TrainerForZero3", None),
        ("mypkg.PPOTrainerwrapper", None),
    ],
)
def test_trainer_of(qualified: str, kind: str | None) -> None:
    found = trainer_of(qualified)
    assert (found.kind if found else None) == kind


@pytest.mark.parametrize(
    ("identifier", "strict", "expected"),
    [
        ("DAPOTrainer", False, ("GRPO", "dapo")),
        ("grpo_train", True, ("GRPO", "grpo")),
        ("compute_reward", False, ("REWARD_MODEL", "reward")),
        ("compute_reward", True, None),
        ("MiniSWEPPOExp", False, None),  # acronyms run together are not split
        ("MODPOTrainer", False, ("DPO", "modpo")),  # but the preference family's XDPO variants are read
        ("tdpo_loss", True, ("DPO", "tdpo")),
        ("DDPOTrainer", False, None),  # denoising diffusion policy optimisation is RL on images
        ("VLMGRPOTrainer", False, ("GRPO", "vlmgrpo")),
        ("SupervisedFinetuneTrainer", False, ("SFT", "supervisedfinetune")),
        ("SelfSupervisedTrainer", False, None),
        ("update_policy", True, None),
        ("RefuelTrainer", False, ("PPO", "refuel")),  # regression forms of policy optimisation
        ("rebel_loss", True, ("PPO", "rebel")),
        ("ModernRLHFTrainer", False, ("PPO", "rlhf")),  # RLHF, InstructGPT's recipe: PPO
        ("GRPOTrainerForRLHF", False, ("GRPO", "grpo")),  # an algorithm's own name goes first
        # where what it builds starts from, not what it runs
        ("initialize_trainer_from_sft_checkpoint", False, None),
        ("train_dpo_from_sft_model", False, ("DPO", "dpo")),
    ],
)
def test_route_word(identifier: str, strict: bool, expected: tuple[str, str] | None) -> None:
    assert route_word(identifier, strict=strict) == expected
