"""The run store: migrations give the exact schema, old stores open, records round-trip, chains hold."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest

from arb_audit.evidence import Evidence
from arb_audit.migrations import MIGRATIONS
from arb_audit.model import (
    ArtifactManifest,
    FileDigest,
    Flag,
    Problem,
    RunInfo,
    RunRecord,
    Submission,
    TaskDescription,
    TensorDigest,
)
from arb_audit.store import RunStore, StoreError, StoreHost, locate_store, revisions_path_for

EXPECTED_TABLES = {
    "_arb_migrations",
    "runs",
    "study_runs",
    "revisions",
    "files",
    "commands",
    "submissions",
    "artifacts",
    "tensors",
    "signals",
    "audits",
    "verdicts",
    "problems",
    "flags",
    "reported_iterations",
    "artifact_files",
    "classifications",
}


def _record(run_id: str = "autorl_bench:gsm8k/r1", scores: tuple[float, ...] = (1.0, 3.0)) -> RunRecord:
    at = datetime(2026, 3, 10, 2, 0, tzinfo=UTC)
    run = RunInfo(
        run_id=run_id,
        source_format="autorl_bench",
        source_path="/runs/r1",
        task="gsm8k",
        task_description=TaskDescription("AutoRL-Bench's built-in tasks", 1, 1319, "policy_gradient"),
        base_score=2.0,
        started_at=at,
        utc_offset_s=28800,
        agent_exit_code=0,
    )
    subs = [
        Submission(
            seq=i,
            status="scored",
            model_path=f"output/v{i}",
            score=s,
            completed_at=at,
            evidence=[Evidence("log", path="run.log", line=i)],
        )
        for i, s in enumerate(scores, 1)
    ]
    return RunRecord(
        run=run,
        submissions=subs,
        problems=[Problem("run.log", "odd")],
        flags=[Flag("grader_probing", "reset", [Evidence("file", path="scores.json")])],
    )


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
            " ORDER BY ordinal_position",
            [table],
        ).fetchall()
    ]


Opener = Callable[..., AbstractContextManager[RunStore]]


@pytest.fixture(params=["connected", "attached"])
def open_store(request: pytest.FixtureRequest) -> Iterator[Opener]:
    """Open a store as ``RunStore.open`` does, or by attaching it to a long-lived ``StoreHost``."""
    yield RunStore.open if request.param == "connected" else StoreHost().open


def test_blank_store_gets_every_table_and_migration(tmp_path: Path, open_store: Opener) -> None:
    with open_store(tmp_path / "s.duckdb") as store:
        tables = {
            r[0] for r in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        assert tables == EXPECTED_TABLES
        assert store.applied_migrations() == [m.__name__ for m in MIGRATIONS]
        assert _columns(store.con, "submissions")[:12] == [
            "run_id",
            "seq",
            "requested_at",
            "completed_at",
            "model_path",
            "artifact_id",
            "score",
            "error",
            "status",
            "best_so_far",
            "prev_hash",
            "record_hash",
        ]
        assert "evidence" in _columns(store.con, "submissions")


def test_store_written_by_an_older_version_opens_and_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE _arb_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)")
    MIGRATIONS[0](con)
    con.execute("INSERT INTO _arb_migrations VALUES ('m001_initial', now())")
    con.execute("INSERT INTO runs (run_id, task) VALUES ('old-run', 'gsm8k')")
    con.close()
    with RunStore.open(path) as store:
        assert store.applied_migrations() == [m.__name__ for m in MIGRATIONS]
        assert store.con.execute("SELECT task, extra FROM runs").fetchall() == [("gsm8k", None)]
        assert store.load_record("old-run").run.task == "gsm8k"


def test_record_round_trips(tmp_path: Path) -> None:
    record = _record()
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.save_record(record, tmp_path / "s.revisions.git")
        back = store.load_record(record.run.run_id)
    assert back.run.agent_exit_code == 0 and back.run.agent_timed_out is None
    assert back.run.task_description == record.run.task_description
    assert back.run.started_at == record.run.started_at
    assert [s.score for s in back.submissions] == [1.0, 3.0]
    assert back.submissions[1].evidence == [Evidence("log", path="run.log", line=2)]
    assert back.problems == record.problems
    assert back.flags == record.flags


def test_reingest_replaces_derived_rows_but_keeps_verdicts(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.save_record(_record(), None)
        store.con.execute(
            "INSERT INTO verdicts (run_id, reviewer, field, value) VALUES "
            "('autorl_bench:gsm8k/r1', 'ana', 'route', 'SFT')"
        )
        store.save_record(_record(scores=(5.0,)), None)
        assert store.con.execute("SELECT count(*) FROM submissions").fetchone() == (1,)
        assert store.con.execute("SELECT count(*) FROM verdicts").fetchone() == (1,)
        assert store.con.execute("SELECT best_so_far FROM submissions").fetchone() == (5.0,)


def test_failed_ingest_leaves_the_previous_one(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.save_record(_record(), None)
        broken = _record(scores=(1.0,))
        broken.submissions.append(broken.submissions[0])  # duplicate primary key
        with pytest.raises(duckdb.Error):
            store.save_record(broken, None)
        assert len(store.load_record("autorl_bench:gsm8k/r1").submissions) == 2


def test_hash_chain_detects_an_edited_row(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.save_record(_record(scores=(1.0, 2.0, 3.0)), None)
        assert store.verify_submission_chain("autorl_bench:gsm8k/r1") is None
        store.con.execute("UPDATE submissions SET score = 99 WHERE seq = 2")
        assert store.verify_submission_chain("autorl_bench:gsm8k/r1") == 2


def test_a_graded_manifest_is_kept_once_with_its_submission(tmp_path: Path) -> None:
    tensors = sorted(  # by name, as the hasher lists them
        (TensorDigest(f"layer.{i}.weight", "BF16", (4, 2**31 - 1), f"{i:064x}") for i in range(12)),
        key=lambda t: t.name,
    )
    manifest = ArtifactManifest(
        "a" * 64,
        [
            FileDigest("config.json", 30, "c" * 64),
            FileDigest("model.safetensors", 9000, "d" * 64, tensors, note="1 stretch(es) of bytes"),
        ],
    )
    run = RunInfo("recorded:t/r", "recorded", str(tmp_path), started_at=datetime.now(UTC))
    with RunStore.open(tmp_path / "s.duckdb") as store:
        store.ensure_run(run, None)
        for _ in range(2):
            store.append_submission(
                run.run_id,
                Submission(seq=0, status="scored", model_path="v1", artifact_id="a" * 64),
                manifest,
            )
        assert store.load_manifest("a" * 64) == manifest
        assert store.load_manifest("b" * 64) is None
        assert store.con.execute("SELECT count(*) FROM tensors").fetchone() == (12,)
        assert store.verify_submission_chain(run.run_id) is None
    with RunStore.open(tmp_path / "s.duckdb") as store:  # a resumed recording knows it is kept
        store.append_submission(
            run.run_id, Submission(seq=0, status="scored", model_path="v1", artifact_id="a" * 64), manifest
        )
        assert store.con.execute("SELECT count(*), max(seq) FROM submissions").fetchone() == (3, 3)
        assert store.con.execute("SELECT count(*) FROM artifact_files").fetchone() == (2,)


def test_default_store_lives_in_the_run_folder_when_writable(tmp_path: Path) -> None:
    assert locate_store(tmp_path) == (tmp_path / ".arb-audit" / "run.duckdb", None)
    assert locate_store(tmp_path, tmp_path / "x.duckdb") == (tmp_path / "x.duckdb", None)
    assert revisions_path_for(tmp_path / "run.duckdb") == tmp_path / "run.revisions.git"


@pytest.mark.parametrize("plant", ["file", "symlinked folder", "symlinked revisions"])
def test_a_planted_store_folder_sends_the_store_to_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plant: str
) -> None:
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    own = run / ".arb-audit"
    if plant == "file":
        own.write_text("an agent put a file here")
    elif plant == "symlinked folder":
        own.symlink_to(elsewhere)
    else:
        own.mkdir()
        (own / "run.revisions.git").symlink_to(elsewhere)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path, why = locate_store(run)
    assert path.parent.parent == tmp_path / "cache" / "arb-audit"
    assert (why is not None and ".arb-audit" in why) or "run.duckdb" in (why or "")
    assert list(elsewhere.iterdir()) == []


def test_a_held_store_is_waited_for_then_reported(tmp_path: Path, open_store: Opener) -> None:
    path = tmp_path / "s.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, time; c = duckdb.connect({str(path)!r});"
            " print('held', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match="lock"), open_store(path, wait_s=0.5):
            pass
    finally:
        holder.kill()
        holder.wait()
    with open_store(path, wait_s=5) as store:
        assert store.applied_migrations()


def test_unopenable_store_is_a_store_error(tmp_path: Path, open_store: Opener) -> None:
    bad = tmp_path / "not-a-db.duckdb"
    bad.write_text("this is not a duckdb file")
    with pytest.raises(StoreError, match=r"not-a-db\.duckdb"), open_store(bad):
        pass
    assert bad.read_text() == "this is not a duckdb file"


def test_a_new_store_file_is_small(tmp_path: Path, open_store: Opener) -> None:
    """16 KiB blocks: an empty migrated store is well under the 3.4 MB DuckDB's default blocks made."""
    with open_store(tmp_path / "run.duckdb"):
        pass
    assert (tmp_path / "run.duckdb").stat().st_size < 600_000


def _other_process(path: Path, sql: str) -> None:
    subprocess.run(
        [sys.executable, "-c", f"import duckdb; duckdb.connect({str(path)!r}).execute({sql!r})"], check=True
    )


def test_a_host_releases_the_store_between_uses_and_reads_what_others_wrote(tmp_path: Path) -> None:
    path, host = tmp_path / "s.duckdb", StoreHost()
    with host.open(path) as store:
        store.con.execute("CREATE TABLE notes (n INTEGER)")
        store.con.execute("INSERT INTO notes VALUES (1)")
    _other_process(path, "INSERT INTO notes VALUES (2)")  # would fail on the lock if still attached
    with host.open(path, read_only=True) as store:
        assert store.con.execute("SELECT n FROM notes ORDER BY n").fetchall() == [(1,), (2,)]
    _other_process(path, "INSERT INTO notes VALUES (3)")
    with host.open(path, read_only=True) as store:
        assert store.con.execute("SELECT count(*) FROM notes").fetchall() == [(3,)]


def test_a_host_drops_the_transaction_a_failed_use_left_open(tmp_path: Path) -> None:
    path, host = tmp_path / "s.duckdb", StoreHost()
    with host.open(path) as store:
        store.con.execute("CREATE TABLE notes (n INTEGER)")
    with pytest.raises(RuntimeError), host.open(path) as store:
        store.con.execute("BEGIN TRANSACTION")
        store.con.execute("INSERT INTO notes VALUES (1)")
        raise RuntimeError("the caller failed mid-transaction")
    with host.open(path) as store:
        assert store.con.execute("SELECT count(*) FROM notes").fetchall() == [(0,)]
    with RunStore.open(path, read_only=True) as store:  # and nothing holds the file
        assert store.con.execute("SELECT count(*) FROM notes").fetchall() == [(0,)]


def test_a_host_attaches_a_path_with_a_quote(tmp_path: Path) -> None:
    path = tmp_path / "reviewer's study.duckdb"
    with StoreHost().open(path) as store:
        assert store.applied_migrations() == [m.__name__ for m in MIGRATIONS]
    assert path.is_file()


def test_a_closed_host_lets_its_instance_go_and_opens_again(tmp_path: Path) -> None:
    host = StoreHost()
    with host.open(tmp_path / "s.duckdb") as store:
        assert store.applied_migrations()
    host.close()
    assert not host.running
    with host.open(tmp_path / "s.duckdb", read_only=True) as store:  # a new instance, as needed
        assert store.applied_migrations() == [m.__name__ for m in MIGRATIONS]
    host.close()
    host.close()  # closing twice is harmless
