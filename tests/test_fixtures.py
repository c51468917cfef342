"""The bundled fixtures are exactly what tests/fixture_runs.py writes (no hand edits, no drift)."""

from __future__ import annotations

import os
from pathlib import Path

from tests import fixture_posttrainbench
from tests.conftest import FIXTURES
from tests.fixture_runs import write_all


def _tree(root: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if ".arb-audit" in path.parts or (path.is_dir() and not path.is_symlink()):
            continue
        out[rel] = os.readlink(path) if path.is_symlink() else path.read_bytes()
    return out


def test_bundled_fixtures_match_the_generator(tmp_path: Path) -> None:
    write_all(tmp_path)
    assert _tree(tmp_path) == _tree(FIXTURES)


def test_bundled_posttrainbench_tree_matches_its_generator(tmp_path: Path) -> None:
    bundled = FIXTURES.parent / "posttrainbench"
    fixture_posttrainbench.write_all(tmp_path)
    assert _tree(tmp_path) == _tree(bundled)
    assert sum(len(b) for b in _tree(bundled).values()) < 300_000
