"""PostTrainBench result folders: ``{agent}_{config}_{H}h{exp}/{task}_{org}_{model}_{cluster}/``.

Reads the pipeline's files (``../shared/reference/posttrainbench.md``): the agent's transcript
(``solve_out.txt``, else the readable ``solve_parsed.txt`` / published ``trace.txt``), ``output.log``'s
SOLVE DIAGNOSTICS, ``time_taken.txt``, ``metrics.json`` (or its placeholder), ``final_eval_*.txt``,
``prompt.txt``, the stderr log, every generation of judge verdicts (kept as external verdicts beside
ours), the ``task/`` snapshot (the final revision, and the check of the rebuilt history) and
``final_model/``. PostTrainBench grades one model per run, the final one: the ledger holds exactly one
attempt.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from pathlib import Path

from arb_audit.collectors.artifacts import describe, identify, model_card
from arb_audit.collectors.base import CollectOptions, Collector, RunListing
from arb_audit.collectors.claims import final_message_claim, summary_claims
from arb_audit.collectors.final_tree import final_tree
from arb_audit.collectors.harness_errors import MAX_LISTED, entry, transcript_errors
from arb_audit.collectors.posttrainbench.judges import read_verdicts
from arb_audit.collectors.posttrainbench.naming import RunName, parse_method_name, parse_run_name
from arb_audit.collectors.posttrainbench.outputs import (
    METRICS,
    OUTPUT_LOG,
    FinalEval,
    JobArgs,
    Metrics,
    OutputLog,
    Prompt,
    TimeTaken,
    read_final_evals,
    read_metrics,
    read_output_log,
    read_prompt,
    read_stderr_logs,
    read_time_taken,
)
from arb_audit.collectors.posttrainbench.outputs import (
    PROMPT as PROMPT_FILE,
)
from arb_audit.collectors.posttrainbench.tree import is_run_folder, scan_tree, superseded_by
from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.ingest import Snapshot, TranscriptFacts, ingest_transcript
from arb_audit.collectors.transcripts.secrets import redact
from arb_audit.evidence import Evidence
from arb_audit.model import (
    ArtifactInfo,
    EvalLog,
    HarnessError,
    PostTrainBenchFacts,
    Problem,
    PromptExcerpt,
    RunInfo,
    RunRecord,
    StderrLog,
    Submission,
    TaskDescription,
    TrainingTrace,
    TranscriptSummary,
)
from arb_audit.redaction import redact_fields
from arb_audit.revisions import run_ref

WORKSPACE = "/home/ben/task"
"""The agent's workspace inside PostTrainBench's container (every job's, whatever its machine)."""
TRANSCRIPTS = ("solve_out.txt", "solve_parsed.txt", "trace.txt")
"""The agent's transcript, most complete first: the raw stream, then the readable renderings."""
FINAL_MODEL = "final_model"
MAX_WALL_S = 366 * 24 * 3600
"""A time_taken.txt longer than a year is not believed."""
TASK = "task"
TASK_DESCRIPTION = TaskDescription("PostTrainBench", no_method="PostTrainBench prescribes no training method")
"""Every PostTrainBench task: the agent post-trains as it sees fit, so no stage is the intended one."""


class PostTrainBenchCollector(Collector):
    """Collector for one PostTrainBench run folder."""

    name = "posttrainbench"
    description = "PostTrainBench run folder ({task}_{org}_{model}_{cluster}/ with solve_out.txt, output.log)"

    def detect(self, run_dir: Path) -> float:
        """Score 0.95 for a folder named and filled like a run folder, 0.6 for one only holding its files."""
        if is_run_folder(run_dir):
            return 0.95
        markers = (*TRANSCRIPTS, OUTPUT_LOG)
        if any((run_dir / m).is_file() for m in markers) and (run_dir / TASK).is_dir():
            return 0.6
        return 0.0

    def runs_in(self, folder: Path) -> RunListing | None:
        """List the run folders of a results tree or method folder; only the highest cluster id counts."""
        scan = scan_tree(folder)
        if scan.kind not in ("results", "method"):
            return None
        return RunListing(
            runs=[r.path for r in scan.kept],
            dropped=[(d.run.path, d.reason) for d in scan.dropped],
            problems=scan.problems,
        )

    def collect(self, run_dir: Path, *, revisions_git: Path, options: CollectOptions) -> RunRecord:
        """Read ``run_dir`` into a record; every unreadable part becomes a problem."""
        folder = RunFolder(run_dir.resolve())
        output = read_output_log(folder)
        run = _run_info(folder, output)
        taken = read_time_taken(folder)
        metrics = read_metrics(folder)
        facts = _transcript(folder, revisions_git, run.run_id)
        if facts is not None:
            run.agent_launched_at = run.started_at = facts.transcript.first_at
            run.transcript = facts.summary
        if run.agent_launched_at is not None and taken is not None and taken.seconds < MAX_WALL_S:
            run.ended_at = run.agent_launched_at + timedelta(seconds=taken.seconds)
        elif facts is not None:
            run.ended_at = facts.transcript.last_at
        # Pipeline files echo what the agent's environment held (job args, prompts, judge texts).
        pipeline = run.posttrainbench = _facts(run.posttrainbench, folder, output, taken, metrics)
        redact_fields(pipeline)
        diagnostics = output.diagnostics if output else None
        status = diagnostics.status if diagnostics else None
        run.agent_exit_code = diagnostics.exit_code if diagnostics else None
        run.agent_timed_out = (
            None if status is None or status.outcome is None else status.outcome == "timeout"
        )
        if taken is not None and run.budget_s:
            # time_taken.txt against the budget in the method folder's name: the pipeline's own clock.
            run.budget_used = round(taken.seconds / run.budget_s, 4)
            if status is None or status.outcome is None:
                run.agent_timed_out = taken.seconds >= run.budget_s
        if (later := superseded_by(folder.root)) is not None:
            folder.problem(
                ".",
                f"a later run of the same task and model exists ({later}): PostTrainBench counts only"
                " the highest cluster id, so this run does not count",
            )
            pipeline.superseded_by = later
        artifact = describe(folder, FINAL_MODEL)
        if options.hash_artifacts:
            identify(folder, [artifact])
        published = _published(folder, output)
        pipeline.layout = "published" if published else "pipeline"
        if published:
            # extract_traces.py keeps the trace and the verdicts, never final_model/ or task/.
            run.artifacts_in_layout = False
        evals = read_final_evals(folder)
        run.harness_errors = _harness_errors(run.transcript, evals, metrics)
        run.training_traces = _training_traces(folder, artifact)
        claims = summary_claims(folder, TASK)
        if facts is not None and (said := facts.transcript.final_message) is not None:
            claims.insert(0, final_message_claim(facts.transcript.path, said.text, said.line, said.at))
        history = facts.revisions if facts else []
        revisions = history + final_tree(folder, TASK, revisions_git, run.run_id, len(history) + 1)
        problems = [
            Problem(p.path, redact(p.message)) for p in [*folder.problems, *(facts.problems if facts else [])]
        ]
        return RunRecord(
            run=run,
            submissions=[_submission(artifact, metrics, run.ended_at, published=published)],
            artifacts=[artifact],
            revisions=revisions,
            commands=facts.commands if facts else [],
            reports=claims,
            problems=problems,
            revisions_path=str(revisions_git) if revisions else None,
        )


def _run_info(folder: RunFolder, output: OutputLog | None) -> RunInfo:
    args = output.args if output else None
    prompt = read_prompt(folder)
    said = args.model if args else (prompt.model if prompt else None)
    name = parse_run_name(folder.root.name, said)
    method = parse_method_name(folder.root.parent.name)
    if not name.complete and args is None:
        folder.problem(
            ".", "the folder name is not {task}_{org}_{model}_{cluster}: task and base model unknown"
        )
    base_model = _identity(folder, name, args, prompt)
    gpus = args.gpus if args and args.gpus is not None else method.gpus
    if args and args.gpus is not None and method.gpus is not None and args.gpus != method.gpus:
        folder.problem(
            OUTPUT_LOG,
            f"its args line gives {args.gpus} GPU(s), the method folder's name {method.gpus}; output.log's"
            " count is used",
        )
    if args and args.hours is not None and method.hours is not None and args.hours != method.hours:
        folder.problem(
            OUTPUT_LOG,
            f"its args line gives a {args.hours:g} h budget, the method folder's name {method.hours:g} h;"
            " the folder's is used",
        )
    return RunInfo(
        run_id=f"posttrainbench:{folder.root.parent.name}/{folder.root.name}",
        source_format="posttrainbench",
        source_path=str(folder.root),
        task=args.task if args else name.task,
        task_description=TASK_DESCRIPTION,
        scaffold=method.scaffold,
        driver=method.agent_config,
        base_model=base_model,
        budget_s=method.budget_s or (prompt.hours * 3600 if prompt and prompt.hours else None),
        workspace_path=WORKSPACE,
        posttrainbench=PostTrainBenchFacts(
            method=method.name,
            agent=method.agent,
            experiment=method.experiment,
            gpus=gpus,
            cluster_id=name.cluster_id,
            run_id=args.run_id if args else name.run_id,
            prompt=None
            if prompt is None
            else PromptExcerpt(prompt.size, redact(prompt.first_line), redact(prompt.excerpt)),
        ),
    )


def _identity(folder: RunFolder, name: RunName, args: JobArgs | None, prompt: Prompt | None) -> str | None:
    """Return the base model the run's own files name, reporting every disagreement among them.

    output.log's args line is the pipeline's own record; then the prompt the agent was given; the folder
    name last (it does not split unambiguously). A name none of the files confirms is not trusted to
    flag a model as disallowed, so it is only used when the files say nothing.
    """
    sources = [
        (f"{OUTPUT_LOG} (args line {args.line if args else '?'})", args.model if args else None),
        (PROMPT_FILE, prompt.model if prompt else None),
        ("the folder name", name.base_model),
    ]
    named = [(where, model) for where, model in sources if model]
    if not named:
        return None
    chosen_where, chosen = named[0]
    for where, model in named[1:]:
        if model != chosen:
            folder.problem(
                "." if where == "the folder name" else where.split(" ")[0],
                f"{where} names the base model {model}, but {chosen_where} names {chosen}; {chosen} is used",
            )
    if args is not None and name.task is not None and args.task != name.task:
        folder.problem(
            OUTPUT_LOG,
            f"its args line names task {args.task}, the folder name {name.task}; {args.task} is used",
        )
    if args is not None and name.run_id is not None and args.run_id != name.run_id:
        folder.problem(OUTPUT_LOG, f"its args line names run id {args.run_id}, the folder name {name.run_id}")
    return chosen


def _transcript(folder: RunFolder, revisions_git: Path, run_id: str) -> TranscriptFacts | None:
    task = folder.root / TASK
    check = Snapshot(task, TASK) if task.is_dir() and not task.is_symlink() else None
    for rel in TRANSCRIPTS:
        facts = ingest_transcript(
            folder,
            rel,
            roots=[WORKSPACE],
            git_dir=revisions_git,
            ref=run_ref(run_id),
            snapshot=check,
            default_cwd=WORKSPACE,
        )
        if facts is not None:
            return facts
    folder.problem(
        TRANSCRIPTS[0],
        f"no transcript ({', '.join(TRANSCRIPTS)}) could be read: no commands, no code history",
    )
    return None


def _facts(
    facts: PostTrainBenchFacts | None,
    folder: RunFolder,
    output: OutputLog | None,
    taken: TimeTaken | None,
    metrics: Metrics | None,
) -> PostTrainBenchFacts:
    """Add what the pipeline's files say to ``facts`` (what the folder's name said) and return them."""
    facts = facts if facts is not None else PostTrainBenchFacts()
    diagnostics = output.diagnostics if output else None
    status = diagnostics.status if diagnostics else None
    facts.job_args = output.job_args if output else None
    facts.diagnostics = dict(diagnostics.fields) if diagnostics else None
    facts.agent_status = status.text if status else None
    facts.time_taken_s = taken.seconds if taken else None
    facts.metrics = dict(metrics.values) if metrics else None
    facts.metrics_placeholder = metrics.placeholder if metrics else None
    facts.final_evals = [EvalLog(e.path, e.last_line, e.infra_error) for e in read_final_evals(folder)]
    facts.stderr = [
        StderrLog(s.path, s.terminated, s.killed_line is not None) for s in read_stderr_logs(folder)
    ]
    facts.external_verdicts = read_verdicts(folder)
    return facts


def _published(folder: RunFolder, output: OutputLog | None) -> bool:
    """Whether the folder is a published copy (``extract_traces.py``): the trace, no pipeline files."""
    pipeline = (TASK, FINAL_MODEL, "solve_out.txt")
    return output is None and not any((folder.root / name).exists() for name in pipeline)


def _harness_errors(
    transcript: TranscriptSummary | None, evals: list[FinalEval], metrics: Metrics | None
) -> list[HarnessError]:
    """List what shows the harness failed.

    That is the agent's provider refusing it, or every evaluation failing on the grader's own
    infrastructure (and no score).
    """
    found = transcript_errors(transcript)
    scored = metrics is not None and metrics.score is not None
    if evals and not scored and all(e.infra_error for e in evals):
        found += [entry("evaluation", e.path, e.infra_error or "") for e in evals[:MAX_LISTED]]
    return found


TRACE_FILES = ("trainer_state.json", "training_args.bin", "adapter_config.json")
"""Files a trainer writes beside what it trains: their presence shows a training ran."""
TRAINING_CARD_TAGS = frozenset({"trl", "sft", "grpo", "dpo", "orpo", "kto", "ppo", "reward-trainer"})
"""Model-card tags TRL writes on the models it trains."""
MAX_WALKED = 20_000
"""Most entries of task/ looked at when listing the traces of training."""
MAX_TRACES = 10
"""Most traces of training listed."""


def _training_traces(folder: RunFolder, artifact: ArtifactInfo) -> list[TrainingTrace]:
    """List what the folder itself shows of training.

    Trainer files and TRL model cards in ``task/`` (whose model weights the pipeline deletes), and the
    final model's own trainer evidence.
    """
    found: list[TrainingTrace] = []
    if shown := artifact.trainer_evidence.to_json():
        found.append(TrainingTrace(FINAL_MODEL, json.dumps(shown, default=str)[:200]))
    task = folder.root / TASK
    if not task.is_dir() or task.is_symlink():
        return found
    seen = 0
    for where, dirs, files in os.walk(task):
        dirs[:] = sorted(d for d in dirs if not (Path(where) / d).is_symlink())
        seen += len(dirs) + len(files)
        if seen > MAX_WALKED or len(found) >= MAX_TRACES:
            break
        rel_dir = Path(where).relative_to(folder.root).as_posix()
        for name in sorted(files):
            rel = f"{rel_dir}/{name}"
            if name in TRACE_FILES and not (Path(where) / name).is_symlink():
                found.append(TrainingTrace(rel, f"{name}: written by a trainer"))
            elif name == "README.md" and (folder.root / rel).is_file():
                card = model_card(folder, rel)
                tags = sorted(TRAINING_CARD_TAGS & {t.lower() for t in card.card_tags})
                if tags or card.card_trained_with:
                    with_ = card.card_trained_with
                    found.append(
                        TrainingTrace(
                            rel,
                            "a model card"
                            + (f" tagged {', '.join(tags)}" if tags else "")
                            + (f", trained with {with_}" if with_ else ""),
                        )
                    )
    return found[:MAX_TRACES]


def _submission(
    artifact: ArtifactInfo, metrics: Metrics | None, at: datetime | None, *, published: bool = False
) -> Submission:
    """Return the one graded attempt: the final model, scored by the pipeline after the agent ended.

    The score is the accuracy in percent, as PostTrainBench's tables show it (and as task noise
    thresholds are written). A published copy never holds the model, so its score alone counts.
    """
    score = None if metrics is None or metrics.score is None else round(metrics.score * 100, 6)
    evidence = []
    if metrics is not None and metrics.values:
        excerpt = f"{json.dumps(metrics.values)[:200]} (score = accuracy × 100)"
        evidence.append(Evidence("file", path=METRICS, excerpt=excerpt))
    if not artifact.exists and not (published and score is not None):
        error = (
            f"{FINAL_MODEL}/ is not in this published copy, and no score was published"
            if published
            else f"{FINAL_MODEL}/ is missing: nothing was stored to grade"
        )
    elif metrics is None:
        error = f"{METRICS} is missing: the evaluation produced no score"
    elif score is None:
        error = metrics.placeholder or f"{METRICS} holds no accuracy"
    else:
        error = None
    return Submission(
        seq=1,
        status="scored" if error is None else "error",
        model_path=FINAL_MODEL,
        requested_at=at,
        score=score,
        error=error,
        artifact_path=FINAL_MODEL if artifact.exists else None,
        artifact_id=artifact.artifact_id,
        evidence=evidence,
    )
