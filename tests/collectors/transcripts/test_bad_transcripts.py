"""Hostile and broken transcripts: each gives a clear problem naming the file, and the rest goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.ingest import Snapshot, TranscriptFacts, ingest_transcript
from arb_audit.collectors.transcripts.read import read_transcript
from arb_audit.revisions import run_ref
from tests.transcript_lines import claude_call, claude_init, claude_result, jsonl

ROOT = "/home/ben/task"


def _write_big(path: Path, megabytes: int) -> None:
    """A Claude transcript whose size is mostly command output, as a long training log makes it."""
    output = "step 1 loss 0.5\n" * 12_500  # 200 KB per result
    with path.open("w") as out:
        out.write(jsonl([claude_init()]))
        for i in range(megabytes * 5):
            out.write(
                jsonl(
                    [
                        claude_call(f"t{i}", "Bash", command=f"python train.py --seed {i}"),
                        claude_result(f"t{i}", output),
                    ]
                )
            )


def _peak(folder: Path, megabytes: int) -> tuple[int, int]:
    _write_big(folder / "solve_out.txt", megabytes)
    tracemalloc.start()
    transcript = read_transcript(RunFolder(folder), "solve_out.txt")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert transcript is not None
    return peak, len(transcript.calls)


@pytest.mark.slow  # (tens of seconds: a deadline waited out, a big file read)
def test_a_big_transcript_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    small, n_small = _peak(tmp_path, 10)
    large, n_large = _peak(tmp_path, 60)
    assert (n_small, n_large) == (50, 300)
    # Each call keeps a clipped output (2,000 characters): 250 more calls may add about 1 MB, not 50.
    assert large < small + 2 * 1024 * 1024, f"peak grew from {small:,} to {large:,} bytes"


# VmHWM, not ru_maxrss: ru_maxrss survives exec, so the child would report its pytest parent's peak.
CHILD = """
import sys
from pathlib import Path
from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.read import read_transcript
t = read_transcript(RunFolder(Path(sys.argv[1])), "solve_out.txt")
peak = next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(len(t.calls), peak)
"""


@pytest.mark.slow
def test_a_two_gigabyte_transcript(tmp_path: Path) -> None:
    _write_big(tmp_path / "solve_out.txt", 2048)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, check=True
    )
    calls, peak_kb = map(int, out.stdout.split())
    assert calls == 10_240
    assert peak_kb < 200 * 1024, f"peak RSS {peak_kb:,} KB"


def test_a_line_longer_than_the_limit_is_cut_and_reported(tmp_path: Path) -> None:
    giant = json.dumps(
        claude_call("w", "Write", file_path=f"{ROOT}/big.py", content="x" * (17 * 1024 * 1024))
    )
    (tmp_path / "solve_out.txt").write_text(
        jsonl([claude_init()]) + giant + "\n" + jsonl([claude_call("b", "Bash", command="ls")])
    )
    t = read_transcript(RunFolder(tmp_path), "solve_out.txt")
    assert t is not None and [c.command for c in t.calls] == ["ls"]
    messages = " | ".join(p.message for p in t.problems)
    assert "exceed 16,777,216 bytes (first: line 2)" in messages
    assert "1 line(s) look like JSON events but do not parse (first: line 2" in messages
    assert all(p.path == "solve_out.txt" for p in t.problems)


def test_binary_garbage_and_deep_nesting(tmp_path: Path) -> None:
    text = jsonl([claude_init(), claude_call("b", "Bash", command="ls")])
    (tmp_path / "solve_out.txt").write_bytes(
        text.encode() + os.urandom(3000).replace(b"\n", b"") + b"\n" + b"[" * 100_000 + b"\n"
    )
    t = read_transcript(RunFolder(tmp_path), "solve_out.txt")
    assert t is not None and len(t.calls) == 1
    assert any("not valid UTF-8" in p.message for p in t.problems)


def test_a_transcript_that_leads_out_of_the_run_folder_is_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(jsonl([claude_init()]))
    run = tmp_path / "run"
    run.mkdir()
    (run / "solve_out.txt").symlink_to(outside)
    folder = RunFolder(run)
    assert read_transcript(folder, "solve_out.txt") is None
    assert "leads out of the run folder" in folder.problems[0].message


def test_hostile_paths_never_touch_the_disk_and_git_refusals_are_named(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    events = [
        claude_init(),
        claude_call("w1", "Write", file_path=f"{ROOT}/../../../etc/cron.d/x", content="* * * * * evil\n"),
        claude_result("w1", "ok"),
        claude_call("w2", "Write", file_path=f"{ROOT}/.git/hooks/post-checkout", content="evil\n"),
        claude_result("w2", "ok"),
        claude_call("w3", "Write", file_path=f"{ROOT}/ok.py", content="x = 1\n"),
        claude_result("w3", "ok"),
    ]
    (run / "solve_out.txt").write_text(jsonl(events))
    facts = ingest_transcript(
        RunFolder(run), "solve_out.txt", roots=[ROOT], git_dir=tmp_path / "rev.git", ref=run_ref("r")
    )
    assert facts is not None
    assert [f.path for f in facts.revisions[-1].files] == ["_outside/etc/cron.d/x", "ok.py"]
    assert any(
        ".git/hooks/post-checkout" in p.message and "not committed" in p.message for p in facts.problems
    )
    assert not (tmp_path / "etc").exists() and sorted(p.name for p in run.iterdir()) == ["solve_out.txt"]


def _facts(tmp_path: Path, events: Sequence[dict[str, Any] | str]) -> TranscriptFacts:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "solve_out.txt").write_text(jsonl(events), encoding="utf-8")
    facts = ingest_transcript(
        RunFolder(run), "solve_out.txt", roots=[ROOT], git_dir=tmp_path / "rev.git", ref=run_ref("r")
    )
    assert facts is not None
    return facts


def _write(call_id: str, path: str, content: str) -> list[dict[str, Any] | str]:
    return [
        claude_call(call_id, "Write", file_path=f"{ROOT}/{path}", content=content),
        claude_result(call_id, "ok"),
    ]


def test_events_of_unforeseen_shapes_are_counted_not_fatal(tmp_path: Path) -> None:
    events: list[dict[str, Any] | str] = [
        claude_init(),
        {"type": []},
        {
            "type": "assistant",
            "message": {"content": [{"type": "tool_use", "id": [], "name": {}, "input": 3}]},
        },
        {"type": "user", "message": {"content": "just text"}},
        # JSON escapes of lone surrogates: valid JSON, but text no store or terminal can take.
        json.dumps(claude_call("b", "Bash", command="echo \ud800 done")),
        json.dumps(claude_result("b", "\ud800")),
        {"type": "result", "subtype": {}, "total_cost_usd": 10**400},
    ]
    facts = _facts(tmp_path, events)
    assert [c.command for c in facts.commands] == ["echo \ufffd done"]
    assert facts.transcript.unknown_events == {"(no type)": 1}


def test_edits_that_would_corrupt_the_tree_are_gaps(tmp_path: Path) -> None:
    events = [
        claude_init(),
        *_write("w1", "a/b.py", "x = 1\n"),
        *_write("w2", "a", "a file where a folder is\n"),
        *_write("w3", "n.ipynb", "[" * 100_000),
        claude_call("n", "NotebookEdit", notebook_path=f"{ROOT}/n.ipynb", cell_id="0", new_source="x"),
        claude_result("n", "ok"),
        *_write("w4", "big.py", "a" * 30_000),
        claude_call(
            "e", "Edit", file_path=f"{ROOT}/big.py", old_string="a", new_string="b" * 30_000, replace_all=True
        ),
        claude_result("e", "ok"),
        *_write("w5", ".git/config", "[core]\n"),
        *_write("w6", ".git/config", "[core] x\n"),
    ]
    facts = _facts(tmp_path, events)
    reasons = [p.message.split(": ", 2)[-1].split(";")[0] for p in facts.problems]
    assert "a folder of that name holds rebuilt files" in reasons
    assert "the notebook's rebuilt text is not a notebook" in reasons
    assert "the file would grow past the size the history keeps" in reasons
    assert sum(".git/config" in p.message for p in facts.problems) == 1  # refused once, not per edit
    assert [f.path for f in facts.revisions[-1].files] == ["a/b.py", "big.py", "n.ipynb"]


def test_results_pair_first_in_first_out_and_never_across_sessions(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call("1", "Bash", command="first"),
        claude_call("1", "Bash", command="second"),
        claude_result("1", "Exit code 2\nboom", is_error=True),
        claude_result("1", "fine"),
        claude_call("2", "Bash", command="killed by the restart"),
        claude_init(session="resumed"),
        claude_result("2", "a result from another session"),
    ]
    facts = _facts(tmp_path, events)
    assert [(c.command, c.exit_code, c.finished) for c in facts.commands] == [
        ("first", 2, True),
        ("second", 0, True),
        ("killed by the restart", None, False),
    ]


def test_a_successful_command_that_prints_exit_code_keeps_exit_zero(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call("b", "Bash", command="cat > t.py <<'EOF'\nprint(1)\nEOF\ngrep -c x log"),
        claude_result("b", "Exit code 3 was seen in the log"),
    ]
    facts = _facts(tmp_path, events)
    assert facts.commands[0].exit_code == 0 and facts.commands[0].revision_seq == 1
    assert [f.path for f in facts.revisions[0].files] == ["t.py"]


def test_a_session_started_at_the_root_names_no_workspace(tmp_path: Path) -> None:
    facts = _facts(tmp_path, [claude_init(cwd="/"), *_write("w", "../../../etc/x", "y\n")])
    assert [f.path for f in facts.revisions[0].files] == ["_outside/etc/x"]


def test_far_future_or_past_times_are_not_believed(tmp_path: Path) -> None:
    line = json.dumps(claude_call("b", "Bash", command="ls"))
    (tmp_path / "solve_out.txt").write_text(f"[9999-12-31T23:59:59Z] {line}\n[1970-01-01T00:00:01Z] {line}\n")
    t = read_transcript(RunFolder(tmp_path), "solve_out.txt")
    assert t is not None and [c.started_at for c in t.calls] == [None, None] and t.first_at is None


def test_the_final_check_never_reads_through_a_symlinked_folder(tmp_path: Path) -> None:
    task = tmp_path / "run" / "task"
    task.mkdir(parents=True)
    (task / "lnk").symlink_to("/etc")
    run = tmp_path / "run"
    (run / "solve_out.txt").write_text(jsonl([claude_init(), *_write("w", "lnk/hostname", "guess\n")]))
    facts = ingest_transcript(
        RunFolder(run),
        "solve_out.txt",
        roots=[ROOT],
        git_dir=tmp_path / "rev.git",
        ref=run_ref("r"),
        snapshot=Snapshot(task, "task"),
    )
    assert facts is not None and facts.summary is not None and facts.summary.final_check is not None
    assert facts.summary.final_check.absent == ["lnk/hostname"]
