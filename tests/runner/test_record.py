"""arb-audit record end to end: a real agent process, a real evaluator command, then audit and check."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner, Result

from arb_audit.cli import main
from arb_audit.runner.artifact_hash import hash_artifact
from arb_audit.store import RunStore
from tests.runner.scripted_agent import checkpoint

HERE = Path(__file__).resolve().parent


def test_a_recorded_run_holds_every_attempt_revision_and_hash(tmp_path: Path) -> None:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    workspace.mkdir()
    done = subprocess.run(
        record_argv(
            workspace,
            run_dir,
            "--snapshot-every",
            "0.2",
            "--task",
            "tiny",
            "--level",
            "1",
            "--eval-size",
            "400",
            "--baseline-score",
            "5",
            agent=[sys.executable, str(HERE / "scripted_agent.py")],
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=RUN_ENV,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    answers = json.loads((run_dir / "agent.log").read_text().strip().splitlines()[-1])
    assert answers["first"]["score"] == 10.0 and answers["first"]["improvement"] == 5.0
    assert answers["second"]["score"] == 20.0 and answers["second"]["best"]["score"] == 20.0
    assert answers["refused"] == {"error": "Invalid request"}
    assert sorted(a["score"] for a in answers["racing"]) == [10.0, 20.0]

    result = CliRunner().invoke(main, [str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["run"]["format"] == "recorded"
    # the task as the recording was told it: level 1, noise 100 / sqrt(400), no intended stage said
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (1, 5.0)
    assert report["quadrant"]["intended_stage"] is None
    subs = report["submissions"]
    assert [s["status"] for s in subs].count("rejected") == 1
    graded = [s for s in subs if s["status"] == "scored"]
    assert [s["score"] for s in graded][:2] == [10.0, 20.0] and len(graded) == 4
    first_v1 = graded[0]
    # What v1 held when it was graded, rebuilt from the agent's own recipe: the id must match it, not
    # the overwritten folder that is there now.
    checkpoint(tmp_path / "v1-as-graded", 1)
    assert first_v1["artifact_id"] == hash_artifact(tmp_path / "v1-as-graded").artifact_id
    assert first_v1["artifact_id"] != hash_artifact(workspace / "output" / "v1").artifact_id
    assert first_v1["artifact_path"] == "output/v1"
    assert report["best"]["score"] == 20.0
    revisions = report["route"]["code_revision"]
    assert revisions is not None
    log = subprocess.run(
        ["git", "--git-dir", str(run_dir / "run.revisions.git"), "log", "--all", "--format=%H"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert len(log) >= 2  # train.py changed between the first and the second submission
    assert not (workspace / ".arb-audit").exists() and not (workspace / "run.duckdb").exists()


def test_the_recording_must_lie_outside_the_workspace(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "record",
            "--workspace",
            str(tmp_path),
            "--run-dir",
            str(tmp_path / "r"),
            "--evaluator",
            "true",
            "--",
            "true",
        ],
    )
    assert result.exit_code == 2 and "outside the workspace" in result.output


def test_verify_finds_an_edited_row_and_an_overwritten_artifact(tmp_path: Path) -> None:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    workspace.mkdir()
    subprocess.run(
        record_argv(workspace, run_dir, agent=[sys.executable, str(HERE / "scripted_agent.py")]),
        capture_output=True,
        timeout=120,
        check=True,
        env=RUN_ENV,
    )
    result = CliRunner().invoke(main, ["verify", str(run_dir)])
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert lines and all(line.startswith("artifact: output/v1 (submission") for line in lines)  # overwritten
    assert all(line.endswith("model.safetensors: tensors changed: w") for line in lines)
    checkpoint(workspace / "output" / "v1", 1)  # put back what was graded
    assert CliRunner().invoke(main, ["verify", str(run_dir)]).exit_code == 0
    (workspace / "output" / "v2" / "config.json").unlink()
    result = CliRunner().invoke(main, ["verify", str(run_dir)])
    assert result.exit_code == 1 and result.stdout.strip().splitlines()[0].endswith("config.json: gone")
    checkpoint(workspace / "output" / "v2", 2)
    con = duckdb.connect(str(run_dir / "run.duckdb"))
    assert con.execute("SELECT count(DISTINCT artifact_id) FROM artifact_files").fetchone() == (2,)
    con.execute("UPDATE artifact_files SET size = size + 1 WHERE path = 'config.json'")
    con.close()
    result = CliRunner().invoke(main, ["verify", str(run_dir)])
    assert result.exit_code == 1
    assert {line.split(" (")[0] for line in result.stdout.splitlines()} == {
        "manifest: output/v1",
        "manifest: output/v2",
    }
    con = duckdb.connect(str(run_dir / "run.duckdb"))
    con.execute("UPDATE artifact_files SET size = size - 1 WHERE path = 'config.json'")
    con.execute("UPDATE submissions SET score = 99 WHERE seq = 2")
    con.close()
    result = CliRunner().invoke(main, ["verify", str(run_dir)])
    assert result.exit_code == 1 and result.stdout.startswith("ledger: submission 2:")
    assert CliRunner().invoke(main, ["verify", str(tmp_path)]).exit_code == 2


def record_argv(workspace: Path, run_dir: Path, *options: str, agent: list[str]) -> list[str]:
    """The `arb-audit record` command line the tests run, with the size evaluator."""
    return [
        sys.executable,
        "-m",
        "arb_audit",
        "record",
        "--workspace",
        str(workspace),
        "--run-dir",
        str(run_dir),
        "--evaluator",
        f"{sys.executable} {HERE / 'size_evaluator.py'}",
        *options,
        "--",
        *agent,
    ]


RUN_ENV = {**os.environ, "PYTHONPATH": str(HERE.parent.parent)}
"""Agents import tests.runner helpers, from the workspace they run in."""


def _record(workspace: Path, run_dir: Path, *agent: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(record_argv(workspace, run_dir, agent=[sys.executable, *agent]), env=RUN_ENV)


def test_sigkill_loses_no_acknowledged_submission_and_a_restart_resumes(tmp_path: Path) -> None:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    workspace.mkdir()
    runner = _record(workspace, run_dir, str(HERE / "sleepy_agent.py"), "60")
    deadline = time.monotonic() + 60
    while b"ANSWER" not in (
        (run_dir / "agent.log").read_bytes() if (run_dir / "agent.log").exists() else b""
    ):
        assert time.monotonic() < deadline and runner.poll() is None
        time.sleep(0.1)
    runner.kill()  # SIGKILL, mid-run, right after the agent got its answer
    runner.wait()
    os.killpg(int((workspace / "agent.pid").read_text()), signal.SIGKILL)
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        (run_id,) = [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()]
        assert [s.score for s in store.load_record(run_id).submissions] == [30.0]
    assert json.loads((run_dir / "recording.json").read_text())["run_id"] == run_id
    again = _record(workspace, run_dir, str(HERE / "sleepy_agent.py"), "0")
    assert again.wait(timeout=60) == 0
    log = (run_dir / "agent.log").read_bytes()
    assert b"ANSWER 2" in log  # the harness id continues
    assert b"ANSWER 1" in log  # and the killed session's output is still there
    assert json.loads((run_dir / "recording.json").read_text())["run_id"] == run_id  # the run's, still
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        assert [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()] == [run_id]
        record = store.load_record(run_id)
        assert [s.seq for s in record.submissions] == [1, 2]
        assert store.verify_submission_chain(run_id) is None
        assert [r.seq for r in record.revisions] == list(range(1, len(record.revisions) + 1))


def test_the_budget_ends_the_agents_whole_process_group(tmp_path: Path) -> None:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    workspace.mkdir()
    runner = subprocess.run(
        record_argv(
            workspace,
            run_dir,
            "--budget-s",
            "3",
            agent=["sh", "-c", f"{sys.executable} {HERE / 'sleepy_agent.py'} 120 & wait"],
        ),
        capture_output=True,
        timeout=60,
        check=False,
        env=RUN_ENV,
    )
    assert runner.returncode != 0  # ended by the budget, not by its own exit
    child = int((workspace / "agent.pid").read_text())
    stat = Path(f"/proc/{child}/stat")
    state = stat.read_text().rsplit(")", 1)[1].split()[0] if stat.exists() else "gone"
    assert state in ("gone", "Z"), (
        state
    )  # the grandchild was ended with its group (a zombie awaits its reaper)
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        (extra,) = store.con.execute("SELECT extra FROM runs").fetchone() or ("{}",)
    assert json.loads(extra)["agent_timed_out"] is True


def test_an_agent_that_floods_and_deletes_its_workspace_is_still_recorded(tmp_path: Path) -> None:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    workspace.mkdir()
    runner = _record(workspace, run_dir, str(HERE / "unruly_agent.py"))
    assert runner.wait(timeout=60) == 0
    log = (run_dir / "agent.log").read_bytes()
    assert b"ANSWER 20.0" in log and b"deleted my workspace" in log and len(log) > 4_000_000
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        (run_id,) = [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()]
        record = store.load_record(run_id)
    assert [s.score for s in record.submissions] == [20.0]
    assert record.revisions[-1].files == [] and any(r.files for r in record.revisions)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--evaluator", "python 'unbalanced"], "No closing quotation"),
        (["--upstream", "ftp://grader"], "must be an http(s) URL"),
        (
            ["--evaluator", "true", "--upstream", "http://127.0.0.1:1"],
            "give either --evaluator or --upstream",
        ),
    ],
)
def test_a_recording_that_cannot_be_made_says_why(tmp_path: Path, options: list[str], message: str) -> None:
    result = _invoke_record(tmp_path, *options, "--", "true")
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "r").exists()


def _invoke_record(tmp_path: Path, *args: str) -> Result:
    """`arb-audit record` in-process, with workspace tmp_path/ws (made here) and run dir tmp_path/r."""
    (tmp_path / "ws").mkdir()
    return CliRunner().invoke(
        main, ["record", "--workspace", str(tmp_path / "ws"), "--run-dir", str(tmp_path / "r"), *args]
    )


def test_an_agent_that_cannot_start_is_reported_and_recorded(tmp_path: Path) -> None:
    result = _invoke_record(tmp_path, "--evaluator", "true", "--", "/no/such/agent")
    assert result.exit_code == 2 and "/no/such/agent: the agent cannot be started" in result.output
    with RunStore.open(tmp_path / "r" / "run.duckdb", read_only=True) as store:
        (extra,) = store.con.execute("SELECT extra FROM runs").fetchone() or ("{}",)
    assert "cannot be started" in json.loads(extra)["recording"]["agent_error"]


def _private_tmpfs_works() -> bool:
    probe = ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except OSError:
        return False


@pytest.mark.skipif(not _private_tmpfs_works(), reason="needs `unshare -rm` and tmpfs mounts")
def test_a_full_disk_is_answered_and_every_attempt_recorded_once_space_returns(tmp_path: Path) -> None:
    disk, copy = tmp_path / "disk", tmp_path / "copy"
    disk.mkdir()
    # Workspace and recording share one real 8 MB disk (tmpfs in a private mount namespace), which the
    # agent fills; the recording is copied out before the namespace, and its disk, go away.
    script = (
        'mount -t tmpfs -o size=8m tmpfs "$0" && mkdir "$0/ws" && "$@"; rc=$?;'
        ' cp -r "$DISK/rec" "$COPY"; exit $rc'
    )
    argv = record_argv(disk / "ws", disk / "rec", agent=[sys.executable, str(HERE / "greedy_agent.py")])
    done = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, str(disk), *argv],
        capture_output=True,
        timeout=120,
        check=False,
        env={**RUN_ENV, "DISK": str(disk), "COPY": str(copy)},
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr
    answers = json.loads((copy / "agent.log").read_text().split("ANSWERS ", 1)[1])
    assert [a.get("score") for a in answers] == [20.0, None, 20.0]
    assert "No space left on device" in answers[1]["error"]
    with RunStore.open(copy / "run.duckdb", read_only=True) as store:
        (run_id,) = [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()]
        record = store.load_record(run_id)
        assert store.verify_submission_chain(run_id) is None
    assert [(s.seq, s.status) for s in record.submissions] == [(1, "scored"), (2, "error"), (3, "scored")]
    assert "No space left on device" in (record.submissions[1].error or "")
    assert record.run.ended_at is not None


def test_a_recording_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    (tmp_path / "r" / "recording.json").mkdir(parents=True)  # where the runner writes its marker
    result = _invoke_record(tmp_path, "--evaluator", "true", "--", "true")
    assert result.exit_code == 2
    assert f"{tmp_path / 'r' / 'recording.json'}: the recording cannot be written" in result.output


def _run_id(run_dir: Path) -> str:
    """The run id recording.json names, once checked against the store's."""
    named = json.loads((run_dir / "recording.json").read_text())["run_id"]
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        assert [r[0] for r in store.con.execute("SELECT run_id FROM runs").fetchall()] == [named]
    return str(named)


def test_each_recording_gets_a_run_id_of_its_own(tmp_path: Path) -> None:
    ids = []
    for cell in ("a", "b"):
        (tmp_path / cell / "ws").mkdir(parents=True)
        result = CliRunner().invoke(
            main,
            [
                "record",
                *(
                    "--workspace",
                    str(tmp_path / cell / "ws"),
                    "--run-dir",
                    str(tmp_path / cell / "recording"),
                ),
                *("--task", "tiny", "--evaluator", "true", "--", "true"),
            ],
        )
        assert result.exit_code == 0, result.output
        ids.append(_run_id(tmp_path / cell / "recording"))
    assert ids[0] != ids[1] and all(re.fullmatch(r"recorded:tiny/recording-[0-9a-f]{12}", i) for i in ids)


def test_a_portable_recording_keeps_no_path_of_this_machine_and_moves_with_its_workspace(
    tmp_path: Path,
) -> None:
    workspace, run_dir = tmp_path / "made" / "ws", tmp_path / "made" / "recording"
    workspace.mkdir(parents=True)
    options = ("--portable", "--name", "cell-7", "--task", "tiny")
    agent = [sys.executable, str(HERE / "scripted_agent.py")]
    done = subprocess.run(
        record_argv(workspace, run_dir, *options, agent=agent), capture_output=True, timeout=120, env=RUN_ENV
    )
    assert done.returncode == 0, done.stderr.decode()
    marker = json.loads((run_dir / "recording.json").read_text())
    assert "workspace" not in marker and marker["workspace_relative"] == "../ws"
    assert re.fullmatch(r"recorded:tiny/cell-7-[0-9a-f]{12}", _run_id(run_dir))
    with RunStore.open(run_dir / "run.duckdb", read_only=True) as store:
        row = store.con.execute("SELECT source_path, workspace_path, revisions_path FROM runs").fetchone()
    assert row == (".", None, "run.revisions.git")
    (tmp_path / "made").rename(tmp_path / "moved")
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "moved" / "recording")])
    assert result.exit_code == 1  # the agent overwrote output/v1 after it was graded, in the moved workspace
    assert all(str(tmp_path / "moved" / "ws") in line for line in result.stdout.splitlines())
    result = CliRunner().invoke(main, [str(tmp_path / "moved" / "recording"), "--json"])
    report = json.loads(result.stdout)
    assert report["run"]["run_id"] == marker["run_id"]
    assert report["run"]["workspace_path"] == str((tmp_path / "moved" / "ws").resolve())
    assert "artifact_overwritten" in {f["flag"] for f in report["flags"]}


def test_a_portable_recording_needs_its_workspace_beside_it(tmp_path: Path) -> None:
    (tmp_path / "far" / "ws").mkdir(parents=True)
    result = CliRunner().invoke(
        main,
        [
            "record",
            *("--workspace", str(tmp_path / "far" / "ws"), "--run-dir", str(tmp_path / "runs" / "r")),
            *("--portable", "--evaluator", "true", "--", "true"),
        ],
    )
    assert result.exit_code == 2
    assert "a portable recording finds its workspace relative to itself" in result.output
    assert not (tmp_path / "runs").exists()
