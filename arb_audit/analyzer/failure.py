"""The run's first failure and what followed, decided only from what its own files show.

The commands' signals (a NaN loss, a reward that never varied, rollouts that never called their
environment, a stage that scored below its parent) come first, in the order they happened; then the
harness's own errors and what the submission ledger shows. A mode the files cannot establish (a
transcript that stops early, a layout that never holds the artifacts) is undetermined, with the reason
(TAXONOMY.md: "determined" only from evidence).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from arb_audit.analyzer.budget_end import budget_end
from arb_audit.analyzer.harness_account import all_there_is, cite
from arb_audit.analyzer.intended import intended_in_lineage
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import HarnessError, RunRecord, Submission
from arb_audit.schema import Failure
from arb_audit.taxonomy.failures import FAILURE_MODES
from arb_audit.taxonomy.routes import lookup

if TYPE_CHECKING:
    from arb_audit.analyzer.routes import Routes
    from arb_audit.analyzer.run_analysis import RouteAnalysis
    from arb_audit.taxonomy.failures import FailureMode


def failure(
    mode: FailureMode | None,
    reason: str,
    evidence: list[Evidence],
    downstream: list[FailureMode] | None = None,
) -> Failure:
    """Return a failure as the audit reports it: determined when it has a mode, with its definition."""
    return Failure(
        mode=mode,
        determined=mode is not None,
        reason=reason,
        evidence=evidence,
        downstream=downstream or [],
        definition=lookup(FAILURE_MODES, mode).definition if mode else None,
    )


@dataclass(slots=True)
class _Ledger:
    """What the submission ledger alone shows, and what deciding the first failure needs to know of it."""

    mode: FailureMode | None
    """The mode the ledger shows (no submission, regression, a harness failure), or None."""
    reason: str
    """Why, in words."""
    evidence: list[Evidence]
    """The submissions (or files) that show it."""
    improved: bool = False
    """The best score rose beyond noise."""
    no_submission: bool = False
    """No attempt was valid (and the run's ending is seen)."""
    ran_out: bool | None = None
    """Whether the budget ended the run (:func:`arb_audit.analyzer.budget_end.budget_end`)."""
    budget: str | None = None
    """How much of the budget was used, in words."""

    def as_failure(self) -> Failure:
        """Return the ledger's finding as the run's failure."""
        return failure(self.mode, self.reason, self.evidence)


def _ledger_failure(record: RunRecord, best: Submission | None, noise: float | None) -> _Ledger:
    """Decide what the submission ledger alone shows (no submission, regression, the score's move)."""
    base = record.run.base_score
    if best is None:
        if harness := _harness_errors(record):
            return _harness_failure(harness)
        if (account := all_there_is(record)) is not None and account.best_score is not None:
            # The folder holds no record of the submissions the harness counted: its row is all there is.
            told = f"the harness's results.csv ({account.submissions} submission(s), none in the folder)"
            return _score_failure(account.best_score, told, base, noise, [cite(account)])
        if (why := unseen_ending(record)) is not None:
            return _Ledger(None, why, [])
        tried = [s for s in record.submissions if s.status in ("error", "rejected")]
        attempts = f"{len(record.submissions)} attempt(s), {len(tried)} failed or refused"
        shown = [Evidence("submission", submission_seq=s.seq, excerpt=s.error or s.status) for s in tried[:5]]
        end = budget_end(record)
        mode: FailureMode | None
        if end.ran_out is None:
            mode, reason = None, f"no valid submission ({attempts}), and {end.reason}"
        elif end.ran_out:
            mode = "timeout_no_submission"
            reason = (
                f"the budget ended with no valid submission ({attempts}; {end.reason});"
                " what went wrong first needs the code analysis"
            )
        else:
            # Stopping early with nothing that scored is the pipeline never producing a trained artifact
            # that scored (TAXONOMY.md: early_coding_failure), not the budget ending.
            mode = "early_coding_failure"
            reason = (
                f"{end.reason} with no valid submission ({attempts}): the pipeline never produced a"
                " trained artifact that scored"
            )
        return _Ledger(mode, reason, shown, no_submission=True, ran_out=end.ran_out, budget=end.reason)
    if best.score is None:
        return _Ledger(None, "the best score is unknown", [])
    shown = [Evidence("submission", submission_seq=best.seq, excerpt=f"best valid score {best.score}")]
    return _score_failure(best.score, "the ledger", base, noise, shown)


def _score_failure(
    score: float, where: str, base: float | None, noise: float | None, shown: list[Evidence]
) -> _Ledger:
    """Decide what the best score (as ``where`` gives it) against the base score shows."""
    if base is None or noise is None:
        missing = "base score" if base is None else "noise threshold for this task (pass --noise)"
        return _Ledger(None, f"the {missing} is unknown", shown)
    delta = score - base
    source = "" if where == "the ledger" else f" (from {where})"
    if delta < -noise:
        return _Ledger(
            "regression",
            f"the best valid score {score}{source} is {-delta:.2f} below the base {base} (noise {noise})",
            shown,
        )
    moved = "improved beyond noise" if delta > noise else "did not move beyond noise"
    return _Ledger(
        None, f"the score {moved} ({delta:+.2f}, noise {noise}){source}", shown, improved=delta > noise
    )


SIGNAL_MODES: tuple[tuple[str, FailureMode, str], ...] = (
    ("nan", "training_collapse", "a training run's loss became NaN/inf"),
    ("below_parent", "training_collapse", "a stage's artifact scored below the model it was trained from"),
    ("constant_reward", "reward_data_design_failure", "a policy-gradient run's reward never varied"),
    ("no_env_calls", "rollout_construction_failure", "the rollouts never called their environment"),
)
"""Failure signals of the commands, in the order they decide the first failure."""


def decide_failure(
    record: RunRecord,
    best: Submission | None,
    noise: float | None,
    analysis: RouteAnalysis | None,
    intended_stage: str | None,
) -> Failure:
    """Decide the run's first failure (commands' signals, then the ledger) and its downstream effects."""
    ledger = _ledger_failure(record, best, noise)
    if analysis is None:
        return ledger.as_failure()
    first: tuple[FailureMode, str, list[Evidence]] | None = None
    signals = analysis.signals
    found = {
        "nan": signals.nan,
        "below_parent": _below_parent(record, analysis.routes, noise),
        "constant_reward": signals.constant_reward,
        "no_env_calls": signals.no_env_calls,
    }
    # The earliest signal in the run is its first failure (a NaN at command 9 follows a flat reward at 2);
    # what a model's own log or its score shows has no time of its own: it comes after the commands'.
    after = len(record.commands) + 1
    seen = [
        (after if (seq := found[key][0].command_seq) is None else seq, mode, why, key)
        for key, mode, why in SIGNAL_MODES
        if found[key]
    ]
    if seen:
        _, mode, why, key = min(seen)
        first = (mode, why, found[key][:5])
    ran, crashed, cut = signals.training_ran, signals.crashed, signals.cut
    # Without a command timeline (no transcript), "no training code ran" is unknown, not a finding.
    if first is None and ledger.no_submission and record.commands:
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
            return failure(
                None,
                f"no valid submission, and what went wrong first cannot be told: {unseen}{shown}",
                traces + ledger.evidence,
            )
        if not ran:
            first = ("early_coding_failure", "no command ever ran training code", [])
        elif cut and ledger.ran_out:
            # Training was still running when the budget ended: the budget, not the code, ended it.
            first = (
                "timeout_no_submission",
                f"the run ended while training code was still running ({len(cut)} run(s) cut off):"
                f" {ledger.budget}",
                cut[:5],
            )
        elif cut and ledger.ran_out is None:
            # Training still ran when the transcript stops, but nothing shows the budget ended there.
            return failure(
                ledger.mode,
                ledger.reason + f"; training code was still running when the transcript ends"
                f" ({len(cut)} run(s) cut off)",
                cut[:5] + ledger.evidence,
            )
        elif len(crashed) == len(ran):
            first = (
                "early_coding_failure",
                f"every run of training code failed ({len(crashed)})",
                crashed[:5],
            )
    if ledger.improved:
        note = f"; recovered from {first[0]}" if first else ""
        return failure("none", ledger.reason + note, ledger.evidence)
    measured = noise is not None and record.run.base_score is not None
    flat = best is not None and measured and ledger.mode is None
    if first is None and flat and intended_in_lineage(analysis.routes, intended_stage)[0] is False:
        first = (
            "static_shortcut_without_transfer",
            f"the best lineage ({analysis.routes.chain_text}) skips the intended training",
            [],
        )
    if first is None:
        return ledger.as_failure()
    mode, why, evidence = first
    downstream = [ledger.mode] if ledger.mode and ledger.mode != mode else []
    return failure(
        mode, why + (f"; then {downstream[0]}" if downstream else ""), evidence + ledger.evidence, downstream
    )


def _below_parent(record: RunRecord, routes: Routes, noise: float | None) -> list[Evidence]:
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
    found: list[Evidence] = []
    for path, steps in routes.lineage.items():
        step = steps[-1] if steps else None
        if step is None or step.kind in ("copy", "config_only", "unknown") or path not in best:
            continue
        child = best[path]
        parent = best.get(step.parent or "")
        if parent is not None:
            floor, cited = parent.score, f"its parent {step.parent} scored {parent.score}"
        elif step.parent and step.parent == record.run.base_model and record.run.base_score is not None:
            floor, cited = record.run.base_score, f"the base model scored {record.run.base_score}"
        else:
            continue
        if floor is not None and child.score is not None and floor - child.score > noise:
            note = f"the {step.kind} stage's {path} scored {child.score}; {cited} (noise {noise})"
            found.append(Evidence("submission", submission_seq=child.seq, excerpt=excerpt(note, 240)))
            if parent is not None:
                found.append(Evidence("submission", submission_seq=parent.seq, excerpt=f"{step.parent}"))
    return found


def unseen_ending(record: RunRecord) -> str | None:
    """Say why "no valid submission" cannot be read as "the budget ended without one", or None."""
    run = record.run
    if run.ledger_sources is not None and not run.ledger_sources:
        return "no submission record (run.log, scores.json) could be read"
    if run.interrupted_by:
        return f"the run was interrupted ({run.interrupted_by}) before any valid submission"
    if run.artifacts_in_layout is False:
        return (
            "this folder's layout (a published copy of the run) never holds the submitted model or its"
            " score's inputs: whether a model was stored and graded cannot be seen"
        )
    return None


def _harness_errors(record: RunRecord) -> list[HarnessError]:
    """Return the harness's own errors the collector found (provider refusals, grader failures)."""
    return [e for e in record.run.harness_errors or [] if e.message]


def _harness_failure(errors: list[HarnessError]) -> _Ledger:
    """Return the failure of a run whose harness failed, quoting the harness's own message."""
    stages = {e.stage for e in errors}
    what = (
        "the agent's provider refused or stopped it"
        if stages == {"agent"}
        else "every evaluation failed on the grader's own infrastructure"
        if stages == {"evaluation"}
        else "the agent's provider and the grader's infrastructure failed"
    )
    return _Ledger(
        "harness_failure",
        f"{what}: {errors[0].message!r} ({errors[0].path})",
        [Evidence("log", path=e.path, line=e.line, excerpt=excerpt(e.message, 240)) for e in errors[:5]],
    )


def grader_failed(record: RunRecord) -> bool:
    """Whether the grader's own infrastructure failed (so the model's score is unknown, not low)."""
    return any(e.stage == "evaluation" for e in _harness_errors(record))


def _training_traces(record: RunRecord) -> list[Evidence]:
    """Return what the run folder itself shows of training (trainer files, model cards), as evidence."""
    found = record.run.training_traces or []
    return [Evidence("file", path=t.path, excerpt=excerpt(t.excerpt, 200)) for t in found[:5]]


def _cut_off(record: RunRecord) -> str | None:
    """Say why the run's transcript looks cut off (it cannot show what came after), or None."""
    summary = record.run.transcript
    return (summary.cut_off or None) if summary is not None else None
