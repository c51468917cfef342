"""Study figures over the hard-case study: pixels pinned by reference PNGs (UPDATE_FIGURES=1 rewrites
them), bytes the same from one render to the next, colours fixed by the taxonomy, and ``arb-audit plot``."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PathCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.testing.compare import compare_images

from arb_audit.install_hint import missing
from arb_audit.store import RunStore
from arb_audit.study import load_study
from arb_audit.taxonomy.figures import FIGURES, attempts, figure
from arb_audit.taxonomy.palette import ROUTE_COLOURS
from arb_audit.taxonomy.routes import artifact_route
from tests.taxonomy.figure_cases import ODD_TASK, write_figure_study
from tests.test_cli import run_cli

REFERENCE = Path(__file__).resolve().parent / "figures"
TOLERANCE = 2.0
"""RMS difference allowed (0-255 scale): glyphs may shift by a pixel, a wrong colour or layout may not."""


@pytest.fixture(scope="module")
def study_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_figure_study(tmp_path_factory.mktemp("figures") / "study.duckdb")


@pytest.fixture(scope="module")
def study(study_path: Path) -> pl.DataFrame:
    return load_study(study_path)


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


def test_a_route_label_keeps_its_colour_across_studies(study: pl.DataFrame, one_run_path: Path) -> None:
    other = load_study(one_run_path)
    colours = [_marker_colours(figure("scores", s), "SFT") for s in (study, other)]
    assert colours[0] == colours[1] == {to_hex(ROUTE_COLOURS["SFT"])}


def test_names_are_drawn_as_typed(study: pl.DataFrame) -> None:
    titles = {ax.get_title() for ax in figure("scores", study).axes}
    assert titles == {"alfworld", "gsm8k", "humaneval", ODD_TASK}


def test_scores_place_submissions_on_the_run_clock(study: pl.DataFrame) -> None:
    reports = {
        k: json.loads(r) for k, r in study.drop_nulls("report").select("run_key", "report").iter_rows()
    }
    # b's agent launched five minutes into the run: its clock starts there
    b = attempts(reports["/runs/b"])
    assert [(a.minutes, a.score, a.route, a.best) for a in b] == [
        (12.0, 58.0, "SFT", False),
        (52.0, 71.0, "COMPOSITE", True),
        (75.0, 66.0, "COMPOSITE", False),
        (80.0, None, "UNKNOWN", False),
    ]
    # no clock: the first submission starts it; no lineage: routes unknown
    c = attempts(reports["/runs/c"])
    assert [(a.minutes, a.route) for a in c] == [(0.0, "UNKNOWN"), (17.0, "UNKNOWN")]


@pytest.mark.parametrize(
    ("steps", "label"),
    [
        ([{"kind": "sft", "label": "SFT"}, {"kind": "grpo", "label": "ONLINE_RL"}], "COMPOSITE"),
        ([{"kind": "copy", "label": None}, {"kind": "dpo", "label": "DPO"}], "DPO"),
        ([{"kind": "copy", "label": None}, {"kind": "config_only", "label": None}], "NO_TRAINING"),
        ([{"kind": "unknown", "label": None}], "UNKNOWN"),
        ([], "UNKNOWN"),
        (None, "UNKNOWN"),
    ],
)
def test_the_route_of_an_artifact_follows_its_lineage(
    steps: list[dict[str, str | None]] | None, label: str
) -> None:
    assert artifact_route(steps) == label


def test_a_study_with_nothing_to_draw_says_why(tmp_path: Path) -> None:
    unaudited = load_study(write_figure_study(tmp_path / "s.duckdb", keys=("/runs/f",)))
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


@pytest.mark.slow
@pytest.mark.parametrize("name", ["scores", "routes"])
def test_the_readme_figures_are_what_the_reference_runs_give(name: str, tmp_path: Path) -> None:
    """docs/reference_*.png, shown in the README, are remade from the bundled reference recordings."""
    root = Path(__file__).resolve().parents[2]
    runs = tmp_path / "reference"
    shutil.copytree(root / "fixtures" / "reference", runs, symlinks=True)
    study = tmp_path / "study.duckdb"
    assert run_cli("ingest", str(runs), "--study", str(study), "--jobs", "2")[0] == 0
    actual = tmp_path / f"{name}.png"
    assert run_cli("plot", str(study), "--figure", name, "-o", str(actual))[0] == 0
    expected = root / "docs" / f"reference_{name}.png"
    if os.environ.get("UPDATE_FIGURES"):
        expected.write_bytes(actual.read_bytes())
    assert compare_images(str(expected), str(actual), tol=TOLERANCE) is None
