"""The HTML page of a large run: 150 submissions, 300 revisions — its size, how long it takes to write,
how quickly a browser shows it.

Run on demand: ``python benchmarks/bench_html.py [SCALE]`` (default 1.0: the run of ``bench_audit.py``,
150 submissions and 300 revisions, with small model files since weights are not what the page is
about). The run is audited once (not timed here: ``bench_audit.py`` measures that); then the page is
rendered from the audit (timed, median of 5), with excerpts only and then as ``--html`` writes it,
with the cited code read from the run's revisions.git and diffed against its previous version; that
page is written, and headless Chromium loads it, timed
against loading an empty page (the browser's own start). Goals (issue 23): the page under a few MB,
shown in under a second beyond the browser's start.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_audit
from bench_site import browser_seconds

import arb_audit
from arb_audit.html_report import code_reader, render_html

SMALL_MODEL = 8 * 1024**2
"""Bytes of each model file: the page shows weight changes, not weights."""


def main() -> None:
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    bench_audit.MODEL_BYTES = SMALL_MODEL
    with tempfile.TemporaryDirectory(prefix="arb-audit-bench-html-") as tmp:
        root = Path(tmp)
        recording, _ = bench_audit.build_run(root / "run", scale)
        started = time.perf_counter()
        report = arb_audit.audit(recording)
        print(f"audit (untimed goal; see bench_audit.py): {time.perf_counter() - started:.1f} s")
        print(
            f"run: {len(report.submissions)} submissions, {len(report.revisions)} revisions,"
            f" {len(report.commands)} commands"
        )
        times = []
        for _ in range(5):
            started = time.perf_counter()
            render_html(report)
            times.append(time.perf_counter() - started)
        print(f"render, excerpts only: median {statistics.median(times) * 1000:.0f} ms over 5")
        times = []
        for _ in range(5):  # a new reader each time: nothing read from revisions.git is kept between pages
            started = time.perf_counter()
            page = render_html(report, code_reader(report))
            times.append(time.perf_counter() - started)
        target = root / "page.html"
        target.write_text(page, encoding="utf-8")
        print(
            f"render, code read at its revisions with diffs (as --html and site write it):"
            f" median {statistics.median(times) * 1000:.0f} ms over 5"
        )
        print(f"page: {target.stat().st_size / 1024**2:.2f} MB (goal: a few MB)")
        if shutil.which("chromium") is None:
            print("chromium is not installed: no browser timing")
            return
        empty = root / "empty.html"
        empty.write_text("<!DOCTYPE html><title>empty</title>", encoding="utf-8")
        base = statistics.median(browser_seconds(empty.as_uri(), root / f"p{i}", "empty") for i in range(3))
        shown = statistics.median(
            browser_seconds(target.as_uri(), root / f"q{i}", "How the best submission was made")
            for i in range(3)
        )
        print(
            f"browser: page {shown:.2f} s, empty page {base:.2f} s,"
            f" beyond the browser's start {shown - base:.2f} s (goal < 1 s)"
        )


if __name__ == "__main__":
    main()
