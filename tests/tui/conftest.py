"""A reviewed run (the bundled composite recording, audited in a temp folder) and a hard-case study."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arb_audit.pipeline import audit
from tests.reference.recordings import run_id
from tests.taxonomy.study_cases import write_study

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "reference"
KEY = run_id(REFERENCE / "sft_grpo" / "recording")
"""The reviewed run's key in its run store: its run id."""


@pytest.fixture(scope="session")
def audited_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run store of the composite SFT→GRPO recording, audited once per test worker."""
    copy = tmp_path_factory.mktemp("reviewed") / "sft_grpo"
    shutil.copytree(REFERENCE / "sft_grpo", copy, symlinks=True)
    return Path(audit(copy / "recording").to_json()["run"]["store_path"])


@pytest.fixture
def run_store(audited_store: Path, tmp_path: Path) -> Path:
    """A fresh copy of the audited run store (each test records its own verdicts)."""
    return Path(shutil.copy(audited_store, tmp_path / "run.duckdb"))


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """The tables' hard-case study: ties, unicode names, a run that could not be audited."""
    return write_study(tmp_path / "study.duckdb")
