"""Stage kinds and route labels.

A *stage* turns one model into another; a *route* is the chain of stages from the base model to an
artifact. Tables count route labels; a chain of two or more training stages is ``COMPOSITE``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, get_args


@dataclass(frozen=True, slots=True)
class Definition:
    """A named category with the sentence that defines it."""

    name: str
    """The identifier used in stores, JSON and tables."""
    definition: str
    """What it means, as the reviewers and the paper tables read it."""


STAGE_KINDS: tuple[Definition, ...] = (
    Definition("sft", "supervised loss on fixed targets (full, LoRA, QLoRA)"),
    Definition("dpo", "offline preference optimisation (dpo, ipo, kto, orpo, simpo, cpo)"),
    Definition("grpo", "group-relative policy gradient (grpo, dapo, dr_grpo, gspo)"),
    Definition("ppo", "other policy gradient (ppo, rloo, reinforce, reinforce_pp, online_dpo)"),
    Definition("reward_model", "trains a scorer, not the policy"),
    Definition("merge", "combines the weights of several models"),
    Definition("copy", "the artifact is the base model or another given checkpoint, unchanged"),
    Definition("config_only", "only non-weight files differ (chat template, generation config, tokenizer)"),
    Definition("unknown", "weights changed but nothing says how"),
)
"""Every kind of stage, in the order of TAXONOMY.md."""

ROUTE_LABELS: tuple[Definition, ...] = (
    Definition("SFT", "a single supervised fine-tuning stage"),
    Definition("DPO", "a single preference-optimisation stage"),
    Definition("GRPO", "a single group-relative policy-gradient stage"),
    Definition("PPO", "a single other policy-gradient stage"),
    Definition("ONLINE_RL", "a single policy-gradient stage, on-policy and interactive (multi-turn)"),
    Definition("COMPOSITE", "two or more training stages, shown as a chain such as SFT→GRPO(online)"),
    Definition("MERGE", "a merge of model weights"),
    Definition("NO_TRAINING", "a copy of the base model or a change of non-weight files only"),
    Definition("UNKNOWN", "the weights changed but no evidence says how"),
)
"""Every route label a table may show."""

StageKind = Literal["sft", "dpo", "grpo", "ppo", "reward_model", "merge", "copy", "config_only", "unknown"]
"""A stage kind (:data:`STAGE_KINDS`): the type of ``kind`` fields in the audit's schema."""
RouteLabel = Literal["SFT", "DPO", "GRPO", "PPO", "ONLINE_RL", "COMPOSITE", "MERGE", "NO_TRAINING", "UNKNOWN"]
"""A route label (:data:`ROUTE_LABELS`)."""

KIND_LABELS: dict[str, RouteLabel] = {
    "sft": "SFT",
    "dpo": "DPO",
    "grpo": "GRPO",
    "ppo": "PPO",
    "merge": "MERGE",
}
"""The route label of a stage kind that is a route of its own (reward models train no policy; copies
and non-weight changes train nothing)."""
POLICY_GRADIENT: frozenset[str] = frozenset({"grpo", "ppo"})
"""The policy-gradient kinds: the ones on-policy and interactive qualify (TAXONOMY.md)."""
TRAINING_KINDS: frozenset[str] = frozenset({"sft", "dpo", "grpo", "ppo", "reward_model", "merge"})
"""Kinds whose stage changes weights by training or combining them."""


def label_of(kind: str, on_policy: bool | None = None, interactive: bool | None = None) -> RouteLabel | None:
    """Return the route label of a stage (None for a kind that is no route of its own).

    Policy gradient that is on-policy (or not known to be off-policy) and interactive is ``ONLINE_RL``.
    """
    if kind in POLICY_GRADIENT and on_policy is not False and interactive:
        return "ONLINE_RL"
    return KIND_LABELS.get(kind)


def lineage_label(training_labels: Sequence[str | None], stage_kinds: Sequence[str]) -> str:
    """Return the table label of a lineage from its training stages' labels and all its stages' kinds.

    Two training stages or more are ``COMPOSITE``, one is its own label (``UNKNOWN`` when it has
    none); a lineage of copies and non-weight changes only is ``NO_TRAINING``; anything else, an
    empty lineage included, is ``UNKNOWN``.
    """
    if len(training_labels) >= 2:
        return "COMPOSITE"
    if training_labels:
        return training_labels[0] or "UNKNOWN"
    if stage_kinds and all(kind in ("copy", "config_only") for kind in stage_kinds):
        return "NO_TRAINING"
    return "UNKNOWN"


class LineageStep(Protocol):
    """A stage of a lineage as the audit's schema holds it (``arb_audit.schema.Stage``)."""

    @property
    def kind(self) -> str:
        """Its stage kind."""
        ...

    @property
    def label(self) -> str | None:
        """Its route label; None for copies and non-weight changes."""
        ...


def artifact_route(steps: Iterable[LineageStep] | None) -> str:
    """Return the route label of a lineage (``route.lineage[path]`` of an audit).

    The rule of :func:`lineage_label`, on the stages' ``label`` and ``kind``; a missing lineage is
    ``UNKNOWN``.
    """
    chain = list(steps or ())
    return lineage_label([s.label for s in chain if s.label], [s.kind for s in chain])


def names(definitions: tuple[Definition, ...]) -> tuple[str, ...]:
    """Return the names of ``definitions``, in order."""
    return tuple(d.name for d in definitions)


def literal_names(literal: object) -> tuple[str, ...]:
    """Return the values of a ``Literal`` type, in order (to check one against its definitions)."""
    return tuple(str(v) for v in get_args(literal))


def lookup(definitions: tuple[Definition, ...], name: str) -> Definition:
    """Return the definition called ``name``; a name outside the taxonomy is a KeyError naming it."""
    for d in definitions:
        if d.name == name:
            return d
    raise KeyError(f"{name!r} is not in the taxonomy ({', '.join(d.name for d in definitions)})")
