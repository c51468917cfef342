"""The audit of one run, assembled from its record: the report that ``arb-audit RUN_DIR`` prints.

The parts are decided in rooms of their own: metrics (:mod:`.metrics`), the route and lineage
(:mod:`.routes`, :mod:`.lineage_weights`), the first failure (:mod:`.failure`), whether the intended
training was adopted (:mod:`.intended`), the quadrant (:mod:`.quadrant`) and the flags (the
``*_flags`` modules). This module puts them together into the :class:`~arb_audit.schema.AuditReport`.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, cast

from arb_audit import schema
from arb_audit.analyzer.claims import score_claims
from arb_audit.analyzer.failure import decide_failure
from arb_audit.analyzer.harness_account import reported_account
from arb_audit.analyzer.intended import intended_stage_of
from arb_audit.analyzer.ledger_flags import baseline_reset_flags, ledger_check_flags, probing_flags
from arb_audit.analyzer.metrics import Metrics, best_submission, compute_metrics
from arb_audit.analyzer.overwrite_flags import mtime_overwritten_flags, overwritten_flags
from arb_audit.analyzer.quadrant import decide_quadrant
from arb_audit.evidence import Evidence
from arb_audit.model import RUN_FACTS, Command, Flag, Problem, RunRecord, Submission, TaskDescription
from arb_audit.schema import AuditReport
from arb_audit.taxonomy.failures import INTEGRITY_FLAGS
from arb_audit.taxonomy.routes import ROUTE_LABELS, STAGE_KINDS, lookup

if TYPE_CHECKING:
    from arb_audit.analyzer.run_analysis import RouteAnalysis
    from arb_audit.taxonomy.failures import IntegrityFlag

ANALYZER_VERSION = "0.1.0"


def _clock(offset_s: int | None) -> timezone:
    return timezone(timedelta(seconds=offset_s or 0))


def iso(moment: datetime | None, offset_s: int | None) -> str | None:
    """Format ``moment`` in the run's local offset (UTC when unknown)."""
    return moment.astimezone(_clock(offset_s)).isoformat() if moment else None


def noise_threshold(task: TaskDescription | None, override: float | None) -> float | None:
    """Return the score change within which a difference is noise for ``task``, in score points (0-100).

    The default is two standard errors of a proportion at p = 0.5 over the task's grading split,
    ``100 / sqrt(n_eval)``: a default, not a law (``--noise`` gives another). A task whose grading split
    the run does not say has none.
    """
    if override is not None:
        return override
    if task is None or task.n_eval is None:
        return None
    return round(100.0 / math.sqrt(task.n_eval), 2)


def _submission(s: Submission, offset: int | None) -> schema.Submission:
    return schema.Submission(
        seq=s.seq,
        status=s.status,
        score=s.score,
        requested_at=iso(s.requested_at, offset),
        completed_at=iso(s.completed_at, offset),
        model_path=s.model_path,
        artifact_id=s.artifact_id,
        artifact_path=s.artifact_path,
        harness_id=s.harness_id,
        error=s.error,
        elapsed_s=s.elapsed_s,
        gpu=s.gpu,
        baseline_score=s.baseline_score,
        duplicate_of=s.duplicate_of,
        evidence=list(s.evidence),
    )


def _route(record: RunRecord, analysis: RouteAnalysis | None) -> schema.Route:
    """Return the route section: what the analysis found, with what the run's files let it tell."""
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
    can_tell = [
        "which attempts were graded, when, and with what score (the ledger)",
        "which artifact path each attempt named and whether it changed after grading",
        "the final code tree"
        + (
            f" ({len(code.files)} files, revision {code.sha[:12]})"
            if code
            else " (not available in this run folder)"
        ),
        *history,
    ]
    agent_claims = [schema.AgentClaim(train_type=t, iterations=sorted(n)) for t, n in claims.items()]
    scores = score_claims(record, best_submission(record.submissions))
    revision = code.sha if code else None
    if analysis is None:
        return schema.Route(
            status="not_analyzed",
            best_label=None,
            chain=None,
            chain_text=None,
            attempted=[],
            written=[],
            adopted=[],
            can_tell=can_tell,
            cannot_tell=[
                f"the route of the best submission ({' / '.join(d.name for d in ROUTE_LABELS)}):"
                " the run has no code revisions to analyse",
                f"which training stages ({', '.join(d.name for d in STAGE_KINDS)}) were attempted or"
                " adopted: needs the commands and the code history",
            ],
            agent_claims=agent_claims,
            score_claims=scores,
            code_revision=revision,
        )
    found = analysis.routes
    return schema.Route(
        status="analyzed",
        best_label=found.best_label,
        chain=found.chain,
        chain_text=found.chain_text,
        attempted=found.attempted,
        attempted_complete=not analysis.problems,
        written=found.written,
        adopted=found.adopted,
        strength=found.strength,
        strength_reason=found.strength_reason,
        evidence=found.evidence,
        lineage=found.lineage,
        submission_lineages=found.submission_lineages,
        weights_available=analysis.weights_available,
        can_tell=can_tell,
        cannot_tell=[*_unread(analysis), *_unweighed(analysis, record.run.base_model)],
        agent_claims=agent_claims,
        score_claims=scores,
        code_revision=revision,
    )


def _unread(analysis: RouteAnalysis) -> list[str]:
    """Say which stages may be missing from ``attempted``: those of scripts that ran but could not be read.

    A worker that died, ran out of time or memory, or a file that would not parse leaves the script's
    stages unknown — said here, never shown as an absence.
    """
    return [
        f"which training stage {p.path} runs {p.message}; route.attempted may lack it"
        for p in analysis.problems
    ]


def _unweighed(analysis: RouteAnalysis, base_model: str | None) -> list[str]:
    """Say what weight forensics could not show: all of it without torch, else the steps not compared."""
    if not analysis.weights_available:
        from arb_audit.install_hint import install_command

        return [f"how the weights changed: weight forensics needs torch ({install_command('weights')})"]
    steps = {
        (s.artifact, s.parent)
        for lineage in analysis.routes.lineage.values()
        for s in lineage
        if s.parent and s.weights is None
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
    analysis: RouteAnalysis | None = None,
    intended_stage: str | None = None,
) -> AuditReport:
    """Assemble the audit of ``record``: the record ``--json`` prints, checked against its schema.

    ``analysis`` is the route analysis of its code (:func:`arb_audit.analyzer.run_analysis.route_analysis`),
    None when the run has no code to analyse.
    """
    run = record.run
    offset = run.utc_offset_s
    best = best_submission(record.submissions)
    metrics: Metrics = compute_metrics(record)
    threshold = noise_threshold(run.task_description, noise)
    task = run.task_description
    # The run's own facts, then what its collector reported beyond them (run.extra, kept as read).
    facts = {
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
    }
    raised = [
        *record.flags,
        *mtime_overwritten_flags(record),
        *baseline_reset_flags(record),
        *ledger_check_flags(record),
        *(analysis.flags if analysis else []),
        *probing_flags(
            record,
            analysis.probing if analysis else None,
            analysis.signals.training_commands() if analysis else None,
        ),
        *overwritten_flags(record),
    ]
    problems = [*record.problems, *_weight_problems(analysis), *(analysis.problems if analysis else [])]
    return AuditReport(
        run=schema.Run.model_validate(
            {
                **facts,
                # what the run's files say beside its header, as the collector typed it; the harness's
                # account is shown with where it disagrees with the folder
                **{name: getattr(run, name) for name in RUN_FACTS if name != "harness_account"},
                "harness_account": reported_account(record),
            }
        ),
        submissions=[_submission(s, offset) for s in record.submissions],
        best=None
        if best is None
        else schema.Best(
            seq=best.seq,
            score=best.score,
            model_path=best.model_path,
            artifact_path=best.artifact_path,
            artifact_id=best.artifact_id,
            completed_at=iso(best.completed_at, offset),
            improvement=metrics.best_improvement,
        ),
        metrics=metrics,
        route=_route(record, analysis),
        failure=decide_failure(record, best, threshold, analysis, intended_stage_of(record, intended_stage)),
        flags=[reported_flag(f) for f in raised],
        quadrant=decide_quadrant(record, best, threshold, analysis, intended_stage),
        artifacts=[
            schema.Artifact(
                path=a.path,
                exists=a.exists,
                kind=a.kind,
                size=a.size,
                n_files=a.n_files,
                latest_mtime=iso(a.latest_mtime, offset),
                artifact_id=a.artifact_id,
                parent_ref=a.parent_ref,
                note=a.note,
            )
            for a in record.artifacts
        ],
        reports=[
            schema.AgentReport(
                source=it.source,
                number=it.number,
                reported_at=iso(it.reported_at, offset),
                status=it.status,
                exit_code=it.exit_code,
                score=it.score,
                train_type=it.train_type,
                failure_type=it.failure_type,
                duration_s=it.duration_s,
                line=it.line,
            )
            for it in record.reports
        ],
        revisions=_revisions(record, offset),
        commands=[_command(c, offset) for c in record.commands],
        problems=[schema.Problem(path=p.path, message=p.message) for p in problems],
    )


def reported_flag(raised: Flag) -> schema.Flag:
    """Return a flag a collector or the analyzer raised as the audit reports it: with its definition.

    A name outside the taxonomy (:data:`~arb_audit.taxonomy.failures.INTEGRITY_FLAGS`) is a KeyError.
    """
    definition = lookup(INTEGRITY_FLAGS, raised.flag).definition
    return schema.Flag(
        flag=cast("IntegrityFlag", raised.flag),
        definition=definition,
        message=raised.message,
        evidence=list(raised.evidence),
    )


def _weight_problems(analysis: RouteAnalysis | None) -> list[Problem]:
    """Return the model files weight forensics could not read, each naming the artifact it belongs to."""
    found: list[Problem] = []
    for steps in analysis.routes.lineage.values() if analysis else []:
        for step in steps:
            for message in step.weights.problems if step.weights else []:
                entry = Problem(step.artifact, f"compared with {step.parent}: {message}")
                if entry not in found:
                    found.append(entry)
    return found


def _revisions(record: RunRecord, offset: int | None) -> list[schema.Revision]:
    """Each revision with the files it changed against the one before (all files for the first)."""
    out = []
    before: dict[str, str | None] = {}
    for r in record.revisions:
        now = {f.path: f.blob_sha or f.content_hash for f in r.files}
        changed = sorted(p for p in now.keys() | before.keys() if now.get(p, "gone") != before.get(p, "gone"))
        out.append(
            schema.Revision(
                seq=r.seq,
                sha=r.sha,
                trigger=r.trigger,
                taken_at=iso(r.taken_at, offset),
                files=changed,
                n_files=len(r.files),
            )
        )
        before = now
    return out


def _command(c: Command, offset: int | None) -> schema.Command:
    return schema.Command(
        seq=c.seq,
        command=c.command,
        started_at=iso(c.started_at, offset),
        ended_at=iso(c.ended_at, offset),
        exit_code=c.exit_code,
        error=c.error,
        finished=c.finished,
        tool=c.tool,
        cwd=c.cwd,
        revision_seq=c.revision_seq,
        output_excerpt=c.output_excerpt,
        evidence=Evidence("transcript", path=c.source_path, line=c.line, command_seq=c.seq),
    )
