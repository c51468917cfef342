"""Each vocabulary is defined once: the Literal types the schema uses name exactly the taxonomy's
definitions, in TAXONOMY.md's order, and every derived set is drawn from them."""

from __future__ import annotations

from arb_audit.taxonomy.failures import FAILURE_MODES, INTEGRITY_FLAGS, FailureMode, IntegrityFlag
from arb_audit.taxonomy.routes import (
    KIND_LABELS,
    POLICY_GRADIENT,
    ROUTE_LABELS,
    STAGE_KINDS,
    TRAINING_KINDS,
    RouteLabel,
    StageKind,
    label_of,
    literal_names,
    names,
)
from arb_audit.taxonomy.strength import STRENGTHS, Strength, weakest
from arb_audit.taxonomy.tables import QUADRANT_CELLS


def test_each_literal_type_is_its_definitions() -> None:
    assert literal_names(StageKind) == names(STAGE_KINDS)
    assert literal_names(RouteLabel) == names(ROUTE_LABELS)
    assert literal_names(FailureMode) == names(FAILURE_MODES)
    assert literal_names(IntegrityFlag) == names(INTEGRITY_FLAGS)
    assert literal_names(Strength) == names(STRENGTHS)
    assert QUADRANT_CELLS == (
        "score_up+intended",
        "score_up+not_intended",
        "no_gain+intended",
        "no_gain+not_intended",
    )


def test_derived_sets_are_drawn_from_the_definitions() -> None:
    kinds, labels = set(names(STAGE_KINDS)), set(names(ROUTE_LABELS))
    assert POLICY_GRADIENT <= TRAINING_KINDS <= kinds
    assert set(KIND_LABELS) <= TRAINING_KINDS and set(KIND_LABELS.values()) <= labels
    assert "harness_failure" in names(FAILURE_MODES)


def test_a_stage_is_labelled_online_only_when_policy_gradient_on_policy_and_interactive() -> None:
    assert label_of("grpo", True, True) == "ONLINE_RL"
    assert label_of("grpo", None, True) == "ONLINE_RL"  # not known to be off-policy
    assert label_of("grpo", False, True) == "GRPO"
    assert label_of("sft", True, True) == "SFT"
    assert label_of("copy") is None and label_of("reward_model") is None


def test_the_weakest_level_decides_a_chain() -> None:
    assert weakest(["verified", "supported"]) == "supported"
    assert weakest(["verified", "conflicting", "weak"]) == "conflicting"
    assert weakest([]) == "none"
