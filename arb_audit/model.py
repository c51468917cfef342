"""Typed records that collectors and the runner produce and the store keeps.

All ``*_at`` times are timezone-aware datetimes in memory and UTC in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

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
    extra: dict[str, Any] = field(default_factory=dict)
    """Everything else the sources say about the run (diagnostics, harness metrics, results.csv row)."""


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
    fields: dict[str, Any] = field(default_factory=dict)
    """Every other labelled field, keyed by its English label."""


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
        """Return the account as JSON values (the run record keeps it so)."""
        return {name: getattr(self, name) for name in self.__slots__}

    @classmethod
    def from_json(cls, data: Any) -> HarnessAccount | None:
        """Read an account written by :meth:`to_json`; None for anything else."""
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return None
        if not isinstance(data.get("line"), int):
            return None
        return cls(**{k: v for k, v in data.items() if k in cls.__slots__})
