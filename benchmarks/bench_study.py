"""Study tables on 5,000 runs, and re-ingesting unchanged runs, against baselines from the same run.

Run on demand: ``python benchmarks/bench_study.py [RUNS] [INGEST_RUNS]`` (default 5,000 and 60).

1. A synthetic study of RUNS rows is written: each row is the audit of one bundled reference recording
   (``fixtures/reference``: their real shapes, chains, failures and flags) under other cell keys
   (16 tasks × 8 scaffolds × 5 drivers × seeds). Each table is computed from the study store
   (read included) and timed against the baseline of reading the store alone. Goal: every table under
   2 seconds.
2. INGEST_RUNS copies of a small AutoRL-Bench run are ingested once, then again unchanged; the second
   ingest's time per run (after the fixed start-up, measured by ingesting an empty study) is compared
   with walking each run's files for its fingerprint. Goal: under 20 ms per unchanged run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arb_audit.audit_cache import fingerprint
from arb_audit.pipeline import audit
from arb_audit.schema import AuditReport
from arb_audit.store import RunStore
from arb_audit.study import CellValue, load_study, row_from_audit, save_rows
from arb_audit.taxonomy.tables import TABLES, table

ROOT = Path(__file__).resolve().parent.parent
TASKS = [f"task{i:02d}" for i in range(16)]
SCAFFOLDS = [f"scaffold{i}" for i in range(8)]
DRIVERS = [f"driver{i}" for i in range(5)]


def reference_audits(scratch: Path) -> list[AuditReport]:
    """Audit every bundled reference recording (copied out, so fixtures/ stays clean)."""
    audits = []
    for scenario in sorted(
        p for p in (ROOT / "fixtures" / "reference").iterdir() if p.is_dir() and p.name != "base"
    ):
        shutil.copytree(scenario, scratch / scenario.name, symlinks=True)
        audits.append(audit(scratch / scenario.name / "recording"))
    return audits


def synthetic_study(path: Path, runs: int, audits: list[AuditReport]) -> None:
    rows = []
    for i in range(runs):
        keys: dict[str, CellValue] = {
            "task": TASKS[i % len(TASKS)],
            "level": 1 + i % 3,
            "scaffold": SCAFFOLDS[(i // 16) % len(SCAFFOLDS)],
            "driver": DRIVERS[(i // 128) % len(DRIVERS)],
            "seed": i // 640,
        }
        rows.append(row_from_audit(f"/study/run{i:05d}", "fp", audits[i % len(audits)], None, keys))
    with RunStore.open(path) as store:
        for start in range(0, len(rows), 1000):
            save_rows(store, rows[start : start + 1000])


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def ingest(paths: list[Path], study: Path) -> float:
    command = [
        sys.executable,
        "-m",
        "arb_audit",
        "ingest",
        *map(str, paths),
        "--study",
        str(study),
        "--jobs",
        "2",
    ]
    start = time.perf_counter()
    subprocess.run(command, check=False, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    ingest_runs = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        study = scratch / "study.duckdb"
        synthetic_study(study, runs, reference_audits(scratch / "reference"))
        read = min(timed(lambda: load_study(study)) for _ in range(3))
        print(f"study of {runs:,} runs: reading the store alone {read * 1000:.0f} ms (baseline)")
        for name in TABLES:
            took = min(timed(lambda name=name: table(name, load_study(study))) for _ in range(3))
            print(f"  table {name:<10} {took * 1000:7.0f} ms  ({took / read:.1f}× the read; goal < 2000 ms)")

        source = next((ROOT / "fixtures" / "autorl_bench" / "improves").iterdir())
        folders = []
        for i in range(ingest_runs):
            folder = scratch / "runs" / f"run{i:04d}" / source.name
            shutil.copytree(source, folder, symlinks=True)
            folders.append(folder)
        ingest([scratch / "runs"], scratch / "ingest.duckdb")
        empty = scratch / "empty"
        empty.mkdir()
        startup = min(ingest([empty], scratch / "none.duckdb") for _ in range(2))
        again = min(ingest([scratch / "runs"], scratch / "ingest.duckdb") for _ in range(2))
        walk = min(timed(lambda: [fingerprint(f) for f in folders]) for _ in range(3)) / ingest_runs
        per_run = max(again - startup, 0.0) / ingest_runs
        print(
            f"re-ingesting {ingest_runs} unchanged runs: {again:.2f} s, start-up {startup:.2f} s;"
            f" {per_run * 1000:.1f} ms per run against {walk * 1000:.2f} ms for its fingerprint walk"
            f" ({per_run / walk:.1f}×; goal < 20 ms per run)"
        )


if __name__ == "__main__":
    main()
