"""How strongly the evidence shows a lineage step is what the audit says: levels, not probabilities.

A stage claim rests on evidence of different kinds (TAXONOMY.md): the code that implements it, the
command that ran that code and produced the artifact, and what the artifact itself shows (its weights
against its parent's, the trainer log and model card the run wrote). The level says which of these
agree; it is a documented judgement, never a number that reads like a calibrated probability.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from arb_audit.taxonomy.routes import Definition

Strength = Literal["verified", "supported", "weak", "conflicting", "none"]
"""An evidence level (:data:`STRENGTHS`)."""

STRENGTHS: tuple[Definition, ...] = (
    Definition(
        "verified",
        "the artifact agrees with the code that made it: its weights changed against its parent (or, for"
        " a copy, equal it), or the trainer log the run wrote names the same kind of stage",
    ),
    Definition(
        "supported",
        "code that implements the stage was run by the command that produced the artifact (or a command"
        " copied it there), or the run's own trainer log names the stage; nothing contradicts it",
    ),
    Definition(
        "weak",
        "one indirect sign only: a model card's tag, or trainer log keys several stage kinds share",
    ),
    Definition(
        "conflicting",
        "the evidence disagrees: the artifact's weights or logs say other than the code (the conflicts"
        " name it)",
    ),
    Definition("none", "nothing shows how the artifact was made"),
)
"""Every evidence level, strongest first."""

DECIDING: frozenset[str] = frozenset({"verified", "supported"})
"""Levels strong enough to decide a quadrant's "intended" (TAXONOMY.md: "with evidence that it did
something"); a weaker step leaves it undetermined."""

_RANK = {d.name: len(STRENGTHS) - 1 - i for i, d in enumerate(STRENGTHS)}
"""verified 4, supported 3, weak 2, conflicting 1, none 0."""


def weakest(levels: Iterable[str]) -> Strength:
    """Return the weakest of ``levels`` (``none`` when there are none): what a chain of steps rests on."""
    found = min(levels, key=rank, default="none")
    return found if found in _RANK else "none"  # type: ignore[return-value]


def rank(level: str | None) -> int:
    """Return ``level``'s place, strongest highest (0 for ``none`` or a level outside the taxonomy)."""
    return _RANK.get(level or "none", 0)
