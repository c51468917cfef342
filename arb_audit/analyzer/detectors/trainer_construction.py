"""A training stage: a known trainer class (or a local subclass of one) is constructed."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import TRAINER_EVALUATIONS
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.gradient_step import names_trainer_class
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.trainers import Trainer, resolve_trainer

TRAINER_BUILDER_WORDS = frozenset(
    {"build", "make", "create", "instantiate", "construct", "init", "initialize", "setup", "partial", "new"}
)
"""Words of a function that builds the class it is handed first (``_build_trainer(SFTTrainer, tok, kw)``,
``functools.partial(DPOTrainer, beta=0.1)``): the trainer is constructed there, not merely named, where
the function is named for a trainer too (or is ``partial``)."""


class TrainerConstruction(RouteDetector):
    """Constructing a trainer runs its stage: TRL, OpenRLHF, LLaMA-Factory, unsloth and HF trainers.

    The class is recognised by its qualified name — the public re-export (``trl.GRPOTrainer``), the
    internal module path (``trl.trainer.grpo_trainer.GRPOTrainer``), an alias, an import inside a
    function, a class of this file that derives from one, or a local name the class was assigned to
    (``trainer_cls = GRPOTrainer; trainer_cls(...)``). A trainer that is only imported, named in
    a string or a comment, constructed under ``if False:`` or built only to measure a model
    (``RewardTrainer(...).evaluate(ds)``) is not evidence.
    """

    TRIGGERS = ("Trainer",)

    VALID = (
        Valid("from trl import GRPOTrainer\nprint('GRPOTrainer is not used here')\n"),
        Valid("# trainer = DPOTrainer(model)\nimport trl\n"),
        Valid("from trl import SFTTrainer\nif False:\n    SFTTrainer(model=m)\n"),
        Valid("class GRPOTrainer:\n    pass\n\nGRPOTrainer()\n"),
        Valid("from trl import SFTConfig\nargs = SFTConfig(output_dir='x')\n"),
        # what reports on a trainer is named after it, and is none
        Valid("from mylib.reporting import SFTTrainerProgressBar\nbar = SFTTrainerProgressBar(total=3)\n"),
        Valid("build_trainer(model=m, reward_funcs=[r])\n"),
        # a trainer class tested, registered or named beside a builder is not built
        Valid("from trl import GRPOTrainer\nif isinstance(t, GRPOTrainer):\n    build_report(t)\n"),
        Valid("from trl import DPOTrainer\nREGISTRY.register(DPOTrainer)\n"),
        Valid("from trl import SFTTrainer\nbuild_trainer(model, SFTTrainer)\n"),
        # what is built from a trainer class handed first is a mock or a model card, not a trainer
        Valid(
            "from unittest import mock\nfrom trl import SFTTrainer\nt = mock.create_autospec(SFTTrainer)\n"
        ),
        Valid("from trl import DPOTrainer\ncard = make_model_card(DPOTrainer, repo_id=r)\n"),
    )
    INVALID = (
        # a trainer built only to measure a model measures it
        Invalid(
            "from trl import RewardTrainer\nmetrics = RewardTrainer(model=rm, args=cfg).evaluate(ds)\n",
            "scoring",
        ),
        Invalid("from trl import GRPOTrainer as G\nG(model=m, reward_funcs=[r])\n", "stage", "grpo"),
        # imported lazily and held in a table under its own name
        Invalid(
            "def import_stack():\n    from trl import GRPOConfig, GRPOTrainer\n"
            "    return {'GRPOConfig': GRPOConfig, 'GRPOTrainer': GRPOTrainer}\n"
            "stack = import_stack()\n"
            "trainer = stack['GRPOTrainer'](model=m, args=stack['GRPOConfig'](), reward_funcs=[r])\n"
            "trainer.train()\n",
            "stage",
            "grpo",
        ),
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
        Invalid(
            "from open_r1.intuitor_trainer import INTUITORTrainer\n"
            "INTUITORTrainer(model=m, reward_funcs=fns, args=training_args)\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "from my_trainers import TrainerWithRewardLogging\n"
            "TrainerWithRewardLogging(model=m, reward_funcs=[fmt, acc], args=config).train()\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "def main():\n    from trl import GRPOTrainer\n"
            "    trainer_cls = GRPOTrainer\n    trainer_cls(model=m)\n",
            "stage",
            "grpo",
        ),
        # handed first to a helper that builds it: the helper constructs that trainer
        Invalid(
            "from trl import DPOTrainer\n"
            "def _build_trainer(trainer_cls, tok, kw):\n    return trainer_cls(processing_class=tok, **kw)\n"
            "trainer = _build_trainer(DPOTrainer, tokenizer, kwargs)\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import functools\nfrom trl import SFTTrainer\nmake = functools.partial(SFTTrainer, args=a)\n",
            "stage",
            "sft",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.aliases: dict[str, tuple[str, Trainer]] = {}
        """Local names assigned a trainer class (``trainer_cls = GRPOTrainer``)."""
        self.measuring: dict[int, str] = {}
        """Constructions whose object only measures (``Trainer(...).evaluate()``)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if not isinstance(node.value, cst.Name | cst.Attribute):
            return
        resolver = self.context.resolver
        found = resolve_trainer(self.names(node.value), resolver.class_bases, resolver.ancestry)
        if found is not None:
            for target in node.targets:
                if type(target.target) is cst.Name:
                    self.aliases[self.context.scope.prefix + target.target.value] = found

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            type(func) is cst.Attribute
            and func.attr.value in TRAINER_EVALUATIONS
            and type(func.value) is cst.Call
        ):
            # RewardTrainer(rm, tok, cfg).evaluate(ds): a trainer built only to measure a model (the
            # outer call is visited first)
            self.measuring[id(func.value)] = func.attr.value
        found = self.trainer(node) or next(
            (self.aliases[q] for q in sorted(self.names(node.func)) if q in self.aliases), None
        )
        if id(node) in self.measuring:
            if found is not None:
                self.report(node, "scoring", f"{found[0]}(...).{self.measuring[id(node)]}() measures a model")
            return
        if found is not None:
            self.report_trainer(node, f"constructs {found[0]}", found[1])
        elif (built := self._built_by_helper(node)) is not None:
            self.report_trainer(node, f"builds {built[0]} through {last_name(node.func)}()", built[1])
        elif names_trainer_class(last_name(node.func)) and keyword(node, "reward_funcs") is not None:
            # a project's own trainer (``INTUITORTrainer(model=m, reward_funcs=fns, args=grpo_config)``)
            # built with the reward functions TRL's GRPOTrainer takes: GRPO's contract, a sampling
            # trainer scoring its own completions
            message = f"constructs {last_name(node.func)} with reward_funcs=, as TRL's GRPOTrainer is"
            self.report(node, "stage", message, kind="grpo", on_policy=True)

    def _built_by_helper(self, node: cst.Call) -> tuple[str, Trainer] | None:
        """Return the trainer class handed first to a function named for building it, if any."""
        if not node.args or node.args[0].keyword is not None or node.args[0].star:
            return None
        said = set(words(last_name(node.func)))
        if not said & TRAINER_BUILDER_WORDS or not ("trainer" in said or said == {"partial"}):
            return None  # (``create_autospec(SFTTrainer)``, ``make_model_card(DPOTrainer)``: no trainer)
        handed = node.args[0].value
        if not isinstance(handed, cst.Name | cst.Attribute):
            return None
        resolver = self.context.resolver
        return resolve_trainer(self.names(handed), resolver.class_bases, resolver.ancestry)
