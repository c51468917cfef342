"""Launchers that are not Python: YAML training configs and shell command lines.

A YAML config of LLaMA-Factory (``stage:``), axolotl (``rl:``), verl (``algorithm.adv_estimator``) or
mergekit (``merge_method:``) fixes the route of the run it configures; a shell script picks it with
a framework command of the table in frameworks.py (``trl dpo``, ``tune run <recipe>``,
``llamafactory-cli train``, ``python -m openrlhf.cli.train_dpo``), the command's own settings where
the table says a key picks (``--stage dpo``, ``--advantage_estimator group_norm``), or an algorithm
flag. The YAML keys read here are not yet table data: they are shared by several frameworks. The file's
role is ``launcher``; ``possible_routes`` lists what it can select and ``default_route`` what it
selects when nothing else is set. YAML is read with ``safe_load`` only.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arb_audit.analyzer.classify import WORK_ROLES, Classification, classify_source
from arb_audit.analyzer.detector import Finding, Signal
from arb_audit.analyzer.frameworks import TRUE_VALUES, Entry, commands_in
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.shell_words import shell_words
from arb_audit.analyzer.source import SourceFile, read_source
from arb_audit.analyzer.trainers import LABEL_KINDS, ROUTE_WORDS, route_word
from arb_audit.analyzer.yaml_keys import flatten_keys
from arb_audit.inert import inert
from arb_audit.regular_files import read_regular

MAX_CONFIG_BYTES = 4 * 1024 * 1024
"""Most of a launcher's config file read (a training config is a few kilobytes)."""

ESTIMATOR_FLAGS = ("adv_estimator", "advantage_estimator", "advantage.estimator")
"""Flags and keys that choose the policy-gradient estimator (gae = PPO, grpo/group_norm = GRPO)."""
MAX_LINES = 20_000
"""Lines of a shell script read."""
LAUNCHERS = frozenset({"python", "python3", "accelerate", "torchrun", "deepspeed", "modal"})
"""Commands whose ``.py`` argument is the script they run (``modal run app.py`` too)."""
LAUNCHER_MODULES = frozenset(
    {
        "torch.distributed.run",
        "torch.distributed.launch",
        "accelerate.commands.launch",
        "deepspeed.launcher.runner",
        "deepspeed.launcher.launch",
    }
)
"""Modules that start the script named after their options (``python -m torch.distributed.run``)."""
MAX_WRAPPER_WORDS = 40
"""Words of a command line looked through for the launcher after a wrapper (``srun``, ``nohup``)."""
SHELLS = frozenset({"bash", "sh"})
"""Commands whose ``.sh`` argument is the script they run."""
MAX_SHELL_DEPTH = 2
"""Shell scripts followed through other shell scripts (``bash scripts/pipeline.sh``), at most."""
NOT_ROUTES = frozenset({"NONE_TRAINING", "EVAL_ONLY", "DISTILLATION"})
"""Labels of a launched script that are not a training route."""
LAUNCHED_WORK: dict[str, Signal] = {"EVAL_ONLY": "scoring", "DISTILLATION": "generation"}
"""The signal a launcher's finding carries for a launched script that evaluates or generates data (the
labels of :data:`arb_audit.analyzer.classify.WORK_ROLES`)."""
WORK_OF_SIGNAL = {signal: label for label, signal in LAUNCHED_WORK.items()}
"""The label such a finding's signal stands for."""
TRAINER_KEYS = frozenset({"trainer", "trainer_cls", "trainer_class", "trainer_type", "trainer_name"})
"""Config keys whose value names the trainer class a framework builds (trlx's ``train.trainer``)."""
JUDGE_KEY_WORDS = frozenset({"judge", "judges", "annotator", "annotators", "evaluator", "grader"})
"""Words of a config key that sets up a model judging answers (``judge_model``, ``annotators_config``)."""
RL_ROUTES = frozenset({"GRPO", "PPO", "ONLINE_RL", "UNKNOWN"})
"""Routes of a command whose rollouts a multi-turn setting makes online RL (an unknown loss too)."""
MAX_VALUE = 4096
"""Characters kept of a shell variable's value."""
MAX_LEVELS_UP = 3
"""Folders above a launcher's own where the scripts and configs it names are looked for (a launcher
in ``scripts/gpt2/train/`` is run from the repository's root)."""
_ASSIGNMENT = re.compile(r"""(?:export\s+)?([A-Za-z_]\w*)(\+?)=("[^"]*"|'[^']*'|\S*)""")
# ``${NAME}``, ``${ARRAY[@]}``, ``${NAME:-default}``, ``${1-default}``, ``$NAME``
_VARIABLE = re.compile(r"\$\{(\w+)(?:\[[@*]\])?(?::?[-=]([^}]*))?\}|\$(\w+)")
_ENV_WORD = re.compile(r"[A-Za-z_]\w*=")
_READ_HEREDOC = re.compile(r"""\s*read\b[^<]*?\b([A-Za-z_]\w*)\s*<<-?\s*['"]?(\w+)['"]?\s*$""")
_ARRAY_START = re.compile(r"(?:export\s+)?([A-Za-z_]\w*)=\((.*)")


def _finding(detector: str, line: int, excerpt: str, message: str, route: str) -> Finding:
    return Finding(
        detector, "dispatch", routes=(route,), message=message, line=line, excerpt=excerpt.strip()[:160]
    )


MAX_ESTIMATOR = 64
"""Characters of an estimator's name read (no estimator is named longer)."""
MAX_ESTIMATOR_WORDS = 4
"""Leading words of an estimator's name tried (``reinforce_plus_plus_baseline``)."""


def estimator_label(value: object, extended: bool = False) -> str | None:
    """Return the label a policy-gradient estimator's name selects (gae = PPO, grpo = GRPO), if any.

    ``extended``: the value is an estimator setting's, so a project's own estimator named after the
    one it extends (``adv_estimator=grpo_split``) is of its family (elsewhere ``GRPO_search`` names a
    project, not an estimator).
    """
    name = str(value)[:MAX_ESTIMATOR].lower().replace("reinforce_plus_plus", "reinforce++")
    parts = name.split("_", MAX_ESTIMATOR_WORDS)[:MAX_ESTIMATOR_WORDS]
    # the longest leading words that name an estimator: ``dr_grpo_x`` is Dr. GRPO's
    leading = ("_".join(parts[:n]) for n in range(len(parts), 0 if extended else len(parts) - 1, -1))
    label = next((ROUTE_WORDS[w] for w in leading if w in ROUTE_WORDS), None)
    return label if label in ("PPO", "GRPO") else None


def line_of_key(text: str, key: str) -> tuple[int, str]:
    """Return the 1-based line where a YAML text sets ``key``'s last part, and that line (1, "" if none)."""
    leaf = key.rsplit(".", 1)[-1]
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(f"{leaf}:"):
            return number, line
    return 1, ""


TRL_CONFIG_KEYS = (
    (("num_generations",), "GRPO"),
    (("beta", "max_prompt_length"), "DPO"),
    (("beta", "loss_type"), "DPO"),
    (("packing",), "SFT"),
    (("max_seq_length",), "SFT"),
    (("completion_only_loss",), "SFT"),
    (("assistant_only_loss",), "SFT"),
    (("dataset_text_field",), "SFT"),
)
"""Fields of TRL's config classes (GRPOConfig, DPOConfig, SFTConfig) that only one of them has,
as a training recipe YAML (open-r1's, TRL's ``--config``) sets them."""


def _trl_config(text: str, data: dict[Any, Any]) -> list[Finding]:
    """Return the route of a TRL training recipe, from the config fields it sets."""
    for keys, label in TRL_CONFIG_KEYS:
        if all(k in data for k in keys):
            line, excerpt = line_of_key(text, keys[0])
            return [_finding("YamlLauncher", line, excerpt, f"TRL config field {keys[0]}", label)]
    return []


def _yaml_routes(text: str) -> tuple[list[Finding], str | None]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return [], f"not valid YAML: {str(exc).splitlines()[0]}"
    except RecursionError:
        return [], "YAML nested too deeply"
    if not isinstance(data, dict):
        return [], None
    found: list[Finding] = []
    pairs = dict(flatten_keys(data))
    for key, value in pairs.items():
        leaf = key.rsplit(".", 1)[-1]
        label = None
        if (leaf == "stage" and isinstance(value, str)) or (leaf == "rl" and isinstance(value, str)):
            label = ROUTE_WORDS.get(value.lower())
        elif leaf in ("adv_estimator", "estimator") and "adv" in key:
            label = estimator_label(value, extended=True)
        elif leaf in TRAINER_KEYS and isinstance(value, str) and (named := route_word(value, strict=True)):
            # ``train.trainer: AcceleratePPOTrainer`` (trlx): the class the framework builds by name
            label = named[0] if named[0] in LABEL_KINDS else None
        elif leaf == "merge_method":
            label = "MERGE"
        elif leaf == "reward_funcs" and value:
            label = "GRPO"
        if label is not None:
            line, excerpt = line_of_key(text, key)
            found.append(_finding("YamlLauncher", line, excerpt, f"{key}: {value}", label))
    if "base_model" in data and ("datasets" in data or "pretraining_dataset" in data) and "rl" not in data:
        line, excerpt = line_of_key(text, "base_model")
        found.append(_finding("YamlLauncher", line, excerpt, "axolotl config without rl: supervised", "SFT"))
    if not found and ("learning_rate" in data or "output_dir" in data):
        found.extend(_trl_config(text, data))
    if not found:
        judge = next((k for k in pairs if JUDGE_KEY_WORDS & set(words(k.rsplit(".", 1)[-1]))), None)
        if judge is not None:
            # the settings of an LLM judge (``judge_model: gpt-4.1``): a benchmark's configuration
            line, excerpt = line_of_key(text, judge)
            found.append(
                Finding(
                    "YamlLauncher",
                    "scoring",
                    message=f"configures a judge ({judge})",
                    line=line,
                    excerpt=excerpt,
                )
            )
    if any(r in RL_ROUTES for f in found for r in f.routes) or "actor_rollout_ref" in data:
        for key, value in pairs.items():
            # scalars only: a list of aliases may expand to billions of items once written out
            scalar = value is None or isinstance(value, str | int | float | bool)
            if scalar and multi_turn_setting(key, str(value)[:MAX_VALUE], override=False):
                line, excerpt = line_of_key(text, key)
                found.append(_finding("YamlLauncher", line, excerpt, f"{key}: {value}", "ONLINE_RL"))
                break
    return found, None


def _expand(command: str, variables: dict[str, str]) -> str:
    """Substitute ``$NAME``, ``${NAME}`` and ``${NAME:-default}`` with the script's own assignments."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(3)
        default = (match.group(2) or "").strip("'\"")
        if name not in variables and not default and name.isdigit():
            return "$" + name  # the script's own argument: given when it runs, unknown here
        return variables.get(name, default)

    return _VARIABLE.sub(value, command)


UNREAD_CONFIG = "unread_config"
"""Variant of a launcher's ``dispatch`` finding whose framework reads its route from a config the
command names but this script does not fix: an argument the script is given (``llamafactory-cli train
$1``) or a file that cannot be read here."""
GIVEN_CONFIG = "given_config"
"""As :data:`UNREAD_CONFIG`, where the config is an argument the script is given (``$1``), not a file
it names."""


def _shell_routes(
    text: str, folder: Place | None = None, depth: int = 0, launched: dict[Path, Classification] | None = None
) -> list[Finding]:
    """Return what each command of a shell script runs.

    ``launched``: the scripts classified so far for this launcher (a sweep runs one script many times:
    it is read and parsed once).
    """
    launched = {} if launched is None else launched
    found: list[Finding] = []
    variables: dict[str, str] = {}
    conditional: set[str] = set()  # variables assigned in an ``if``/``case`` branch: maybe not set
    branches = 0
    array: tuple[str, list[str]] | None = None
    heredoc: tuple[str, str, list[str]] | None = None  # (variable, terminator, lines so far)
    logical = ""
    start = 1
    for number, line in enumerate(text.splitlines()[:MAX_LINES], 1):
        if heredoc is not None:
            # ``read -r -d '' CMD <<EOF`` ... ``EOF``: the lines are the variable's value (OpenRLHF's
            # examples write their commands so, then run ``python -m $CMD``)
            if line.strip() == heredoc[1]:
                value = " ".join(part.rstrip().rstrip("\\") for part in heredoc[2])
                variables[heredoc[0]] = _expand(value, variables)[:MAX_VALUE]
                heredoc = None
            else:
                heredoc[2].append(line)
            continue
        if (read := _READ_HEREDOC.match(line)) is not None:
            heredoc = (read.group(1), read.group(2), [])
            continue
        if not logical:
            start = number
        stripped = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        # Bash arrays (ARGS=( ... ) over several lines) hold the settings that "${ARGS[@]}" passes on.
        if array is not None:
            body, closed, _ = stripped.partition(")")
            array[1].append(body)
            if closed:
                variables[array[0]] = _expand(" ".join(array[1]), variables)[:MAX_VALUE]
                array = None
            continue
        if (opened := _ARRAY_START.fullmatch(stripped.strip())) is not None and ")" not in opened.group(2):
            array = (opened.group(1), [opened.group(2)])
            continue
        if stripped.rstrip().endswith("\\"):
            logical += stripped.rstrip()[:-1] + " "
            continue
        logical += stripped
        opening = logical.split(maxsplit=1)[0] if logical.strip() else ""
        branches += (opening in ("if", "case")) - (opening in ("fi", "esac"))
        if (assignment := _ASSIGNMENT.fullmatch(logical.strip())) is not None:
            # Capped: `A=$A$A` repeated would double a value on every line.
            name, append, value = assignment.groups()
            value = _expand(value.strip("'\""), variables)
            if append:  # ``OPTS+=" --lr 1e-5"``
                value = variables.get(name, "") + value
            variables[name] = value[:MAX_VALUE]
            if branches > 0:
                conditional.add(name)
        else:
            maybe = any(re.search(rf"\$\{{?{re.escape(n)}\b", logical) for n in conditional)
            command = _expand(logical, variables)
            found.extend(_command_routes(command, start, folder, depth, launched, settled=not maybe))
        logical = ""
    if logical.strip():
        # the last line ends in a backslash: bash runs the command at the end of the file
        found.extend(_command_routes(_expand(logical, variables), start, folder, depth, launched))
    return found


def _key_form(key: str) -> str:
    """Return a setting's key as compared: dots and hyphens as underscores.

    Command lines, Hydra and argparse spell one key these ways (``--merge-lora``, ``trainer.val_only``).
    """
    return key.replace(".", "_").replace("-", "_")


def _settings(words: list[str]) -> list[tuple[str, str]]:
    """``key=value``, ``--key=value`` and ``--key value`` settings of one command line."""
    pairs = []
    words = [w for word in words for w in word.split()]  # a quoted "${ARRAY[@]}" holds several
    for i, word in enumerate(words):
        if "=" in word:
            key, _, value = word.partition("=")
            pairs.append((key.lstrip("-+"), value))
        elif word.startswith("--") and i + 1 < len(words) and not words[i + 1].startswith("-"):
            pairs.append((word[2:], words[i + 1]))
    return pairs


def _switches(words: list[str]) -> list[tuple[str, str]]:
    """Return the switches a command line sets on: a ``--flag`` followed by an option or ending the line.

    ``("flag", "true")``, read only for a framework command's switch (``mlx_lm.lora --train``): a bare
    flag elsewhere is no setting of a route (``--add_sft_loss``, ``--no_use_tools``).
    """
    words = [w for word in words for w in word.split()]
    return [
        (word[2:], "true")
        for i, word in enumerate(words)
        if word.startswith("--")
        and len(word) > 2
        and "=" not in word
        and (i + 1 == len(words) or words[i + 1].startswith("-"))
    ]


def _named_script(words: list[str]) -> str | None:
    """Return the script a ``python``/``torchrun``/``bash``... command names, as written (or None)."""
    if not words:
        return None
    # the launcher may come after a wrapper and its options (``srun -p gpu --gres=gpu:8 torchrun ...``)
    start = next(
        (
            i
            for i, w in enumerate(words[:MAX_WRAPPER_WORDS])
            if Path(w).name.split(".")[0] in LAUNCHERS | SHELLS
        ),
        None,
    )
    if start is None:
        return None
    command = Path(words[start]).name.split(".")[0]
    suffix = ".py" if command in LAUNCHERS else ".sh"
    # The first script named, or ``-m module`` (``python -m eval.mmlu.run_eval``: the module's file,
    # from the folder the command runs in); what follows is the script's arguments, and a setting's
    # value (``reward.path=rewards/score.py``) names no script.
    script = None
    rest = words[start + 1 :]
    for i, word in enumerate(rest):
        if word.endswith(suffix) and "=" not in word:
            script = word
            break
        if word == "-m" and suffix == ".py" and i + 1 < len(rest):
            if rest[i + 1] in LAUNCHER_MODULES:
                continue  # ``python -m torch.distributed.run ... train.py``: the script comes next
            if re.fullmatch(r"[A-Za-z_][\w.]*", rest[i + 1]):
                script = rest[i + 1].replace(".", "/") + ".py"
            break
    return script


FALSE_VALUES = frozenset({"false", "0", "no"})
"""Values that turn a command line's switch off."""
OFF_VALUES = FALSE_VALUES | {"", "none", "null", "~"}
"""Values that set nothing (YAML's null, an empty setting) or turn it off."""


def _training_switched_off(words: list[str], settings: list[tuple[str, str]]) -> str | None:
    """Return the setting that turns a script's training off (transformers' ``--do_train False``).

    Only when the same command asks for an evaluation or predictions instead (``--do_eval``,
    ``--do_predict``), as a run that measures or generates with the script does.
    """
    pairs = dict(settings)
    off = pairs.get("do_train", "").lower() in FALSE_VALUES
    measures = any(
        pairs.get(k, "").lower() in TRUE_VALUES or (f"--{k}" in words and k not in pairs)
        for k in ("do_eval", "do_predict")
    )
    return f"--do_train {pairs['do_train']}" if off and measures else None


def chosen_route(command: str, possible: Sequence[str]) -> tuple[str, str] | None:
    """Return the route a command line's own setting picks for a launcher, and the setting.

    ``python train.py --stage dpo``, ``rlhf_type=kto``, ``algorithm.adv_estimator=grpo``: a setting
    whose value names one of the launcher's ``possible`` routes is what ran, whatever its default; so
    does a switch named for one turned on (``--use_dpo True``).
    """
    words = shell_words(command, comments=True)
    if words is None:  # an unclosed quote, or too long for shlex: the words as written
        words = command.split()
    for key, value in _settings(words):
        label = ROUTE_WORDS.get(value.lower()) or estimator_label(value, key.endswith(ESTIMATOR_FLAGS))
        if label is None and value.lower() in TRUE_VALUES:
            # a switch named for a route turned on (``--use_dpo True``)
            named = route_word(key, strict=True)
            label = named[0] if named is not None else None
        if label is not None and label in possible:
            return label, f"{key}={value}"
    return None


def command_routes(command: str) -> list[str]:
    """Return the route labels one command line runs (a ``trl`` subcommand, an entry module, flags)."""
    return [f.routes[0] if f.routes else WORK_OF_SIGNAL[f.signal] for f in _command_routes(command, 0)]


def unfixed_config(command: str) -> Finding | None:
    """Return the choice of routes a framework command leaves to a config it is given when it runs.

    ``python -m verl.trainer.main_ppo --config-name=$CFG``: the config the framework reads its route
    from is given when the line runs; None where the line names it or runs one route whatever.
    """
    return next(
        (f for f in _command_routes(command, 0) if f.variant == GIVEN_CONFIG and len(f.routes) > 1), None
    )


CONFIG_FLAGS = frozenset({"--config", "-c"})
"""Options that name a config, after which no word names what a command runs."""
CONFIG_NAME_FLAGS = frozenset({*CONFIG_FLAGS, "--config-name", "-cn"})
"""Options that name the config a framework command reads its route from (Hydra's ``--config-name``)."""
DEFAULT_NOTE = "(its default)"
"""Ends the message of a command whose route is its default, which a setting of the line may override."""


def _config_argument(words: list[str], end: int, folder: Place | None) -> Path | None:
    """Return the YAML config a framework command is given (``llamafactory-cli train x.yaml``), if readable.

    Looked for as a launched script is (:func:`_near`).
    """
    if folder is None:
        return None
    config = next((w for w in words[end:] if w.endswith((".yaml", ".yml"))), None)
    return None if config is None else _near(config, folder)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a launcher is read: its folder, and the folder nothing above which is ever read."""

    folder: Path
    """The launcher's folder (a script it runs is looked for from there)."""
    boundary: Path
    """The workspace's root: the folder classified, a run's files, or the launcher's repository."""
    problems: list[str] = field(default_factory=list, compare=False)
    """Scripts and configs the launcher names that are there but were not read, and why (shared by
    the scripts it runs in turn): its verdict was made without them."""


MAX_PROBLEMS = 3
"""Scripts not read that a launcher's result names (the first ones)."""
MAX_SHOWN = 200
"""Characters of a script's name shown in a problem."""


def place_of(path: Path, boundary: Path | None = None) -> Place:
    """Return where the launcher at ``path`` is read, within ``boundary`` when one is given.

    A launcher given on its own is read within its repository (the nearest folder above it, up to
    :data:`MAX_LEVELS_UP`, that holds ``.git``), else within its own folder and those up to
    :data:`MAX_LEVELS_UP` above it.
    """
    folder = path.parent.resolve()
    if boundary is not None:
        return Place(folder, boundary.resolve())
    above = [folder, *folder.parents][: MAX_LEVELS_UP + 1]
    repository = next((f for f in above if (f / ".git").exists()), None)
    return Place(folder, repository or above[-1])


def _near(named: str, place: Place) -> Path | None:
    """Return the file a launcher names, looked for in its neighbourhood only.

    The neighbourhood is the launcher's folder and up to :data:`MAX_LEVELS_UP` folders above it,
    nearest first, never above the place's boundary: launchers are run from their own folder or from
    the repository's root. An absolute path is the agent's machine's; its trailing parts are looked
    for the same way (``/home/me/proj/finetune.py`` as ``proj/finetune.py``, then ``finetune.py``).
    Nothing outside the neighbourhood is read, through a symlink or ``..`` either.
    """
    roots = [
        r
        for r in [place.folder, *place.folder.parents][: MAX_LEVELS_UP + 1]
        if r.is_relative_to(place.boundary)
    ]
    if not roots:
        return None
    parts = Path(named).parts
    tails = (
        [Path(*parts[i:]) for i in range(1, len(parts))][-MAX_LEVELS_UP - 1 :]
        if Path(named).is_absolute()
        else [Path(named)]
    )
    refused = None
    for tail in tails:
        for root in roots:
            try:
                candidate = (root / tail).resolve()
                if candidate.is_relative_to(roots[-1]) and candidate.is_file():
                    return candidate
                if refused is None and candidate.is_file():
                    refused = "outside the folder a launcher may read"  # (through ``..`` or a symlink)
            except (OSError, ValueError, RuntimeError) as exc:  # a name too long, a symlink loop
                # a name too long names nothing that can exist; anything else is there, unreadable
                if not (isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG):
                    refused = refused or "a symlink loop or an unreadable path"
    if refused is not None:
        _note(place, named, refused)
    return None


def _note(place: Place | None, named: str, why: str) -> None:
    """Record on the launcher's place that a file it names was not read, and why (once, the first few)."""
    problem = f"{inert(named[:MAX_SHOWN])}: {why}, not read"
    if place is not None and len(place.problems) < MAX_PROBLEMS and problem not in place.problems:
        place.problems.append(problem)


def _read_launched(script: Path, place: Place | None) -> SourceFile:
    """Read a script a launcher runs; one that cannot be read is noted on the launcher's place."""
    read = read_source(script, str(script))
    if read.text is None:
        _note(place, script.name, read.error or "unreadable")
    return read


def _entry_routes(
    entry: Entry,
    words: list[str],
    end: int,
    settings: list[tuple[str, str]],
    line: int,
    command: str,
    folder: Place | None,
) -> list[Finding]:
    """Return what one framework command of a line runs (``words[end:]`` follow the command)."""
    shown = " ".join(words[:end])[-80:]
    if entry.role == "eval":
        return [Finding("ShellLauncher", "scoring", message=shown, line=line, excerpt=command.strip()[:160])]
    if entry.label is not None:
        return [_finding("ShellLauncher", line, command, shown, entry.label)]
    if entry.choices and entry.key is None:
        # The first following word that names a choice (``tune run [torchrun options] <recipe>``).
        for word in words[end:]:
            if word in CONFIG_FLAGS or word.startswith("--config=") or word.endswith(".py"):
                break  # a config's name is not the recipe's; a .py recipe is the agent's own
            if (choice := entry.choose(word)) is not None and choice.label is not None:
                return [_finding("ShellLauncher", line, command, f"{shown} {word}", choice.label)]
        return []
    config = _config_argument(words, end, folder)  # the YAML the command is given, where readable
    if entry.key is not None:
        wanted = _key_form(entry.key)
        for key, value in [*settings, *(_switches(words[end:]) if entry.switch_only else [])]:
            if _key_form(key).endswith(wanted):
                choice = entry.choose(value)
                label = choice.label if choice is not None else estimator_label(value)
                if label is not None and label in entry.labels:
                    return [_finding("ShellLauncher", line, command, f"{shown} {key}={value}", label)]
        if config is not None:
            try:
                raw = read_regular(config, MAX_CONFIG_BYTES, follow_symlinks=True)
                text = raw[:MAX_CONFIG_BYTES].decode("utf-8", errors="replace")
            except OSError as exc:
                _note(folder, config.name, exc.strerror or type(exc).__name__)
                text = ""
            routes = [r for f in _yaml_routes(text)[0] for r in f.routes if r in entry.labels]
            if routes:
                return [_finding("ShellLauncher", line, command, f"{shown} {config.name}", routes[-1])]
    labels = entry.labels
    if not labels or entry.switch_only:
        return []
    # the config the command is given: its first argument, or the value of a config option
    rest = words[end:]
    given = next((w for w in rest if not w.startswith("-")), None)
    given = next((rest[i + 1] for i in range(len(rest) - 1) if rest[i] in CONFIG_NAME_FLAGS), given)
    # (``--config-name=$CFG``: Hydra's option and its value in one word)
    given = next((v for f, _, v in (w.partition("=") for w in rest) if v and f in CONFIG_NAME_FLAGS), given)
    unread = given is not None and given.endswith((".yaml", ".yml")) and config is None
    handed = given is not None and given.startswith("$")
    return [
        Finding(
            "ShellLauncher",
            "dispatch",
            routes=labels,
            default=entry.default,
            variant=GIVEN_CONFIG if handed else UNREAD_CONFIG if unread else None,
            message=f"{shown}: {entry.key} picks the route, {labels[0]} {DEFAULT_NOTE}",
            line=line,
            excerpt=command.strip()[:160],
        )
    ]


NOT_TRAINING_NAME_WORDS = frozenset(
    {
        *("eval", "evaluate", "evaluation", "test", "plot", "plots", "convert", "export", "infer"),
        *("inference", "generate", "gen", "merge", "serve", "server", "demo", "analysis", "analyze"),
    }
)
"""Words of a script's name that say it looks at a route's model rather than training it."""


EVALUATING_NAME_WORDS = frozenset({"eval", "evaluate", "evaluation", "benchmark"})
"""First words of a script named for evaluating (``eval_gpqa.py``, ``evaluate.py``)."""
GENERATING_NAME_WORDS = frozenset({"gen", "generate", "synth", "synthesize", "distill"})
"""First words of a script named for generating data (``gen_ins.py``, ``generate_data_seqkd.py``)."""


PERFORMANCE_NAME_WORDS = frozenset({"speed", "latency", "throughput", "memory", "flops", "timing", "profile"})
"""Words of a script's name that measure the machine, not a model's answers (``benchmark_latency.py``)."""
EVALUATION_PACKAGES = frozenset({"eval", "evals", "evaluation", "evaluations"})
"""Folders and packages a repository keeps its evaluation scripts in."""


def script_work(script: str) -> str | None:
    """Return what a script's file name says it does when it names no training route, if anything.

    ``eval_gpqa.py`` and ``run_eval.py`` evaluate, ``gen_res.py`` generates data, ``merge_models.py``
    merges: read by the name's first word (merging by any), as for :func:`_named_route`, else by the
    evaluation package it lies in.
    """
    said = words(Path(script).stem)
    if not said or set(said) & PERFORMANCE_NAME_WORDS:
        return None  # (``benchmark_throughput.py``: a speed benchmark measures the machine)
    if "merge" in said:
        return "MERGE"
    if said[0] in EVALUATING_NAME_WORDS or (
        said[0] == "run" and said[1:2] and said[1] in EVALUATING_NAME_WORDS
    ):
        return "EVAL_ONLY"
    # a script of a package kept for evaluation (``src/evaluation/run.py``, ``-m eval.main``,
    # ``evaluation/generate_answers.py``), unless named for the data it makes
    folders = {p.lower() for p in Path(script).parts[:-1]}
    if folders & EVALUATION_PACKAGES and not set(said) & {"data", "dataset", "sft", "train", "training"}:
        return "EVAL_ONLY"
    return "DISTILLATION" if said[0] in GENERATING_NAME_WORDS else None


def _named_work(script: str, line: int, command: str) -> list[Finding]:
    """Return what an absent script's file name says it does when it names no training route.

    The name is the evidence left (:func:`script_work`).
    """
    name = Path(script).name
    work = script_work(script)
    if work is None:
        return []
    if work == "MERGE":
        return [
            _finding(
                "ShellLauncher", line, command, f"runs {name} (not read here; its name says MERGE)", "MERGE"
            )
        ]
    return [
        Finding(
            "ShellLauncher",
            LAUNCHED_WORK[work],
            message=f"runs {name} (not read here; its name says {work})",
            line=line,
            excerpt=command.strip()[:160],
        )
    ]


ALGORITHM_KEYS = frozenset(
    {
        "algo",
        "algorithm",
        "algorithm_name",
        "alg",
        "rl_algo",
        "rl_algorithm",
        "rl_type",
        "critic_type",
        "stage",
    }
)
"""Last parts of a script's setting that choose its training algorithm (``--algo remax``,
``--critic_type rloo``, ``--algorithm_name ppo``, LLaMA-Factory's ``--stage dpo``)."""


def _algorithm_setting(
    script: str, settings: list[tuple[str, str]], line: int, command: str
) -> list[Finding]:
    """Return the route a command's algorithm setting names for a script not read here.

    ``deepspeed main.py --algo remax``: the script's own choice of algorithm is set by the command,
    stronger evidence than the script's file name.
    """
    if (NOT_TRAINING_NAME_WORDS | OTHER_WORK_NAME_WORDS) & set(words(Path(script).stem)):
        return []  # ``eval.py --algo ppo``, ``enjoy.py --algo ppo``: that algorithm's model is used
    for key, value in settings:
        if key.rsplit(".", 1)[-1].replace("-", "_").lower() not in ALGORITHM_KEYS:
            continue
        label = ROUTE_WORDS.get(value.lower()) or estimator_label(value, extended=True)
        if label is not None:
            message = f"runs {Path(script).name} (not read here) with {key}={value} ({label})"
            return [_finding("ShellLauncher", line, command, message, label)]
    return []


FINE_TUNING_NAME_WORDS = frozenset({"finetune", "finetuning", "lora", "qlora", "peft"})
"""Words of a script named for fine-tuning (``qlora.py``, ``train_lora.py``): supervised, where the
name says nothing else (``lora_dpo.py`` is DPO, ``apply_lora.py`` folds, ``chat_lora.py`` chats)."""
FINE_TUNE_SCRIPT_WORDS = FINE_TUNING_NAME_WORDS | {"fine", "tune", "train", "training", "run", "main"}
"""All the words a fine-tuning script's name may hold: it says only that it fine-tunes or runs."""
OTHER_WORK_NAME_WORDS = frozenset(
    {
        *("enjoy", "record", "video", "collect", "rollout", "rollouts", "sample", "sampling", "score"),
        *("scoring", "visualize", "visualise", "results", "benchmark", "compare", "prepare", "data"),
        *("dataset", "build", "apply", "chat", "predict", "quantize", "upload", "check", "download"),
        *("preprocess", "process", "render", "play"),
    }
)
"""Words of a script's name for work other than training (``enjoy.py --algo ppo`` replays an agent)."""


def _named_route(script: str | None, why: str, line: int, command: str) -> list[Finding]:
    """Return the route a launched script's file name says (``train_dpo.py``) when the script cannot.

    The name is the evidence left: read strictly, as a function's name is.
    """
    stem = Path(script).stem if script else ""
    named = route_word(stem, strict=True) if stem else None
    said = set(words(stem))
    if named is None and said & (FINE_TUNING_NAME_WORDS | {"tune"}) and said <= FINE_TUNE_SCRIPT_WORDS:
        named = ("SFT", "finetune")  # ``qlora.py``, ``train_lora.py``, ``finetune.py``: no other route named
    if named is None or named[0] not in LABEL_KINDS or NOT_TRAINING_NAME_WORDS & said:
        return []  # ``evaluate_grpo.py``, ``plot_ppo.py``: named for the route they look at
    message = f"runs {Path(script or '').name} ({why}; its name says {named[0]})"
    return [_finding("ShellLauncher", line, command, message, named[0])]


def _command_routes(
    command: str,
    line: int,
    folder: Place | None = None,
    depth: int = 0,
    classified: dict[Path, Classification] | None = None,
    settled: bool = True,
) -> list[Finding]:
    """Return what one command line runs.

    ``settled``: no variable the line reads was set in only one branch of an ``if``/``case`` (a
    setting from there may not hold, so it does not turn the run into a validation).
    """
    words = shell_words(command, comments=True)
    if words is None:  # an unclosed quote, or too long for shlex: the words as written
        words = command.split()
    # ``ACCELERATE_LOG_LEVEL=info accelerate launch ...``, ``env A=1 python ...``: the environment
    # set for one command is not the command
    while words and (words[0] == "env" or _ENV_WORD.match(words[0])):
        words = words[1:]
    settings = _settings(words)
    found: list[Finding] = []
    named = _named_script(words)
    # the script is looked for in the launcher's neighbourhood only (:func:`_near`)
    script = _near(named, folder) if named is not None and folder is not None else None
    by_name: list[Finding] = []  # what the script's name says, where neither it nor a framework can
    if script is not None and script.suffix == ".sh":
        if depth < MAX_SHELL_DEPTH and folder is not None:  # (a script is only found from a place)
            shell = _read_launched(script, folder)
            runs = (
                _shell_routes(
                    shell.text, Place(script.parent, folder.boundary, folder.problems), depth + 1, classified
                )
                if shell.text is not None
                else []
            )
            routes = list(dict.fromkeys(r for f in runs for r in f.routes))
            if routes:
                message = f"runs {script.name} ({', '.join(routes)})"
                found.append(_finding("ShellLauncher", line, command, message, routes[-1]))
        script = None
    if script is not None:
        classified = {} if classified is None else classified
        if script not in classified:
            classified[script] = classify_source(_read_launched(script, folder))
        launched = classified[script]
        by_loss_elsewhere = (
            _named_route(named, "it trains a loss not read here", line, command)
            if launched.primary == "UNKNOWN"
            else []
        )
        picked = chosen_route(command, launched.possible_routes) if launched.possible_routes else None
        switched_off = _training_switched_off(words, settings)
        if switched_off is not None and launched.primary not in NOT_ROUTES:
            # ``python qlora.py --do_train False --do_predict True``: the script trains, this run not
            found.append(
                Finding(
                    "ShellLauncher",
                    "scoring",
                    message=f"runs {script.name} with {switched_off}: it evaluates or predicts only",
                    line=line,
                    excerpt=command.strip()[:160],
                )
            )
        elif picked is not None:
            # the script chooses its route by a setting, and this command line sets it
            message = f"runs {script.name} with {picked[1]} ({picked[0]})"
            found.append(_finding("ShellLauncher", line, command, message, picked[0]))
        elif by_loss_elsewhere:
            # it trains a loss of another file: its name says the route (added below, where no
            # framework's command on the line says it)
            by_name = by_loss_elsewhere
        elif launched.primary not in NOT_ROUTES:
            found.append(
                _finding(
                    "ShellLauncher",
                    line,
                    command,
                    f"runs {script.name} ({launched.primary})",
                    launched.primary,
                )
            )
        elif launched.primary in LAUNCHED_WORK:
            # an evaluation or a data generation run: what the script does when it trains nothing
            found.append(
                Finding(
                    "ShellLauncher",
                    LAUNCHED_WORK[launched.primary],
                    message=f"runs {script.name} ({launched.primary})",
                    line=line,
                    excerpt=command.strip()[:160],
                )
            )
    elif named is not None and named.endswith(".py") and "$" not in named:
        # what the command's own setting names as the algorithm, else the script's file name
        by_name = _algorithm_setting(named, settings, line, command) or _named_route(
            named, "not read here", line, command
        )
        switched_off = _training_switched_off(words, settings)
        if switched_off is not None and by_name:
            # ``python qlora.py --do_train False --do_predict True``: named for training, run to predict
            message = f"runs {Path(named).name} (not read here) with {switched_off}: it evaluates or predicts"
            excerpt = command.strip()[:160]
            by_name = [Finding("ShellLauncher", "scoring", message=message, line=line, excerpt=excerpt)]
        if not by_name and folder is not None:
            # a launcher's command (not one a Python file writes into a string, whose script name
            # is all there is to read, as likely a template's): what the script is named for doing
            by_name = _named_work(named, line, command)
    entries = commands_in(words)
    for end, entry in entries:
        found.extend(_entry_routes(entry, words, end, settings, line, command, folder))
    if (
        not entries
        and _passes_harness_flags(words)
        # (the script read where it lies decides, unless it shows no route; so does a name saying one)
        and (
            script is None or classified is None or classified[script].primary in ("NONE_TRAINING", "UNKNOWN")
        )
        and not any(f.routes for f in by_name)
    ):
        # ``accelerate launch eval/eval.py --model custom --model_args pretrained=out --tasks humaneval``:
        # a fork of the harness (or a script built on it) run on a model, whatever the script is called
        message = "passes an evaluation harness's --model_args and --tasks: it evaluates a model"
        found.append(
            Finding("ShellLauncher", "scoring", message=message, line=line, excerpt=command.strip()[:160])
        )
    estimators = []
    turns = []
    for key, value in settings:
        if key.endswith(ESTIMATOR_FLAGS) and (label := estimator_label(value, extended=True)) is not None:
            estimators.append(_finding("ShellLauncher", line, command, f"{key}={value}", label))
        if multi_turn_setting(key, value):
            turns.append(_finding("ShellLauncher", line, command, f"{key}={value}", "ONLINE_RL"))
    if not entries and not estimators:
        found.extend(by_name)  # a name is the weakest evidence: only where nothing else says
    if not any(r in RL_ROUTES for f in (*found, *estimators) for r in f.routes):
        turns = []  # an evaluation's turn limit makes nothing online RL
    if estimators:
        # The estimator decides what a policy-gradient entry point runs; its default no longer applies.
        estimated = {e.routes[0] for e in estimators}
        found = [
            f
            for f in found
            if not f.routes or (not f.message.endswith(DEFAULT_NOTE) and f.routes[0] not in estimated)
        ]
    # episodes of several turns make the policy-gradient training this command runs online RL
    found += turns + estimators
    validates = _validation_only(words, settings) if settled else None
    if validates is not None:
        # ``main_ppo ... trainer.val_only=True``: the trainer validates its checkpoint and returns
        # before its first update; this command trains nothing, whatever the entry point could train
        # (also an entry point not known here: the setting is a trainer's)
        found = [f for f in found if not f.routes]
        message = f"runs its training entry point with {validates}: it validates only, no update"
        excerpt = command.strip()[:160]
        found.append(Finding("ShellLauncher", "scoring", message=message, line=line, excerpt=excerpt))
    return found


HARNESS_FLAGS = frozenset({"--model_args", "--tasks"})
"""lm-evaluation-harness's command-line contract (lighteval's first command line and the harness's
forks take it too): a script given both runs an evaluation harness on a model."""


TRAINING_OPTIONS = frozenset(
    {
        *("--learning_rate", "--lr", "--num_train_epochs", "--num_epochs", "--epochs", "--max_steps"),
        *("--per_device_train_batch_size", "--train_batch_size", "--gradient_accumulation_steps"),
        *("--warmup_steps", "--warmup_ratio", "--num_generations", "--do_train"),
    }
)
"""Options of a training run: with them a script's ``--tasks`` names what it trains on."""


def _passes_harness_flags(words: list[str]) -> bool:
    """Say whether one command gives both of an evaluation harness's options (``--tasks=gsm8k`` too).

    Only a line of one command (``train.py --tasks t && eval.py --model_args m`` gives each its own)
    and one setting nothing a training run is given (a learning rate, epochs, generations per prompt).
    """
    if _several_commands(words, pipes=True):
        return False
    options = {w.split("=", 1)[0] for w in words if w.startswith("--")}
    return options >= HARNESS_FLAGS and not options & TRAINING_OPTIONS


VALIDATION_ONLY = frozenset({"val_only", "eval_only", "only_eval", "test_only", "evaluate_only"})
"""Last parts of a setting that makes a training entry point only validate (verl's
``trainer.val_only=True``, ``--eval_only``)."""


COMMAND_SEPARATORS = frozenset({"&&", "||", ";"})
"""Words that end one command and begin another on the same line (not a pipe into ``tee``, nor ``&``
sending the one command to the background)."""


def _several_commands(words: list[str], pipes: bool = False) -> bool:
    """Say whether a line's words hold several commands (``a && b``, ``a; b``; with ``pipes``, ``a | b``)."""
    return any(w in COMMAND_SEPARATORS or w.endswith(";") or (pipes and w == "|") for w in words)


def _validation_only(words: list[str], settings: list[tuple[str, str]]) -> str | None:
    """Return the setting of a command line that turns its training into a validation run, if any.

    Not on a line of several commands (``train.py && eval.py --eval_only``): which one it set is not
    told apart here, and the training one still trains.
    """
    if _several_commands(words):
        return None
    for key, value in settings:
        if _key_form(key.rsplit(".", 1)[-1]) in VALIDATION_ONLY and value.lower() in TRUE_VALUES:
            return f"{key}={value}"
    valued = {key for key, _ in settings}
    for word in words:
        switch = word[2:].replace("-", "_") if word.startswith("--") else ""
        if switch in VALIDATION_ONLY and word[2:] not in valued:
            return word
    return None


TURN_LIMITS = ("max_turns", "max_turn", "max_rounds", "max_assistant_turns", "max_tool_calls")
"""Settings bounding the turns of an episode: above one, rollouts are multi-turn."""
TOOL_SWITCHES = ("multi_turn.enable", "do_search", "use_tools", "enable_tools", "tool_use")
"""Switches that put an environment or tool loop into the rollouts."""
AGENT_LOOPS = ("agent_flow", "agent_loop", "agent_name", "agent_type")
"""Settings naming the agent loop rollouts run through (``rollout.agent.default_agent_flow=...``)."""
ROLLOUT_TOOLS = frozenset({"tools", "tool_instances", "tool_config", "tool_config_path", "tools_config"})
"""Parts of a rollout setting's key that configure the tools a policy calls while it generates
(``actor_rollout_ref.rollout.tools.tool_instances.search.class_path=...``)."""
ENVIRONMENT_SERVERS = frozenset({"env_addr", "env_url", "env_server", "env_server_url", "env_host"})
"""Settings giving the address of the environment server episodes are played against."""


def multi_turn_setting(key: str, value: str, override: bool = True) -> bool:
    """Say whether a launcher's setting makes its policy-gradient rollouts multi-turn episodes.

    ``trainer.max_turns=4``, ``rollout.agent.max_steps=5``, ``do_search=True``,
    ``multi_turn.enable=true``, ``default_agent_flow=agent_env_loop``, ``rollout.mode=sync_with_tool``,
    an environment server's address. A value the script is given (``${MAX_TURNS}``) counts: a turn
    limit is only set where there are turns. Tools configured for the rollouts count on a command
    line (``override``): a base config defines tools that only some launchers switch on.
    """
    key, value = key.lower(), value.strip("'\"").strip().lower()
    last = key.rsplit(".", 1)[-1]
    if last in TURN_LIMITS or (last == "max_steps" and "agent" in key):
        if value.startswith("$"):
            return True
        return value.isascii() and value.isdecimal() and len(value) < 10 and int(value) > 1
    if key.endswith(TOOL_SWITCHES):
        return value in TRUE_VALUES
    if last.endswith(AGENT_LOOPS):
        return value not in OFF_VALUES and "single" not in value
    parts = key.split(".")
    if "rollout" in parts and (
        (override and ROLLOUT_TOOLS & set(parts)) or (last == "mode" and "tool" in value)
    ):
        return value not in OFF_VALUES  # tools configured for (or a mode with tools in) the rollouts
    return last in ENVIRONMENT_SERVERS and value not in OFF_VALUES


def classify_launcher(source: SourceFile, boundary: Path | None = None) -> Classification:
    """Classify a YAML config or a shell script by the routes it selects.

    ``boundary``: the folder nothing above which is read for the scripts a shell launcher runs
    (:func:`place_of`).
    """
    result = Classification(source.path, error=source.error)
    if source.text is None:
        return result
    if source.kind == "yaml":
        findings, error = _yaml_routes(source.text)
        result.error = result.error or error
    else:
        place = place_of(Path(source.path), boundary)
        findings = _shell_routes(source.text, place)
        if place.problems and result.error is None:
            result.error = "scripts it runs were not read: " + "; ".join(place.problems)
    result.findings = findings
    routes = list(dict.fromkeys(r for f in findings for r in f.routes))
    work = [f for f in findings if f.signal in WORK_OF_SIGNAL]
    if not routes and work:
        # it only runs evaluations or data generation: the last one run is what it does
        result.primary = WORK_OF_SIGNAL[work[-1].signal]
        result.role = WORK_ROLES[result.primary]
        result.labels = [result.primary]
        return result
    if not routes:
        return result
    # Several commands in one script run one after the other: the last one makes the final model.
    final = next(f for f in reversed(findings) if f.routes)
    result.role = "launcher"
    result.possible_routes = routes
    result.primary = result.default_route = "ONLINE_RL" if "ONLINE_RL" in routes else final.routes[0]
    if (
        final.variant in (UNREAD_CONFIG, GIVEN_CONFIG)
        and len(final.routes) > 1
        and result.primary != "ONLINE_RL"
    ):
        # the last command's framework picks its route from a config this script does not fix
        # (``llamafactory-cli train $1``): which route ran is the config's
        result.primary = "CONFIG_DEPENDENT"
        result.default_route = final.default
    result.labels = list(dict.fromkeys([result.primary, *routes]))
    return result
