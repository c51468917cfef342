"""Study tables over the hard-case study, each format pinned by a golden file (UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import polars as pl
import pytest

from arb_audit.study import load_study
from arb_audit.taxonomy.render import (
    BUDGET_PT,
    FORMATS,
    SAFETY,
    WIDTHS,
    TableOptions,
    latex_escape,
    latex_layout,
    to_latex,
    write,
)
from arb_audit.taxonomy.tables import TABLES, Column, TableSpec, table
from tests.taxonomy.latex_article import compile_article, tex_engine
from tests.taxonomy.study_cases import write_study

needs_tex = pytest.mark.skipif(
    tex_engine() is None,
    reason="no pdflatex: apt-get install texlive-latex-base texlive-latex-recommended",
)

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

    frame = pl.DataFrame({"t": [0.149, 0.12, 0.3]})
    assert best_rows(frame, Column("t", "T", "minutes", best="min")) == {0, 1}  # both print 0.1


def test_latex_is_structurally_sound(study: pl.DataFrame) -> None:
    """No LaTeX engine needed: check what a plain article with booktabs needs of each table."""
    for name, spec in TABLES.items():
        for width in WIDTHS:
            text = to_latex(table(name, study), spec, TableOptions(width=width))
            for body in re.findall(r"\\midrule\n(.*?)\\bottomrule", text, re.DOTALL):
                for line in body.strip().splitlines():
                    assert line.endswith(" \\\\")
                    for special in ("_", "&", "%", "#"):
                        assert re.search(rf"(?<!\\){re.escape(special)}", line.replace(" & ", " ")) is None
            assert text.count("\\begin{") == text.count("\\end{")
            assert text.count("{") == text.count("}") + text.count("\\{") - text.count("\\}")
            assert all(ord(c) < 128 for c in text)


def test_layout_decisions_are_made_and_reported(study: pl.DataFrame) -> None:
    cells = latex_layout(table("cells", study), TABLES["cells"], TableOptions(study="paper study"))
    # Mode holds no value in any cell: dropped; scaffold and driver print as one stack
    assert cells.dropped == ("Mode",) and "Seed" in cells.text
    assert "Mode" not in cells.text.split("\\begin{table}")[1]
    assert "split into" in "; ".join(cells.steps) and not cells.resized
    assert cells.width_pt <= cells.budget_pt == round(BUDGET_PT["column"] * SAFETY, 1)
    # abbreviations carry a legend in the caption
    assert "Flat/N" in cells.text and "Flat/N: No gain, not intended" in cells.text
    assert "\\label{tab:paper-study-cells}" in cells.text and "table*" not in cells.text
    assert "\\resizebox" not in cells.text and "% layout for the column width: dropped empty" in cells.text
    # words, not identifiers; chains spaced
    assert "static\\_shortcut" not in cells.text and "SFT $\\rightarrow$ GRPO" in cells.text
    page = latex_layout(table("routes", study), TABLES["routes"], TableOptions(width="page"))
    assert page.steps == () and "\\begin{table*}" in page.text
    # a table nothing makes fit is scaled down, and says so
    wide = TableSpec("wide", "Too wide", (Column("a", "A"), Column("b", "B")), lambda s: s)
    frame = pl.DataFrame({"a": ["x" * 60], "b": ["y" * 60]})  # two words no column can hold
    resized = latex_layout(frame, wide)
    assert resized.resized and "\\resizebox{\\linewidth}{!}" in resized.text
    assert "with \\resizebox (no layout fitted)" in resized.steps[-1]


def test_control_options(study: pl.DataFrame) -> None:
    frame = table("cells", study)
    options = TableOptions(
        columns=("task", "best_score", "delta"),
        caption="Our cells",
        label="tab:mine",
        star=True,
        bold="unique",
        notes="Scores are percentages.",
    )
    text = to_latex(frame, TABLES["cells"], options)
    assert "\\begin{table*}" in text and "\\caption{Our cells.}" in text and "\\label{tab:mine}" in text
    assert "Best score" in text and "Quadrant" not in text and "Scores are percentages." in text
    assert "\\textbf" not in text  # the best score is a tie (71.0 twice): unique bolds neither
    assert "\\textbf{71.0}" in to_latex(frame, TABLES["cells"], TableOptions(bold="best"))
    assert "\\textbf" not in to_latex(frame, TABLES["cells"], TableOptions(bold="none"))
    assert write(frame, TABLES["cells"], "csv", None, options) == frame.select(options.columns).write_csv()
    with pytest.raises(ValueError, match="no column 'nope' \\(there are: task, level"):
        to_latex(frame, TABLES["cells"], TableOptions(columns=("nope",)))


@needs_tex
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(TABLES))
def test_tables_compile_without_overfull_boxes(
    study: pl.DataFrame, name: str, width: str, tmp_path: Path
) -> None:
    """Every table, in a one- and a two-column article: no LaTeX error, no box over 1 pt too wide."""
    text = to_latex(table(name, study), TABLES[name], TableOptions(width=width))
    for twocolumn in (False, True):
        compiled = compile_article(text, tmp_path / str(twocolumn), twocolumn=twocolumn)
        assert compiled.errors == [] and compiled.pdf.is_file()
        assert [o for o in compiled.overfull if o > 1.0] == [], (name, width, twocolumn)


@pytest.mark.parametrize(
    ("text", "latex"),
    [
        ("a_b & 50%", r"a\_b \& 50\%"),
        ("SFT→GRPO", r"SFT$\rightarrow$GRPO"),
        ("Qwén", r"Qw\'{e}n"),
        ("模型", r"\texttt{[U+6A21]}\texttt{[U+578B]}"),
        ("{x}^~\\", r"\{x\}\textasciicircum{}\textasciitilde{}\textbackslash{}"),
        ("[x]", "{[}x{]}"),
        ("a<b|c>", r"a\textless{}b\textbar{}c\textgreater{}"),
        ("e\u0301\x01", r"\'{e}\texttt{[U+0001]}"),
    ],
)
def test_latex_escaping(text: str, latex: str) -> None:
    assert latex_escape(text) == latex
