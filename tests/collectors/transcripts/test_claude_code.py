"""Claude Code stream-json: calls paired with results, sessions, compactions, and every bad input."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.claude_code import ClaudeCodeFormat
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.read import read_transcript
from tests.transcript_lines import (
    claude_call,
    claude_compaction,
    claude_end,
    claude_init,
    claude_result,
    codex_thread,
    jsonl,
    legacy,
)

START = datetime(2026, 4, 10, 8, 0, 0, tzinfo=UTC)


def _read(tmp_path: Path, text: str, name: str = "solve_out.txt") -> Transcript:
    (tmp_path / name).write_text(text, encoding="utf-8")
    transcript = read_transcript(RunFolder(tmp_path), name)
    assert transcript is not None
    return transcript


def test_calls_pair_with_their_results_and_commands_get_exit_codes(tmp_path: Path) -> None:
    events: list[dict[str, Any] | str] = [
        claude_init(),
        "✓ CUDA available",
        claude_call("t1", "Bash", command="python train.py", description="train"),
        claude_result(
            "t1", "Exit code 1\nTraceback (most recent call last):\nKeyError: 'text'", is_error=True
        ),
        claude_call("t2", "Bash", command="python train.py"),
        claude_result("t2", "{'train_loss': 0.41}"),
        claude_call("t3", "Write", file_path="/home/ben/task/a.py", content="x = 1\n"),
        claude_result("t3", "File created successfully at: /home/ben/task/a.py"),
        claude_end(),
    ]
    t = _read(tmp_path, jsonl(events, start=START))
    assert t.format == "claude_code"
    assert [(c.tool, c.kind, c.exit_code, c.is_error) for c in t.calls] == [
        ("Bash", "command", 1, True),
        ("Bash", "command", 0, False),
        ("Write", "edit", None, False),
    ]
    assert t.calls[0].started_at == datetime(2026, 4, 10, 8, 0, 10, tzinfo=UTC)
    assert t.calls[0].ended_at == datetime(2026, 4, 10, 8, 0, 15, tzinfo=UTC)
    assert "KeyError" in (t.calls[0].error or "")
    assert t.non_json_lines == 1
    assert t.sessions[0].cwd == "/home/ben/task" and t.sessions[0].outcome == "success"
    assert t.sessions[0].cost_usd == 3.5
    assert t.problems == []


def test_edits_of_each_file_tool_are_read(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call(
            "e1", "Edit", file_path="/w/a.py", old_string="lr=1", new_string="lr=2", replace_all=True
        ),
        claude_call(
            "e2",
            "MultiEdit",
            file_path="/w/a.py",
            edits=[{"old_string": "a", "new_string": "b"}, {"old_string": "c", "new_string": "d"}],
        ),
        claude_call("e3", "NotebookEdit", notebook_path="/w/n.ipynb", cell_id="c1", new_source="print(1)"),
        claude_call("e4", "Read", file_path="/w/a.py"),
        claude_call("e5", "Read", file_path="/w/a.py", offset=10, limit=5),
        claude_call("e6", "TodoWrite", todos=[{"content": "train", "status": "pending"}]),
    ]
    t = _read(tmp_path, jsonl(events))
    edit, multi, notebook, read, partial, todo = t.calls
    assert [(e.op, e.old, e.new, e.replace_all) for e in edit.edits] == [("replace", "lr=1", "lr=2", True)]
    assert [(e.old, e.new) for e in multi.edits] == [("a", "b"), ("c", "d")]
    assert notebook.edits[0].op == "notebook" and notebook.edits[0].cell == "c1"
    assert (read.kind, read.read_path, read.read_whole) == ("read", "/w/a.py", True)
    assert partial.read_whole is False
    assert todo.kind == "other"
    # Six calls, none answered: the run was cut off, and that is said once.
    assert [p.message for p in t.problems] == [
        "6 tool call(s) have no result (first: Edit at line 2); the run may have been cut off while they ran"
    ]


def test_sessions_compactions_and_unknown_events(tmp_path: Path) -> None:
    events = [
        claude_init(session="s1"),
        claude_compaction(),
        {"type": "rate_limit_event", "limit": 1},
        claude_end(),
        claude_init(session="s2"),
        {"type": "telemetry", "x": 1},
        {"type": "telemetry", "x": 2},
        claude_end("error_max_turns"),
    ]
    t = _read(tmp_path, jsonl(events))
    assert [(s.number, s.session_id, s.outcome) for s in t.sessions] == [
        (1, "s1", "success"),
        (2, "s2", "error_max_turns"),
    ]
    assert t.compactions[0].session == 1 and "pre_tokens 180000" in t.compactions[0].detail
    assert t.unknown_events == {"telemetry": 2}
    assert any("telemetry ×2" in p.message for p in t.problems)


def test_truncated_last_line_and_fields_of_the_wrong_type(tmp_path: Path) -> None:
    good = jsonl([claude_init(), claude_call("t1", "Bash", command=["not", "a", "string"])])
    broken = json.dumps(claude_call("t2", "Write", file_path="/w/x.py", content="y" * 100))[:60]
    t = _read(tmp_path, good + broken)
    assert t.calls[0].kind == "other"  # a command that is not a string is not a command
    assert any(p.message.startswith("the last line is cut short") for p in t.problems)


def test_an_event_encoded_as_a_json_string_is_decoded_and_redacted(tmp_path: Path) -> None:
    inner = json.dumps(claude_call("t1", "Bash", command='export OPENAI_API_KEY="abcdef123456xyz" && ls'))
    t = _read(tmp_path, jsonl([claude_init()]) + json.dumps(inner) + "\n")
    assert [c.command for c in t.calls] == ['export OPENAI_API_KEY="<redacted>" && ls']


def test_keys_are_redacted_before_anything_is_kept(tmp_path: Path) -> None:
    key = "sk-proj-" + "A1b2C3d4" * 5
    events = [
        claude_init(),
        claude_call("t1", "Bash", command=f"export OPENAI_API_KEY={key} && env"),
        claude_result("t1", f"OPENAI_API_KEY={key}\nHF_TOKEN=hf_{'x1' * 17}"),
        claude_call("t2", "Write", file_path="/home/ben/task/k.py", content=f'KEY = "{key}"\n'),
    ]
    t = _read(tmp_path, jsonl(events))
    kept = json.dumps([[c.command, c.output, [e.content for e in c.edits]] for c in t.calls])
    assert key not in kept and "hf_x1x1" not in kept
    assert kept.count("<redacted>") == 4


def test_sniffing_tells_claude_from_the_others() -> None:
    assert ClaudeCodeFormat.sniff(claude_init())
    assert ClaudeCodeFormat.sniff(claude_call("t", "Bash", command="ls"))
    assert ClaudeCodeFormat.sniff(claude_end())
    assert not ClaudeCodeFormat.sniff(codex_thread())
    assert not ClaudeCodeFormat.sniff(legacy("1", "exec_command_begin"))
    assert not ClaudeCodeFormat.sniff({"type": "result", "status": "success", "stats": {}})  # Gemini


def test_a_file_with_no_transcript_in_it(tmp_path: Path) -> None:
    (tmp_path / "solve_out.txt").write_text("")
    assert read_transcript(RunFolder(tmp_path), "solve_out.txt") is None
    assert read_transcript(RunFolder(tmp_path), "absent.txt") is None
