"""Shared fixtures: run folders written fresh by tests.fixture_runs (file times included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixture_runs import SCENARIOS, write_run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "autorl_bench"


@pytest.fixture
def make_run(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Return a function that writes the named scenario under tmp_path and returns its folder."""

    def make(name: str) -> Path:
        return write_run(SCENARIOS[name](), tmp_path / name)

    return make


@pytest.fixture(autouse=True)
def _private_user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the per-user cache at a fresh folder: no test reads or writes the real ~/.cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user-cache")))
