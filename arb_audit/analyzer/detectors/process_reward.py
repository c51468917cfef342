"""Code named for a process or outcome reward model: a supervised loss in it trains a scorer, not a policy."""

from __future__ import annotations

import itertools

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words

PROCESS_REWARD = "process_reward"
"""Variant of a ``reward_head`` finding: the code is named for a process reward model."""
OUTCOME_REWARD = "outcome_reward"
"""Variant of a ``reward_head`` finding: the code is named for an outcome reward model."""
NAMED_SCORERS = frozenset({PROCESS_REWARD, OUTCOME_REWARD})
"""The variants of a ``reward_head`` finding that rest on names alone."""
NAMING_PAIRS = {("step", "tag"): PROCESS_REWARD, ("process", "reward"): PROCESS_REWARD}
"""Two words in a row of an identifier that name a process reward model's parts (``step_tag_id``,
``ProcessRewardModel``)."""
NAMING_WORDS = {"prm": PROCESS_REWARD, "orm": OUTCOME_REWARD}
"""Words that name a process or an outcome reward model alone (``prm_model``, ``PRMClassifier``,
``OrmTrainer``)."""


def reward_model_named(identifier: str) -> str | None:
    """Return which reward model an identifier names (:data:`PROCESS_REWARD`, :data:`OUTCOME_REWARD`)."""
    said = words(identifier)
    found = next((NAMING_WORDS[w] for w in said if w in NAMING_WORDS), None)
    return found or next((NAMING_PAIRS[p] for p in itertools.pairwise(said) if p in NAMING_PAIRS), None)


class ProcessReward(RouteDetector):
    """Identifiers named for a process reward model (PRM): ``prm``, ``step_tag``, ``ProcessReward``.

    A PRM is trained as a language model or a classifier whose targets sit only at the step
    separators (``+``/``-`` tokens after each ``step_tag``, a label per step): the loss is a plain
    cross-entropy, which alone reads as supervised fine-tuning. Code whose own names say it is about
    a PRM trains a step scorer, a reward model; a file that only runs a trained PRM (best-of-n,
    tree search) trains nothing, and this changes nothing there. Names in strings or comments (a
    ``prm800k`` dataset path) say what data is read, not what is trained: only identifiers count.
    """

    # (not a bare "orm": it is in "format", "normalize", "transformers", nearly every file)
    TRIGGERS = (
        "prm",
        "PRM",
        "Prm",
        "ORM",
        "Orm",
        "_orm",
        " orm_",
        "step_tag",
        "process_reward",
        "ProcessReward",
    )

    VALID = (
        # a dataset of that name read for supervised fine-tuning
        Valid("path = './dataset/organized_prm800k_train.json'\nrows = load(path)\n"),
        Valid("# trained like a prm, but it is not\nloss = model(ids, labels=labels).loss\n"),
        Valid("steps = text.split('\\n')\ntag = steps[-1]\n"),
    )
    INVALID = (
        Invalid(
            "step_tag_id = tokenizer.encode(f' {step_tag}')[-1]\n"
            "candidate_tokens = tokenizer.encode(f' {good_token} {bad_token}')\n",
            "reward_head",
            variant=PROCESS_REWARD,
        ),
        Invalid("from data_prm import process_prm_step\nds = ds.map(process_prm_step)\n", "reward_head"),
        Invalid("class PRMClassifier(nn.Module):\n    pass\n", "reward_head"),
        # a generative outcome verifier: a Yes/No token's cross-entropy on labelled candidates
        Invalid("class OrmTrainer(Trainer):\n    pass\n", "reward_head", variant=OUTCOME_REWARD),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.reported = False

    def visit_Name(self, node: cst.Name) -> None:
        if not self.reported and (named := reward_model_named(node.value)) is not None:
            self.reported = True
            what = "steps" if named == PROCESS_REWARD else "answers"
            message = f"{node.value} names a reward model: what the file trains scores {what}"
            self.report(node, "reward_head", message, variant=named)
