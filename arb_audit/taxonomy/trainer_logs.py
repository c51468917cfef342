"""What a trainer's own logs and model card say about the stage kind that produced a model.

TRL's trainers log distinctive keys into ``trainer_state.json`` ``log_history`` and tag the model cards
they write; these tables map both onto stage kinds (TAXONOMY.md). A plain HF ``Trainer`` logs only
``loss``, which says "some supervised or custom loss", not which: it is weak evidence of ``sft``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LogSignature:
    """Keys (or key prefixes) whose presence in a log names a stage kind."""

    kind: str
    """The stage kind (arb_audit.taxonomy.routes.STAGE_KINDS)."""
    keys: tuple[str, ...]
    """Exact keys or prefixes ending in ``/``; any one of them is enough."""
    strong: bool
    """Whether these keys belong to that trainer alone (False: shared by other losses)."""


LOG_SIGNATURES: tuple[LogSignature, ...] = (
    LogSignature(
        "dpo",
        ("rewards/chosen", "rewards/rejected", "rewards/margins", "logps/chosen", "logps/rejected"),
        True,
    ),
    LogSignature("grpo", ("reward_std", "frac_reward_zero_std", "completions/", "rewards/"), True),
    LogSignature(
        "ppo", ("objective/kl", "objective/rlhf_reward", "ppo/", "val/", "policy/approxkl_avg"), True
    ),
    LogSignature("sft", ("mean_token_accuracy", "num_tokens"), True),
    LogSignature("sft", ("loss", "train_loss"), False),
)
"""Checked in order: the first signature that matches decides (DPO's ``rewards/chosen`` before
GRPO's ``rewards/<function>``)."""

CARD_KINDS: dict[str, str] = {
    "sft": "sft",
    "dpo": "dpo",
    "kto": "dpo",
    "orpo": "dpo",
    "cpo": "dpo",
    "ipo": "dpo",
    "grpo": "grpo",
    "ppo": "ppo",
    "rloo": "ppo",
    "online-dpo": "ppo",
    "online_dpo": "ppo",
    "reward-trainer": "reward_model",
    "reward_model": "reward_model",
}
"""Model-card tags and "trained with X" names that name a stage kind (lower-cased)."""


def _matches(key: str, pattern: str) -> bool:
    return key.startswith(pattern) if pattern.endswith("/") else key == pattern


def kind_from_log_keys(keys: list[str]) -> tuple[str, bool] | None:
    """Return ``(stage kind, strong)`` for the keys a trainer logged, or None when they name none."""
    for signature in LOG_SIGNATURES:
        if any(_matches(k, p) for k in keys for p in signature.keys):
            return signature.kind, signature.strong
    return None


def kind_from_card(tags: list[str], trained_with: str | None) -> str | None:
    """Return the stage kind a model card names (its "trained with X" first, then its tags), or None."""
    for name in [trained_with or "", *tags]:
        if (kind := CARD_KINDS.get(name.lower())) is not None:
            return kind
    return None
