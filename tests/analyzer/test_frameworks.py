"""The framework table's examples: each framework's own, and one generated per entry."""

from __future__ import annotations

import pytest

from arb_audit.analyzer.classify import Classification, combine, find
from arb_audit.analyzer.frameworks import FRAMEWORKS, Entry, entry_for
from arb_audit.taxonomy.files import STAGE_LABELS


def _classify(code: str) -> Classification:
    findings, error = find(code)
    assert error is None
    result = Classification("example.py")
    combine(result, findings)
    return result


def _label(entry: Entry) -> str:
    if entry.routes:
        return "CONFIG_DEPENDENT"
    if entry.role == "eval":
        return "EVAL_ONLY"
    assert entry.kind is not None
    return "ONLINE_RL" if entry.interactive else STAGE_LABELS[entry.kind]


EXAMPLES = [(f.name, code, label) for f in FRAMEWORKS for code, label in f.invalid]
ENTRIES = [(f.package, e) for f in FRAMEWORKS for e in f.entries]
VALID = [(f.name, code) for f in FRAMEWORKS for code in f.valid]


@pytest.mark.parametrize(("framework", "code", "label"), EXAMPLES)
def test_framework_example_resolves(framework: str, code: str, label: str) -> None:
    assert _classify(code).primary == label, framework


@pytest.mark.parametrize(("package", "entry"), ENTRIES, ids=lambda x: getattr(x, "name", x))
def test_every_entry_resolves(package: str, entry: Entry) -> None:
    assert entry_for(f"{package}.somewhere.{entry.name}") == entry
    code = f"from {package}.somewhere import {entry.name} as thing\nthing(config)\n"
    assert _classify(code).primary == _label(entry)


@pytest.mark.parametrize(("framework", "code"), VALID)
def test_framework_valid_example_is_silent(framework: str, code: str) -> None:
    findings, _ = find(code)
    assert not [f for f in findings if f.detector == "FrameworkEntry"], framework


def test_unknown_package_is_no_entry() -> None:
    assert entry_for("mylib.DPOTrainer") is None and entry_for("nemo_rl") is None
