"""The routes a Python file could show, read from its words alone: the cheap pass over code no command ran.

A run's history holds many versions of each script (500 distinct files in 300 revisions is ordinary),
and most were never run. The files commands ran, and the last version of each file, are analysed in
depth; another version only matters for the routes it was *written* with, and only when it could show
a route the analysis has not found yet.

"Could show" is a superset of what the analysis finds, taken from the detectors' own triggers (a
detector only looks at a file that holds one of its ``TRIGGERS``): a trainer class's name gives that
trainer's route, or any route for a trainer class of the agent's own; a policy-gradient trainer beside
an environment's words could also be online RL; mergekit, weights arithmetic and a call of a function
named after merging give a merge, and so does folding a LoRA adapter, unless a library trainer is
constructed beside it (then the fold ends that trainer's stage); a gradient step's words beside a
function or class named for a route (defined or called), or a module one is imported from, give that
route; an object's ``finetune`` call gives SFT; and the words of a hand-written loss, of a model
compiled with a loss and fitted, of a gradient step whose loss is here, of a framework in the table or
of a training launched as a subprocess could be any route.
"""

from __future__ import annotations

import bisect
import re

from arb_audit.analyzer.detectors.gradient_step import (
    CRITIC_WORDS,
    FINE_TUNE_METHODS,
    HOSTED_FINE_TUNING,
    MODEL_TRAINING_METHODS,
    OPTIMISER_KEYWORD_WORDS,
    SCALING_WORDS,
    STAGE_ALIASES,
    STAGE_KEYWORDS,
    GradientStep,
    names_loss_function,
    updates_model,
)
from arb_audit.analyzer.detectors.handwritten_loss import HandwrittenLoss
from arb_audit.analyzer.detectors.merge import ADAPTER_COMBINATIONS, FOLD_METHODS, HAND_FOLD_WORDS
from arb_audit.analyzer.detectors.route_dispatch import MULTI_TURN_FLAGS
from arb_audit.analyzer.detectors.subprocess_launch import SubprocessLaunch
from arb_audit.analyzer.detectors.tool_feedback import OBSERVATION_TAG
from arb_audit.analyzer.detectors.trainer_rollouts import INTERACTIVE_KEYWORDS
from arb_audit.analyzer.detectors.weight_average import WeightAverage
from arb_audit.analyzer.frameworks import IMPORT_WORDS
from arb_audit.analyzer.loss_slice import names_rl_loss, words
from arb_audit.analyzer.routes import ROUTE_KINDS
from arb_audit.analyzer.trainers import (
    LABEL_KINDS,
    TRAINERS,
    TRAINING_LIBRARIES,
    TRAINING_WORDS,
    route_word,
    trainer_named,
    training_module_packages,
)
from arb_audit.taxonomy.routes import POLICY_GRADIENT, label_of

ALL_ROUTES = frozenset([*ROUTE_KINDS.values(), "ONLINE_RL"])
"""Every table label a file's stages can have."""
ANY_ROUTE_TRIGGERS = (
    *HandwrittenLoss.TRIGGERS,
    *SubprocessLaunch.TRIGGERS,
    *GradientStep.LOSS_TRIGGERS,
    *IMPORT_WORDS,
)
"""Words of detectors whose stage can be of any kind (a loss computed here, a framework of the table)."""
_COMPILED_WITH_LOSS = re.compile(r"\.compile\([^)]*\bloss\s*=")
"""A model compiled with a loss, Keras-style (``model.compile(loss=..., optimizer=...)``): fitted, that
loss, of any kind, decides."""
_LOSS_AND_OPTIMISER_HANDED = re.compile(
    rf"(?i:{'|'.join(sorted(SCALING_WORDS))})\w*\s*\(\s*\w*loss\w*\s*,"
    rf"[^()]*(?:{'|'.join(sorted(OPTIMISER_KEYWORD_WORDS))})"
)
"""A loss scaler handed a loss first and an optimiser (``loss_scaler(loss, optimizer, ...)``): it steps
on that loss, of any kind (GradientStep's handed-loss step)."""
MERGE_WORDS = ("mergekit", "merge_method", *WeightAverage.TRIGGERS, *ADAPTER_COMBINATIONS, *HAND_FOLD_WORDS)
"""Words of a merge by mergekit (known by its qualified names or a configuration's ``merge_method``), by
arithmetic on state dicts, of adapters combined into one, or of an adapter folded by hand."""
_MERGE_CALL = re.compile(r"\b(\w*merg\w*)\s*\(")
"""A call of a function named after merging (a library's merge method)."""
_TRAINER_WORD = re.compile(r"\b\w*Trainer\w*")
_TRAINER_CALL = re.compile(r"(?:\b([A-Za-z_][\w.]*)\.)?\b(\w*Trainer)\s*\(")
"""A trainer class called, with what qualifies it (``trl.GRPOTrainer(``)."""
_IMPORTS = re.compile(
    rf"^[ \t]*from[ \t]+({'|'.join(sorted(TRAINING_LIBRARIES))})\b[\w.]*[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)",
    re.M,
)
"""``from trl import A, B`` (or a parenthesised list): a library and the names taken from it."""
_TRAINER_IMPORT = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+[^\n]*\bTrainer\b", re.M)
"""``from pkg.module import Trainer`` (and other names on the line)."""
_FROM_MODULE = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import\b", re.M)
"""The module of ``from pkg.module import helper`` (a step's helper is named for a route by it)."""
_CALLED = re.compile(r"\b(\w+)\s*\(")
"""A function or class called (the helper a step's optimiser is handed to)."""
_FACTORY_BUILT = re.compile(r"\b(\w+)\s*\.\s*from_(?:model|pretrained|config)\s*\(")
"""A class whose factory method builds an object (``TrainableDPO.from_model(model)``: its ``train``)."""
_IMPORTED = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+\(?([^)\n]*)", re.M)
"""What an import line imports (its first line: ``from m import A as B, C``)."""
_RENAMED = re.compile(r"\b(\w+)\s+as\s+\w+")
"""A name imported under another (``PPOAgent as Agent``: the class is called by the other name)."""
_TARGET = re.compile(r"\btarget\s*=\s*(\w+)")
"""A function handed to a process or thread to run (``Process(target=run_sft)``)."""
_METHOD_CALL = re.compile(r"\.\s*(\w+)\s*\(")
"""A method called (``worker.train_critic(``)."""
_WORD = re.compile(r"\w+")
_TRAINER_STEPPED = re.compile(r"(\w*(?i:trainer))\s*\.\s*step\s*\(")
"""A trainer's ``step(`` (``ppo_trainer.step(queries, responses, rewards)``: GradientStep's rewarded step)."""
_STAGE_VALUE = re.compile(r"""\b(\w+)\s*=\s*["']([\w-]+)["']""")
"""A keyword given a literal (``stage="dpo"``): a stage keyword's names the stage a call runs."""
_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.M)
"""Functions and classes the file defines (a gradient step in one named for a route takes it)."""
_ENVIRONMENT = re.compile(
    r"\.\s*step\s*\(\s*[^\s)]"  # env.step(action), as MultiTurnLoop counts a step
    + "".join(rf"|\b{re.escape(k)}\s*=" for k in INTERACTIVE_KEYWORDS)
    + "".join(f"|{re.escape(f)}" for f in MULTI_TURN_FLAGS)
    + f"|(?i:{OBSERVATION_TAG.pattern})"  # a tool's result spliced into the text (ToolFeedback)
    + r"|(?i:agent|tool|multi_?turn)\w*\s*=\s*True"  # a trainer switched to an agent's turns
)
"""What makes a policy-gradient stage interactive: an environment stepped with an action, a trainer
given an environment or tools or switched to an agent's turns, a launcher's multi-turn option, a tool's
result spliced into the text."""


MAX_ARGUMENTS = 4000
"""Characters after a training call's opening parenthesis read for a loss function handed to it."""


def _trains_given_loss_function(text: str) -> bool:
    """Say whether a helper named for training may be handed a loss function, whose form may be any.

    A superset of GradientStep's rule: a loss function named within :data:`MAX_ARGUMENTS` characters
    after the opening parenthesis of a call named with a training word.
    """
    handed = [m.start() for m in _WORD.finditer(text) if names_loss_function(m.group())]
    if not handed:
        return False  # (most files: no loss function named at all)
    for match in _CALLED.finditer(text):
        if set(words(match.group(1))) & TRAINING_WORDS:
            at = bisect.bisect_left(handed, match.end())
            if at < len(handed) and handed[at] - match.end() <= MAX_ARGUMENTS:
                return True
    return False


def possible_routes(text: str) -> frozenset[str]:
    """Return every table label the stages of the Python file ``text`` could have (a superset)."""
    if (
        any(t in text for t in ANY_ROUTE_TRIGGERS)
        or (".fit(" in text and _COMPILED_WITH_LOSS.search(text))
        or _LOSS_AND_OPTIMISER_HANDED.search(text)
        or _trains_given_loss_function(text)
    ):
        return ALL_ROUTES
    found: set[str] = set()
    if (
        any(w in text for w in MERGE_WORDS)
        or any(name not in FOLD_METHODS for name in _MERGE_CALL.findall(text))
        or (any(m in text for m in FOLD_METHODS) and not _constructs_a_trainer(text))
    ):
        found.add("MERGE")
    if any(t in text for t in GradientStep.TRIGGERS):
        # a step whose loss is not classified takes the route its function or class is named for
        # (or a helper or class it is handed to: ``DPOTrainModule(model, optim)``)
        froms = _FROM_MODULE.findall(text)
        modules = {m.rsplit(".", 1)[-1] for m in froms}  # (a helper's: ``from run_sft``)
        # (and the packages of a training module: ``from grpo_project.core.trainer import main``)
        modules.update(p for m in froms for p in training_module_packages(m))
        staged = {
            STAGE_ALIASES.get(v.lower(), v) for k, v in _STAGE_VALUE.findall(text) if k in STAGE_KEYWORDS
        }
        ran = {*_CALLED.findall(text), *_TARGET.findall(text), *_FACTORY_BUILT.findall(text)}
        ran.update(n for imported in _IMPORTED.findall(text) for n in _RENAMED.findall(imported))
        for name in {*_DEFINED.findall(text), *ran, *modules, *staged}:
            named = route_word(name, strict=True)
            if named is not None and named[0] in LABEL_KINDS:
                found.add(named[0])
                if named[0] in ("GRPO", "PPO") and _ENVIRONMENT.search(text):
                    found.add("ONLINE_RL")
    for trainer in _TRAINER_STEPPED.findall(text):
        # a trainer stepped on samples and their rewards: policy gradient, or the route it is named for
        named = route_word(trainer, strict=True)
        found.add(named[0] if named is not None and named[0] in LABEL_KINDS else "PPO")
        if _ENVIRONMENT.search(text):
            found.add("ONLINE_RL")
    if "loss" in text.lower() and any(names_rl_loss(w) for w in set(_WORD.findall(text))):
        found |= {"PPO", "GRPO"}  # a loss the code names a policy or value loss (loss_slice)
    if any(api.rsplit(".", 1)[0].lstrip(".") in text for api in HOSTED_FINE_TUNING):
        found |= {"SFT", "DPO"}  # a hosted fine-tuning job, supervised or preference
    if any(f".{m}(" in text for m in FINE_TUNE_METHODS | MODEL_TRAINING_METHODS) or _FINE_TUNING_CLASS.search(
        text
    ):
        # an object's fine-tuning run told no stage, or a class named for fine-tuning run: supervised
        found.add("SFT")
    if any(updates_model(name, CRITIC_WORDS) for name in _METHOD_CALL.findall(text)):
        found.add("PPO")  # a worker's critic update: the actor-critic family
        if _ENVIRONMENT.search(text):
            found.add("ONLINE_RL")
    if "Trainer" not in text:
        return frozenset(found)
    interactive = _ENVIRONMENT.search(text) is not None
    for word in set(_TRAINER_WORD.findall(text)):
        trainer = TRAINERS["Trainer"] if word == "Trainer" else trainer_named(word)
        if trainer is None or (word == "Trainer" and _own_trainer(text)):
            return ALL_ROUTES  # a trainer class of the agent's own could train any way
        if (label := label_of(trainer.kind, trainer.on_policy)) is not None:
            found.add(label)
        if trainer.kind in POLICY_GRADIENT and trainer.on_policy is not False and interactive:
            found.add("ONLINE_RL")
    return frozenset(found)


_FINE_TUNING_CLASS = re.compile(r"\b(?:[A-Z]\w*?)?Fine[Tt]un(?:ing|er)\b")
"""A class named for fine-tuning (``LoRAFineTuning``, ``Finetuner``): run, supervised (gradient_step)."""


def _own_trainer(text: str) -> bool:
    """Whether ``text`` takes a class called ``Trainer`` from a package other than transformers.

    A project's own ``Trainer`` is named for its stage by its module (``from rl.dpo_trainer import
    Trainer``), which the gradient step reads.
    """
    return any(m.split(".")[0] != "transformers" for m in _TRAINER_IMPORT.findall(text))


def _constructs_a_trainer(text: str) -> bool:
    """Whether ``text`` calls a library's trainer class, imported from that library or called by it.

    ``Trainer`` is transformers' only; the others any training library's (as the detectors resolve
    them by qualified name).
    """
    imported: set[tuple[str, str]] = set()
    for library, names in _IMPORTS.findall(text):
        imported |= {(library, name) for name in _WORD.findall(names)}
    for qualifier, name in _TRAINER_CALL.findall(text):
        libraries = {"transformers"} if name == "Trainer" else TRAINING_LIBRARIES
        if name != "Trainer" and trainer_named(name) is None:
            continue
        root = qualifier.split(".")[0] if qualifier else None
        if (root in libraries) or any((library, name) in imported for library in libraries):
            return True
    return False
