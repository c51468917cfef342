"""Every evidence pointer of an audit, in the order a reviewer walks them, with the claim it backs.

Also the facts of the audit each kind of pointer leads to: a command, a submission, an artifact's
tensor changes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from arb_audit.evidence import Evidence

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport, Command, Submission


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One pointer of the audit with the claim it backs."""

    claim: str
    """What it shows: ``route SFT→GRPO(online)``, ``failure none``, ``flag evaluator_tampering``."""
    field: str
    """The review field the claim is about (``arb_audit.taxonomy.review.FIELDS``): blind review
    hides the claim until the reviewer has ruled on it."""
    pointer: Evidence
    """The pointer as the audit holds it."""

    @property
    def kind(self) -> str:
        """``code``, ``command``, ``log``, ``artifact``, ``submission``, ``transcript`` or ``file``."""
        return self.pointer.kind

    @property
    def where(self) -> str:
        """Where it points, short: ``code/sft.py:32 @7b1dec4``, ``command 3``, ``submission 2``."""
        p = self.pointer
        if p.command_seq is not None and p.kind == "command":
            return f"command {p.command_seq}"
        if p.submission_seq is not None and p.kind == "submission":
            return f"submission {p.submission_seq}"
        text = p.path or ""
        if p.line is not None:
            text += f":{p.line}"
            if p.end_line not in (None, p.line):
                text += f"-{p.end_line}"
        if p.revision:
            text += f" @{p.revision[:7]}"
        return text or p.kind


def _items(claim: str, field: str, pointers: Iterable[Evidence]) -> list[EvidenceItem]:
    return [EvidenceItem(claim, field, p) for p in pointers]


def evidence_items(report: AuditReport | None) -> list[EvidenceItem]:
    """Return every pointer of ``report`` (none without an audit), each once per claim.

    The best lineage's stages come first, then the routes, the failure, the quadrant and the flags.
    """
    if report is None:
        return []
    route = report.route
    found: list[EvidenceItem] = []
    for stage in route.chain or []:
        found += _items(f"stage {stage.label or stage.kind} → {stage.artifact}", "chain", stage.evidence)
    if route.evidence is not None:
        for status, by_label in (
            ("attempted", route.evidence.attempted),
            ("written", route.evidence.written),
        ):
            for label, pointers in by_label.items():
                adopted = status == "attempted" and label in route.adopted
                found += _items(f"route {label} {'adopted' if adopted else status}", "route", pointers)
    failure, quadrant = report.failure, report.quadrant
    found += _items(f"failure {failure.mode}", "failure", failure.evidence)
    found += _items(f"quadrant {quadrant.cell}", "quadrant", quadrant.evidence)
    for flag in report.flags:
        found += _items(f"flag {flag.flag}", f"flag:{flag.flag}", flag.evidence)
    unique: dict[tuple[str, Evidence], EvidenceItem] = {}
    for item in found:
        unique.setdefault((item.claim, item.pointer), item)
    return list(unique.values())


def command(report: AuditReport, seq: int) -> Command | None:
    """Return the audit's command ``seq`` (its line, exit code, output excerpt), or None."""
    return next((c for c in report.commands if c.seq == seq), None)


def submission(report: AuditReport, seq: int) -> Submission | None:
    """Return the audit's submission ``seq``, or None."""
    return next((s for s in report.submissions if s.seq == seq), None)


def tensor_changes(report: AuditReport, artifact: str) -> list[tuple[str, str]]:
    """Return the weight comparison of an artifact's producing stage as (what, value) rows.

    Summary rows come first, then the tensors that changed most with their relative change.
    """
    stages = (report.route.lineage or {}).get(artifact) or []
    weights = next((s.weights for s in stages if s.weights is not None), None)
    if weights is None:
        return []
    rows = [
        ("compared against", str(stages[0].parent or "?")),
        ("tensors compared", str(weights.compared)),
        ("identical / changed", f"{weights.identical} / {weights.changed}"),
        ("largest relative change", f"{weights.max_rel_change}"),
        ("mean relative change", f"{weights.mean_rel_change}"),
    ]
    for name, listed in (
        ("missing", weights.missing),
        ("added", weights.added),
        ("retyped", weights.retyped),
        ("config_changes", weights.config_changes),
    ):
        if listed:
            rows.append((name, ", ".join(listed)))
    rows += [(t.tensor, f"{t.rel_change}") for t in weights.most_changed or []]
    return rows


def revision_seq(report: AuditReport, commit: str) -> int | None:
    """Return the sequence number of the revision whose commit is ``commit``, or None."""
    return next((r.seq for r in report.revisions if r.sha == commit), None)
