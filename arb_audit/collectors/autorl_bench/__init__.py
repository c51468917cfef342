"""AutoRL-Bench (Agent² RL-Bench, in RD-Agent) run folders: ``workspace/<task>/<run_id>_<agent>/``.

Reads every file the harness writes (``../shared/reference/autorl_bench.md``): scores.json, run_meta.json,
run.log, agent.log, reports/metrics.json, the agent's summaries, pipeline_results.json, a results.csv row
when given, the final ``code/`` tree (stored as one revision) and the ``output/`` artifacts.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pydantic import JsonValue

from arb_audit.collectors.artifacts import describe, find_output_artifacts, identify, resolve_submitted
from arb_audit.collectors.autorl_bench.agentlog import AGENT_LOG, AgentLog, read_agent_log
from arb_audit.collectors.autorl_bench.ledger import Localize, build_ledger
from arb_audit.collectors.autorl_bench.metafiles import (
    METRICS,
    RUN_META,
    RunMeta,
    find_results_row,
    read_harness_metrics,
    read_run_meta,
    results_account,
)
from arb_audit.collectors.autorl_bench.runlog import RunLog, read_run_log
from arb_audit.collectors.autorl_bench.scores import SCORES, ScoreEntry, read_scores
from arb_audit.collectors.autorl_bench.summaries import read_reports
from arb_audit.collectors.autorl_bench.tasks import describe_task
from arb_audit.collectors.base import CollectOptions, Collector
from arb_audit.collectors.clock import from_epoch, infer_utc_offset, localize
from arb_audit.collectors.final_tree import final_tree
from arb_audit.collectors.reading import RunFolder, Tally, text_int, text_number
from arb_audit.collectors.transcripts.ingest import Snapshot, TranscriptFacts, ingest_transcript
from arb_audit.evidence import Evidence
from arb_audit.model import (
    AgentLogFacts,
    ArtifactInfo,
    AutoRLBenchFacts,
    BaselineReset,
    PipelineTotals,
    RunInfo,
    RunRecord,
    Submission,
)
from arb_audit.regular_files import open_regular
from arb_audit.revisions import run_ref

AGENT_JSONL = "agent.jsonl"
"""The CLI agents' raw event stream (the wrappers ``tee`` it there)."""
COPY_TOLERANCE = timedelta(minutes=10)
"""How far a harness file's mtime may be from the moment it was last written and still be original."""
SIGNATURE_FILES = (SCORES, RUN_META, METRICS)


class AutoRLBenchCollector(Collector):
    """Collector for AutoRL-Bench run folders."""

    name = "autorl_bench"
    description = "AutoRL-Bench / Agent² RL-Bench run folder (scores.json, run.log, run_meta.json)"

    def detect(self, run_dir: Path) -> float:
        """Score how surely ``run_dir`` is an AutoRL-Bench run folder (0 = not at all)."""
        log = run_dir / "run.log"
        if log.is_file() and not log.is_symlink():
            try:
                with open_regular(log) as handle:
                    head = handle.read(4096)
            except OSError:
                head = b""
            if b"=== AutoRL-Bench ===" in head or b"[SUBMIT #" in head:
                return 1.0
        if any((run_dir / name).is_file() for name in SIGNATURE_FILES):
            return 0.9
        if log.is_file() and (run_dir / "code").is_dir():
            return 0.5
        return 0.0

    def collect(self, run_dir: Path, *, revisions_git: Path, options: CollectOptions) -> RunRecord:
        """Read ``run_dir`` into a record; every unreadable part becomes a problem."""
        folder = RunFolder(run_dir.resolve())
        runlog = read_run_log(folder)
        entries = read_scores(folder)
        meta = read_run_meta(folder)
        agentlog = read_agent_log(folder)
        harness_metrics = read_harness_metrics(folder)
        reports, pipeline_totals = read_reports(folder)
        found = find_results_row(options.results_csv, run_dir, folder) if options.results_csv else None
        results_row = found[0] if found else None
        _report_missing(folder, runlog, entries, meta)

        offset = _utc_offset(runlog, entries or [], meta)
        if offset is None and (runlog is not None or entries):
            folder.problem(
                RUN_META,
                "cannot place the run's local clock against UTC (no run_meta.json"
                " time matches a logged moment); local times are taken as UTC",
            )

        def here(moment: datetime | None) -> datetime | None:
            return localize(moment, offset)

        submissions = build_ledger(runlog.events if runlog else [], entries or [], here, folder)
        for it in reports:
            it.reported_at = here(it.reported_at)
        run = _run_info(run_dir, folder, runlog, meta, agentlog, results_row, entries or [], here)
        run.utc_offset_s = offset
        _add_facts(run, runlog, agentlog, harness_metrics, pipeline_totals)
        if found is not None and options.results_csv is not None:
            # The harness's account of the run, typed; the analyzer compares it with the folder.
            run.harness_account = results_account(found[0], found[1], str(options.results_csv), folder)
        run.ledger_sources = [
            name for name, read in (("run.log", runlog), (SCORES, entries)) if read is not None
        ]
        artifacts = _artifacts(folder, submissions, run.workspace_path)
        if options.hash_artifacts:
            identify(folder, artifacts)
        # Facts for the analyzer's flags (collectors read, the analyzer judges): whether file times still
        # date from the run (so a model changed after grading shows), and the grader's baseline resets.
        run.file_times_kept = _file_times_kept(folder, entries or [], meta, here)
        run.baseline_resets = _baseline_changes(runlog, entries or [])
        facts = _transcript(folder, revisions_git, run, agentlog)
        history = facts.revisions if facts else []
        revisions = history + final_tree(folder, "code", revisions_git, run.run_id, len(history) + 1)
        if facts is not None:
            run.transcript = facts.summary
            folder.problems.extend(facts.problems)
        return RunRecord(
            run=run,
            submissions=submissions,
            artifacts=artifacts,
            revisions=revisions,
            reports=reports,
            commands=facts.commands if facts else [],
            problems=folder.problems,
            revisions_path=str(revisions_git) if revisions else None,
        )


def _report_missing(
    folder: RunFolder, runlog: RunLog | None, entries: list[ScoreEntry] | None, meta: RunMeta | None
) -> None:
    if entries is None and not (folder.root / SCORES).exists():
        folder.problem(
            SCORES,
            "is missing: recorded scores come from run.log alone"
            if runlog
            else "is missing, and so is run.log: no submission can be seen",
        )
    if runlog is None and not (folder.root / "run.log").exists():
        folder.problem(
            "run.log",
            "is missing: rejected, duplicate and crashed attempts cannot be seen,"
            " nor when the agent was launched",
        )
    if meta is None and not (folder.root / RUN_META).exists():
        folder.problem(RUN_META, "is missing: the budget and the harness's clock are unknown")


def _utc_offset(runlog: RunLog | None, entries: list[ScoreEntry], meta: RunMeta | None) -> int | None:
    if meta is None:
        return None
    pairs = []
    last_done = entries[-1].completed_at if entries else None
    for epoch, local in (
        (meta.last_submit_time, last_done),
        (meta.start_time, runlog.server_started.at if runlog and runlog.server_started else None),
        (meta.end_time, runlog.last_at if runlog else None),
    ):
        moment = from_epoch(epoch)
        if moment is not None and local is not None:
            pairs.append((moment, local))
    return infer_utc_offset(pairs)


def _base_score(
    runlog: RunLog | None, results: dict[str, str], entries: list[ScoreEntry], folder: RunFolder
) -> float | None:
    """Return the base model's score as the harness measured it before the agent ran.

    run.log's ``Baseline Score`` and results.csv's ``baseline`` are run.py's own value, which
    ``/set_baseline`` cannot change; scores.json's ``baseline_score`` is the grader's, which it can.
    """
    if runlog is not None and runlog.baseline_score is not None:
        return runlog.baseline_score
    if (from_results := text_number(results.get("baseline", ""))) is not None:
        return from_results
    if runlog is not None and runlog.baseline_sets:
        return runlog.baseline_sets[0][1]
    recorded = next((e.baseline_score for e in entries if e.baseline_score is not None), None)
    if recorded is not None:
        folder.problem(
            SCORES,
            f"the base score {recorded} is taken from baseline_score, which the agent can change"
            " (/set_baseline); give --results-csv or keep run.log to use the harness's own value",
        )
    return recorded


def _run_info(
    run_dir: Path,
    folder: RunFolder,
    runlog: RunLog | None,
    meta: RunMeta | None,
    agentlog: AgentLog | None,
    results: dict[str, str] | None,
    entries: list[ScoreEntry],
    here: Localize,
) -> RunInfo:
    results = results or {}
    header = agentlog.header if agentlog else {}
    task = (
        (runlog.task if runlog else None) or results.get("task") or header.get("Task") or run_dir.parent.name
    )
    folder_agent = run_dir.name.split("_")[-1] if "_" in run_dir.name else None
    scaffold = (runlog.agent if runlog else None) or results.get("agent") or folder_agent
    base_score = _base_score(runlog, results, entries, folder)
    ended = from_epoch(meta.end_time) if meta else None
    if ended is None and runlog:
        end = runlog.agent_finished or runlog.agent_timed_out or runlog.interrupted
        ended = here(end.at if end else None)
    return RunInfo(
        run_id=f"autorl_bench:{task}/{run_dir.name}",
        source_format="autorl_bench",
        source_path=str(folder.root),
        task=task,
        task_description=describe_task(task),
        scaffold=scaffold,
        driver=header.get("Model") or results.get("driver_model") or None,
        base_model=(runlog.base_model if runlog else None) or results.get("base_model") or None,
        base_score=base_score,
        budget_s=float(meta.timeout_s) if meta and meta.timeout_s is not None else None,
        started_at=from_epoch(meta.start_time) if meta else None,
        agent_launched_at=here(runlog.agent_launched.at) if runlog and runlog.agent_launched else None,
        ended_at=ended,
        workspace_path=(runlog.workspace if runlog else None) or results.get("workspace") or None,
    )


def _add_facts(
    run: RunInfo,
    runlog: RunLog | None,
    agentlog: AgentLog | None,
    harness_metrics: dict[str, JsonValue] | None,
    pipeline_totals: PipelineTotals | None,
) -> None:
    """Set what run.log says of the agent's end, and the harness's own files as read."""
    facts = run.autorl_bench = AutoRLBenchFacts(
        harness_metrics=harness_metrics, pipeline_results=pipeline_totals
    )
    if runlog:
        end = runlog.agent_finished
        run.agent_exit_code = text_int(end.value) if end and end.value else None
        run.agent_timed_out = runlog.agent_timed_out is not None
        run.interrupted_by = runlog.interrupted.value if runlog.interrupted else None
        facts.harness_summary = dict(runlog.summary)
        facts.baseline_cache = runlog.baseline_cache
        facts.run_log_lines = runlog.n_lines
    if agentlog:
        facts.agent_log = AgentLogFacts(
            title=agentlog.title,
            header=dict(agentlog.header),
            diagnostics=dict(agentlog.diagnostics),
            cli_exit=agentlog.cli_exit,
            json_event_lines=agentlog.json_lines,
            lines=agentlog.lines,
        )


def _artifacts(folder: RunFolder, submissions: list[Submission], workspace: str | None) -> list[ArtifactInfo]:
    """Resolve every submitted path, link duplicates to what they repeat, and list the artifacts."""
    paths: dict[str, None] = {}
    outside = Tally()
    for s in submissions:
        if s.model_path is None:
            continue
        rel, why = resolve_submitted(s.model_path, folder.root, workspace)
        s.artifact_path = rel
        if rel is not None:
            paths[rel] = None
        elif s.status in ("scored", "error"):
            outside.add(s.seq, why or "")
    if outside.count:
        more = f" ({outside.count - 1:,} more like it)" if outside.count > 1 else ""
        folder.problem(
            SCORES, f"submission {outside.first}: {outside.example}; its artifact cannot be examined{more}"
        )
    _link_duplicates(submissions)
    for rel in find_output_artifacts(folder):
        paths[rel] = None
    return [describe(folder, rel) for rel in sorted(paths)]


def _link_duplicates(submissions: list[Submission]) -> None:
    """Point each cached answer at the latest earlier graded attempt of the same artifact.

    The grading server keys its cache on the resolved path, so ``./output/v1`` and an absolute path
    to the same folder are the same artifact.
    """
    last_graded: dict[str, int] = {}
    for s in submissions:
        key = s.artifact_path or s.model_path
        if key is None:
            continue
        if s.status == "duplicate":
            s.duplicate_of = last_graded.get(key)
        elif s.status == "scored":
            last_graded[key] = s.seq


def _file_times_kept(
    folder: RunFolder, entries: list[ScoreEntry], meta: RunMeta | None, here: Localize
) -> bool:
    """Tell whether file mtimes still date from the run (a copy without preserved times resets them).

    scores.json is last written when the last submission is recorded, run_meta.json when the run ends;
    if neither agrees within :data:`COPY_TOLERANCE`, mtimes say nothing about overwrites.
    """
    candidates = [
        (SCORES, here(entries[-1].completed_at) if entries else None),
        (RUN_META, from_epoch(meta.end_time) if meta is not None else None),
    ]
    checks = [(rel, expected) for rel, expected in candidates if expected is not None]
    for rel, expected in checks:
        try:
            written = datetime.fromtimestamp((folder.root / rel).stat().st_mtime, tz=UTC)
        except OSError:
            continue
        if abs(written - expected) <= COPY_TOLERANCE:
            return True
    if checks:
        folder.problem(
            ".",
            "file times postdate the run (the folder was copied without keeping them?);"
            " whether submitted artifacts were overwritten after grading cannot be checked",
        )
    return False


def _baseline_changes(runlog: RunLog | None, entries: list[ScoreEntry]) -> list[BaselineReset]:
    """Each reset of the grader's baseline the run's files show: the new baseline, how, and where.

    One entry per new baseline, citing run.log (a /set_baseline after the agent's launch) and
    scores.json (a changed ``baseline_score`` between two entries) wherever each shows it.
    """
    resets: dict[float | None, BaselineReset] = {}
    if runlog and runlog.agent_launched:
        for moment, score in runlog.baseline_sets:
            if moment.line > runlog.agent_launched.line and score not in resets:
                resets[score] = BaselineReset(
                    score,
                    f"the grader's baseline was set to {score} after the agent was launched",
                    [
                        Evidence(
                            "log", path="run.log", line=moment.line, end_line=moment.line, excerpt=moment.text
                        )
                    ],
                )
    for previous, entry in itertools.pairwise(entries):
        if entry.baseline_score == previous.baseline_score:
            continue
        cite = Evidence(
            "file",
            path=SCORES,
            excerpt=f"entries {previous.index + 1}→{entry.index + 1}: baseline_score"
            f" {previous.baseline_score}→{entry.baseline_score}",
        )
        if entry.baseline_score in resets:
            resets[entry.baseline_score].evidence.append(cite)
        else:
            resets[entry.baseline_score] = BaselineReset(
                entry.baseline_score,
                f"the grader's baseline changed from {previous.baseline_score} to"
                f" {entry.baseline_score} between scores.json entries {previous.index + 1} and"
                f" {entry.index + 1}",
                [cite],
            )
    return list(resets.values())


def _transcript(
    folder: RunFolder, revisions_git: Path, run: RunInfo, agentlog: AgentLog | None
) -> TranscriptFacts | None:
    """Read the CLI agent's event stream: ``agent.jsonl``, else the JSON lines inside ``agent.log``."""
    if (folder.root / AGENT_JSONL).exists() or (folder.root / AGENT_JSONL).is_symlink():
        rel = AGENT_JSONL
    elif agentlog is not None and agentlog.json_lines:
        rel = AGENT_LOG
    else:
        return None
    workspace = run.workspace_path or (agentlog.header.get("Workspace") if agentlog else None)
    return ingest_transcript(
        folder,
        rel,
        roots=[f"{workspace.rstrip('/')}/code" if workspace else None],
        git_dir=revisions_git,
        ref=run_ref(run.run_id),
        snapshot=Snapshot(folder.root / "code", "code"),
        session_root_suffix="/code",
        default_cwd=workspace,
    )


__all__ = ["AGENT_LOG", "AutoRLBenchCollector"]
