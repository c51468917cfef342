"""The verdict ledger: appended, chained, checked, never rewritten; `arb-audit verify` finds an edit."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.store import RunStore
from arb_audit.taxonomy.review import FIELDS, analyzer_values, check_value, choices, normalise_chain
from arb_audit.verdicts import (
    REVIEWER_ENV,
    Verdict,
    VerdictRefused,
    append_verdicts,
    chain_break,
    current_verdicts,
    ledger_head,
    load_verdicts,
    reviewer_name,
)
from tests.audit_records import complete_report
from tests.test_cli import run_cli

MOMENT = datetime(2026, 11, 30, 9, 30, tzinfo=UTC)


def _verdict(field: str = "route", value: str = "SFT", reviewer: str = "ann", **kw: str) -> Verdict:
    return Verdict(kw.get("run_key", "r1"), "run-1", field, value, reviewer, kw.get("analyzer", "SFT"))


def _ledger(path: Path) -> Path:
    with RunStore.open(path) as store:
        append_verdicts(store, [_verdict(), _verdict("failure", "none", analyzer="regression")], MOMENT)
        append_verdicts(store, [_verdict("route", "GRPO", "bob"), _verdict("route", "DPO")], MOMENT)
    return path


def test_the_ledger_keeps_every_verdict_in_order_with_what_it_supersedes(tmp_path: Path) -> None:
    with RunStore.open(_ledger(tmp_path / "s.duckdb"), read_only=True) as store:
        ledger = load_verdicts(store)
        assert chain_break(load_verdicts(store)) is None
    assert ledger.select("seq", "reviewer", "field", "value", "previous").rows() == [
        (1, "ann", "route", "SFT", None),
        (2, "ann", "failure", "none", None),
        (3, "bob", "route", "GRPO", None),
        (4, "ann", "route", "DPO", "SFT"),
    ]
    standing = current_verdicts(ledger).sort("seq")
    assert standing.select("reviewer", "field", "value").rows() == [
        ("ann", "failure", "none"),
        ("bob", "route", "GRPO"),
        ("ann", "route", "DPO"),
    ]


def test_a_batch_supersedes_its_own_verdicts_and_the_ledger_s_in_order(tmp_path: Path) -> None:
    with RunStore.open(_ledger(tmp_path / "s.duckdb")) as store:
        written = append_verdicts(
            store,
            [
                _verdict("route", "GRPO"),
                _verdict("route", "PPO"),
                _verdict("route", "SFT", run_key="r2"),
                _verdict("failure", "regression", "bob"),
            ],
            MOMENT,
        )
    assert written.select("run_key", "reviewer", "field", "value", "previous").rows() == [
        ("r1", "ann", "route", "GRPO", "DPO"),
        ("r1", "ann", "route", "PPO", "GRPO"),
        ("r2", "ann", "route", "SFT", None),
        ("r1", "bob", "failure", "regression", None),
    ]


@pytest.mark.parametrize(
    ("edit", "broken_at"),
    [
        ("UPDATE verdicts SET value = 'PPO' WHERE seq = 2", 2),
        ("UPDATE verdicts SET reviewer = 'eve' WHERE seq = 3", 3),
        ("DELETE FROM verdicts WHERE seq = 2", 2),
        ("UPDATE verdicts SET seq = NULL WHERE seq = 4", 4),
        ("UPDATE verdicts SET seq = 9 WHERE seq = 3", 3),
        ("UPDATE verdicts SET created_at = created_at + INTERVAL 1 DAY WHERE seq = 1", 1),
    ],
)
def test_an_edited_or_deleted_verdict_breaks_the_chain(tmp_path: Path, edit: str, broken_at: int) -> None:
    path = _ledger(tmp_path / "s.duckdb")
    con = duckdb.connect(str(path))
    con.execute(edit)
    con.close()
    with RunStore.open(path, read_only=True) as store:
        assert chain_break(load_verdicts(store)) == broken_at
    code, out, _ = run_cli("verify", str(path))
    assert code == 1 and f"verdict {broken_at} no longer matches the hash chain" in out


def test_a_bad_verdict_is_refused_and_nothing_of_its_batch_is_written(tmp_path: Path) -> None:
    with RunStore.open(tmp_path / "s.duckdb") as store:
        for bad, message in [
            (_verdict("route", "RLHF"), "'RLHF' is not a route"),
            (_verdict("mood", "happy"), "'mood' is not a review field"),
            (_verdict("chain", "SFT→TEA"), "'TEA' is not a stage"),
            (_verdict(reviewer=" "), "no reviewer"),
            (_verdict(reviewer="analyzer"), "the analyzer's name"),
            (_verdict(reviewer="a\x1bb"), "printable"),
        ]:
            with pytest.raises(VerdictRefused, match=message):
                append_verdicts(store, [_verdict(), bad])
        long_note = Verdict("r1", None, "route", "SFT", "ann", "SFT", note="x" * 5000)
        with pytest.raises(VerdictRefused, match="5000 characters"):
            append_verdicts(store, [long_note])
        assert load_verdicts(store).is_empty()


def test_verify_checks_a_study_store_a_run_folder_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    path = _ledger(tmp_path / "s.duckdb")
    code, out, _ = run_cli("verify", str(path))
    assert code == 0 and "verdicts hold" in out
    with RunStore.open(path, read_only=True) as store:
        count, head = ledger_head(load_verdicts(store))
    assert count == 4 and f"4 verdicts, head {head}" in out  # a head to keep: cutting the tail changes it
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM verdicts WHERE seq = 4")
    con.close()
    code, out, _ = run_cli("verify", str(path))
    assert code == 0 and "3 verdicts, head" in out and head not in out
    con = duckdb.connect(str(path))
    con.execute("ALTER TABLE verdicts ALTER created_at TYPE VARCHAR")
    con.close()
    code, _, err = run_cli("verify", str(path))
    # a store whose tables are not as arb-audit makes them is refused when opened, naming the change
    assert code == 2 and "s.duckdb: not a store arb-audit made" in err
    assert "table verdicts: column created_at is VARCHAR, arb-audit's is TIMESTAMP" in err
    (tmp_path / "plain").mkdir()
    code, _, err = run_cli("verify", str(tmp_path / "plain"))
    assert code == 2 and "neither a recording nor an audited run folder" in err
    duckdb.connect(str(tmp_path / "other.duckdb")).execute("CREATE TABLE t (x INT)").close()
    code, _, err = run_cli("verify", str(tmp_path / "other.duckdb"))
    assert code == 2 and "not an arb-audit store" in err
    (tmp_path / "junk.duckdb").write_bytes(b"not a database")
    code, _, err = run_cli("verify", str(tmp_path / "junk.duckdb"))
    assert code == 2 and "junk.duckdb" in err


def test_the_reviewer_comes_from_the_option_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REVIEWER_ENV, "  carol ")
    assert reviewer_name("dave") == "dave"
    assert reviewer_name(None) == "carol"


def test_every_field_has_its_taxonomy_values_and_the_analyzer_value_is_read() -> None:
    assert choices("quadrant") is not None and "score_up+intended" in (choices("quadrant") or ())
    assert choices("flag:external_api") == ("yes", "no")
    assert choices("chain") is None
    report = complete_report(
        {
            "route": {"best_label": "COMPOSITE", "chain_text": "SFT→GRPO(online)"},
            "failure": {"mode": "none"},
            "quadrant": {"cell": "score_up+intended"},
            "flags": [{"flag": "external_api"}],
        }
    )
    values = analyzer_values(report)
    assert set(values) == set(FIELDS)
    assert values["flag:external_api"] == "yes" and values["flag:ledger_broken"] == "no"
    assert values["route"] == "COMPOSITE" and values["chain"] == "SFT→GRPO(online)"
    # without an audit the analyzer gave no value, not "no flag"
    assert analyzer_values(None) == dict.fromkeys(FIELDS)
    assert check_value("chain", "SFT→MERGE(weight_average)") is None
    assert check_value("chain", "NO_TRAINING") is None
    assert check_value("chain", "DPO(orpo, online)") is None


STAGE = st.sampled_from(["SFT", "DPO", "GRPO", "GRPO(online)", "MERGE(weight_average)", "PPO(rloo)"])


@settings(deadline=None)  # timing on a shared machine is not what these test
@given(st.lists(STAGE, min_size=1, max_size=5), st.sampled_from(["→", "->", " -> ", " → "]))
def test_any_arrow_normalises_as_the_analyzer_writes_chains(stages: list[str], arrow: str) -> None:
    chain = normalise_chain(arrow.join(stages))
    assert chain == "→".join(stages)
    assert check_value("chain", chain) is None
    assert normalise_chain(chain) == chain


@settings(deadline=None)  # timing on a shared machine is not what these test
@given(st.text(max_size=40))
def test_any_text_is_either_a_chain_or_refused_with_a_reason(text: str) -> None:
    problem = check_value("chain", normalise_chain(text))
    assert problem is None or "is not a stage" in problem
