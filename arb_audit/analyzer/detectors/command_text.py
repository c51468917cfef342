"""Command lines a Python launcher writes for a scheduler to run: Slurm, Beaker, Modal, tmux, a test."""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.route_dispatch import COMMAND_TEXT, SUBCOMMAND_WORDS
from arb_audit.analyzer.launchers import LAUNCHED_WORK, LAUNCHERS, command_routes, script_work
from arb_audit.analyzer.shell_words import shell_words
from arb_audit.analyzer.trainers import LABEL_KINDS, route_word

NOT_COMMANDS = frozenset({"help", "description", "epilog", "usage"})
"""Keyword arguments whose text describes commands to a person (argparse's ``help=``)."""
MAX_COMMAND_TEXT = 20_000
"""Characters of one string read for command lines (a launcher's command is far shorter; a string of
megabytes is data, and splitting it into shell words would cost seconds)."""
PLACEHOLDER = " ARG "
"""What an f-string's replacement field stands for: one word (a path, a count, a setting)."""


def string_text(node: cst.BaseExpression) -> str | None:
    """Return a string literal's text, an f-string's with each field a placeholder, or a concatenation's.

    None for a literal libcst parses but cannot evaluate (a hostile file's unknown named escape): a
    name bound to it then holds nothing, not its old value.
    """
    if type(node) is cst.SimpleString:
        try:
            value = node.evaluated_value
        except (SyntaxError, ValueError):
            return None
        return value if isinstance(value, str) else None
    if type(node) is cst.FormattedString:
        return "".join(p.value if type(p) is cst.FormattedStringText else PLACEHOLDER for p in node.parts)
    if type(node) is cst.ConcatenatedString:
        left, right = string_text(node.left), string_text(node.right)
        return None if left is None or right is None else left + right
    return None


TRAINING_STEMS = frozenset({"train", "training", "finetune", "tune"})
"""Words of a script's name that say it trains, whatever route (``train_lora``, ``finetune``)."""


def _script_route(script: str) -> str | None:
    """Return the route a launched script or module is named for (``start_grpo.py``, ``pretrain_gpt``).

    A script named only for training (``sft/train_lora.py``, ``experiment1.sft.train_lora``) is named
    for its route by the package it sits in.
    """
    path = PurePosixPath(script.replace(".", "/") if not script.endswith(".py") else script)
    stem = path.stem
    named = route_word(stem, strict=True)
    if named is not None and named[0] in LABEL_KINDS:
        return named[0]
    supervised = next(
        (SUBCOMMAND_WORDS[w] for w in stem.lower().split("_") if SUBCOMMAND_WORDS.get(w) == "SFT"), None
    )
    if supervised is None and TRAINING_STEMS & set(stem.lower().split("_")) and len(path.parts) > 1:
        package = route_word(path.parent.name, strict=True)
        if package is not None and package[0] in LABEL_KINDS:
            return package[0]
    return supervised


def launched_routes(text: str) -> list[str]:
    """Return the routes the command lines in ``text`` run, by the table or by the script they run."""
    text = text[:MAX_COMMAND_TEXT]
    words = shell_words(text)
    if words is None:  # an unclosed quote, or too long for shlex: the words as written
        words = text.split()
    routes: list[str] = []
    for i, word in enumerate(words):
        if PurePosixPath(word).name.split(".")[0] not in LAUNCHERS:
            continue
        rest = words[i : i + 64]
        found = command_routes(" ".join(shlex.quote(w) for w in rest))
        if not found:
            script = next((w for w in rest[1:] if w.endswith(".py")), None)
            module = next((rest[j + 1] for j in range(1, len(rest) - 1) if rest[j] == "-m"), None)
            target = script or module
            label = _script_route(target) if target is not None else None
            if label is None and target is not None:
                # (no route in its name: an evaluation or a data generation the name says it runs; a
                # merge script's name is no evidence of which checkpoints it joins)
                work = script_work(target if script else target.replace(".", "/"))
                label = work if work in LAUNCHED_WORK else None
            found = [label] if label is not None else []
        routes.extend(r for r in found if r not in routes)
    return routes


class CommandText(RouteDetector):
    """A command line written as text for something else to run: the route of what it launches.

    Pipelines submit their training to a scheduler rather than running it: NeMo-Run and Slurm tasks,
    Beaker or Modal jobs, a tmux pane, a test that shells out. The command is a string or an f-string
    (``f"uv run python start_grpo.py ++grpo.num_generations={n}"``): a framework command of the table,
    or a ``python``/``torchrun``/``accelerate``/``deepspeed`` line naming the script it runs, whose name
    says the route (``start_grpo.py``, ``pretrain_gpt.py``, ``finetune.py``). Docstrings and help texts
    describe commands rather than write them and are not read, nor are the messages of ``raise`` and
    ``assert`` (advice to a person on what to run first). Such text only decides a file that takes
    no gradient step and names no stage itself.
    """

    TRIGGERS = tuple(f"{launcher} " for launcher in sorted(LAUNCHERS))

    VALID = (
        Valid('"""Usage: python train_dpo.py --beta 0.1"""\n'),
        Valid("parser.add_argument('--x', help='then run python train_grpo.py')\n"),
        Valid("cmd = f'python utils.py --model {m}'\n"),
        Valid("blob = '" + "x" * 30_000 + " python train_grpo.py'\n"),
        Valid(
            "if not os.path.exists(d):\n"
            "    raise FileNotFoundError(f'Run training first: python train_grpo.py {d}')\n"
        ),
        Valid("assert ckpt, 'train it first: torchrun finetune.py'\n"),
    )
    INVALID = (
        Invalid(
            "def get_cmd(self):\n    return (f'uv run --active python /code/nemo_rl/start_grpo.py '\n"
            "            f'++grpo.num_generations_per_prompt={self.n} ')\n",
            "dispatch",
            variant=COMMAND_TEXT,
            routes=("GRPO",),
        ),
        Invalid(
            "cmd = 'torchrun --nproc_per_node 8 finetune.py --model_name_or_path m'\n",
            "dispatch",
            variant=COMMAND_TEXT,
            routes=("SFT",),
        ),
        # a script or module named for evaluating, its route none: the evaluation it launches
        Invalid(
            "cmd = [sys.executable, '-m', 'src.evaluation.evaluate_safety', '--model', m]\n"
            "text = f'python -m eval.eval --model {m} --tasks aime24'\n",
            "dispatch",
            variant=COMMAND_TEXT,
            routes=("EVAL_ONLY",),
        ),
        Invalid(
            "job = {'command': f'python -m openrlhf.cli.train_dpo --pretrain {model}'}\n",
            "dispatch",
            variant=COMMAND_TEXT,
            routes=("DPO",),
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.quiet = 0
        """Open keyword arguments whose text is a description (``help=``), and docstrings."""
        self.concatenated = 0
        """Open concatenations: their parts are read as one text."""

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in NOT_COMMANDS:
            self.quiet += 1

    def leave_Arg(self, original_node: cst.Arg) -> None:
        if original_node.keyword is not None and original_node.keyword.value in NOT_COMMANDS:
            self.quiet -= 1

    # an error's message tells a person what to run first (``raise FileNotFoundError("Run training
    # first: python train_grpo.py")``): advice, not a command the file writes for anything to run
    def visit_Raise(self, node: cst.Raise) -> None:
        self.quiet += 1

    def leave_Raise(self, original_node: cst.Raise) -> None:
        self.quiet -= 1

    def visit_Assert(self, node: cst.Assert) -> None:
        self.quiet += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self.quiet -= 1

    def visit_Expr(self, node: cst.Expr) -> None:
        # a string standing alone as a statement is a docstring or a comment
        if isinstance(node.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
            self.quiet += 1

    def leave_Expr(self, original_node: cst.Expr) -> None:
        if isinstance(original_node.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
            self.quiet -= 1

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> None:
        if not self.concatenated:
            self._read(node)
        self.concatenated += 1

    def leave_ConcatenatedString(self, original_node: cst.ConcatenatedString) -> None:
        self.concatenated -= 1

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self.concatenated:
            self._read(node)

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        if not self.concatenated:
            self._read(node)

    def _read(self, node: cst.BaseExpression) -> None:
        raw = node.value if type(node) is cst.SimpleString else cst.Module([]).code_for_node(node)
        if self.quiet or not any(t in raw for t in self.TRIGGERS):
            return  # most strings: no need to evaluate them
        text = string_text(node)
        if text is None or not any(t in text for t in self.TRIGGERS):
            return
        for route in launched_routes(text):
            statement = self.context.statements[-1] if self.context.statements else None
            message = f"writes a command line that runs {route}"
            self.report(node, "dispatch", message, statement=statement, routes=(route,), variant=COMMAND_TEXT)
