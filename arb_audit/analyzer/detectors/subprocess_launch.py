"""A Python driver that runs training commands: ``subprocess.run(["trl", "grpo", ...])``, ``os.system``."""

from __future__ import annotations

import shlex
from collections import ChainMap
from collections.abc import Mapping

import libcst as cst

from arb_audit.analyzer.calls import RUNNERS
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.command_text import PLACEHOLDER, launched_routes, string_text
from arb_audit.analyzer.detectors.route_dispatch import COMMAND_TEXT
from arb_audit.analyzer.frameworks import names_a_program
from arb_audit.analyzer.launchers import LAUNCHED_WORK, LAUNCHERS, command_routes, unfixed_config
from arb_audit.analyzer.names import dotted
from arb_audit.analyzer.shell_words import shell_words
from arb_audit.analyzer.walk import descendants

KINDS = {
    "SFT": "sft",
    "DPO": "dpo",
    "GRPO": "grpo",
    "PPO": "ppo",
    "REWARD_MODEL": "reward_model",
    "MERGE": "merge",
}


MODULE_RUNNERS = {"runpy.run_module": ("python", "-m"), "runpy.run_path": ("python",)}
"""The standard library's ways to run a module or a script in this process, by the command line
they stand for (``runpy.run_module(m)`` runs what ``python -m m`` runs)."""

ARG = PLACEHOLDER.strip()
"""A computed word of a command (a path, a count)."""
MAX_SWITCHES = 16
"""The most ``a if flag else b`` words of one list read for the command line each other branch gives."""
MAX_NESTED_SWITCH = 4
"""How deep ``a if c else (b if d else ...)`` is read for the words it may pick."""
MAX_SWITCHED_WORDS = 256
"""Lists longer than this are read with the first branch of each switch only (bounded work)."""
MAX_SWITCHED_TEXT = 4_000
"""Nor are lists whose words run longer than this (a real command line is far shorter; each switched
line is read in full again)."""


def _word(value: cst.BaseExpression, paths: dict[str, str] | None = None) -> str | None:
    """Return one literal word of a command, or None for a word computed otherwise.

    A string, an f-string (a placeholder per field), the interpreter (``sys.executable``), a name the
    file bound to a path (``str(SFT_TRAIN)``, ``SFT_TRAIN = ROOT / "scripts/sft_train.py"``).
    """
    if dotted(value) == "sys.executable":
        return "python"  # this interpreter runs the script that follows
    if type(value) is cst.Call and dotted(value.func) == "str" and len(value.args) == 1:
        value = value.args[0].value
    if type(value) is cst.Name and paths is not None and value.value in paths:
        return paths[value.value]
    if type(value) is cst.BinaryOperation and (path := _path_text(value)) is not None:
        return path.replace(PLACEHOLDER, ARG)  # ``str(ROOT / "scripts" / "train_grpo.py")``, in place
    text = string_text(value)
    return text.replace(PLACEHOLDER, ARG) if text is not None else None


def _path_text(value: cst.BaseExpression) -> str | None:
    """Return the literal path an expression builds, or None.

    ``ROOT / "scripts" / "sft_train.py"``, ``Path("train_dpo.py")``: its last literal part, where what
    it is joined to is computed.
    """
    if type(value) is cst.BinaryOperation and type(value.operator) is cst.Divide:
        return string_text(value.right)
    if type(value) is cst.Call and dotted(value.func) in ("Path", "pathlib.Path") and value.args:
        return string_text(value.args[-1].value)
    if isinstance(value, cst.SimpleString | cst.FormattedString):
        # ``CLI = f"{LAB}/env/bin/llamafactory-cli"``: a program's or a script's path under a folder
        # computed at run time, named by its last part (a program under ``bin/``, a script by its
        # suffix; a data or output folder, a model's id, names nothing run)
        text = string_text(value)
        if text is None or any(c.isspace() for c in text.replace(PLACEHOLDER, "")):
            return None
        folder, _, tail = text.rpartition("/")
        runnable = tail.endswith(SCRIPT_SUFFIXES) or folder.rsplit("/", 1)[-1] == "bin"
        return tail if folder and runnable and PLACEHOLDER not in tail else None
    return None


SCRIPT_SUFFIXES = (".py", ".sh")
"""Endings of a script's file name, which a path literal names for running."""


RUN_PREFIX_WORDS = 8
"""How many leading words of a list are read for the launcher that runs the rest (``uv run --extra gpu
python -m ...``)."""


def _interpreter_line(node: cst.List) -> bool:
    """Say whether a list is a command line run by the interpreter, a launcher or a framework's program.

    Its first word is the interpreter (``sys.executable``, ``"python"``) or a program the framework
    table's command lines start with (``["llamafactory-cli", "train", config]``), or one of its first
    words is a launcher behind a runner's own words (``["uv", "run", "python", "-m", m]``,
    ``["accelerate", "launch", "-m", m]``).
    """
    words = [_word(e.value) for e in node.elements[:RUN_PREFIX_WORDS]]
    return bool(words) and (
        words[0] in ("python", "python3")
        or (words[0] is not None and names_a_program(words[0]))
        or any(w in LAUNCHERS for w in words)
    )


def _branches(
    value: cst.BaseExpression, depth: int = 0, paths: dict[str, str] | None = None
) -> list[str | None]:
    """Return the words a list element may be: each branch of ``a if c else (b if d else e)``."""
    if type(value) is cst.IfExp and depth < MAX_NESTED_SWITCH:
        return [*_branches(value.body, depth + 1, paths), *_branches(value.orelse, depth + 1, paths)]
    return [_word(value, paths)]


def _list_words(
    node: cst.List | cst.Tuple,
    paths: dict[str, str] | None = None,
    bound: Mapping[str, cst.BaseExpression | None] | None = None,
) -> list[list[str]]:
    """Return the command lines a literal list or tuple of words may be.

    Each element is one word. A word picked by a condition (``"lora_finetune" if use_lora else
    "full_finetune"``) gives the line of its first branch and, switched alone, a line of its other
    branch (a computed branch being a placeholder word); any other computed word (``str(n)``, a path)
    stands for one word, so the words after it keep their places (a flag's value is not taken for the
    recipe), except before the first literal word, where it is a program the file computes. A list the
    file bound to a name and spliced in (``[sys.executable, "-m", module, *overrides]``, ``bound``: the
    values names hold) gives its own words in its place.
    """
    line: list[str] = []
    switches: list[tuple[int, str]] = []
    for element in node.elements:
        spliced = (
            bound.get(element.value.value)
            if bound is not None and type(element) is cst.StarredElement and type(element.value) is cst.Name
            else None
        )
        if type(spliced) is cst.List or type(spliced) is cst.Tuple:
            # (read without ``bound``: a list spliced into itself is not followed)
            line.extend(next(iter(_list_words(spliced, paths)), [ARG]))
            continue
        first, *others = _branches(element.value, paths=paths)
        if others and (first is not None or any(w is not None for w in others)):
            # (a branch computed otherwise is one word too: its place is known)
            switches += [(len(line), w or ARG) for w in dict.fromkeys(others) if w != first]
            line.append(first or ARG)
        elif first is not None:
            line.append(first)
        elif line:
            line.append(ARG)
    if not line:
        return []
    lines = [line]
    if len(node.elements) <= MAX_SWITCHED_WORDS and sum(map(len, line)) <= MAX_SWITCHED_TEXT:
        lines += [[*line[:at], other, *line[at + 1 :]] for at, other in switches[:MAX_SWITCHES]]
    return lines


def _literal_words(
    node: cst.BaseExpression,
    bound: Mapping[str, cst.BaseExpression | None],
    depth: int = 0,
    paths: dict[str, str] | None = None,
    spliced: Mapping[str, cst.BaseExpression | None] | None = None,
) -> list[list[str]]:
    """Return the words of each command line a literal command may be: a string, an f-string, a list.

    A name is read through the value the file last bound it to, and ``command.split()`` through its
    receiver; an f-string's replacement fields stand for one word each (a path, a count), so the words
    around them (``tune run ... full_finetune_distributed --config {path}``) still say what runs.
    ``spliced``: the lists names hold that a command may splice in (``*overrides``); ``bound`` if None.
    """
    if depth > 4:
        return []
    if isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
        found = string_text(node)
        words = shell_words(found) if found is not None else None
        return [words] if words else []
    if type(node) is cst.Name and (value := bound.get(node.value)) is not None:
        return _literal_words(value, bound, depth + 1, paths, spliced)
    if (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value == "split"
        and not node.args
    ):
        return _literal_words(node.func.value, bound, depth + 1, paths, spliced)
    if isinstance(node, cst.List | cst.Tuple):
        return _list_words(node, paths, bound if spliced is None else spliced)
    return []


class SubprocessLaunch(RouteDetector):
    """A script that runs a training command line runs that stage.

    Agents often drive their pipeline from Python: ``subprocess.run(["trl", "sft", ...])``,
    ``os.system("python -m openrlhf.cli.train_dpo ...")``, a command list a helper builds and another
    runs (``[sys.executable, str(SFT_TRAIN), ...]``), a verl entry point with
    ``algorithm.adv_estimator=grpo``; a compatibility shim runs another module in its own process
    (``runpy.run_module("scripts.trl.train_grpo", run_name="__main__")``), as ``python -m`` would. Only
    literal command lines are read: a command assembled at run time is not evidence of which route it
    runs.
    """

    TRIGGERS = ("subprocess", "os.system", "system(", "runpy")

    VALID = (
        Valid("import subprocess\nsubprocess.run(['nvidia-smi'])\n"),
        # a folder or a model's id bound to a name is nothing run (only a script or a program under bin/)
        Valid("import subprocess\nRECIPE = 'configs/grpo'\nsubprocess.run(['tune', 'cp', RECIPE, 'out'])\n"),
        # a literal that cannot be evaluated binds the name to nothing, not to the command it held
        Valid(
            "import subprocess\ncmd = ['trl', 'dpo', '--model', 'm']\ncmd = '\\N{NO SUCH NAME}/x'\n"
            "subprocess.run(cmd, check=True)\n"
        ),
        Valid("import subprocess\nsubprocess.run(command, shell=True)\n"),
        Valid("import runpy\nrunpy.run_module(args.module, run_name='__main__')\n"),
        Valid("import runpy\ndefaults = runpy.run_path('config/defaults.py')\n"),
        # loaded under another name, its ``__main__`` block does not run: the script's functions
        Valid("import runpy\nns = runpy.run_path('scripts/train_grpo.py')\nreward_fn = ns['reward_fn']\n"),
        # an interpreter's command line built but not run: every command it runs is spelled out, or
        # the one it runs is the user's (an example in the help is only printed)
        # a module's example hidden by a function's own command (the user's)
        Valid(
            "import subprocess, sys\ncmd = [sys.executable, 'train_grpo.py', '--help']\nprint(cmd)\n"
            "def _run(c):\n    subprocess.run(c, check=True)\n"
            "def main():\n    cmd = sys.argv[1:]\n    _run(cmd)\n"
        ),
        # a name bound again runs its new value (the user's command), not the example it held
        Valid(
            "import subprocess, sys\ncmd = [sys.executable, 'train_grpo.py', '--help']\n"
            "print(' '.join(cmd))\ncmd = sys.argv[1:]\nsubprocess.run(cmd, check=True)\n"
        ),
        Valid(
            "import subprocess, sys\nHELP = [sys.executable, 'train_sft.py', '--help']\nshow_usage(HELP)\n"
            "subprocess.run(cmd, check=True)\n"
        ),
        Valid(
            "import shlex, subprocess, sys\nEXAMPLE = ['python', 'train_grpo.py', '--lr', '1e-6']\n"
            "def retry(cmd):\n    print('e.g.', ' '.join(map(shlex.quote, EXAMPLE)))\n"
            "    return subprocess.run(cmd)\nretry(sys.argv[1:])\n"
        ),
    )
    INVALID = (
        # the command a helper builds, run by another helper (the script a path constant names)
        Invalid(
            "import subprocess, sys\nfrom pathlib import Path\nROOT = Path(__file__).parent\n"
            "SFT_TRAIN = ROOT / 'scripts' / 'sft_train.py'\n\n"
            "def _command(config):\n    return [sys.executable, str(SFT_TRAIN), '--config', str(config)]\n\n"
            "def _run(command):\n    subprocess.run(command, check=True)\n\n_run(_command(cfg))\n",
            "stage",
            "sft",
        ),
        # the runner's parameter is what it is handed, not another function's command of the same name
        Invalid(
            "import subprocess, sys\n"
            "def _serve():\n    cmd = ['python', 'server.py']\n    subprocess.Popen(cmd)\n"
            "def _run(cmd, cwd):\n    subprocess.Popen(cmd, cwd=cwd)\n"
            "def _command():\n    cmd = [sys.executable, '-m', 'verl.trainer.main_ppo',\n"
            "           'algorithm.adv_estimator=grpo']\n    cmd.extend(sys.argv[1:])\n    return cmd\n"
            "def train():\n    cmd = _command()\n    _run(cmd, cwd='.')\n",
            "stage",
            "grpo",
        ),
        # a framework's program in a list handed to the file's own runner
        Invalid(
            "import subprocess\ndef run_and_stream(cmd, log):\n    return subprocess.Popen(cmd).wait()\n"
            "def main(config_path):\n    command = ['trl', 'dpo', '--config', str(config_path)]\n"
            "    return run_and_stream(command, 'train.log')\n",
            "stage",
            "dpo",
        ),
        # a program named by a path under a folder computed at run time, run on a config the file
        # writes itself (the framework's default route)
        Invalid(
            "import subprocess\nCLI = f'{LAB}/env/bin/llamafactory-cli'\n"
            "def run_one(cfg):\n    with open(cfg, 'w') as f:\n        f.write(TEMPLATE)\n"
            "    subprocess.run([CLI, 'train', cfg], check=True)\n",
            "stage",
            "sft",
        ),
        # a config handed to it, whose route the framework reads: the config decides
        Invalid(
            "import subprocess, sys\ndef launch(args):\n"
            "    command = [sys.executable, '-m', 'verl.trainer.main_ppo',\n"
            "               f'--config-path={args.config.parent}', f'--config-name={args.config.stem}']\n"
            "    subprocess.call(command)\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        Invalid(
            "import subprocess\nCLI = f'{LAB}/env/bin/llamafactory-cli'\n"
            "def run_one(cfg):\n    subprocess.run([CLI, 'train', cfg], check=True)\n",
            "dispatch",
            routes=("SFT", "DPO"),
        ),
        # a command line grown by ``+=``, run by a launcher; a module in a package named for its route
        Invalid(
            "import subprocess\ndef run(cfg):\n"
            "    cmd = ['accelerate', 'launch', '--num_processes', str(n)]\n"
            "    cmd += ['-m', 'finetune.train_sft_peft']\n    subprocess.run(cmd, check=True)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "import subprocess\ndef build(model):\n"
            "    cmd = ['uv', 'run', 'python', '-m', 'experiments.sft.train_lora', '--model', model]\n"
            "    return cmd\ndef launch(model):\n    cmd = build(model)\n    return subprocess.Popen(cmd)\n",
            "stage",
            "sft",
        ),
        # a script's path joined in place, in a list a helper returns and a loop runs
        Invalid(
            "import subprocess, sys\ndef build(exp):\n"
            "    return [sys.executable, str(ROOT / 'scripts' / 'train_grpo.py'), '--lr', str(exp.lr)]\n"
            "def main(exps):\n    for cmd in [build(e) for e in exps]:\n"
            "        subprocess.run(cmd, check=True)\n",
            "stage",
            "grpo",
        ),
        # handed back beside the environment it runs with
        Invalid(
            "import subprocess, sys\ndef build(args):\n"
            "    command = [sys.executable, '-m', 'experiments.sft.train_lora', '--model', args.model]\n"
            "    return command, {'HF_HOME': args.cache}\n"
            "def main(args):\n    command, environment = build(args)\n"
            "    raise SystemExit(subprocess.call(command, env=environment))\n",
            "stage",
            "sft",
        ),
        # a closure's command, bound in the function around it
        Invalid(
            "import subprocess\ndef main():\n    cmd = ['trl', 'dpo', '--model_name_or_path', 'm']\n"
            "    def go():\n        subprocess.run(cmd, check=True)\n    go()\n",
            "stage",
            "dpo",
        ),
        # a command name bound again runs its new list (the splice rule above is for spliced lists only)
        Invalid(
            "import subprocess\ncommand = ['tune', 'download', m]\nsubprocess.run(command)\n"
            "command = ['tune', 'run', 'lora_finetune_distributed', '--config', c]\n"
            "subprocess.run(command, check=True)\n",
            "stage",
            "sft",
        ),
        # overrides picked by a setting: either list may be spliced in
        Invalid(
            "import subprocess, sys\noverrides = ['algorithm.adv_estimator=grpo']\nif args.use_gae:\n"
            "    overrides = ['algorithm.adv_estimator=gae']\n"
            "cmd = [sys.executable, '-m', 'verl.trainer.main_ppo', *overrides]\nsubprocess.run(cmd)\n",
            "dispatch",
            routes=("GRPO", "PPO"),
        ),
        # overrides bound to a list of their own and spliced into the command
        Invalid(
            "import subprocess, sys\noverrides = ['algorithm.adv_estimator=grpo', 'data.train_files=t']\n"
            "cmd = [sys.executable, '-m', 'verl.trainer.main_ppo', *overrides]\nsubprocess.run(cmd)\n",
            "stage",
            "grpo",
        ),
        # a command bound with its type written out
        Invalid(
            "import subprocess\ndef train(extra):\n"
            "    cmd: list[str] = ['python', '-m', 'verl.trainer.main_ppo', 'algorithm.adv_estimator=grpo']\n"
            "    cmd.extend(extra)\n"
            "    subprocess.run(cmd, check=True)\n",
            "stage",
            "grpo",
        ),
        # a command extended from itself, run by a method of the file's own class
        Invalid(
            "import subprocess, sys\nclass Stage:\n    def _run(self, c):\n        subprocess.run(c)\n"
            "    def go(self, extra):\n        cmd = [sys.executable, 'train_grpo.py']\n"
            "        cmd = cmd + extra.split()\n        self._run(cmd)\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "import runpy\nif __name__ == '__main__':\n"
            "    runpy.run_module('scripts.trl.train_grpo_math', run_name='__main__')\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "import runpy\nrunpy.run_path('recipes/train_dpo.py', run_name='__main__')\n", "stage", "dpo"
        ),
        # the interpreter running a module named for evaluating
        Invalid(
            "import subprocess, sys\n"
            "cmd = [sys.executable, '-m', 'src.evaluation.evaluate_safety', '--model', path]\n"
            "subprocess.run(cmd, capture_output=True)\n",
            "dispatch",
            variant=COMMAND_TEXT,
            routes=("EVAL_ONLY",),
        ),
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
        # the stage's switch read whatever other switches come after it (each is switched alone)
        Invalid(
            "import subprocess\nsubprocess.run(['trl', 'dpo' if use_dpo else 'sft',\n"
            "    '--bf16' if a else '--fp16', '--lora' if b else '--full',\n"
            "    '--packing' if c else '--no-packing', '--gc' if d else '--no-gc'])\n",
            "dispatch",
        ),
        Invalid(
            "import subprocess\n"
            "subprocess.run(['trl', 'dpo' if m == 'dpo' else ('grpo' if m == 'grpo' else 'sft')])\n",
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
        self.bound: list[dict[str, cst.BaseExpression | None]] = [{}]
        """Per open function (the module's first): the string or list each plain name was last bound to
        (``command = f"tune run ..."``); None where the function bound it to something else or takes it
        as a parameter (``def _run(cmd)``: not another function's ``cmd``)."""
        self.parameters: list[set[str]] = []
        """The parameters of each open function, innermost last: they hide the file's paths too."""
        self.paths: dict[str, str] = {}
        """The literal path each plain name was bound to (``SFT_TRAIN = ROOT / "scripts/sft_train.py"``)."""
        self.built: dict[int, cst.List] = {}
        """Lists starting with the interpreter (``[sys.executable, str(SCRIPT), "--config", c]``) that a
        helper returns: commands the file runs somewhere (by id, each once)."""
        self.pending: list[dict[str, cst.List | None]] = [{}]
        """Per open function (the module's first): such lists bound to a name (``command = [...]``); None
        where the function bound the name to something else (its own value hides the module's)."""
        self.handed: list[tuple[str, cst.List]] = []
        """Such lists handed to a function by its name (``_run("stage 1", command)``): run if the file
        defines that function (a runner of its own), shown if it does not (``print``, ``logger.info``)."""
        self.defined: set[str] = set()
        """Names of the functions, methods and classes the file defines."""
        self.read_by_runner: set[int] = set()
        """Lists a runner reads where it is called (reported there)."""
        self.unread_run: cst.Call | None = None
        """The first run of a command the file does not spell at the call (``subprocess.run(command)``)."""
        self.rebound: set[str] = set()
        """Names bound to a literal list more than once in one function (which one a run holds the
        file may decide at run time)."""
        self.written: set[str] = set()
        """Names of the files the file writes (``open(ycfg, "w")``, ``ycfg.write_text(...)``): a config
        it writes and then runs is fixed by the file, not given to it."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defined.add(node.name.value)
        # a parameter holds what the caller hands, not a command bound under its name around it
        params = {param.name.value: None for param in descendants(node.params) if type(param) is cst.Param}
        self.pending.append(dict(params))
        self.bound.append(dict(params))
        self.parameters.append(set(params))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.defined.add(node.name.value)  # (``Stage("rl", cmd).run()``: the class runs what it is given)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.pending.pop()
        self.bound.pop()
        self.parameters.pop()

    def _bound(self) -> Mapping[str, cst.BaseExpression | None]:
        """Return the values names hold here: each function's bindings over those around it (closures)."""
        return ChainMap(*reversed(self.bound))

    def _pending(self, name: str) -> cst.List | None:
        """Return the interpreter's list a name holds here: the innermost function's, else the module's."""
        return ChainMap(*reversed(self.pending)).get(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # ``cmd += ["-m", "finetune.train_sft_peft"]``: the words added to a command line bound here,
        # read where the name is run; a list a helper returns or hands on is read as first built
        target, value = node.target, node.value
        if type(target) is not cst.Name or not isinstance(node.operator, cst.AddAssign):
            return
        held = self._bound().get(target.value)
        if type(held) is cst.List and type(value) is cst.List and len(held.elements) <= MAX_SWITCHED_WORDS:
            # (bounded: a file adding to one list line after line would copy it each time)
            self.bound[-1][target.value] = held.with_changes(elements=[*held.elements, *value.elements])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:  # ``cmd: list[str] = [...]`` binds as ``cmd = [...]`` does
            self._bind(node.target, node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """Record what a plain name is bound to: a command's text or list, a path, a command to run."""
        if type(target) is not cst.Name:
            return
        name = target.value
        # (a name bound again to something else holds that: an old path or command no longer; one
        # bound to a value made from its own, ``cmd = cmd + extra``, ``SCRIPT = str(SCRIPT)``, still
        # says what the old one said)
        again = (
            self._bound().get(name) is not None or name in self.paths or self._pending(name) is not None
        ) and any(type(n) is cst.Name and n.value == name for n in (value, *descendants(value)))
        if isinstance(value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString | cst.List):
            if type(value) is cst.List and type(self.bound[-1].get(name)) is cst.List:
                self.rebound.add(name)
            self.bound[-1][name] = value
        elif not again:
            self.bound[-1][name] = None
        if (path := _path_text(value)) is not None and PLACEHOLDER not in path:
            self.paths[name] = path
        elif not again:
            self.paths.pop(name, None)
        if type(value) is cst.List and _interpreter_line(value):
            self.pending[-1][name] = value
        elif not again:
            self.pending[-1][name] = None

    def visit_Return(self, node: cst.Return) -> None:
        # ``return command, environment``: a helper's command handed back beside what it runs with
        values = [e.value for e in node.value.elements] if type(node.value) is cst.Tuple else [node.value]
        for value in values:
            if type(value) is cst.Name:
                value = self._pending(value.value) or value
            if type(value) is cst.List and _interpreter_line(value):
                # ``return [sys.executable, str(SCRIPT), ...]``: a helper's command
                self.built[id(value)] = value

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.unread_run is None:
            return
        # a runner handed a command made elsewhere in the file (``_run(label, _command(cfg))``, the
        # list built by a helper): the interpreter's command lines the file builds are what it runs
        for callee, command in self.handed:
            if callee in self.defined:
                self.built[id(command)] = command
        for key, command in self.built.items():
            if key not in self.read_by_runner:
                self._report_lines(command, _list_words(command, self.paths))

    def visit_Call(self, node: cst.Call) -> None:
        if not node.args:
            return
        callee = node.func.value if type(node.func) is cst.Name else getattr(node.func, "attr", None)
        if isinstance(callee, cst.Name):
            callee = callee.value
        self._note_written(node, callee)
        if isinstance(callee, str):
            # ``_run(cmd)``, ``self._run(cmd)``, ``Stage("rl", cmd)``: by the name of what is called
            for arg in node.args:
                if type(arg.value) is cst.Name and (command := self._pending(arg.value.value)) is not None:
                    self.handed.append((callee, command))
        names = self.names(node.func)
        if names & MODULE_RUNNERS.keys():
            # ``runpy.run_module("scripts.train_grpo", run_name="__main__")``: ``python -m`` in-process;
            # under any other name its ``if __name__ == "__main__":`` block does not run (the module's
            # functions or a config's values are loaded, not run)
            run_name = keyword(node, "run_name")
            if run_name is None or string_text(run_name.value) != "__main__":
                return
            target = string_text(node.args[0].value)
            if target is None or PLACEHOLDER in target or not target.strip():
                return
            lines = [[*MODULE_RUNNERS[next(iter(names & MODULE_RUNNERS.keys()))], target.strip()]]
        elif names & RUNNERS:
            handed = node.args[0].value
            named = self._pending(handed.value) if type(handed) is cst.Name else None
            self.read_by_runner.add(id(named or handed))
            hidden = set().union(*self.parameters)
            paths = {k: v for k, v in self.paths.items() if k not in hidden} if hidden else self.paths
            bound = self._bound()
            # (a list bound twice, ``overrides = [...]`` then again under ``if args.use_gae:``, may hold
            # either: spliced into a command it is a computed word, not the last one's)
            spliced = {k: v for k, v in bound.items() if k not in self.rebound} if self.rebound else bound
            lines = _literal_words(node.args[0].value, bound, paths=paths, spliced=spliced)
            if not lines and self.unread_run is None:
                self.unread_run = node
        else:
            return
        self._report_lines(node, lines)

    def _note_written(self, node: cst.Call, callee: object) -> None:
        """Record the file a call writes, by the plain name holding its path."""
        target: cst.BaseExpression | None = None
        if callee == "open" and type(node.func) is cst.Name:
            mode = keyword(node, "mode") or (node.args[1] if len(node.args) > 1 else None)
            text = string_text(mode.value) if mode is not None else None
            if text is not None and set(text) & set("wxa"):
                target = node.args[0].value
        elif callee in ("write_text", "write_bytes") and type(node.func) is cst.Attribute:
            target = node.func.value
        if type(target) is cst.Name:
            self.written.add(target.value)

    def _report_lines(self, node: cst.CSTNode, lines: list[list[str]]) -> None:
        """Report what the command lines a run may be run: a stage, or a stage a setting picks."""
        # (a script the table does not know, named for evaluating: the evaluation it runs)
        routes = [command_routes(line) or launched_routes(line) for line in map(shlex.join, lines)]
        trained = {label for labels in routes for label in labels if label in KINDS}
        if len(trained) >= 2 and len({frozenset(set(labels) & trained) for labels in routes}) >= 2:
            # a word picked by a setting picks the stage (``"dpo" if use_dpo else "sft"``): the
            # setting decides the route, as a launcher's option does
            message = f"runs {lines[0][0]} with a stage a setting picks"
            self.report(node, "dispatch", message, routes=tuple(sorted(trained)))
            return
        # (only a line with a word computed at run time can be given its config: the others are read
        # once, above)
        computed = [line for line in lines if any(ARG in w for w in line)]
        own = bool(computed) and any(
            type(n) is cst.Name and n.value in self.written for n in descendants(node)
        )
        for line in [] if own else computed:
            # a word computed at run time stands where the config is named (``f"--config-name={c}"``):
            # a value the run is given, as a shell script's ``$1`` is, unless the file wrote it
            given = [f"${ARG}" if w == ARG else w.replace(f"={ARG}", f"=${ARG}") for w in line]
            if (unfixed := unfixed_config(shlex.join(given))) is not None:
                message = f"runs {line[0]} with a config it does not fix: {unfixed.message}"
                self.report(node, "dispatch", message, routes=unfixed.routes, default=unfixed.default)
                return
        reported: set[str] = set()
        for line, labels in zip(lines, routes, strict=True):
            # (a switch between two flags' values runs the same stage: it is reported once)
            fresh = [label for label in labels if label not in reported]
            reported.update(labels)
            if fresh:
                self._report_command(node, line, fresh)

    def _report_command(self, node: cst.CSTNode, words: list[str], labels: list[str]) -> None:
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
