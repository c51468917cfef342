"""Each vocabulary is defined once: the Literal types the schema uses name exactly the taxonomy's
definitions, in TAXONOMY.md's order, and every derived set is drawn from them."""

from __future__ import annotations

import re
from pathlib import Path

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


def test_every_identifier_has_one_display_name() -> None:
    from arb_audit.taxonomy.labels import DISPLAY_NAMES, SHORT_NAMES, VOCABULARIES

    assert set(DISPLAY_NAMES) == set(VOCABULARIES)
    for vocabulary, identifiers in VOCABULARIES.items():
        assert tuple(DISPLAY_NAMES[vocabulary]) == identifiers, vocabulary
        assert all("_" not in name for name in DISPLAY_NAMES[vocabulary].values()), vocabulary
    for vocabulary, short in SHORT_NAMES.items():
        assert set(short) <= set(VOCABULARIES[vocabulary])


def test_chains_and_overrides_print_as_words(tmp_path: Path) -> None:
    import pytest

    from arb_audit.taxonomy.labels import DEFAULT_LABELS, load_labels

    assert DEFAULT_LABELS.chain("SFT→GRPO(online)") == "SFT → GRPO (online)"
    assert DEFAULT_LABELS.chain("(SFT + SFT→GRPO)→reward_model") == "(SFT + SFT → GRPO) → Reward model"
    assert DEFAULT_LABELS.name("chain", "NO_TRAINING") == "No training"
    assert DEFAULT_LABELS.name("field", "flag:grader_probing") == "Flag: Grader probing"
    path = tmp_path / "labels.toml"
    path.write_text('[route]\nONLINE_RL = "online RL"\n[short.quadrant]\n"score_up+intended" = "U+I"\n')
    labels = load_labels(path)
    assert (
        labels.name("route", "ONLINE_RL") == "online RL"
        and labels.short_name("quadrant", "score_up+intended") == "U+I"
    )
    assert DEFAULT_LABELS.name("route", "ONLINE_RL") == "Online RL"
    path.write_text('[route]\nONLINE = "x"\n')
    with pytest.raises(ValueError, match=r"\[route\] has no 'ONLINE'"):
        load_labels(path)
    path.write_text('[routes]\nSFT = "x"\n')
    with pytest.raises(ValueError, match=r"no vocabulary \[routes\]"):
        load_labels(path)


PACKAGE = Path(__file__).resolve().parents[2] / "arb_audit"
_KIND_SET = re.compile(r"""[({]\s*(?P<q>["'])(grpo|ppo)(?P=q)\s*,\s*(?P=q)(grpo|ppo)(?P=q)\s*[)}]""")


def test_the_policy_gradient_kinds_are_spelled_once() -> None:
    """Every module tests a stage for policy gradient with ``taxonomy.routes.POLICY_GRADIENT``."""
    spelled = [
        str(path.relative_to(PACKAGE))
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if any(m[2] != m[3] for m in _KIND_SET.finditer(line))  # the pair, not ("ppo", "ppo")
    ]
    assert spelled == ["taxonomy/routes.py"]
