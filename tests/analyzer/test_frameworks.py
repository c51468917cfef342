"""The framework table's examples: each framework's own, and one generated per entry and command."""

from __future__ import annotations

import pytest

from arb_audit.analyzer.classify import Classification, combine, find
from arb_audit.analyzer.frameworks import FRAMEWORKS, Entry, commands_in, entry_for
from arb_audit.analyzer.launchers import command_routes


def _classify(code: str) -> Classification:
    findings, error = find(code)
    assert error is None
    result = Classification("example.py")
    combine(result, findings)
    return result


def _label(entry: Entry) -> str:
    if entry.labels and entry.kind is None:
        return "CONFIG_DEPENDENT"
    assert entry.label is not None
    return entry.label


def _concrete(pattern: str) -> str:
    """A word a glob of the table matches (``*dpo*`` -> ``xdpox``)."""
    return pattern.replace("*", "x")


EXAMPLES = [(f.name, code, label) for f in FRAMEWORKS for code, label in f.invalid]
ENTRIES = [(f.package, e) for f in FRAMEWORKS for e in f.entries if e.name]
VALID = [(f.name, code) for f in FRAMEWORKS for code in f.valid]
LINES = [(f.name, line, label) for f in FRAMEWORKS for line, label in f.lines]
COMMANDS = [(command, e) for f in FRAMEWORKS for e in f.entries for command in e.commands]


@pytest.mark.parametrize(("framework", "code", "label"), EXAMPLES)
def test_framework_example_resolves(framework: str, code: str, label: str) -> None:
    assert _classify(code).primary == label, framework


@pytest.mark.parametrize(("package", "entry"), ENTRIES, ids=lambda x: getattr(x, "name", x))
def test_every_entry_resolves(package: str, entry: Entry) -> None:
    *module, name = entry.name.split(".")
    where = ".".join([package, "somewhere", *module])
    assert entry_for(f"{where}.{name}") == entry
    code = f"from {where} import {name} as thing\nthing(config)\n"
    if entry.trained_by is not None:
        # a model object: built alone it runs nothing, trained in the file it runs the entry's stage
        assert not [f for f in find(code)[0] if f.detector == "FrameworkEntry"]
        method, _, given = entry.trained_by.rstrip(")").partition("(")
        call = f"m.{method}({given}=data)" if given else f"m.{method}(data)"
        code = f"from {where} import {name} as thing\nm = thing(config)\n{call}\n"
    if not entry.given:
        assert _classify(code).primary == _label(entry)
        return
    # a function whose arguments decide: each keyword given runs its own; none given is no evidence
    assert not [f for f in find(code)[0] if f.detector == "FrameworkEntry"]
    for argument, choice in entry.given:
        given = f"from {where} import {name} as thing\nthing(config, {argument}=x)\n"
        assert _classify(given).primary == _label(choice), argument


@pytest.mark.parametrize(("command", "entry"), COMMANDS, ids=lambda x: x if isinstance(x, str) else "")
def test_every_command_resolves(command: str, entry: Entry) -> None:
    line = " ".join(_concrete(w) for w in command.split())
    if entry.choices and entry.key is None:
        # The word after the command picks: each choice runs its own label.
        for choice in entry.choices:
            assert command_routes(f"{line} {_concrete(choice.name)} --config c") == (
                [choice.label] if choice.label else []
            ), choice.name
    elif entry.switch_only:
        # The key switches a stage on: unset, the command runs none; set to a choice, that choice's.
        line = f"python {line}" if command.startswith("-m") else line
        assert command_routes(f"{line} --seed 1") == []
        assert entry.key is not None
        for choice in entry.choices:
            assert command_routes(f"{line} --{entry.key} {_concrete(choice.name)}") == [choice.label]
    else:
        expected = entry.label or entry.labels[0]
        assert command_routes(f"python {line} --seed 1" if command.startswith("-m") else line) == [expected]


@pytest.mark.parametrize(("framework", "line", "label"), LINES)
def test_framework_command_line(framework: str, line: str, label: str | None) -> None:
    assert command_routes(line) == ([label] if label else []), framework


@pytest.mark.parametrize(("framework", "code"), VALID)
def test_framework_valid_example_is_silent(framework: str, code: str) -> None:
    findings, _ = find(code)
    assert not [f for f in findings if f.detector == "FrameworkEntry"], framework


def test_unknown_package_is_no_entry() -> None:
    assert entry_for("mylib.DPOTrainer") is None and entry_for("nemo_rl") is None


def test_a_dotted_entry_needs_its_whole_tail() -> None:
    # ``train`` alone says nothing: the module around it (``train_dpo``) is what the table knows.
    assert entry_for("openrlhf.cli.train_dpo.train") is not None
    assert entry_for("openrlhf.cli.train_sft.train") != entry_for("openrlhf.cli.train_dpo.train")
    assert entry_for("openrlhf.utils.train") is None


def test_a_config_name_is_not_a_recipe() -> None:
    # ``tune run`` is given the agent's own recipe file; the config's name mentions DPO.
    assert command_routes("tune run my_recipe.py --config llama3/8B_lora_dpo") == []
    assert not commands_in(["echo", "tune"])


ISSUE_FRAMEWORKS = (
    *("trl", "openrlhf", "llamafactory", "unsloth", "mergekit", "open_r1", "nemo_aligner", "nemo_rl"),
    *("torchtune", "axolotl", "skyrl", "prime_rl", "areal", "roll", "swift", "oat", "fastchat"),
    *("litgpt", "lmflow", "rl4lms", "lm_eval"),
)
"""The packages of the frameworks the analyzer issue requires the table to cover (its item 2)."""


@pytest.mark.parametrize("package", ISSUE_FRAMEWORKS)
def test_the_required_frameworks_are_in_the_table(package: str) -> None:
    assert any(f.package == package for f in FRAMEWORKS), package
