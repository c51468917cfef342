"""A training stage implemented here: a class of this file derives from a known trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.trainers import trainer_named, trainer_of
from arb_audit.analyzer.walk import descendants


class TrainerSubclass(RouteDetector):
    """A library module that defines a trainer (``class CustomDPOTrainer(DPOTrainer)``) implements its stage.

    So does a framework's own trainer class, named for its stage (``DPOTrainer``, ``ActorPPOTrainer``)
    with no library base, when it derives from the framework's base trainer or its body runs backward
    passes.

    Such modules are where benchmarks' agents and frameworks put their losses (LLaMA-Factory's
    ``CustomDPOTrainer`` with hand-written ORPO and SimPO losses); the stage is the base trainer's.
    """

    TRIGGERS = ("Trainer",)

    VALID = (
        Valid("class Trainer:\n    pass\n"),
        Valid("class DPOTrainer:\n    def fit(self):\n        return self.loss\n"),
        Valid("from .base import Base\nclass GRPOTrainer(Base):\n    pass\n"),
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
        own = trainer_named(node.name.value)
        trainer_base = any(
            q.rsplit(".", 1)[-1].endswith("Trainer") for base in node.bases for q in self.names(base.value)
        )
        if own is not None and (
            trainer_base
            or any(isinstance(n, cst.Call) and method(n) == "backward" for n in descendants(node.body))
        ):
            # A framework's own trainer, named for its stage: it derives from the framework's base
            # trainer (TRL's GRPOTrainer(_BaseTrainer)) or updates weights itself (OpenRLHF's).
            self.report_trainer(node, f"defines {node.name.value}, a trainer of this framework", own)
            return
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
