"""A reward model trained with a generic trainer: a sequence-classification head with one output."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid, keyword

SCALAR_HEADS = frozenset(
    {
        "transformers.AutoModelForSequenceClassification.from_pretrained",
        "transformers.AutoModelForSequenceClassification",
    }
)
"""Constructors of a classification head over a language model."""


class RewardHead(RouteDetector):
    """``AutoModelForSequenceClassification(..., num_labels=1)`` is a scalar scorer: a reward model.

    Trained with HF's generic ``Trainer`` (no ``RewardTrainer``), such a head makes the stage a reward
    model rather than supervised fine-tuning. In a PPO file the same head is the frozen reward or
    value model, which this does not change (only a generic trainer's stage is refined).
    """

    TRIGGERS = ("SequenceClassification",)

    VALID = (
        Valid(
            "from transformers import AutoModelForSequenceClassification\n"
            "AutoModelForSequenceClassification.from_pretrained('m', num_labels=3)\n"
        ),
    )
    INVALID = (
        Invalid(
            "from transformers import AutoModelForSequenceClassification as Head\n"
            "rm = Head.from_pretrained('base', num_labels=1)\n",
            "reward_head",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        labels = keyword(node, "num_labels")
        if (
            labels is not None
            and isinstance(labels.value, cst.Integer)
            and labels.value.value == "1"
            and self.names(node.func) & SCALAR_HEADS
        ):
            self.report(node, "reward_head", "a classification head with one output scores sequences")
