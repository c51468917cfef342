"""Every evidence pointer of an audit, in the order a reviewer walks them, with the claim it backs.

Also the facts of the audit each kind of pointer leads to: a command, a submission, an artifact's
tensor changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EvidenceItem:
    """One pointer of the audit with the claim it backs."""

    claim: str
    """What it shows: ``route SFT→GRPO(online)``, ``failure none``, ``flag evaluator_tampering``."""
    field: str
    """The review field the claim is about (``arb_audit.taxonomy.review.FIELDS``): blind review
    hides the claim until the reviewer has ruled on it."""
    pointer: dict[str, Any]
    """The pointer as the audit's JSON holds it (``arb_audit.evidence.Evidence.to_json``)."""

    @property
    def kind(self) -> str:
        """``code``, ``command``, ``log``, ``artifact``, ``submission``, ``transcript`` or ``file``."""
        return str(self.pointer.get("kind", "?"))

    @property
    def where(self) -> str:
        """Where it points, short: ``code/sft.py:32 @7b1dec4``, ``command 3``, ``submission 2``."""
        p = self.pointer
        if p.get("command_seq") is not None and self.kind == "command":
            return f"command {p['command_seq']}"
        if p.get("submission_seq") is not None and self.kind == "submission":
            return f"submission {p['submission_seq']}"
        text = str(p.get("path") or "")
        if p.get("line") is not None:
            text += f":{p['line']}"
            if p.get("end_line") not in (None, p["line"]):
                text += f"-{p['end_line']}"
        if p.get("revision"):
            text += f" @{str(p['revision'])[:7]}"
        return text or self.kind


def _items(claim: str, field: str, pointers: Any) -> list[EvidenceItem]:
    return [EvidenceItem(claim, field, p) for p in pointers or [] if isinstance(p, dict)]


def evidence_items(report: dict[str, Any]) -> list[EvidenceItem]:
    """Return every pointer of ``report``, each once per claim.

    The best lineage's stages come first, then the routes, the failure, the quadrant and the flags.
    """
    route = report.get("route") or {}
    found: list[EvidenceItem] = []
    for stage in route.get("chain") or []:
        if isinstance(stage, dict):
            found += _items(
                f"stage {stage.get('label') or stage.get('kind')} → {stage.get('artifact')}",
                "chain",
                stage.get("evidence"),
            )
    # route.evidence is {"attempted": {label: pointers}, "written": {label: pointers}}
    for status, by_label in (route.get("evidence") or {}).items():
        for label, pointers in (by_label or {}).items():
            adopted = status == "attempted" and label in (route.get("adopted") or [])
            found += _items(f"route {label} {'adopted' if adopted else status}", "route", pointers)
    failure = report.get("failure") or {}
    found += _items(f"failure {failure.get('mode')}", "failure", failure.get("evidence"))
    quadrant = report.get("quadrant") or {}
    found += _items(f"quadrant {quadrant.get('cell')}", "quadrant", quadrant.get("evidence"))
    for flag in report.get("flags") or []:
        if isinstance(flag, dict):
            found += _items(f"flag {flag.get('flag')}", f"flag:{flag.get('flag')}", flag.get("evidence"))
    unique: dict[tuple[str, str], EvidenceItem] = {}
    for item in found:
        unique.setdefault((item.claim, repr(sorted(item.pointer.items()))), item)
    return list(unique.values())


def command(report: dict[str, Any], seq: int) -> dict[str, Any] | None:
    """Return the audit's command ``seq`` (its line, exit code, output excerpt), or None."""
    return next((c for c in report.get("commands") or [] if c.get("seq") == seq), None)


def submission(report: dict[str, Any], seq: int) -> dict[str, Any] | None:
    """Return the audit's submission ``seq``, or None."""
    return next((s for s in report.get("submissions") or [] if s.get("seq") == seq), None)


def tensor_changes(report: dict[str, Any], artifact: str) -> list[tuple[str, str]]:
    """Return the weight comparison of an artifact's producing stage as (what, value) rows.

    Summary rows come first, then the tensors that changed most with their relative change.
    """
    stages = (report.get("route") or {}).get("lineage", {}).get(artifact) or []
    weights = next((s.get("weights") for s in stages if isinstance(s, dict) and s.get("weights")), None)
    if not weights:
        return []
    rows = [
        ("compared against", str(stages[0].get("parent") or "?")),
        ("tensors compared", str(weights.get("compared"))),
        ("identical / changed", f"{weights.get('identical')} / {weights.get('changed')}"),
        ("largest relative change", f"{weights.get('max_rel_change')}"),
        ("mean relative change", f"{weights.get('mean_rel_change')}"),
    ]
    for name in ("missing", "added", "retyped", "config_changes"):
        if weights.get(name):
            rows.append((name, ", ".join(str(x) for x in weights[name])))
    rows += [(str(t.get("tensor")), f"{t.get('rel_change')}") for t in weights.get("most_changed") or []]
    return rows


def revision_seq(report: dict[str, Any], commit: str) -> int | None:
    """Return the sequence number of the revision whose commit is ``commit``, or None."""
    return next(
        (
            int(r["seq"])
            for r in report.get("revisions") or []
            if isinstance(r, dict) and r.get("sha") == commit
        ),
        None,
    )
