"""A store found in a run folder is the agent's to write: every query on it is bounded, and one holding
what arb-audit never makes (views over huge ranges, recursive views, macros, triggers, tables defined
otherwise, tables of tens of millions of rows) is refused with a problem naming it, while the audit goes on.

The planted stores are made here by code, each from a store arb-audit made, changed the way an agent
could change it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

import arb_audit
from arb_audit.cache_dirs import cache_root
from arb_audit.model import ArtifactManifest, FileDigest, RunInfo, Submission, TensorDigest
from arb_audit.store import MAX_MANIFEST_TENSORS, RunStore, StoreHost, StoreUnusable, UnkeyedManifest
from arb_audit.store_bounds import (
    MAX_ROWS,
    MAX_TEXT_CHARS,
    TooManyRows,
    bounded_rows,
    capped,
    connect_config,
    too_long,
)
from arb_audit.tui.session import MAX_LISTED_RUNS, ReviewError, ReviewSession, Unread
from tests.reference.recordings import copy_out
from tests.test_cli import MakeRun, run_cli

BOUND_S = 60.0
"""What "finishes in bounded time" means here: well under the minutes a planted view would run for."""

Plant = Callable[[duckdb.DuckDBPyConnection], object]
PLANTS: dict[str, tuple[str, Plant]] = {
    "view-over-a-huge-range": (
        "a view 'audits'",
        lambda con: con.execute(
            "DROP TABLE audits; CREATE VIEW audits AS SELECT 'r' AS run_id, range::VARCHAR AS input_key,"
            " '{}' AS report, NULL AS depends, NULL AS mac FROM range(1000000000000)"
        ),
    ),
    "recursive-view": (
        "a view 'submissions'",
        lambda con: con.execute(
            "DROP TABLE submissions; CREATE VIEW submissions AS WITH RECURSIVE t(seq) AS"
            " (SELECT 1 UNION ALL SELECT seq + 1 FROM t) SELECT 'r' AS run_id, seq FROM t"
        ),
    ),
    "ten-million-rows": (
        f"table commands holds 10,000,000 rows, more than {MAX_ROWS:,}",
        lambda con: con.execute("INSERT INTO commands (run_id, seq) SELECT 'r', range FROM range(10000000)"),
    ),
    "missing-column": (
        "table runs lacks column extra",
        lambda con: con.execute("ALTER TABLE runs DROP extra"),
    ),
    "wrong-type": (
        "table submissions: column score is VARCHAR, arb-audit's is DOUBLE",
        lambda con: con.execute("ALTER TABLE submissions ALTER score TYPE VARCHAR"),
    ),
    "macro-shadowing-a-function": (
        "a macro or function 'lower'",
        lambda con: con.execute("CREATE MACRO lower(x) AS 'ONLINE_RL'"),
    ),
    "expression-index": (
        "an index 'slow'",
        lambda con: con.execute("CREATE INDEX slow ON runs ((repeat(run_id, 1000)))"),
    ),
    "trigger": (
        "a trigger 'forge'",
        lambda con: con.execute(
            "CREATE TRIGGER forge AFTER INSERT ON audits FOR EACH STATEMENT"
            " UPDATE classifications SET result = replace(result, 'SFT', 'ONLINE_RL')"
        ),
    ),
    "check-constraint": (
        "table problems is defined otherwise",
        lambda con: con.execute(
            "DROP TABLE problems; CREATE TABLE problems (run_id VARCHAR, seq INTEGER, path VARCHAR,"
            " message VARCHAR CHECK (length(repeat(message, 100000)) > 0))"
        ),
    ),
}


def planted(path: Path, name: str) -> Path:
    """Make a store arb-audit would make at ``path``, then change it as the case ``name`` says."""
    with RunStore.open(path):
        pass
    with duckdb.connect(str(path)) as con:
        PLANTS[name][1](con)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", list(PLANTS))
def test_a_planted_store_is_refused_when_opened_naming_what_it_holds(tmp_path: Path, name: str) -> None:
    store = planted(tmp_path / "run.duckdb", name)
    started = time.monotonic()
    for read_only in (True, False):
        with pytest.raises(StoreUnusable) as refused, RunStore.open(store, read_only=read_only):
            pass
        assert str(refused.value).startswith(f"{store}: not a store arb-audit made")
        assert PLANTS[name][0] in str(refused.value)
    with pytest.raises(StoreUnusable, match=PLANTS[name][0]), StoreHost().open(store, read_only=True):
        pass
    assert time.monotonic() - started < BOUND_S


def test_every_store_is_opened_with_limits_and_no_other_file(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "run.duckdb") as store:

        def setting(name: str) -> object:
            return store.con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]

        assert Path(str(setting("temp_directory"))).is_relative_to(cache_root())
        assert int(str(setting("threads"))) <= 2 and int(str(setting("max_execution_time"))) > 0
        assert "MiB" in str(setting("memory_limit")) or "MB" in str(setting("memory_limit"))
        (tmp_path / "secret.csv").write_text("a\n1\n")
        with pytest.raises(duckdb.PermissionException):
            store.con.execute(f"SELECT * FROM read_csv('{tmp_path / 'secret.csv'}')")
        with pytest.raises(duckdb.Error):
            store.con.execute("SET max_execution_time = 0")


def test_a_query_past_its_deadline_is_interrupted_and_a_long_result_refused() -> None:
    con = duckdb.connect(config=connect_config(deadline_s=0.3))
    started = time.monotonic()
    with pytest.raises(duckdb.InterruptException):
        bounded_rows(con, "SELECT count(*) FROM range(1000000000000)", [], "a huge range")
    assert time.monotonic() - started < 10
    with pytest.raises(TooManyRows, match="a long read: more than 10 rows"):
        bounded_rows(con, "SELECT * FROM range(100)", [], "a long read", limit=10)
    assert len(bounded_rows(con, "SELECT * FROM range(10)", [], "ten", limit=10)) == 10


@pytest.mark.parametrize(
    "name", ["view-over-a-huge-range", "recursive-view", "ten-million-rows", "wrong-type"]
)
def test_an_audit_beside_a_planted_store_goes_on_in_the_cache(make_run: MakeRun, name: str) -> None:
    run = make_run("improves")
    honest = json.loads(run_cli(str(run), "--json")[1])
    shutil.rmtree(run / ".arb-audit")
    (run / ".arb-audit").mkdir()
    store = planted(run / ".arb-audit" / "run.duckdb", name)
    before = digest(store)
    started = time.monotonic()
    code, out, err = run_cli(str(run), "--json")
    assert code == 0, err
    assert time.monotonic() - started < BOUND_S
    report = json.loads(out)
    said = [p["message"] for p in report["problems"] if p["path"] == ".arb-audit"]
    assert said and "run.duckdb is not a usable store" in said[0] and PLANTS[name][0] in said[0]
    assert report["run"]["store_path"] != str(store) and digest(store) == before  # never written
    assert report["best"] == honest["best"] and report["route"] == honest["route"]


@pytest.mark.parametrize("name", ["view-over-a-huge-range", "recursive-view", "missing-column", "wrong-type"])
def test_a_recording_whose_store_is_planted_is_audited_from_the_rest(tmp_path: Path, name: str) -> None:
    recording = copy_out("sft_only", tmp_path)
    store = recording / "run.duckdb"
    store.unlink()
    planted(store, name)
    started = time.monotonic()
    code, out, err = run_cli(str(recording), "--json")
    assert code == 0, err
    assert time.monotonic() - started < BOUND_S
    report = json.loads(out)
    said = [p["message"] for p in report["problems"] if p["path"] == "run.duckdb"]
    assert said and said[0].startswith("the recording's store cannot be read (not a store arb-audit made")
    assert PLANTS[name][0] in said[0]
    assert report["submissions"] == [] and "ledger_broken" in {f["flag"] for f in report["flags"]}
    code, out, _ = run_cli("verify", str(recording))
    assert code == 1 and f"ledger: {store}: not a store arb-audit made" in out


def test_a_kept_audit_rewritten_in_the_run_folder_is_not_read_back(tmp_path: Path) -> None:
    recording = copy_out("sft_only", tmp_path)
    honest = arb_audit.audit(recording)
    forged = honest.to_json()
    forged["route"]["best_label"] = "ONLINE_RL"
    # the agent rewrites the kept audit under the key it finds beside it
    with duckdb.connect(str(honest.run.store_path)) as con:
        con.execute("UPDATE audits SET report = ?", [json.dumps(forged)])
    again = arb_audit.audit(recording)
    assert again.route.best_label == honest.route.best_label == "SFT"


def _manifest(artifact_id: str) -> ArtifactManifest:
    tensors = [TensorDigest("layer.0.weight", "BF16", (4, 4), "d" * 64)]
    return ArtifactManifest(
        artifact_id,
        [FileDigest("config.json", 10, "c" * 64), FileDigest("model.safetensors", 100, "e" * 64, tensors)],
    )


def test_a_kept_manifest_is_trusted_only_under_this_users_key(tmp_path: Path) -> None:
    run = RunInfo("recorded:t/r", "recorded", str(tmp_path), task="t")
    with RunStore.open(tmp_path / "run.duckdb") as store:
        store.ensure_run(run, None)
        store.append_submission(
            run.run_id, Submission(0, "scored", "m", artifact_id="a" * 64), _manifest("a" * 64)
        )
        assert store.keyed_manifest("a" * 64) == store.load_manifest("a" * 64) == _manifest("a" * 64)
        assert store.keyed_manifest("b" * 64) is None
        # the agent rewrites one tensor's digest: verify still reads it (to find it changed), the audit not
        store.con.execute("UPDATE tensors SET content_hash = ?", ["0" * 64])
        assert store.load_manifest("a" * 64) is not None
        with pytest.raises(UnkeyedManifest, match="carries no key of this user"):
            store.keyed_manifest("a" * 64)
        # a manifest planted with no key, or kept by another user's recorder
        store.con.execute(
            "INSERT INTO artifact_files (artifact_id, path, size, digest, mac) VALUES (?, 'x', 1, ?, ?)",
            ["b" * 64, "0" * 64, "f" * 64],
        )
        with pytest.raises(UnkeyedManifest):
            store.keyed_manifest("b" * 64)
        # one listing more tensors than any model is not read
        store.con.execute(
            "INSERT INTO tensors (artifact_id, file_path, name, content_hash)"
            " SELECT ?, 'x', range::VARCHAR, 'h' FROM range(?)",
            ["b" * 64, MAX_MANIFEST_TENSORS + 1],
        )
        with pytest.raises(StoreUnusable, match="more than"):
            store.keyed_manifest("b" * 64)


@pytest.mark.slow  # a 64 MB audit and a million rows written: some 10 s
def test_the_desk_reads_a_planted_run_store_within_bounds(tmp_path: Path) -> None:
    store = tmp_path / "run.duckdb"
    with RunStore.open(store) as opened:
        # an audit's text past the bound is listed as not read, never loaded
        opened.con.execute(
            "INSERT INTO audits (run_id, report) VALUES ('huge', '\"' || repeat('x', ?) || '\"')",
            [MAX_TEXT_CHARS + 1],
        )
    session = ReviewSession.open(store, "ann")
    assert session.runs["run_key"].to_list() == ["huge"]
    assert "longer than" in str(session.runs["error"][0])
    found = session.report("huge")
    assert isinstance(found, Unread) and "longer than 67,108,864 characters; not read" in found.problem
    with RunStore.open(store) as opened:
        opened.con.execute(
            "INSERT INTO audits (run_id) SELECT 'r' || range FROM range(?)", [MAX_LISTED_RUNS + 1]
        )
    started = time.monotonic()
    with pytest.raises(ReviewError, match="its audits: more than 1,000,000 rows; not read"):
        ReviewSession.open(store, "ann")
    assert time.monotonic() - started < BOUND_S


def test_verify_checks_no_more_runs_of_a_store_than_a_store_holds(tmp_path: Path) -> None:
    store = tmp_path / "run.duckdb"
    with RunStore.open(store) as opened:
        opened.con.execute("INSERT INTO runs (run_id) SELECT 'r' || range FROM range(10001)")
    started = time.monotonic()
    code, _, err = run_cli("verify", str(store))
    assert code == 2 and "its runs: more than 10,000 rows; not read" in err
    assert time.monotonic() - started < BOUND_S


@pytest.mark.slow  # a whole audit: some 6 s
def test_the_desk_reviews_a_run_folder_by_its_own_audit_not_the_rows_planted_beside_it(
    make_run: MakeRun,
) -> None:
    run = make_run("improves")
    store = run / ".arb-audit" / "run.duckdb"
    store.parent.mkdir()
    with RunStore.open(store) as opened:
        opened.con.execute("INSERT INTO audits (run_id, report) VALUES ('forged', '{}')")
        opened.con.execute("INSERT INTO study_runs (run_key, run_id) VALUES ('forged', 'forged')")
    session = ReviewSession.open(run, "ann")
    assert not session.study
    (key,) = session.runs["run_key"].to_list()
    assert key != "forged" and session.audit(key) is not None


def test_a_text_past_the_bound_reads_as_null_and_says_so() -> None:
    with duckdb.connect() as con:
        sql = f"SELECT {capped('t')}, {too_long('t')} FROM (SELECT repeat('a', ?) AS t)"
        assert con.execute(sql, [MAX_TEXT_CHARS + 1]).fetchall() == [(None, True)]
        assert con.execute(sql, [3]).fetchall() == [("aaa", False)]
        assert con.execute(f"SELECT {capped('NULL')}, {too_long('NULL')}").fetchall() == [(None, False)]


def test_an_audit_whose_run_store_another_process_holds_goes_on_in_the_cache(
    make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an agent (or anything in the run folder) keeps .arb-audit/run.duckdb open for writing past the
    # wait: the audit does not fail, it is kept in the cache store and says why
    import subprocess
    import sys

    import arb_audit.store

    run = make_run("improves")
    honest = json.loads(run_cli(str(run), "--json")[1])
    store = run / ".arb-audit" / "run.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print(1, flush=True); time.sleep(60)",
            str(store),
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == b"1"
        monkeypatch.setattr(arb_audit.store, "LOCK_WAIT_S", 1.0)
        code, out, err = run_cli(str(run), "--json")
    finally:
        holder.kill()
        holder.wait()
    assert code == 0, err
    report = json.loads(out)
    said = [p["message"] for p in report["problems"] if p["path"] == ".arb-audit"]
    assert said and "held by another process" in said[0]
    assert report["run"]["store_path"] != str(store)
    assert report["best"] == honest["best"] and report["route"] == honest["route"]
