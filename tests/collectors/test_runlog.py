"""run.log: records, submissions, continuation lines and foreign lines."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.autorl_bench.runlog import read_run_log
from arb_audit.collectors.reading import RunFolder

LOG = """\
2026-03-10 10:15:00 | INFO | === AutoRL-Bench ===
2026-03-10 10:15:00 | INFO | Agent: codex, Task: gsm8k, Model: Qwen/Qwen2.5-1.5B
2026-03-10 10:15:00 | INFO | Workspace: /w/gsm8k/20260310T101500_codex
2026-03-10 10:15:02 | INFO | [Local Mode] Starting evaluation server on port 5000...
2026-03-10 10:15:03 | INFO | [BASELINE] Set to 62.7
2026-03-10 10:15:03 | INFO | Baseline Score: 62.7
2026-03-10 10:15:04 | INFO | Running agent: codex
2026-03-10 10:20:00 | INFO | [SUBMIT #1] Started | model_path=output/a | b | gpu=0,1
2026-03-10 10:21:00 | INFO | [SUBMIT #1] Done | score=60.1, best=60.1
2026-03-10 10:22:00 | INFO | [SUBMIT] Cache hit (after lock) for output/a | b, score=60.1
2026-03-10 10:23:00 | WARNING | [SUBMIT] Invalid request
Traceback (most recent call last):
  File "server.py", line 1, in submit
ValueError: GPU {'7'} not in available GPUs ['0', '1'] (from CUDA_VISIBLE_DEVICES)
some stray output from a child process
2026-03-10 10:59:00 | WARNING | Agent timed out after 3600s, killing process group...
"""


def _read(tmp_path: Path, text: str | bytes) -> tuple[RunFolder, object]:
    path = tmp_path / "run.log"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    folder = RunFolder(tmp_path)
    return folder, read_run_log(folder)


def test_records_and_submissions_are_read(tmp_path: Path) -> None:
    folder, log = _read(tmp_path, LOG)
    assert log is not None
    assert (log.agent, log.task, log.base_model) == ("codex", "gsm8k", "Qwen/Qwen2.5-1.5B")  # type: ignore[attr-defined]
    assert log.workspace == "/w/gsm8k/20260310T101500_codex"  # type: ignore[attr-defined]
    assert log.baseline_score == 62.7  # type: ignore[attr-defined]
    assert log.agent_launched.at == datetime(2026, 3, 10, 10, 15, 4)  # type: ignore[attr-defined]
    assert log.agent_timed_out.value == "3600"  # type: ignore[attr-defined]
    kinds = [(e.kind, e.number, e.model_path, e.gpu, e.score) for e in log.events]  # type: ignore[attr-defined]
    assert kinds == [
        ("started", 1, "output/a | b", "0,1", None),
        ("done", 1, None, None, 60.1),
        ("cache_hit", None, "output/a | b", None, 60.1),
        ("invalid", None, None, None, None),
    ]
    assert log.events[-1].reason.startswith("ValueError: GPU {'7'}")  # type: ignore[attr-defined]
    assert (log.foreign.count, log.foreign.first) == (1, 15)  # type: ignore[attr-defined]
    assert folder.problems[0].path == "run.log" and "line 15" in folder.problems[0].message


def test_non_utf8_bytes_are_replaced_and_reported(tmp_path: Path) -> None:
    folder, log = _read(tmp_path, LOG.encode().replace(b"codex, Task", b"co\xffdex, Task"))
    assert log.agent == "co\ufffddex"  # type: ignore[attr-defined]
    assert any("not valid UTF-8 (first: line 2)" in p.message for p in folder.problems)


def test_a_file_with_no_record_is_reported(tmp_path: Path) -> None:
    folder, log = _read(tmp_path, "hello\nworld\n")
    assert log.events == []  # type: ignore[attr-defined]
    assert "no line in the AutoRL-Bench" in folder.problems[0].message


def test_overlong_line_is_cut_not_held(tmp_path: Path) -> None:
    folder, log = _read(tmp_path, "x" * 300_000 + "\n" + LOG)
    assert log.n_records == 12  # type: ignore[attr-defined]
    assert any("exceed" in p.message and "line 1" in p.message for p in folder.problems)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=80),
            st.builds(lambda m: f"2026-03-10 10:00:00 | INFO | {m}", st.text(max_size=60)),
            st.sampled_from(
                [
                    "2026-03-10 10:00:00 | INFO | [SUBMIT #x] Started | model_path=",
                    "2026-03-10 10:00:00 | INFO | [SUBMIT #3] Done | score=nan, best=inf",
                    "2026-13-45 99:99:99 | INFO | [SUBMIT] Cache hit for , score=",
                ]
            ),
        ),
        max_size=30,
    )
)
def test_any_text_parses_without_crashing(tmp_path_factory, lines: list[str]) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("log")
    (folder / "run.log").write_text("\n".join(lines), encoding="utf-8", errors="replace")
    log = read_run_log(RunFolder(folder))
    assert log is not None
    assert log.n_records + log.foreign.count <= max(log.n_lines, 0)
