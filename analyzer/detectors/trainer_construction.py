"""A training stage: a known trainer class (or a local subclass of one) is constructed."""

from __future__ import annotations

import libcst as cst

from analyzer.detector import Invalid, RouteDetector, Valid


class TrainerConstruction(RouteDetector):
    """Constructing a trainer runs its stage: TRL, OpenRLHF, LLaMA-Factory, unsloth and HF trainers.

    The class is recognised by its qualified name — the public re-export (``trl.GRPOTrainer``), the
    internal module path (``trl.trainer.grpo_trainer.GRPOTrainer``), an alias, an import inside a
    function, or a class of this file that derives from one. A trainer that is only imported, named in
    a string or a comment, or constructed under ``if False:`` is not evidence.
    """

    TRIGGERS = ("Trainer",)

    VALID = (
        Valid("from trl import GRPOTrainer\nprint('GRPOTrainer is not used here')\n"),
        Valid("# trainer = DPOTrainer(model)\nimport trl\n"),
        Valid("from trl import SFTTrainer\nif False:\n    SFTTrainer(model=m)\n"),
        Valid("class GRPOTrainer:\n    pass\n\nGRPOTrainer()\n"),
        Valid("from trl import SFTConfig\nargs = SFTConfig(output_dir='x')\n"),
    )
    INVALID = (
        Invalid("from trl import GRPOTrainer as G\nG(model=m, reward_funcs=[r])\n", "stage", "grpo"),
        Invalid("import trl\ntrl.SFTTrainer(model=m)\n", "stage", "sft"),
        Invalid(
            "def main():\n    from trl import DPOTrainer\n    DPOTrainer(model=m)\n", "stage", "dpo", "dpo"
        ),
        Invalid("from trl.trainer.grpo_trainer import GRPOTrainer\nGRPOTrainer(model=m)\n", "stage", "grpo"),
        Invalid("from trl.experimental.kto import KTOTrainer\nKTOTrainer(m)\n", "stage", "dpo", "kto"),
        Invalid("from trl import RLOOTrainer\nRLOOTrainer(m)\n", "stage", "ppo", "rloo"),
        Invalid(
            "from trl import DPOTrainer\n"
            "class CustomDPOTrainer(DPOTrainer):\n    pass\nCustomDPOTrainer(m)\n",
            "stage",
            "dpo",
        ),
        Invalid("from .trainer import CustomPPOTrainer\nCustomPPOTrainer(m)\n", "stage", "ppo"),
        Invalid(
            "from openrlhf.trainer import RewardModelTrainer\nRewardModelTrainer(m)\n",
            "stage",
            "reward_model",
        ),
        Invalid("from transformers import Trainer\nTrainer(model=m, train_dataset=d)\n", "stage", "sft"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        found = self.trainer(node)
        if found is not None:
            self.report_trainer(node, f"constructs {found[0]}", found[1])
