"""Trainer classes of the libraries people train with, by the stage they run.

A class is known by the last component of its qualified name, provided the name comes from one of
:data:`TRAINING_LIBRARIES` or from a relative import (a framework's own package, such as
LLaMA-Factory's ``from .trainer import CustomDPOTrainer``). Framework subclasses that only add a
prefix (``Custom``, ``Unsloth``, ``Ray``) are the same trainer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import pairwise

from arb_audit.taxonomy.files import STAGE_LABELS
from arb_audit.taxonomy.routes import POLICY_GRADIENT


@dataclass(frozen=True, slots=True)
class Trainer:
    """The stage a trainer class runs."""

    kind: str
    """Stage kind (TAXONOMY.md)."""
    variant: str | None = None
    """Algorithm variant."""
    on_policy: bool | None = None
    """Whether it samples from the policy while training."""
    data_source: str | None = None
    """Where its training targets come from, when the class fixes it."""


TRAINERS: dict[str, Trainer] = {
    "SFTTrainer": Trainer("sft"),
    "IterativeSFTTrainer": Trainer("sft", "iterative_sft"),
    "Seq2SeqTrainer": Trainer("sft", "seq2seq"),
    "SentenceTransformerTrainer": Trainer("sft", "embedding"),
    "Trainer": Trainer("sft", "hf_trainer"),
    "GKDTrainer": Trainer("sft", "gkd", True, "distilled"),
    "DistillationTrainer": Trainer("sft", "distillation", None, "distilled"),
    "KDTrainer": Trainer("sft", "distillation", None, "distilled"),
    "SSDTrainer": Trainer("sft", "self_distillation", True, "self_generated"),
    "SDFTTrainer": Trainer("sft", "self_distillation", True, "self_generated"),
    "GOLDTrainer": Trainer("sft", "gold", True, "distilled"),
    "ServerDistillationTrainer": Trainer("sft", "distillation", None, "distilled"),
    # on-policy distillation (a teacher's distribution over the student's own samples, learnt by a
    # policy-gradient or divergence loss): knowledge-distillation training, SFT (TAXONOMY.md)
    "MiniLLMTrainer": Trainer("sft", "minillm", True, "distilled"),
    "IWOPDTrainer": Trainer("sft", "iw_opd", True, "distilled"),
    "DPOTrainer": Trainer("dpo", "dpo", False),
    "KTOTrainer": Trainer("dpo", "kto", False),
    "ORPOTrainer": Trainer("dpo", "orpo", False),
    "CPOTrainer": Trainer("dpo", "cpo", False),
    "SimPOTrainer": Trainer("dpo", "simpo", False),
    "BCOTrainer": Trainer("dpo", "bco", False),
    "TPOTrainer": Trainer("dpo", "tpo", False),
    "OnlineDPOTrainer": Trainer("dpo", "online_dpo", True),
    "XPOTrainer": Trainer("dpo", "xpo", True),
    "NashMDTrainer": Trainer("dpo", "nash_md", True),
    "GRPOTrainer": Trainer("grpo", "grpo", True),
    "AsyncGRPOTrainer": Trainer("grpo", "grpo", True),
    "GMPOTrainer": Trainer("grpo", "gmpo", True),
    "GRPOWithReplayBufferTrainer": Trainer("grpo", "grpo_replay", True),
    "PPOTrainer": Trainer("ppo", "ppo", True),
    "PPOv2Trainer": Trainer("ppo", "ppo", True),
    "RLOOTrainer": Trainer("ppo", "rloo", True),
    "SDPOTrainer": Trainer("ppo", "sdpo", True),
    "A2POTrainer": Trainer("ppo", "a_star_po", True),
    "RewardTrainer": Trainer("reward_model"),
    "PRMTrainer": Trainer("reward_model", "prm"),
    "RewardModelTrainer": Trainer("reward_model"),
    "ProcessRewardModelTrainer": Trainer("reward_model", "prm"),
    "PairwiseTrainer": Trainer("reward_model", "pairwise"),
}
"""Trainer class name -> the stage it runs."""

TRAINING_LIBRARIES = frozenset(
    {"trl", "openrlhf", "unsloth", "transformers", "llamafactory", "verl", "axolotl", "sentence_transformers"}
)
"""Top-level packages whose trainer classes are recognised."""

GENERIC_TRAINERS = frozenset({"Trainer", "Seq2SeqTrainer", "SentenceTransformerTrainer"})
"""Trainer names every framework has for something of its own: known only from their own library."""

PREFIXES = ("Custom", "Unsloth", "Ray", "Fast", "Actor", "Critic", "Base")
"""Prefixes frameworks put before a library trainer's name."""


TRAINER_CONFIG_SUFFIXES = ("Config", "Arguments")
"""Endings of a trainer's settings class (``DPOConfig``, ``UnslothGRPOConfig``, ``RewardArguments``)."""


def config_stem(name: str) -> str | None:
    """Return a settings class's name without its ending (``UnslothGRPOConfig`` -> ``UnslothGRPO``)."""
    return next((name[: -len(s)] for s in TRAINER_CONFIG_SUFFIXES if name.endswith(s)), None)


def trainer_named(name: str) -> Trainer | None:
    """Return the stage of the trainer class called ``name`` (framework prefixes allowed), if known."""
    for prefix in PREFIXES:
        # (a prefixed generic name, ``BaseTrainer`` or ``CustomTrainer``, is a project's own base: it
        # says no more than ``Trainer`` does)
        if (
            name.startswith(prefix)
            and (rest := name[len(prefix) :]) in TRAINERS
            and rest not in GENERIC_TRAINERS
        ):
            return TRAINERS[rest]
    return TRAINERS.get(name) if name != "Trainer" else None


def trainer_of(qualified: str) -> Trainer | None:
    """Return the stage the class ``qualified`` runs, or None when it is no known trainer.

    Classes of :data:`TRAINING_LIBRARIES` (and relative imports) are known by their name with the
    frameworks' prefixes. A class of another package is known only by a trainer's exact, specific name
    (``verifiers.GRPOTrainer``): a library's ``GRPOTrainer`` trains GRPO whoever wrote it, but its
    generic ``Trainer`` or a prefixed name says nothing, nor does a class of a framework whose own
    trainers the table lists (:data:`~arb_audit.analyzer.frameworks.TRAINER_PACKAGES`).
    """
    from arb_audit.analyzer.frameworks import CONFIG_PICKED_TRAINERS, TRAINER_PACKAGES

    root, _, rest = qualified.partition(".")
    name = qualified.rsplit(".", 1)[-1]
    if not rest:
        return None
    if qualified.startswith(".") and name in CONFIG_PICKED_TRAINERS:
        return None  # a fork's own RayPPOTrainer runs what its config picks (framework_entry says so)
    if root not in TRAINING_LIBRARIES and not qualified.startswith("."):
        specific = _specific_trainer(name)
        return TRAINERS[specific] if specific is not None and root not in TRAINER_PACKAGES else None
    if name == "Trainer":
        return TRAINERS["Trainer"] if root == "transformers" else None  # not any framework's generic one
    return trainer_named(name)


NOT_TRAINER_SUFFIXES = (
    *("Config", "Arguments", "Args", "Callback", "Mixin", "Output", "State"),
    # what reports on or serves a trainer (as gradient_step's TRAINER_PART_WORDS says of a project's)
    *(
        "Stats",
        "Statistics",
        "Metrics",
        "Bar",
        "Evaluator",
        "Scheduler",
        "Head",
        "Wrapper",
        "Module",
        "Model",
    ),
)
"""Endings of a class named after a trainer that is not one (``DPOTrainerConfig``, ``SFTTrainerBar``)."""


def _specific_trainer(name: str) -> str | None:
    """Return the specific library trainer ``name`` is, or extends by a suffix (``PPOTrainerForZero3``).

    A project's copy of a library trainer keeps the name and says how it differs after it; the
    generic ``Trainer`` says nothing whatever follows it.
    """
    if name in TRAINERS:
        return name if name not in GENERIC_TRAINERS else None
    if name.endswith(NOT_TRAINER_SUFFIXES):
        return None
    at = name.find("Trainer")
    base = name[: at + len("Trainer")] if at > 0 else ""
    rest = name[len(base) :]
    if base in TRAINERS and base not in GENERIC_TRAINERS and rest[:1].isupper() | rest[:1].isdigit():
        return base
    return None


ROUTE_WORDS: dict[str, str] = {
    "pt": "SFT",
    "sft": "SFT",
    # read as two words run together (SupervisedFinetuneTrainer): "supervised" alone is also
    # self-supervised, semi-supervised, supervised contrastive
    "supervisedfinetune": "SFT",
    "supervisedfinetuning": "SFT",
    "dpo": "DPO",
    "ipo": "DPO",
    "kto": "DPO",
    "orpo": "DPO",
    "simpo": "DPO",
    "cpo": "DPO",
    "sppo": "DPO",  # self-play preference optimisation: a preference loss on self-generated pairs
    "rm": "REWARD_MODEL",
    "reward": "REWARD_MODEL",
    "ppo": "PPO",
    "gae": "PPO",
    "rloo": "PPO",
    "reinforce": "PPO",
    "reinforce_baseline": "PPO",
    "reinforce++": "PPO",
    "reinforce_pp": "PPO",
    "remax": "PPO",
    # regression forms of policy optimisation (Gao et al. 2024): REBEL regresses the difference of two
    # responses' rewards onto their log-ratio difference, REFUEL its multi-turn extension
    "rebel": "PPO",
    "refuel": "PPO",
    "ilql": "PPO",  # implicit language Q-learning: offline RL, of the other-RL family
    "rrhf": "DPO",  # a ranking loss over scored responses: the preference family
    "grpo": "GRPO",
    "group_norm": "GRPO",
    "dr_grpo": "GRPO",
    "dapo": "GRPO",
    "gspo": "GRPO",
}
"""Values of a stage/algorithm flag, config key or table key, by the file label they select."""

NAME_ROUTE_WORDS: dict[str, str] = {"rlhf": "PPO"}
"""Words that name a route only in the name of code (``RLHFTrainer``, ``train_rlhf``, a script
``step3_rlhf``), read after every word of :data:`ROUTE_WORDS`: RLHF as the InstructGPT recipe names it,
a reward model's scores optimised by PPO. As a setting's value (``masking_strategy == "rlhf"``) it
names no algorithm; a named trainer decides only where no loss the file shows says otherwise."""


_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


def route_of_name(qualified: str) -> str | None:
    """Return the label a function or class names as its route (``run_sft``, ``train_dpo``), if any.

    Frameworks name their per-route entry points after the route; this reads the last component of
    the resolved qualified name, word by word.
    """
    if (trainer := trainer_of(qualified)) is not None:
        label = STAGE_LABELS.get(trainer.kind)
        return label if label not in (None, "MERGE", "UNKNOWN") else None
    named = route_word(qualified.rsplit(".", 1)[-1])
    return named[0] if named is not None else None


LABEL_KINDS: dict[str, str] = {
    label: kind for kind, label in STAGE_LABELS.items() if label not in ("MERGE", "UNKNOWN")
}
"""The stage kind of each training-route label a name can say (SFT -> sft, GRPO -> grpo)."""


AMBIGUOUS_WORDS = frozenset({"reward", "rm", "pt"})
"""Route words that name other things as often (a reward function, a ``.pt`` checkpoint): not read in
the name of the code a stage sits in."""


def before_origin(said: Sequence[str]) -> list[str]:
    """Return a name's words before a later ``from``, which say where its object starts, not what it is.

    ``init_trainer_from_sft_checkpoint`` builds a trainer; the SFT checkpoint is what it starts from.
    """
    said = list(said)
    return said[: said.index("from", 1)] if "from" in said[1:] else said


def route_word(identifier: str, strict: bool = False) -> tuple[str, str] | None:
    """Return the label an identifier names word by word (``DAPOTrainer`` -> GRPO) and the word that does.

    ``strict``: skip :data:`AMBIGUOUS_WORDS` (for a function or class that names no trainer).
    """
    words = before_origin(name_words(identifier))
    skipped = AMBIGUOUS_WORDS if strict else frozenset()
    found = next(((ROUTE_WORDS[w], w) for w in words if w in ROUTE_WORDS and w not in skipped), None)
    if found is None:
        # an acronym written in mixed case splits in two (``SimPOConfig``: "sim", "po")
        joined = [a + b for a, b in pairwise(words)]
        found = next(((ROUTE_WORDS[w], w) for w in joined if w in ROUTE_WORDS and w not in skipped), None)
    if found is None:
        found = next(((label, w) for w in words if (label := named_variant(w)) is not None), None)
    if found is None:
        found = next(
            ((NAME_ROUTE_WORDS[w], w) for w in words if w in NAME_ROUTE_WORDS and w not in skipped), None
        )
    return found


TRAINING_WORDS = frozenset({"train", "training", "fit", "finetune"})
"""Words of a function's name that, handed an optimiser, runs the training loop with it."""
TRAINER_MODULE_WORDS = TRAINING_WORDS | {"trainer", "trainers"}
"""Words of a module's own name that say it holds a package's training code (``core/trainer.py``)."""
ENTRY_WORDS = frozenset(
    {
        *("main", "run", "train", "training", "start", "launch"),
        *("cli", "app", "entry", "entrypoint", "orchestrator"),
    }
)
"""Words of a function named only for starting what its module does (``main_orchestrator_cli``)."""


def name_words(identifier: str) -> list[str]:
    """Return an identifier's words, lower-cased, an acronym one word (``SFTRunner`` -> sft, runner)."""
    return [w.lower() for w in _TOKENS.findall(identifier)]


def is_training_module(name: str) -> bool:
    """Say whether a module's own name is for training alone (``trainer``, ``trainers``, ``train``)."""
    said = set(name_words(name))
    return bool(said) and said <= TRAINER_MODULE_WORDS


def training_module_packages(module: str) -> list[str]:
    """Return the packages around a module named for training, innermost first (else none).

    ``grpo_project.core.trainer`` -> ``core``, ``grpo_project``; ``grpo_project.utils`` or a module
    naming what it trains (``train_rqvae``) -> none.
    """
    *packages, last = module.split(".")
    return [p for p in reversed(packages) if p] if is_training_module(last) else []


def route_package(module: str, function: str, skipped: AbstractSet[str] = frozenset()) -> str | None:
    """Return the package that names the route an entry of a training module runs, if one does.

    ``from grpo_project.core.trainer import main_orchestrator_cli``: the training module of a package
    named for one route runs that route. Only for a function named for starting the module's work
    (``main``, ``train``, ``run_cli``), not one naming what else it trains (``train_reward_model``); the
    innermost package naming a route decides, and one it names ambiguously (``reward_model``) or one
    with a word of ``skipped`` (``sft_eval``: evaluation code) names none.
    """
    if not set(name_words(function)) <= ENTRY_WORDS:
        return None
    for package in training_module_packages(module):
        if set(name_words(package)) & skipped:
            return None
        found = route_word(package)
        if found is not None:
            return package if found[0] in LABEL_KINDS and found[1] not in AMBIGUOUS_WORDS else None
    return None


_NAMED_VARIANT = re.compile(r"[a-z]{1,4}dpo|[a-z]{1,5}grpo")
"""A word a variant is named by: a short prefix before "dpo" or "grpo"."""


def named_variant(word: str) -> str | None:
    """Return the label a variant's one-word name says, if it is one (``cmdpo`` -> DPO).

    The preference family's variants are named XDPO (MODPO, TDPO, cDPO, SDPO), DDPO being diffusion
    RL; a project's GRPO is named XGRPO (VLMGRPOTrainer).
    """
    if _NAMED_VARIANT.fullmatch(word) is None or word == "ddpo":
        return None
    return "DPO" if word.endswith("dpo") else "GRPO"


def resolve_trainer(
    names: AbstractSet[str], class_bases: dict[str, set[str]], ancestry: Callable[[str], set[str]]
) -> tuple[str, Trainer] | None:
    """Return the trainer a class expression denotes, given its qualified names, and which name says so.

    A library trainer is known by its name; a class of the file that derives from one is known by its
    own name when that names a trainer (``PairwiseTrainer(Trainer)``), else by the trainer it derives from.
    """
    for name in sorted(names):
        known = sorted((a, t) for a in ancestry(name) if (t := trainer_of(a)) is not None)
        if not known:
            continue
        own = trainer_named(name.rsplit(".", 1)[-1]) if name in class_bases else None
        if own is not None and subclass_named_for(own, *known[0]):
            return name, own
        return known[0]
    return None


def subclass_named_for(own: Trainer, base_name: str, base: Trainer) -> bool:
    """Say whether a trainer subclass's own name decides its stage over its base's.

    A subclass of a generic trainer is named after what it does (``PairwiseTrainer(Trainer)``); so is a
    policy-gradient base's subclass named for another member of the family (``DAPOTrainer(RayPPOTrainer)``).
    A subclass of another specific trainer does what its base does, whatever its name
    (``CustomRewardTrainer(PPOTrainer)`` customises PPO's reward).
    """
    generic = base_name.rsplit(".", 1)[-1] in GENERIC_TRAINERS
    return generic or own.kind == base.kind or {own.kind, base.kind} <= POLICY_GRADIENT
