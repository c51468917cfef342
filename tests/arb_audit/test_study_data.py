"""Data tables for analysts: one row per run, submission, lineage stage and command, typed by the schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Literal

import polars as pl
import pytest

import arb_audit
from arb_audit.schema import AuditReport, Stage, Submission
from arb_audit.store import RunStore
from arb_audit.study import fingerprints, load_study, row_from_audit, save_rows
from arb_audit.study_data import DATA_TABLES, data_table, polars_type
from tests.test_cli import run_cli

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "reference"


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, AuditReport]:
    root = tmp_path_factory.mktemp("study")
    for name in ("sft_grpo", "base"):
        shutil.copytree(REFERENCE / name, root / name, ignore=shutil.ignore_patterns(".arb-audit"))
    report = arb_audit.audit(root / "sft_grpo" / "recording")
    path = root / "study.duckdb"
    with RunStore.open(path) as store:
        rows = [
            row_from_audit("/runs/grpo", "fp1", report, None, {}),
            row_from_audit("/runs/old", "fp2", report, None, {}),
            row_from_audit("/runs/broken", "fp3", None, "could not be audited", {}),
        ]
        save_rows(store, rows)
        # an audit stored by an older arb-audit: left out of the data tables, and counted
        older = json.dumps({**report.to_json(), "schema_version": 0})
        store.con.execute("UPDATE study_runs SET report = ? WHERE run_key = '/runs/old'", [older])
        # ...and audited anew by the next ingest, though its folder is unchanged
        assert fingerprints(store) == {"/runs/grpo": "fp1", "/runs/broken": "fp3"}
    return path, report


def test_each_table_has_the_schemas_columns_and_types(study: tuple[Path, AuditReport]) -> None:
    frame = load_study(study[0])
    for name, spec in DATA_TABLES.items():
        found = data_table(name, frame)
        assert dict(found.frame.schema) == {"run_key": pl.String(), "run_id": pl.String(), **spec.schema}, (
            name
        )
        assert found.unreadable == ["/runs/old"]
        assert set(found.frame["run_key"]) == {"/runs/grpo"}


def test_rows_are_the_audits_facts(study: tuple[Path, AuditReport]) -> None:
    path, report = study
    frame = load_study(path)
    runs = data_table("runs", frame).frame.row(0, named=True)
    assert (runs["run_id"], runs["chain"], runs["quadrant"]) == (
        report.run.run_id,
        report.route.chain_text,
        report.quadrant.cell,
    )
    assert runs["n_submissions"] == len(report.submissions) and runs["flags"] == sorted(
        {f.flag for f in report.flags}
    )
    submissions = data_table("submissions", frame).frame
    assert submissions["seq"].to_list() == [s.seq for s in report.submissions]
    assert submissions.filter(pl.col("best"))["seq"].to_list() == [report.best.seq if report.best else None]
    stages = data_table("stages", frame).frame.filter(pl.col("in_best"))
    assert [(s.kind, s.artifact) for s in report.route.chain or []] == list(
        zip(stages["kind"], stages["artifact"], strict=True)
    )
    assert set(stages["strength"]) <= {"verified", "supported", "weak", "conflicting", "none"}
    commands = data_table("commands", frame).frame
    assert commands["command"].to_list() == [c.command for c in report.commands]


def test_field_types_map_to_polars_types() -> None:
    assert polars_type(int | None) == pl.Int64()
    assert polars_type(float) == pl.Float64()
    assert polars_type(Literal["a", "b"] | None) == pl.String()
    assert polars_type(list[str]) == pl.List(pl.String())
    assert polars_type(list[Stage]) == pl.String()  # nested parts are kept as JSON text
    assert polars_type(Submission.model_fields["evidence"].annotation) == pl.String()


def test_the_command_writes_csv_and_parquet_and_refuses_latex(
    study: tuple[Path, AuditReport], tmp_path: Path
) -> None:
    path, report = study
    code, out, err = run_cli("export", str(path), "--table", "submissions", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("run_key,run_id,seq,status,score")
    assert "1 run(s) left out" in err and "/runs/old" in err
    target = tmp_path / "stages.parquet"
    code, _, _ = run_cli("export", str(path), "--table", "stages", "--format", "parquet", "-o", str(target))
    assert code == 0 and pl.read_parquet(target).schema["parents"] == pl.List(pl.String())
    code, _, err = run_cli("export", str(path), "--table", "commands", "--format", "latex")
    assert code == 2 and "data table" in err
    code, _, err = run_cli("export", str(path), "--table", "everything")
    assert code == 2 and "runs, submissions, stages, commands" in err
    assert json.loads(report.to_json_text())["schema_version"] == report.schema_version


def test_the_study_columns_are_the_typed_row_s_fields() -> None:
    """The table's polars schema is derived from StudyRow: each field, in order, with its type."""
    from dataclasses import fields

    import polars as pl

    from arb_audit.study import STUDY_SCHEMA, StudyRow

    assert [f.name for f in fields(StudyRow)] == list(STUDY_SCHEMA)
    assert STUDY_SCHEMA["level"] == pl.Int32() and STUDY_SCHEMA["best_score"] == pl.Float64()
    assert STUDY_SCHEMA["ingested_at"] == pl.Datetime("us")
    assert STUDY_SCHEMA["flags"] == pl.List(pl.String()) and STUDY_SCHEMA["report"] == pl.String()
