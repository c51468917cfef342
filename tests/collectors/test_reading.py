"""Bounded reading: huge logs and huge lines cost little memory; JSON limits hold."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from collectors.autorl_bench.runlog import read_run_log
from collectors.reading import RunFolder

RECORD = b"2026-03-10 10:15:04 | INFO | [SUBMIT #1] Started | model_path=output/v1 | gpu=None\n"


def test_big_log_with_a_giant_line_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    with (tmp_path / "run.log").open("wb") as handle:
        handle.write(b"y" * 20_000_000 + b"\n")  # one 20 MB line
        for _ in range(20):
            handle.write(b"2026-03-10 10:15:00 | DEBUG | noise " + b"z" * 400 + b"\n" * 1 + b"stray\n" * 5000)
        handle.write(RECORD)
    tracemalloc.start()
    log = read_run_log(RunFolder(tmp_path))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert log is not None and [e.kind for e in log.events] == ["started"]
    assert peak < 4_000_000, f"peak {peak:,} bytes"


def test_json_over_the_limit_is_refused(tmp_path: Path) -> None:
    (tmp_path / "big.json").write_text("[" + "1," * 100 + "1]")
    folder = RunFolder(tmp_path)
    assert folder.read_json("big.json", max_bytes=50) is None
    assert "over the 50-byte limit" in folder.problems[0].message


def test_a_folder_where_a_file_should_be(tmp_path: Path) -> None:
    (tmp_path / "scores.json").mkdir()
    folder = RunFolder(tmp_path)
    assert folder.read_json("scores.json") is None
    assert folder.problems[0].message == "is not a regular file; not read"
