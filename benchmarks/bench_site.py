"""The static site of a 5,000-run study: how long it takes to write, how big the index is, how quickly a
browser shows it.

Run on demand: ``python benchmarks/bench_site.py [RUNS]`` (default 5,000).

A synthetic study of RUNS rows is written as ``bench_study.py`` writes it: each row the audit of one
bundled reference recording (copied out and audited here, so the pages show real code at its revision)
under other cell keys. Then ``write_site`` writes the site (per-run pages included), and headless
Chromium loads the index (first page of rows), the index sorted by best score, and its last page,
each timed against loading an empty page (the browser's own start). Goals: the index under 5 MB
(the figures are files beside it), each view shown in under a second beyond the browser's start.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_study import reference_audits, synthetic_study

from arb_audit.study_site import PAGE_ROWS, write_site

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


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        audits = reference_audits(root)
        study = root / "study.duckdb"
        synthetic_study(study, runs, audits)
        start = time.perf_counter()
        summary = write_site(study, root / "site")
        wrote = time.perf_counter() - start
        index = root / "site" / "index.html"
        pages = sorted((root / "site" / "runs").iterdir())
        page_bytes = sum(p.stat().st_size for p in pages)
        print(f"site of {summary.runs} runs: written in {wrote:.1f} s ({wrote / runs * 1000:.1f} ms a run)")
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
