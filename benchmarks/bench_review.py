"""The reviewer's desk (``arb-audit review``) on a 5,000-run study, driven key by key with the Pilot.

Run on demand, as a file (it imports its sibling ``bench_study``):
``python benchmarks/bench_review.py [RUNS]`` (default 5,000; two to three minutes).

The study is the synthetic one of ``bench_study.py`` (the bundled reference recordings' audits under
other cell keys; the recordings are copied out to a temporary folder, so fixtures/ stays clean and
their code is there to show). Goals (the issue): the study opens in under a second, and every
keystroke answers in under 100 ms. Nothing is asserted about time: figures and verdicts are printed.

1. Opening: ``ReviewSession.open``, then the app's start until the runs list holds every row
   (``run_test`` entered and the first ``pilot.pause()``), against the baselines of reading the list's
   columns with plain DuckDB and of starting an empty Textual app the same way.
2. Keystrokes, each timed as ``pilot.press(key)`` + ``pilot.pause()``: the runs list (cursor, sorts,
   the filter typed, applied and cleared), then cycles that open a run, its code evidence, a diff,
   the next pointer, the verdicts, agree, and go back. ``press`` and ``pause`` each wait until the
   process is idle, sleeping at least 20 ms a time, so the Pilot alone costs some 60-100 ms a key on
   any app: the baseline is a key an empty app ignores, pressed the same way in the same run, and a
   key's figure (median, max) is its Pilot time less that baseline's median (the work the key set
   off, to within the Pilot's 20 ms steps). "frame" is the time from the press to the last frame the
   screen composed (what the reviewer sees); "cpu" the process's CPU time less the baseline's (DuckDB's
   threads count too); "gc" the time in the garbage collector. Pushing and popping a plain screen
   on the empty app is the baseline of a screen switch. Each key is sampled up to 20 times, fewer
   where it is slow (a time budget per key and per cycle).
3. Parts of the slow keys, timed by calling them directly on the same app: the polars sorts and
   filter, ``RunsTable.load`` and ``show`` and the frame drawn after it, a run's audit read, a verdict
   appended, a full garbage collection.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import duckdb
import polars as pl
from bench_study import reference_audits, synthetic_study
from rich.console import RenderableType
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static

import arb_audit.tui.app
from arb_audit.schema import AuditReport
from arb_audit.taxonomy.review import FIELDS
from arb_audit.tui.app import ReviewApp
from arb_audit.tui.evidence import evidence_items
from arb_audit.tui.query import SORTS, apply_filter
from arb_audit.tui.screens import EvidenceScreen, RunScreen, RunsScreen, VerdictScreen
from arb_audit.tui.session import LIST_COLUMNS, ReviewSession
from arb_audit.tui.widgets import EvidenceTable, FieldTable, RunsTable

SIZE = (140, 40)
REPEATS = 20
"""Samples of each key at most; fewer when the key is slow (see the budgets)."""
KEY_BUDGET_S = 8.0
"""Seconds spent on one key's samples at most (at least MIN_REPEATS of them)."""
CYCLE_BUDGET_S = 40.0
"""Seconds spent on the filter's cycles, and on the runs' cycles, at most (at least MIN_REPEATS)."""
MIN_REPEATS = 3
KEY_GOAL_MS = 100.0
OPEN_GOAL_MS = 1000.0
FILTER = "task:task03"
IGNORED = "baseline: an ignored key (empty app)"


class Clock:
    """When the compositor last produced a frame (headless: composed, not written out), and the time in
    the garbage collector."""

    last_frame = 0.0
    gc_total = 0.0
    _gc_start = 0.0

    def on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_start = time.perf_counter()
        else:
            self.gc_total += time.perf_counter() - self._gc_start


CLOCK = Clock()


class TimedReviewApp(ReviewApp):
    """The reviewer's desk, noting each frame."""

    # Textual looks for a subclass's CSS_PATH beside the subclass's own file.
    CSS_PATH = str(Path(arb_audit.tui.app.__file__).with_name("app.tcss"))

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None:
            CLOCK.last_frame = time.perf_counter()
        super()._display(screen, renderable)


class PlainScreen(Screen[None]):
    """The baseline of a screen switch: a header, a line, a table of ten rows and a footer."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static("a screen")
        yield DataTable[str](id="plain")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("one", "two", "three")
        table.add_rows([(f"row {i}", "b", "c") for i in range(10)])


class EmptyApp(App[None]):
    """The baseline: a Textual app with one line of text; p pushes a plain screen."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("p", "push_screen('plain')", "Push")]
    SCREENS: ClassVar[dict[str, Callable[[], Screen[Any]]]] = {"plain": PlainScreen}

    def compose(self) -> ComposeResult:
        yield Static("nothing to review")

    def _display(self, screen: Screen[Any], renderable: RenderableType | None) -> None:
        if renderable is not None:
            CLOCK.last_frame = time.perf_counter()
        super()._display(screen, renderable)


@dataclass
class Sample:
    pilot: float
    """Seconds of press + pause."""
    frame: float | None
    """Seconds from the press to the last frame composed (None: no frame)."""
    cpu: float
    """Process CPU seconds during press + pause (all threads: DuckDB's too)."""
    gc: float
    """Seconds of it in the garbage collector."""


@dataclass
class Timings:
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    """Each action's samples, in the order first timed."""

    async def press(self, pilot: Pilot[Any], action: str, key: str) -> Sample:
        CLOCK.last_frame, CLOCK.gc_total = 0.0, 0.0
        start, cpu = time.perf_counter(), time.process_time()
        await pilot.press(key)
        await pilot.pause()
        end = time.perf_counter()
        frame = CLOCK.last_frame - start if CLOCK.last_frame > start else None
        sample = Sample(end - start, frame, time.process_time() - cpu, CLOCK.gc_total)
        self.samples.setdefault(action, []).append(sample)
        return sample

    async def repeat(self, pilot: Pilot[Any], action: str, key: str) -> None:
        """Press ``key`` up to REPEATS times, within KEY_BUDGET_S."""
        start = time.perf_counter()
        for i in range(REPEATS):
            if i >= MIN_REPEATS and time.perf_counter() - start > KEY_BUDGET_S:
                break
            await self.press(pilot, action, key)


def cycles(count: int) -> Iterator[int]:
    """Up to ``count`` cycles of keys, within CYCLE_BUDGET_S."""
    start = time.perf_counter()
    for i in range(count):
        if i >= MIN_REPEATS and time.perf_counter() - start > CYCLE_BUDGET_S:
            return
        yield i


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.1f}"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def best_of(repeats: int, action: Callable[[], object]) -> float:
    took = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        took.append(time.perf_counter() - start)
    return min(took)


def read_list_columns(study: Path) -> pl.DataFrame:
    """The baseline of opening: the list's columns read with plain DuckDB into polars."""
    con = duckdb.connect(str(study), read_only=True)
    try:
        table = con.sql(f"SELECT {', '.join(LIST_COLUMNS)} FROM study_runs ORDER BY run_key").to_arrow_table()
    finally:
        con.close()
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    return frame


async def start_app(app: App[None], check: Callable[[App[None]], None]) -> tuple[float, float, float]:
    """Start ``app`` under the Pilot: seconds to enter run_test, to the first pause's end, and to the
    last frame."""
    CLOCK.last_frame = 0.0
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        entered = time.perf_counter()
        await pilot.pause()
        paused = time.perf_counter()
        check(app)
    return entered - start, paused - start, CLOCK.last_frame - start


def current(app: App[None]) -> Screen[Any]:
    """The screen shown (a call, so that mypy does not narrow ``app.screen`` across keys)."""
    return app.screen


def runs_screen(app: App[None]) -> RunsScreen:
    assert isinstance(app, ReviewApp)
    return app.runs_screen


async def opening(study: Path, runs: int) -> None:
    def full(app: App[None]) -> None:
        assert runs_screen(app).query_one(RunsTable).row_count == runs, "the list does not hold every run"

    def nothing(app: App[None]) -> None:
        pass

    read = best_of(3, lambda: read_list_columns(study))
    empty = [await start_app(EmptyApp(), nothing) for _ in range(3)]
    opens, mounts = [], []
    for _ in range(3):
        start = time.perf_counter()
        session = ReviewSession.open(study, "bench")
        opens.append(time.perf_counter() - start)
        mounts.append(await start_app(TimedReviewApp(session), full))
    empty_start = median([e[1] for e in empty])
    print(f"baselines: the list's columns read with plain DuckDB  {ms(read)} ms")
    print(
        f"           an empty Textual app's start (run_test + pause) {ms(empty_start)} ms"
        f" (run_test entered at {ms(median([e[0] for e in empty]))} ms)"
    )
    print("opening (median of 3 / max):")
    print(
        f"  ReviewSession.open               {ms(median(opens))} / {ms(max(opens))} ms"
        f"  ({median(opens) / read:.1f}× the plain read)"
    )
    mount = [m[1] for m in mounts]
    print(
        f"  app start, {runs:,} rows listed  {ms(median(mount))} / {ms(max(mount))} ms"
        f"  ({median(mount) / empty_start:.1f}× the empty app; run_test entered at"
        f" {ms(median([m[0] for m in mounts]))} ms, last frame at {ms(median([m[2] for m in mounts]))} ms)"
    )
    totals = [o + m for o, m in zip(opens, mount, strict=True)]
    verdict = "ok" if max(totals) < OPEN_GOAL_MS / 1000 else "over"
    print(
        f"  open + start                     {ms(median(totals))} / {ms(max(totals))} ms"
        f"  goal < {OPEN_GOAL_MS:.0f} ms: {verdict}"
    )


def cited_code(audit: AuditReport) -> int | None:
    """The index of the last code pointer among the audit's evidence (None: it cites no code)."""
    found = [i for i, item in enumerate(evidence_items(audit)) if item.kind == "code"]
    return found[-1] if found else None


def versions_of(audit: AuditReport, index: int) -> int:
    """How many blobs the cited file has in the run's history (read apart from the session's caches)."""
    path = evidence_items(audit)[index].pointer.path
    con = duckdb.connect(str(audit.run.store_path), read_only=True)
    try:
        found = con.execute(
            "SELECT count(DISTINCT blob_sha) FROM files WHERE run_id = ? AND path = ?",
            [audit.run.run_id, path],
        ).fetchall()
    finally:
        con.close()
    return int(found[0][0])


def code_runs(runs: int, audits: list[AuditReport]) -> list[tuple[str, int]]:
    """Runs (key, evidence index) whose audit cites code; those with a file of two versions (so d shows
    a diff) alternate with the others."""
    cited = {a: i for a, audit in enumerate(audits) if (i := cited_code(audit)) is not None}
    diffable = {a for a, i in cited.items() if versions_of(audits[a], i) > 1}
    picks: tuple[list[tuple[str, int]], list[tuple[str, int]]] = ([], [])
    for n in range(runs):
        a = n % len(audits)
        if a in cited:
            picks[a in diffable].append((f"/study/run{n:05d}", cited[a]))
    mixed = [p for pair in zip(picks[True], picks[False], strict=False) for p in pair]
    return mixed or picks[False]


async def keystrokes(
    study: Path, audits: list[AuditReport], timings: Timings, parts: dict[str, list[float]]
) -> None:
    """Drive the reviewer's desk key by key."""
    session = ReviewSession.open(study, "bench")
    app = TimedReviewApp(session)
    total = session.runs.height
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = runs_screen(app)
        table = screen.query_one(RunsTable)

        async def press(action: str, key: str) -> Sample:
            return await timings.press(pilot, action, key)

        await timings.repeat(pilot, "down (runs list)", "down")
        await timings.repeat(pilot, f"s (re-sort: {total:,} rows again)", "s")
        await timings.repeat(pilot, "n (needs-review order)", "n")
        for _ in cycles(REPEATS):
            await press("/ (show the filter box)", "slash")
            for char in FILTER:
                await press("a character typed in the filter", char)
            await press(f"enter (filter {FILTER})", "enter")
            assert table.row_count < total, "the filter did not filter"
            await press(f"escape (clear the filter: {total:,} rows)", "escape")
            assert table.row_count == total

        targets = code_runs(total, audits)
        for n in cycles(min(REPEATS, len(targets))):
            key, index = targets[n]
            table.move_cursor(row=screen.shown.index(key))
            await pilot.pause()
            await press("enter (open a run)", "enter")
            opened = current(app)
            assert isinstance(opened, RunScreen) and opened.run_key == key
            opened.query_one(EvidenceTable).move_cursor(row=index - 1)
            await pilot.pause()
            await press("down (a run's evidence)", "down")
            await press("enter (open code evidence)", "enter")
            evidence = current(app)
            assert isinstance(evidence, EvidenceScreen)
            diff = len(evidence.versions) > 1
            await press("d (diff of the cited file)" if diff else "d (one version: a notice)", "d")
            assert (evidence.diff_pair is not None) == diff
            await press("n (next evidence)", "n")
            await press("escape (evidence → run)", "escape")
            await press("v (verdicts)", "v")
            verdicts = current(app)
            assert isinstance(verdicts, VerdictScreen)
            # a flag field always has the analyzer's value (a run without a best route has no route)
            verdicts.query_one(FieldTable).move_cursor(row=FIELDS.index("flag:external_api"))
            await pilot.pause()
            before = session.ledger.height
            await press("a (agree: ledger append)", "a")
            assert session.ledger.height == before + 1, "the verdict was not recorded"
            await press("escape (verdicts → run)", "escape")
            await press("escape (run → list)", "escape")
            assert current(app) is screen

        await time_parts(pilot, session, screen, table, parts)


async def time_parts(
    pilot: Pilot[Any],
    session: ReviewSession,
    screen: RunsScreen,
    table: RunsTable,
    parts: dict[str, list[float]],
) -> None:
    """Time the slow keys' parts by calling them directly (after the keys, on the same app)."""
    reviewed = session.reviewed_keys()

    def add(name: str, seconds: float) -> None:
        parts.setdefault(name, []).append(seconds)

    for order in SORTS.values():
        add("polars sort (each order)", best_of(3, partial(order, session.runs, reviewed)))
    add("polars filter", best_of(3, partial(apply_filter, session.runs, FILTER, reviewed)))
    add(
        "RunsTable.load: every run's cells and the widths (once)",
        best_of(3, partial(table.load, session.runs)),
    )
    ordered = SORTS["run"](session.runs, reviewed)["run_key"].to_list()
    for _ in range(3):
        start = time.perf_counter()
        table.show(ordered, reviewed)
        shown = time.perf_counter() - start
        CLOCK.last_frame = 0.0
        await pilot.pause()
        add(f"RunsTable.show: {len(ordered):,} runs reordered", shown)
        add("then, at idle, the next frame", CLOCK.last_frame - start - shown)
    for _ in range(3):
        add("RunsScreen.refresh_list (called directly)", best_of(1, screen.refresh_list))
        await pilot.pause()
    unread = [k for k in reversed(screen.shown) if k not in reviewed][:3]
    for key in unread:
        add("session.report (one run's audit from the store)", best_of(1, partial(session.report, key)))
    for key in unread:
        add(
            "session.record (attach, append, read the ledger again)",
            best_of(1, partial(session.record, key, "quadrant", "score_up+intended")),
        )
    start = time.perf_counter()
    gc.collect()
    add("gc.collect() (a full collection, as the app stands)", time.perf_counter() - start)


async def baselines(timings: Timings) -> None:
    """The baseline keys, pressed with the same Pilot on an empty app: one it ignores, and a screen
    pushed and popped."""
    async with EmptyApp().run_test(size=SIZE) as pilot:
        await pilot.pause()
        await timings.repeat(pilot, IGNORED, "z")
        for _ in range(REPEATS // 2):
            await timings.press(pilot, "baseline: push a plain screen (empty app)", "p")
            await timings.press(pilot, "baseline: pop it (escape)", "escape")


def report(timings: Timings) -> None:
    ignored = timings.samples[IGNORED]
    floor, floor_cpu = median([s.pilot for s in ignored]), median([s.cpu for s in ignored])
    print(
        f"keystrokes: ms of press + pause less the Pilot's own {floor * 1000:.0f} ms (the median of a key"
        " an empty app ignores);"
    )
    print(
        "  frame: press → last frame composed; cpu: process CPU less the ignored key's; gc: in the collector"
    )
    print(
        f"  {'action':<42} {'n':>3} {'median':>7} {'max':>7} {'frame':>7} {'cpu':>7} {'gc':>7}"
        f"  {'goal':>6}  verdict"
    )
    for action, samples in timings.samples.items():
        net = [max(s.pilot - floor, 0.0) for s in samples]
        frames = [s.frame for s in samples if s.frame is not None]
        cpu = median([s.cpu for s in samples]) - floor_cpu
        verdict = "ok" if median(net) * 1000 < KEY_GOAL_MS else "over"
        if verdict == "ok" and max(net) * 1000 >= KEY_GOAL_MS:
            verdict = "ok (max over)"
        print(
            f"  {action:<42} {len(samples):>3} {ms(median(net))} {ms(max(net))}"
            f" {ms(median(frames)) if frames else '      —'} {ms(cpu)} {ms(median([s.gc for s in samples]))}"
            f"  < {KEY_GOAL_MS:.0f}  {verdict}"
        )


def report_parts(parts: dict[str, list[float]], runs: int) -> None:
    print(f"parts, called directly on the same app ({runs:,} runs; median / max ms):")
    for name, values in parts.items():
        print(f"  {name:<52} {ms(median(values))} / {ms(max(values))}")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        study = scratch / "study.duckdb"
        audits = reference_audits(scratch / "reference")
        synthetic_study(study, runs, audits)
        print(f"study of {runs:,} runs ({len(audits)} reference audits); terminal {SIZE[0]}×{SIZE[1]}")
        asyncio.run(opening(study, runs))
        timings = Timings()
        parts: dict[str, list[float]] = {}
        gc.callbacks.append(CLOCK.on_gc)
        try:
            asyncio.run(baselines(timings))
            asyncio.run(keystrokes(study, audits, timings, parts))
        finally:
            gc.callbacks.remove(CLOCK.on_gc)
        report(timings)
        report_parts(parts, runs)
    print(f"benchmark took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
