"""Hostile and broken transcripts: each gives a clear problem naming the file, and the rest goes on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from arb_audit.revisions import run_ref
from collectors.reading import RunFolder
from collectors.transcripts.ingest import ingest_transcript
from collectors.transcripts.read import read_transcript
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


def test_a_big_transcript_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    small, n_small = _peak(tmp_path, 10)
    large, n_large = _peak(tmp_path, 60)
    assert (n_small, n_large) == (50, 300)
    # Each call keeps a clipped output (2,000 characters): 250 more calls may add about 1 MB, not 50.
    assert large < small + 2 * 1024 * 1024, f"peak grew from {small:,} to {large:,} bytes"


CHILD = """
import resource, sys
from pathlib import Path
from collectors.reading import RunFolder
from collectors.transcripts.read import read_transcript
t = read_transcript(RunFolder(Path(sys.argv[1])), "solve_out.txt")
print(len(t.calls), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
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
