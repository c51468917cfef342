"""Stream a huge, hostile run.log: throughput and peak memory against a plain line loop.

Run on demand: ``python benchmarks/bench_runlog.py [SIZE_MB]`` (default 1024). It writes a log of
SIZE_MB of noise (binary junk, foreign lines, a 50 MB line) with real records spread through it, then
times (a) a baseline that only iterates the file's lines in binary and (b) ``read_run_log``, each in a
fresh process, and prints their ratio and each one's peak RSS.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORD = "2026-03-10 10:{m:02d}:00 | INFO | [SUBMIT #{n}] Started | model_path=output/v{n} | gpu=None\n"
NOISE = (
    b"\x00\xff\xfe junk " * 20
    + b"\n"
    + b"[trainer] step 10 loss=1.234 reward=0.5\n" * 25
    + b"2026-03-10 10:15:00 | DEBUG | [17/200] Predicted: Paris | Gold: Paris | Judge 1/3 | Correct=True\n"
    * 25
)


def write_log(path: Path, size_mb: int) -> None:
    """Write SIZE_MB of noise with a record every ~10 MB and one 50 MB line."""
    target = size_mb * 1024 * 1024
    with path.open("wb") as handle:
        # Written in 1 MiB pieces: a child's peak RSS starts from this process's at fork time.
        for _ in range(min(50, target // (4 * 1024 * 1024))):
            handle.write(b"x" * 1024 * 1024)
        handle.write(b"\n")
        n = 0
        while handle.tell() < target:
            for _ in range(4000):
                handle.write(NOISE)
            n += 1
            handle.write(RECORD.format(m=n % 60, n=n).encode())


PEAK = "import resource\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
CHILD_BASELINE = "import sys\nfor _ in open(sys.argv[1], 'rb'): pass\n" + PEAK
CHILD_PARSE = (
    "import sys\nfrom pathlib import Path\nfrom arb_audit.collectors.reading import RunFolder\n"
    "from arb_audit.collectors.autorl_bench.runlog import read_run_log\n"
    "log = read_run_log(RunFolder(Path(sys.argv[1]).parent))\nprint(len(log.events), log.n_lines)\n" + PEAK
)


def measure(code: str, path: Path) -> tuple[float, float, str]:
    """Run ``code`` on ``path`` in a child; return seconds, the child's own peak RSS in MB, its output."""
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    *lines, peak_kb = out.stdout.strip().splitlines()
    return elapsed, int(peak_kb) / 1024, " ".join(lines)


def main() -> None:
    """Write the log, measure both readers, print the figures."""
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run.log"
        write_log(path, size_mb)
        size = path.stat().st_size / 1e6
        base_s, base_mb, _ = measure(CHILD_BASELINE, path)
        parse_s, parse_mb, result = measure(CHILD_PARSE, path)
    print(f"log: {size:,.0f} MB; events, lines: {result}")
    print(f"baseline line loop: {base_s:.2f} s ({size / base_s:,.0f} MB/s), peak RSS {base_mb:,.0f} MB")
    print(f"read_run_log:       {parse_s:.2f} s ({size / parse_s:,.0f} MB/s), peak RSS {parse_mb:,.0f} MB")
    print(f"ratio read_run_log / baseline: {parse_s / base_s:.2f}x time")


if __name__ == "__main__":
    main()
