"""A training stage implemented here: a class of this file derives from a known trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.trainers import Trainer, subclass_named_for, trainer_named, trainer_of
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
        Invalid(
            "from trl import PPOTrainer\nclass CustomRewardTrainer(PPOTrainer):\n    pass\n", "stage", "ppo"
        ),
        Invalid(
            "from .ppo import RayPPOTrainer\nclass CustomRewardTrainer(RayPPOTrainer):\n    pass\n",
            "stage",
            "ppo",
        ),
    )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        own = trainer_named(node.name.value)
        inherited = self._inherited(node)
        if own is not None and inherited is not None and not subclass_named_for(own, *inherited):
            # CustomRewardTrainer(PPOTrainer) customises PPO's reward: it runs its base's stage
            base_name, base_trainer = inherited
            self.report_trainer(node, f"defines {node.name.value}, a {base_name}", base_trainer)
            return
        trainer_base = any(
            q.rsplit(".", 1)[-1].endswith("Trainer") for base in node.bases for q in self.names(base.value)
        )
        if own is not None and (
            trainer_base
            or any(type(n) is cst.Call and method(n) == "backward" for n in descendants(node.body))
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
                    trainer = own or trainer_of(ancestor)
                    assert trainer is not None
                    self.report_trainer(node, f"defines {node.name.value}, a {ancestor}", trainer)
                    return

    def _inherited(self, node: cst.ClassDef) -> tuple[str, Trainer] | None:
        """Return the trainer a class derives from, and its name, if any.

        A library trainer, or a base of the project's own named for its stage (``RayPPOTrainer``).
        """
        for base in node.bases:
            for name in sorted(self.names(base.value)):
                for ancestor in sorted(self.context.resolver.ancestry(name)):
                    if (found := trainer_of(ancestor)) is not None:
                        return ancestor, found
                if (named := trainer_named(name.rsplit(".", 1)[-1])) is not None:
                    return name, named
        return None
