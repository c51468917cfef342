"""A training stage implemented here: a class of this file derives from a known trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.frameworks import PACKAGES
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.trainers import (
    LABEL_KINDS,
    Trainer,
    name_words,
    route_word,
    subclass_named_for,
    trainer_named,
    trainer_of,
)
from arb_audit.analyzer.walk import descendants

ALGORITHM_PARTS = frozenset({"model", "learner", "algorithm", "trainer", "loss"})
"""Last words of a library class that is one algorithm's part (``AcceleratePPOModel``, ``GRPOLearner``),
not its settings (``DPOConfig``) or data, nor a policy, agent or actor (RL libraries' inference and
sampling classes too: oat's ``PPOActor`` samples for every algorithm)."""


class TrainerSubclass(RouteDetector):
    """A library module that defines a trainer (``class CustomDPOTrainer(DPOTrainer)``) implements its stage.

    So does a framework's own trainer class, named for its stage (``DPOTrainer``, ``ActorPPOTrainer``)
    with no library base, when it derives from the framework's base trainer or its body runs backward
    passes.

    Such modules are where benchmarks' agents and frameworks put their losses (LLaMA-Factory's
    ``CustomDPOTrainer`` with hand-written ORPO and SimPO losses); the stage is the base trainer's.

    A class customising another library's class of one algorithm (trlx's ``AcceleratePPOModel``, a
    ``GRPOLearner``) says which route the file's component serves, by name only: a loss finding,
    which the file's own loss or step decides against.
    """

    TRIGGERS = ("Trainer", "PPO", "GRPO", "DPO", "RLOO")

    VALID = (
        Valid("class Trainer:\n    pass\n"),
        Valid("class DPOTrainer:\n    def fit(self):\n        return self.loss\n"),
        Valid("from .base import Base\nclass GRPOTrainer(Base):\n    pass\n"),
        Valid("from trl import DPOConfig\nclass MyConfig(DPOConfig):\n    pass\n"),
        # a class of this file named for an algorithm is no library's part; settings and data are none
        Valid("class PPOModel:\n    pass\nclass Mine(PPOModel):\n    pass\n"),
        Valid("from lib.data import GRPODataset\nclass Mine(GRPODataset):\n    pass\n"),
        Valid("from .magrpo import MAGRPOModel\nclass Mine(MAGRPOModel):\n    pass\n"),
        # an RL library's policy class, used for inference as often
        Valid("from ray.rllib.algorithms.ppo import PPOTorchPolicy\nclass Mine(PPOTorchPolicy):\n    pass\n"),
        # an actor (a sampler), and a framework trainer whose config names the algorithm
        Valid("from oat.actors import PPOActor\nclass Sampler(PPOActor):\n    pass\n"),
        Valid(
            "from verl.experimental.fully_async import FullyAsyncRayPPOTrainer\n"
            "class Rollouter(FullyAsyncRayPPOTrainer):\n    pass\n"
        ),
        # a subclass named for another algorithm than its base's: its own name is read elsewhere
        Valid("from skyrl.x import RayPPOActorModel\nclass DAPOActorModel(RayPPOActorModel):\n    pass\n"),
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
        # a library's model or learner of one algorithm, customised
        Invalid(
            "from trlx.model.accelerate_ppo_model import AcceleratePPOModel\n"
            "class SoftpromptModel(AcceleratePPOModel):\n    def generate(self, ids):\n        return ids\n",
            "loss",
            "ppo",
        ),
        Invalid(
            "from oat.algorithms import GRPOLearner\nclass Mine(GRPOLearner):\n    pass\n", "loss", "grpo"
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
        own_route = route_word(node.name.value, strict=True)
        for base in node.bases:
            named = self._imported_algorithm_class(base.value)
            if named is not None:
                # ``class AcceleratePPOSoftpromptModel(AcceleratePPOModel)``: a library's class of one
                # algorithm (its model, learner or policy), customised here, runs that algorithm
                base_name, kind = named
                if own_route is not None and LABEL_KINDS.get(own_route[0]) != kind:
                    return  # (``class DAPOTrainer(RayPPOTrainer)``: named for what it does instead)
                message = f"defines {node.name.value}, a subclass of {base_name}, named for {kind.upper()}"
                # (a part of that algorithm, known by name: the route a component serves, not a stage
                # of its own; a loss or a step the file shows decides what it trains)
                self.report(node, "loss", message, kind=kind)
                return

    def _imported_algorithm_class(self, base: cst.BaseExpression) -> tuple[str, str] | None:
        """Return a library's base class named for one algorithm's part and its stage kind.

        ``AcceleratePPOModel`` -> ppo; a base of the file or of a relative import is the project's.
        """
        known = self.names(base)
        if not any(self.context.resolver.is_imported(q) and q[:1] != "." for q in known):
            return None
        name = last_name(base)
        if name.endswith("Trainer") and any(q.partition(".")[0] in PACKAGES for q in known):
            return None  # (verl's ``RayPPOTrainer`` family runs whatever algorithm its config names)
        said = name_words(name)
        named = route_word(name, strict=True)
        if not said or said[-1] not in ALGORITHM_PARTS or named is None or named[0] not in LABEL_KINDS:
            return None
        return name, LABEL_KINDS[named[0]]

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
