"""Whole audit records for tests that state only the fields they are about.

The desk, the study rows and the data tables take an audit only as a valid :class:`AuditReport`, so a
test's audits must be complete records: :func:`complete_report` lays the fields a test gives over an
empty audit (each submission and lineage stage over an empty one) and checks the result;
:func:`complete_audit` gives the same as JSON.
"""

from __future__ import annotations

from typing import Any

from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.taxonomy.failures import FAILURE_MODES, INTEGRITY_FLAGS
from arb_audit.taxonomy.routes import lookup

EMPTY: dict[str, Any] = {
    "schema_version": SCHEMA_VERSION,
    "run": {
        "run_id": "test:run",
        "format": "autorl_bench",
        "source_path": "/runs/test",
        **dict.fromkeys(
            (
                "task",
                "level",
                "scaffold",
                "driver",
                "mode",
                "base_model",
                "base_score",
                "budget_s",
                "started_at",
                "agent_launched_at",
                "ended_at",
                "workspace_path",
                "utc_offset_s",
                "store_path",
                "revisions_path",
            )
        ),
        "analyzer_version": "test",
    },
    "submissions": [],
    "best": None,
    "metrics": {
        "n_submissions": 0,
        "n_scored": 0,
        "n_errors": 0,
        "n_rejected": 0,
        "n_duplicates": 0,
        "n_zero_score": 0,
        **dict.fromkeys(
            (
                "valid_rate",
                "time_to_first_valid_s",
                "time_to_best_s",
                "clock_origin",
                "time_used_ratio",
                "best_improvement",
            )
        ),
    },
    "route": {
        "status": "not_analyzed",
        "best_label": None,
        "chain": None,
        "chain_text": None,
        "attempted": [],
        "written": [],
        "adopted": [],
        "can_tell": [],
        "cannot_tell": [],
        "agent_claims": [],
        "code_revision": None,
    },
    "failure": {
        "mode": None,
        "determined": False,
        "reason": "",
        "evidence": [],
        "downstream": [],
        "definition": None,
    },
    "flags": [],
    "quadrant": {
        "score_up": None,
        "intended": None,
        "intended_stage": None,
        "cell": None,
        "noise_threshold": None,
        "reason": "",
        "evidence": [],
    },
    "artifacts": [],
    "reports": [],
    "revisions": [],
    "commands": [],
    "problems": [],
}
"""An audit with nothing in it."""

BEST = {
    "seq": 1,
    "score": None,
    "model_path": None,
    "artifact_path": None,
    "artifact_id": None,
    "completed_at": None,
    "improvement": None,
}


SUBMISSION: dict[str, Any] = {
    "seq": 1,
    "status": "scored",
    **dict.fromkeys(
        (
            "score",
            "requested_at",
            "completed_at",
            "model_path",
            "artifact_id",
            "artifact_path",
            "harness_id",
            "error",
            "elapsed_s",
            "gpu",
            "baseline_score",
            "duplicate_of",
        )
    ),
    "evidence": [],
}
"""A submission with nothing known but its number and status."""

STAGE: dict[str, Any] = {
    "kind": "unknown",
    **dict.fromkeys(("label", "variant", "interactive", "on_policy", "adapter", "parent", "weights")),
    "artifact": "model",
    "parents": [],
    "strength": "weak",
    "conflicts": [],
    "evidence": [],
}
"""A lineage stage with nothing known of it."""


def _merged(base: Any, given: Any) -> Any:
    if isinstance(base, dict) and isinstance(given, dict):
        return {**base, **{k: _merged(base.get(k), v) for k, v in given.items()}}
    return given


def complete_audit(partial: dict[str, Any]) -> dict[str, Any]:
    """Return ``partial`` laid over an empty audit, as the JSON a valid AuditReport prints."""
    full = _merged(EMPTY, partial)
    if full["best"] is not None:
        full["best"] = {**BEST, **full["best"]}
    mode = full["failure"]["mode"]
    if mode is not None and "determined" not in partial.get("failure", {}):
        full["failure"]["determined"] = True
    full["failure"]["definition"] = lookup(FAILURE_MODES, mode).definition if mode else None
    full["flags"] = [
        {"message": "", "evidence": [], **f, "definition": lookup(INTEGRITY_FLAGS, f["flag"]).definition}
        for f in full["flags"]
    ]
    full["submissions"] = [{**SUBMISSION, **s} for s in full["submissions"]]
    route = full["route"]
    if route["chain"] is not None:
        route["chain"] = [{**STAGE, **step} for step in route["chain"]]
    if route.get("lineage") is not None:
        route["lineage"] = {
            path: [{**STAGE, "artifact": path, **step} for step in steps]
            for path, steps in route["lineage"].items()
        }
    return AuditReport.model_validate(full).to_json()


def complete_report(partial: dict[str, Any]) -> AuditReport:
    """Return ``partial`` laid over an empty audit, as the :class:`AuditReport` it makes."""
    return AuditReport.model_validate(complete_audit(partial))
