"""A reference world for the tests that record: one base model pre-trained per test worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from arb_audit.runner.reference.world import base_model


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh output folder holding a freshly pre-trained base model."""
    out = tmp_path_factory.mktemp("world")
    base_model(out)
    return out
