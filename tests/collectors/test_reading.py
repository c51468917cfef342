"""Bounded reading: huge logs and huge lines cost little memory; JSON limits hold."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors import reading
from arb_audit.collectors.autorl_bench.runlog import read_run_log
from arb_audit.collectors.reading import RunFolder, split_lines

RECORD = b"2026-03-10 10:15:04 | INFO | [SUBMIT #1] Started | model_path=output/v1 | gpu=None\n"


def _peak_reading(folder: Path, giant: int) -> int:
    with (folder / "run.log").open("wb") as handle:
        handle.write(b"y" * giant + b"\n")
        for _ in range(20):
            handle.write(b"2026-03-10 10:15:00 | DEBUG | noise " + b"z" * 400 + b"\n" + b"stray\n" * 5000)
        handle.write(RECORD)
    tracemalloc.start()
    log = read_run_log(RunFolder(folder))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert log is not None and [e.kind for e in log.events] == ["started"]
    return peak


def test_big_log_with_a_giant_line_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    small = _peak_reading(tmp_path, 5_000_000)
    large = _peak_reading(tmp_path, 40_000_000)
    assert small < 10 * reading.BLOCK_BYTES, f"peak {small:,} bytes"
    assert large < small + reading.BLOCK_BYTES, f"peak grew from {small:,} to {large:,} bytes"


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


def _reference_lines(data: bytes, max_line: int) -> list[tuple[bytes, bool]]:
    parts = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    return [(p[:max_line], len(p) > max_line) for p in parts]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=60).map(lambda b: bytes(b"ab\r\n"[x % 4] for x in b)),
    st.integers(1, 7),
    st.integers(1, 9),
)
def test_split_lines_agrees_with_a_plain_split_whatever_the_block_size(
    data: bytes, max_line: int, block: int
) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reading, "BLOCK_BYTES", block)
        assert list(split_lines(io.BytesIO(data), max_line)) == _reference_lines(data, max_line)


def test_a_cut_never_splits_a_character_and_a_bom_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "log.txt").write_bytes(reading.BOM + b"first\n" + "€".encode() * 30 + b"\n")
    folder = RunFolder(tmp_path)
    lines = list(folder.lines("log.txt", max_line=50))
    assert lines[0] == (1, "first")
    assert lines[1] == (2, "€" * 16)  # 48 of the 50 bytes: the 17th euro sign would be split
    assert [p.message for p in folder.problems] == [
        "1 line(s) exceed 50 bytes (first: line 2); they were cut"
    ]
