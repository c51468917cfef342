"""``arb-audit ingest`` keeps one row per run whatever each run does: a run that hangs is stopped at its
deadline and kept with a row saying so, an interrupted ingest keeps the rows of the runs that ended,
and no worker outlives the ingest. Real worker processes, a real hang (a run store another process
holds: the audit waits for it), a real SIGINT to the command's process.
"""

from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl
import pytest

from arb_audit.store import RunStore
from arb_audit.study import load_study
from tests.conftest import FIXTURES

MARK = "ARB_AUDIT_INGEST_TEST"
"""An environment variable every process of one ingest inherits: how its leftovers are found."""


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """Two runs that audit in seconds, and a third whose store another process holds."""
    root = tmp_path / "runs"
    for name, source in (("a_improves", "improves"), ("b_no_valid", "no_valid"), ("c_held", "improves")):
        shutil.copytree(FIXTURES / source, root / name, symlinks=True)
    return root


def run_dir(folder: Path) -> Path:
    return next(p.parent for p in folder.rglob("scores.json")).resolve()


@pytest.fixture
def held(runs: Path) -> Iterator[Path]:
    """Hold the third run's own store open for writing: its audit waits for the store (a minute)."""
    folder = run_dir(runs / "c_held")
    store = folder / ".arb-audit" / "run.duckdb"
    with RunStore.open(store):
        pass
    con = duckdb.connect(str(store))
    yield folder
    con.close()


def start_ingest(runs: Path, study: Path, mark: str, *options: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arb_audit", "ingest", str(runs), "--study", str(study), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, MARK: mark},
    )


def lines_of(stream: object) -> queue.Queue[str]:
    """Read ``stream``'s lines as they come, into a queue."""
    found: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:  # type: ignore[attr-defined]
            found.put(line)

    threading.Thread(target=read, daemon=True).start()
    return found


def left_running(mark: str) -> list[int]:
    """Return the processes still alive that an ingest marked ``mark`` started."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"{MARK}={mark}".encode() in environ.split(b"\0") and state != "Z":
            alive.append(int(entry.name))
    return alive


def none_left(mark: str, wait_s: float = 10.0) -> bool:
    deadline = time.monotonic() + wait_s
    while left_running(mark):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


@pytest.mark.slow  # (tens of seconds: a deadline waited out, a big file read)
def test_a_run_that_hangs_is_stopped_at_its_deadline_kept_as_a_row_and_audited_again_next_time(
    runs: Path, held: Path, tmp_path: Path
) -> None:
    study, mark = tmp_path / "study.duckdb", uuid.uuid4().hex
    # under the minute the held store keeps its audit waiting, over what the others take on a busy machine
    ingest = start_ingest(runs, study, mark, "--jobs", "3", "--timeout", "30")
    out, err = ingest.communicate(timeout=300)
    assert ingest.returncode == 1, err
    assert none_left(mark)
    assert "2 audited, 0 unchanged since the last ingest, 1 failed" in out, out
    assert f"failed: {held}: not audited within 30 s: its audit was stopped" in out
    frame = load_study(study)
    assert frame.height == 3
    stopped = frame.filter(pl.col("run_key") == str(held))
    assert stopped["error"][0].startswith("not audited within 30 s") and stopped["fingerprint"][0] is None
    assert frame.filter(pl.col("run_key") != str(held))["error"].is_null().all()
    shutil.rmtree(held / ".arb-audit")  # the holder keeps its file; the run's next audit gets a new store
    again = start_ingest(runs, study, uuid.uuid4().hex, "--jobs", "1")
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert "1 audited, 2 unchanged" in out
    assert load_study(study)["error"].is_null().all()


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_an_interrupted_ingest_keeps_the_rows_of_the_runs_that_ended(
    runs: Path, held: Path, tmp_path: Path
) -> None:
    study, mark = tmp_path / "study.duckdb", uuid.uuid4().hex
    ingest = start_ingest(runs, study, mark, "--jobs", "3")
    progress = lines_of(ingest.stderr)
    ended: list[str] = []
    while len(ended) < 2:
        line = progress.get(timeout=120)
        if line.startswith("arb-audit ingest: ["):
            ended.append(line)
    assert all(line.rstrip().endswith(": audited") for line in ended), ended
    assert ingest.poll() is None  # the held run is still waiting for its store
    ingest.send_signal(signal.SIGINT)
    out, _ = ingest.communicate(timeout=60)
    assert ingest.returncode == 130
    assert none_left(mark)
    assert "2 audited" in out and "1 failed" in out
    frame = load_study(study)
    assert frame.height == 3
    assert frame.filter(pl.col("error").is_null()).height == 2
    interrupted = frame.filter(pl.col("run_key") == str(held))
    assert interrupted["error"][0] == "the ingest was interrupted before its audit ended"
    assert interrupted["fingerprint"][0] is None


def workers_of(mark: str) -> list[int]:
    """Return the ingest's worker processes (spawned by multiprocessing) among those it marked."""
    return [
        pid
        for pid in left_running(mark)
        if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()  # not the ingest, nor its tracker
    ]


def test_a_worker_killed_mid_audit_leaves_a_row_saying_so(runs: Path, held: Path, tmp_path: Path) -> None:
    study, mark = tmp_path / "study.duckdb", uuid.uuid4().hex
    ingest = start_ingest(runs / "c_held", study, mark, "--jobs", "1")
    deadline = time.monotonic() + 120
    while not (found := workers_of(mark)):
        assert time.monotonic() < deadline and ingest.poll() is None
        time.sleep(0.2)
    time.sleep(3)  # the worker is waiting for the held store
    os.kill(found[0], signal.SIGKILL)  # as the out-of-memory killer would
    out, err = ingest.communicate(timeout=120)
    assert ingest.returncode == 1, err
    assert none_left(mark)
    assert f"failed: {held}: the worker auditing it was killed by signal SIGKILL" in out
    frame = load_study(study)
    assert frame.height == 1 and frame["fingerprint"][0] is None
