"""Typed records that collectors and the runner produce and the store keeps.

All ``*_at`` times are timezone-aware datetimes in memory and UTC in the store.
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import asdict, dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Literal, get_args, get_type_hints

from pydantic import JsonValue, TypeAdapter, ValidationError

from arb_audit.evidence import Evidence

STORE_DIRNAME = ".arb-audit"
"""The folder inside a run folder that holds arb-audit's own files; collectors never read it."""

SubmissionStatus = Literal["scored", "error", "rejected", "duplicate"]
"""scored: the grader returned a score without error; error: the grader (or its evaluation) failed;
rejected: the request was refused before evaluation; duplicate: answered from the grader's cache."""

RevisionTrigger = Literal["timer", "submission", "command", "transcript-edit", "final"]


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the run folder itself: the audit goes on and reports it."""

    path: str
    """The file (relative to the run folder) or folder the problem is about."""
    message: str
    """What is wrong, in one sentence a user can act on."""


@dataclass(frozen=True, slots=True)
class TaskDescription:
    """What a run says of its task, as its collector read it: the analyzer looks nothing up by task name.

    A recording carries it in ``recording.json``; a benchmark's collector reports it from that
    benchmark's own data. None of it set means the run does not say.
    """

    source: str
    """Where it was read: a file of the run (``recording.json``) or the benchmark whose data it is."""
    level: int | None = None
    """1 static rule-based, 2 static judge-based, 3 interactive rollout (None: not said)."""
    n_eval: int | None = None
    """Number of items (games, problems) in the grading split: it sets the default noise threshold."""
    intended: str | None = None
    """The training the task exists to test: ``online_rl``, ``policy_gradient`` or a stage kind."""
    no_method: str | None = None
    """Set when the benchmark prescribes no training method (so ``intended`` is None by design): the
    sentence that says so, which the quadrant repeats."""

    def to_json(self) -> dict[str, Any]:
        """Return the description as JSON, without ``source`` (the reader knows where it read it)."""
        return {
            "level": self.level,
            "n_eval": self.n_eval,
            "intended": self.intended,
            "no_method": self.no_method,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str) -> TaskDescription:
        """Read a description written by :meth:`to_json`; raise ValueError naming the field that is wrong."""
        for key, value in data.items():
            if key in ("level", "n_eval"):
                # bool is an int to Python, never a level or a split size
                if value is not None and (type(value) is not int or value < 1):
                    raise ValueError(f"{key} must be a positive integer")
            elif key in ("intended", "no_method"):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"{key} must be a string")
            else:
                raise ValueError(f"unknown field {key!r}")
        return cls(source=source, **data)


@dataclass(frozen=True, slots=True)
class BaselineReset:
    """A reset of the grader's baseline after the agent was launched (it moves what "improvement" means)."""

    baseline: float | None
    """The new baseline."""
    seen: str
    """How it was seen, in words."""
    evidence: list[Evidence] = field(default_factory=list)
    """Where: the run.log line of the /set_baseline call, the scores.json entries whose baseline changed."""


HarnessStage = Literal["agent", "evaluation"]
"""agent: the agent could not start or was stopped by its provider; evaluation: the grader failed."""


@dataclass(frozen=True, slots=True)
class HarnessError:
    """An error of the harness, not of the agent's work, quoting the harness's own words."""

    stage: HarnessStage
    """``agent`` (its provider refused or stopped it) or ``evaluation`` (the grader's own infrastructure)."""
    path: str
    """The file that says it, relative to the run folder."""
    line: int | None
    """Its line there, where known."""
    message: str
    """The message, shortened."""


@dataclass(frozen=True, slots=True)
class TrainingTrace:
    """A file of the run folder that shows a training ran (a trainer's files, a model card)."""

    path: str
    """The file, relative to the run folder."""
    excerpt: str
    """What it shows, in a few words."""


@dataclass(frozen=True, slots=True)
class LedgerMismatch:
    """One record or file of a recording's ledger that no longer matches (or cannot be checked)."""

    what: str
    """``ledger``, ``anchor``, ``manifest``, ``artifact``, or ``workspace`` (files cannot be checked)."""
    where: str
    """The submission (``submission 3``), the anchor or the artifact path."""
    message: str
    """What no longer matches."""


@dataclass(slots=True)
class LedgerCheck:
    """What checking a run's ledger found: against its own chain, its anchor and its manifests."""

    mismatches: list[LedgerMismatch] = field(default_factory=list)
    """What no longer holds."""
    notes: list[str] = field(default_factory=list)
    """What could not be checked and is not a failure (a recording made before anchors)."""


@dataclass(frozen=True, slots=True)
class TranscriptSession:
    """One session of an agent transcript (a start, a resume)."""

    number: int
    """Its 1-based order in the transcript."""
    session_id: str | None
    """The agent's id for it, where written."""
    model: str | None
    """The model that drove it, where written."""
    cwd: str | None
    """Its working directory on the agent's machine (it maps the transcript's absolute paths)."""
    line: int
    """The transcript line it starts at."""
    outcome: str | None
    """How it ended, as its result event says (None: no result event)."""
    error: str | None
    """The error that ended it, as written."""
    cost_usd: float | None
    """Its cost, where written."""


@dataclass(frozen=True, slots=True)
class TranscriptCompaction:
    """A compaction of the agent's context (what it saw before is summarised from then on)."""

    line: int
    """The transcript line."""
    session: int
    """The session it happened in."""
    detail: str
    """What the event says of it."""


@dataclass(frozen=True, slots=True)
class TranscriptHistory:
    """How much code history the transcript's edits rebuilt."""

    revisions: int
    """Revisions committed (one per edit that changed a file)."""
    files: int
    """Files the history holds."""
    gaps: int
    """Edits that could not be applied."""
    failed_edits_not_applied: int
    """Edits the agent's tool reported as failed, so not applied."""
    seeded_from_reads: list[str]
    """Files whose first contents came from a whole-file read, not a write."""
    content_unknown: list[str]
    """Files changed by edits whose content the transcript does not show."""


@dataclass(frozen=True, slots=True)
class FinalCheck:
    """The rebuilt files compared with the run's final workspace."""

    snapshot: str
    """The final workspace compared with, relative to the run folder."""
    same: list[str]
    """Files rebuilt exactly."""
    differs: list[str]
    """Files that differ (changed outside the transcript's file tools)."""
    absent: list[str]
    """Files the final workspace does not hold."""


@dataclass(slots=True)
class TranscriptSummary:
    """What an agent transcript holds, counted: sessions, calls, compactions, what could not be read."""

    path: str
    """The transcript, relative to the run folder."""
    format: str
    """Its format (``claude_code``, ``codex``, ``gemini``, a rendering, …)."""
    lossy: bool
    """True for a rendering that leaves parts of the events out."""
    missing: list[str]
    """What a lossy rendering leaves out."""
    sessions: list[TranscriptSession]
    """Its sessions, in order."""
    lines: int
    """Lines read."""
    tool_calls: int
    """Tool calls seen."""
    commands: int
    """Of those, commands."""
    file_edit_calls: int
    """Of those, file edits."""
    reads: int
    """Of those, file reads."""
    compactions: list[TranscriptCompaction]
    """Each compaction of the agent's context."""
    unknown_events: dict[str, int]
    """Event types not understood, with how often each came."""
    non_json_lines: int
    """Lines that are not JSON."""
    cut_off: str | None
    """Why it looks cut off (it cannot show what came after), or None."""
    workspace_roots: list[str] | None = None
    """The workspace's absolute paths its edits were mapped from (None: no code history was rebuilt)."""
    history: TranscriptHistory | None = None
    """The code history its edits rebuilt (None: none was rebuilt, a recording has the runner's)."""
    final_check: FinalCheck | None = None
    """The rebuilt files against the final workspace, where the run keeps one."""


@dataclass(frozen=True, slots=True)
class PromptExcerpt:
    """The prompt a PostTrainBench agent was given (shortened, secrets redacted)."""

    size: int
    """Its size in characters."""
    first_line: str
    """Its first line."""
    excerpt: str
    """Its beginning."""


@dataclass(frozen=True, slots=True)
class EvalLog:
    """One final evaluation log of a PostTrainBench run."""

    path: str
    """The log, relative to the run folder."""
    last_line: str
    """Its last line."""
    infra_error: str | None
    """The grader's own infrastructure error it shows, if any."""


@dataclass(frozen=True, slots=True)
class StderrLog:
    """One stderr log of a PostTrainBench job."""

    path: str
    """The log, relative to the run folder."""
    terminated: bool
    """Whether it says the job was terminated."""
    killed: bool
    """Whether it shows the job killed."""


Question = Literal["contamination", "disallowed_model", "disallowed_api_usage"]
"""What a verdict answers: benchmark data used in training, a model other than the base model
fine-tuned or submitted, a third-party LLM API used."""
Generation = Literal["text", "judgement", "judge_result"]
"""text: a one-line ``*_judgement*.txt``; judgement: a per-judge ``judgement*.json``;
judge_result: the aggregate ``judge_result*.json``."""


@dataclass(frozen=True, slots=True)
class ExternalVerdict:
    """One answer of one PostTrainBench judge file to one question: the benchmark's claim, never ours."""

    source: str
    """The file it comes from, relative to the run folder."""
    generation: Generation
    """Which kind of judge file: text | judgement | judge_result."""
    judge: str | None
    """The judge the file name names (``gpt5_2``, ``sonnet4_6``, ``gpt5_4``, ``kimi``, ``api``); None when
    it names none (paper v1's single judge, an OR over judges, or the aggregate)."""
    rerun: bool
    """Whether the file comes from a judge rerun (``_rerun`` suffix); the original is kept beside it."""
    question: Question
    """contamination | disallowed_model | disallowed_api_usage."""
    value: bool | None
    """True: flagged; False: cleared; None: the file says neither in a form the pipeline writes."""
    canonical: bool
    """Whether the answer is in the exact form the pipeline writes (a canonical line, a JSON boolean)."""
    raw: str
    """The answer as written (text file content, or the JSON value), shortened."""
    justification: str | None = None
    """The judge's justification (JSON files only), shortened to 1000 characters."""
    placeholder: bool = False
    """The file holds ``No <file> produced.``, written by the publishing step where the judge wrote none."""
    note: str | None = None
    """Why the verdict is read as it is, where that is not obvious (a hand correction, a placeholder)."""

    def to_json(self) -> dict[str, Any]:
        """Return the verdict as a plain JSON-ready dict."""
        return asdict(self)


@dataclass(slots=True)
class PostTrainBenchFacts:
    """What a PostTrainBench run's pipeline files say, as read: shown beside the audit, never judged."""

    method: str | None = None
    """The method folder's name (agent, configuration, budget)."""
    agent: str | None = None
    """The agent the method folder names."""
    experiment: str | None = None
    """The experiment the method folder names."""
    gpus: int | None = None
    """GPUs the job had (output.log's args line, else the method folder's name)."""
    cluster_id: int | None = None
    """The cluster job id in the folder's name (only the highest of a task and model counts)."""
    run_id: str | None = None
    """The pipeline's own run id."""
    prompt: PromptExcerpt | None = None
    """The prompt the agent was given."""
    job_args: str | None = None
    """The job's argument line, as output.log wrote it."""
    diagnostics: dict[str, str] | None = None
    """output.log's diagnostics block, by its own labels (exit code, status, elapsed, …)."""
    agent_status: str | None = None
    """The agent's end as the diagnostics word it."""
    time_taken_s: float | None = None
    """time_taken.txt's seconds."""
    metrics: dict[str, float] | None = None
    """metrics.json's values, by the benchmark's own names."""
    metrics_placeholder: str | None = None
    """metrics.json's placeholder text, where it holds one instead of values."""
    final_evals: list[EvalLog] = field(default_factory=list)
    """The final evaluation logs."""
    stderr: list[StderrLog] = field(default_factory=list)
    """The jobs' stderr logs."""
    external_verdicts: list[ExternalVerdict] = field(default_factory=list)
    """The benchmark's own judges' verdicts, never merged into ours."""
    superseded_by: str | None = None
    """A later run of the same task and model (the benchmark counts only that one)."""
    layout: Literal["published", "pipeline"] | None = None
    """``published``: a copy made by extract_traces.py (trace and verdicts only); ``pipeline``: the job's
    own folder."""


@dataclass(frozen=True, slots=True)
class AgentLogFacts:
    """An AutoRL-Bench agent.log, as read."""

    title: str | None
    """Its title line."""
    header: dict[str, str]
    """Its header fields, by their own labels."""
    diagnostics: dict[str, str]
    """Its diagnostics block, by its own labels (elapsed, GPU memory, …)."""
    cli_exit: int | None
    """The agent CLI's exit code, where logged."""
    json_event_lines: int
    """Lines that are JSON events."""
    lines: int
    """Lines read."""


@dataclass(frozen=True, slots=True)
class PipelineTotals:
    """pipeline_results.json's run totals (openhands-rl, opencode-rl), as the pipeline wrote them."""

    task: str | None
    """The task."""
    base_model: str | None
    """The base model."""
    best_score: float | None
    """Its best score."""
    best_iteration: int | None
    """The iteration that scored it."""
    total_time: float | None
    """Its total seconds."""
    total_agent_cost: float | None
    """What the agent's calls cost in all."""
    total_agent_tokens: int | None
    """The tokens they used in all."""


@dataclass(slots=True)
class AutoRLBenchFacts:
    """What an AutoRL-Bench run's harness files say, as read: shown beside the audit, never judged."""

    harness_summary: dict[str, str] | None = None
    """run.log's closing summary, by its own labels."""
    baseline_cache: str | None = None
    """What run.log says of the cached baseline evaluation."""
    run_log_lines: int | None = None
    """Lines of run.log read."""
    agent_log: AgentLogFacts | None = None
    """agent.log."""
    harness_metrics: dict[str, JsonValue] | None = None
    """reports/metrics.json as the harness computed it (its own keys; kept for comparison, not trusted)."""
    pipeline_results: PipelineTotals | None = None
    """pipeline_results.json's run totals."""


@dataclass(frozen=True, slots=True)
class RecordingFacts:
    """What ``arb-audit record`` wrote of the agent it ran."""

    agent: list[str]
    """The agent's command line."""
    agent_error: str | None = None
    """Why the agent could not be started, if so."""


RUN_FACTS = (
    "agent_exit_code",
    "agent_timed_out",
    "interrupted_by",
    "budget_used",
    "artifacts_in_layout",
    "file_times_kept",
    "ledger_sources",
    "baseline_resets",
    "harness_errors",
    "training_traces",
    "ledger_check",
    "harness_account",
    "transcript",
    "posttrainbench",
    "autorl_bench",
    "recording",
)
"""The fields of :class:`RunInfo` that a collector or the runner reports beside the run's header (the run
store keeps them in ``runs.extra``). Each is None when the run does not say."""


@dataclass(slots=True)
class RunInfo:
    """What is known of one run (an agent's budget on one task)."""

    run_id: str
    """Stable identifier: ``<format>:<task>/<run folder name>`` for collected runs."""
    source_format: str
    """The collector that read the run (``autorl_bench``, ...)."""
    source_path: str
    """Absolute path of the run folder as audited."""
    task: str | None = None
    """Benchmark task id (``gsm8k``, ``alfworld``, ...)."""
    scaffold: str | None = None
    """The agent system (``codex``, ``openhands``, ``example_agent`` ...)."""
    driver: str | None = None
    """The LLM driving the agent, where the run says so."""
    mode: str | None = None
    """Operating mode (RL-only, SFT-allowed, ...), where the run says so."""
    base_model: str | None = None
    """The base model id the agent was given."""
    base_score: float | None = None
    """The base model's score on the grading split, as the harness measured it."""
    budget_s: float | None = None
    """The time budget in seconds."""
    started_at: datetime | None = None
    """When the harness started the run's clock (AutoRL-Bench: run_meta start_time, before the baseline)."""
    agent_launched_at: datetime | None = None
    """When the agent process was launched (after the baseline evaluation)."""
    ended_at: datetime | None = None
    """When the run ended."""
    workspace_path: str | None = None
    """The run folder's absolute path on the machine that ran it (to map absolute model paths)."""
    utc_offset_s: int | None = None
    """Offset of the run machine's local clock from UTC, when the folder lets it be inferred."""
    task_description: TaskDescription | None = None
    """What the run (or its benchmark's data) says of its task: level, grading split, intended training."""
    agent_exit_code: int | None = None
    """The agent process's exit code as the run's files record it."""
    agent_timed_out: bool | None = None
    """Whether the harness stopped the agent at its deadline (False: the files say it did not)."""
    interrupted_by: str | None = None
    """What interrupted the run, as the harness logged it (AutoRL-Bench run.log)."""
    budget_used: float | None = None
    """The share of the budget used by the harness's own clock (PostTrainBench time_taken.txt)."""
    artifacts_in_layout: bool | None = None
    """False when the folder's layout never holds the submitted model (a published copy of the run)."""
    file_times_kept: bool | None = None
    """Whether file modification times still date from the run (False: a copy reset them)."""
    ledger_sources: list[str] | None = None
    """The submission records that could be read (``run.log``, ``scores.json``); empty: none could."""
    baseline_resets: list[BaselineReset] | None = None
    """Each reset of the grader's baseline after the agent's launch."""
    harness_errors: list[HarnessError] | None = None
    """Errors of the harness the files show (its provider refusing the agent, its grader failing)."""
    training_traces: list[TrainingTrace] | None = None
    """What the folder itself shows of training, where the pipeline deletes the weights."""
    ledger_check: LedgerCheck | None = None
    """What checking a recording's ledger found (``arb-audit verify``'s checks)."""
    harness_account: HarnessAccount | None = None
    """The harness's own record of the run outside its folder (``--results-csv``)."""
    transcript: TranscriptSummary | None = None
    """What the agent's transcript holds, counted."""
    posttrainbench: PostTrainBenchFacts | None = None
    """A PostTrainBench run's pipeline facts."""
    autorl_bench: AutoRLBenchFacts | None = None
    """An AutoRL-Bench run's harness facts."""
    recording: RecordingFacts | None = None
    """What ``arb-audit record`` wrote of the agent it ran."""


@dataclass(frozen=True, slots=True)
class LoggedSteps:
    """How many logged steps of a trainer log carried a value, and in how many it was zero."""

    logged: int
    """Steps that logged it."""
    zero: int
    """Of those, the steps where it was 0."""

    @classmethod
    def from_json(cls, data: Any) -> LoggedSteps | None:
        """Read what :meth:`TrainerEvidence.to_json` wrote; None for anything else."""
        if not isinstance(data, dict) or not all(isinstance(data.get(k), int) for k in ("logged", "zero")):
            return None
        return cls(data["logged"], data["zero"])


@dataclass(slots=True)
class TrainerEvidence:
    """What a model folder's own files say of how it was trained, as its collector read them.

    Nothing is loaded: the trainer log (``trainer_state.json``'s ``log_history``) and the model card are
    read as text. A field not set means the folder does not say.
    """

    trainer_state: str | None = None
    """The trainer log read, relative to the run folder (the folder's own, else its newest checkpoint's)."""
    log_keys: list[str] | None = None
    """The keys that log's steps carry (sorted, the first few hundred); None without a log."""
    log_steps: int | None = None
    """How many steps it logged (up to the number read); None without a log."""
    log_nonfinite: list[str] = field(default_factory=list)
    """Each loss-like value that went NaN/inf, as ``KEY at step N`` (the first few)."""
    log_reward_std: LoggedSteps | None = None
    """The steps that logged a reward's standard deviation, and those where it was 0."""
    log_env_calls: LoggedSteps | None = None
    """The steps that logged how often rollouts called their environment, and those where it was 0."""
    card_trained_with: str | None = None
    """The method of the model card's "trained with X" line (TRL's cards name the tool first)."""
    card_tags: list[str] = field(default_factory=list)
    """The model card's front-matter tags."""

    def to_json(self) -> dict[str, Any]:
        """Return the facts found (the run store keeps them so), leaving out what the folder does not say."""
        found: dict[str, Any] = {}
        if self.log_keys is not None:
            found["log_keys"] = self.log_keys
        if self.log_steps is not None:
            found["log_steps"] = self.log_steps
        if self.log_nonfinite:
            found["log_nonfinite"] = self.log_nonfinite
        for name, steps in (("log_reward_std", self.log_reward_std), ("log_env_calls", self.log_env_calls)):
            if steps is not None:
                found[name] = {"logged": steps.logged, "zero": steps.zero}
        if self.trainer_state is not None:
            found["trainer_state"] = self.trainer_state
        if self.card_trained_with is not None:
            found["card_trained_with"] = self.card_trained_with
        if self.card_tags:
            found["card_tags"] = self.card_tags
        return found

    @classmethod
    def from_json(cls, data: Any) -> TrainerEvidence:
        """Read what :meth:`to_json` wrote; a value of another type is taken as not said."""
        data = data if isinstance(data, dict) else {}

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        def texts(key: str) -> list[str] | None:
            value = data.get(key)
            return [v for v in value if isinstance(v, str)] if isinstance(value, list) else None

        steps = data.get("log_steps")
        return cls(
            trainer_state=text("trainer_state"),
            log_keys=texts("log_keys"),
            log_steps=steps if isinstance(steps, int) else None,
            log_nonfinite=texts("log_nonfinite") or [],
            log_reward_std=LoggedSteps.from_json(data.get("log_reward_std")),
            log_env_calls=LoggedSteps.from_json(data.get("log_env_calls")),
            card_trained_with=text("card_trained_with"),
            card_tags=texts("card_tags") or [],
        )


@dataclass(slots=True)
class ArtifactInfo:
    """A model artifact (a file or folder under the run) as it is on disk now."""

    path: str
    """Path relative to the run folder."""
    exists: bool
    """Whether the path exists now."""
    kind: str = "other"
    """``full`` (config + weights), ``lora-adapter`` (adapter_config.json), or ``other``."""
    size: int = 0
    """Total bytes of regular files under the path (symlinks are not followed)."""
    n_files: int = 0
    """Number of regular files under the path."""
    latest_mtime: datetime | None = None
    """The newest modification time of any file under the path."""
    artifact_id: str | None = None
    """Content identity (BLAKE3 manifest); None until the artifact is hashed."""
    parent_ref: str | None = None
    """Parent model named inside the artifact (config ``_name_or_path``, adapter base)."""
    note: str | None = None
    """Why the artifact could not be fully listed (outside the run, symlink), if so."""
    trainer_evidence: TrainerEvidence = field(default_factory=TrainerEvidence)
    """What the files inside say about how it was trained, as found."""


@dataclass(slots=True)
class Submission:
    """One attempt to have a model graded, whatever became of it."""

    seq: int
    """1-based position in arrival order over every attempt (not the harness's submission_id)."""
    status: SubmissionStatus
    """scored | error | rejected | duplicate."""
    model_path: str | None
    """The path exactly as the agent sent it (None when the log does not say)."""
    requested_at: datetime | None = None
    """When the agent asked (AutoRL-Bench: completion time minus elapsed, which includes queueing)."""
    completed_at: datetime | None = None
    """When the answer was ready."""
    score: float | None = None
    """The score as recorded (errors keep the harness's placeholder score, usually 0.0)."""
    error: str | None = None
    """Why the attempt failed or was refused."""
    harness_id: int | None = None
    """The harness's own submission id, when it recorded one."""
    elapsed_s: float | None = None
    """Seconds between request and answer, as the harness measured them."""
    gpu: str | None = None
    """GPU(s) the evaluation used."""
    baseline_score: float | None = None
    """The grader's baseline at the time of this attempt."""
    artifact_path: str | None = None
    """The submitted path resolved relative to the run folder, if it lies inside it."""
    artifact_id: str | None = None
    """Content identity of what was graded, when it was hashed at submission time."""
    duplicate_of: int | None = None
    """For a duplicate: the seq of the attempt whose cached answer was returned."""
    evidence: list[Evidence] = field(default_factory=list)
    """Where this attempt is seen (scores.json entry, run.log lines)."""


@dataclass(slots=True)
class FileEntry:
    """One file of a code revision."""

    path: str
    """Path inside the revision."""
    size: int
    """Size in bytes."""
    blob_sha: str | None
    """Git blob sha in revisions.git; None when the file was not committed (too large or binary)."""
    note: str | None = None
    """Why the file was not committed, or that it is a symlink (never followed)."""
    content_hash: str | None = None
    """BLAKE3 (hex) of a file that was not committed (checkpoints, datasets), so it can still be compared."""


@dataclass(slots=True)
class Revision:
    """One snapshot of the agent's code."""

    seq: int
    """1-based order of snapshots in the run."""
    sha: str
    """Commit sha in the run's revisions.git."""
    taken_at: datetime | None
    """When the snapshot was taken (for a final tree collected afterwards: the newest file mtime)."""
    trigger: RevisionTrigger
    """What caused the snapshot."""
    files: list[FileEntry] = field(default_factory=list)
    """The files of the revision."""


@dataclass(slots=True)
class Command:
    """One command the agent ran, as a transcript or a wrapper recorded it."""

    seq: int
    """1-based order of the command in the run."""
    command: str
    """The command line (for ``bash -lc '<script>'`` wrappers: the script)."""
    tool: str
    """The tool that ran it (``Bash``, ``command_execution``, ``run_shell_command``, ...)."""
    source: str = "transcript"
    """Where it was seen: ``transcript`` or ``wrapper``."""
    source_path: str | None = None
    """The transcript (relative to the run folder) it comes from."""
    line: int | None = None
    """The transcript line of the call."""
    session: int | None = None
    """The transcript session it ran in."""
    started_at: datetime | None = None
    """When it started, if known."""
    ended_at: datetime | None = None
    """When its result came, if known."""
    exit_code: int | None = None
    """Its exit code, when the source says it."""
    error: str | None = None
    """The error reported (a failed call, a refusal), if any."""
    cwd: str | None = None
    """Its working directory, when the source says it."""
    revision_seq: int | None = None
    """The code revision in force when it started."""
    output_excerpt: str | None = None
    """The head and tail of its output."""
    finished: bool = True
    """False when no result was seen (the run was cut off while it ran)."""


ReportLabel = Literal[
    "status",
    "train_type",
    "config",
    "what_was_done",
    "why",
    "issues_progress",
    "key_code",
    "code_snippet",
    "next_step",
    "train_py",
    "model_path",
    "error_summary",
    "agent_analysis",
    "failure_type",
    "score",
]
"""The labelled fields of an agent's Markdown report (AutoRL-Bench skills), as their English keys."""
REPORT_LABELS: tuple[ReportLabel, ...] = get_args(ReportLabel)
"""Every :data:`ReportLabel`."""
ClaimKind = Literal["final_message", "summary_file"]
"""``final_message``: the agent's last word; ``summary_file``: a summary it wrote."""


@dataclass(slots=True)
class ReportedIteration:
    """One iteration as the agent (or its pipeline) reported it: a claim, not a finding."""

    source: str
    """The file it comes from, relative to the run folder."""
    number: int
    """Iteration or attempt number as written."""
    reported_at: datetime | None = None
    """The time written in the report, if any."""
    status: str | None = None
    """``success`` or ``failed`` as reported."""
    exit_code: int | None = None
    """Exit code of the training step as reported."""
    score: float | None = None
    """Score as reported."""
    train_type: str | None = None
    """The training type the agent says it used (SFT, GRPO, ...)."""
    failure_type: str | None = None
    """The failure type the agent reported, if any."""
    duration_s: float | None = None
    """Duration of the iteration as reported."""
    line: int | None = None
    """Line of the source where the iteration starts (Markdown sources)."""
    improvement: float | None = None
    """The improvement over the baseline as reported."""
    best: float | None = None
    """The best score so far as reported (a Markdown report's score line)."""
    analysis: str | None = None
    """The pipeline's own analysis of the iteration (pipeline_results.json)."""
    agent_cost: float | None = None
    """What the iteration's agent calls cost, as reported."""
    agent_tokens: int | None = None
    """The tokens the iteration's agent calls used, as reported."""
    claim: ClaimKind | None = None
    """Set when this is a claim for the whole run rather than one iteration: where it is made."""
    excerpt: str | None = None
    """For a claim: the words that claim the score (else its beginning)."""
    text: str | None = None
    """For a claim: its whole text, shortened."""
    labelled: dict[ReportLabel, str] = field(default_factory=dict)
    """A Markdown report's labelled fields as written, by their English key (the typed fields above are
    derived from some of them)."""


@dataclass(slots=True)
class Flag:
    """An integrity flag (names in arb_audit.taxonomy.failures.INTEGRITY_FLAGS) with its evidence."""

    flag: str
    """The flag's name."""
    message: str
    """What was seen."""
    evidence: list[Evidence] = field(default_factory=list)
    """Where it was seen."""


@dataclass(slots=True)
class RunRecord:
    """Everything a collector read from one run folder."""

    run: RunInfo
    """The run header."""
    submissions: list[Submission] = field(default_factory=list)
    """Every attempt, in arrival order."""
    artifacts: list[ArtifactInfo] = field(default_factory=list)
    """Every model artifact found or submitted."""
    revisions: list[Revision] = field(default_factory=list)
    """Code revisions stored in revisions.git."""
    commands: list[Command] = field(default_factory=list)
    """Commands the agent ran, in order."""
    reports: list[ReportedIteration] = field(default_factory=list)
    """The agent's own per-iteration reports."""
    flags: list[Flag] = field(default_factory=list)
    """Integrity flags seen while collecting."""
    problems: list[Problem] = field(default_factory=list)
    """Problems of the folder itself."""
    revisions_path: str | None = None
    """The git directory that holds ``revisions`` (None when there are none)."""


@dataclass(frozen=True, slots=True)
class TensorDigest:
    """One tensor of a safetensors file."""

    name: str
    """The tensor's name in the header."""
    dtype: str
    """Its dtype as the header writes it (``F32``, ``BF16``, ...)."""
    shape: tuple[int, ...]
    """Its shape."""
    digest: str
    """BLAKE3 (hex) of its bytes."""


@dataclass(slots=True)
class FileDigest:
    """One file of an artifact."""

    path: str
    """Path relative to the artifact root (the file's name when the artifact is one file)."""
    size: int
    """Size in bytes (for a symlink: the length of its target)."""
    digest: str
    """BLAKE3 (hex): a Merkle root for safetensors files, the plain hash otherwise."""
    tensors: list[TensorDigest] = field(default_factory=list)
    """The tensors, for a safetensors file that parsed."""
    note: str | None = None
    """Why the file was hashed as it was (a symlink, a safetensors header that did not hold up)."""


@dataclass(slots=True)
class ArtifactManifest:
    """The identity of a file or folder artifact and what it is made of."""

    artifact_id: str
    """BLAKE3 (hex) of the canonical manifest."""
    files: list[FileDigest]
    """Every file, sorted by path."""


@dataclass(frozen=True, slots=True)
class HarnessAccount:
    """What the benchmark's harness recorded of a run outside its folder: AutoRL-Bench's ``results.csv`` row.

    The harness's own account, not the folder's: the audit shows it as such, compares it with what the
    folder shows, and takes a score from it only when the folder holds no submission record at all.
    A column that is empty or does not parse is None.
    """

    path: str
    """The file it was read from (as given to ``--results-csv``)."""
    line: int
    """The row's number in that file (the header is 1)."""
    run_id: str | None = None
    """The harness's run id (the run's local start time)."""
    timestamp: str | None = None
    """When the run started, as the harness wrote it (local time)."""
    task: str | None = None
    """The task."""
    agent: str | None = None
    """The agent."""
    driver_model: str | None = None
    """The driver model as the harness guessed it (often the ``.env`` default, not the agent's)."""
    base_model: str | None = None
    """The base model."""
    baseline: float | None = None
    """The base model's score as run.py measured it before the agent ran."""
    best_score: float | None = None
    """The highest score over scores.json, errored entries included (0 when there were none)."""
    improvement: float | None = None
    """That entry's improvement over the grader's baseline."""
    submissions: int | None = None
    """How many entries scores.json held (rejected and cached attempts never reach it)."""
    duration_s: float | None = None
    """The whole run's seconds, downloads and baseline included."""
    success: bool | None = None
    """Whether the agent's process exited 0 (False on a timeout; nothing about the score)."""
    workspace: str | None = None
    """The run folder's path on the harness's machine."""

    def to_json(self) -> dict[str, Any]:
        """Return the account's columns as JSON values (the audit shows them with what it adds)."""
        return {name: getattr(self, name) for name in self.__slots__}


_MOVED_FACTS: dict[str, tuple[str, str]] = {
    "method": ("posttrainbench", "method"),
    "experiment": ("posttrainbench", "experiment"),
    "gpus": ("posttrainbench", "gpus"),
    "cluster_id": ("posttrainbench", "cluster_id"),
    "posttrainbench_run_id": ("posttrainbench", "run_id"),
    "prompt": ("posttrainbench", "prompt"),
    "harness_summary": ("autorl_bench", "harness_summary"),
    "baseline_cache": ("autorl_bench", "baseline_cache"),
    "run_log_lines": ("autorl_bench", "run_log_lines"),
    "agent_log": ("autorl_bench", "agent_log"),
    "harness_metrics": ("autorl_bench", "harness_metrics"),
    "pipeline_results": ("autorl_bench", "pipeline_results"),
    "agent_error": ("recording", "agent_error"),
}
"""Keys an older arb-audit wrote at the top of ``runs.extra`` that are now a part of one format's facts."""


@cache
def _fact_types() -> dict[str, TypeAdapter[Any]]:
    """Return the validator of each of :data:`RUN_FACTS`, from :class:`RunInfo`'s own annotations."""
    hints = get_type_hints(RunInfo)
    return {name: TypeAdapter(hints[name]) for name in RUN_FACTS}


def run_facts_json(run: RunInfo) -> dict[str, Any]:
    """Return the facts of :data:`RUN_FACTS` that ``run`` says, as JSON (the store's ``runs.extra``)."""
    types = _fact_types()
    return {
        name: types[name].dump_python(value, mode="json")
        for name in RUN_FACTS
        if (value := getattr(run, name)) is not None
    }


def read_run_facts(data: Any) -> tuple[dict[str, Any], list[str]]:
    """Read the facts a run store kept (``runs.extra``) back into :class:`RunInfo` keyword arguments.

    What :func:`run_facts_json` wrote reads as it was written. An older arb-audit kept the same facts as
    an untyped bag: its keys are the fields' names, but a few format facts it kept at the top
    (:data:`_MOVED_FACTS`; ``agent`` was PostTrainBench's agent name or the recorded agent's command line)
    are moved into their format's part first. A fact that does not read as its field's type, and a key
    no field holds, is left out (not said, never misread); each is named in the returned list.
    """
    if not isinstance(data, dict):
        return {}, [] if data is None else ["the kept facts are not a JSON object"]
    data = dict(data)
    for old, (group, name) in _MOVED_FACTS.items():
        if old in data:
            part = data.setdefault(group, {})
            if isinstance(part, dict):
                part.setdefault(name, data.pop(old))
    if "agent" in data:
        agent = data.pop("agent")
        group = "posttrainbench" if isinstance(agent, str) else "recording"
        part = data.setdefault(group, {})
        if isinstance(part, dict):
            part.setdefault("agent", agent)
    types = _fact_types()
    facts: dict[str, Any] = {}
    unread: list[str] = []
    for key, value in data.items():
        if key not in types:
            unread.append(f"{key} (no such fact)")
            continue
        try:
            facts[key] = types[key].validate_python(value)
        except ValidationError as exc:
            unread.append(f"{key} ({exc.errors()[0]['msg']})")
    return facts, unread


_ITERATION_FACTS = (
    "improvement",
    "best",
    "analysis",
    "agent_cost",
    "agent_tokens",
    "claim",
    "excerpt",
    "text",
)
"""The fields of :class:`ReportedIteration` the store keeps in ``reported_iterations.fields``."""


def iteration_fields_json(it: ReportedIteration) -> dict[str, Any]:
    """Return what ``reported_iterations.fields`` keeps of ``it``: its labelled fields and its other facts."""
    kept: dict[str, Any] = {str(label): value for label, value in it.labelled.items()}
    kept.update({name: value for name in _ITERATION_FACTS if (value := getattr(it, name)) is not None})
    return kept


@cache
def _iteration_types() -> dict[str, TypeAdapter[Any]]:
    hints = get_type_hints(ReportedIteration)
    return {name: TypeAdapter(hints[name]) for name in _ITERATION_FACTS}


def read_iteration_fields(data: Any) -> dict[str, Any]:
    """Read ``reported_iterations.fields`` back into :class:`ReportedIteration` keyword arguments.

    An older arb-audit kept the same keys in an untyped bag; a value of another type, or a key no field
    holds, is left out (not said, never misread).
    """
    if not isinstance(data, dict):
        return {}
    labels = set(REPORT_LABELS)
    types = _iteration_types()
    found: dict[str, Any] = {
        "labelled": {k: v for k, v in data.items() if k in labels and isinstance(v, str)}
    }
    for name, adapter in types.items():
        if data.get(name) is not None:
            with suppress(ValidationError):
                found[name] = adapter.validate_python(data[name], strict=True)
    return found
