"""The static site of a 5,000-run study: how long it takes to write, how big the index is, how quickly a
browser shows it.

Run on demand: ``python benchmarks/bench_site.py [RUNS]`` (default 5,000).

A synthetic study of RUNS rows is written as ``bench_study.py`` writes it: each row the audit of one
bundled reference recording (copied out and audited here, so the pages show real code at its revision,
read from that recording's revisions.git) under other cell keys. The baseline, measured first, is the
least any site writer does: read the study, parse each run's stored audit and write it back, one file
per run. Against it are timed: the run pages written in this process alone (``jobs=1``), the same in
worker processes (one per CPU), and the whole site as ``arb-audit site`` writes it (pages and figures,
worker processes). Goals: a run's page under 10× the baseline's cost per run, and the whole site
under a minute on 2 cores. Then headless Chromium loads the index (first page of rows), the index
sorted by best score, and its last page, each timed against loading an empty page (the browser's own
start). Goals: the index under 5 MB (the figures are files beside it), each view shown in under a
second beyond the browser's start. CPU seconds (this process's and its workers') are printed beside
the wall times: on a machine others share, the wall times follow their load and the CPU seconds do
not.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_study import reference_audits, synthetic_study

from arb_audit.schema import AuditReport
from arb_audit.study import load_study
from arb_audit.study_site import PAGE_ROWS, SiteSummary, page_name, write_site

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def browser_seconds(url: str, profile: Path, expect: str) -> float:
    """Seconds headless Chromium takes to load ``url`` and dump its DOM (which must hold ``expect``)."""
    start = time.perf_counter()
    done = subprocess.run(
        ["chromium", *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    seconds = time.perf_counter() - start
    assert expect in done.stdout, f"{url}: {expect!r} not in the page"
    return seconds


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and the worker processes it has waited for."""
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def baseline_seconds(study: Path, folder: Path) -> tuple[float, float]:
    """Seconds (wall, CPU) to read the study and parse and write back each run's audit, a file a run."""
    start, cpu = time.perf_counter(), cpu_seconds()
    folder.mkdir()
    for key, stored in load_study(study).select("run_key", "report").iter_rows():
        if stored:
            report = AuditReport.model_validate_json(stored)
            (folder / page_name(key, report.run.run_id)).write_text(stored, encoding="utf-8")
    return time.perf_counter() - start, cpu_seconds() - cpu


def timed_site(study: Path, out: Path, **options: Any) -> tuple[float, float, SiteSummary]:
    """Seconds (wall, CPU) ``write_site`` takes with ``options``, and what it wrote."""
    start, cpu = time.perf_counter(), cpu_seconds()
    summary = write_site(study, out, **options)
    return time.perf_counter() - start, cpu_seconds() - cpu, summary


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        audits = reference_audits(root)
        study = root / "study.duckdb"
        synthetic_study(study, runs, audits)
        base, base_cpu = baseline_seconds(study, root / "baseline")
        print(
            f"study of {runs:,} runs; baseline (read, parse and write back each run's audit):"
            f" {base:.1f} s, {base / runs * 1000:.1f} ms a run (CPU {base_cpu:.1f} s)"
        )
        cpus = os.cpu_count() or 1
        for label, options in (("one process", {"jobs": 1}), (f"{cpus} worker processes", {})):
            took, cpu, _ = timed_site(study, root / f"pages {label}", figures=False, **options)
            print(
                f"  run pages, {label}: {took:.1f} s, {took / runs * 1000:.1f} ms a run"
                f" ({took / base:.1f}× the baseline; goal < 10×) (CPU {cpu:.1f} s)"
            )
        wrote, cpu, summary = timed_site(study, root / "site")
        print(
            f"  whole site (pages and {len(summary.figures)} figures, {cpus} worker processes):"
            f" {wrote:.1f} s ({wrote / base:.1f}× the baseline; goal < 60 s on 2 cores) (CPU {cpu:.1f} s)"
        )
        index = root / "site" / "index.html"
        pages = sorted((root / "site" / "runs").iterdir())
        page_bytes = sum(p.stat().st_size for p in pages)
        print(
            f"index.html {index.stat().st_size / 1e6:.2f} MB;"
            f" {len(pages)} run pages, {page_bytes / 1e6:.1f} MB"
        )
        print(f"figures: {', '.join(summary.figures) or 'none'}")
        if shutil.which("chromium") is None:
            print("chromium is not installed: no browser timings")
            return
        empty = root / "empty.html"
        empty.write_text("<!doctype html><title>empty</title><p>empty", encoding="utf-8")
        baseline = min(browser_seconds(empty.as_uri(), root / f"p{i}", "empty") for i in range(3))
        last = (runs - 1) // PAGE_ROWS + 1
        for label, fragment, expect in (
            ("first page", "", f'data-rendered="{min(runs, PAGE_ROWS)}"'),
            ("sorted by best score", "#sort=-best", 'aria-sort="descending"'),
            (f"page {last}", f"#page={last}", f"page {last} of {last}"),
        ):
            took = min(
                browser_seconds(index.as_uri() + fragment, root / f"{label}{i}", expect) for i in range(3)
            )
            print(
                f"browser, index {label}: {took:.2f} s"
                f" ({took - baseline:.2f} s beyond an empty page's {baseline:.2f} s)"
            )


if __name__ == "__main__":
    main()
