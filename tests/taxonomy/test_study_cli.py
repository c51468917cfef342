"""``arb-audit ingest`` and ``arb-audit export`` on real run folders: parallel, cached, failures kept."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.store import RunStore
from arb_audit.study import load_study
from tests.conftest import FIXTURES
from tests.test_cli import run_cli


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """A folder holding AutoRL-Bench runs and a PostTrainBench results tree, nested."""
    root = tmp_path / "runs"
    shutil.copytree(FIXTURES / "improves", root / "arl" / "improves", symlinks=True)
    shutil.copytree(FIXTURES / "no_valid", root / "arl" / "no_valid", symlinks=True)
    shutil.copytree(FIXTURES.parent / "posttrainbench", root / "deeper" / "ptb", symlinks=True)
    return root


@pytest.mark.slow
def test_ingest_audits_every_run_then_remembers_them(runs: Path, tmp_path: Path) -> None:
    study = tmp_path / "study.duckdb"
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study), "--jobs", "2")
    assert code == 0, out
    frame = load_study(study)
    assert frame.height == 4 and frame["error"].is_null().all()
    assert set(frame["format"]) == {"autorl_bench", "posttrainbench"}
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study))
    assert code == 0 and "0 audited, 4 unchanged" in out
    # a changed run is audited again, and only it
    marker = next((runs / "arl" / "improves").rglob("scores.json"))
    marker.write_text(marker.read_text() + " ")
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study))
    assert "1 audited, 3 unchanged" in out


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_a_row_of_another_schema_version_is_audited_anew_not_read(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURES / "improves", runs / "improves", symlinks=True)
    shutil.copytree(FIXTURES / "no_valid", runs / "no_valid", symlinks=True)
    study = tmp_path / "study.duckdb"
    assert run_cli("ingest", str(runs), "--study", str(study), "--jobs", "1")[0] == 0
    with RunStore.open(study) as store:
        (key, text) = (
            store.con.execute("SELECT run_key, report FROM study_runs ORDER BY run_key").fetchone() or ()
        )
        older = json.dumps({**json.loads(text), "schema_version": SCHEMA_VERSION - 1})
        store.con.execute("UPDATE study_runs SET report = ? WHERE run_key = ?", [older, key])
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study), "--jobs", "1")
    assert code == 0 and "1 audited, 1 unchanged" in out
    frame = load_study(study).filter(pl.col("run_key") == key)
    assert AuditReport.model_validate_json(frame["report"][0]).schema_version == SCHEMA_VERSION


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_a_run_that_cannot_be_audited_is_kept_with_its_error(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = runs / "arl" / "no_valid"
    run_dir = next(p.parent for p in broken.rglob("scores.json"))
    (run_dir / ".arb-audit").write_text("not a folder")  # its own store cannot go there...
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked / "cache"))  # ...nor into the cache
    study = tmp_path / "study.duckdb"
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study), "--jobs", "1")
    assert code == 1 and "failed: " in out and str(run_dir) in out
    frame = load_study(study)
    assert frame.height == 4
    assert frame.filter(pl.col("error").is_not_null())["run_key"].to_list() == [str(run_dir.resolve())]


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_a_mapping_file_sets_cell_keys(runs: Path, tmp_path: Path) -> None:
    mapping = tmp_path / "cells.yaml"
    mapping.write_text("'*improves*':\n  scaffold: my-scaffold\n  seed: 3\n")
    study = tmp_path / "study.duckdb"
    run_cli("ingest", str(runs / "arl"), "--study", str(study), "--mapping", str(mapping))
    frame = load_study(study).filter(pl.col("scaffold") == "my-scaffold")
    assert frame.height == 1 and frame["seed"].to_list() == ["3"]
    mapping.write_text("'*':\n  colour: red\n")
    code, _, err = run_cli("ingest", str(runs), "--study", str(study), "--mapping", str(mapping))
    assert code == 1 and "colour are not cell keys" in err
    for bad, says in (
        ("level: hard", "level 'hard'"),
        ("level: 1099511627776", "0-99"),
        ("mode: {a: 1}", "mode"),
    ):
        mapping.write_text(f"'*':\n  {bad}\n")
        code, _, err = run_cli("ingest", str(runs), "--study", str(study), "--mapping", str(mapping))
        assert code == 1 and says in err, err


@pytest.mark.slow
def test_export_writes_each_format_and_refuses_what_it_cannot(runs: Path, tmp_path: Path) -> None:
    study = tmp_path / "study.duckdb"
    run_cli("ingest", str(runs), "--study", str(study))
    code, out, _ = run_cli("export", str(study), "--table", "cells", "--format", "markdown")
    assert code == 0 and out.startswith("| Task | Level |") and "humaneval" in out
    code, _, _ = run_cli(
        "export", str(study), "--table", "routes", "--format", "parquet", "-o", str(tmp_path / "r.pq")
    )
    assert code == 0 and pl.read_parquet(tmp_path / "r.pq").columns[:3] == ["level", "scaffold", "route"]
    assert run_cli("export", str(study), "--table", "routes", "--format", "parquet")[0] == 2
    code, _, err = run_cli("export", str(study), "--table", "nope")
    assert code == 2 and "cells, routes" in err
    code, _, err = run_cli("export", str(tmp_path / "missing.duckdb"), "--table", "cells")
    assert code == 2 and "no such study" in err
    run_store = next(runs.rglob("run.duckdb"))  # an audited run's own store is no study
    code, _, err = run_cli("export", str(run_store), "--table", "cells")
    assert code == 2 and "holds no ingested runs" in err and str(run_store) in err


def test_ingest_with_nothing_to_ingest(tmp_path: Path) -> None:
    code, _, err = run_cli("ingest", str(tmp_path), "--study", str(tmp_path / "s.duckdb"))
    assert code == 2 and "no run folders found" in err
    assert not os.path.exists(tmp_path / "s.duckdb")
