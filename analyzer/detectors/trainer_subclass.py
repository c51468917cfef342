"""A training stage implemented here: a class of this file derives from a known trainer."""

from __future__ import annotations

import libcst as cst

from analyzer.detector import Invalid, RouteDetector, Valid
from analyzer.trainers import trainer_named, trainer_of


class TrainerSubclass(RouteDetector):
    """A library module that defines a trainer (``class CustomDPOTrainer(DPOTrainer)``) implements its stage.

    Such modules are where benchmarks' agents and frameworks put their losses (LLaMA-Factory's
    ``CustomDPOTrainer`` with hand-written ORPO and SimPO losses); the stage is the base trainer's.
    """

    TRIGGERS = ("Trainer",)

    VALID = (
        Valid("class Trainer:\n    pass\n"),
        Valid("from trl import DPOConfig\nclass MyConfig(DPOConfig):\n    pass\n"),
    )
    INVALID = (
        Invalid(
            "from trl import DPOTrainer\nclass CustomDPOTrainer(DPOTrainer):\n    pass\n", "stage", "dpo"
        ),
        Invalid("import transformers\nclass MyTrainer(transformers.Trainer):\n    pass\n", "stage", "sft"),
        Invalid(
            "import transformers\nclass PairwiseTrainer(transformers.Trainer):\n    pass\n",
            "stage",
            "reward_model",
        ),
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            for name in sorted(self.names(base.value)):
                for ancestor in sorted(self.context.resolver.ancestry(name)):
                    if trainer_of(ancestor) is None:
                        continue
                    # A framework names its subclass after what it does (PairwiseTrainer(Trainer)).
                    trainer = trainer_named(node.name.value) or trainer_of(ancestor)
                    assert trainer is not None
                    self.report_trainer(node, f"defines {node.name.value}, a {ancestor}", trainer)
                    return
