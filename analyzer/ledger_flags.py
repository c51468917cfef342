"""Integrity flags the submission ledger shows by itself (beyond those its collector raised)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from arb_audit.evidence import Evidence
from arb_audit.model import RunRecord

REPEATS = 3
"""The same content graded this many times is probing the grader, not training."""


def probing_flags(record: RunRecord) -> list[dict[str, Any]]:
    """Flag content submitted again and again (``grader_probing``): its score varies only by the grader."""
    by_content: dict[str, list[int]] = defaultdict(list)
    for s in record.submissions:
        if s.artifact_id and s.status in ("scored", "error", "duplicate"):
            by_content[s.artifact_id].append(s.seq)
    repeated = {aid: seqs for aid, seqs in by_content.items() if len(seqs) >= REPEATS}
    if not repeated:
        return []
    worst = max(repeated.values(), key=len)
    return [
        {
            "flag": "grader_probing",
            "message": f"the same model content was submitted {len(worst)} times"
            f" (submissions {', '.join(map(str, worst[:10]))})"
            + (
                f", and {len(repeated) - 1} other content(s) at least {REPEATS} times"
                if len(repeated) > 1
                else ""
            ),
            "evidence": [
                Evidence("submission", submission_seq=seq, excerpt=f"artifact {aid[:12]}").to_json()
                for aid, seqs in repeated.items()
                for seq in seqs[:5]
            ][:10],
        }
    ]
