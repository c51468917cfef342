"""What went wrong in a run's training: crashes, NaN losses, flat rewards, rollouts without environment.

The commands that ran training code are read first: each signal points at the command (and so at the
transcript line and the revision it ran). Then each model folder's own trainer log
(``trainer_state.json``, as the collector read it): those signals point at that log. The failure
decision (arb_audit.analyzer.audit) orders them into a first failure and its downstream effects.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.routes import training_stages
from arb_audit.analyzer.scripts_run import ScriptRun
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import ArtifactInfo, Command
from arb_audit.taxonomy.routes import TRAINING_KINDS

_NAN = re.compile(
    r"\b(?:loss|train_loss|grad_norm|kl)['\"]?\s*[:=]\s*['\"]?(?:nan|-?inf)\b|loss is nan|nan loss", re.I
)
_REWARD_STD = re.compile(r"['\"]?reward_std['\"]?\s*[:=]\s*([-+0-9.eE]+)")
_LAST_ERROR = re.compile(r"^([\w.]{0,80}(?:Error|Exception)\b.*)$", re.M)


@dataclass(slots=True)
class Signals:
    """The signals of what went wrong in a run's training, each as the evidence that shows it."""

    training_ran: list[Evidence] = field(default_factory=list)
    """Each command that ran training code."""
    crashed: list[Evidence] = field(default_factory=list)
    """Each such command that failed."""
    cut: list[Evidence] = field(default_factory=list)
    """Each such command still running when the transcript ends."""
    nan: list[Evidence] = field(default_factory=list)
    """Each run whose loss became NaN/inf (the commands' output, then the trainer logs)."""
    constant_reward: list[Evidence] = field(default_factory=list)
    """Each policy-gradient run whose reward never varied."""
    no_env_calls: list[Evidence] = field(default_factory=list)
    """Each run whose rollouts never called their environment (trainer logs)."""

    def training_commands(self) -> set[int]:
        """Return the commands that ran training code."""
        return {e.command_seq for e in self.training_ran if e.command_seq is not None}


def _pointer(command: Command, note: str) -> Evidence:
    return Evidence(
        "command",
        path=command.source_path,
        line=command.line,
        command_seq=command.seq,
        excerpt=excerpt(f"{command.command} → {note}", 240),
    )


def _error_line(command: Command) -> str:
    text = command.error or command.output_excerpt or ""
    found = _LAST_ERROR.findall(text)
    return found[-1] if found else (f"exit {command.exit_code}" if command.exit_code else "failed")


def run_signals(commands: list[Command], runs: list[ScriptRun], labels: dict[str, Classification]) -> Signals:
    """Return the failure signals of the training code that commands ran, each with its evidence."""
    by_seq = {c.seq: c for c in commands}
    signals = Signals()
    for run in runs:
        # A launcher (llamafactory-cli train sft.yaml) runs training too: its default route's stage.
        kinds = {s.kind for s in training_stages(labels.get(run.blob_sha))}
        command = by_seq.get(run.command_seq)
        if command is None or not kinds & TRAINING_KINDS:
            continue
        stage = sorted(kinds & TRAINING_KINDS)[0]
        signals.training_ran.append(_pointer(command, f"runs {run.path} ({stage})"))
        if not command.finished:
            signals.cut.append(_pointer(command, "still running when the transcript ends (cut off)"))
        elif not run.ok:
            signals.crashed.append(_pointer(command, _error_line(command)))
        output = command.output_excerpt or ""
        if _NAN.search(output):
            signals.nan.append(_pointer(command, "the loss became NaN/inf"))
        stds = [float(v) for v in _REWARD_STD.findall(output) if _number(v)]
        if len(stds) >= 2 and all(v == 0.0 for v in stds):
            signals.constant_reward.append(
                _pointer(
                    command, f"reward_std is 0 in all {len(stds)} logged steps: no advantage to learn from"
                )
            )
    return signals


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def log_signals(artifacts: list[ArtifactInfo], signals: Signals) -> None:
    """Add to ``signals`` what each model folder's trainer log shows (after the commands' own)."""
    for artifact in artifacts:
        facts, log = artifact.trainer_evidence, artifact.trainer_evidence.trainer_state
        if log is None:
            continue

        def cite(note: str, log: str = log, model: str = artifact.path) -> Evidence:
            return Evidence("log", path=log, excerpt=excerpt(f"{model}: {note}", 240))

        if facts.log_nonfinite:
            signals.nan.append(cite(f"non-finite {', '.join(facts.log_nonfinite)}"))
        if (std := facts.log_reward_std) is not None and std.logged >= 2 and std.zero == std.logged:
            signals.constant_reward.append(
                cite(f"reward_std is 0 in all {std.logged} logged steps: no advantage to learn from")
            )
        if (calls := facts.log_env_calls) is not None and calls.logged >= 2 and calls.zero == calls.logged:
            signals.no_env_calls.append(
                cite(f"its rollouts called the environment 0 times in all {calls.logged} logged steps")
            )
