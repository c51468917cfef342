"""The parts of an audit the reviewer's desk reads, in the types it reads them as.

An audit in a study store is JSON that came from a run folder an agent wrote, and a study store can be
edited by anyone: every value the desk uses is checked against :data:`AUDIT` once, when the audit is
read, and a value of the wrong type becomes empty (None, ``[]`` or ``{}``). The screens then never
meet a list where they expect a dict, or a string where they format a number.
"""

from __future__ import annotations

from typing import Any

NUMBER = "number"
"""A shape: an int or a float (not a bool)."""
TEXT = "text"
"""A shape: a string."""
WHOLE = "whole"
"""A shape: an int (not a bool)."""
ANY_KEY = "*"
"""In a dict shape: every key of the value, each of the shape given."""

POINTER = {
    "kind": TEXT,
    "path": TEXT,
    "line": WHOLE,
    "end_line": WHOLE,
    "revision": TEXT,
    "submission_seq": WHOLE,
    "command_seq": WHOLE,
    "excerpt": TEXT,
}
STAGE = {
    "kind": TEXT,
    "label": TEXT,
    "artifact": TEXT,
    "parent": TEXT,
    "evidence": [POINTER],
    "weights": {
        "compared": WHOLE,
        "identical": WHOLE,
        "changed": WHOLE,
        "max_rel_change": NUMBER,
        "mean_rel_change": NUMBER,
        "most_changed": [{"tensor": TEXT, "rel_change": NUMBER}],
        "missing": [TEXT],
        "added": [TEXT],
        "retyped": [TEXT],
        "config_changes": [TEXT],
    },
}
AUDIT: dict[str, Any] = {
    "run": {
        "run_id": TEXT,
        "task": TEXT,
        "level": WHOLE,
        "scaffold": TEXT,
        "driver": TEXT,
        "base_score": NUMBER,
        "store_path": TEXT,
        "revisions_path": TEXT,
    },
    "best": {"seq": WHOLE, "score": NUMBER},
    "route": {
        "best_label": TEXT,
        "chain_text": TEXT,
        "strength": TEXT,
        "chain": [STAGE],
        "attempted": [TEXT],
        "written": [TEXT],
        "adopted": [TEXT],
        "evidence": {ANY_KEY: {ANY_KEY: [POINTER]}},
        "lineage": {ANY_KEY: [STAGE]},
    },
    "failure": {"mode": TEXT, "evidence": [POINTER], "downstream": [TEXT]},
    "quadrant": {"cell": TEXT, "evidence": [POINTER]},
    "flags": [{"flag": TEXT, "evidence": [POINTER]}],
    "submissions": [
        {
            "seq": WHOLE,
            "status": TEXT,
            "score": NUMBER,
            "requested_at": TEXT,
            "model_path": TEXT,
            "artifact_path": TEXT,
            "artifact_id": TEXT,
            "error": TEXT,
        }
    ],
    "commands": [{"seq": WHOLE, "command": TEXT, "exit_code": WHOLE, "error": TEXT, "output_excerpt": TEXT}],
    "revisions": [{"seq": WHOLE, "sha": TEXT}],
}
"""What the desk reads of an audit (``arb-audit RUN --json``), and each value's type."""


def shaped(value: Any, shape: Any) -> Any:
    """Return ``value`` with every part that does not have ``shape`` emptied (or dropped from a list)."""
    if isinstance(shape, list):
        if not isinstance(value, list):
            return []
        return [v for v in (shaped(item, shape[0]) for item in value) if v is not None]
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return None
        if ANY_KEY in shape:
            return {k: shaped(v, shape[ANY_KEY]) for k, v in value.items() if isinstance(k, str)}
        return {k: shaped(value.get(k), sub) for k, sub in shape.items()}
    if isinstance(value, bool):
        return None
    if shape == TEXT:
        return value if isinstance(value, str) else None
    if shape == WHOLE:
        return value if isinstance(value, int) else None
    return value if isinstance(value, int | float) else None


def audit_shaped(report: Any) -> dict[str, Any]:
    """Return the parts of ``report`` the desk reads, each of its type (``{}`` for a non-object)."""
    return shaped(report, AUDIT) or {}
