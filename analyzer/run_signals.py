"""What the commands that ran training code show went wrong: crashes, NaN losses, rewards that never vary.

Each signal points at the command (and so at the transcript line and the revision it ran); the failure
decision (analyzer.audit) orders them into a first failure and its downstream effects.
"""

from __future__ import annotations

import re
from typing import Any

from analyzer.classify import Classification
from analyzer.routes import training_stages
from analyzer.scripts_run import ScriptRun
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import Command

TRAINING_KINDS = frozenset({"sft", "dpo", "grpo", "ppo", "reward_model", "merge"})
_NAN = re.compile(
    r"\b(?:loss|train_loss|grad_norm|kl)['\"]?\s*[:=]\s*['\"]?(?:nan|-?inf)\b|loss is nan|nan loss", re.I
)
_REWARD_STD = re.compile(r"['\"]?reward_std['\"]?\s*[:=]\s*([-+0-9.eE]+)")
_LAST_ERROR = re.compile(r"^([\w.]{0,80}(?:Error|Exception)\b.*)$", re.M)


def _pointer(command: Command, note: str) -> dict[str, Any]:
    return Evidence(
        "command",
        path=command.source_path,
        line=command.line,
        command_seq=command.seq,
        excerpt=excerpt(f"{command.command} → {note}", 240),
    ).to_json()


def _error_line(command: Command) -> str:
    text = command.error or command.output_excerpt or ""
    found = _LAST_ERROR.findall(text)
    return found[-1] if found else (f"exit {command.exit_code}" if command.exit_code else "failed")


def run_signals(
    commands: list[Command], runs: list[ScriptRun], labels: dict[str, Classification]
) -> dict[str, list[dict[str, Any]]]:
    """Return the failure signals of the training code that commands ran, each with its evidence."""
    by_seq = {c.seq: c for c in commands}
    signals: dict[str, list[dict[str, Any]]] = {
        "training_ran": [],
        "crashed": [],
        "cut": [],
        "nan": [],
        "constant_reward": [],
    }
    for run in runs:
        # A launcher (llamafactory-cli train sft.yaml) runs training too: its default route's stage.
        kinds = {s.kind for s in training_stages(labels.get(run.blob_sha))}
        command = by_seq.get(run.command_seq)
        if command is None or not kinds & TRAINING_KINDS:
            continue
        stage = sorted(kinds & TRAINING_KINDS)[0]
        signals["training_ran"].append(_pointer(command, f"runs {run.path} ({stage})"))
        if not command.finished:
            signals["cut"].append(_pointer(command, "still running when the transcript ends (cut off)"))
        elif not run.ok:
            signals["crashed"].append(_pointer(command, _error_line(command)))
        output = command.output_excerpt or ""
        if _NAN.search(output):
            signals["nan"].append(_pointer(command, "the loss became NaN/inf"))
        stds = [float(v) for v in _REWARD_STD.findall(output) if _number(v)]
        if len(stds) >= 2 and all(v == 0.0 for v in stds):
            signals["constant_reward"].append(
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
