"""Whether the best submission's lineage holds the training the task exists to test.

A step decides it only with ``verified`` or ``supported`` evidence (arb_audit.taxonomy.strength); a
stage whose weights equal its parent's trained nothing. The intended stage is the run's own word (its
collector reads the task's description); a benchmark that prescribes no method says so there, and has no
intended stage unless the user names one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arb_audit.model import RunRecord
from arb_audit.taxonomy.routes import POLICY_GRADIENT
from arb_audit.taxonomy.strength import DECIDING

if TYPE_CHECKING:
    from arb_audit.analyzer.routes import Routes
    from arb_audit.evidence import Evidence
    from arb_audit.schema import Stage

INTENDED_WORDS = {
    "online_rl": "online RL (multi-turn rollouts in the environment)",
    "policy_gradient": "a policy-gradient stage",
}


def _holds(step: Stage, intended: str) -> bool:
    """Whether one lineage step is the intended stage (``online_rl``, ``policy_gradient`` or a kind)."""
    if intended == "online_rl":
        return step.label == "ONLINE_RL"
    if intended == "policy_gradient":
        return step.kind in POLICY_GRADIENT
    return step.kind == intended


POINTERS_PER_STEP = 3
"""Evidence pointers of each lineage step repeated under the quadrant (the step lists them all)."""


def _steps_evidence(steps: list[Stage]) -> list[Evidence]:
    """Return the first pointers of each of ``steps``: what the quadrant's "intended" rests on."""
    return [e for s in steps for e in s.evidence[:POINTERS_PER_STEP]]


def intended_in_lineage(
    routes: Routes | None, intended: str | None
) -> tuple[bool | None, str, list[Evidence]]:
    """Return whether the best lineage holds the intended stage (None: undetermined), why, and evidence.

    The evidence is the steps that hold the stage, else the steps the lineage holds instead.
    """
    wanted = INTENDED_WORDS.get(intended or "", intended or "the intended training")
    if routes is None or intended is None:
        return (
            None,
            f"whether the best submission's lineage holds {wanted} is undetermined (no route analysis)",
            [],
        )
    chain = routes.chain
    holding = [s for s in chain if _holds(s, intended)]
    if holding and all(s.strength in DECIDING for s in holding):
        where = ", ".join(s.artifact for s in holding)
        weighed = [s.weights for s in holding if s.weights is not None and s.weights.compared]
        # Adopted is not enough: a stage whose weights equal its parent's trained nothing.
        if any(w.weights_identical for w in weighed):
            return (
                False,
                f"the best lineage holds {wanted} ({where}), but its weights equal its parent's",
                _steps_evidence(holding),
            )
        if len(weighed) == len(holding):
            return (
                True,
                f"the best lineage holds {wanted} ({where}), and its weights changed",
                _steps_evidence(holding),
            )
        return (
            True,
            f"the best lineage holds {wanted} ({where}); whether it changed the weights needs weight"
            " forensics",
            _steps_evidence(holding),
        )
    if holding:
        return (
            None,
            f"the best lineage may hold {wanted}, but the evidence for it is not enough"
            f" ({', '.join(sorted({s.strength for s in holding}))}: verified or supported decides)",
            _steps_evidence(holding),
        )
    if chain and all(s.strength in DECIDING for s in chain):
        return (
            False,
            f"the best lineage ({routes.chain_text}) does not hold {wanted}",
            _steps_evidence(chain),
        )
    return (
        None,
        f"the best lineage is not known well enough to say whether it holds {wanted}",
        _steps_evidence(chain),
    )


def intended_stage_of(record: RunRecord, intended_stage: str | None) -> str | None:
    """Return the stage the run's task exists to test: ``--intended`` first, else the run's own word."""
    task = record.run.task_description
    return intended_stage or (task.intended if task else None)


def prescribes_no_method(record: RunRecord) -> str | None:
    """Return why the run's benchmark names no intended stage, when it prescribes no training method."""
    task = record.run.task_description
    return task.no_method if task and task.intended is None else None
