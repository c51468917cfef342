"""``tensors.rel_change``: each graded tensor's relative change against the base model, stored by the
audit beside its weights summary (reference recordings, whose base model lies in the workspace)."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pytest

from arb_audit.analyzer.lineage_weights import record_tensor_changes, tensor_changes
from arb_audit.analyzer.weights import WeightDiff
from arb_audit.model import TensorDigest
from arb_audit.pipeline import audit
from arb_audit.store import RunStore
from tests.reference.recordings import copy_out, stored


def _rows(store: str) -> list[tuple[str, str, str | None, list[int] | None, float | None, str | None]]:
    with duckdb.connect(store, read_only=True) as con:
        return [
            (r[0], r[1], r[2], r[3], r[4], r[5])
            for r in con.execute(
                "SELECT artifact_id, name, dtype, shape, rel_change, content_hash FROM tensors ORDER BY name"
            ).fetchall()
        ]


def test_the_audit_stores_each_graded_tensors_change_against_the_base(tmp_path: Path) -> None:
    recording = copy_out("sft_only", tmp_path)
    report = audit(recording).to_json()
    [graded] = report["submissions"]
    rows = _rows(report["run"]["store_path"])
    names = {t.name for f in _kept_tensors(recording, graded["artifact_id"]) for t in f}
    assert {r[1] for r in rows} == names and len(rows) == len(names) == 40
    assert {r[0] for r in rows} == {graded["artifact_id"]}
    assert all(r[4] is not None and r[4] > 0 for r in rows)  # SFT moved every tensor
    assert all(r[2] == "F32" and r[3] for r in rows)
    # The same numbers as the lineage's summary (this step's parent is the base model).
    [step] = report["route"]["chain"]
    assert step["parent"] == "models/base"
    assert max(r[4] or 0.0 for r in rows) == pytest.approx(step["weights"]["max_rel_change"], abs=1e-6)
    top = step["weights"]["most_changed"][0]
    assert dict((r[1], r[4]) for r in rows)[top["tensor"]] == pytest.approx(top["rel_change"], abs=1e-6)
    # Auditing again replaces the audit's rows.
    assert len(_rows(audit(recording).to_json()["run"]["store_path"])) == 40


def _kept_tensors(recording: Path, artifact_id: str) -> list[list[TensorDigest]]:
    """The recording's kept manifest of ``artifact_id``: its tensors, file by file."""
    with RunStore.open(recording / "run.duckdb", read_only=True) as store:
        manifest = store.load_manifest(artifact_id)
    assert manifest is not None
    return [list(f.tensors) for f in manifest.files]


def test_a_copy_of_the_base_changed_nothing(tmp_path: Path) -> None:
    report = audit(copy_out("copy_base", tmp_path)).to_json()
    rows = _rows(report["run"]["store_path"])
    assert len(rows) == 40 and {r[4] for r in rows} == {0.0}


def test_the_rows_a_kept_manifest_holds_are_filled_in_place(tmp_path: Path) -> None:
    recording = copy_out("merge", tmp_path)
    record = stored(recording)
    with RunStore.open(recording / "run.duckdb") as store:
        filled = record_tensor_changes(store, record, tmp_path / "merge" / "workspace", None)
    rows = _rows(str(recording / "run.duckdb"))
    assert filled == len(rows) == 40
    assert all(r[5] is not None and r[4] is not None and r[4] > 0 for r in rows)


def test_only_tensors_the_diff_compared_get_a_change() -> None:
    diff = WeightDiff(compared=3, identical=2, changed=[("a", 0.5)], added=["new"])
    # A tensor the base lacks has no change to tell.
    assert tensor_changes(diff, ["a", "b", "c", "new"]) == {"a": 0.5, "b": 0.0, "c": 0.0}
    # A file that could not be read: the tensors the diff does not name were not compared.
    unread = WeightDiff(compared=1, identical=0, changed=[("a", math.inf)], problems=["x: unreadable"])
    assert tensor_changes(unread, ["a", "b"]) == {"a": None}
    # Counts that do not add up (an adapter's module names): nothing is claimed unchanged.
    adapter = WeightDiff(compared=2, identical=0, changed=[("q_proj", 0.1), ("v_proj", 0.2)])
    assert tensor_changes(adapter, ["base.q_proj.lora_A.weight", "base.v_proj.lora_A.weight"]) == {}
