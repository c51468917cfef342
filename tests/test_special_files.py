"""Nothing blocks on a special file: a FIFO named like a model file is named as a problem, never waited on.

Each command runs in a subprocess (or a thread) with a deadline, so a regression fails the test instead
of hanging the suite: reading a FIFO waits for a writer that never comes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest

from arb_audit.model import RunInfo, Submission
from arb_audit.regular_files import ChangedWhileRead, NotRegularFile, open_regular, pieces, read_regular
from arb_audit.runner.artifact_hash import hash_artifact
from arb_audit.runner.grading import Grader, command_evaluator, serve
from arb_audit.runner.layout import RECORDING_MARKER, STORE_NAME
from arb_audit.store import RunStore
from tests.runner.scripted_agent import checkpoint

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")

ROOT = Path(__file__).resolve().parent.parent
SIZE_EVALUATOR = [sys.executable, str(ROOT / "tests" / "runner" / "size_evaluator.py")]
DEADLINE_S = 60.0
"""Far above what any of these takes (a few seconds), far below a hang."""
T = TypeVar("T")


def within(seconds: float, work: Callable[[], T]) -> T:
    """Run ``work`` in a thread and fail the test unless it returns (or raises) within ``seconds``."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", work()))
        except BaseException as exc:
            outcome.append(("error", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if not outcome:
        pytest.fail(f"still running after {seconds:g}s: blocked on a special file?")
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]


def fifo(path: Path) -> Path:
    """Replace ``path`` (a file) by a FIFO of the same name."""
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def arb_audit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arb_audit", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_only_regular_files_are_opened(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "model.safetensors")
    with pytest.raises(NotRegularFile, match="it is a FIFO, not a regular file") as caught:
        within(5, lambda: open_regular(pipe))
    assert caught.value.filename == str(pipe)
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "sock"))
        with pytest.raises(NotRegularFile, match="a socket"):
            read_regular(tmp_path / "sock", 10)
    (tmp_path / "real.json").write_text("{}")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    with pytest.raises(NotRegularFile, match="a symlink"):
        open_regular(tmp_path / "link.json")
    assert read_regular(tmp_path / "link.json", 10, follow_symlinks=True) == b"{}"
    (tmp_path / "pipe-link").symlink_to(pipe)
    with pytest.raises(NotRegularFile, match="a FIFO"):
        within(5, lambda: read_regular(tmp_path / "pipe-link", 10, follow_symlinks=True))
    assert read_regular(tmp_path / "real.json", 1) == b"{}"  # one byte over: the caller sees "larger"


def test_a_file_cut_short_while_read_is_an_error_not_a_short_read(tmp_path: Path) -> None:
    path = tmp_path / "model.bin"
    path.write_bytes(b"x" * 100)
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        os.truncate(path, 10)  # the agent truncates it after it was measured
        with pytest.raises(ChangedWhileRead, match="changed while it was read"):
            list(pieces(handle, 0, size, name=path))


def test_hashing_names_a_fifo_in_an_artifact(tmp_path: Path) -> None:
    checkpoint(tmp_path / "v1", 1)
    pipe = fifo(tmp_path / "v1" / "config.json")
    with pytest.raises(NotRegularFile) as caught:
        within(10, lambda: hash_artifact(tmp_path / "v1"))  # in a folder
    assert caught.value.filename == str(pipe)
    model = fifo(tmp_path / "v1" / "model.safetensors")
    with pytest.raises(NotRegularFile, match="FIFO") as caught:
        within(10, lambda: hash_artifact(model))  # submitted itself
    assert caught.value.filename == str(model)


def _recording(tmp_path: Path, graded: str) -> tuple[Path, Path]:
    """A recording (as `arb-audit record` lays it out) whose one submission graded ``graded``."""
    workspace, run_dir = tmp_path / "workspace", tmp_path / "recording"
    checkpoint(workspace / "output" / "v1", 1)
    run_dir.mkdir()
    run = RunInfo(
        "recorded:tiny/fifo",
        "recorded",
        ".",
        task="tiny",
        started_at=datetime(2026, 3, 10, tzinfo=UTC),
        utc_offset_s=0,
    )
    (run_dir / RECORDING_MARKER).write_text(
        json.dumps({"run_id": run.run_id, "workspace_relative": "../workspace", "task": "tiny"})
    )
    with RunStore.open(run_dir / STORE_NAME) as store:
        store.ensure_run(run, None)
        manifest = hash_artifact(workspace / graded)
        store.append_submission(
            run.run_id,
            Submission(
                seq=0,
                status="scored",
                model_path=graded,
                score=10.0,
                artifact_path=graded,
                artifact_id=manifest.artifact_id,
            ),
            manifest,
        )
    return workspace, run_dir


@pytest.mark.parametrize("graded", ["output/v1", "output/v1/model.safetensors"])
def test_audit_and_verify_of_a_recording_name_a_fifo_model_file(tmp_path: Path, graded: str) -> None:
    workspace, run_dir = _recording(tmp_path, graded)
    fifo(workspace / "output" / "v1" / "model.safetensors")
    started = time.monotonic()
    audit = arb_audit(str(run_dir), "--json")
    assert audit.returncode == 0, audit.stderr
    problems = [f"{p['path']}: {p['message']}" for p in json.loads(audit.stdout)["problems"]]
    assert any(
        p.startswith("output/v1/model.safetensors:") and "FIFO, not a regular file" in p for p in problems
    ), problems
    checked = arb_audit("verify", str(run_dir))
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout.startswith(f"artifact: {graded} (submission 1): ")
    assert "output/v1/model.safetensors cannot be read: it is a FIFO" in checked.stdout
    assert time.monotonic() - started < DEADLINE_S


def test_audit_of_a_reference_recording_and_a_run_folder_with_fifos(tmp_path: Path) -> None:
    reference = tmp_path / "sft_only"
    shutil.copytree(ROOT / "fixtures" / "reference" / "sft_only", reference, symlinks=True)
    output = reference / "workspace" / "output" / "v1"
    fifo(output / "model.safetensors")
    fifo(output / "config.json")
    audit = arb_audit(str(reference / "recording"), "--json")
    assert audit.returncode == 0, audit.stderr
    paths = {p["path"] for p in json.loads(audit.stdout)["problems"]}
    assert {"output/v1/config.json", "output/v1/model.safetensors"} & paths, paths
    checked = arb_audit("verify", str(reference / "recording"))
    assert checked.returncode == 1 and "is a FIFO" in checked.stdout, checked.stdout

    run = tmp_path / "improves"
    shutil.copytree(ROOT / "fixtures" / "autorl_bench" / "improves", run, symlinks=True)
    (folder,) = run.iterdir()
    fifo(folder / "output" / "v2" / "model.safetensors")
    fifo(folder / "output" / "v3" / "config.json")
    fifo(folder / "run_meta.json")
    audit = arb_audit(str(folder), "--json", "--hash-artifacts")
    assert audit.returncode == 0, audit.stderr
    problems = [(p["path"], p["message"]) for p in json.loads(audit.stdout)["problems"]]
    for name in ("output/v2/model.safetensors", "output/v3/config.json", "run_meta.json"):
        assert any(path == name and "not a regular file" in said for path, said in problems), problems


def _post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        url + "/submit", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, dict(json.load(answer))
    except urllib.error.HTTPError as error:
        return error.code, dict(json.load(error))


def test_the_grading_api_answers_a_fifo_and_serves_the_next_submission(tmp_path: Path) -> None:
    checkpoint(tmp_path / "good", 3)
    checkpoint(tmp_path / "piped", 1)
    fifo(tmp_path / "piped" / "model.safetensors")
    fifo(tmp_path / "alone.safetensors")
    ledger: list[Submission] = []

    def record(s: Submission, _manifest: object) -> Submission:
        s.seq = len(ledger) + 1
        ledger.append(s)
        return s

    grader = Grader(
        workspace=tmp_path,
        evaluate=command_evaluator(SIZE_EVALUATOR, timeout_s=600),
        record=record,
        snapshot=lambda: None,
        meta={},
    )
    server = serve(grader, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        for path, named in (("piped", "piped/model.safetensors"), ("alone.safetensors", "alone.safetensors")):
            status, answer = within(20, lambda path=path: _post(url, {"model_path": path}))  # type: ignore[misc]
            assert status == 200
            said = "cannot be read: it is a FIFO, not a regular file; not evaluated"
            assert answer["error"] == f"{named} {said}"
        status, answer = within(20, lambda: _post(url, {"model_path": "good"}))
        assert (status, answer["score"], answer.get("error")) == (200, 30.0, None)
    finally:
        server.shutdown()
    assert [(s.status, s.artifact_id is None) for s in ledger] == [
        ("error", True),
        ("error", True),
        ("scored", False),
    ]
