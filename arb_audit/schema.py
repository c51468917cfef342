"""The audit of one run as one typed, versioned record: :class:`AuditReport` and its parts.

This is the contract between the rooms and with users: the analyzer's builder returns an
``AuditReport``; ``arb-audit RUN_DIR --json`` prints its serialisation; the run store keeps it and
reads it back through the same model; ``arb-audit schema`` prints its JSON Schema, whose descriptions are
the field docstrings below. ``SCHEMA_VERSION`` changes whenever a field is added, removed or changes
meaning.

A record of another version is never read as this one, and never upgraded: a version changes when
a field's meaning does, and the new meaning can only be had from the run itself. So the rule is one:
**a record of another version is audited anew.** ``AuditReport`` refuses any other
``schema_version`` when it validates, and every reader acts on that refusal:

- a run store's kept audit (:mod:`arb_audit.audit_cache`) is not read back: ``arb-audit RUN_DIR`` and
  :func:`arb_audit.audit` audit the run again and keep the new record in its place;
- a study row (``study_runs.report``) is audited anew by the next ``arb-audit ingest`` even when its
  run folder is unchanged (:func:`arb_audit.study.fingerprints`); until then the reviewer's desk shows
  it as a problem naming its version, and :func:`arb_audit.study.load_study`, which the paper tables,
  the figures, the data tables and the site read a study through, reads it as a run not audited
  (its ``error`` names the version, its headline columns are empty): the tables count it so, the
  figures, the data tables (``arb-audit export``) and the site's pages leave it out, and each says so.

pydantic v2, not msgspec, measured in ``benchmarks/bench_schema.py``: for a 150-submission run both
validate and serialise in a few milliseconds (msgspec is ~4x faster, pydantic ~1.5x the cost of
``json.loads``), and importing pydantic with the classes costs ~0.1 s more than msgspec; neither is
where an audit's time goes. pydantic turns each field's docstring into the JSON Schema's description
(``use_attribute_docstrings``), which msgspec cannot, and it is what inspect_ai's log, the anchor for
this schema, is written in.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from arb_audit import model
from arb_audit.evidence import Evidence as EvidencePointer
from arb_audit.taxonomy.failures import FailureMode, IntegrityFlag, QuadrantCell
from arb_audit.taxonomy.routes import RouteLabel, StageKind
from arb_audit.taxonomy.strength import Strength

SCHEMA_VERSION = 5
"""The version of the audit's schema; bumped on any change to a field's presence or meaning."""


class Part(BaseModel):
    """Base of every part: unknown keys are refused, each field's docstring is its description."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    def to_json(self) -> dict[str, Any]:
        """Return the part as JSON-ready Python values (as ``--json`` prints it)."""
        data: dict[str, Any] = self.model_dump(mode="json")
        return data


Evidence: TypeAlias = Annotated[EvidencePointer, PlainSerializer(lambda pointer: pointer.to_json())]
"""An evidence pointer: :class:`arb_audit.evidence.Evidence`, the one definition collectors, the store and
the analyzer use, validated and described from its own fields and docstrings. A run can cite 100,000s of
lines, so its JSON leaves empty fields out (``Evidence.to_json``). The serializer is a lambda without a
return type on purpose: so the serialisation JSON Schema describes the pointer's fields, not "an object"."""


class HarnessAccount(Part):
    """What the benchmark's harness recorded of the run outside its folder (AutoRL-Bench's results.csv row).

    The harness's word, not the folder's: shown beside it, with where the two disagree.
    """

    path: str
    """The file it was read from."""
    line: int
    """The row's number in that file (the header is 1)."""
    run_id: str | None
    """The harness's run id."""
    timestamp: str | None
    """When the run started, as the harness wrote it (local time)."""
    task: str | None
    """The task."""
    agent: str | None
    """The agent."""
    driver_model: str | None
    """The driver model as the harness guessed it."""
    base_model: str | None
    """The base model."""
    baseline: float | None
    """The base score run.py measured before the agent ran."""
    best_score: float | None
    """The highest score over scores.json, errored entries included (0 when none)."""
    improvement: float | None
    """That entry's improvement."""
    submissions: int | None
    """How many entries scores.json held."""
    duration_s: float | None
    """The whole run's seconds."""
    success: bool | None
    """Whether the agent's process exited 0 (False on a timeout)."""
    workspace: str | None
    """The run folder on the harness's machine."""
    disagreements: list[str]
    """Each place where the row and the run folder tell different things."""
    used_for: list[str]
    """What the audit took from the row, because the folder holds no record of it."""


class Run(Part):
    """What the run is: its identity, task, agent, base model, budget and clock, and what its files say.

    Beside the header: how the agent ended, the transcript counted, a format's own facts, each null
    where the run's files do not say. The facts after ``harness_account`` are the collectors' records
    (:mod:`arb_audit.model`), the one definition the run store keeps too.
    """

    run_id: str
    """Unique id of the run in its store (and in a study)."""
    format: str
    """The collector that read it (``autorl_bench``, ``posttrainbench``, ``recorded``, …)."""
    source_path: str
    """The run folder as given."""
    task: str | None
    """The benchmark task."""
    level: int | None
    """The task's level where the benchmark defines one (AutoRL-Bench: 1–3)."""
    scaffold: str | None
    """The agent (Claude Code, Codex, …)."""
    driver: str | None
    """The model driving the agent, where known."""
    mode: str | None
    """The benchmark's mode for the run, where it has one."""
    base_model: str | None
    """The model the agent was given to improve."""
    base_score: float | None
    """The base model's score on the task, where known."""
    budget_s: float | None
    """The time budget in seconds."""
    started_at: str | None
    """When the run started (ISO 8601 in the run machine's offset)."""
    agent_launched_at: str | None
    """When the agent was launched (after the baseline evaluation, where the harness does that first)."""
    ended_at: str | None
    """When the run ended."""
    workspace_path: str | None
    """The agent's workspace where the run says it was."""
    utc_offset_s: int | None
    """The run machine's UTC offset in seconds (null: unknown, times are UTC)."""
    store_path: str | None
    """The run store this audit was written to."""
    revisions_path: str | None
    """The git directory holding the run's code revisions."""
    analyzer_version: str
    """The version of the analyzer that made the audit."""
    harness_account: HarnessAccount | None = None
    """The benchmark harness's own record of the run (AutoRL-Bench's results.csv row, given with
    ``--results-csv``), compared with the folder; null when none was given."""
    agent_exit_code: int | None = None
    """The agent process's exit code as the run's files record it."""
    agent_timed_out: bool | None = None
    """Whether the harness stopped the agent at its deadline (false: the files say it did not)."""
    interrupted_by: str | None = None
    """What interrupted the run, as the harness logged it (AutoRL-Bench run.log)."""
    budget_used: float | None = None
    """The share of the budget used by the harness's own clock (PostTrainBench time_taken.txt)."""
    artifacts_in_layout: bool | None = None
    """False when the folder's layout never holds the submitted model (a published copy of the run)."""
    file_times_kept: bool | None = None
    """Whether file modification times still date from the run (false: a copy reset them)."""
    ledger_sources: list[str] | None = None
    """The submission records that could be read (``run.log``, ``scores.json``); empty: none could."""
    baseline_resets: list[model.BaselineReset] | None = None
    """Each reset of the grader's baseline after the agent's launch."""
    harness_errors: list[model.HarnessError] | None = None
    """Errors of the harness the files show (its provider refusing the agent, its grader failing)."""
    training_traces: list[model.TrainingTrace] | None = None
    """What the folder itself shows of training, where the pipeline deletes the weights."""
    ledger_check: model.LedgerCheck | None = None
    """What checking a recording's ledger found (``arb-audit verify``'s checks)."""
    transcript: model.TranscriptSummary | None = None
    """What the agent's transcript holds, counted."""
    posttrainbench: model.PostTrainBenchFacts | None = None
    """A PostTrainBench run's pipeline facts, as read (its judges' verdicts are the benchmark's own)."""
    autorl_bench: model.AutoRLBenchFacts | None = None
    """An AutoRL-Bench run's harness facts, as read."""
    recording: model.RecordingFacts | None = None
    """What ``arb-audit record`` wrote of the agent it ran."""


class Submission(Part):
    """One attempt at the grading API, in arrival order."""

    seq: int
    """Ledger sequence number (1-based)."""
    status: Literal["scored", "error", "rejected", "duplicate"]
    """``scored``: graded without error; ``error``: evaluation failed; ``rejected``: refused before
    evaluation; ``duplicate``: answered from the grader's cache."""
    score: float | None
    """The score, for a scored attempt."""
    requested_at: str | None
    """When the attempt was asked for."""
    completed_at: str | None
    """When its answer came."""
    model_path: str | None
    """The model path as the agent sent it."""
    artifact_id: str | None
    """Content id of the graded artifact (BLAKE3 manifest root), where it was hashed."""
    artifact_path: str | None
    """The model path resolved in the run folder."""
    harness_id: int | None
    """The harness's own number for the attempt, where it has one."""
    error: str | None
    """What went wrong, for an error or a refusal."""
    elapsed_s: float | None
    """Evaluation time in seconds."""
    gpu: str | None
    """The GPU the agent asked for."""
    baseline_score: float | None
    """The baseline the harness reported with this attempt."""
    duplicate_of: int | None
    """For a duplicate: the attempt it repeats."""
    evidence: list[Evidence]
    """Where the attempt is recorded."""


class Best(Part):
    """The best valid submission: the highest score, the first graded on ties."""

    seq: int
    """Its ledger sequence number."""
    score: float | None
    """Its score."""
    model_path: str | None
    """The model path as sent."""
    artifact_path: str | None
    """The model path resolved in the run folder."""
    artifact_id: str | None
    """Content id of the artifact, where hashed."""
    completed_at: str | None
    """When it was graded."""
    improvement: float | None
    """Its score minus the base score."""


class Metrics(Part):
    """Process metrics, recomputed from the full attempt ledger (``arb_audit.analyzer.metrics``)."""

    n_submissions: int
    """Every attempt: scored, error, rejected and duplicate."""
    n_scored: int
    """Attempts graded without error (the valid ones)."""
    n_errors: int
    """Attempts whose evaluation failed or crashed."""
    n_rejected: int
    """Requests refused before evaluation."""
    n_duplicates: int
    """Requests answered from the grader's cache."""
    n_zero_score: int
    """Valid attempts that scored exactly 0 (kept apart from errors)."""
    valid_rate: float | None
    """n_scored / n_submissions; null without attempts."""
    time_to_first_valid_s: float | None
    """Seconds from the clock origin to the completion of the first valid attempt."""
    time_to_best_s: float | None
    """Seconds from the clock origin to the completion of the best valid attempt."""
    clock_origin: str | None
    """``agent_launch`` or, when the launch is unknown, ``run_start`` (which includes the baseline)."""
    time_used_ratio: float | None
    """(end − start) / budget."""
    best_improvement: float | None
    """Best valid score minus the base score."""


class TensorChange(Part):
    """One tensor's relative change against the parent's."""

    tensor: str
    """The tensor's name."""
    rel_change: float | None
    """‖child − parent‖ / ‖parent‖; null when not finite (an all-zero parent, NaN)."""


class WeightChange(Part):
    """How a stage's tensors differ from its parent's (weight forensics), when both were at hand.

    When the comparison itself failed only ``problems`` is present: the other fields are left out, as
    nothing was compared.
    """

    compared: int | None = None
    """Tensors present in both and compared."""
    identical: int | None = None
    """Tensors whose bytes are equal."""
    changed: int | None = None
    """Tensors that differ."""
    max_rel_change: float | None = None
    """The largest finite relative change."""
    mean_rel_change: float | None = None
    """The mean finite relative change."""
    most_changed: list[TensorChange] | None = None
    """The tensors that changed most, largest first."""
    missing: list[str] | None = None
    """Tensors of the parent the child lacks (first few)."""
    added: list[str] | None = None
    """Tensors the child adds (first few)."""
    retyped: list[str] | None = None
    """Tensors whose dtype or shape changed (first few)."""
    config_changes: list[str] | None = None
    """Non-weight files that differ (config, chat template, tokenizer)."""
    lora_modules: int | None = None
    """LoRA modules found in an adapter."""
    weights_identical: bool | None = None
    """Every compared tensor is equal: the stage trained nothing."""
    problems: list[str]
    """Model files that could not be read, or why the comparison failed."""

    @model_serializer(mode="wrap")
    def _as_given(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # a failed comparison says only why: fields never set are not printed as nulls
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}


class Stage(Part):
    """One step of a lineage: a stage that turned its parent model into ``artifact``."""

    kind: StageKind
    """Stage kind (TAXONOMY.md: sft, dpo, grpo, ppo, reward_model, merge, copy, config_only, unknown)."""
    label: RouteLabel | None
    """Its route label (SFT, GRPO, ONLINE_RL, …); null for copies and non-weight changes."""
    variant: str | None
    """Algorithm variant, where known (dpo, kto, rloo, dapo, …)."""
    interactive: bool | None
    """Multi-turn rollouts in an environment or with tools produced its samples."""
    on_policy: bool | None
    """Its samples come from the current policy."""
    adapter: str | None
    """``lora`` / ``qlora`` when an adapter was trained."""
    artifact: str
    """The model this stage produced (path in the run folder, or a model id). A path the lineage holds in
    two versions names the older ``PATH@N``, N the command that made it (0: before any command)."""
    parent: str | None
    """The model it started from (as ``artifact`` names it)."""
    parents: list[str]
    """Every model it started from: ``parent`` first, then the other models a merge combined."""
    strength: Strength
    """How strongly the evidence shows the stage: ``verified`` (the artifact's weights or trainer log
    agree with its code), ``supported`` (its code was run by the command that produced the artifact),
    ``weak`` (one indirect sign), ``conflicting``, ``none`` (arb_audit.taxonomy.strength)."""
    conflicts: list[str]
    """Evidence that says otherwise, in words."""
    weights: WeightChange | None
    """How its tensors differ from its parent's, when both were at hand."""
    evidence: list[Evidence]
    """Where the stage is seen: code at a revision, the command that ran it, its logs."""


class AgentClaim(Part):
    """What the agent itself reported it trained (unverified)."""

    train_type: str
    """The training it named."""
    iterations: list[int]
    """The iterations it named it in."""


class ScoreClaim(Part):
    """A score the agent claims (its last message, a summary it wrote), set against the measured one."""

    source: str
    """The file that claims it (the transcript, or a summary relative to the run folder)."""
    line: int | None
    """Its line there."""
    kind: model.ClaimKind
    """``final_message``: the agent's last word; ``summary_file``: a summary it wrote."""
    claimed: float
    """The score claimed, in percent (a fraction such as 0.68 is read as 68)."""
    measured: float | None
    """The best valid score the benchmark measured; null when none was."""
    agrees: bool | None
    """Whether the two agree within the tolerance the analyzer states; null when nothing was measured."""
    excerpt: str
    """The words of the claim."""


class RouteEvidence(Part):
    """Evidence per route label: the code that was run, and the code only written."""

    attempted: dict[str, list[Evidence]]
    """Per label: the code a command ran."""
    written: dict[str, list[Evidence]]
    """Per label: code written but never run."""


class Route(Part):
    """How the best submission was made: its lineage from the base model, and the routes tried."""

    status: Literal["analyzed", "not_analyzed"]
    """``analyzed`` when the run has code revisions to read."""
    best_label: RouteLabel | None
    """The route label of the best submission's lineage (SFT, COMPOSITE, NO_TRAINING, …)."""
    chain: list[Stage] | None
    """The best submission's lineage, base first."""
    chain_text: str | None
    """The chain in words: ``SFT→GRPO(online)``."""
    attempted: list[RouteLabel]
    """Labels whose code a command ran."""
    attempted_complete: bool | None = None
    """Whether every script a command ran was read: False when one could not be classified (it may
    have run a stage missing from ``attempted``: ``cannot_tell`` names it); null without code."""
    written: list[RouteLabel]
    """Labels whose code was only written."""
    adopted: list[RouteLabel]
    """Labels in the best submission's lineage."""
    strength: Strength | None = None
    """The weakest evidence level of the chain's steps: what the route as a whole rests on."""
    strength_reason: str | None = None
    """Why the route has that level: its weakest step, what the level means, what that step's evidence
    disagrees on."""
    evidence: RouteEvidence | None = None
    """The evidence per attempted and written label."""
    lineage: dict[str, list[Stage]] | None = None
    """Per scored artifact path: its lineage, base first."""
    submission_lineages: dict[str, list[Stage]] | None = None
    """Per submission (its seq) of a path retrained since: the lineage it had when it was graded."""
    weights_available: bool | None = None
    """Whether weight forensics could run (torch installed)."""
    can_tell: list[str]
    """What this run's files let the audit tell."""
    cannot_tell: list[str]
    """What they do not, and why."""
    agent_claims: list[AgentClaim]
    """What the agent reported it trained, unverified."""
    score_claims: list[ScoreClaim] = []
    """The scores the agent claims in its last message and its summaries, unverified, each against the
    measured score: a claim that disagrees is shown, never believed."""
    code_revision: str | None
    """The last code revision's sha."""


class Failure(Part):
    """The run's first failure and what followed, decided only from the run's own files."""

    mode: FailureMode | None
    """A TAXONOMY.md failure mode (``none`` when the score rose with no failure); null when undetermined."""
    determined: bool
    """Whether the run's files show the mode; false means the reason says what is missing."""
    reason: str
    """Why, in words."""
    evidence: list[Evidence]
    """The commands, logs or submissions that show it."""
    downstream: list[FailureMode]
    """Effects after the first failure (e.g. ``timeout_no_submission``)."""
    definition: str | None
    """The mode's definition."""


class Flag(Part):
    """An integrity flag (TAXONOMY.md), independent of route and failure."""

    flag: IntegrityFlag
    """Its name (``artifact_overwritten``, ``grader_probing``, ``evaluator_tampering``, …)."""
    definition: str
    """What the flag means."""
    message: str
    """What was seen."""
    evidence: list[Evidence]
    """Where."""


class Quadrant(Part):
    """Whether "score went up" coincided with "the intended training happened"."""

    score_up: bool | None
    """best − base > noise threshold; null when either is unknown."""
    intended: bool | None
    """The best lineage holds the intended stage, each such step ``verified`` or ``supported``; null when
    the evidence is weaker or missing."""
    intended_stage: str | None
    """The stage the task exists to test (``online_rl``, ``policy_gradient`` or a kind)."""
    cell: QuadrantCell | None
    """``score_up+intended``, ``score_up+not_intended``, ``no_gain+intended``, ``no_gain+not_intended``."""
    noise_threshold: float | None
    """The score change within which a difference is noise."""
    reason: str
    """Why, in words."""
    evidence: list[Evidence]
    """The best submission against the base, and the lineage steps that decide ``intended``."""


class Artifact(Part):
    """A model folder or file found in the run."""

    path: str
    """Its path in the run folder."""
    exists: bool
    """Whether it is there now."""
    kind: str
    """``full``, ``lora-adapter`` or ``other``."""
    size: int
    """Bytes."""
    n_files: int
    """Files in it."""
    latest_mtime: str | None
    """Its newest file's modification time."""
    artifact_id: str | None
    """Content id, with ``--hash-artifacts``."""
    parent_ref: str | None
    """The parent model its config names."""
    note: str | None
    """What could not be read."""


class AgentReport(Part):
    """One of the agent's own per-iteration reports (AutoRL-Bench pipelines)."""

    source: str
    """The file it came from."""
    number: int
    """The iteration."""
    reported_at: str | None
    """When."""
    status: str | None
    """Its status."""
    exit_code: int | None
    """The exit code it reported."""
    score: float | None
    """The score it reported."""
    train_type: str | None
    """The training it named."""
    failure_type: str | None
    """The failure it named."""
    duration_s: float | None
    """Seconds."""
    line: int | None
    """Its line in the source file."""


class Revision(Part):
    """A code revision of the run (in ``run.revisions_path``)."""

    seq: int
    """Its sequence number."""
    sha: str
    """Its commit sha."""
    trigger: str
    """What made it: ``transcript-edit``, ``final``, or the runner's ``timer``/``submission``/``command``."""
    taken_at: str | None
    """When."""
    files: list[str]
    """Files changed against the revision before (all files for the first)."""
    n_files: int
    """Files in the revision."""


class Command(Part):
    """A command the agent ran."""

    seq: int
    """Its sequence number."""
    command: str
    """The command line."""
    started_at: str | None
    """When it started."""
    ended_at: str | None
    """When it ended."""
    exit_code: int | None
    """Its exit code."""
    error: str | None
    """The error its tool reported."""
    finished: bool
    """False when no result came."""
    tool: str | None
    """The agent's tool that ran it."""
    cwd: str | None
    """Its working folder."""
    revision_seq: int | None
    """The code revision in force when it started."""
    output_excerpt: str | None
    """The head and tail of its output."""
    evidence: Evidence
    """Its place in the transcript."""


class Problem(Part):
    """Something in the run folder that could not be read, named by its file."""

    path: str
    """Relative to the run folder."""
    message: str
    """What is wrong."""


class AuditReport(Part):
    """The audit of one run: what was submitted, how the best submission was made, what failed."""

    schema_version: int = SCHEMA_VERSION
    """The version of this schema the record follows."""

    @field_validator("schema_version")
    @classmethod
    def _this_version(cls, version: int) -> int:
        # a record of another version is never read as this one: its fields may mean other things
        if version != SCHEMA_VERSION:
            raise ValueError(
                f"an audit of schema version {version}, not {SCHEMA_VERSION}: audit the run again"
            )
        return version

    run: Run
    """The run."""
    submissions: list[Submission]
    """Every attempt, in arrival order."""
    best: Best | None
    """The best valid submission, or null."""
    metrics: Metrics
    """Process metrics."""
    route: Route
    """The route analysis."""
    failure: Failure
    """The first failure and its downstream effects."""
    flags: list[Flag]
    """Integrity flags."""
    quadrant: Quadrant
    """Score up × intended training."""
    artifacts: list[Artifact]
    """The model folders seen."""
    reports: list[AgentReport]
    """The agent's per-iteration self-reports."""
    revisions: list[Revision]
    """Every code revision."""
    commands: list[Command]
    """Every command the agent ran."""
    problems: list[Problem]
    """What could not be read."""

    def to_json_text(self) -> str:
        """Return the record's JSON text (one line, UTF-8 kept), as ``arb-audit RUN_DIR --json`` prints it."""
        return self.model_dump_json()


class DroppedRun(Part):
    """A run folder of a tree that does not count under the benchmark's own rules."""

    path: str
    """The run folder."""
    reason: str
    """Why it does not count."""


class AuditTree(Part):
    """The audits of a tree of runs (a PostTrainBench results folder), reported together."""

    schema_version: int = SCHEMA_VERSION
    """The version of this schema the record follows."""
    tree: str
    """The folder audited."""
    format: str
    """The collector that listed its runs."""
    runs: list[AuditReport]
    """The audit of each run that counts."""
    failed: list[Problem]
    """Runs that could not be audited, each with why."""
    dropped: list[DroppedRun]
    """Runs that do not count."""
    problems: list[Problem]
    """What could not be listed."""

    def to_json_text(self) -> str:
        """Return the JSON text ``arb-audit TREE --json`` prints."""
        return self.model_dump_json()


def json_schema(tree: bool = False) -> dict[str, Any]:
    """Return the JSON Schema of :class:`AuditReport` (of :class:`AuditTree` with ``tree``)."""
    model = AuditTree if tree else AuditReport
    schema: dict[str, Any] = model.model_json_schema(mode="serialization")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"urn:arb-audit:{'audit-tree' if tree else 'audit-report'}:v{SCHEMA_VERSION}"
    return schema
