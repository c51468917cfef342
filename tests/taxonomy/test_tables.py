"""Study tables over the hard-case study, each format pinned by a golden file (UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import polars as pl
import pytest

from arb_audit.study import load_study
from arb_audit.taxonomy.render import FORMATS, latex_escape, write
from arb_audit.taxonomy.tables import TABLES, table
from tests.taxonomy.study_cases import write_study

GOLDEN = Path(__file__).resolve().parent / "golden"


@pytest.fixture
def study(tmp_path: Path) -> pl.DataFrame:
    return load_study(write_study(tmp_path / "study.duckdb"))


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "parquet"])
@pytest.mark.parametrize("name", list(TABLES))
def test_tables_match_their_golden_files(study: pl.DataFrame, name: str, fmt: str) -> None:
    text = write(table(name, study), TABLES[name], fmt, None)
    assert text is not None
    golden = GOLDEN / f"{name}.{ {'latex': 'tex', 'markdown': 'md', 'csv': 'csv'}[fmt] }"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(TABLES))
def test_parquet_keeps_the_raw_values(study: pl.DataFrame, name: str, tmp_path: Path) -> None:
    frame = table(name, study)
    write(frame, TABLES[name], "parquet", tmp_path / "t.parquet")
    assert pl.read_parquet(tmp_path / "t.parquet").equals(frame)


def test_cells_hold_the_hard_cases(study: pl.DataFrame) -> None:
    cells = table("cells", study)
    assert cells.height == 6
    unaudited = cells.filter(pl.col("task") == "webshop").row(0, named=True)
    assert unaudited["best_score"] is None and unaudited["submissions"] is None and unaudited["chain"] is None
    gsm8k = cells.filter(pl.col("task") == "gsm8k")
    assert gsm8k["best_score"].to_list() == [71.0, 71.0] and gsm8k["delta"].to_list() == [31.0, 31.0]
    humaneval = cells.filter(pl.col("task") == "humaneval").row(0, named=True)
    assert humaneval["delta"] is None and humaneval["quadrant"] is None
    no_valid = cells.filter(pl.col("seed") == "7").row(0, named=True)
    assert no_valid["best_score"] is None and no_valid["valid_rate"] == 0.0


def test_routes_count_written_attempted_adopted_per_cell(study: pl.DataFrame) -> None:
    rows = {(r["level"], r["scaffold"], r["route"]): r for r in table("routes", study).iter_rows(named=True)}
    assert (rows[(1, "claude", "GRPO")]["attempted"], rows[(1, "claude", "GRPO")]["adopted"]) == (1, 1)
    grpo_written_only = rows[(3, "openhands", "GRPO")]
    assert (grpo_written_only["written"], grpo_written_only["attempted"]) == (1, 0)
    online = rows[(3, "openhands", "ONLINE_RL")]
    assert (online["written"], online["attempted"], online["adopted"]) == (1, 1, 0)


def test_failures_count_the_unaudited_run_and_shares_add_up(study: pl.DataFrame) -> None:
    failures = table("failures", study)
    assert "not_audited" in failures["failure"].to_list()
    for _, group in failures.group_by("by", "group"):
        assert abs(float(group["share"].sum()) - 1.0) < 1e-9


def test_flags_list_the_runs_behind_each(study: pl.DataFrame) -> None:
    flags = {r["flag"]: r for r in table("flags", study).iter_rows(named=True)}
    assert flags["evaluator_tampering"]["runs"] == 2
    assert flags["evaluator_tampering"]["run_ids"] == "arl:alfworld/d_1, arl:alfworld/e"
    # two run folders that share a run id (recordings) are two runs
    twin = study.filter(pl.col("run_key") == "/runs/e").with_columns(run_key=pl.lit("/runs/e2"))
    twice = {r["flag"]: r for r in table("flags", pl.concat([study, twin])).iter_rows(named=True)}
    assert twice["evaluator_tampering"]["runs"] == 3
    assert twice["evaluator_tampering"]["run_ids"] == "arl:alfworld/d_1, arl:alfworld/e"


def test_the_best_mark_follows_the_printed_values() -> None:
    from arb_audit.taxonomy.render import best_rows
    from arb_audit.taxonomy.tables import Column

    frame = pl.DataFrame({"t": [0.149, 0.12, 0.3]})
    assert best_rows(frame, Column("t", "T", "minutes", best="min")) == {0, 1}  # both print 0.1


def test_latex_is_structurally_sound(study: pl.DataFrame) -> None:
    """No LaTeX engine here: check what a plain article with booktabs needs of the table."""
    for name, spec in TABLES.items():
        text = write(table(name, study), spec, "latex", None)
        assert text is not None
        body = text.split("\\midrule\n", 1)[1].split("\\bottomrule", 1)[0]
        columns = len(spec.columns)
        for line in body.strip().splitlines():
            assert line.endswith(" \\\\")
            assert len(re.split(r"(?<!\\)&", line)) == columns, line
        assert text.count("\\begin{") == text.count("\\end{") == 2
        assert text.count("{") == text.count("}") + text.count("\\{") - text.count("\\}")
        assert all(ord(c) < 128 for c in text.replace("% needs \\usepackage{booktabs}", ""))
        for special in ("_", "&", "%", "#"):
            assert re.search(rf"(?<!\\){re.escape(special)}", body.replace(" & ", " ")) is None


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("a_b & 50%", r"a\_b \& 50\%"),
        ("SFT→GRPO", r"SFT$\rightarrow$GRPO"),
        ("Qwén", r"Qw\'{e}n"),
        ("模型", r"\texttt{[U+6A21]}\texttt{[U+578B]}"),
        ("{x}^~\\", r"\{x\}\textasciicircum{}\textasciitilde{}\textbackslash{}"),
        ("[x]", "{[}x{]}"),
        ("e\u0301\x01", r"\'{e}\texttt{[U+0001]}"),
    ],
)
def test_latex_escaping(text: str, latex: str) -> None:
    assert latex_escape(text) == latex
