"""A study row holding an audit of another schema version is never read as this version's.

``load_study`` (the one reader of a study for the paper tables, the figures, the data tables and the
site) reads such a row as a run not audited, saying why; the commands that draw from it say how many
were left out.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from arb_audit.schema import SCHEMA_VERSION
from arb_audit.store import RunStore
from arb_audit.study import AUDIT_COLUMNS, load_study, older_audits
from arb_audit.study_data import data_table
from arb_audit.taxonomy.tables import table
from tests.taxonomy.study_cases import write_study
from tests.test_cli import run_cli

OLD = "/runs/a"


@pytest.fixture
def study(tmp_path: Path) -> Path:
    """The hard-case study, its run OLD's audit rewritten as an older arb-audit's (schema 4, the last
    with an untyped ``run`` bag), its headline columns as that version wrote them."""
    path = write_study(tmp_path / "study.duckdb")
    with RunStore.open(path) as store:
        (text,) = store.con.execute("SELECT report FROM study_runs WHERE run_key = ?", [OLD]).fetchone() or (
            "",
        )
        older = json.loads(text)
        older["schema_version"] = 4
        older["run"]["agent_log"] = {"cli_exit": 0}  # the bag's keys sat in the run
        store.con.execute("UPDATE study_runs SET report = ? WHERE run_key = ?", [json.dumps(older), OLD])
        store.con.execute("UPDATE study_runs SET report = 'not JSON' WHERE run_key = '/runs/b'")
    return path


def test_a_row_of_another_version_reads_as_not_audited_with_why(study: Path) -> None:
    frame = load_study(study)
    old = frame.filter(pl.col("run_key") == OLD).row(0, named=True)
    assert old["error"] == (
        f"its stored audit is of schema version 4, not {SCHEMA_VERSION}: ingest it again to audit it anew"
    )
    assert all(old[c] is None for c in AUDIT_COLUMNS) and old["task"] == "gsm8k"  # its cell is kept
    garbled = frame.filter(pl.col("run_key") == "/runs/b").row(0, named=True)
    assert garbled["error"].startswith("its stored audit is not an audit's JSON")
    assert older_audits(frame) == [OLD, "/runs/b"]
    current = frame.filter(~pl.col("run_key").is_in([OLD, "/runs/b"]))
    assert not any(e.startswith("its stored audit") for e in current["error"].drop_nulls())


def test_tables_count_it_as_not_audited_and_data_tables_name_it(study: Path) -> None:
    frame = load_study(study)
    failures = table("failures", frame).filter((pl.col("by") == "task") & (pl.col("group") == "gsm8k"))
    assert "not_audited" in failures["failure"].to_list()
    runs = data_table("runs", frame)
    assert OLD in runs.unreadable and "/runs/b" in runs.unreadable
    assert OLD not in runs.frame["run_key"].to_list()


def test_the_commands_say_what_they_left_out(study: Path, tmp_path: Path) -> None:
    code, _, err = run_cli("export", str(study), "--table", "failures", "--format", "csv")
    assert code == 0 and "2 run(s) counted as not audited" in err and OLD in err
    pytest.importorskip("matplotlib")
    code, _, err = run_cli("plot", str(study), "--figure", "failures", "-o", str(tmp_path / "f.png"))
    assert code == 0 and "2 run(s) left out" in err
