"""Routes of a run: stages written, attempted (their code ran) and adopted (in the best artifact's lineage).

Static evidence is the analyzer's classification of each code file at the revision a command ran it;
dynamic evidence is what the artifact's own files say (trainer logs, model card) and the commands that
copied it. Each stage claim carries its evidence; where evidence is missing or conflicts, the lineage
says so with a weaker evidence level instead of guessing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING, cast

from arb_audit import schema
from arb_audit.analyzer.classify import Classification, Stage
from arb_audit.analyzer.launchers import chosen_route
from arb_audit.analyzer.path_versions import END, Moment, PathVersions, Write, same_path
from arb_audit.analyzer.scripts_run import MAX_SEGMENT_CHARS, ScriptRun
from arb_audit.analyzer.shell_words import shell_words
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import ArtifactInfo, Command, Revision, RunRecord, Submission
from arb_audit.taxonomy.routes import KIND_LABELS, label_of, lineage_label
from arb_audit.taxonomy.strength import STRENGTHS, Strength, weakest
from arb_audit.taxonomy.trainer_logs import kind_from_card, kind_from_log_keys

if TYPE_CHECKING:
    from arb_audit.taxonomy.routes import RouteLabel, StageKind

ROUTE_KINDS = KIND_LABELS
"""Stage kinds that are routes of their own (the taxonomy's definition, under the name callers use)."""
MAX_DEPTH = 8
"""Longest line of ancestors followed (a cycle of copies must end)."""
MAX_STEPS = 32
"""Most steps in one lineage (merges of merges branch out)."""


def chain_name(kind: str, variant: str | None, interactive: bool | None) -> str:
    """Return a stage as a chain shows it: ``SFT``, ``GRPO(online)``, ``DPO(orpo)``."""
    name = kind.upper() if kind in ROUTE_KINDS else kind
    details = [
        v for v in (variant if variant and variant != kind else None, "online" if interactive else None) if v
    ]
    return f"{name}({', '.join(details)})" if details else name


@dataclass(slots=True)
class StageStep:
    """One stage of a lineage: what turned the parent into this model."""

    kind: str
    """Stage kind (sft, grpo, copy, unknown, ...)."""
    artifact: str
    """The model this stage produced (path in the run folder, or a model id)."""
    parent: str | None
    """The model it started from."""
    variant: str | None = None
    """Algorithm variant, where known."""
    interactive: bool | None = None
    """Multi-turn rollouts in an environment or with tools."""
    on_policy: bool | None = None
    """Samples from the current policy."""
    adapter: str | None = None
    """lora / qlora when an adapter was trained."""
    strength: Strength = "none"
    """How strongly the evidence shows this stage (:mod:`arb_audit.taxonomy.strength`)."""
    evidence: list[Evidence] = field(default_factory=list)
    """Where it is seen."""
    conflicts: list[str] = field(default_factory=list)
    """Evidence that says otherwise, in words."""
    weights: schema.WeightChange | None = None
    """How its tensors differ from its parent's (arb_audit.analyzer.weights), when both were at hand."""
    parents: list[str] = field(default_factory=list)
    """Every model it started from: ``parent`` first, then the other models a merge combined."""
    producer_seq: int | None = None
    """The command that produced it (its training run or its copy), where known."""
    on_disk: bool = True
    """Whether its folder (and its parent's) still hold the versions this step is about: a version
    since overwritten cannot be weighed."""
    key: tuple[str, Moment | None] = ("", None)
    """The version it is about: its path and when it was made (None: no command shows it)."""
    parent_keys: dict[str, tuple[str, Moment | None]] = field(default_factory=dict)
    """Each parent's version, by the name ``parents`` gives it."""

    def all_parents(self) -> list[str]:
        """Return every model this step started from, ``parent`` first (none when it is unknown)."""
        first = [self.parent] if self.parent else []
        return first + [p for p in self.parents if p not in first]

    def to_stage(self) -> schema.Stage:
        """Return the step as the audit's schema holds it (the model checks its kind against the taxonomy)."""
        return schema.Stage(
            kind=cast("StageKind", self.kind),
            label=label_of(self.kind, self.on_policy, self.interactive),
            variant=self.variant,
            interactive=self.interactive,
            on_policy=self.on_policy,
            adapter=self.adapter,
            artifact=self.artifact,
            parent=self.parent,
            parents=self.all_parents(),
            strength=self.strength,
            conflicts=list(self.conflicts),
            weights=self.weights,
            evidence=list(self.evidence),
        )


@dataclass(slots=True)
class RunCode:
    """What the analysis knows of the run's code: classifications and the scripts commands ran."""

    record: RunRecord
    """The run."""
    labels: dict[str, Classification]
    """Blob sha → classification."""
    runs: list[ScriptRun]
    """Code files that commands ran."""
    text: Callable[[str], str | None]
    """Blob sha → its text (for searching a script for an artifact's path)."""
    _mentions: dict[tuple[int, str, str], str | None] = field(default_factory=dict, repr=False)
    _versions: PathVersions | None = field(default=None, repr=False)

    @property
    def versions(self) -> PathVersions:
        """The versions each path took, command by command (:mod:`arb_audit.analyzer.path_versions`)."""
        if self._versions is None:
            record = self.record
            times = [t for c in record.commands for t in (c.started_at, c.ended_at) if t is not None]
            end = record.run.ended_at or max(times, default=None)
            self._versions = PathVersions(record.commands, self._trainings, record.artifacts, end)
        return self._versions

    def _trainings(self, artifact: str) -> list[tuple[ScriptRun, Stage, str]]:
        """Every training script run that writes ``artifact`` or names it (not as what it loads)."""
        found = []
        for run in self.runs:
            training = training_stages(self.labels.get(run.blob_sha))
            if training and (how := self.mention(run, artifact)) in ("writes", "names"):
                found.append((run, training[-1], how))
        return found

    def revision(self, seq: int) -> Revision | None:
        """Return revision ``seq``."""
        return next((r for r in self.record.revisions if r.seq == seq), None)

    def command(self, seq: int) -> Command | None:
        """Return command ``seq``."""
        return next((c for c in self.record.commands if c.seq == seq), None)

    def mention(self, run: ScriptRun, artifact: str) -> str | None:
        """Say how a script run names an artifact (cached: lineages ask the same question again)."""
        key = (run.command_seq, run.blob_sha, artifact)
        if key not in self._mentions:
            command = self.command(run.command_seq)
            text = (command.command if command else "") + "\n" + (self.text(run.blob_sha) or "")
            self._mentions[key] = _mention(text, artifact)
        return self._mentions[key]

    def code_evidence(self, run: ScriptRun, stage: Stage) -> list[Evidence]:
        """Point at the command that ran a stage and at the code line that shows it."""
        command = self.command(run.command_seq)
        revision = self.revision(run.revision_seq)
        found = [
            Evidence(
                "command",
                command_seq=run.command_seq,
                excerpt=excerpt((command.command if command else "") + f"  [exit {run.exit_code}]", 200),
            )
        ]
        for f in stage.evidence[:3]:
            found.append(
                Evidence(
                    "code",
                    path=f.path or run.path,  # a workspace module the script calls, or the script
                    line=f.line or None,
                    end_line=f.line or None,
                    revision=revision.sha if revision else None,
                    excerpt=excerpt(f.excerpt or f.message, 200),
                )
            )
        return found


def _claims(code: RunCode) -> dict[str, list[Evidence]]:
    """Table label → evidence, for every stage whose code a command ran."""
    attempted: dict[str, list[Evidence]] = {}
    for run in code.runs:
        labels = code.labels.get(run.blob_sha)
        if labels is None:
            continue
        command = code.command(run.command_seq)
        chosen = chosen_route(command.command, labels.possible_routes) if command else None
        route = chosen[0] if chosen else labels.default_route
        for stage in labels.stages:
            if (label := label_of(stage.kind, stage.on_policy, stage.interactive)) is None:
                continue
            taken = label == route or (label == "ONLINE_RL" and ROUTE_KINDS.get(stage.kind) == route)
            if labels.role == "launcher" and route is not None and not taken:
                continue  # a branch the setting did not take: written, not run
            attempted.setdefault(label, []).extend(code.code_evidence(run, stage))
        if labels.role == "launcher" and route is not None and route in ROUTE_KINDS.values():
            how = f"launches {run.path} with {chosen[1]}" if chosen else f"launches {run.path} (its default)"
            attempted.setdefault(route, []).append(
                Evidence("command", command_seq=run.command_seq, excerpt=excerpt(how, 200))
            )
    return attempted


def _written(code: RunCode, attempted: dict[str, list[Evidence]]) -> dict[str, list[Evidence]]:
    """Table label → evidence, for stages that code of some revision implements but no command ran."""
    written: dict[str, list[Evidence]] = {}
    for revision in code.record.revisions:
        for f in revision.files:
            labels = code.labels.get(f.blob_sha or "")
            for stage in labels.stages if labels else []:
                label = label_of(stage.kind, stage.on_policy, stage.interactive)
                if label is None or label in attempted or len(written.get(label, [])) >= 3:
                    continue
                line = stage.evidence[0].line if stage.evidence else None
                pointer = Evidence("code", path=f.path, line=line, revision=revision.sha, excerpt=label)
                if pointer not in written.get(label, []):
                    written.setdefault(label, []).append(pointer)
    return written


def _artifact_kind(artifact: ArtifactInfo | None) -> tuple[str, Strength, Evidence] | None:
    """Return what an artifact's own files say its producing stage was, how strongly, and where.

    Log keys only one kind of trainer writes support the stage; keys several share, or a model card's
    tag, are weak signs.
    """
    if artifact is None:
        return None
    evidence = artifact.trainer_evidence
    if keys := evidence.log_keys:
        found = kind_from_log_keys(keys)
        if found is not None:
            kind, strong = found
            shown = ", ".join(keys[:8])
            return (
                kind,
                "supported" if strong else "weak",
                Evidence("artifact", path=evidence.trainer_state, excerpt=shown),
            )
    named = kind_from_card(evidence.card_tags, evidence.card_trained_with)
    if named is not None:
        kind = named
        card = f"{artifact.path}/README.md"
        return kind, "weak", Evidence("artifact", path=card, excerpt=f"model card: {kind}")
    return None


_WRITES = re.compile(
    r"(?:output_dir|out_dir|save_dir|save_model|save_pretrained|output-dir|OUTPUT_DIR|--output"
    r"|--out|--save[\w-]*)\W{0,12}$"
)
_READS = re.compile(
    r"(?:from_pretrained\(|model|model_name_or_path|--model[\w-]*|--init[\w-]*|--from|--checkpoint"
    r"|--base[\w-]*|--policy|--ref[\w-]*|--resume[\w-]*)\W{0,12}$"
)


def _mention(text: str, artifact: str) -> str | None:
    """Say how ``text`` names ``artifact``: ``writes`` (an output dir or save call), ``reads``, ``names``."""
    found = None
    for match in re.finditer(r"[\w./-]+", text):
        if not same_path(match[0], artifact):
            continue
        before = text[max(0, match.start() - 40) : match.start()]
        if _WRITES.search(before):
            return "writes"
        found = "reads" if _READS.search(before) else found or "names"
    return found


def training_stages(labels: Classification | None) -> list[Stage]:
    """Return the training stages of a file.

    A launcher (a mergekit or LLaMA-Factory config) counts as one stage of its default route.
    """
    if labels is None:
        return []
    stages = [s for s in labels.stages if s.kind in ROUTE_KINDS]
    if not stages and labels.role == "launcher" and labels.default_route in ROUTE_KINDS.values():
        kind = next(k for k, v in ROUTE_KINDS.items() if v == labels.default_route)
        stages = [Stage(kind, evidence=[f for f in labels.findings if labels.default_route in f.routes][:1])]
    return stages


def lineage(code: RunCode, artifact_path: str, base: str | None, before_seq: int | None) -> list[StageStep]:
    """Follow the artifact back, stage by stage, to the base model (or as far as evidence goes).

    Each step is one *version* of a path (:mod:`arb_audit.analyzer.path_versions`): the artifact as it
    was just after command ``before_seq`` (the end of the run when None), and each parent as it was when
    its child was made. Every parent of a merge is followed, so the steps form a tree: each version
    once, parents before the models made from them, the artifact last. A path the lineage holds in two
    versions names the older ``PATH@N``, N the command that made it (0: before any command).
    """
    versions = code.versions
    steps: list[StageStep] = []
    open_: set[tuple[str, Moment | None]] = set()
    done: set[tuple[str, Moment | None]] = set()

    def visit(artifact: str, before: Moment, depth: int) -> tuple[str, Moment | None] | None:
        write, why = versions.at(artifact, before)
        key = (artifact, write.at if write else None)
        if key in done:
            return key
        if key in open_ or len(steps) >= MAX_STEPS:
            return None  # a cycle of copies, or too long a lineage
        open_.add(key)
        step = _step(code, artifact, write, why)
        step.key = key
        if depth < MAX_DEPTH:
            since = write.at if write else before
            for parent in step.all_parents():
                if parent != base and (found := visit(parent, since, depth + 1)) is not None:
                    step.parent_keys[parent] = found
        open_.discard(key)
        done.add(key)
        steps.append(step)
        return key

    visit(artifact_path, _after(before_seq), 1)
    _name_versions(code, steps)
    return steps


def _after(seq: int | None) -> Moment:
    """Return the moment just after command ``seq`` (the run's end when None)."""
    return END if seq is None else (seq, 2**31)


def _name_versions(code: RunCode, steps: list[StageStep]) -> None:
    """Name each step's version: its path, or ``PATH@N`` for all but one version of a path held twice.

    The version the path holds now keeps the plain name (else the latest); a version since overwritten
    is not on disk, so neither it nor a step made from it can be weighed.
    """
    by_path: dict[str, list[tuple[str, Moment | None]]] = {}
    for step in steps:
        by_path.setdefault(step.key[0], []).append(step.key)
    current = {s.key: code.versions.current(s.key[0], _write_of(code, s.key)) for s in steps}
    name: dict[tuple[str, Moment | None], str] = {}
    for path, keys in by_path.items():
        plain = next((k for k in keys if current[k]), max(keys, key=lambda k: k[1] or (0, 0)))
        for k in keys:
            name[k] = path if k == plain or len(keys) == 1 else f"{path}@{k[1][0] if k[1] else 0}"
    for step in steps:
        step.on_disk = current[step.key] and all(current.get(k, True) for k in step.parent_keys.values())
        step.artifact = name[step.key]
        renamed = {p: name.get(k, p) for p, k in step.parent_keys.items()}
        step.parent = renamed.get(step.parent, step.parent) if step.parent else None
        step.parents = [renamed.get(p, p) for p in step.parents]
        step.parent_keys = {renamed.get(p, p): k for p, k in step.parent_keys.items()}


def _write_of(code: RunCode, key: tuple[str, Moment | None]) -> Write | None:
    """Return the write that made version ``key`` (None for a version no command shows)."""
    return next((w for w in code.versions.writes(key[0]) if w.at == key[1]), None)


def producing_seq(code: RunCode, artifact: str, before_seq: int | None) -> int | None:
    """Return the command (up to ``before_seq``) that made the version ``artifact`` then held."""
    write, _ = code.versions.at(artifact, _after(before_seq))
    return write.seq if write else None


def _step(code: RunCode, artifact: str, write: Write | None, why: str | None) -> StageStep:
    """Return the step that made version ``write`` of ``artifact``.

    ``why`` says how an unfinished command's work shows in the artifact's own files.
    """
    versions = code.versions
    # The artifact's own files tell of the version it holds now, not of one since overwritten.
    info = next((a for a in code.record.artifacts if a.path == artifact), None)
    info = info if versions.current(artifact, write) else None
    if write is not None and write.how in ("copied", "moved"):
        command = versions.command(write.seq)
        text = command.command if command else ""
        return StageStep(
            "copy",
            artifact,
            write.source,
            producer_seq=write.seq,
            strength="supported",
            evidence=[Evidence("command", command_seq=write.seq, excerpt=excerpt(text, 200))],
        )
    dynamic = _artifact_kind(info)
    parent = info.parent_ref if info else None
    deleted = [f"command {write.seq} deleted it"] if write is not None and write.how == "deleted" else []
    if write is None or write.run is None or write.stage is None:
        if dynamic is None:
            return StageStep("unknown", artifact, parent, strength="none", conflicts=deleted)
        kind, level, pointer = dynamic
        return StageStep(kind, artifact, parent, strength=level, evidence=[pointer], conflicts=deleted)
    run, stage = write.run, write.stage
    producing = code.command(run.command_seq)
    named = _command_models(code, producing, artifact) if producing else []
    script = code.text(run.blob_sha) or ""
    step = StageStep(
        stage.kind,
        artifact,
        parent or (named[0] if named else None) or _loaded_model(script, code.record.run.base_model),
        producer_seq=run.command_seq,
        variant=stage.variant,
        interactive=stage.interactive,
        on_policy=stage.on_policy,
        adapter=stage.adapter,
        strength="supported",
        evidence=code.code_evidence(run, stage),
    )
    if why is not None:
        step.evidence.append(
            Evidence(
                "artifact", path=artifact, excerpt=f"command {run.command_seq} never finished, but {why}"
            )
        )
    if stage.kind == "merge":
        # A merge starts from every model it combines, not only the first one named.
        merged = [*named, *_merged_models(script)]
        step.parents = [m for m in dict.fromkeys(merged) if not same_path(m, artifact)]
    if dynamic is not None:
        kind, _, pointer = dynamic
        step.evidence.append(pointer)
        if kind == stage.kind:
            step.strength = "verified"
        else:
            step.conflicts.append(
                f"the artifact's own files say {kind}, the code that wrote it says {stage.kind}"
            )
            step.strength = "conflicting"
    return step


_LOADS = re.compile(
    r"(?:from_pretrained\([ \t]*|\b(?:model|model_name_or_path|model_id|base_model)[ \t]*=[ \t]*)"
    r"[\"']([^\"'\n]{1,300})[\"']"
    r"|^[ \t]*-?[ \t]*(?:model|model_name_or_path|base_model):[ \t]*[\"']?([^\s\"'#]{1,300})",
    re.M,
)
"""``from_pretrained("...")``, ``model="..."`` (TRL trainers take a path or id as ``model``), and the
``model:`` keys of YAML configs (LLaMA-Factory, axolotl, mergekit's first model)."""
_MODEL_LOADS = re.compile(
    r"\b(?:(?P<cls>[A-Za-z_][\w.]*)\.from_pretrained|(?P<kw>model|model_name_or_path|pretrained_model_name_or_path))"
    r"[ \t]*(?(cls)\([ \t]*|=[ \t]*)"
    r"(?:[\"'](?P<literal>[^\"'\n]{1,300})[\"']|(?P<name>[A-Za-z_]\w*)\b(?![.(\[]))"
)
"""What a model is loaded from: ``SomeModel.from_pretrained(X)`` or a trainer's ``model=X``, where X is
a literal or a name a literal was assigned to."""
_NOT_MODELS = re.compile(r"(?:Tokenizer|Processor|FeatureExtractor|Config|Extractor)\w*$")
"""``from_pretrained`` of these reads a model's tokenizer or settings, not the weights it starts from."""
_ASSIGNED = re.compile(
    r"^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]{1,80})?=[ \t]*[\"']([^\"'\n]{1,300})[\"'][ \t]*(?:#.*)?$", re.M
)
"""``NAME = "literal"`` on a line of its own (a script's constants: ``MODEL = "outputs/sft"``)."""
_WEIGHT_FILES = re.compile(r"\b(?:torch\.load|load_file|safe_open)\([ \t]*[\"']([^\"'\n]{1,300})[\"']")
"""State dicts read from files (a merge written by hand averages several)."""


def _command_models(code: RunCode, command: Command, artifact: str) -> list[str]:
    """Return the models of the run that a training command names as arguments (``--init X``), in order.

    Only models the run knows count — its artifacts, submitted paths, the base model, or what an
    earlier training run wrote — so a data file or the command's own output is never its parent. The
    artifact itself counts where it is read (``--init m --out m``): its earlier version is the parent.
    """
    if len(command.command) > MAX_SEGMENT_CHARS:
        return []
    words = shell_words(command.command, comments=True)
    if words is None:
        return []
    record = code.record
    known = {a.path for a in record.artifacts} | {
        s.artifact_path for s in record.submissions if s.artifact_path
    }
    known |= {record.run.base_model} if record.run.base_model else set()
    earlier = [
        r for r in code.runs if r.command_seq < command.seq and training_stages(code.labels.get(r.blob_sha))
    ]
    found: list[str] = []
    for before, word in pairwise(words):
        value = posixpath.normpath(word.split("=", 1)[-1].removeprefix("./")) if word else ""
        if not value or value == "." or value in found:
            continue
        if same_path(value, artifact):
            # Trained in place (``--init m --out m``): it starts from the path's earlier version.
            option = word.split("=", 1)[0] + " " if "=" in word else before + " "
            if _READS.search(option) and not _WRITES.search(option):
                found.append(artifact)
            continue
        if value in known or any(code.mention(r, value) == "writes" for r in earlier):
            found.append(value)
    return found


def _model_loads(text: str) -> list[str]:
    """Return what a script loads *models* from, in order: literals, or names bound to literals.

    Tokenizers, processors and configs are left out: a script that fine-tunes ``outputs/sft`` often
    takes its tokenizer from the base model.
    """
    assigned = [(m.start(), m[1], m[2]) for m in _ASSIGNED.finditer(text)]
    found: list[str] = []
    for match in _MODEL_LOADS.finditer(text):
        if (cls := match["cls"]) is not None and _NOT_MODELS.search(cls.rsplit(".", 1)[-1]):
            continue
        value = match["literal"]
        if value is None:
            # The value the name last took before this line (a constant at the top of the script).
            bound = [v for at, name, v in assigned if name == match["name"] and at < match.start()]
            value = bound[-1] if bound else None
        if value and value not in found:
            found.append(value)
    return found


def _loaded_model(text: str, base: str | None) -> str | None:
    """Return the model a training script starts from, or None when the script does not say.

    That is the first model it loads (``from_pretrained`` of a model class, a trainer's ``model=``),
    else the first model a YAML config names, else the base model when the script names it at all.
    """
    if loads := _model_loads(text):
        return loads[0]
    for match in _LOADS.finditer(text):
        # Every model-class ``from_pretrained`` was seen above; what is left of those loads a tokenizer.
        if match[2] or not match.group(0).startswith("from_pretrained"):
            return match[1] or match[2]
    return base if base and base in text else None


def _merged_models(text: str) -> list[str]:
    """Return every model a merge combines: models a script loads or reads weights of, a YAML's models.

    A state dict read from a file counts as its folder's model.
    """
    found = _model_loads(text)
    for match in _WEIGHT_FILES.finditer(text):
        path = match[1]
        folder = posixpath.dirname(path) if posixpath.splitext(path)[1] else path
        if folder and folder not in found:
            found.append(folder)
    for match in _LOADS.finditer(text):
        if match[2] and match[2] not in found:
            found.append(match[2])
    return found


def route_label(chain: list[StageStep]) -> str:
    """Return the table label of a lineage: one training stage's label, COMPOSITE, NO_TRAINING, UNKNOWN."""
    training = [s for s in chain if s.kind in ROUTE_KINDS]
    return lineage_label(
        [label_of(s.kind, s.on_policy, s.interactive) for s in training], [s.kind for s in chain]
    )


def chain_text(chain: list[StageStep]) -> str:
    """Return the chain as the tables print it: ``SFT→GRPO(online)``.

    A merge of branches that differ shows each: ``(SFT + SFT→GRPO)→MERGE``; alike branches show once.
    """
    if not chain:
        return route_label(chain)
    steps = {s.artifact: s for s in chain}

    def branch(step: StageStep, seen: frozenset[str]) -> str:
        before = [branch(steps[p], seen | {p}) for p in step.all_parents() if p in steps and p not in seen]
        unique = list(dict.fromkeys(b for b in before if b))
        head = unique[0] if len(unique) == 1 else f"({' + '.join(unique)})" if unique else ""
        own = chain_name(step.kind, step.variant, step.interactive) if step.kind in ROUTE_KINDS else ""
        return "→".join(part for part in (head, own) if part)

    return branch(chain[-1], frozenset({chain[-1].artifact})) or route_label(chain)


def strength_reason(chain: list[StageStep]) -> str:
    """Say why a route has its evidence level.

    That is the level of its weakest step: the step, what the level means, what its evidence disagrees on.
    """
    level = weakest(s.strength for s in chain)
    meaning = next(d.definition for d in STRENGTHS if d.name == level)
    if not chain:
        return f"{level}: the best submission has no lineage ({meaning})"
    step = next(s for s in chain if s.strength == level)
    conflicts = f"; {'; '.join(step.conflicts)}" if step.conflicts else ""
    return f"{level}: its weakest step, {step.kind} making {step.artifact}, is {level} ({meaning}){conflicts}"


def submission_command(record: RunRecord, submission: Submission) -> int | None:
    """Return the last command before a submission (by time), or None when times do not tell."""
    if submission.requested_at is None:
        return None
    before = [
        c.seq for c in record.commands if c.started_at is not None and c.started_at <= submission.requested_at
    ]
    return before[-1] if before else None


@dataclass(slots=True)
class Routes:
    """What :func:`analyze` finds: the routes written, attempted and adopted, and the lineages.

    Each field is the audit's route section's of that name (:class:`arb_audit.schema.Route` defines
    it); the defaults are a run in which nothing was found.
    """

    best_label: RouteLabel | None = None
    chain: list[schema.Stage] = field(default_factory=list)
    chain_text: str | None = None
    attempted: list[RouteLabel] = field(default_factory=list)
    written: list[RouteLabel] = field(default_factory=list)
    adopted: list[RouteLabel] = field(default_factory=list)
    strength: Strength = "none"
    strength_reason: str | None = None
    evidence: schema.RouteEvidence = field(
        default_factory=lambda: schema.RouteEvidence(attempted={}, written={})
    )
    lineage: dict[str, list[schema.Stage]] = field(default_factory=dict)
    submission_lineages: dict[str, list[schema.Stage]] = field(default_factory=dict)


def analyze(
    code: RunCode,
    best: Submission | None,
    refine: Callable[[list[StageStep]], None] | None = None,
) -> Routes:
    """Find the routes written, attempted and adopted, each scored path's lineage and the best label.

    ``refine`` (weight forensics) may correct each current lineage's steps before they are reported.
    """
    attempted = _claims(code)
    record = code.record
    # A path retrained and submitted again has a new lineage: one per (path, producing command).
    computed: dict[tuple[str, int | None], list[StageStep]] = {}
    lineages: dict[str, list[StageStep]] = {}
    of_submission: dict[int, list[StageStep]] = {}
    for submission in record.submissions:
        path = submission.artifact_path
        if submission.status != "scored" or not path:
            continue
        bound = submission_command(record, submission)
        key = (path, producing_seq(code, path, bound))
        if key not in computed:
            computed[key] = lineage(code, path, record.run.base_model, bound)
        of_submission[submission.seq] = lineages[path] = computed[key]
    # A superseded lineage's artifact now holds what retrained it: its weights tell nothing of it.
    current = [steps for steps in computed.values() if any(steps is now for now in lineages.values())]
    if refine is not None:
        for steps in current:
            refine(steps)
    chain = of_submission.get(best.seq, []) if best else []
    path_of = {s.seq: s.artifact_path or "" for s in record.submissions}
    # A stage in a lineage was run, by definition (its artifact exists): attempted, with that evidence.
    for steps in computed.values():
        for step in steps:
            if (label := label_of(step.kind, step.on_policy, step.interactive)) and label not in attempted:
                attempted[label] = list(step.evidence)
    written = _written(code, attempted)
    adopted = sorted({label for s in chain if (label := label_of(s.kind, s.on_policy, s.interactive))})
    # The labels are the taxonomy's (a launcher's route is one of them); schema.Route checks them.
    return Routes(
        best_label=cast("RouteLabel", route_label(chain)) if best else None,
        chain=[s.to_stage() for s in chain],
        chain_text=chain_text(chain) if best else None,
        attempted=cast("list[RouteLabel]", sorted(attempted)),
        written=cast("list[RouteLabel]", sorted(written)),
        adopted=adopted,
        strength=weakest(s.strength for s in chain),
        strength_reason=strength_reason(chain) if best else None,
        evidence=schema.RouteEvidence(
            attempted={k: v[:6] for k, v in sorted(attempted.items())},
            written={k: list(v) for k, v in sorted(written.items())},
        ),
        lineage={path: [s.to_stage() for s in steps] for path, steps in lineages.items()},
        # Submissions of a path since retrained: the lineage each had when it was graded.
        submission_lineages={
            str(seq): [s.to_stage() for s in steps]
            for seq, steps in of_submission.items()
            if steps is not lineages[path_of[seq]]
        },
    )
