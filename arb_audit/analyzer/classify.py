"""What one file does: run every detector over it in one pass and combine their findings.

The combination follows TAXONOMY.md: every training stage found is listed in the order it appears;
a policy-gradient stage with multi-turn environment or tool rollouts is online RL; the primary label is
the last stage; a file whose route is chosen by a flag or table is a launcher (``CONFIG_DEPENDENT``);
a file with no training stage is data generation, evaluation, a component or nothing.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any

from arb_audit.analyzer.detector import FileContext, Finding, RouteDetector, discover
from arb_audit.analyzer.detectors.advantage import NAMED_ESTIMATOR
from arb_audit.analyzer.detectors.environment import DEFINED, SINGLE_TURN
from arb_audit.analyzer.detectors.evaluation_call import EVALUATION_CALL
from arb_audit.analyzer.detectors.generation import SERVED
from arb_audit.analyzer.detectors.generation_purpose import ANSWERS, TRAINING_DATA, TRAINING_SHAPED
from arb_audit.analyzer.detectors.gradient_step import (
    ADVANTAGES_HANDED,
    GRADIENTS_READ,
    LOSS_HOOK,
    PRETRAINING_MIX,
    REMOTE_STEP,
    TRAINER_EVALUATION,
)
from arb_audit.analyzer.detectors.llm_judge import JUDGE
from arb_audit.analyzer.detectors.masked_targets import MASKED_TARGETS, PREFERENCE_PAIRS
from arb_audit.analyzer.detectors.merge import MERGED_SAVE, MERGEKIT_CONFIG
from arb_audit.analyzer.detectors.metric_report import METRICS, PERPLEXITY, SCORER
from arb_audit.analyzer.detectors.multi_turn_loop import USER_TURN
from arb_audit.analyzer.detectors.policy_weights import ROLLOUT
from arb_audit.analyzer.detectors.process_reward import NAMED_SCORERS, OUTCOME_REWARD, PROCESS_REWARD
from arb_audit.analyzer.detectors.reward_head import SCORER_CLASS, STEPPED
from arb_audit.analyzer.detectors.route_dispatch import BY_NAME, COMMAND_TEXT, COMPARED, FLAG, MANY_ROUTES
from arb_audit.analyzer.detectors.scoring import FILTER as SCORE_FILTER
from arb_audit.analyzer.detectors.teacher_rewards import ON_POLICY_DISTILLATION
from arb_audit.analyzer.detectors.tensor_output import LOGITS
from arb_audit.analyzer.detectors.tool_feedback import SCORED_TOOL_RESULTS
from arb_audit.analyzer.frameworks import HANDED_LOSS_LOOPS
from arb_audit.analyzer.loss_slice import FORWARD_ONLY, PLAIN_POLICY_GRADIENT
from arb_audit.analyzer.names import NameResolver
from arb_audit.analyzer.played_after_training import mark_played_after_training
from arb_audit.analyzer.positions import locate
from arb_audit.analyzer.source import SourceFile, parse_python
from arb_audit.analyzer.triggers import triggered
from arb_audit.analyzer.walk import run
from arb_audit.taxonomy.files import STAGE_LABELS
from arb_audit.taxonomy.routes import POLICY_GRADIENT

LORA_FOLD = "lora_fold"
MERGE_FUNCTION = "merge_function"


@dataclass(slots=True)
class Stage:
    """One training stage a file implements."""

    kind: str
    """Stage kind (TAXONOMY.md)."""
    variant: str | None = None
    """Algorithm variant, where known."""
    on_policy: bool | None = None
    """Samples drawn from the current policy while training."""
    interactive: bool | None = None
    """Samples are multi-turn trajectories in an environment or with tools."""
    data_source: str | None = None
    """``given``, ``self_generated``, ``distilled`` or ``benchmark_derived``, where known."""
    adapter: str | None = None
    """``lora`` or ``qlora`` when the stage trains an adapter, else None (full weights or unknown)."""
    evidence: list[Finding] = field(default_factory=list)
    """The findings behind it."""
    decided_by: str = "name"
    """What decided the stage (:data:`BASES`): ``loss``, ``framework``, ``command``, ``code``, ``data`` or
    ``name``."""
    confidence: str = "low"
    """How firmly (:data:`CONFIDENCES`): ``high``, ``medium`` or ``low``."""

    @property
    def label(self) -> str:
        """The file label this stage gives a file it is the last stage of (multi-turn: ``ONLINE_RL``)."""
        return "ONLINE_RL" if self.interactive else STAGE_LABELS.get(self.kind, "NONE_TRAINING")


BASES: dict[str, str] = {
    "loss": "the form of the loss a gradient step of the file optimises",
    "framework": "an entry of the framework table (a known trainer, pipeline or train function)",
    "command": "a literal training command line the file runs",
    "code": "code that combines weights, or a loss-shaped function not tied to a gradient step",
    "data": "the batch's targets, masked for a token cross-entropy (or in chosen/rejected pairs, for a "
    "preference loss), where the loss is in another file",
    "name": "a trainer or config class, resolved to its qualified name",
}
"""What can decide a file's stage, most direct first (TAXONOMY.md: the gradient step decides)."""

CONFIDENCES: dict[str, str] = {
    "high": "the loss a gradient step optimises shows the stage, or code that combines weights is run",
    "medium": "a framework table entry, a command line or a resolved trainer class names the stage, and no"
    " loss in the file says otherwise",
    "low": "a loss-shaped function or a name that no gradient step of the file is seen using",
}
"""How firmly a static stage is shown: documented levels, not probabilities."""

_BASIS_OF = {
    "GradientStep": "loss",
    "FrameworkEntry": "framework",
    "SubprocessLaunch": "command",
    "Merge": "code",
    "WeightAverage": "code",
    "HandwrittenLoss": "code",
    "MaskedTargets": "data",
}
"""Detector -> the basis its stage findings rest on (the others report names)."""


def _basis(stage: Stage, steps: bool) -> tuple[str, str]:
    """Return what decided ``stage`` and how firmly; ``steps``: the file takes a gradient step."""
    bases = [_BASIS_OF.get(f.detector, "name") for f in stage.evidence if f.signal == "stage" or f.kind]
    order = list(BASES)
    basis = min(bases, key=order.index, default="name")
    if basis == "loss" or (basis == "code" and stage.kind == "merge"):
        return basis, "high"
    if basis in ("framework", "command") or (basis == "name" and steps):
        return basis, "medium"
    return basis, "low"


@dataclass(slots=True)
class Classification:
    """The static analyzer's verdict on one file."""

    path: str
    """The file, as given."""
    labels: list[str] = field(default_factory=list)
    """Every file label that applies (arb_audit.taxonomy.files.FILE_LABELS), primary first."""
    primary: str = "NONE_TRAINING"
    """The label of the last stage the file runs (or of what it is, when it trains nothing)."""
    role: str = "none"
    """arb_audit.taxonomy.files.FILE_ROLES."""
    stages: list[Stage] = field(default_factory=list)
    """Training stages, in the order they appear."""
    possible_routes: list[str] = field(default_factory=list)
    """For launchers: every label the choice can select."""
    default_route: str | None = None
    """For launchers: the label selected when nothing is set."""
    findings: list[Finding] = field(default_factory=list)
    """Everything the detectors saw, located."""
    error: str | None = None
    """Why the file could not be (fully) read or parsed; None when it was."""

    def detach(self) -> None:
        """Drop the syntax-tree nodes the findings point at (they are large and cannot be pickled)."""
        for f in self.findings:
            f.node = f.statement = None
        for stage in self.stages:
            for f in stage.evidence:
                f.node = f.statement = None

    def to_json(self) -> dict[str, Any]:
        """Return the JSON object ``arb-audit classify --json`` prints for this file."""
        return {
            "path": self.path,
            "labels": self.labels,
            "primary": self.primary,
            "role": self.role,
            "stages": [
                {
                    "kind": s.kind,
                    "variant": s.variant,
                    "on_policy": s.on_policy,
                    "interactive": s.interactive,
                    "data_source": s.data_source,
                    "adapter": s.adapter,
                    "decided_by": s.decided_by,
                    "confidence": s.confidence,
                    "evidence": [_evidence(f) for f in s.evidence],
                }
                for s in self.stages
            ],
            "possible_routes": self.possible_routes,
            "default_route": self.default_route,
            "evidence": [_evidence(f) for f in self.findings if f.signal != "stage"],
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], path: str) -> Classification:
        """Rebuild a classification from :meth:`to_json`'s object (a cached result) for ``path``."""
        stages = [
            Stage(
                s["kind"],
                s["variant"],
                s["on_policy"],
                s["interactive"],
                s["data_source"],
                s.get("adapter"),
                [_finding(e) for e in s["evidence"]],
                s.get("decided_by", "name"),
                s.get("confidence", "low"),
            )
            for s in data["stages"]
        ]
        findings = sorted(
            [f for s in stages for f in s.evidence] + [_finding(e) for e in data["evidence"]],
            key=lambda f: (f.line, f.col),
        )
        return cls(
            path,
            list(data["labels"]),
            data["primary"],
            data["role"],
            stages,
            list(data["possible_routes"]),
            data["default_route"],
            findings,
            data["error"],
        )


def _evidence(f: Finding) -> dict[str, Any]:
    return {
        **({"path": f.path} if f.path is not None else {}),
        **({"key": f.key} if f.key is not None else {}),
        "line": f.line,
        "col": f.col,
        "detector": f.detector,
        "signal": f.signal,
        "kind": f.kind,
        "routes": list(f.routes),
        "message": f.message,
        "excerpt": f.excerpt,
    }


def _finding(data: dict[str, Any]) -> Finding:
    return Finding(
        data["detector"],
        data["signal"],
        kind=data.get("kind"),
        routes=tuple(data.get("routes", ())),
        key=data.get("key"),
        message=data.get("message", ""),
        line=data["line"],
        col=data["col"],
        excerpt=data["excerpt"],
        path=data.get("path"),
    )


_DETECTORS: list[type[RouteDetector]] | None = None


def detectors() -> list[type[RouteDetector]]:
    """Return the detector classes (discovered once per process)."""
    global _DETECTORS
    if _DETECTORS is None:
        _DETECTORS = discover()
    return _DETECTORS


def find(
    text: str, chosen: Sequence[type[RouteDetector]] | None = None, guarded: bool = True
) -> tuple[list[Finding], str | None]:
    """Run detectors over Python ``text``; return the located findings and the parse error, if any.

    ``guarded``: see :func:`arb_audit.analyzer.source.parse_python` (False only in a worker that may die).
    """
    with _cycle_collection_paused():
        return _find(text, chosen, guarded)


@contextlib.contextmanager
def _cycle_collection_paused() -> Iterator[None]:
    """Pause Python's cycle collector while one file is analysed.

    A file's trees and findings are hundreds of thousands of young objects, none garbage until the
    analysis ends; the collector would walk them again and again (a tenth of the analysis, measured).
    Whatever cycles the analysis leaves are collected once it is back on.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def _find(
    text: str, chosen: Sequence[type[RouteDetector]] | None, guarded: bool
) -> tuple[list[Finding], str | None]:
    running = triggered(text, chosen or detectors())
    if not running:
        try:
            ast.parse(text)
            return [], None  # nothing to look for: no need for libcst's tree
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            pass  # let the full parse say what is wrong
    parsed = parse_python(text, guarded)
    if parsed.module is None:
        return [], parsed.error
    try:
        context = FileContext(NameResolver(parsed.module), text)
        built = [d(context) for d in running]
        run(parsed.module, built, context)
        for detector in built:
            detector.finish()
    except RecursionError:
        return [], "nesting too deep to analyse"
    findings = context.findings
    mark_played_after_training(parsed.module, findings)
    locate(findings, parsed.module, text, parsed.partial)
    findings.sort(key=lambda f: (f.line, f.col))
    return findings, parsed.error


def classify_source(source: SourceFile, guarded: bool = True) -> Classification:
    """Classify one read file (Python, notebook or marimo); ``guarded`` as for :func:`find`."""
    result = Classification(source.path, error=source.error)
    if source.text is None:
        return result
    findings, error = find(source.text, guarded=guarded)
    # (a file read with a caveat, UTF-16 text, may also fail to parse: both are said)
    result.error = "; ".join(e for e in (result.error, error) if e) or None
    if source.line_map is not None:
        for f in findings:
            if 0 < f.line <= len(source.line_map):
                cell, line = source.line_map[f.line - 1]
                f.message += f" (cell {cell}, line {line})"
    combine(result, findings)
    return result


def combine(result: Classification, findings: list[Finding]) -> None:
    """Turn findings into stages, labels, primary label and role (TAXONOMY.md's rules)."""
    result.findings = findings
    script = any(f.signal == "entry_point" for f in findings)
    if script and not any(f.signal == "gradient_step" for f in findings):
        # a script that calls an estimator of another file to look at advantages (compare reward
        # shapings, print them) and trains nothing serves no policy-gradient stage: the estimator is
        # the other file's, which a library module calling it serves
        findings = [f for f in findings if f.variant != NAMED_ESTIMATOR]
    if any(
        f.signal == "data_output" or (f.signal == "purpose" and f.variant == TRAINING_DATA) for f in findings
    ):
        # a perplexity in a file that writes data, or names it as training data, ranks or filters that
        # data (selection by perplexity, instruction-following difficulty): it evaluates no model.
        # (In place: the file's evidence is this list, which a trainer's loss hook below rewrites.)
        findings[:] = [f for f in findings if f.variant != PERPLEXITY]
    # a metric that only decides which generated samples are kept curates data: it evaluates nothing;
    # a function scoring predictions against references, or a routine named for evaluating, evaluates
    # only where nothing else is done
    signals = {
        f.signal
        for f in findings
        if (f.signal != "scoring" or f.variant not in WEAK_SCORES)
        # (a reward model's name decides only what a supervised stage trains, below: not what else
        # the file is, as an evaluation scoring with an ORM)
        and (f.signal != "reward_head" or f.variant not in NAMED_SCORERS)
    }
    steps = [f for f in findings if f.signal == "gradient_step"]
    evaluated = any(f.signal == "scoring" and f.variant == TRAINER_EVALUATION for f in findings)
    if steps and evaluated and all(LOSS_HOOK in f.message for f in steps):
        # a trainer's loss method is differentiated only where the trainer trains; one built to
        # evaluate (trainer.evaluate(), no train()) runs it forward only: a loss, not a step
        hooks = {id(f) for f in steps}
        findings[:] = [replace(f, signal="loss") if id(f) in hooks else f for f in findings]
        steps = []
    # the policy-gradient losses of a file that samples from its policy (an RL trainer's rollouts)
    samples = any(f.signal == "generation" or f.detector == "RolloutFunction" for f in findings)
    policy_gradient_losses = [
        f for f in findings if samples and f.signal == "loss" and f.kind in POLICY_GRADIENT
    ]
    stages = _stages(_deciding(findings, steps), policy_gradient_losses)
    if not steps and any(f.signal == "inference" and f.variant == GRADIENTS_READ for f in findings):
        # the loss a loop differentiates only to read its gradients (Fisher weights) trains nothing
        stages = [s for s in stages if s.kind == "merge"]
    if steps and stages and all(s.kind == "merge" and s.variant == LORA_FOLD for s in stages):
        # an adapter folded on the way into training (a PEFT reference model) is no stage of its own
        stages = []
    if not steps and evaluated:
        # a trainer built only to evaluate (trainer.evaluate(), no train() or step anywhere) trains
        # nothing; weights merged before it is evaluated still are
        stages = [s for s in stages if s.kind == "merge"]
    if any(s.kind != "merge" or s.variant != LORA_FOLD for s in stages) or "scoring" in signals:
        # folding after training is not a stage, nor folding an adapter into the model an evaluation
        # runs (``merge_and_unload()`` before scoring a benchmark)
        stages = [s for s in stages if s.variant != LORA_FOLD]
    if any(s.kind != "merge" for s in stages):
        # a merge function called by training code (shards, an adapter) is part of that training; a
        # merge recipe a training file writes out is for later, run by mergekit, not by this file
        stages = [s for s in stages if s.variant not in (MERGE_FUNCTION, MERGEKIT_CONFIG)]
    if any(s.variant != MERGED_SAVE for s in stages):
        # weights saved as merged are a merge of the file's own only when nothing else explains them
        # (a weight average, a merge function, a training stage whose output is called so)
        stages = [s for s in stages if s.variant != MERGED_SAVE]
    interactive = "interactive" in signals
    # a reward defined here for the turns of multi-turn episodes (``math_reward_with_tool(trajectory)``):
    # it serves online RL, whatever script code beside it tries it out
    episode_rewards = any(f.signal == "interactive" and f.detector == "RewardFunction" for f in findings)
    environment = any(
        (f.signal == "environment" and f.variant != SINGLE_TURN)
        or (f.signal == "interactive" and f.variant != USER_TURN)
        for f in findings
    )
    adapter = next((f.variant for f in findings if f.signal == "adapter"), None)
    variants = {f.kind: f.variant for f in findings if f.signal == "variant"}
    masked = [f for f in findings if f.signal == "loss" and f.variant in DATA_SHAPES]
    commands = [f for f in findings if f.signal == "dispatch" and f.variant == COMMAND_TEXT]
    reward_head = "reward_head" in signals
    paired = any(f.variant == PREFERENCE_PAIRS for f in masked)
    # a reward model's class defined here is what a generic supervised stage trains, unless the file
    # samples from a policy (the scorer then picks samples: best-of-n fine-tuning) or trains a reward
    # model in a stage of its own beside a policy's
    scorer_class = (
        any(f.variant == SCORER_CLASS for f in masked)
        and "generation" not in signals
        and not any(s.kind == "reward_model" for s in stages)
    )
    scorer = [f for f in findings if f.signal == "reward_head" and f.variant not in NAMED_SCORERS]
    named_scorers = {f.variant for f in findings if f.signal == "reward_head" and f.variant in NAMED_SCORERS}
    if scorer and steps and not stages:
        # a step of no recognised loss in code that trains a scorer (a reward model's class, its
        # optimiser): the scorer is what it trains (code only named for a process reward model may
        # train a policy against one: its names say what a supervised loss trains, not an unknown one)
        stages = [Stage("reward_model", evidence=[*scorer[:1], *steps[:2]])]
    scorer_only = any(f.signal == "reward_head" and f.variant == STEPPED for f in findings) and not any(
        s.kind == "reward_model" for s in stages
    )
    distilled = any(f.signal == "loss" and f.variant == ON_POLICY_DISTILLATION for f in findings)
    for stage in stages:
        if distilled and stage.kind in POLICY_GRADIENT:
            # the rewards it maximises are a teacher's log-probabilities of the policy's own samples:
            # whatever the estimator, the teacher's distribution is learnt (on-policy distillation)
            stage.kind, stage.variant, stage.data_source = "sft", ON_POLICY_DISTILLATION, "distilled"
            continue
        if (
            (
                reward_head
                or named_scorers
                # (the loss the file writes itself, not a generic trainer's: that trains whatever
                # model it is handed, a causal LM as often)
                or (scorer_class and any(e.signal == "gradient_step" and e.kind for e in stage.evidence))
            )
            and stage.kind == "sft"
            and stage.variant in (None, "hf_trainer", "seq2seq")
        ):
            # a supervised loss on a scalar head's scores trains a scorer (a pointwise reward model);
            # in code named for a process reward model, a step scorer (targets at the step tags); so
            # does the loss of a file defining the reward model's class beside its trainer (above)
            stage.kind = "reward_model"
            stage.variant = (
                "process"
                if PROCESS_REWARD in named_scorers
                else "outcome"
                if OUTCOME_REWARD in named_scorers
                else "scalar_head"
            )
        elif (
            paired
            and stage.kind == "sft"
            and stage.variant == "hf_trainer"
            and any(e.detector == "NamedStep" for e in stage.evidence)
        ):
            # a project's Trainer subclass the file cannot read, fed chosen/rejected pairs whose
            # targets are masked alike: its loss compares the pair. (transformers' own Trainer, built
            # here, trains its model's forward loss, which takes one target whatever the data say.)
            stage.kind, stage.variant = "dpo", None
            stage.evidence = [*[f for f in masked if f.variant == PREFERENCE_PAIRS][:1], *stage.evidence]
        elif scorer_only and stage.kind == "dpo":
            # a preference loss stepped by a reward model's own code or optimiser trains that scorer
            # (PRIME's implicit process reward model: a DPO-form loss on the reward model's log-ratios)
            stage.kind, stage.variant = "reward_model", "implicit"
        if stage.kind in variants and stage.variant in (None, stage.kind):
            stage.variant = variants[stage.kind]  # the config's variant refines the trainer's default
        if stage.kind not in ("merge",):
            stage.adapter = adapter
        if stage.kind in POLICY_GRADIENT:
            stage.interactive = interactive
            stage.on_policy = True if interactive else stage.on_policy
    for stage in stages:
        stage.decided_by, stage.confidence = _basis(stage, bool(steps))
    result.stages = stages
    trained = {label for s in stages if (label := STAGE_LABELS.get(s.kind)) is not None}
    # an option naming routes in a file that trains and launches nothing, only generates or scores
    # (``--stage dpo|grpo`` picking the adapter to evaluate), chooses a model, not a route
    looks_evaluative = bool(signals & {"scoring", "generation", "inference"})
    evaluates_only = not steps and not stages and not commands and looks_evaluative
    routes = sorted(
        {
            r
            for f in findings
            if f.signal == "dispatch"
            and f.variant != COMMAND_TEXT
            and (f.variant != COMPARED or len(set(f.routes) & trained) >= 2)
            and (f.variant != FLAG or not evaluates_only)
            for r in f.routes
        }
    )
    labels: list[str] = []
    policy_gradient = [s for s in stages if s.kind in POLICY_GRADIENT]
    if len(routes) >= 2:
        result.possible_routes = routes
        result.default_route = next(
            (f.default for f in findings if f.signal == "dispatch" and f.default), None
        )
        if set(routes) <= {"GRPO", "PPO"} and (
            all(s.interactive for s in policy_gradient) if policy_gradient else bool(steps) and interactive
        ):
            # the setting picks only the policy-gradient estimator, while every route trains on
            # multi-turn episodes: online RL whichever it picks (TAXONOMY.md: where the samples come from);
            # so too a trainer of no loss read here that is run on an environment of several turns
            result.role, result.primary = "training", "ONLINE_RL"
        elif set(routes) <= {"GRPO", "PPO"} and distilled:
            # the setting picks only the estimator of rewards that are a teacher's log-probabilities:
            # on-policy distillation whichever it picks
            result.role, result.primary = "training", "SFT"
            routes = ["DISTILLATION", *routes]
        else:
            result.role, result.primary = "launcher", "CONFIG_DEPENDENT"
        labels = [result.primary, *routes]
    elif not stages and not steps and any(f.signal == "dispatch" and f.variant == BY_NAME for f in findings):
        # the trainer class run is looked up by a setting's value (``getattr(trainers, cfg.trainer)``):
        # a launcher whose routes are the looked-up module's, not this file's
        result.role, result.primary = "launcher", "CONFIG_DEPENDENT"
        labels = ["CONFIG_DEPENDENT"]
    elif not script and len(defined := _trainer_classes(stages)) >= MANY_ROUTES:
        # a library of trainer classes for three routes or more (SFT, reward model, PPO, ...) runs
        # none of them: the script or config that picks one decides the route (functions for each
        # stage may be a pipeline that chains them, SFT then reward model then PPO: the last stands)
        result.role, result.primary = "launcher", "CONFIG_DEPENDENT"
        result.possible_routes = sorted(defined)
        labels = ["CONFIG_DEPENDENT", *result.possible_routes]
    elif stages:
        result.role = "training"
        for stage in stages:
            label = STAGE_LABELS.get(stage.kind, "NONE_TRAINING")
            if stage.interactive:
                labels += ["ONLINE_RL", label]
            else:
                labels.append(label)
            if stage.data_source == "distilled":
                labels.append("DISTILLATION")
        last = stages[-1]
        computed = {f.kind for f in findings if f.signal in ("loss", "gradient_step") and f.kind}
        built = any(e.detector == "TrainerConstruction" for s in stages for e in s.evidence)
        if not script and not built and len(stages) > 1 and last.kind not in computed:
            # a library defining several trainers runs none after another (a pipeline would build
            # them): the one whose loss it writes out is what it implements, the rest keep a
            # framework's loss
            last = next((s for s in stages if s.kind in computed), last)
        result.primary = last.label
        if "data_output" in signals and "generation" in signals and result.primary != "DISTILLATION":
            labels.append("DISTILLATION")
        if any(
            f.signal == "scoring" and f.variant not in (*WEAK_SCORES, *METRICS, TRAINER_EVALUATION, JUDGE)
            for f in findings
        ):
            # a training file that also evaluates (a metric it computes by hand is its validation, a
            # judge it asks is its reward)
            labels.append("EVAL_ONLY")
    elif steps and masked:
        # the loss is in a helper of another file, the batch's targets are masked for cross-entropy
        # (or, in chosen/rejected pairs, for a preference loss)
        kind = masked[0].kind or "sft"
        result.role, result.primary = "training", STAGE_LABELS[kind]
        labels = [result.primary]
        stage = Stage(kind, evidence=[*masked[:1], *steps[:2]], decided_by="data", confidence="low")
        result.stages = [stage]
    elif steps:
        # Weights are updated but the loss has no recognised form: an honest unknown, never "no training".
        result.role, result.primary = "training", "UNKNOWN"
        stage = Stage("unknown", evidence=steps[:3], decided_by="loss", confidence="low")
        if environment:
            # whatever the loss, the samples it trains on are an environment's episodes (TAXONOMY.md:
            # online RL is where the samples come from)
            played = [f for f in findings if f.signal in ("interactive", "environment")]
            stage.interactive, stage.evidence = True, [*played[:1], *steps[:2]]
            result.primary, labels = "ONLINE_RL", ["ONLINE_RL"]
        result.stages = [stage]
    elif commands and not (all(f.routes[0] in WORK_ROLES for f in commands) and signals & OWN_WORK):
        # command lines written for a scheduler to run: the file launches what they run, the last
        # one making the final model (as a shell script's); an evaluation or a data generation it
        # launches beside work of its own (a reward running a test script) is part of that work
        launched = list(dict.fromkeys(r for f in commands for r in f.routes))
        runs = [f.routes[0] for f in commands if f.routes[0] not in WORK_ROLES]
        if runs:
            result.role, result.possible_routes = "launcher", [r for r in launched if r not in WORK_ROLES]
            result.primary = "ONLINE_RL" if "ONLINE_RL" in launched else runs[-1]
        else:  # it only launches evaluations or data generation
            result.primary = commands[-1].routes[0]
            result.role = WORK_ROLES[result.primary]
        labels = launched
    elif (
        "entry_point" in signals
        and masked
        and all(f.variant in DATA_SHAPES for f in findings if f.signal == "loss")
        and signals <= {"entry_point", "loss", "tensor_output", "data_output", "purpose"}
    ):
        # a script whose only evidence of training is targets masked for a loss, with no model run,
        # scored or stepped: it tokenises a dataset (and writes it) for a training elsewhere (a
        # library module that builds and caches such a dataset serves the SFT that loads it)
        result.role, result.primary = "none", "NONE_TRAINING"
    elif (
        "loss" in signals
        and not evaluated
        and (
            # (a reward model's class scores with its own no-gradient method: still the scorer)
            any(f.signal == "loss" and f.variant not in DATA_SHAPES - {SCORER_CLASS} for f in findings)
            or not signals & {"generation", "inference", "scoring"}
        )
    ):
        # masked targets in a file that runs a model score it (perplexity); elsewhere they are the
        # data of supervised training. A loss a trainer built to evaluate computes measures a model.
        result.role = "component"
        # (a clipped-ratio loss defined beside an estimate that centres rewards on their group's
        # mean is GRPO's, as it is for a step)
        losses = _grouped_by_estimate(
            [f for f in findings if f.signal == "loss"], findings, lambda f: f.variant in (None, "ppo")
        )
        kinds = [f.kind for f in losses if f.kind]
        # (the route most of its losses take first: a GRPO loss module that also offers a
        # leave-one-out baseline is GRPO's; a tie keeps the order they are written in)
        counts = Counter(kinds)
        kinds.sort(key=lambda k: -counts[k])
        labels = list(dict.fromkeys(STAGE_LABELS[k] for k in kinds if k in STAGE_LABELS))
        # a plain supervised term beside a more specific loss names the component last, as for a step
        # (a policy-gradient loss module also computes an auxiliary or contrastive cross-entropy); a
        # distillation loss is no such term
        distilled_component = any(f.kind == "sft" and f.data_source == "distilled" for f in losses)
        labels.sort(key=lambda label: label == "SFT" and not distilled_component)
        result.primary = labels[0] if labels else "NONE_TRAINING"
        if any(f.signal == "loss" and f.data_source == "distilled" for f in findings):
            labels.append("DISTILLATION")
        if environment and result.primary in ("GRPO", "PPO"):
            # a policy-gradient component whose samples are episodes of several turns (an experience
            # maker that retrieves between generations)
            result.primary, labels = "ONLINE_RL", ["ONLINE_RL", *labels]
    elif (
        environment
        and "reward_function" not in signals
        and not episode_rewards
        and (
            "entry_point" in signals
            or evaluation_place(result.path) is not None
            or not any(f.signal == "environment" and f.variant == DEFINED for f in findings)
            or any(f.signal == "scoring" and f.detector == "Scoring" and f.variant is None for f in findings)
        )
        and any(
            f.signal == "scoring"
            and f.variant not in (*WEAK_SCORES, *METRICS, JUDGE)
            and f.detector == "Scoring"
            for f in findings
        )
        and (evaluation_place(result.path) is not None or not _plugs_into_a_trainer(findings))
    ):
        # an environment driven by (or defined in) evaluation code trains nothing: an agent's benchmark
        # (reward functions scoring a trainer's samples serve training, whatever checker they call;
        # a library module defining an environment class, not kept among evaluation code, serves
        # whoever runs it when the only evaluation code it uses is a benchmark's package: its world
        # is that benchmark's tasks)
        result.role, result.primary = "eval", "EVAL_ONLY"
    elif (
        "entry_point" in signals
        and "reward_function" not in signals
        and not episode_rewards
        and any(f.signal == "environment" and f.variant is None for f in findings)
        and not _defines_rl(findings, played=False)
    ):
        # a script that plays an environment's episodes (resets and steps one it neither defines nor
        # builds) and trains nothing evaluates a policy, or collects its episodes to train on later
        if "data_output" in signals and purpose(findings) == TRAINING_DATA:
            result.role, result.primary = "data_generation", "DISTILLATION"
        else:
            result.role, result.primary = "eval", "EVAL_ONLY"
    elif (
        environment
        and not ("entry_point" in signals and not episode_rewards and not _defines_rl(findings))
        and not _writes_its_episodes(findings, signals)
    ):
        # (a script's own turn loop may only demo or evaluate; an environment defined, or a reward
        # reading tool results or crediting an episode's turns, serves training wherever it is run from)
        result.role, result.primary = "component", "ONLINE_RL"
    elif ("environment" in signals and not (_only_rollouts(findings) and _reports_a_metric(findings))) or (
        not _reports_a_metric(findings)
        and (
            "reward_function" in signals
            or (
                "reward_named" in signals
                and (not signals & {"inference", "generation"} or "entry_point" not in signals)
            )
        )
    ):
        # a verifier (or an environment that ends every episode after one action) serves single-turn
        # RL; a reward that asks a model is a reward still in a library module (an LLM judge), while
        # a script running a model beside reward-named code serves or evaluates a reward model, and a
        # script that aggregates the scores into a metric evaluates with them
        result.role, result.primary = "component", "GRPO"
    elif signals & {"inference", "tensor_output"} == {"inference", "tensor_output"} and not signals & {
        "generation",
        "scoring",
        "data_output",
    }:
        if any(f.signal == "tensor_output" and f.variant == LOGITS for f in findings):
            # the model's logits saved: a teacher's output distributions, soft labels a student is
            # distilled on — data generation
            result.role, result.primary = "data_generation", "DISTILLATION"
        else:
            # a model run without gradients and tensors saved, no text: weights converted or
            # quantised, features extracted for another file — nothing trained, evaluated or generated
            result.role, result.primary = "none", "NONE_TRAINING"
    elif (
        signals & {"generation", "inference"}
        and "data_output" in signals
        and purpose(findings) == TRAINING_DATA
        and (
            # (a judge's ratings the only scores, besides filters: one judge at least)
            {f.variant for f in findings if f.signal == "scoring"} - set(WEAK_SCORES) == {JUDGE}
            or _checks_data_it_makes(findings, result.path)
        )
    ):
        # a model's outputs judged by a model, or checked against their references, and written as
        # data to train on (a judge keeping the answers it rates best, a teacher's correct traces):
        # data generation, the judge or the check its filter
        result.role, result.primary = "data_generation", "DISTILLATION"
    elif signals & {"generation", "inference"} and "data_output" in signals and "scoring" not in signals:
        if (place := evaluation_place(result.path)) is not None:
            # written outputs of a file kept among evaluation code are a benchmark's answers, to be
            # judged or scored by the next file
            _placed(result, f"the file lies among evaluation code ({place}): what it writes are answers")
            result.role, result.primary = "eval", "EVAL_ONLY"
        elif (place := data_generation_place(result.path, strict=True)) is not None:
            # written outputs of a file named for synthesising or distilling are data, whatever its
            # names call them (``synthesis/generate.py`` collecting ``predictions``)
            _placed(result, f"the file is named for making data ({place}): what it writes is data")
            result.role, result.primary = "data_generation", "DISTILLATION"
        elif purpose(findings) == ANSWERS:
            # what it writes answers a benchmark's held-out questions, for a judge or a metric
            result.role, result.primary = "eval", "EVAL_ONLY"
        else:
            # a model's outputs (text, or labels, scores and logits from a forward pass) written out
            # as a dataset: data generation
            result.role, result.primary = "data_generation", "DISTILLATION"
    elif (
        signals & {"generation", "inference"}
        and "scoring" not in signals
        and evaluation_place(result.path) is None
        and (place := data_generation_place(result.path)) is not None
    ):
        # a model run whose outputs leave by a way not recognised here, in a file named for making
        # data (generate_questions.py, synth/): data generation, not an evaluation
        _placed(result, f"the file is named for making data ({place}): what it generates is data")
        result.role, result.primary = "data_generation", "DISTILLATION"
    elif (
        signals & {"generation", "inference"}
        and "scoring" not in signals
        and evaluation_place(result.path) is None
        and purpose(findings, written=False) == TRAINING_DATA
    ):
        # a model's outputs made to be trained on (a teacher's, a training split's answers,
        # conversations or pairs), though how they are written is not recognised here
        result.role, result.primary = "data_generation", "DISTILLATION"
    elif (
        any(f.signal == "generation" and f.variant == ROLLOUT for f in findings)
        and "scoring" not in signals
        and not _reports_a_metric(findings)
    ):
        # a sampling engine the trainer loads the policy's weights into as it trains: the RL loop's
        # rollout worker or weight-synced server, whichever file holds the update (group-relative
        # unless that file says otherwise, as for a reward function)
        result.role, result.primary = "component", "GRPO"
    elif (
        signals & {"generation", "inference"}
        and signals <= {"generation", "inference", "entry_point", "purpose"}
        and all(f.variant == SERVED for f in findings if f.signal in ("generation", "inference"))
    ):
        if "generation" in signals:
            # a model served to whoever asks (HTTP routes answering completions): a model run with no
            # weight update, as a chat demo's and a reward model's scoring server are
            result.role, result.primary = "eval", "EVAL_ONLY"
        else:
            # a retriever's encoder answering queries: the index a search tool serves, no model's answer
            result.role, result.primary = "none", "NONE_TRAINING"
    elif (
        "scoring" in signals
        and not signals & {"generation", "inference"}
        and purpose(findings) == TRAINING_DATA
        and any(f.signal == "purpose" and f.variant == TRAINING_DATA for f in findings)
    ):
        # scores computed with no model run, over data the file names as training data (a teacher's
        # instances kept where correct, pairs kept by their score margin): a filter of the dataset it
        # builds, not an evaluation of a model
        result.role, result.primary = "none", "NONE_TRAINING"
    elif signals & {"generation", "scoring"} or (signals & {"inference"} and script):
        result.role, result.primary = "eval", "EVAL_ONLY"
    elif "inference" in signals:
        # a library module that runs a model forward and neither scores nor samples text (a sampling
        # loop's helpers, a feature extractor): what uses it decides; on its own it evaluates nothing
        result.role, result.primary = "none", "NONE_TRAINING"
    elif not signals - {"entry_point", "purpose"} and any(
        f.signal == "scoring" and f.variant == SCORER for f in findings
    ):
        # nothing but functions scoring predictions against references (``math_equal(pred, ref)``,
        # ``f1_score(prediction, ground_truth)``): an evaluation's scorer
        result.role, result.primary = "eval", "EVAL_ONLY"
    elif (
        script
        and not signals - {"entry_point", "purpose", "data_output"}
        and any(f.signal == "scoring" and f.variant == EVALUATION_CALL for f in findings)
    ):
        # a script that does nothing recognised but hand its work to a routine named for evaluating
        # (``evaluate_vllm(llm, reward_fn, data)``, ``evaluator.evaluate()``), writing its results at
        # most: an evaluation, by that name alone
        result.role, result.primary = "eval", "EVAL_ONLY"
    result.labels = list(dict.fromkeys([result.primary, *labels]))
    if result.role not in WORK_ROLES.values():
        # what a model's outputs are for is evidence of an evaluation or a data generation only: in a
        # file that trains or launches, an ``eval_dataset`` or a ``predictions`` list claims nothing
        result.findings = [f for f in result.findings if f.signal != "purpose"]


def _checks_data_it_makes(findings: list[Finding], path: str) -> bool:
    """Say whether a file's scores only check answers it writes as training data.

    Plain answer checks (no benchmark's tasks, no judge), a file named for training data, no cue at
    all of a benchmark's answers, and a place not among evaluation code: rejection sampling (a
    teacher's traces kept where correct), not an evaluation of the model. Answering a training
    split's prompts alone says no more than an evaluation on training data.
    """
    return (
        {f.variant for f in findings if f.signal == "scoring"} <= {None, *WEAK_SCORES}
        and not any(f.signal == "purpose" and f.variant == ANSWERS for f in findings)
        and any(f.signal == "purpose" and f.variant == TRAINING_DATA for f in findings)
        and evaluation_place(path) is None
    )


EVALUATION_FOLDERS = frozenset({"eval", "evals", "evaluation", "evaluations", "benchmark", "benchmarks"})
"""Folders a repository keeps its evaluation code in."""
EVALUATION_FILE_WORDS = frozenset({"eval", "evaluate", "evaluation", "benchmark"})
"""First words of an evaluation script's name (``eval_search.py``, ``evaluate.py``)."""


def _place(path: str) -> tuple[list[str], str, list[str]]:
    """Split a path into its two nearest folders (lower-cased), its file name and its stem's words.

    Only the nearest folders: one named so far above the workspace says nothing of the file.
    """
    *folders, name = re.split(r"[\\/]", path)
    stem_words = re.split(r"[_\-.]", name.rsplit(".", 1)[0].lower())
    return [f.lower() for f in folders[-2:]], name, stem_words


def evaluation_place(path: str) -> str | None:
    """Return the folder or file name that places a file among evaluation code, if any."""
    folders, name, stem_words = _place(path)
    if stem_words[0] in EVALUATION_FILE_WORDS:
        return name
    if DATA_GENERATION_WORDS & set(stem_words):
        return None  # ``evals/make_sft_data.py``: the file's own name says what it makes
    return next((f"{f}/" for f in reversed(folders) if f in EVALUATION_FOLDERS), None)


DATA_GENERATION_WORDS = frozenset(
    {
        *("data", "dataset", "datasets", "synth", "synthesis", "synthesize", "synthetic"),
        *("distill", "distillation", "questions", "instructions", "trajectories"),
    }
)
"""Words of a file's or folder's name that say it makes training data (``generate_questions.py``)."""


SYNTHESIS_WORDS = frozenset({"synth", "synthesis", "synthesize", "synthetic", "distill", "distillation"})
"""Words of DATA_GENERATION_WORDS that say only making data: ``questions`` or ``trajectories`` also name
what a benchmark's runner answers (``natural_questions/``)."""


def data_generation_place(path: str, strict: bool = False) -> str | None:
    """Return the folder or file name that says a file makes training data, if any.

    A folder counts by its name, or by a word of it that names synthesising data where the folder is
    a package, named as Python names one (``synthesis_cot/``; a repository's own folder,
    ``my-distillation-project/``, says what the project is about, not what each of its files does).
    ``strict``: only names of synthesising or distilling (:data:`SYNTHESIS_WORDS`) in the file's own
    name, which outweigh what its variables are called.
    """
    folders, name, stem_words = _place(path)
    named = SYNTHESIS_WORDS if strict else DATA_GENERATION_WORDS
    if named & set(stem_words):
        return name
    if strict:
        return None  # (a folder's name says what its project is about, not what a file does)
    return next(
        (
            f"{f}/"
            for f in reversed(folders)
            if f in named or (f.isidentifier() and SYNTHESIS_WORDS & set(f.split("_")))
        ),
        None,
    )


def purpose(findings: list[Finding], written: bool = True) -> str | None:
    """Return what a model's outputs are for, by the more of the file's cues (:mod:`.generation_purpose`).

    ``ANSWERS`` or ``TRAINING_DATA``; None without cues, or with as many of each (a pipeline that makes
    data and evaluates it, with nothing to tell which it mostly does). ``written``: the file writes its
    outputs, so records shaped for training and a training split's prompts count as data too. A routine
    named for evaluating that the file calls (``eval_model(args)``) is one cue of answers, unless scores
    filter the samples the file keeps.
    """
    said = Counter(f.variant for f in findings if f.signal == "purpose")
    scored = {f.variant for f in findings if f.signal == "scoring"}
    # (not where scores decide which samples are kept: what is evaluated there is the data)
    evaluating = EVALUATION_CALL in scored and SCORE_FILTER not in scored
    answers = said[ANSWERS] + evaluating
    data = said[TRAINING_DATA] + (said[TRAINING_SHAPED] if written else 0)
    return ANSWERS if answers > data else TRAINING_DATA if data > answers else None


def _placed(result: Classification, message: str) -> None:
    """Add the evidence that the file's path decided its role (it points at the file, line 1)."""
    result.findings.append(Finding("Place", "place", message=message, line=1))


def _writes_its_episodes(findings: list[Finding], signals: AbstractSet[str]) -> bool:
    """Say whether a file that plays episodes with a model writes them out, and defines nothing of RL.

    A trainer's rollout worker hands its episodes to the update in memory; episodes written to a file
    by code that defines no environment and no reward are collected (a teacher's traces, a
    benchmark's runs): what they are for decides the file, as for any generation written out.
    """
    return (
        {"data_output", "generation"} <= signals
        and "reward_function" not in signals
        and not _defines_rl(findings)
        and not any(f.signal == "interactive" and f.detector == "RewardFunction" for f in findings)
    )


def _defines_rl(findings: list[Finding], played: bool = True) -> bool:
    """Say whether a file has what online RL is made of: an environment, or a reward of tool results.

    ``played``: an environment the file only resets and steps counts too (not where the question is
    whether the file plays one it neither defines nor builds).
    """
    return any(
        (f.signal == "environment" and (played or f.variant is not None)) or f.variant == SCORED_TOOL_RESULTS
        for f in findings
    )


def _plugs_into_a_trainer(findings: list[Finding]) -> bool:
    """Say whether the file's environment specialises an RL framework's tool or interaction class.

    verl's ``BaseTool``/``BaseInteraction`` (the framework table's environments) run inside that
    framework's training rollouts: a benchmark's package it steps (tau-bench's ``get_env``) is the
    world the policy is trained in, not an evaluation.
    """
    return any(f.signal == "environment" and f.detector == "FrameworkEntry" for f in findings)


def _only_rollouts(findings: list[Finding]) -> bool:
    """Say whether the file's only environment is a rollout function (an evaluation may sample so too)."""
    return all(f.detector == "RolloutFunction" for f in findings if f.signal == "environment")


def _reports_a_metric(findings: list[Finding]) -> bool:
    """Say whether a script (it runs when executed) aggregates scores into a metric by hand."""
    return any(f.signal == "entry_point" for f in findings) and any(
        f.signal == "scoring" and f.variant in METRICS for f in findings
    )


WEAK_SCORES = (SCORE_FILTER, SCORER, EVALUATION_CALL)
"""Variants of a ``scoring`` finding that say a file evaluates only where it shows nothing else."""
DATA_SHAPES = frozenset({MASKED_TARGETS, PREFERENCE_PAIRS, SCORER_CLASS})
"""Variants of a ``loss`` finding read from the data's shape, not from a loss: the weakest evidence of a
stage, and in a file that runs a model, as likely what it measures."""
OWN_WORK = frozenset(
    {"reward_function", "reward_named", "environment", "interactive", "generation", "scoring"}
)
"""Signals of a file's own work, beside which the evaluation or data generation it launches does not
decide what the file is."""
WORK_ROLES = {"EVAL_ONLY": "eval", "DISTILLATION": "data_generation"}
"""Labels a launched command can have that train nothing, and the role of a file launching only them."""
GENERIC_VARIANTS = frozenset(
    {"hf_trainer", "seq2seq", "composer_trainer", "megatron_pretrain", "sat_training"}
)
"""Variants of a generic trainer, whose stage is whatever loss it is given."""


def _deciding(findings: list[Finding], steps: list[Finding]) -> list[Finding]:
    """Return the findings that make stages: what the gradient steps' losses show decides over names.

    A classified loss replaces the file-wide loss heuristic, a generic trainer's default stage and a
    stage only a name gives to a step whose loss is unseen, where they disagree with it; a named
    trainer of another kind stays (a file may run two stages).
    """
    named = [f for f in findings if f.signal == "stage"]
    known = [f for f in steps if f.kind is not None]
    if any(f.kind != "sft" and f.variant not in GENERIC_VARIANTS for f in named):
        # a loss known only to come out of a model's forward pass does not say what that model
        # computes: the trainer or framework the file names says it (trlx's ILQL trainer)
        known = [f for f in known if not f.message.endswith(FORWARD_ONLY)]
    if not known and named and all(f.variant in HANDED_LOSS_LOOPS for f in named):
        # (the loss the handed function returns, where it is read, is a step's; else a loss the file
        # writes decides over the loop's default stage, as a step's loss does over a generic trainer's)
        written = [
            f
            for f in findings
            if f.signal == "loss" and f.kind in STAGE_LABELS and f.variant not in DATA_SHAPES
        ]
        if written:
            return written
    if not known:
        # a framework's policy-gradient learner subclassed here, the step in the framework: the
        # advantages the file computes for it say whether it is GRPO (oat's PPOLearner, Dr. GRPO)
        if not any(f.detector == "HandwrittenLoss" and f.kind == "grpo" for f in findings) and not any(
            ADVANTAGES_HANDED in f.message for f in named
        ):
            # (a batch-wide mean is no group's: rewards shaped into prompts' groups are; the advantages
            # handed to the update are the file's, whatever its estimate says)
            return named
        return _grouped_by_estimate(named, findings, lambda f: f.variant in (None, "ppo"))
    known = _grouped_by_estimate(known, findings, _plain_step)
    kinds = {f.kind for f in known}
    # (a step named only by the function, class or module it sits in, its loss unseen, says nothing
    # against a loss the file's, or the workspace's, code shows: a name never decides against a loss)
    kept = [
        f
        for f in named
        if f.kind in kinds
        or (f.detector not in ("HandwrittenLoss", "NamedStep") and f.variant not in GENERIC_VARIANTS)
    ]
    return kept + known


def _grouped_by_estimate(
    known: list[Finding], findings: list[Finding], plain: Callable[[Finding], bool]
) -> list[Finding]:
    """Make a plain policy-gradient stage GRPO when the file's only advantage estimate is group-relative.

    The advantages often reach the step through a generator or a batch object the loss slice cannot
    follow (``yield ..., advantages``); an estimate in the same file that centres rewards on their own
    group's mean, with no other baseline beside it, is the one the step uses. So it is for a remote
    service's policy-gradient loss (Tinker's ``importance_sampling``), handed the advantages, and for a
    framework's PPO learner the file subclasses (oat's ``PPOLearner`` running Dr. GRPO). ``plain``
    says which PPO-family findings carry no variant of their own.
    """
    grouped = _group_relative(findings)
    remote_only = False
    if grouped is None and not any(f.detector == "AdvantageEstimate" for f in findings):
        # no assignment estimates advantages, but the file normalises scores within each prompt's
        # group (a helper returning ``s.view(-1, G)`` centred and scaled per row): the estimate a
        # remote step's loss, not seen here, is handed (a step whose loss shows stays as it shows)
        grouped = next((f for f in findings if f.detector == "HandwrittenLoss" and f.kind == "grpo"), None)
        remote_only = True
    if grouped is None:
        return known
    return [
        replace(
            f, kind="grpo", variant="grpo", message=f"{f.message}; {grouped.message} (line {grouped.line})"
        )
        if f.kind == "ppo" and plain(f) and (not remote_only or f.message.startswith(REMOTE_STEP))
        else f
        for f in known
    ]


def _plain_step(found: Finding) -> bool:
    """Say whether a step's loss is plain policy gradient (or a remote service's), no variant shown.

    A loss only named for policy gradient, no critic named (``policy_loss += -advantage * log_prob``
    over a list of trajectories the slice cannot follow), shows no variant either.
    """
    return (
        PLAIN_POLICY_GRADIENT in found.message
        or found.message.startswith(REMOTE_STEP)
        or (found.kind == "ppo" and found.variant is None)
    )


def _trainer_classes(stages: list[Stage]) -> set[str]:
    """Routes of the stages a file defines as trainer classes.

    A framework trainer subclassed (``class RewardTrainer(Trainer)``), or a class whose loss hook a
    framework differentiates.
    """
    return {
        STAGE_LABELS[s.kind]
        for s in stages
        if s.kind in STAGE_LABELS
        and s.kind != "unknown"
        and any(e.detector == "TrainerSubclass" or LOSS_HOOK in e.message for e in s.evidence)
    }


def _group_relative(findings: list[Finding]) -> Finding | None:
    """Return the file's advantage estimate when every estimate in it centres rewards on their group."""
    estimates = {f.kind for f in findings if f.detector == "AdvantageEstimate"}
    if estimates != {"grpo"}:
        return None
    return next(f for f in findings if f.detector == "AdvantageEstimate")


def _stages(found: list[Finding], policy_gradient_losses: list[Finding]) -> list[Stage]:
    """One stage per kind and variant, in order of first appearance, with all its evidence.

    A pretraining mix joins the file's policy-gradient stage; where its policy step is not stepped
    here (an abstract ``rl_step``) the file's policy-gradient loss (``policy_gradient_losses``: GAE
    advantages, a clipped value loss) names the stage it regularises.
    """
    stages: dict[tuple[str, str | None], Stage] = {}
    for f in found:
        key = (f.kind or "unknown", f.variant)
        if key not in stages:
            stages[key] = Stage(f.kind or "unknown", f.variant, f.on_policy, None, f.data_source)
        stage = stages[key]
        stage.evidence.append(f)
        stage.on_policy = stage.on_policy or f.on_policy
        stage.data_source = stage.data_source or f.data_source
    merged: dict[str, Stage] = {}
    for stage in stages.values():
        # A kind seen with a variant and without one (a subclass and its construction) is one stage.
        same = merged.get(stage.kind)
        if same is not None and (
            same.variant is None or stage.variant is None or same.variant == stage.variant
        ):
            same.variant = same.variant or stage.variant
            same.evidence += stage.evidence
            same.on_policy = same.on_policy or stage.on_policy
            same.data_source = same.data_source or stage.data_source
        else:
            merged[stage.kind if same is None else f"{stage.kind}:{stage.variant}"] = stage
    rl = [s for s in merged.values() if s.kind in POLICY_GRADIENT]
    mixes = [k for k, s in merged.items() if s.kind == "sft" and s.variant == PRETRAINING_MIX]
    for mix in mixes:
        if rl:
            # a pretraining mix stepped beside policy updates (PPO-ptx) regularises that RL stage
            rl[-1].evidence += merged.pop(mix).evidence
        elif policy_gradient_losses:
            # an RL trainer whose policy update a subclass defines, stepping the mix itself: the stage
            # is the one its advantages and value loss are computed for (GRPO only when every one of
            # them is group-relative)
            grouped = {f.kind for f in policy_gradient_losses} == {"grpo"}
            loss = next(f for f in policy_gradient_losses if grouped or f.kind != "grpo")
            stage = merged.pop(mix)
            rl.append(Stage(loss.kind or "ppo", loss.variant, True, None, stage.data_source))
            rl[-1].evidence = [loss, *stage.evidence]
            merged[f"{loss.kind}:{loss.variant}"] = rl[-1]
        else:
            merged[mix].variant = None  # with no RL stage to mix into, it is plain language modelling
    return sorted(merged.values(), key=lambda s: min((f.line, f.col) for f in s.evidence))
