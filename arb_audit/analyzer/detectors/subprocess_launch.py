"""A Python driver that runs training commands: ``subprocess.run(["trl", "grpo", ...])``, ``os.system``."""

from __future__ import annotations

import shlex

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.launchers import command_routes

RUNNERS = frozenset(
    {
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
    }
)
"""Functions that run a command line."""
KINDS = {"SFT": "sft", "DPO": "dpo", "GRPO": "grpo", "PPO": "ppo", "REWARD_MODEL": "reward_model"}


def _literal_words(node: cst.BaseExpression) -> list[str] | None:
    """Return the words of a literal command: a string, or a list/tuple of string literals."""
    if isinstance(node, cst.SimpleString) and isinstance(node.evaluated_value, str):
        try:
            return shlex.split(node.evaluated_value)
        except ValueError:
            return None
    if isinstance(node, cst.List | cst.Tuple):
        words = [e.value.evaluated_value for e in node.elements if isinstance(e.value, cst.SimpleString)]
        return [w for w in words if isinstance(w, str)]
    return None


class SubprocessLaunch(RouteDetector):
    """A script that runs a training command line runs that stage.

    Agents often drive their pipeline from Python: ``subprocess.run(["trl", "sft", ...])``,
    ``os.system("python -m openrlhf.cli.train_dpo ...")``, a verl entry point with
    ``algorithm.adv_estimator=grpo``. Only literal command lines are read: a command assembled at run
    time is not evidence of which route it runs.
    """

    TRIGGERS = ("subprocess", "os.system", "system(")

    VALID = (
        Valid("import subprocess\nsubprocess.run(['nvidia-smi'])\n"),
        Valid("import subprocess\nsubprocess.run(command, shell=True)\n"),
    )
    INVALID = (
        Invalid(
            "import subprocess\nsubprocess.run(['trl', 'sft', '--model_name_or_path', 'm'], check=True)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "import os\nos.system('python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo')\n",
            "stage",
            "grpo",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or not self.names(node.func) & RUNNERS:
            return
        words = _literal_words(node.args[0].value)
        if not words:
            return
        for label in command_routes(shlex.join(words)):
            if label in KINDS:
                self.report(node, "stage", f"runs {label} with {words[0]}", kind=KINDS[label])
