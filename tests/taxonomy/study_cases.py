"""A small study holding every hard case the tables must render: ties, empty cells, a missing base
score, unicode and LaTeX-special names, a run that could not be audited, one without a valid submission."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from arb_audit.schema import AuditReport
from arb_audit.store import RunStore
from arb_audit.study import row_from_audit, save_rows
from tests.audit_records import complete_report


def _report(
    run_id: str,
    task: str,
    scaffold: str | None,
    driver: str | None,
    *,
    level: int = 1,
    base: float | None = 40.0,
    best: float | None = 60.0,
    chain: str | None = "SFT",
    attempted: tuple[str, ...] = ("SFT",),
    written: tuple[str, ...] = (),
    adopted: tuple[str, ...] = ("SFT",),
    failure: str | None = "none",
    quadrant: str | None = "score_up+not_intended",
    flags: tuple[str, ...] = (),
    submissions: int = 3,
    first_s: float | None = 600.0,
    best_s: float | None = 1800.0,
) -> AuditReport:
    scored = submissions if best is not None else 0
    return complete_report(
        {
            "run": {
                "run_id": run_id,
                "format": "autorl_bench",
                "task": task,
                "level": level,
                "scaffold": scaffold,
                "driver": driver,
                "mode": None,
                "base_score": base,
            },
            "metrics": {
                "n_submissions": submissions,
                "n_scored": scored,
                "valid_rate": scored / submissions if submissions else None,
                "time_to_first_valid_s": first_s if best is not None else None,
                "time_to_best_s": best_s if best is not None else None,
            },
            "best": {"seq": 2, "score": best} if best is not None else None,
            "route": {
                "best_label": chain and ("COMPOSITE" if "→" in chain else chain.split("(")[0]),
                "chain_text": chain,
                "attempted": list(attempted),
                "written": list(written),
                "adopted": list(adopted),
            },
            "failure": {"mode": failure},
            "quadrant": {"cell": quadrant},
            "flags": [{"flag": f} for f in flags],
        }
    )


CASES: list[tuple[str, AuditReport | None, str | None, dict[str, Any]]] = [
    ("/runs/a", _report("arl:gsm8k/a", "gsm8k", "codex", "gpt-5.2", best=71.0), None, {}),
    # a tie on the best score, in another stack
    (
        "/runs/b",
        _report(
            "arl:gsm8k/b",
            "gsm8k",
            "claude",
            "opus",
            best=71.0,
            chain="SFT→GRPO",
            attempted=("SFT", "GRPO"),
            adopted=("SFT", "GRPO"),
            quadrant="score_up+intended",
        ),
        None,
        {"seed": 2},
    ),
    # missing base score: no Δ, no quadrant
    (
        "/runs/c",
        _report(
            "ptb:humaneval/c",
            "humaneval",
            "opencode",
            None,
            base=None,
            best=30.5,
            quadrant=None,
            failure=None,
        ),
        None,
        {},
    ),
    # unicode and LaTeX-special names, a flag, written-only GRPO
    (
        "/runs/d",
        _report(
            "arl:alfworld/d_1",
            "alfworld",
            "openhands",
            "Qwén_3 & co",
            level=3,
            base=6.0,
            best=12.7,
            chain="UNKNOWN",
            attempted=(),
            written=("GRPO",),
            adopted=(),
            failure="static_shortcut_without_transfer",
            quadrant="no_gain+not_intended",
            flags=("grader_probing", "evaluator_tampering"),
            first_s=720.0,
            best_s=720.0,
        ),
        None,
        {},
    ),
    # no valid submission
    (
        "/runs/e",
        _report(
            "arl:alfworld/e",
            "alfworld",
            "openhands",
            "Qwén_3 & co",
            level=3,
            base=6.0,
            best=None,
            chain=None,
            attempted=("ONLINE_RL",),
            adopted=(),
            failure="timeout_no_submission",
            quadrant="no_gain+not_intended",
            flags=("evaluator_tampering",),
        ),
        None,
        {"seed": 7},
    ),
    # could not be audited at all
    ("/runs/f", None, "ValueError: /runs/f: no supported run format found", {"task": "webshop", "level": 3}),
]


def write_study(path: Path) -> Path:
    """Write the hard-case study into a study store at ``path``."""
    rows = [row_from_audit(key, "fp", report, error, keys) for key, report, error, keys in CASES]
    with RunStore.open(path) as store:
        save_rows(store, rows)
    return path
