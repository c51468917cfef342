"""The review session without widgets: what it opens, refuses, filters, orders and records."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.store import RunStore, StoreError
from arb_audit.study import load_study
from arb_audit.taxonomy.review import FIELDS, analyzer_values
from arb_audit.tui.evidence import evidence_items, revision_seq
from arb_audit.tui.query import SORTS, FilterError, apply_filter
from arb_audit.tui.screens.evidence import version_at
from arb_audit.tui.screens.run import header
from arb_audit.tui.session import NOT_AUDITED, ReviewError, ReviewSession, Unread, read_audit
from arb_audit.tui.widgets.score_strip import strip
from arb_audit.verdicts import VerdictRefused, chain_break, load_verdicts
from tests.audit_records import complete_audit
from tests.tui.conftest import KEY, REFERENCE


def test_a_study_opens_with_every_run_and_its_audit(study: Path) -> None:
    session = ReviewSession.open(study, "ann")
    assert session.study and session.runs.height == 6
    found = session.audit("/runs/d")
    assert found is not None and found.run.task == "alfworld"
    assert session.report("/runs/f") == NOT_AUDITED  # could not be audited: listed, with no audit


def test_a_run_store_opens_keyed_by_run_id(run_store: Path) -> None:
    session = ReviewSession.open(run_store, "ann")
    assert not session.study
    assert session.runs["run_key"].to_list() == [KEY]
    assert session.runs["chain"].to_list() == ["SFT→GRPO(online)"]


def test_a_run_folder_is_audited_then_opened(tmp_path: Path) -> None:
    shutil.copytree(REFERENCE / "copy_base", tmp_path / "copy_base", symlinks=True)
    session = ReviewSession.open(tmp_path / "copy_base" / "recording", "ann")
    assert session.runs["route_label"].to_list() == ["NO_TRAINING"]


def test_what_cannot_be_reviewed_is_refused_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(ReviewError, match="no such store"):
        ReviewSession.open(tmp_path / "missing.duckdb", "ann")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReviewError, match="no supported run format"):
        ReviewSession.open(tmp_path / "empty", "ann")
    with RunStore.open(tmp_path / "blank.duckdb"):
        pass
    with pytest.raises(ReviewError, match="holds no audited runs"):
        ReviewSession.open(tmp_path / "blank.duckdb", "ann")
    duckdb.connect(str(tmp_path / "other.duckdb")).execute("CREATE TABLE t (x INT)").close()
    with pytest.raises(ReviewError, match="not an arb-audit store"):
        ReviewSession.open(tmp_path / "other.duckdb", "ann")


def test_verdicts_are_appended_with_the_analyzer_value_and_what_they_supersede(run_store: Path) -> None:
    session = ReviewSession.open(run_store, "ann")
    key = KEY
    session.record(key, "route", "COMPOSITE")
    session.record(key, "failure", "regression", note="the GRPO stage should have been checked")
    session.record(key, "failure", "none")
    with pytest.raises(VerdictRefused, match="is not a quadrant"):
        session.record(key, "quadrant", "up+intended")
    rows = session.ledger.select("seq", "field", "value", "previous", "analyzer", "note").rows()
    assert rows == [
        (1, "route", "COMPOSITE", None, "COMPOSITE", ""),
        (2, "failure", "regression", None, "none", "the GRPO stage should have been checked"),
        (3, "failure", "none", "regression", "none", ""),
    ]
    assert session.reviewed_keys() == {key}
    assert ReviewSession.open(run_store, "bob").reviewed_keys() == set()
    # a restart reads the same ledger, and the chain holds
    again = ReviewSession.open(run_store, "ann")
    assert again.ledger.equals(session.ledger)
    with RunStore.open(run_store, read_only=True) as store:
        assert chain_break(load_verdicts(store)) is None


def test_blind_review_shows_a_field_once_the_reviewer_ruled_on_it(run_store: Path) -> None:
    key = KEY
    ReviewSession.open(run_store, "ann").record(key, "route", "COMPOSITE")
    blind = ReviewSession.open(run_store, "bob", blind=True)
    assert not blind.may_see(key, "route") and not blind.may_see(key, "failure")
    blind.record(key, "route", "SFT")
    assert blind.may_see(key, "route") and not blind.may_see(key, "failure")
    assert blind.ledger.filter(pl.col("reviewer") == "bob")["blind"].to_list() == [True]
    blind.record(key, "route", "COMPOSITE")  # a second look, no longer blind
    assert blind.ledger["blind"].to_list() == [False, True, False]


def test_the_cited_code_and_its_versions_come_from_the_run_history(run_store: Path) -> None:
    session = ReviewSession.open(run_store, "ann")
    report = session.audit(KEY)
    assert report is not None
    code = next(
        i for i in evidence_items(report) if i.kind == "code" and i.pointer.path == "code/grpo_env.py"
    )
    versions = session.file_versions(report, "code/grpo_env.py")
    assert len(versions) == 2  # the first GRPO script failed on an import and was fixed
    revision, line = code.pointer.revision or "", code.pointer.line or 0
    cited = version_at(report, versions, revision)
    assert cited is not None and revision_seq(report, revision) is not None
    text = session.code(report, cited.blob)
    assert text is not None
    assert code.pointer.excerpt.strip() in text.splitlines()[line - 1]
    assert session.file_versions(report, "no/such/file.py") == []


def test_filters_match_fields_and_refuse_unknown_keys(study: Path) -> None:
    runs = ReviewSession.open(study, "ann").runs

    def keys(text: str, reviewed: frozenset[str] = frozenset()) -> list[str]:
        return sorted(apply_filter(runs, text, set(reviewed))["run_key"])

    assert keys("") == sorted(runs["run_key"])
    assert keys("task:alfworld") == ["/runs/d", "/runs/e"]
    assert keys("flag:evaluator failure:timeout") == ["/runs/e"]
    assert keys("stack:qwén") == ["/runs/d", "/runs/e"]
    assert keys("ALFWORLD level:3 seed:7") == ["/runs/e"]
    assert keys("reviewed:yes", frozenset({"/runs/a"})) == ["/runs/a"]
    assert len(keys("reviewed:no", frozenset({"/runs/a"}))) == runs.height - 1
    with pytest.raises(FilterError, match="no filter key 'colour'"):
        keys("colour:red")
    with pytest.raises(FilterError, match="reviewed is yes or no"):
        keys("reviewed:maybe")


def test_needs_review_puts_unreviewed_disagreeing_weak_runs_first_and_unaudited_last() -> None:
    runs = pl.DataFrame(
        {
            "run_key": ["a", "b", "c", "d", "e"],
            "disagrees": [False, True, False, True, False],
            "strength": ["verified", "verified", "weak", None, "conflicting"],
            "error": [None, None, None, None, "broken"],
        }
    )
    ordered = SORTS["needs review"](runs, {"d"})["run_key"].to_list()
    assert ordered == ["b", "c", "a", "d", "e"]


def test_every_order_keeps_every_run(study: Path) -> None:
    runs = ReviewSession.open(study, "ann").runs
    for order in SORTS.values():
        assert sorted(order(runs, set())["run_key"]) == sorted(runs["run_key"])


def test_appending_at_a_fixed_time_is_reproducible(run_store: Path, tmp_path: Path) -> None:
    other = Path(shutil.copy(run_store, tmp_path / "other.duckdb"))
    moment = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    hashes = []
    for path in (run_store, other):
        ReviewSession.open(path, "ann").record(KEY, "route", "SFT", now=moment)
        with RunStore.open(path, read_only=True) as store:
            hashes.append(load_verdicts(store)["record_hash"].to_list())
    assert hashes[0] == hashes[1]


def test_blind_review_refuses_filters_that_would_reveal_the_analyzer(study: Path) -> None:
    runs = ReviewSession.open(study, "ann", blind=True).runs
    assert apply_filter(runs, "task:alfworld reviewed:no", set(), blind=True).height == 2
    for word in ("route:sft", "failure:none", "flag:evaluator", "quadrant:score_up", "alfworld"):
        with pytest.raises(FilterError, match="blind review filters on"):
            apply_filter(runs, word, set(), blind=True)
    assert not runs["disagrees"].any() and runs["strength"].is_null().all()


def test_a_study_from_before_the_strength_column_opens_read_only_and_migrates_on_write(study: Path) -> None:
    con = duckdb.connect(str(study))
    con.execute("ALTER TABLE study_runs DROP COLUMN strength")
    con.execute("ALTER TABLE study_runs ADD COLUMN confidence DOUBLE")
    con.execute("DELETE FROM _arb_migrations WHERE name = 'm011_study_strength'")
    con.close()
    assert load_study(study)["strength"].is_null().all()
    session = ReviewSession.open(study, "ann")
    assert session.runs.height == 6
    session.record("/runs/a", "route", "SFT")  # the first write migrates the store
    with RunStore.open(study, read_only=True) as store:
        assert "m011_study_strength" in store.applied_migrations()
        # rows audited under the old schema are audited anew by the next ingest, never read as levels
        assert store.con.execute(
            "SELECT count(*) FROM study_runs WHERE fingerprint IS NOT NULL"
        ).fetchone() == (0,)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)
KEYS = st.sampled_from(["run", "best", "route", "failure", "quadrant", "flags", "submissions", "commands"])


@settings(max_examples=200, deadline=None)
@given(st.one_of(JSON, st.dictionaries(KEYS, JSON)))
def test_any_json_in_a_study_row_reads_as_an_audit_or_its_problem_and_the_screens_show_either(
    value: object,
) -> None:
    read = read_audit(value, "the audit of /runs/x")
    assert isinstance(read, Unread) or read.schema_version == SCHEMA_VERSION
    report = read if isinstance(read, AuditReport) else None
    for item in evidence_items(report):
        assert isinstance(item.claim, str) and isinstance(item.where, str)
    assert isinstance(header(report), str)
    assert strip(report).plain
    assert set(analyzer_values(report)) == set(FIELDS)


def test_an_audit_with_wrong_types_or_of_another_version_is_refused_not_half_trusted() -> None:
    good = complete_audit({"run": {"run_id": "r", "base_score": 1.0}, "best": {"seq": 1, "score": 9.0}})
    assert read_audit(good, "it") == AuditReport.model_validate(good)
    wrong = {**good, "run": {**good["run"], "base_score": "high"}}
    refused = read_audit(wrong, "the audit of r")
    assert isinstance(refused, Unread)
    assert refused.problem.startswith("the audit of r does not read as an audit (run.")
    older = {key: value for key, value in good.items() if key != "schema_version"}
    unversioned = read_audit(older, "it")
    assert isinstance(unversioned, Unread) and "(schema version None" in unversioned.problem
    assert "audit or ingest the run again" in unversioned.problem
    assert read_audit(["rm -rf /"], "it") == Unread("it is not an audit (a JSON list)")
    assert header(None).endswith("base — → best —")


def test_the_route_evidence_of_a_real_audit_is_listed(run_store: Path) -> None:
    report = ReviewSession.open(run_store, "ann").audit(KEY)
    claims = {item.claim for item in evidence_items(report)}
    assert {"route SFT adopted", "route ONLINE_RL adopted"} <= claims
    # the GRPO script that failed on its import is evidence of the attempt too
    failed = [
        i for i in evidence_items(report) if i.claim == "route ONLINE_RL adopted" and i.kind == "command"
    ]
    assert any("[exit 1]" in i.pointer.excerpt for i in failed)


HOLD = (
    "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('holding', flush=True); time.sleep(60)"
)


def test_a_store_another_process_holds_is_reported_not_waited_on(
    run_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("arb_audit.tui.session.STORE_WAIT_S", 0.3)
    session = ReviewSession.open(run_store, "ann")
    holder = subprocess.Popen(  # another process's writer holds DuckDB's lock on the file
        [sys.executable, "-c", HOLD, str(run_store)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        held = session.report(KEY)
        assert isinstance(held, Unread) and "another process holds" in held.problem
        with pytest.raises(StoreError, match="another process holds"):
            session.record(KEY, "route", "SFT")
    finally:
        holder.kill()
        holder.wait()
    assert session.ledger.is_empty()
