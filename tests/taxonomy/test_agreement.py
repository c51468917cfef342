"""Agreement of reviewers and analyzer: κ against hand-worked examples, the tables' golden files
(UPDATE_GOLDEN=1 rewrites them), and ``arb-audit agreement`` in each format and each failure."""

from __future__ import annotations

import math
import os
import sys
import warnings
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from arb_audit.install_hint import missing
from arb_audit.store import RunStore
from arb_audit.taxonomy.agreement import (
    AGREEMENT_TABLES,
    FLEISS,
    cohen_kappa,
    confusion,
    fleiss_kappa,
    kappa,
    ratings,
)
from arb_audit.taxonomy.render import write
from arb_audit.verdicts import Verdict, append_verdicts, current_verdicts, load_verdicts
from tests.test_cli import run_cli

GOLDEN = Path(__file__).resolve().parent / "golden"
SUFFIX = {"latex": "tex", "markdown": "md", "csv": "csv"}
STANDING = pl.Schema(
    {
        "run_key": pl.String(),
        "reviewer": pl.String(),
        "field": pl.String(),
        "value": pl.String(),
        "analyzer": pl.String(),
    }
)
Row = tuple[str, str, str, str, str | None]
"""(run_key, reviewer, field, value, analyzer), as a standing verdict."""


def standing(rows: Sequence[Row]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=STANDING, orient="row")


def pair_row(table: pl.DataFrame, field: str, a: str, b: str) -> dict[str, object]:
    found = table.filter(pl.col("field") == field, pl.col("rater_a") == a, pl.col("rater_b") == b)
    assert found.height == 1, (field, a, b, table)
    return found.row(0, named=True)


def write_store(path: Path, *batches: list[Verdict]) -> Path:
    """A real store whose ledger holds ``batches``, each appended in its own transaction, in order."""
    with RunStore.open(path) as store:
        for i, batch in enumerate(batches):
            append_verdicts(store, batch, now=datetime(2026, 1, 1, 12, i, tzinfo=UTC))
    return path


def standing_verdicts(path: Path) -> pl.DataFrame:
    with RunStore.open(path, read_only=True) as store:
        return current_verdicts(load_verdicts(store))


# --- Cohen's κ ---------------------------------------------------------------------------------------
#
# The classic 2 × 2 table, 50 runs rated yes or no by ann (rows) and ben (columns):
#
#                ben yes   ben no
#     ann yes      a=20      b=5      25
#     ann no       c=10      d=15     25
#                  30        20       50
#
# p_o = (a + d) / 50 = 35/50 = 0.70
# p_e = P(ann yes)·P(ben yes) + P(ann no)·P(ben no) = 0.5·0.6 + 0.5·0.4 = 0.50
# κ   = (p_o − p_e) / (1 − p_e) = 0.20 / 0.50 = 0.40
# The analyzer said what ann said on every run: against ann κ = 1, against ben the same 0.40.
CLASSIC = [("yes", "yes")] * 20 + [("yes", "no")] * 5 + [("no", "yes")] * 10 + [("no", "no")] * 15
FLAG = "flag:grader_probing"


def classic() -> pl.DataFrame:
    rows: list[Row] = []
    for i, (ann, ben) in enumerate(CLASSIC):
        rows += [(f"run{i:02}", "ann", FLAG, ann, ann), (f"run{i:02}", "ben", FLAG, ben, ann)]
    return standing(rows)


def test_cohen_kappa_of_the_classic_table() -> None:
    table = kappa(classic())
    assert table["rater_a"].to_list() == ["analyzer", "analyzer", "ann"]
    assert table["rater_b"].to_list() == ["ann", "ben", "ben"]
    assert pair_row(table, FLAG, "analyzer", "ann") == {
        "field": FLAG,
        "rater_a": "analyzer",
        "rater_b": "ann",
        "n": 50,
        "agree": 1.0,
        "kappa": 1.0,
    }
    for a in ("analyzer", "ann"):
        row = pair_row(table, FLAG, a, "ben")
        assert row["n"] == 50
        assert row["agree"] == pytest.approx(0.70)
        assert row["kappa"] == pytest.approx(0.40)


def test_confusion_of_the_classic_table() -> None:
    cells = confusion(classic()).filter(pl.col("rater_a") == "ann")
    assert cells.select("value_a", "value_b", "count").rows() == [
        ("no", "no", 15),
        ("no", "yes", 10),
        ("yes", "no", 5),
        ("yes", "yes", 20),
    ]
    # the analyzer agreed with ann on every run: its diagonal only, no zero cells
    with_ann = confusion(classic()).filter(pl.col("rater_a") == "analyzer", pl.col("rater_b") == "ann")
    assert with_ann.select("value_a", "value_b", "count").rows() == [("no", "no", 25), ("yes", "yes", 25)]


def test_undefined_kappa_is_null_never_nan() -> None:
    # Both always "no": p_o = p_e = 1, so κ = 0/0. scikit-learn answers NaN; the table holds null.
    rows: list[Row] = [(f"r{i}", name, FLAG, "no", "no") for i in range(3) for name in ("ann", "ben")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(cohen_kappa_score(["no"] * 3, ["no"] * 3, labels=["no"]))
    # one run in common (the chain) is too few for κ, though it agrees
    rows += [("r0", "ann", "chain", "SFT", "SFT")]
    table = kappa(standing(rows))
    assert table.filter(pl.col("field") == FLAG)["kappa"].to_list() == [None, None, None]
    assert pair_row(table, "chain", "analyzer", "ann") == {
        "field": "chain",
        "rater_a": "analyzer",
        "rater_b": "ann",
        "n": 1,
        "agree": 1.0,
        "kappa": None,
    }
    for fmt in SUFFIX:
        text = write(table, AGREEMENT_TABLES["kappa"], fmt, None)
        assert text is not None and "nan" not in text.lower()
    assert cohen_kappa([], []) is None


# --- Fleiss' κ ---------------------------------------------------------------------------------------
#
# Worked by hand: 3 reviewers, 4 runs, yes or no (n = 3 raters, N = 4 runs).
#
#     run   yes  no   P_i = (Σ n_ij² − n) / (n (n − 1))
#     r1     3   0    (9 + 0 − 3) / 6 = 1
#     r2     2   1    (4 + 1 − 3) / 6 = 1/3
#     r3     0   3    (0 + 9 − 3) / 6 = 1
#     r4     1   2    (1 + 4 − 3) / 6 = 1/3
#
# P̄   = (1 + 1/3 + 1 + 1/3) / 4 = 2/3
# p_yes = 6/12 = 1/2, p_no = 1/2, so P̄_e = 1/4 + 1/4 = 1/2
# κ   = (2/3 − 1/2) / (1 − 1/2) = 1/3
SMALL = {"r1": "yyy", "r2": "yyn", "r3": "nnn", "r4": "ynn"}
# Wikipedia's example (Fleiss' kappa, "Worked example"): 10 subjects, 14 raters, 5 categories;
# P̄ = 0.378, P̄_e = 0.213, κ = 0.210.
WIKIPEDIA = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def fleiss_row(table: pl.DataFrame, field: str) -> dict[str, object]:
    found = table.filter(pl.col("field") == field, pl.col("rater_a") == FLEISS)
    assert found.height == 1, table
    return found.row(0, named=True)


def test_fleiss_kappa_worked_by_hand() -> None:
    names = ("ann", "ben", "cai")
    rows: list[Row] = [
        (run, name, FLAG, {"y": "yes", "n": "no"}[v], "no")
        for run, votes in SMALL.items()
        for name, v in zip(names, votes, strict=True)
    ]
    # a run that not every reviewer rated stays out of Fleiss' κ (it still counts for its pair)
    rows += [("r5", "ann", FLAG, "yes", "no"), ("r5", "ben", FLAG, "yes", "no")]
    table = kappa(standing(rows))
    row = fleiss_row(table, FLAG)
    assert (row["rater_b"], row["n"]) == ("3", 4)
    assert row["agree"] == pytest.approx(2 / 3)
    assert row["kappa"] == pytest.approx(1 / 3)
    assert table["rater_a"].to_list()[-1] == FLEISS  # after the field's pairs
    assert pair_row(table, FLAG, "ann", "ben")["n"] == 5
    assert fleiss_kappa([[3, 0], [2, 1], [0, 3], [1, 2]]) == pytest.approx(1 / 3)


def test_fleiss_kappa_of_the_wikipedia_example() -> None:
    assert fleiss_kappa(WIKIPEDIA) == pytest.approx(0.2099, abs=1e-4)
    rows: list[Row] = []
    for subject, counts in enumerate(WIKIPEDIA):
        labels = [str(category + 1) for category, count in enumerate(counts) for _ in range(count)]
        rows += [(f"s{subject}", f"rater{r:02}", "failure", v, None) for r, v in enumerate(labels)]
    row = fleiss_row(kappa(standing(rows)), "failure")
    assert (row["rater_b"], row["n"]) == ("14", 10)
    assert row["agree"] == pytest.approx(0.378, abs=1e-3)
    assert row["kappa"] == pytest.approx(0.210, abs=1e-3)


def test_fleiss_kappa_undefined_or_refused() -> None:
    assert fleiss_kappa([[3, 0], [3, 0]]) is None  # every rating one category: P̄_e = 1
    assert fleiss_kappa([[2, 1]]) is None  # one subject
    bad_counts: list[Any] = [[[2, 1], [1, 1]], [[1, 0], [0, 1]], [], [1, 2]]
    for bad in bad_counts:
        with pytest.raises(ValueError, match="same number of raters"):
            fleiss_kappa(bad)
    # two reviewers and the analyzer are not three reviewers: no Fleiss row
    two = standing([(r, n, FLAG, "yes", "no") for r in ("a", "b") for n in ("ann", "ben")])
    assert FLEISS not in kappa(two)["rater_a"].to_list()


# --- The analyzer as a rater -------------------------------------------------------------------------


def test_the_analyzer_rates_with_its_latest_value_and_none_is_a_label() -> None:
    frame = standing(
        [
            ("a", "ann", "route", "SFT", "GRPO"),
            ("a", "ben", "route", "SFT", "SFT"),  # the analyzer was run again before ben's verdict
            ("b", "ann", "route", "NO_TRAINING", None),
        ]
    )
    assert ratings(frame).filter(pl.col("rater") == "analyzer").select("run_key", "value").rows() == [
        ("a", "SFT"),
        ("b", "(none)"),
    ]
    cells = confusion(frame).filter(pl.col("rater_b") == "ann")
    assert cells.select("value_a", "value_b", "count").rows() == [
        ("(none)", "NO_TRAINING", 1),
        ("SFT", "SFT", 1),
    ]


def test_a_reviewer_called_analyzer_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot be told from the analyzer"):
        kappa(standing([("a", "analyzer", "route", "SFT", "SFT")]))


def test_a_reviewer_who_changed_their_mind_counts_with_the_standing_verdict(tmp_path: Path) -> None:
    def v(run: str, who: str, value: str) -> Verdict:
        return Verdict(run, run, "route", value, who, analyzer="SFT")

    path = write_store(
        tmp_path / "run.duckdb",
        [v("a", "ann", "SFT"), v("b", "ann", "SFT"), v("a", "ben", "GRPO"), v("b", "ben", "SFT")],
        [v("a", "ann", "GRPO")],  # ann comes round to ben's view of run a
    )
    with RunStore.open(path, read_only=True) as store:
        assert load_verdicts(store).height == 5
    row = pair_row(kappa(standing_verdicts(path)), "route", "ann", "ben")
    assert (row["n"], row["agree"], row["kappa"]) == (2, 1.0, 1.0)


# --- Properties --------------------------------------------------------------------------------------

LABELS = st.sampled_from(["SFT", "DPO", "GRPO", "UNKNOWN"])


def two_reviewers(a: list[str], b: list[str], names: tuple[str, str] = ("ann", "ben")) -> pl.DataFrame:
    return standing(
        [(f"r{i}", names[0], "route", x, None) for i, x in enumerate(a)]
        + [(f"r{i}", names[1], "route", y, None) for i, y in enumerate(b)]
    )


@settings(deadline=None)  # timing on a shared machine is not what these test
@given(st.lists(LABELS, min_size=2, max_size=30).filter(lambda v: len(set(v)) >= 2))
def test_kappa_of_a_rater_with_itself_is_one(values: list[str]) -> None:
    assert cohen_kappa(values, values) == pytest.approx(1.0)
    assert pair_row(kappa(two_reviewers(values, values)), "route", "ann", "ben")["kappa"] == pytest.approx(
        1.0
    )


@settings(deadline=None)  # timing on a shared machine is not what these test
@given(
    st.integers(min_value=0, max_value=30).flatmap(
        lambda n: st.tuples(
            st.lists(LABELS, min_size=n, max_size=n), st.lists(LABELS, min_size=n, max_size=n)
        )
    )
)
def test_kappa_is_symmetric_in_the_pair(pair: tuple[list[str], list[str]]) -> None:
    a, b = pair
    assert_same_kappa(cohen_kappa(a, b), cohen_kappa(b, a))
    # the same two reviewers with their names swapped: the pair is listed the other way round
    if a:
        one = pair_row(kappa(two_reviewers(a, b)), "route", "ann", "ben")
        other = pair_row(kappa(two_reviewers(a, b, ("ben", "ann"))), "route", "ann", "ben")
        assert one["agree"] == other["agree"]
        assert_same_kappa(one["kappa"], other["kappa"])


def assert_same_kappa(one: object, other: object) -> None:
    if one is None or other is None:
        assert one is other
    else:
        assert one == pytest.approx(other)


# --- Tables and the command line ---------------------------------------------------------------------


def sample_store(path: Path) -> Path:
    """Three reviewers of five runs: agreement, disagreement, an empty analyzer value, a changed mind,
    an undefined κ, a Fleiss row, and names and chains that LaTeX must escape."""

    def v(run: str, who: str, field: str, value: str, analyzer: str | None) -> Verdict:
        return Verdict(f"/runs/{run}", f"arl:{run}", field, value, who, analyzer)

    analyzer_route = {"a": "GRPO", "b": "SFT", "c": None, "d": "DPO", "e": "GRPO"}
    routes = {
        "ann": {"a": "GRPO", "b": "SFT", "c": "NO_TRAINING", "d": "SFT", "e": "GRPO"},
        "ben": {"a": "GRPO", "b": "SFT", "c": "NO_TRAINING", "d": "SFT", "e": "ONLINE_RL"},
        "zoé": {"a": "GRPO", "b": "SFT", "c": "UNKNOWN", "d": "DPO"},
    }
    analyzer_failure = {
        "a": "none",
        "b": "regression",
        "c": "timeout_no_submission",
        "d": "training_collapse",
    }
    ben_failure = {"b": "training_collapse"}
    probing = {"ann": "nnn", "ben": "nyn", "zoé": "nnn"}
    first = [
        v(run, who, "route", value, analyzer_route[run])
        for who, rs in routes.items()
        for run, value in rs.items()
    ]
    first += [
        v(run, who, "failure", ben_failure.get(run, value) if who == "ben" else value, value)
        for who in ("ann", "ben")
        for run, value in analyzer_failure.items()
    ]
    first += [
        v(run, who, FLAG, {"y": "yes", "n": "no"}[vote], "no")
        for who, votes in probing.items()
        for run, vote in zip("abc", votes, strict=True)
    ]
    first += [v("a", "ann", "chain", "SFT -> GRPO(online)", "SFT→GRPO(online)")]
    second = [v("d", "ann", "route", "DPO", "DPO")]  # ann changed her mind on run d
    return write_store(path, first, second)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return sample_store(tmp_path / "study.duckdb")


@pytest.mark.parametrize(
    ("name", "fmt"), [("kappa", "markdown"), ("kappa", "csv"), ("kappa", "latex"), ("confusion", "markdown")]
)
def test_tables_match_their_golden_files(store: Path, name: str, fmt: str) -> None:
    spec = AGREEMENT_TABLES[name]
    text = write(spec.compute(standing_verdicts(store)), spec, fmt, None)
    assert text is not None
    golden = GOLDEN / f"agreement_{name}.{SUFFIX[fmt]}"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_the_sample_holds_what_it_says(store: Path) -> None:
    table = kappa(standing_verdicts(store))
    assert pair_row(table, "route", "analyzer", "ann")["agree"] == pytest.approx(4 / 5)  # d now agrees
    assert pair_row(table, FLAG, "analyzer", "ann")["kappa"] is None
    assert pair_row(table, "chain", "analyzer", "ann")["agree"] == 1.0  # the chain was normalised
    assert fleiss_row(table, "route")["n"] == 4 and fleiss_row(table, FLAG)["n"] == 3
    assert "failure" not in table.filter(pl.col("rater_a") == FLEISS)["field"].to_list()


@pytest.mark.parametrize("fmt", ["markdown", "csv", "latex"])
def test_the_command_writes_each_format(store: Path, fmt: str, tmp_path: Path) -> None:
    code, out, err = run_cli("agreement", str(store), "--format", fmt)
    assert (code, err) == (0, "")
    assert out == (GOLDEN / f"agreement_kappa.{SUFFIX[fmt]}").read_text(encoding="utf-8")
    target = tmp_path / f"out.{SUFFIX[fmt]}"
    assert run_cli("agreement", str(store), "--table", "kappa", "--format", fmt, "-o", str(target)) == (
        0,
        "",
        "",
    )
    assert target.read_text(encoding="utf-8") == out


def test_the_command_writes_confusion_and_parquet(store: Path, tmp_path: Path) -> None:
    code, out, _ = run_cli("agreement", str(store), "--table", "confusion")
    assert code == 0 and out == (GOLDEN / "agreement_confusion.md").read_text(encoding="utf-8")
    for name in AGREEMENT_TABLES:
        target = tmp_path / f"{name}.parquet"
        code, _, _ = run_cli(
            "agreement", str(store), "--table", name, "--format", "parquet", "-o", str(target)
        )
        assert code == 0
        assert pl.read_parquet(target).equals(AGREEMENT_TABLES[name].compute(standing_verdicts(store)))
    code, _, err = run_cli("agreement", str(store), "--format", "parquet")
    assert code == 2 and err == "arb-audit agreement: Parquet is binary: give a file with -o\n"
    code, _, err = run_cli("agreement", str(store), "--table", "fleiss")
    assert code == 2 and "kappa" in err and "confusion" in err


def test_the_command_refuses_what_holds_no_verdicts(tmp_path: Path) -> None:
    missing = tmp_path / "missing.duckdb"
    code, out, err = run_cli("agreement", str(missing))
    assert (code, out) == (2, "") and err.startswith(f"arb-audit agreement: {missing}: no such store")
    garbage = tmp_path / "notes.duckdb"
    garbage.write_text("not a database\n" * 100)
    code, _, err = run_cli("agreement", str(garbage))
    assert code == 2 and err.startswith(f"arb-audit agreement: {garbage}: cannot open the run store")
    other = tmp_path / "other.duckdb"
    duckdb.connect(str(other)).close()
    code, _, err = run_cli("agreement", str(other))
    assert code == 2 and err.startswith(f"arb-audit agreement: {other}: its verdict ledger cannot be read (")
    assert err.count("\n") == 1
    empty = write_store(tmp_path / "empty.duckdb")
    code, _, err = run_cli("agreement", str(empty))
    assert code == 2
    assert err == f"arb-audit agreement: {empty}: holds no verdicts: record some with arb-audit review\n"


def test_the_command_without_scikit_learn(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "arb_audit.taxonomy.agreement")
    for module in ("sklearn", "sklearn.metrics"):
        monkeypatch.setitem(sys.modules, module, None)
    code, out, err = run_cli("agreement", str(store))
    assert (code, out) == (2, "")
    assert err == missing("arb-audit agreement", "sklearn") + "\n"
    assert "arb-audit installs by default" in err and "scikit-learn>=" in err


def test_the_command_warns_when_the_ledger_was_edited(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with RunStore.open(path) as store:
        append_verdicts(store, [Verdict("r1", None, "route", "SFT", "ann", "SFT")])
    con = duckdb.connect(str(path))
    con.execute("UPDATE verdicts SET value = 'DPO'")
    con.close()
    code, out, err = run_cli("agreement", str(path), "--format", "csv")
    assert code == 0 and out.startswith("field,") and "hash chain fails at verdict 1" in err
