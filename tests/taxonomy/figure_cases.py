"""The hard-case study of study_cases.py with what the figures read besides: each run's clock, its
submissions in time and each artifact's lineage; and one more run, on a task named with unicode and
LaTeX specials."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from arb_audit.schema import AuditReport
from arb_audit.store import RunStore
from arb_audit.study import row_from_audit, save_rows
from tests.audit_records import STAGE, SUBMISSION
from tests.taxonomy.study_cases import CASES, _report

START = datetime.fromisoformat("2026-01-05T09:00:00+00:00")
ODD_TASK = "ünï_math & $x^2$ 50% #1 {a}~"
"""A task name that would break LaTeX and mathtext if either saw it raw."""

Submission = tuple[int, str, float | None, float, str | None]
"""seq, status, score, minutes after START, artifact path."""


def _step(kind: str, label: str | None) -> dict[str, Any]:
    return {"kind": kind, "label": label}


SFT, GRPO, DPO = _step("sft", "SFT"), _step("grpo", "GRPO"), _step("dpo", "DPO")

TIMELINES: dict[str, tuple[dict[str, Any], list[Submission], dict[str, list[dict[str, Any]]] | None]] = {
    # run clock, submissions, lineages (None: the route section has none)
    "/runs/a": (
        {"started_at": START.isoformat()},
        [
            (1, "scored", 55.0, 8.0, "out/a1"),
            (2, "scored", 71.0, 31.5, "out/a2"),
            (3, "error", None, 47.0, "a3"),
        ],
        {"out/a1": [SFT], "out/a2": [SFT]},
    ),
    # the agent launched five minutes after the run: its clock starts there
    "/runs/b": (
        {"started_at": START.isoformat(), "agent_launched_at": (START + timedelta(minutes=5)).isoformat()},
        [
            (1, "scored", 58.0, 17.0, "out/b1"),
            (2, "scored", 71.0, 57.0, "out/b2"),
            (3, "scored", 66.0, 80.0, "out/b3"),
            (4, "rejected", None, 85.0, None),
        ],
        {"out/b1": [SFT], "out/b2": [SFT, GRPO], "out/b3": [SFT, GRPO]},
    ),
    # no clock and no lineage: time from the first submission, routes unknown
    "/runs/c": ({}, [(1, "scored", 22.0, 3.0, "m1"), (2, "scored", 30.5, 20.0, "m2")], None),
    "/runs/d": (
        {"started_at": START.isoformat()},
        [(1, "scored", 6.0, 4.0, "copy"), (2, "scored", 12.7, 12.0, "u"), (3, "rejected", None, 20.0, None)],
        {"copy": [_step("copy", None)], "u": [_step("unknown", None)]},
    ),
    # submitted, never scored
    "/runs/e": (
        {"started_at": START.isoformat()},
        [(1, "error", None, 15.0, "e1"), (2, "error", None, 40.0, "e2")],
        {},
    ),
    "/runs/g": (
        {"started_at": START.isoformat()},
        [(1, "scored", 35.0, 6.0, "g1"), (2, "scored", 48.0, 25.0, "g2")],
        {"g1": [SFT], "g2": [DPO]},
    ),
}

ODD_CASE: tuple[str, AuditReport, None, dict[str, Any]] = (
    "/runs/g",
    _report(
        "arl:odd/g",
        ODD_TASK,
        "codex",
        "gpt-5.2",
        level=2,
        base=20.0,
        best=48.0,
        chain="DPO",
        attempted=("SFT", "DPO"),
        adopted=("DPO",),
        quadrant="score_up+intended",
        failure="regression",
        submissions=2,
    ),
    None,
    {},
)


def _with_timeline(key: str, report: AuditReport | None) -> AuditReport | None:
    """The report with its run's clock, submissions and lineages added (a copy; None stays None)."""
    if report is None:
        return None
    clock, submissions, lineages = TIMELINES[key]
    data = report.to_json()
    data["run"].update(clock)
    data["submissions"] = [
        {
            **SUBMISSION,
            "seq": seq,
            "status": status,
            "score": score,
            "requested_at": (START + timedelta(minutes=minutes)).isoformat(),
            "artifact_path": path,
        }
        for seq, status, score, minutes, path in submissions
    ]
    if lineages is not None:
        data["route"]["lineage"] = {
            path: [{**STAGE, "artifact": path, **step} for step in steps] for path, steps in lineages.items()
        }
    return AuditReport.model_validate(data)


def write_figure_study(path: Path, keys: tuple[str, ...] | None = None) -> Path:
    """Write the figure study (only the runs named by ``keys``, when given) into a study store at ``path``."""
    rows = [
        row_from_audit(key, "fp", _with_timeline(key, report), error, cell)
        for key, report, error, cell in [*CASES, ODD_CASE]
        if keys is None or key in keys
    ]
    with RunStore.open(path) as store:
        save_rows(store, rows)
    return path
