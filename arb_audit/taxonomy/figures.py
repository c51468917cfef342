"""The study figures of a paper, declared as data like the tables and drawn with matplotlib.

Each figure is a :class:`FigureSpec` whose ``draw`` turns a study (its frame, ``arb_audit.study.load_study``,
and its runs' typed timelines, :class:`~arb_audit.taxonomy.timelines.FigureData`) into a matplotlib
:class:`~matplotlib.figure.Figure`; :func:`save` writes it as PDF, PNG or SVG with the same bytes every
time. The bars and grids count what :mod:`arb_audit.taxonomy.tables` counts, from its own functions; the
scores figure places what the timelines hold, never reading an audit's JSON. Use them directly::

    from arb_audit.study import figure_data, load_study
    from arb_audit.taxonomy import figures

    study = figure_data(load_study("study.duckdb"))
    figures.save(figures.figure("scores", study), Path("scores.pdf"))

No pyplot: each figure is a plain ``Figure`` on an Agg canvas, so nothing global changes and no window
opens. Every route label and failure mode has one colour (Okabe–Ito, safe for colour-blind readers), the
same in every study; a route's is :mod:`arb_audit.taxonomy.palette`'s, as on the reviewer's desk.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Literal

import polars as pl
from matplotlib import rc_context
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator, MultipleLocator

from arb_audit.taxonomy import tables
from arb_audit.taxonomy.failures import FAILURE_MODES
from arb_audit.taxonomy.labels import DEFAULT_LABELS, Labels
from arb_audit.taxonomy.palette import ROUTE_COLOURS
from arb_audit.taxonomy.render import BUDGET_PT
from arb_audit.taxonomy.routes import ROUTE_LABELS, lineage_label
from arb_audit.taxonomy.timelines import FigureData, RunTimeline

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

FORMATS = ("pdf", "png", "svg")
"""What :func:`save` writes, chosen by the file's suffix."""
DPI = 300
"""Pixels per inch of a PNG (PDF and SVG are vector)."""
METADATA: dict[str, dict[str, str | None]] = {
    "pdf": {"CreationDate": None, "ModDate": None},
    "png": {"Software": None},
    "svg": {"Date": None},
}
"""Per format, the metadata left out because it would change the bytes from one render to the next."""

STYLE: dict[RcKeyType, Any] = {
    # DejaVu ships with matplotlib, so a figure looks the same on every machine
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "figure.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.frameon": False,
    "legend.handletextpad": 0.4,
    "legend.columnspacing": 1.2,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "axes.titlepad": 4,
    "axes.axisbelow": True,
    "grid.color": "#e6e6e6",
    "grid.linewidth": 0.5,
    "xtick.major.width": 0.6,
    "ytick.major.width": 0.6,
    "xtick.major.size": 2.5,
    "ytick.major.size": 2.5,
    # names are data: a task called "$x$" is shown as typed, never parsed as mathtext
    "text.parse_math": False,
    # TrueType fonts in PDF (publishers refuse Type 3); SVG text as paths, so no font is needed to view it
    "pdf.fonttype": 42,
    "svg.fonttype": "path",
    # SVG ids are hashes salted with this; fixed, two renders give the same file
    "svg.hashsalt": "arb-audit",
}
"""Publication styling, applied with ``matplotlib.rc_context`` while a figure is drawn and saved."""

GREY = "#888888"
"""Neutral ink: run lines, unscored attempts, base scores."""
FAILURE_ORDER = (*(d.name for d in FAILURE_MODES), "undetermined", "not_audited")
"""Every failure a figure may show: the taxonomy's modes, then the two the tables add."""
FAILURE_COLOURS: dict[str, str] = dict(
    zip(
        FAILURE_ORDER,
        (
            "#D55E00",
            "#E69F00",
            "#F0E442",
            "#CC79A7",
            "#0072B2",
            "#882255",  # harness_failure: outside Okabe-Ito's eight, Tol's wine, apart from the agent's own
            "#56B4E9",
            "#000000",
            "#009E73",
            "#999999",
            "#DDDDDD",
        ),
        strict=True,
    )
)
"""Each failure's colour (Okabe–Ito; no failure green, the two the tables add in greys)."""
STAGE_SHADES = {"written": 0.2, "attempted": 0.55, "adopted": 1.0}
"""How much of a route's colour each stage's bar takes (the rest is white): the deeper, the further."""
MARKER = 4.5
"""Diameter of a submission's marker, in points."""
RING = 2.2 * MARKER
"""Diameter of the ring around a run's best submission, in points."""
UNSCORED: dict[str, Any] = {"ls": "none", "marker": "x", "ms": 3.5, "mew": 0.8, "color": GREY, "zorder": 2}
"""How a submission that was not scored is drawn."""
UNSCORED_HEIGHT = 0.04
"""Where those are drawn, as a fraction of the panel's height (off the time axis's own ticks)."""
MAX_COLUMNS = 3
"""Panels side by side before a figure wraps to the next row."""
TEX_PT_PER_INCH = 72.27
"""TeX's points per inch (a PDF's are 72: a figure 345 PDF points wide is 346.3 TeX points)."""
PAGE_WIDTH = BUDGET_PT["page"] / TEX_PT_PER_INCH
"""Inches across the text of a one-column article, the widest a figure gets: it fits, at its own size,
in a one-column paper and across a two-column one (the tables' page width, measured with pdflatex)."""
COLUMN_WIDTH = BUDGET_PT["column"] / TEX_PT_PER_INCH
"""Inches across one column of a two-column article, the narrowest a figure gets (as the tables')."""
LEGEND_ENTRY_WIDTH = 1.15
"""Inches a legend entry takes (marker and the longest route label), to know how many fit in a row."""


CHAIN_MARKER = "D"
"""Marker of a submission whose model went through two training stages or more (its chain is in the
legend; its colour is its last stage's)."""
DODGE = 0.012
"""How far apart markers that would coincide are set, as a fraction of the panel's time range."""


@dataclass(frozen=True, slots=True)
class FigureOptions:
    """How a figure is laid out and worded (``arb-audit plot`` options; the same in Python)."""

    width: Literal["auto", "column", "page"] = "auto"
    """``column``: one column of a two-column paper (panels wrap); ``page``: the full text width;
    ``auto``: as wide as the panels need, between the two."""
    tasks: tuple[str, ...] | None = None
    """Only these tasks (in this order); None: every task."""
    run_labels: bool = False
    """Name each run beside its best submission (the run folder's name)."""
    labels: Labels = field(default_factory=lambda: DEFAULT_LABELS)
    """Display names of routes, chains and failure modes (``--labels FILE``)."""


@dataclass(frozen=True, slots=True)
class FigureSpec:
    """A figure: its name (``--figure``), caption and how it is drawn."""

    name: str
    """The name ``arb-audit plot --figure`` takes."""
    caption: str
    """What it shows, one sentence."""
    draw: Callable[[FigureData, FigureOptions], Figure]
    """Study frame and timelines, options → the figure; a ValueError says why there is nothing to draw."""


@dataclass(frozen=True, slots=True)
class Attempt:
    """One submission as the scores figure places it."""

    minutes: float
    """When it was requested, in minutes since the run started."""
    score: float | None
    """Its score; None when it was not scored (an error, a rejection, a duplicate)."""
    route: str
    """The route label of the artifact it named."""
    best: bool
    """Whether it is the run's best submission."""
    chain: tuple[str, ...] = ()
    """Route labels of the training stages its model went through, first to last."""
    chain_text: str | None = None
    """The audit's own chain of the run's best artifact (``(SFT + SFT)→MERGE``), for the best
    submission: it shows branches that the flat ``chain`` cannot."""

    @property
    def colour(self) -> str:
        """The route whose colour it takes: its last training stage's (a chain's end), else its route."""
        return self.chain[-1] if self.chain and self.chain[-1] in ROUTE_COLOURS else self.route


def attempts(timeline: RunTimeline) -> list[Attempt]:
    """Place a run's submissions in time (by request, else completion), scored or not, in time order.

    The clock starts when the agent was launched, else when the run started, else at the first
    submission; a submission with no time is left out.
    """
    submissions = timeline.submissions
    times = [s.requested_at or s.completed_at for s in submissions]
    origin = timeline.agent_launched_at or timeline.started_at
    origin = origin or min((t for t in times if t is not None), default=None)
    placed = []
    for submission, at in zip(submissions, times, strict=True):
        if at is None or origin is None:
            continue
        scored = submission.status == "scored" and submission.score is not None
        best = submission.seq == timeline.best_seq
        steps = timeline.lineage.get(submission.artifact_path or "") or ()
        chain = tuple(step.label for step in steps if step.label)
        placed.append(
            Attempt(
                minutes=(at - origin).total_seconds() / 60,
                score=submission.score if scored else None,
                route=lineage_label(chain, [step.kind for step in steps]),
                best=scored and best,
                chain=chain,
                chain_text=timeline.chain_text if best else None,
            )
        )
    return sorted(placed, key=lambda a: (a.minutes, a.score is None))


def clean(text: object) -> str:
    """Return run text as a figure draws it.

    A character that does not print (a control, a bidi override) shows as ``[U+XXXX]``, as the LaTeX
    tables show it, never as a glyph or an effect.
    """
    return "".join(c if c.isprintable() else f"[U+{ord(c):04X}]" for c in str(text))


def _label(name: str) -> str:
    """Show an identifier as words (``no_gain`` → ``no gain``)."""
    return name.replace("_", " ")


def _tint(colour: str, share: float) -> tuple[float, float, float]:
    """Mix ``share`` of ``colour`` with white (opaque, unlike alpha, so PDF needs no transparency)."""
    red, green, blue = to_rgb(colour)
    return (1 - share * (1 - red), 1 - share * (1 - green), 1 - share * (1 - blue))


def _new_figure(
    panels: int,
    panel_width: float,
    panel_height: float,
    *,
    sharey: bool = False,
    columns: int = MAX_COLUMNS,
    width: str = "auto",
) -> tuple[Figure, list[Axes]]:
    """Make a figure on an Agg canvas holding ``panels`` axes in rows of up to ``columns``.

    ``width`` (:attr:`FigureOptions.width`): a one-column figure puts as many panels in a row as fit.
    """
    if width == "column":
        columns = max(1, min(columns, int(COLUMN_WIDTH // (0.8 * panel_width))))
    cols = min(panels, columns)
    rows = math.ceil(panels / cols)
    fixed = {"column": COLUMN_WIDTH, "page": PAGE_WIDTH}.get(width)
    inches = fixed or min(PAGE_WIDTH, max(COLUMN_WIDTH, cols * panel_width))
    fig = Figure(figsize=(inches, rows * panel_height), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False, sharey=sharey)
    axes: list[Axes] = list(grid.flat)
    for spare in axes[panels:]:
        spare.remove()
    return fig, axes[:panels]


def _legend(fig: Figure, handles: Sequence[Artist]) -> None:
    """Put the legend above the panels, outside them (it never covers data), in rows that fit the width."""
    columns = max(1, int(fig.get_figwidth() / LEGEND_ENTRY_WIDTH))
    fig.legend(handles=handles, loc="outside upper center", ncols=min(columns, len(handles)))


def _route_handles(routes: Iterable[str], labels: Labels = DEFAULT_LABELS) -> list[Artist]:
    """Make legend markers for the route labels given, in the taxonomy's order, by their display names."""
    present = set(routes)
    return [
        Line2D(
            [],
            [],
            ls="none",
            marker="o",
            ms=MARKER,
            mfc=ROUTE_COLOURS[d.name],
            mec="black",
            mew=0.3,
            label=labels.name("route", d.name),
        )
        for d in ROUTE_LABELS
        if d.name in present
    ]


def _chain_handles(placed: Iterable[Attempt], labels: Labels) -> list[Artist]:
    """Make a legend marker per chain of two stages or more: in its last stage's colour, the chain's words."""
    chains: dict[tuple[str, ...], str] = {}
    for a in placed:
        if a.score is None or len(a.chain) < 2:
            continue
        words = (
            labels.chain(a.chain_text)
            if a.chain_text
            else " → ".join(labels.name("route", c) for c in a.chain)
        )
        if a.chain not in chains or a.chain_text:
            chains[a.chain] = words
    return [
        Line2D(
            [],
            [],
            ls="none",
            marker=CHAIN_MARKER,
            ms=MARKER,
            mfc=ROUTE_COLOURS.get(chain[-1], GREY),
            mec="black",
            mew=0.3,
            label=words,
        )
        for chain, words in chains.items()
    ]


def _tasks(study: pl.DataFrame, options: FigureOptions) -> pl.DataFrame:
    """Keep the tasks :attr:`FigureOptions.tasks` names; a ValueError names any the study lacks."""
    if options.tasks is None:
        return study
    have = set(study["task"].drop_nulls())
    unknown = [t for t in options.tasks if t not in have]
    if unknown:
        raise ValueError(f"no task {', '.join(map(repr, unknown))} (there are: {', '.join(sorted(have))})")
    return study.filter(pl.col("task").is_in(list(options.tasks)))


Run = tuple[float | None, list[Attempt], str]
"""A run as the scores figure draws it: base score, placed submissions, its name."""


def _runs_by_task(
    study: pl.DataFrame, timelines: Mapping[str, RunTimeline], order: Sequence[str] | None = None
) -> dict[str, list[Run]]:
    """Return the audited runs that submitted, by task (sorted, or in ``order``).

    Only a row without ``error`` is drawn, from its timeline: ``load_study`` gives one holding an audit
    of another schema version an error, and ``figure_data`` reads the others through the schema.
    """
    rows = (
        study.filter(pl.col("error").is_null() & pl.col("report").is_not_null())
        .with_columns(pl.col("task").fill_null("—"))
        .sort("task", "run_key")
        .select("task", "base_score", "run_key")
        .iter_rows()
    )
    runs: dict[str, list[Run]] = {}
    for task, base, key in rows:
        timeline = timelines.get(key)
        placed = attempts(timeline) if timeline is not None else []
        if placed:
            runs.setdefault(task, []).append((base, placed, PurePath(str(key)).name))
    if order is not None:
        runs = {t: runs[t] for t in order if t in runs}
    return runs


def _dodged(task_runs: Sequence[Run]) -> list[list[Attempt]]:
    """Return each run's attempts with markers that would coincide set apart in time.

    Two runs (or two submissions) at the same time and score would hide each other: each further one
    moves by :data:`DODGE` of the panel's time range, alternately right and left.
    """
    span = max((a.minutes for _, placed, _ in task_runs for a in placed), default=0.0) or 1.0
    seen: dict[tuple[float, float], int] = {}
    moved = []
    for _, placed, _ in task_runs:
        mine = []
        for a in placed:
            if a.score is None:
                mine.append(a)
                continue
            spot = (round(a.minutes / span, 3), round(a.score, 6))
            k = seen.get(spot, 0)
            seen[spot] = k + 1
            shift = ((k + 1) // 2) * (1 if k % 2 else -1) * DODGE * span
            mine.append(replace(a, minutes=a.minutes + shift) if k else a)
        moved.append(mine)
    return moved


def _xy(placed: Iterable[Attempt]) -> tuple[list[float], list[float]]:
    """Return the minutes and scores of the scored attempts among ``placed``."""
    points = [(a.minutes, a.score) for a in placed if a.score is not None]
    return [m for m, _ in points], [s for _, s in points]


def _draw_runs(ax: Axes, runs: Sequence[tuple[list[Attempt], str | None]]) -> None:
    """Draw a panel's runs: a line through each run's scored submissions, each a marker in its colour.

    Each run's best is ringed and its unscored attempts are crosses along the foot. A model that went
    through two stages or more is a diamond in its last stage's colour; a run's name, when given,
    labels it beside its best submission. Marks that look alike (the lines, the crosses, the rings)
    are one artist per panel, in the runs' order: matplotlib spends about a millisecond on each artist
    it is handed, which a study of thousands of runs made minutes. Each layer is drawn over the one
    below whatever the order of the runs, so the figure is the same as drawn run by run.
    """
    lines = [list(zip(*_xy(placed), strict=True)) for placed, _ in runs]
    ax.add_collection(
        LineCollection(
            [line for line in lines if line],
            colors=GREY,
            linewidths=0.7,
            capstyle="projecting",  # as a plotted line's ends and corners (lines.solid_*style)
            joinstyle="round",
            zorder=1,
        )
    )
    for placed, _ in runs:
        for d in ROUTE_LABELS:
            for chained in (False, True):
                mine = [
                    a
                    for a in placed
                    if a.colour == d.name and a.score is not None and (len(a.chain) >= 2) == chained
                ]
                if mine:
                    ax.scatter(
                        *_xy(mine),
                        s=MARKER**2,
                        marker=CHAIN_MARKER if chained else "o",
                        color=ROUTE_COLOURS[d.name],
                        edgecolors="black",
                        linewidths=0.3,
                        clip_on=False,
                        zorder=3,
                        label=d.name,
                    )
    ax.scatter(
        *_xy(a for placed, _ in runs for a in placed if a.best),
        s=RING**2,
        facecolors="none",
        edgecolors="black",
        linewidths=0.8,
        clip_on=False,
        zorder=4,
    )
    unscored = [a.minutes for placed, _ in runs for a in placed if a.score is None]
    # a failed attempt has no score to place it by: a row at the panel's foot, in axes units
    ax.plot(unscored, [UNSCORED_HEIGHT] * len(unscored), transform=ax.get_xaxis_transform(), **UNSCORED)
    for placed, name in runs:
        best = next((a for a in placed if a.best and a.score is not None), None)
        if name and best is not None:
            ax.annotate(
                name,
                (best.minutes, best.score or 0.0),
                xytext=(0, RING / 2 + 1.5),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=6,
                annotation_clip=False,
                zorder=5,
            )


def draw_scores(data: FigureData, options: FigureOptions | None = None) -> Figure:
    """Draw score against wall-clock minutes, one panel per task, one line per run.

    Each scored submission is a marker in the colour of its artifact's route label; the run's best is
    ringed. Submissions that were not scored (errors, rejections, duplicates) are grey crosses along
    the foot of the panel, not points at zero, which would read as scores. Dotted lines are the base scores.
    Runs that could not be audited, or that never submitted, are left out. A model trained in a chain
    of stages (SFT → GRPO) is a diamond in its last stage's colour, its chain named in the legend;
    markers that would coincide are set apart in time.
    """
    options = options or FigureOptions()
    runs = _runs_by_task(_tasks(data.study, options), data.timelines, options.tasks)
    if not runs:
        raise ValueError("no audited runs with submissions to plot")
    fig, axes = _new_figure(len(runs), 2.35, 1.9, width=options.width)
    for ax, (task, task_runs) in zip(axes, runs.items(), strict=True):
        for base in sorted({b for b, _, _ in task_runs if b is not None}):
            ax.axhline(base, color=GREY, ls=":", lw=0.8, zorder=0)
        # matplotlib (3.11) rescales the view at every marker set added, going over every artist of the
        # panel each time: a cost that grows with the square of the runs. The data limits still grow
        # with each run; the view is scaled to them once, after the last.
        ax.set_autoscale_on(False)
        names = [clean(name) if options.run_labels else None for _, _, name in task_runs]
        _draw_runs(ax, list(zip(_dodged(task_runs), names, strict=True)))
        ax.set_autoscale_on(True)
        ax.autoscale_view()
        ax.set_xlim(left=0)
        ax.margins(y=0.2 if options.run_labels else 0.12)  # room for the best's ring (and name)
        ax.set_title(clean(task))  # run text: control characters shown, never drawn as glyphs
        ax.grid(axis="y")
    placed_all = [a for task_runs in runs.values() for _, placed, _ in task_runs for a in placed]
    handles = _route_handles((a.colour for a in placed_all if a.score is not None), options.labels)
    handles += _chain_handles(placed_all, options.labels)
    if any(a.best for a in placed_all):
        handles.append(
            Line2D([], [], ls="none", marker="o", ms=RING, mfc="none", mec="black", mew=0.8, label="best")
        )
    if any(a.score is None for a in placed_all):
        handles.append(Line2D([], [], label="not scored", **UNSCORED))
    if any(b is not None for task_runs in runs.values() for b, _, _ in task_runs):
        handles.append(Line2D([], [], color=GREY, ls=":", lw=0.8, label="base score"))
    fig.supxlabel("minutes since the run started")
    fig.supylabel("score")
    _legend(fig, handles)
    return fig


def _route_counts(study: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Return per task (sorted) ``tables.routes`` summed over levels and scaffolds: cells per route, stage."""
    audited = study.filter(pl.col("error").is_null()).with_columns(pl.col("task").fill_null("—"))
    counts = {}
    for task in sorted(audited["task"].unique()):
        per_task = tables.routes(audited.filter(pl.col("task") == task))
        if not per_task.is_empty():
            counts[task] = per_task.group_by("route").agg(pl.col(s).sum() for s in tables.STAGES)
    return counts


def draw_routes(data: FigureData, options: FigureOptions | None = None) -> Figure:
    """Draw route adoption per task: in how many cells each route label was written, attempted, adopted.

    The counts are ``arb_audit.taxonomy.tables.routes`` (one task at a time, levels and scaffolds added
    up). Each bar is in its route's colour, paler for the earlier stages; tasks where no route was
    written are left out.
    """
    options = options or FigureOptions()
    counts = _route_counts(_tasks(data.study, options))
    if options.tasks is not None:
        counts = {t: counts[t] for t in options.tasks if t in counts}
    if not counts:
        raise ValueError("no route was written, attempted or adopted in any audited run")
    present = set(pl.concat(counts.values())["route"])
    routes = [d.name for d in ROUTE_LABELS if d.name in present]
    fig, axes = _new_figure(len(counts), 2.35, 0.6 + 0.42 * len(routes), sharey=True, width=options.width)
    height, middle = 0.8 / len(tables.STAGES), (len(tables.STAGES) - 1) / 2
    for ax, (task, frame) in zip(axes, counts.items(), strict=True):
        rows = {r["route"]: r for r in frame.iter_rows(named=True)}
        for i, stage in enumerate(tables.STAGES):
            values = [rows[r][stage] if r in rows else 0 for r in routes]
            bars = ax.barh(
                [y + (i - middle) * height for y in range(len(routes))],
                values,
                height=height,
                color=[_tint(ROUTE_COLOURS[r], STAGE_SHADES[stage]) for r in routes],
                edgecolor=[ROUTE_COLOURS[r] for r in routes],
                linewidth=0.5,
            )
            ax.bar_label(bars, labels=[str(v) if v else "" for v in values], padding=1.5, fontsize=6)
        ax.set_title(clean(task))  # run text: control characters shown, never drawn as glyphs
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.margins(x=0.15)
    axes[0].set_yticks(range(len(routes)), [options.labels.name("route", r) for r in routes])
    axes[0].invert_yaxis()
    for ax in axes:
        ax.tick_params(axis="y", length=0)
    fig.supxlabel("cells")
    stage_handles: list[Artist] = [
        Patch(facecolor=_tint("#444444", STAGE_SHADES[s]), edgecolor="#444444", linewidth=0.5, label=s)
        for s in tables.STAGES
    ]
    _legend(fig, stage_handles)
    return fig


def draw_failures(data: FigureData, options: FigureOptions | None = None) -> Figure:
    """Draw failure modes per stack (scaffold × driver): runs stacked by their first failure.

    The counts are ``arb_audit.taxonomy.tables.failures`` by stack, runs that could not be audited
    included. The scale follows the counts: a tick per run and each segment's count printed in it for a
    few runs, fewer ticks and counts only in segments wide enough to hold them for many.
    """
    options = options or FigureOptions()
    frame = tables.failures(_tasks(data.study, options)).filter(pl.col("by") == "stack")
    if frame.is_empty():
        raise ValueError("no runs to plot")
    stacks = sorted(frame["group"].unique())
    runs = {(r["group"], r["failure"]): r["runs"] for r in frame.iter_rows(named=True)}
    present = set(frame["failure"])
    fig, (ax,) = _new_figure(1, 5.0, 0.9 + 0.3 * len(stacks), width=options.width)
    totals = [sum(runs.get((s, f), 0) for f in present) for s in stacks]
    top = max(totals, default=1)
    left = [0] * len(stacks)
    handles: list[Artist] = []
    for failure in (f for f in FAILURE_ORDER if f in present):
        widths = [runs.get((s, failure), 0) for s in stacks]
        bars = ax.barh(
            range(len(stacks)),
            widths,
            left=left,
            height=0.6,
            color=FAILURE_COLOURS[failure],
            edgecolor="white",
            linewidth=0.6,
        )
        # a count inside its segment where the segment can hold it (dark ink on the light colours)
        ink = "white" if sum(to_rgb(FAILURE_COLOURS[failure])) < 1.2 else "black"
        shown = [str(w) if w and w >= 0.06 * top else "" for w in widths]
        ax.bar_label(bars, labels=shown, label_type="center", fontsize=6, color=ink)
        left = [a + b for a, b in zip(left, widths, strict=True)]
        handles.append(
            Patch(facecolor=FAILURE_COLOURS[failure], label=options.labels.name("failure", failure))
        )
    ax.set_yticks(range(len(stacks)), [clean(s) for s in stacks])
    ax.invert_yaxis()
    ax.tick_params(axis="y", length=0)
    ax.xaxis.set_major_locator(MultipleLocator(1) if top <= 10 else MaxNLocator(nbins=6, integer=True))
    ax.set_xlim(0, top)
    ax.set_xlabel("runs")
    ax.grid(axis="x")
    if options.width == "column":
        _legend(fig, handles)  # a column has no room beside the bars: the legend goes above, in rows
    else:
        fig.legend(handles=handles, loc="outside right upper")
    return fig


def _quadrant_grids(study: pl.DataFrame) -> list[tuple[str, list[list[int]], int]]:
    """Return per task (sorted; all tasks first when there are several) the 2×2 counts and undetermined."""
    frame = tables.quadrants(study).with_columns(pl.col("task").fill_null("—"))
    if frame.is_empty():
        raise ValueError("no audited runs to plot")
    groups = [("all tasks", frame)] if frame["task"].n_unique() > 1 else []
    groups += [(task, frame.filter(pl.col("task") == task)) for task in sorted(frame["task"].unique())]
    grids = []
    for name, group in groups:
        cells = [int(group[c].sum()) for c in tables.QUADRANT_CELLS]
        grids.append((name, [cells[:2], cells[2:]], int(group["undetermined"].sum())))
    return grids


def draw_quadrants(data: FigureData, options: FigureOptions | None = None) -> Figure:
    """Draw the quadrant grid: runs by score up (beyond noise) × intended training adopted, per task.

    The counts are ``arb_audit.taxonomy.tables.quadrants`` added up over stacks; the shading is shared
    by every panel, and runs whose quadrant could not be decided are counted under their panel.
    """
    options = options or FigureOptions()
    grids = _quadrant_grids(_tasks(data.study, options))
    top = max(1, *(count for _, grid, _ in grids for row in grid for count in row))
    rows = [_label(c.split("+")[0]) for c in tables.QUADRANT_CELLS[::2]]
    cols = [_label(c.split("+")[1]) for c in tables.QUADRANT_CELLS[:2]]
    fig, axes = _new_figure(len(grids), 1.75, 1.75, columns=4, width=options.width)
    for ax, (name, grid, undetermined) in zip(axes, grids, strict=True):
        # the darkest blue is kept for a count above any there is: black text stays readable on most cells
        ax.pcolormesh(grid, cmap="Blues", vmin=0, vmax=1.25 * top, edgecolors="white", linewidth=1.5)
        for r, row in enumerate(grid):
            for c, count in enumerate(row):
                dark = count > 0.6 * top
                ax.text(
                    c + 0.5, r + 0.5, str(count), ha="center", va="center", color="white" if dark else "black"
                )
        ax.set_xticks([0.5, 1.5], cols)
        ax.set_yticks([0.5, 1.5], rows)
        ax.invert_yaxis()
        ax.set_aspect("equal")
        ax.tick_params(length=0)
        for spine in ax.spines.values():
            spine.set_visible(False)
        ax.set_title(clean(name))
        if undetermined:
            ax.set_xlabel(f"{undetermined} undetermined", color=GREY)
    return fig


FIGURES: dict[str, FigureSpec] = {
    f.name: f
    for f in (
        FigureSpec(
            "scores",
            "Score over wall-clock time per run, each submission coloured by its artifact's route label",
            draw_scores,
        ),
        FigureSpec(
            "routes",
            "Route labels per task: in how many cells each was written, attempted and adopted",
            draw_routes,
        ),
        FigureSpec("failures", "Failure modes by stack (scaffold × driver)", draw_failures),
        FigureSpec("quadrants", "Score up beyond noise × intended training adopted, by task", draw_quadrants),
    )
}
"""Every figure ``arb-audit plot`` makes."""


def figure(name: str, data: FigureData, options: FigureOptions | None = None) -> Figure:
    """Draw figure ``name`` of a study (``arb_audit.study.figure_data``), its caption as its label.

    A KeyError lists the figures there are.

    Save it with :func:`save`, which applies the style again: matplotlib reads part of it at draw time.
    """
    if name not in FIGURES:
        raise KeyError(f"no figure {name!r} (there are: {', '.join(FIGURES)})")
    with rc_context(STYLE):
        fig = FIGURES[name].draw(data, options or FigureOptions())
    fig.set_label(FIGURES[name].caption)
    return fig


def format_of(path: Path) -> str:
    """Return the format a file's suffix names; a ValueError when it is none of :data:`FORMATS`."""
    fmt = path.suffix.lower().removeprefix(".")
    if fmt not in FORMATS:
        raise ValueError(
            f"{path}: cannot tell the format from the suffix {path.suffix!r} (use .pdf, .png or .svg)"
        )
    return fmt


def save(fig: Figure, path: Path) -> None:
    """Write ``fig`` to ``path`` in the format its suffix names, the same bytes for the same figure.

    The figure's label (a caption, for a figure :func:`figure` drew) becomes the file's title.
    """
    fmt = format_of(path)
    title = {"Title": fig.get_label()} if fig.get_label() else {}
    with rc_context(STYLE):
        fig.savefig(path, format=fmt, dpi=DPI, metadata=METADATA[fmt] | title)
