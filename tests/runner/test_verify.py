"""verify on a recording made here: each graded path is read once, and one that cannot be read is named."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import arb_audit.runner.verify
from arb_audit.model import ArtifactManifest, RunInfo, Submission
from arb_audit.runner.artifact_hash import hash_artifact
from arb_audit.runner.verify import verify
from arb_audit.store import RunStore
from tests.runner.scripted_agent import checkpoint


def test_a_path_graded_many_times_is_read_once_and_an_unreadable_one_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    checkpoint(workspace / "v1", 1)
    checkpoint(workspace / "v2", 2)
    run = RunInfo(
        "recorded:t/r", "recorded", str(tmp_path), workspace_path=str(workspace), started_at=datetime.now(UTC)
    )
    with RunStore.open(tmp_path / "run.duckdb") as store:
        store.ensure_run(run, None)
        for path in ("v1", "v1", "v1", "v2"):
            manifest = hash_artifact(workspace / path)
            store.append_submission(
                run.run_id,
                Submission(
                    seq=0,
                    status="scored",
                    model_path=path,
                    artifact_path=path,
                    artifact_id=manifest.artifact_id,
                ),
                manifest,
            )
    reads: list[Path] = []

    def counting(path: Path) -> ArtifactManifest:
        reads.append(path)
        if path.name == "v2":  # as a read refused by the file system would (root reads everything here)
            raise PermissionError(13, "Permission denied", str(path / "model.safetensors"))
        return hash_artifact(path)

    monkeypatch.setattr(arb_audit.runner.verify, "hash_artifact", counting)
    found = verify(tmp_path).mismatches
    assert sorted(p.name for p in reads) == ["v1", "v2"]
    assert [(m.what, m.where) for m in found] == [("artifact", "v2 (submission 4)")]
    assert found[0].message == f"{workspace / 'v2' / 'model.safetensors'} cannot be read: Permission denied"
