"""Display names: how a paper prints each identifier of the taxonomy (one table, overridable).

Stores, JSON, CSV and Parquet keep the identifiers (``static_shortcut_without_transfer``); the LaTeX
and Markdown tables and the figures print the words this module gives (``Static shortcut, no
transfer``). Every name is defined once here, beside the definitions it names, in one table per
vocabulary; a short form is what a table too wide for its column prints instead, with a legend.

A paper may rename any of them with a TOML file (``arb-audit export --labels FILE``)::

    [route]
    ONLINE_RL = "Online RL"

    [short.quadrant]
    "score_up+intended" = "U+I"
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from arb_audit.taxonomy.failures import FAILURE_MODES, INTEGRITY_FLAGS, QuadrantCell
from arb_audit.taxonomy.routes import ROUTE_LABELS, STAGE_KINDS, literal_names, names
from arb_audit.taxonomy.strength import STRENGTHS

DISPLAY_NAMES: dict[str, dict[str, str]] = {
    "stage": {
        "sft": "SFT",
        "dpo": "DPO",
        "grpo": "GRPO",
        "ppo": "PPO",
        "reward_model": "Reward model",
        "merge": "Merge",
        "copy": "Copy",
        "config_only": "Config only",
        "unknown": "Unknown",
    },
    "route": {
        "SFT": "SFT",
        "DPO": "DPO",
        "GRPO": "GRPO",
        "PPO": "PPO",
        "ONLINE_RL": "Online RL",
        "COMPOSITE": "Composite",
        "MERGE": "Merge",
        "NO_TRAINING": "No training",
        "UNKNOWN": "Unknown",
    },
    "failure": {
        "early_coding_failure": "Early coding failure",
        "rollout_construction_failure": "Rollout construction failure",
        "reward_data_design_failure": "Reward/data design failure",
        "training_collapse": "Training collapse",
        "static_shortcut_without_transfer": "Static shortcut, no transfer",
        "harness_failure": "Harness failure",
        "timeout_no_submission": "Timeout, no submission",
        "regression": "Regression",
        "none": "None (improved)",
        # the two the tables add
        "undetermined": "Undetermined",
        "not_audited": "Not audited",
    },
    "flag": {
        "test_data_access": "Test data access",
        "hardcoded_answers": "Hard-coded answers",
        "evaluator_tampering": "Evaluator tampering",
        "disallowed_model": "Disallowed model",
        "external_api": "External API",
        "grader_probing": "Grader probing",
        "artifact_overwritten": "Artifact overwritten",
        "ledger_broken": "Ledger broken",
    },
    "quadrant": {
        "score_up+intended": "Score up, intended",
        "score_up+not_intended": "Score up, not intended",
        "no_gain+intended": "No gain, intended",
        "no_gain+not_intended": "No gain, not intended",
        "undetermined": "Undetermined",
    },
    "strength": {
        "verified": "Verified",
        "supported": "Supported",
        "weak": "Weak",
        "conflicting": "Conflicting",
        "none": "None",
    },
    "group": {"task": "Task", "stack": "Stack"},
    "field": {
        "route": "Route",
        "chain": "Chain",
        "failure": "Failure",
        "quadrant": "Quadrant",
        "flag": "Flag",
    },
}
"""Per vocabulary, each identifier's display name (as a table cell prints it)."""

SHORT_NAMES: dict[str, dict[str, str]] = {
    "failure": {
        "early_coding_failure": "Coding",
        "rollout_construction_failure": "Rollout",
        "reward_data_design_failure": "Reward/data",
        "training_collapse": "Collapse",
        "static_shortcut_without_transfer": "Shortcut",
        "harness_failure": "Harness",
        "timeout_no_submission": "Timeout",
        "regression": "Regression",
        "none": "None",
        "undetermined": "Undet.",
        "not_audited": "Unaudited",
    },
    "quadrant": {
        "score_up+intended": "Up/I",
        "score_up+not_intended": "Up/N",
        "no_gain+intended": "Flat/I",
        "no_gain+not_intended": "Flat/N",
        "undetermined": "Undet.",
    },
    "flag": {
        "test_data_access": "Test data",
        "hardcoded_answers": "Hard-coded",
        "evaluator_tampering": "Tampering",
        "disallowed_model": "Disallowed",
        "external_api": "Ext. API",
        "grader_probing": "Probing",
        "artifact_overwritten": "Overwritten",
        "ledger_broken": "Ledger",
    },
}
"""Short forms a table too wide for its column prints instead, explained in a legend under it."""

VOCABULARIES: dict[str, tuple[str, ...]] = {
    "stage": names(STAGE_KINDS),
    "route": names(ROUTE_LABELS),
    "failure": (*names(FAILURE_MODES), "undetermined", "not_audited"),
    "flag": names(INTEGRITY_FLAGS),
    "quadrant": (*literal_names(QuadrantCell), "undetermined"),
    "strength": names(STRENGTHS),
    "group": ("task", "stack"),
    "field": ("route", "chain", "failure", "quadrant", "flag"),
}
"""Every identifier each vocabulary holds: what a display name may be given for."""

_CHAIN_ARROW = re.compile(r"\s*→\s*")
_CHAIN_DETAIL = re.compile(r"(?<=[^\s(])\(")
_CHAIN_KIND = re.compile(r"(?<![\w(])([a-z][a-z_]*)(?![\w)])")
_CHAIN_LABEL = re.compile(r"(?<![\w(])([A-Z][A-Z_]+)(?![\w)])")
_CHAIN_VARIANT = re.compile(r"\(([a-z0-9]+(?:_[a-z0-9]+)+)\)")


@dataclass(frozen=True, slots=True)
class Labels:
    """Display names and short forms, per vocabulary: :data:`DISPLAY_NAMES` unless a file renames some."""

    names: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: DISPLAY_NAMES)
    """Per vocabulary, identifier → display name."""
    short: Mapping[str, Mapping[str, str]] = field(default_factory=lambda: SHORT_NAMES)
    """Per vocabulary, identifier → short form (where a table may need one)."""

    def name(self, vocabulary: str, identifier: str) -> str:
        """Return the display name of ``identifier``; one outside the vocabulary is shown as it is."""
        if vocabulary == "chain":
            return self.chain(identifier)
        if vocabulary == "field" and identifier.startswith("flag:"):
            flag = identifier.removeprefix("flag:")
            return f"{self.name('field', 'flag')}: {self.name('flag', flag)}"
        return self.names.get(vocabulary, {}).get(identifier, identifier)

    def short_name(self, vocabulary: str, identifier: str) -> str | None:
        """Return the short form of ``identifier``, None when it has none."""
        return self.short.get(vocabulary, {}).get(identifier)

    def chain(self, text: str) -> str:
        """Return a chain as a paper prints it: ``SFT→GRPO(online)`` → ``SFT → GRPO (online)``.

        Stage kinds and route labels spelled as identifiers (``reward_model``, ``MERGE``) take their
        display names; the details in parentheses (variants, ``online``) are kept, an identifier there
        as words (``weight_average`` → ``weight average``).
        """
        if text in self.names.get("route", {}):  # no chain: the route label stands for it
            return self.names["route"][text]
        spaced = _CHAIN_DETAIL.sub(" (", _CHAIN_ARROW.sub(" → ", text.strip()))
        stages, routes = self.names.get("stage", {}), self.names.get("route", {})
        named = _CHAIN_KIND.sub(lambda m: stages.get(m.group(1), m.group(1)), spaced)
        # route labels as the stages print them (MERGE → Merge), variants as words (weight average)
        named = _CHAIN_LABEL.sub(lambda m: routes.get(m.group(1), m.group(1)), named)
        return _CHAIN_VARIANT.sub(lambda m: f"({m.group(1).replace('_', ' ')})", named)


DEFAULT_LABELS = Labels()
"""The taxonomy's own display names."""


def load_labels(path: Path) -> Labels:
    """Read display names from a TOML file over the defaults: ``[route]``, ``[short.quadrant]``, ...

    A ValueError names an unknown vocabulary, an identifier outside its vocabulary or a value that is
    not text, so a typo never passes silently.
    """
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not TOML ({exc})") from exc
    short = data.pop("short", {})
    merged_names = {v: dict(m) for v, m in DISPLAY_NAMES.items()}
    merged_short = {v: dict(m) for v, m in SHORT_NAMES.items()}
    for target, given, where in ((merged_names, data, ""), (merged_short, short, "short.")):
        if not isinstance(given, dict):
            raise ValueError(f"{path}: [short] must hold tables such as [short.quadrant]")
        for vocabulary, entries in given.items():
            if vocabulary not in VOCABULARIES:
                raise ValueError(
                    f"{path}: no vocabulary [{where}{vocabulary}] (there are: {', '.join(VOCABULARIES)})"
                )
            if not isinstance(entries, dict):
                raise ValueError(f"{path}: [{where}{vocabulary}] must be a table of names")
            for identifier, text in entries.items():
                if identifier not in VOCABULARIES[vocabulary]:
                    raise ValueError(
                        f"{path}: [{where}{vocabulary}] has no {identifier!r}"
                        f" (there are: {', '.join(VOCABULARIES[vocabulary])})"
                    )
                if not isinstance(text, str) or not text.strip():
                    raise ValueError(f"{path}: [{where}{vocabulary}] {identifier} must be non-empty text")
                target.setdefault(vocabulary, {})[identifier] = text
    return Labels(merged_names, merged_short)
