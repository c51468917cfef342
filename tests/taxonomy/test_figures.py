"""Study figures over the hard-case study: pixels pinned by reference PNGs (UPDATE_FIGURES=1 rewrites
them), bytes the same from one render to the next, colours fixed by the taxonomy, and ``arb-audit plot``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.testing.compare import compare_images

from arb_audit.install_hint import missing
from arb_audit.schema import SCHEMA_VERSION, Stage
from arb_audit.store import RunStore
from arb_audit.study import figure_data, load_study, timeline
from arb_audit.taxonomy.figures import (
    COLUMN_WIDTH,
    FIGURES,
    PAGE_WIDTH,
    Attempt,
    FigureOptions,
    _dodged,
    attempts,
    clean,
    figure,
    save,
)
from arb_audit.taxonomy.labels import VOCABULARIES
from arb_audit.taxonomy.palette import ROUTE_COLOURS
from arb_audit.taxonomy.render import WIDTHS, TableOptions, latex_escape, to_latex
from arb_audit.taxonomy.routes import RouteLabel, StageKind, artifact_route
from arb_audit.taxonomy.tables import TABLES, table
from arb_audit.taxonomy.timelines import FigureData
from tests.audit_records import complete_report
from tests.taxonomy.figure_cases import ODD_TASK, write_figure_study
from tests.taxonomy.latex_article import compile_article, tex_engine
from tests.test_cli import run_cli

REFERENCE = Path(__file__).resolve().parent / "figures"
needs_tex = pytest.mark.skipif(
    tex_engine() is None,
    reason="no pdflatex: apt-get install texlive-latex-base texlive-latex-recommended",
)
TOLERANCE = 2.0
"""RMS difference allowed (0-255 scale): glyphs may shift by a pixel, a wrong colour or layout may not."""


@pytest.fixture(scope="module")
def study_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_figure_study(tmp_path_factory.mktemp("figures") / "study.duckdb")


@pytest.fixture(scope="module")
def study(study_path: Path) -> FigureData:
    return figure_data(load_study(study_path))


@pytest.fixture(scope="module")
def one_run_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study of one run (b): one panel, cheap to draw where the hard cases are not the point."""
    return write_figure_study(tmp_path_factory.mktemp("figures") / "one.duckdb", keys=("/runs/b",))


@pytest.mark.parametrize("name", list(FIGURES))
def test_figures_match_their_reference_images(study_path: Path, name: str, tmp_path: Path) -> None:
    actual = tmp_path / f"{name}.png"
    assert run_cli("plot", str(study_path), "--figure", name, "-o", str(actual)) == (0, "", "")
    assert actual.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    expected = REFERENCE / f"{name}.png"
    if os.environ.get("UPDATE_FIGURES"):
        expected.parent.mkdir(exist_ok=True)
        expected.write_bytes(actual.read_bytes())
    assert compare_images(str(expected), str(actual), tol=TOLERANCE) is None


# SVG ids are hashes (salted by the style); a PDF records dates and subsets fonts: either could drift.
# The caption is the file's title.
@pytest.mark.parametrize(
    ("suffix", "magic", "title"),
    [
        (".SVG", b"<svg", b"<dc:title>Score over wall-clock time"),
        (".pdf", b"%PDF-", b"(Score over wall-clock"),
    ],
)
def test_svg_and_pdf_are_the_same_bytes_each_time(
    one_run_path: Path, suffix: str, magic: bytes, title: bytes, tmp_path: Path
) -> None:
    first, second = tmp_path / f"1{suffix}", tmp_path / f"2{suffix}"
    for out in (first, second):
        assert run_cli("plot", str(one_run_path), "--figure", "scores", "-o", str(out)) == (0, "", "")
    assert magic in first.read_bytes()[:400] and title in first.read_bytes()
    assert first.read_bytes() == second.read_bytes()


def _marker_colours(fig: Figure, route: str) -> set[str]:
    return {
        to_hex(tuple(rgba))
        for ax in fig.axes
        for artist in ax.collections
        if isinstance(artist, PathCollection) and artist.get_label() == route
        for rgba in np.asarray(artist.get_facecolor()).reshape(-1, 4).tolist()
    }


def test_a_route_label_keeps_its_colour_across_studies(study: FigureData, one_run_path: Path) -> None:
    other = figure_data(load_study(one_run_path))
    colours = [_marker_colours(figure("scores", s), "SFT") for s in (study, other)]
    assert colours[0] == colours[1] == {to_hex(ROUTE_COLOURS["SFT"])}


def test_names_are_drawn_as_typed(study: FigureData) -> None:
    titles = {ax.get_title() for ax in figure("scores", study).axes}
    assert titles == {"alfworld", "gsm8k", "humaneval", ODD_TASK}


def test_scores_place_submissions_on_the_run_clock(study: FigureData) -> None:
    # each audited run's timeline, typed: the figures read no audit JSON
    assert set(study.timelines) == set(study.study.filter(pl.col("error").is_null())["run_key"])
    # b's agent launched five minutes into the run: its clock starts there
    b = attempts(study.timelines["/runs/b"])
    assert [(a.minutes, a.score, a.route, a.best) for a in b] == [
        (12.0, 58.0, "SFT", False),
        (52.0, 71.0, "COMPOSITE", True),
        (75.0, 66.0, "COMPOSITE", False),
        (80.0, None, "UNKNOWN", False),
    ]
    # no clock: the first submission starts it; no lineage: routes unknown
    c = attempts(study.timelines["/runs/c"])
    assert [(a.minutes, a.route) for a in c] == [(0.0, "UNKNOWN"), (17.0, "UNKNOWN")]


@pytest.mark.parametrize(
    ("steps", "label"),
    [
        ([("sft", "SFT"), ("grpo", "ONLINE_RL")], "COMPOSITE"),
        ([("copy", None), ("dpo", "DPO")], "DPO"),
        ([("copy", None), ("config_only", None)], "NO_TRAINING"),
        ([("unknown", None)], "UNKNOWN"),
        ([], "UNKNOWN"),
        (None, "UNKNOWN"),
    ],
)
def test_the_route_of_an_artifact_follows_its_lineage(
    steps: list[tuple[StageKind, RouteLabel | None]] | None, label: str
) -> None:
    stages = None if steps is None else [_stage(kind, route) for kind, route in steps]
    assert artifact_route(stages) == label
    assert attempts_route(steps) == label  # the figures' reading of the same lineage, as a timeline


def _stage(kind: StageKind, label: RouteLabel | None) -> Stage:
    return Stage(
        kind=kind,
        label=label,
        variant=None,
        interactive=None,
        on_policy=None,
        adapter=None,
        artifact="out",
        parent=None,
        parents=[],
        strength="weak",
        conflicts=[],
        weights=None,
        evidence=[],
    )


def attempts_route(steps: list[tuple[StageKind, RouteLabel | None]] | None) -> str:
    lineage = [{"kind": kind, "label": label, "artifact": "out"} for kind, label in steps or []]
    report = complete_report(
        {
            "run": {"started_at": "2026-01-05T09:00:00+00:00"},
            "route": {"lineage": {"out": lineage}},
            "submissions": [
                {
                    "seq": 1,
                    "status": "scored",
                    "score": 1.0,
                    "requested_at": "2026-01-05T09:01:00+00:00",
                    "artifact_path": "out",
                }
            ],
        }
    )
    (placed,) = attempts(timeline(report))
    return placed.route


def test_a_study_with_nothing_to_draw_says_why(tmp_path: Path) -> None:
    unaudited = figure_data(load_study(write_figure_study(tmp_path / "s.duckdb", keys=("/runs/f",))))
    for name, says in (
        ("scores", "no audited runs with submissions to plot"),
        ("routes", "no route was written"),
        ("quadrants", "no audited runs to plot"),
    ):
        with pytest.raises(ValueError, match=says):
            figure(name, unaudited)
    figure("failures", unaudited)  # a run that could not be audited is a failure the figure counts
    with pytest.raises(KeyError, match="scores, routes"):
        figure("nope", unaudited)


def test_plot_refuses_what_it_cannot_draw(study_path: Path, tmp_path: Path) -> None:
    out = str(tmp_path / "f.png")
    code, _, err = run_cli("plot", str(study_path), "--figure", "scores", "-o", str(tmp_path / "f.jpg"))
    assert code == 2 and "f.jpg" in err and ".pdf, .png or .svg" in err
    code, _, err = run_cli("plot", str(study_path), "--figure", "nope", "-o", out)
    assert code == 2 and "no figure 'nope' (there are: scores, routes, failures, quadrants)" in err
    code, _, err = run_cli("plot", str(tmp_path / "missing.duckdb"), "--figure", "scores", "-o", out)
    assert code == 2 and "missing.duckdb: no such study" in err
    (tmp_path / "notes.txt").write_text("not a store")
    code, _, err = run_cli("plot", str(tmp_path / "notes.txt"), "--figure", "scores", "-o", out)
    assert code == 2 and "notes.txt" in err
    empty = tmp_path / "empty.duckdb"
    with RunStore.open(empty):
        pass
    code, _, err = run_cli("plot", str(empty), "--figure", "scores", "-o", out)
    assert code == 2 and f"{empty}: holds no ingested runs" in err
    unaudited = write_figure_study(tmp_path / "unaudited.duckdb", keys=("/runs/f",))
    code, _, err = run_cli("plot", str(unaudited), "--figure", "scores", "-o", out)
    assert code == 2 and f"{unaudited}: no audited runs with submissions to plot" in err
    # the SVG writer opens its file before it draws: the cheapest way to a file that cannot be written
    code, _, err = run_cli(
        "plot", str(study_path), "--figure", "failures", "-o", str(tmp_path / "no" / "f.svg")
    )
    assert code == 2 and "f.svg: No such file or directory" in err
    assert not (tmp_path / "f.png").exists()
    assert all(line.startswith("arb-audit plot: ") for line in err.splitlines())


def test_plot_without_matplotlib_says_how_to_get_it(
    study_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delitem(sys.modules, "arb_audit.taxonomy.figures", raising=False)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    code, _, err = run_cli("plot", str(study_path), "--figure", "scores", "-o", str(tmp_path / "f.png"))
    assert code == 2 and err == missing("arb-audit plot", "matplotlib") + "\n"
    assert "matplotlib>=" in err


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def reference_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The study of the bundled reference recordings (ingested once for the slow tests here)."""
    runs = tmp_path_factory.mktemp("reference") / "runs"
    shutil.copytree(ROOT / "fixtures" / "reference", runs, symlinks=True)
    study = runs.parent / "study.duckdb"
    assert run_cli("ingest", str(runs), "--study", str(study), "--jobs", "2")[0] == 0
    return study


def _same_image(actual: Path, expected: Path) -> None:
    """Compare with the kept image (UPDATE_FIGURES=1 rewrites it)."""
    if os.environ.get("UPDATE_FIGURES"):
        expected.write_bytes(actual.read_bytes())
    assert compare_images(str(expected), str(actual), tol=TOLERANCE) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scores", "routes"])
def test_the_readme_figures_are_what_the_reference_runs_give(
    name: str, reference_study: Path, tmp_path: Path
) -> None:
    """docs/reference_*.png, shown in the README, are remade from the bundled reference recordings."""
    actual = tmp_path / f"{name}.png"
    assert run_cli("plot", str(reference_study), "--figure", name, "-o", str(actual))[0] == 0
    _same_image(actual, ROOT / "docs" / f"reference_{name}.png")


@pytest.mark.slow
@needs_tex
@pytest.mark.skipif(shutil.which("pdftoppm") is None, reason="no pdftoppm: apt-get install poppler-utils")
def test_the_readme_shows_a_compiled_table_and_figure(reference_study: Path, tmp_path: Path) -> None:
    """docs/compiled_*.png: the reference study's routes table and scores figure as pdflatex sets them in
    a two-column article, each page rendered with pdftoppm (what a paper author gets, unedited)."""
    table = tmp_path / "routes.tex"
    code, _, err = run_cli(
        "export", str(reference_study), "--table", "routes", "--format", "latex", "-o", str(table)
    )
    assert code == 0, err
    figure_pdf = tmp_path / "scores.pdf"
    assert (
        run_cli(
            "plot", str(reference_study), "--figure", "scores", "--width", "column", "-o", str(figure_pdf)
        )[0]
        == 0
    )
    body = (
        "\\begin{figure}\\centering\\includegraphics{" + str(figure_pdf) + "}"
        "\\caption{Score over wall-clock time of the reference runs.}\\end{figure}"
    )
    for name, text in (("table", table.read_text(encoding="utf-8")), ("figure", body)):
        compiled = compile_article(text, tmp_path / name, twocolumn=True)
        assert compiled.errors == [] and [o for o in compiled.overfull if o > 1.0] == []
        subprocess.run(
            [
                "pdftoppm",
                "-png",
                "-r",
                "110",
                "-f",
                "1",
                "-l",
                "1",
                "-singlefile",
                str(compiled.pdf),
                str(tmp_path / name),
            ],
            check=True,
            timeout=60,
        )
        _same_image(tmp_path / f"{name}.png", ROOT / "docs" / f"compiled_{name}.png")


def _legend_texts(fig: Figure) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def test_a_chain_shows_as_its_last_stage_with_the_chain_in_the_legend(study: FigureData) -> None:
    """b's best model went SFT → GRPO: a diamond in GRPO's colour, the chain in words, no "Composite"."""
    fig = figure("scores", study)
    texts = _legend_texts(fig)
    assert "SFT → GRPO" in texts
    assert "Composite" not in texts and "COMPOSITE" not in texts
    assert not any("_" in t and t.isupper() for t in texts)  # display names, not identifiers
    assert to_hex(ROUTE_COLOURS["GRPO"]) in _marker_colours(fig, "GRPO")
    best = next(a for a in attempts(study.timelines["/runs/b"]) if a.best)
    assert best.chain == ("SFT", "GRPO") and best.colour == "GRPO"


def test_coinciding_markers_are_set_apart() -> None:
    """Two runs whose submissions share a time and a score: each further marker moves aside in time."""
    same = [
        Attempt(10.0, 50.0, "SFT", True),
        Attempt(40.0, 60.0, "SFT", False),
        Attempt(45.0, None, "UNKNOWN", False),
    ]
    runs = [(None, same, "a"), (None, list(same), "b"), (None, list(same), "c")]
    moved = _dodged(runs)
    firsts = [placed[0].minutes for placed in moved]
    assert firsts[0] == 10.0 and len(set(firsts)) == 3 and all(abs(m - 10.0) < 2 for m in firsts)
    assert [placed[2].minutes for placed in moved] == [45.0] * 3  # unscored crosses stay where they were
    assert all(placed[0].best for placed in moved)


def test_figure_options_width_tasks_and_run_labels(study: FigureData) -> None:
    column = figure("scores", study, FigureOptions(width="column"))
    assert column.get_figwidth() == pytest.approx(COLUMN_WIDTH)
    page = figure("routes", study, FigureOptions(width="page"))
    assert page.get_figwidth() == pytest.approx(PAGE_WIDTH)
    only = figure("scores", study, FigureOptions(tasks=("humaneval", "gsm8k")))
    assert [ax.get_title() for ax in only.axes] == ["humaneval", "gsm8k"]
    with pytest.raises(ValueError, match="no task 'mmlu'"):
        figure("scores", study, FigureOptions(tasks=("mmlu",)))
    named = figure("scores", study, FigureOptions(tasks=("gsm8k",), run_labels=True))
    assert {t.get_text() for t in named.axes[0].texts} == {"a", "b"}


def test_plot_takes_the_figure_options(study_path: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.toml"
    labels.write_text('[route]\nSFT = "Supervised"\n')
    out = tmp_path / "s.png"
    args = ["--width", "column", "--tasks", "gsm8k", "--label-runs", "--labels", str(labels)]
    assert run_cli("plot", str(study_path), "--figure", "scores", "-o", str(out), *args) == (0, "", "")
    assert out.read_bytes().startswith(b"\x89PNG")
    code, _, err = run_cli("plot", str(study_path), "--figure", "scores", "-o", str(out), "--tasks", "mmlu")
    assert code == 2 and "no task 'mmlu'" in err
    bad = tmp_path / "bad.toml"
    bad.write_text('[route]\nNOPE = "x"\n')
    code, _, err = run_cli(
        "plot", str(study_path), "--figure", "scores", "-o", str(out), "--labels", str(bad)
    )
    assert code == 2 and "NOPE" in err


def test_failures_scale_follows_the_counts(study: FigureData) -> None:
    fig = figure("failures", study)
    ax = fig.axes[0]
    ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
    assert ticks == list(range(int(ax.get_xlim()[1]) + 1))  # a tick per run for a few runs
    assert any(t.get_text() == "1" for t in ax.texts)  # counts printed in their segments


@needs_tex
@pytest.mark.filterwarnings("error::UserWarning")  # a layout that collapsed is a figure that does not fit
@pytest.mark.parametrize("name", list(FIGURES))
def test_figures_compile_without_overfull_boxes(study: FigureData, name: str, tmp_path: Path) -> None:
    """Every figure at its own size, in a one- and a two-column article: no error, no box over 1 pt too wide.

    ``column`` goes in a column's ``figure``; ``page`` and ``auto`` across a two-column page
    (``figure*``) and in a one-column article's ``figure``.
    """
    widths: tuple[Literal["column", "page", "auto"], ...] = ("column", "page", "auto")
    for width in widths:
        pdf = tmp_path / f"{name}-{width}.pdf"
        save(figure(name, study, FigureOptions(width=width)), pdf)
        for twocolumn in (False, True):
            env = "figure*" if twocolumn and width != "column" else "figure"
            body = f"\\begin{{{env}}}\\centering\\includegraphics{{{pdf}}}\\caption{{{name}}}\\end{{{env}}}"
            compiled = compile_article(body, tmp_path / f"{width}-{twocolumn}", twocolumn=twocolumn)
            assert compiled.errors == [] and compiled.pdf.is_file()
            assert [o for o in compiled.overfull if o > 1.0] == [], (name, width, twocolumn)


def test_run_text_draws_as_printable_text() -> None:
    """A task or stack named with terminal escapes or a bidi override is drawn with them shown, no warning."""
    assert clean("gsm\x1b]0;pwned\x07 \u202eevil") == "gsm[U+001B]]0;pwned[U+0007] [U+202E]evil"
    assert clean("ünï_math & $x^2$") == "ünï_math & $x^2$"


@pytest.mark.slow
@needs_tex
def test_every_table_and_figure_of_the_reference_study_drops_into_a_paper(
    reference_study: Path, tmp_path: Path
) -> None:
    """Issue 22's goal on the bundled reference study: every table (both widths) and figure (every
    width), compiled in a one- and a two-column article — no LaTeX error, no box over 1 pt too wide,
    and no taxonomy identifier (``no_gain+not_intended``, ``static_shortcut_without_transfer``) in a
    table's text."""
    study = load_study(reference_study)
    drawn = figure_data(study)
    # run data (a driver called after its scenario, config_only) may spell like an identifier: not ours
    data = {str(v) for column in ("task", "scaffold", "driver", "mode") for v in study[column].drop_nulls()}
    identifiers = {
        name for names in VOCABULARIES.values() for name in names if "_" in name or "+" in name
    } - data
    for name in TABLES:
        for width in WIDTHS:
            text = to_latex(table(name, study), TABLES[name], TableOptions(width=width))
            shown = re.sub(r"\\label\{[^}]*\}|%[^\n]*", "", text)  # labels and comments are not text
            assert not [i for i in identifiers if latex_escape(i) in shown], (name, width)
            for twocolumn in (False, True):
                compiled = compile_article(
                    text, tmp_path / f"t-{name}-{width}-{twocolumn}", twocolumn=twocolumn
                )
                assert compiled.errors == [] and [o for o in compiled.overfull if o > 1.0] == [], (
                    name,
                    width,
                )
    widths: tuple[Literal["column", "page", "auto"], ...] = ("column", "page", "auto")
    for name in FIGURES:
        for width in widths:
            pdf = tmp_path / f"{name}-{width}.pdf"
            save(figure(name, drawn, FigureOptions(width=width)), pdf)
            for twocolumn in (False, True):
                env = "figure*" if twocolumn and width != "column" else "figure"
                body = (
                    f"\\begin{{{env}}}\\centering\\includegraphics{{{pdf}}}\\caption{{{name}}}\\end{{{env}}}"
                )
                compiled = compile_article(
                    body, tmp_path / f"f-{name}-{width}-{twocolumn}", twocolumn=twocolumn
                )
                assert compiled.errors == [] and [o for o in compiled.overfull if o > 1.0] == [], (
                    name,
                    width,
                )


def test_a_stored_audit_that_does_not_validate_is_named_not_drawn(tmp_path: Path) -> None:
    """A row of this schema version whose audit does not validate: never guessed at, the rest drawn."""
    path = write_figure_study(tmp_path / "s.duckdb", keys=("/runs/a", "/runs/b"))
    with RunStore.open(path) as store:
        store.con.execute(
            "UPDATE study_runs SET report = ? WHERE run_key = '/runs/b'",
            [f'{{"schema_version": {SCHEMA_VERSION}, "submissions": "none"}}'],
        )
    data = figure_data(load_study(path))
    assert data.unreadable == ("/runs/b",) and set(data.timelines) == {"/runs/a"}
    code, _, err = run_cli("plot", str(path), "--figure", "scores", "-o", str(tmp_path / "s.png"))
    assert code == 0 and "1 run(s) drawn without their submissions" in err and "/runs/b" in err
