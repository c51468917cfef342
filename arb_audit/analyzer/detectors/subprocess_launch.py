"""A Python driver that runs training commands: ``subprocess.run(["trl", "grpo", ...])``, ``os.system``."""

from __future__ import annotations

import shlex

import libcst as cst

from arb_audit.analyzer.calls import RUNNERS
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.command_text import PLACEHOLDER, string_text
from arb_audit.analyzer.detectors.route_dispatch import COMMAND_TEXT
from arb_audit.analyzer.launchers import LAUNCHED_WORK, command_routes
from arb_audit.analyzer.shell_words import shell_words

KINDS = {
    "SFT": "sft",
    "DPO": "dpo",
    "GRPO": "grpo",
    "PPO": "ppo",
    "REWARD_MODEL": "reward_model",
    "MERGE": "merge",
}


ARG = PLACEHOLDER.strip()
"""A computed word of a command (a path, a count)."""
MAX_ALTERNATIVES = 8
"""The most command lines one list expands to through its ``a if flag else b`` words."""


def _list_words(node: cst.List | cst.Tuple) -> list[list[str]]:
    """Return the command lines a literal list or tuple of words may be.

    A word picked by a condition between two literals (``"lora_finetune" if use_lora else
    "full_finetune"``) gives one command line per branch; any other computed word (``str(n)``, a path)
    stands for one word, so the words after it keep their places (a flag's value is not taken for the
    recipe), except before the first literal word, where it is a program the file computes.
    """
    lines: list[list[str]] = [[]]
    for element in node.elements:
        value = element.value
        choices = [string_text(value)]
        if type(value) is cst.IfExp:
            choices = [string_text(value.body), string_text(value.orelse)]
        elif type(value) is cst.Attribute and value.attr.value == "executable":
            choices = ["python"]  # ``sys.executable``: this interpreter runs the script that follows
        # (each element is one word of the command, an f-string's fields in it one placeholder each)
        words = [c.replace(PLACEHOLDER, ARG) for c in choices if c is not None]
        if len(words) < len(choices) or not words:
            words = [ARG] if lines[0] else []
        if words:
            lines = [[*line, word] for line in lines for word in words][:MAX_ALTERNATIVES]
    return [line for line in lines if line]


def _literal_words(
    node: cst.BaseExpression, bound: dict[str, cst.BaseExpression], depth: int = 0
) -> list[list[str]]:
    """Return the words of each command line a literal command may be: a string, an f-string, a list.

    A name is read through the value the file last bound it to, and ``command.split()`` through its
    receiver; an f-string's replacement fields stand for one word each (a path, a count), so the words
    around them (``tune run ... full_finetune_distributed --config {path}``) still say what runs.
    """
    if depth > 4:
        return []
    if isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        found = string_text(node)
        words = shell_words(found) if found is not None else None
        return [words] if words else []
    if type(node) is cst.Name and node.value in bound:
        return _literal_words(bound[node.value], bound, depth + 1)
    if (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value == "split"
        and not node.args
    ):
        return _literal_words(node.func.value, bound, depth + 1)
    if isinstance(node, cst.List | cst.Tuple):
        return _list_words(node)
    return []


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
            "import subprocess\n"
            "command = f'tune run --nproc_per_node {n} full_finetune_distributed --config {p}'\n"
            "subprocess.run(command.split(), check=True)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "import os\nos.system('python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo')\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "import subprocess\n"
            "subprocess.run(['mergekit-yaml', config_path, out_dir, '--cuda'], check=True)\n",
            "stage",
            "merge",
        ),
        Invalid(
            "import subprocess\ncommand = ['tune', 'run', '--nproc_per_node', str(n),\n"
            "           'lora_finetune_distributed' if lora else 'full_finetune_distributed',\n"
            "           '--config', str(path)]\nsubprocess.run(command, check=True)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "import subprocess, sys\nsubprocess.run([sys.executable, 'train_dpo.py', '--beta', str(b)])\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import subprocess\nsubprocess.run(['trl', 'dpo' if use_dpo else 'sft', '--model', m])\n",
            "dispatch",
        ),
        Invalid(
            "import os\nos.system('python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo '\n"
            "          'actor_rollout_ref.rollout.multi_turn.enable=True')\n",
            "interactive",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.bound: dict[str, cst.BaseExpression] = {}
        """The string value each plain name was last bound to (``command = f"tune run ..."``)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString | cst.List):
            for target in node.targets:
                if type(target.target) is cst.Name:
                    self.bound[target.target.value] = node.value

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args or not self.names(node.func) & RUNNERS:
            return
        lines = _literal_words(node.args[0].value, self.bound)
        routes = [command_routes(shlex.join(words)) for words in lines]
        trained = {label for labels in routes for label in labels if label in KINDS}
        if len(trained) >= 2 and len({frozenset(set(labels) & trained) for labels in routes}) >= 2:
            # a word picked by a setting picks the stage (``"dpo" if use_dpo else "sft"``): the
            # setting decides the route, as a launcher's option does
            message = f"runs {lines[0][0]} with a stage a setting picks"
            self.report(node, "dispatch", message, routes=tuple(sorted(trained)))
            return
        for words, labels in zip(lines, routes, strict=True):
            self._report_command(node, words, labels)

    def _report_command(self, node: cst.Call, words: list[str], labels: list[str]) -> None:
        """Report what one command line runs: a stage, a launched evaluation or data generation."""
        for label in labels:
            if label in KINDS:
                self.report(node, "stage", f"runs {label} with {words[0]}", kind=KINDS[label])
            elif label in LAUNCHED_WORK:
                # an evaluation or a data generation it runs (``lm_eval --model vllm ...``): the
                # file's work when nothing else is, as a launcher's command lines are
                message = f"runs a command line that runs {label} with {words[0]}"
                self.report(node, "dispatch", message, routes=(label,), variant=COMMAND_TEXT)
        if "ONLINE_RL" in labels:
            # (a multi-turn rollout switched on in the command: its policy-gradient stage is online)
            self.report(node, "interactive", f"runs {words[0]} with multi-turn rollouts", interactive=True)
