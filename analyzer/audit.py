"""The audit of one run, assembled from its record: the report that ``arb-audit RUN_DIR`` prints.

What the submission ledger alone decides is decided here (best valid submission, metrics, the
ledger-level failure modes, whether the score went up). What needs the route analysis is said to be
undetermined, with the reason, never guessed.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from arb_audit.analyzer.ledger_flags import probing_flags
from arb_audit.analyzer.metrics import Metrics, best_submission, compute_metrics
from arb_audit.analyzer.overwrite_flags import overwritten_flags
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import Command, RunRecord, Submission
from arb_audit.schema import AuditReport
from arb_audit.taxonomy.failures import FAILURE_MODES, INTEGRITY_FLAGS
from arb_audit.taxonomy.routes import POLICY_GRADIENT, ROUTE_LABELS, STAGE_KINDS, lookup
from arb_audit.taxonomy.strength import DECIDING
from arb_audit.taxonomy.tasks import find_task

ANALYZER_VERSION = "0.1.0"


def _clock(offset_s: int | None) -> timezone:
    return timezone(timedelta(seconds=offset_s or 0))


def iso(moment: datetime | None, offset_s: int | None) -> str | None:
    """Format ``moment`` in the run's local offset (UTC when unknown)."""
    return moment.astimezone(_clock(offset_s)).isoformat() if moment else None


def noise_threshold(task: str | None, override: float | None) -> float | None:
    """Return the score change within which a difference is noise for ``task``."""
    if override is not None:
        return override
    known = find_task(task)
    return known.noise_threshold if known else None


def _submission_json(s: Submission, offset: int | None) -> dict[str, Any]:
    return {
        "seq": s.seq,
        "status": s.status,
        "score": s.score,
        "requested_at": iso(s.requested_at, offset),
        "completed_at": iso(s.completed_at, offset),
        "model_path": s.model_path,
        "artifact_id": s.artifact_id,
        "artifact_path": s.artifact_path,
        "harness_id": s.harness_id,
        "error": s.error,
        "elapsed_s": s.elapsed_s,
        "gpu": s.gpu,
        "baseline_score": s.baseline_score,
        "duplicate_of": s.duplicate_of,
        "evidence": [e.to_json() for e in s.evidence],
    }


def _ledger_failure(record: RunRecord, best: Submission | None, noise: float | None) -> dict[str, Any]:
    """Decide what the submission ledger alone shows (no submission, regression, the score's move)."""
    base = record.run.base_score
    if best is None:
        if harness := _harness_errors(record):
            return _harness_failure(harness)
        if (why := _unseen_ending(record)) is not None:
            return {"mode": None, "determined": False, "reason": why, "evidence": []}
        tried = [s for s in record.submissions if s.status in ("error", "rejected")]
        used = compute_metrics(record).time_used_ratio
        spent = f", {used:.0%} of the budget used" if used is not None else ""
        return {
            "mode": "timeout_no_submission",
            "determined": True,
            "no_submission": True,
            "reason": f"the budget ended with no valid submission ({len(record.submissions)} attempt(s),"
            f" {len(tried)} failed or refused{spent}); what went wrong first needs the code analysis",
            "evidence": [
                Evidence("submission", submission_seq=s.seq, excerpt=s.error or s.status).to_json()
                for s in tried[:5]
            ],
        }
    if base is None or noise is None or best.score is None:
        missing = "base score" if base is None else "noise threshold for this task (pass --noise)"
        return {"mode": None, "determined": False, "reason": f"the {missing} is unknown", "evidence": []}
    delta = best.score - base
    cite = [
        Evidence("submission", submission_seq=best.seq, excerpt=f"best valid score {best.score}").to_json()
    ]
    if delta < -noise:
        return {
            "mode": "regression",
            "determined": True,
            "evidence": cite,
            "reason": f"the best valid score {best.score} is {-delta:.2f} below the base {base}"
            f" (noise {noise})",
        }
    moved = "improved beyond noise" if delta > noise else "did not move beyond noise"
    return {
        "mode": None,
        "determined": False,
        "evidence": cite,
        "reason": f"the score {moved} ({delta:+.2f}, noise {noise})",
        "improved": delta > noise,
    }


SIGNAL_MODES = (
    ("nan", "training_collapse", "a training run's loss became NaN/inf"),
    ("below_parent", "training_collapse", "a stage's artifact scored below the model it was trained from"),
    ("constant_reward", "reward_data_design_failure", "a policy-gradient run's reward never varied"),
    ("no_env_calls", "rollout_construction_failure", "the rollouts never called their environment"),
)
"""Failure signals of the commands, in the order they decide the first failure."""


def _failure(
    record: RunRecord,
    best: Submission | None,
    noise: float | None,
    routes: dict[str, Any] | None,
    intended_stage: str | None,
) -> dict[str, Any]:
    """Decide the run's first failure (commands' signals, then the ledger) and its downstream effects."""
    ledger = _ledger_failure(record, best, noise)
    improved = ledger.pop("improved", False)
    no_submission = ledger.pop("no_submission", False)
    signals = (routes or {}).get("signals")
    if signals is None:
        return {**ledger, "downstream": []}
    first: tuple[str, str, list[dict[str, Any]]] | None = None
    signals = {**signals, "below_parent": _below_parent(record, routes or {}, noise)}
    # The earliest signal in the run is its first failure (a NaN at command 9 follows a flat reward at 2);
    # what a model's own log or its score shows has no time of its own: it comes after the commands'.
    after = len(record.commands) + 1
    seen = [
        (signals[key][0].get("command_seq", after), mode, why, key)
        for key, mode, why in SIGNAL_MODES
        if signals.get(key)
    ]
    if seen:
        _, mode, why, key = min(seen)
        first = (mode, why, signals[key][:5])
    ran, crashed, cut = (signals.get(k, []) for k in ("training_ran", "crashed", "cut"))
    # Without a command timeline (no transcript), "no training code ran" is unknown, not a finding.
    if first is None and no_submission and record.commands:
        # A transcript that stops early, or a folder showing training the transcript does not, cannot
        # show that the code never worked.
        traces, cut_short = _training_traces(record), _cut_off(record)
        unseen = (
            f"the transcript stops early ({cut_short})"
            if cut_short
            else "the run folder shows training the transcript's commands do not"
            if traces and (not ran or len(crashed) == len(ran))
            else None
        )
        if unseen and not cut:
            shown = f"; the folder shows training: {len(traces)} trace(s)" if traces else ""
            return {
                "mode": None,
                "determined": False,
                "reason": f"no valid submission, and what went wrong first cannot be told: {unseen}{shown}",
                "evidence": traces + ledger["evidence"],
                "downstream": [],
            }
        if not ran:
            first = ("early_coding_failure", "no command ever ran training code", [])
        elif cut:
            # Training was still running when the run ended: the budget, not the code, ended it.
            first = (
                "timeout_no_submission",
                f"the run ended while training code was still running ({len(cut)} run(s) cut off)",
                cut[:5],
            )
        elif len(crashed) == len(ran):
            first = (
                "early_coding_failure",
                f"every run of training code failed ({len(crashed)})",
                crashed[:5],
            )
    if improved:
        recovered = [first[0]] if first else []
        note = f"; recovered from {recovered[0]}" if recovered else ""
        return {
            **ledger,
            "mode": "none",
            "determined": True,
            "reason": ledger["reason"] + note,
            "downstream": [],
        }
    measured = noise is not None and record.run.base_score is not None
    flat = best is not None and measured and ledger["mode"] is None
    if first is None and flat and _intended(routes, intended_stage)[0] is False:
        chain = (routes or {}).get("chain_text")
        first = (
            "static_shortcut_without_transfer",
            f"the best lineage ({chain}) skips the intended training",
            [],
        )
    if first is None:
        return {**ledger, "downstream": []}
    mode, why, evidence = first
    downstream = [ledger["mode"]] if ledger["mode"] and ledger["mode"] != mode else []
    return {
        "mode": mode,
        "determined": True,
        "reason": why + (f"; then {downstream[0]}" if downstream else ""),
        "evidence": evidence + ledger["evidence"],
        "downstream": downstream,
    }


def _below_parent(record: RunRecord, routes: dict[str, Any], noise: float | None) -> list[dict[str, Any]]:
    """Point at each trained stage whose artifact scored below its parent beyond noise.

    A parent's score is its own best graded score, or the base score for the base model.
    """
    if noise is None:
        return []
    best: dict[str, Submission] = {}
    for s in record.submissions:
        path = s.artifact_path or s.model_path
        if not path or s.status != "scored" or s.score is None:
            continue
        if path not in best or s.score > (best[path].score or 0.0):
            best[path] = s
    found: list[dict[str, Any]] = []
    for path, steps in (routes.get("lineage") or {}).items():
        step = steps[-1] if steps else None
        if step is None or step["kind"] in ("copy", "config_only", "unknown") or path not in best:
            continue
        child = best[path]
        parent = best.get(step["parent"] or "")
        if parent is not None:
            floor, cited = parent.score, f"its parent {step['parent']} scored {parent.score}"
        elif step["parent"] and step["parent"] == record.run.base_model and record.run.base_score is not None:
            floor, cited = record.run.base_score, f"the base model scored {record.run.base_score}"
        else:
            continue
        if floor is not None and child.score is not None and floor - child.score > noise:
            note = f"the {step['kind']} stage's {path} scored {child.score}; {cited} (noise {noise})"
            found.append(
                Evidence("submission", submission_seq=child.seq, excerpt=excerpt(note, 240)).to_json()
            )
            if parent is not None:
                found.append(
                    Evidence("submission", submission_seq=parent.seq, excerpt=f"{step['parent']}").to_json()
                )
    return found


def _with_definition(failure: dict[str, Any]) -> dict[str, Any]:
    mode = failure["mode"]
    return {**failure, "definition": lookup(FAILURE_MODES, mode).definition if mode else None}


def _route(record: RunRecord, analysis: dict[str, Any] | None) -> dict[str, Any]:
    claims: dict[str, set[int]] = {}
    for it in record.reports:
        if it.train_type:
            claims.setdefault(it.train_type, set()).add(it.number)
    code = record.revisions[-1] if record.revisions else None
    edits = sum(1 for r in record.revisions if r.trigger == "transcript-edit")
    commands = len(record.commands)
    if edits:
        history = [f"the code history rebuilt from the transcript ({edits} revisions, {commands} commands)"]
    elif commands:
        history = [f"the commands the transcript shows ({commands}), each with the revision then in force"]
    else:
        history = []
    return {
        "status": "not_analyzed",
        "best_label": None,
        "chain": None,
        "chain_text": None,
        "attempted": [],
        "written": [],
        "adopted": [],
        # The failure signals and flags of the analysis have sections of their own.
        **{k: v for k, v in (analysis or {}).items() if k not in ("signals", "flags", "problems", "probing")},
        "can_tell": [
            "which attempts were graded, when, and with what score (the ledger)",
            "which artifact path each attempt named and whether it changed after grading",
            "the final code tree"
            + (
                f" ({len(code.files)} files, revision {code.sha[:12]})"
                if code
                else " (not available in this run folder)"
            ),
            *history,
        ],
        "cannot_tell": _unweighed(analysis, record.run.base_model)
        if analysis
        else [
            f"the route of the best submission ({' / '.join(d.name for d in ROUTE_LABELS)}):"
            " the run has no code revisions to analyse",
            f"which training stages ({', '.join(d.name for d in STAGE_KINDS)}) were attempted or adopted:"
            " needs the commands and the code history",
        ],
        "agent_claims": [{"train_type": t, "iterations": sorted(n)} for t, n in claims.items()],
        "code_revision": code.sha if code else None,
    }


def _unseen_ending(record: RunRecord) -> str | None:
    """Say why "no valid submission" cannot be read as "the budget ended without one", or None."""
    extra = record.run.extra
    if not extra.get("ledger_sources", ["?"]):
        return "no submission record (run.log, scores.json) could be read"
    if extra.get("interrupted_by"):
        return f"the run was interrupted ({extra['interrupted_by']}) before any valid submission"
    if extra.get("artifacts_in_layout") is False:
        return (
            "this folder's layout (a published copy of the run) never holds the submitted model or its"
            " score's inputs: whether a model was stored and graded cannot be seen"
        )
    return None


def _harness_errors(record: RunRecord) -> list[dict[str, Any]]:
    """Return the harness's own errors the collector found (provider refusals, grader failures)."""
    found = record.run.extra.get("harness_errors")
    return [e for e in found if isinstance(e, dict) and e.get("message")] if isinstance(found, list) else []


def _harness_failure(errors: list[dict[str, Any]]) -> dict[str, Any]:
    """Return the failure of a run whose harness failed, quoting the harness's own message."""
    stages = {e.get("stage") for e in errors}
    what = (
        "the agent's provider refused or stopped it"
        if stages == {"agent"}
        else "every evaluation failed on the grader's own infrastructure"
        if stages == {"evaluation"}
        else "the agent's provider and the grader's infrastructure failed"
    )
    return {
        "mode": "harness_failure",
        "determined": True,
        "reason": f"{what}: {errors[0]['message']!r} ({errors[0].get('path')})",
        "evidence": [
            Evidence(
                "log", path=e.get("path"), line=e.get("line"), excerpt=excerpt(str(e["message"]), 240)
            ).to_json()
            for e in errors[:5]
        ],
    }


def _grader_failed(record: RunRecord) -> bool:
    """Whether the grader's own infrastructure failed (so the model's score is unknown, not low)."""
    return any(e.get("stage") == "evaluation" for e in _harness_errors(record))


def _training_traces(record: RunRecord) -> list[dict[str, Any]]:
    """Return what the run folder itself shows of training (trainer files, model cards), as evidence."""
    found = record.run.extra.get("training_traces")
    if not isinstance(found, list):
        return []
    return [
        Evidence("file", path=str(t.get("path")), excerpt=excerpt(str(t.get("excerpt")), 200)).to_json()
        for t in found[:5]
        if isinstance(t, dict)
    ]


def _cut_off(record: RunRecord) -> str | None:
    """Say why the run's transcript looks cut off (it cannot show what came after), or None."""
    summary = record.run.extra.get("transcript")
    why = summary.get("cut_off") if isinstance(summary, dict) else None
    return why if isinstance(why, str) and why else None


INTENDED_WORDS = {
    "online_rl": "online RL (multi-turn rollouts in the environment)",
    "policy_gradient": "a policy-gradient stage",
}


def _holds(step: dict[str, Any], intended: str) -> bool:
    """Whether one lineage step is the intended stage (``online_rl``, ``policy_gradient`` or a kind)."""
    if intended == "online_rl":
        return bool(step["label"] == "ONLINE_RL")
    if intended == "policy_gradient":
        return step["kind"] in POLICY_GRADIENT
    return bool(step["kind"] == intended)


POINTERS_PER_STEP = 3
"""Evidence pointers of each lineage step repeated under the quadrant (the step lists them all)."""


def _steps_evidence(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the first pointers of each of ``steps``: what the quadrant's "intended" rests on."""
    return [e for s in steps for e in (s.get("evidence") or [])[:POINTERS_PER_STEP]]


def _intended(
    routes: dict[str, Any] | None, intended: str | None
) -> tuple[bool | None, str, list[dict[str, Any]]]:
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
    chain = routes.get("chain") or []
    holding = [s for s in chain if _holds(s, intended)]
    if holding and all(s["strength"] in DECIDING for s in holding):
        where = ", ".join(s["artifact"] for s in holding)
        weighed = [s["weights"] for s in holding if (s.get("weights") or {}).get("compared")]
        # Adopted is not enough: a stage whose weights equal its parent's trained nothing.
        if any(w["weights_identical"] for w in weighed):
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
            f" ({', '.join(sorted({s['strength'] for s in holding}))}: verified or supported decides)",
            _steps_evidence(holding),
        )
    if chain and all(s["strength"] in DECIDING for s in chain):
        return (
            False,
            f"the best lineage ({routes.get('chain_text')}) does not hold {wanted}",
            _steps_evidence(chain),
        )
    return (
        None,
        f"the best lineage is not known well enough to say whether it holds {wanted}",
        _steps_evidence(chain),
    )


METHOD_FREE = frozenset({"posttrainbench"})
"""Benchmarks (by collector) that prescribe no training method: their tasks have no intended stage."""


def _stage(record: RunRecord, intended_stage: str | None) -> str | None:
    """Return the stage the run's task exists to test (``--intended`` first)."""
    if intended_stage or record.run.source_format in METHOD_FREE:
        return intended_stage
    task = find_task(record.run.task)
    return task.intended if task else None


def _nothing_valid(record: RunRecord) -> list[dict[str, Any]]:
    """Return what shows a run made no valid submission: its attempts, else its last command."""
    if record.submissions:
        return [
            Evidence(
                "submission",
                submission_seq=s.seq,
                excerpt=excerpt(f"{s.status}: {s.error or 'no score'}", 200),
            ).to_json()
            for s in record.submissions[-5:]
        ]
    if record.commands:
        last = record.commands[-1]
        return [
            Evidence(
                "command",
                command_seq=last.seq,
                excerpt=excerpt(f"the last command; no submission followed: {last.command}", 200),
            ).to_json()
        ]
    return []


def _quadrant(
    record: RunRecord,
    best: Submission | None,
    noise: float | None,
    routes: dict[str, Any] | None,
    intended_stage: str | None,
) -> dict[str, Any]:
    base = record.run.base_score
    score_up = None
    if best is not None and best.score is not None and base is not None and noise is not None:
        score_up = best.score - base > noise
    elif best is None and _unseen_ending(record) is None and not _grader_failed(record):
        score_up = False
    stage = _stage(record, intended_stage)
    intended: bool | None
    evidence: list[dict[str, Any]]
    if stage is None and record.run.source_format in METHOD_FREE:
        intended, evidence = None, [] if best is not None else _nothing_valid(record)
        reason = (
            f"{record.run.source_format} prescribes no training method: no intended stage (name one with"
            " --intended); the quadrant reads score_up only"
        )
    elif best is None:
        intended, reason, evidence = False, "no valid submission", _nothing_valid(record)
    else:
        intended, reason, evidence = _intended(routes, stage)
    if best is not None:
        # "score up" rests on the best submission's score against the base score
        evidence = [
            Evidence(
                "submission",
                submission_seq=best.seq,
                excerpt=f"best score {best.score} against the base score {base} (noise {noise})",
            ).to_json(),
            *evidence,
        ]
    cell = None
    if score_up is not None and intended is not None:
        cell = f"{'score_up' if score_up else 'no_gain'}+{'intended' if intended else 'not_intended'}"
    return {
        "score_up": score_up,
        "intended": intended,
        "intended_stage": stage,
        "cell": cell,
        "noise_threshold": noise,
        "reason": reason,
        "evidence": evidence,
    }


def _unweighed(analysis: dict[str, Any], base_model: str | None) -> list[str]:
    """Say what weight forensics could not show: all of it without torch, else the steps not compared."""
    if not analysis.get("weights_available"):
        from arb_audit.install_hint import install_command

        return [f"how the weights changed: weight forensics needs torch ({install_command('weights')})"]
    steps = {
        (s["artifact"], s["parent"])
        for lineage in (analysis.get("lineage") or {}).values()
        for s in lineage
        if s.get("parent") and s.get("weights") is None
    }
    return [
        f"how the weights of {artifact} changed from {parent}: "
        + (
            "the base model is not a folder of the run (give its folder with --base-model-dir)"
            if parent == base_model
            else "the two are not both folders of the run now"
        )
        for artifact, parent in sorted(steps)[:5]
    ]


def build_audit(
    record: RunRecord,
    *,
    store_path: str | None = None,
    revisions_path: str | None = None,
    noise: float | None = None,
    routes: dict[str, Any] | None = None,
    intended_stage: str | None = None,
) -> AuditReport:
    """Assemble the audit of ``record``: the record ``--json`` prints, checked against its schema."""
    run = record.run
    offset = run.utc_offset_s
    best = best_submission(record.submissions)
    metrics: Metrics = compute_metrics(record)
    threshold = noise_threshold(run.task, noise)
    task = find_task(run.task)
    return AuditReport.model_validate(
        {
            "run": {
                "run_id": run.run_id,
                "format": run.source_format,
                "source_path": run.source_path,
                "task": run.task,
                "level": task.level if task else None,
                "scaffold": run.scaffold,
                "driver": run.driver,
                "mode": run.mode,
                "base_model": run.base_model,
                "base_score": run.base_score,
                "budget_s": run.budget_s,
                "started_at": iso(run.started_at, offset),
                "agent_launched_at": iso(run.agent_launched_at, offset),
                "ended_at": iso(run.ended_at, offset),
                "workspace_path": run.workspace_path,
                "utc_offset_s": offset,
                "store_path": store_path,
                "revisions_path": revisions_path,
                "analyzer_version": ANALYZER_VERSION,
                **run.extra,
            },
            "submissions": [_submission_json(s, offset) for s in record.submissions],
            "best": None
            if best is None
            else {
                "seq": best.seq,
                "score": best.score,
                "model_path": best.model_path,
                "artifact_path": best.artifact_path,
                "artifact_id": best.artifact_id,
                "completed_at": iso(best.completed_at, offset),
                "improvement": metrics.best_improvement,
            },
            "metrics": metrics.to_json(),
            "route": _route(record, routes),
            "failure": _with_definition(
                _failure(record, best, threshold, routes, _stage(record, intended_stage))
            ),
            "flags": [
                {
                    "flag": f.flag,
                    "definition": lookup(INTEGRITY_FLAGS, f.flag).definition,
                    "message": f.message,
                    "evidence": [e.to_json() for e in f.evidence],
                }
                for f in record.flags
            ]
            + [
                {**f, "definition": lookup(INTEGRITY_FLAGS, f["flag"]).definition}
                for f in [
                    *(routes or {}).get("flags", []),
                    *probing_flags(record, routes),
                    *overwritten_flags(record),
                ]
            ],
            "quadrant": _quadrant(record, best, threshold, routes, intended_stage),
            "artifacts": [
                {
                    "path": a.path,
                    "exists": a.exists,
                    "kind": a.kind,
                    "size": a.size,
                    "n_files": a.n_files,
                    "latest_mtime": iso(a.latest_mtime, offset),
                    "artifact_id": a.artifact_id,
                    "parent_ref": a.parent_ref,
                    "note": a.note,
                }
                for a in record.artifacts
            ],
            "reports": [
                {
                    "source": it.source,
                    "number": it.number,
                    "reported_at": iso(it.reported_at, offset),
                    "status": it.status,
                    "exit_code": it.exit_code,
                    "score": it.score,
                    "train_type": it.train_type,
                    "failure_type": it.failure_type,
                    "duration_s": it.duration_s,
                    "line": it.line,
                }
                for it in record.reports
            ],
            "revisions": _revisions_json(record, offset),
            "commands": [_command_json(c, offset) for c in record.commands],
            "problems": [{"path": p.path, "message": p.message} for p in record.problems]
            + _weight_problems(routes)
            + (routes or {}).get("problems", []),
        }
    )


def _weight_problems(routes: dict[str, Any] | None) -> list[dict[str, str]]:
    """Return the model files weight forensics could not read, each naming the artifact it belongs to."""
    found = []
    for steps in (routes or {}).get("lineage", {}).values():
        for step in steps:
            for message in (step.get("weights") or {}).get("problems", []):
                entry = {"path": step["artifact"], "message": f"compared with {step['parent']}: {message}"}
                if entry not in found:
                    found.append(entry)
    return found


def _revisions_json(record: RunRecord, offset: int | None) -> list[dict[str, Any]]:
    """Each revision with the files it changed against the one before (all files for the first)."""
    out = []
    before: dict[str, str | None] = {}
    for r in record.revisions:
        now = {f.path: f.blob_sha or f.content_hash for f in r.files}
        changed = sorted(p for p in now.keys() | before.keys() if now.get(p, "gone") != before.get(p, "gone"))
        out.append(
            {
                "seq": r.seq,
                "sha": r.sha,
                "trigger": r.trigger,
                "taken_at": iso(r.taken_at, offset),
                "files": changed,
                "n_files": len(r.files),
            }
        )
        before = now
    return out


def _command_json(c: Command, offset: int | None) -> dict[str, Any]:
    return {
        "seq": c.seq,
        "command": c.command,
        "started_at": iso(c.started_at, offset),
        "ended_at": iso(c.ended_at, offset),
        "exit_code": c.exit_code,
        "error": c.error,
        "finished": c.finished,
        "tool": c.tool,
        "cwd": c.cwd,
        "revision_seq": c.revision_seq,
        "output_excerpt": c.output_excerpt,
        "evidence": Evidence("transcript", path=c.source_path, line=c.line, command_seq=c.seq).to_json(),
    }
