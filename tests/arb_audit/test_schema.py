"""The audit record's schema: documented where users read it, described field by field, versioned.

docs/reference.md's JSON table is kept equal to :class:`AuditReport` (as sqlite-utils and harlequin test
their documented flags against the code), every field has a description in ``arb-audit schema``, the
library call gives what ``--json`` prints, and a kept audit of another schema version is audited anew.
"""

from __future__ import annotations

import json
import re
import shutil
import types
import typing
from pathlib import Path

import duckdb
import pytest
from pydantic import BaseModel

import arb_audit
from arb_audit.audit_cache import kept_in
from arb_audit.schema import SCHEMA_VERSION, AuditReport, json_schema
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "fixtures" / "reference"


def _documented_rows() -> dict[str, str]:
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    section = text.split("## The JSON report", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        found = re.match(r"\| ((?:`\w+`(?:, )?)+) \| (.*) \|$", line)
        if found:
            for key in re.findall(r"`(\w+)`", found[1]):
                rows[key] = found[2]
    return rows


def _parts(annotation: object) -> list[type[BaseModel]]:
    """The models an annotation holds (through lists, dicts and Optional)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        return [m for arg in typing.get_args(annotation) for m in _parts(arg)]
    return []


def test_the_documented_json_table_is_the_schema() -> None:
    rows = _documented_rows()
    assert set(rows) == set(AuditReport.model_fields), "docs/reference.md's JSON table and the schema differ"
    for key, field in AuditReport.model_fields.items():
        for part in _parts(field.annotation):
            if part.__name__ == "Evidence":  # described once, in its own paragraph
                continue
            undocumented = [name for name in part.model_fields if f"`{name}`" not in rows[key]]
            assert not undocumented, f"docs/reference.md: the `{key}` row does not name {undocumented}"


def test_every_field_is_described_in_the_json_schema() -> None:
    schema = json_schema()
    assert schema["properties"]["schema_version"]["default"] == SCHEMA_VERSION
    for name, definition in [("AuditReport", schema), *schema["$defs"].items()]:
        for prop, spec in definition.get("properties", {}).items():
            assert spec.get("description"), (
                f"{name}.{prop} has no description (a docstring in arb_audit/schema.py)"
            )


def test_the_schema_command_prints_it() -> None:
    code, out, _ = run_cli("schema")
    assert code == 0 and json.loads(out) == json.loads(json.dumps(json_schema()))
    code, out, _ = run_cli("schema", "--tree")
    assert code == 0 and "runs" in json.loads(out)["properties"]


def _copy(name: str, tmp_path: Path) -> Path:
    shutil.copytree(REFERENCE / name, tmp_path / name, ignore=shutil.ignore_patterns(".arb-audit"))
    shutil.copytree(REFERENCE / "base", tmp_path / "base", ignore=shutil.ignore_patterns(".arb-audit"))
    return tmp_path / name / "recording"


def test_the_library_call_gives_what_json_prints(tmp_path: Path) -> None:
    recording = _copy("sft_only", tmp_path)
    report = arb_audit.audit(recording)
    assert isinstance(report, AuditReport) and report.schema_version == SCHEMA_VERSION
    code, out, _ = run_cli(str(recording), "--json")
    assert code == 0 and json.loads(out) == report.to_json()
    assert AuditReport.model_validate_json(out) == report
    assert report.route.chain_text == "SFT" and report.best is not None


def test_the_library_and_the_command_audit_alike_each_into_its_own_store(tmp_path: Path) -> None:
    """Issue 18's goal: ``arb_audit.audit()`` in a notebook gives the report ``arb-audit RUN_DIR --json``
    prints, each computed from the run (two stores, so neither reads back the other's kept audit)."""
    recording = _copy("sft_only", tmp_path)
    code, out, _ = run_cli(str(recording), "--json", "--store", str(tmp_path / "cli.duckdb"))
    report = arb_audit.audit(recording, store=tmp_path / "notebook.duckdb")
    printed = json.loads(out)
    assert code == 0 and printed["run"].pop("store_path") == str(tmp_path / "cli.duckdb")
    made = report.to_json()
    assert made["run"].pop("store_path") == str(tmp_path / "notebook.duckdb")
    assert printed == made


def test_a_kept_audit_of_another_schema_version_is_audited_anew(tmp_path: Path) -> None:
    recording = _copy("sft_only", tmp_path)
    first = arb_audit.audit(recording)
    store = Path(first.run.store_path or "")
    with duckdb.connect(str(store)) as con:
        (key,) = con.execute("SELECT input_key FROM audits").fetchone() or (None,)
        assert kept_in(con, key) == first
        older = {**first.to_json(), "schema_version": SCHEMA_VERSION - 1}
        con.execute("UPDATE audits SET report = ?", [json.dumps(older)])
        assert kept_in(con, key) is None  # never read as this version
        con.execute(
            "UPDATE audits SET report = ?",
            [json.dumps({**older, "schema_version": SCHEMA_VERSION, "run": 1})],
        )
        assert kept_in(con, key) is None  # does not validate: never misread
    again = arb_audit.audit(recording)
    assert again.to_json() == first.to_json()


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    data = json.loads(run_cli(str(_copy("copy_base", tmp_path)), "--json")[1])
    data["route"]["surprise"] = 1
    with pytest.raises(ValueError, match="surprise"):
        AuditReport.model_validate(data)


def test_evidence_is_defined_once_and_its_json_leaves_empty_fields_out() -> None:
    """The audit's evidence pointer is the collectors' and the store's dataclass, not a copy of it."""
    from dataclasses import fields

    from pydantic import ValidationError

    from arb_audit.evidence import Evidence
    from arb_audit.schema import Evidence as AuditEvidence
    from arb_audit.schema import Part

    class Cited(Part):
        evidence: list[AuditEvidence]
        """Where it is seen."""

    read = Cited.model_validate({"evidence": [{"kind": "log", "path": "run.log", "line": 3}]})
    assert read.evidence == [Evidence("log", path="run.log", line=3)]
    assert read.to_json() == {"evidence": [{"kind": "log", "path": "run.log", "line": 3}]}
    with pytest.raises(ValidationError, match="page"):
        Cited.model_validate({"evidence": [{"kind": "log", "page": 3}]})
    described = json_schema()["$defs"]["Evidence"]
    assert set(described["properties"]) == {f.name for f in fields(Evidence)}
    assert all(p.get("description") for p in described["properties"].values())


def test_the_stores_summary_columns_are_the_typed_records(tmp_path: Path) -> None:
    """save_audit fills its columns from the AuditReport's fields, not by key from its JSON."""
    report = arb_audit.audit(_copy("sft_only", tmp_path))
    with duckdb.connect(str(report.run.store_path)) as con:
        row = con.execute(
            "SELECT best_seq, lineage, routes_attempted, routes_adopted, failure_mode, flags, quadrant,"
            " evidence, report FROM audits"
        ).fetchone()
    assert row is not None
    best_seq, lineage, attempted, adopted, mode, flags, cell, evidence, text = row
    assert report.best is not None and best_seq == report.best.seq
    assert json.loads(lineage) == [s.to_json() for s in report.route.chain or []]
    assert json.loads(attempted) == report.route.attempted and json.loads(adopted) == report.route.adopted
    assert (mode, cell) == (report.failure.mode, report.quadrant.cell)
    assert json.loads(flags) == [f.to_json() for f in report.flags]
    assert json.loads(evidence) == report.to_json()["failure"]["evidence"]
    assert AuditReport.model_validate_json(text) == report
