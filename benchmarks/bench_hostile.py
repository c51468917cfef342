"""Run the whole hostile corpus, huge cases too, each under a wall-clock and a memory limit; print a table.

Run on demand: ``python benchmarks/bench_hostile.py [--only NAME ...] [--skip-huge] [--timeout S]
[--memory-mb MB] [--keep DIR]``. Each case of ``tests/hostile_corpus.py`` is written into a fresh
sandbox and run as a user runs it (``arb-audit RUN --json`` then ``arb-audit RUN``, or ``arb-audit
classify``), in a subprocess of its own session; ``tests/hostile_run.py`` judges it (issue 21, item 11):

- seconds: wall time of the first command (``--json``; the readable report reuses its kept audit);
- peak MB: the highest anonymous memory (``Pss_Anon`` summed over every process of the command's
  session: the heap, not page cache or mapped files, a page the forked workers share with the audit
  counted once), sampled every 0.1 s from ``/proc/PID/smaps_rollup``, over both commands; a command
  past ``--memory-mb`` is killed and counted over the limit;
- traceback: ``Traceback`` in a command's stderr;
- hang: a command still running at ``--timeout`` (killed), or processes of its session left running;
- leak: a secret the case planted found in stdout, stderr or a store the command wrote;
- escape: a file outside the run folder (other than the per-user cache) written or changed, a file of
  the run folder (other than its ``.arb-audit/``) changed, or a raw control character in the output;
- other: an expected file no problem names, an unexpected exit status, a failed extra check.

Goal: 0 tracebacks, 0 hangs, 0 leaks, 0 escapes, every peak <= 1 GB. A case marked xfail in the corpus
(a defect whose fix belongs elsewhere) is run and counted like the others; its reason is listed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a file: the project's packages come from the checkout

from tests.hostile_corpus import CASES  # noqa: E402
from tests.hostile_run import Outcome, run_case  # noqa: E402

PEAK_GOAL_MB = 1024.0


def _mark(items: list[str]) -> str:
    return "yes" if items else "-"


def main() -> None:
    """Run the selected cases and print one row each, then the totals."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="run only these cases (by name)")
    parser.add_argument("--skip-huge", action="store_true", help="leave out the huge cases")
    parser.add_argument("--timeout", type=float, default=600.0, help="wall-clock limit per command (s)")
    parser.add_argument("--memory-mb", type=float, default=3072.0, help="kill a command past this (Pss_Anon)")
    parser.add_argument("--keep", type=Path, default=None, help="leave each case's sandbox under this folder")
    args = parser.parse_args()
    names = args.only or [n for n, c in CASES.items() if not (args.skip_huge and c.huge)]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"no such case: {', '.join(unknown)}")
    width = max(len(n) for n in names)
    print(f"{'case':<{width}}  {'seconds':>8}  {'peak MB':>8}  traceback  hang  leak  escape  other")
    outcomes: list[Outcome] = []
    for name in names:
        case = CASES[name]
        root = Path(tempfile.mkdtemp(prefix=f"hostile-{name[:40]}-", dir=args.keep))
        try:
            outcome = run_case(case, root, timeout_s=args.timeout, memory_mb=args.memory_mb)
        finally:
            if args.keep is None:
                _remove(root)
        outcomes.append(outcome)
        other = outcome.unnamed + outcome.wrong
        marks = [_mark(outcome.traceback), _mark(outcome.hang), _mark(outcome.leak), _mark(outcome.escape)]
        print(
            f"{name:<{width}}  {outcome.seconds:8.1f}  {outcome.peak_mb:8.0f}  {marks[0]:>9}  {marks[1]:>4}"
            f"  {marks[2]:>4}  {marks[3]:>6}  {_mark(other):>5}",
            flush=True,
        )
        for failure in outcome.failures():
            print(f"    {failure[:300]}", flush=True)
    _totals(outcomes)


def _remove(root: Path) -> None:
    for folder, dirs, _ in os.walk(root):
        for name in dirs:
            with contextlib.suppress(OSError):  # a link to a folder outside
                os.chmod(os.path.join(folder, name), 0o700)
    shutil.rmtree(root, ignore_errors=True)


def _totals(outcomes: list[Outcome]) -> None:
    over = [o for o in outcomes if o.peak_mb > PEAK_GOAL_MB]
    print()
    print(
        f"{len(outcomes)} cases, {sum(o.seconds for o in outcomes):,.0f} s in all:"
        f" {sum(bool(o.traceback) for o in outcomes)} traceback(s),"
        f" {sum(bool(o.hang) for o in outcomes)} hang(s),"
        f" {sum(bool(o.leak) for o in outcomes)} leak(s),"
        f" {sum(bool(o.escape) for o in outcomes)} escape(s),"
        f" {sum(bool(o.unnamed or o.wrong) for o in outcomes)} other failure(s);"
        f" peak {max((o.peak_mb for o in outcomes), default=0):,.0f} MB"
        f" ({len(over)} case(s) over {PEAK_GOAL_MB:,.0f} MB)"
    )
    known = [(o.case, CASES[o.case].xfail) for o in outcomes if CASES[o.case].xfail]
    for name, reason in known:
        print(f"  known (xfail): {name}: {reason}")


if __name__ == "__main__":
    main()
