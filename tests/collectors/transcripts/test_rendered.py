"""Readable renderings (``trace.txt``): Claude Code, Codex (main, new_judge_v2), Gemini and OpenCode."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.rendered import blocks as rendered
from arb_audit.collectors.transcripts.rendered import read_rendered


def _read(tmp_path: Path, text: str) -> Transcript | None:
    (tmp_path / "trace.txt").write_text(text, encoding="utf-8")
    return read_rendered(RunFolder(tmp_path), "trace.txt")


def _at(hour: int, minute: int, second: int) -> datetime:
    return datetime(2026, 4, 10, hour, minute, second, tzinfo=UTC)


# The Write body holds a line shaped like a dump field ("lr") and a lone "}", as a real file would.
CLAUDE = """\
Session start — sess-a1
  Model: claude-opus-4-6
  Tools: Bash, Edit, Write, Read
  Working dir: /home/ben/task

User — turn 1 | 2026-04-10T08:00:02Z
  Post-train the base model with SFT.

Assistant — turn 1 | 2026-04-10T08:00:05Z
  [thinking block]
    {
      "thinking": "Write the script first.",
      "signature": "c2ln"
    }

Assistant — turn 2 | 2026-04-10T08:00:10Z
  Tool call — Write (toolu_w1)
    {
      "file_path": "/home/ben/task/train_sft.py",
      "content": import torch
    from trl import SFTTrainer

    def main():
        cfg = {
      "lr": 2e-5,
    }
        print("training", cfg)

    }

User — turn 2 | 2026-04-10T08:00:11Z
  Tool result — Write (toolu_w1)
    File created successfully at: /home/ben/task/train_sft.py

Assistant — turn 3 | 2026-04-10T08:00:20Z
  Tool call — Bash (toolu_b1)
    $ cd /home/ben/task && python train_sft.py

User — turn 3 | 2026-04-10T08:05:20Z
  Tool result — Bash (toolu_b1)
    training {'lr': 2e-05}

    done

Assistant — turn 4 | 2026-04-10T08:05:30Z
  Tool call — Bash (toolu_b2)
    $ python evaluate.py --model final_model

User — turn 4 | 2026-04-10T08:05:31Z
  Tool result — Bash (toolu_b2)
    Exit code 1
    Traceback (most recent call last):
      File "evaluate.py", line 1, in <module>
    ModuleNotFoundError: No module named 'vllm'

Assistant — turn 5 | 2026-04-10T08:06:00Z
  Tool call — Read (toolu_r1)
    {
      "file_path": "/home/ben/task/evaluate.py"
    }

User — turn 5 | 2026-04-10T08:06:01Z
  Tool result — Read (toolu_r1)
         1→import vllm
         2→print("eval")

Assistant — turn 6 | 2026-04-10T08:07:00Z
  Tool call — Edit (toolu_e1)
    {
      "file_path": "/home/ben/task/train_sft.py",
      "old_string": "    print(\\"training\\", cfg)",
      "new_string":     print("training", cfg)
        return cfg,
      "replace_all": false
    }
  I will now check the edit.

System event — compact_boundary
  {
    "subtype": "compact_boundary",
    "session_id": "sess-a1",
    "compact_metadata": {
      "trigger": "auto",
      "pre_tokens": 155000
    }
  }

Result — success
  {
    "is_error": false,
    "num_turns": 6,
    "result": final_model saved
  in /home/ben/task/final_model,
    "total_cost_usd": 12.5,
    "_wall_ts": "2026-04-10T09:59:00Z"
  }

Session start — sess-b2
  Model: claude-opus-4-6
  Working dir: /home/ben/task

Assistant — turn 7 | 2026-04-10T10:00:05Z
  Tool call — Bash (toolu_b3)
    $ ls final_model
"""


def test_claude_sessions_and_calls_are_recovered(tmp_path: Path) -> None:
    t = _read(tmp_path, CLAUDE)
    assert t is not None
    assert (t.format, t.lossy) == ("claude_code_rendered", True)
    assert [(s.number, s.session_id, s.model, s.cwd) for s in t.sessions] == [
        (1, "sess-a1", "claude-opus-4-6", "/home/ben/task"),
        (2, "sess-b2", "claude-opus-4-6", "/home/ben/task"),
    ]
    first = t.sessions[0]
    assert (first.outcome, first.cost_usd, first.ended_at) == ("success", 12.5, _at(9, 59, 0))
    assert [(c.tool, c.kind, c.session) for c in t.calls] == [
        ("Write", "edit", 1),
        ("Bash", "command", 1),
        ("Bash", "command", 1),
        ("Read", "read", 1),
        ("Edit", "edit", 1),
        ("Bash", "command", 2),
    ]
    assert (t.first_at, t.last_at) == (_at(8, 0, 2), _at(10, 0, 5))


def test_claude_write_body_is_read_up_to_the_dump_end(tmp_path: Path) -> None:
    t = _read(tmp_path, CLAUDE)
    assert t is not None
    write = t.calls[0]
    assert write.call_id == "toolu_w1" and write.started_at == _at(8, 0, 10)
    [edit] = write.edits
    assert (edit.path, edit.op, edit.cut) == ("/home/ben/task/train_sft.py", "write", False)
    assert edit.content == (
        'import torch\nfrom trl import SFTTrainer\n\ndef main():\n    cfg = {\n  "lr": 2e-5,\n}\n'
        '    print("training", cfg)\n'
    )
    assert write.finished and write.output == "File created successfully at: /home/ben/task/train_sft.py"


def test_claude_commands_results_and_reads(tmp_path: Path) -> None:
    t = _read(tmp_path, CLAUDE)
    assert t is not None
    train, failing, read = t.calls[1], t.calls[2], t.calls[3]
    assert train.command == "cd /home/ben/task && python train_sft.py"
    assert train.output == "training {'lr': 2e-05}\n\ndone"
    assert (train.started_at, train.ended_at) == (_at(8, 0, 20), _at(8, 5, 20))
    # The rendering shows neither the exit code nor is_error: only the output says it failed.
    assert failing.finished and failing.exit_code is None and failing.is_error is None
    assert failing.output is not None and failing.output.endswith("No module named 'vllm'")
    assert (read.read_path, read.read_whole) == ("/home/ben/task/evaluate.py", True)
    assert read.full_output == '     1→import vllm\n     2→print("eval")'


def test_claude_edit_compaction_and_unfinished_call(tmp_path: Path) -> None:
    t = _read(tmp_path, CLAUDE)
    assert t is not None
    [edit] = t.calls[4].edits
    assert (edit.op, edit.old, edit.new, edit.replace_all, edit.cut) == (
        "replace",
        '    print("training", cfg)',
        '    print("training", cfg)\n    return cfg',
        False,
        False,
    )
    [compaction] = t.compactions
    assert (compaction.session, compaction.detail) == (1, "trigger: auto, pre_tokens: 155000")
    assert not t.calls[-1].finished
    assert any("have no result" in p.message for p in t.problems)
    assert "tool results' is_error flags (a failed tool call reads like a successful one)" in t.missing
    assert "exit codes of commands" in t.missing
    assert not any("event times" in m for m in t.missing)
    assert not any("marked cut" in m for m in t.missing)


OLD_CLAUDE = """\
Session start — sess-old
  Model: claude-sonnet-4-5

Assistant — turn 1
  Tool call — Write (toolu_1)
    {
      "file_path": "/home/ben/task/train_sft.py",
      "content": import torch
    print("x")
      "mode": "w"
    }

Assistant — turn 2
  Tool call — Bash (toolu_2)
    {
      "command": "python train_sft.py",
      "description": "train",
      "timeout": 600000
    }

User — turn 1
  Tool result — Bash (toolu_2)
    ok
"""


def test_claude_without_times_and_with_an_uncertain_write(tmp_path: Path) -> None:
    t = _read(tmp_path, OLD_CLAUDE)
    assert t is not None
    [edit] = t.calls[0].edits
    # A field after the raw body: where the body ends cannot be known, so the edit cannot apply.
    assert edit.cut and edit.content is not None and edit.content.startswith("import torch\n")
    assert t.calls[1].command == "python train_sft.py" and t.calls[1].output == "ok"
    assert t.first_at is None
    assert "event times (no [..Z] prefix and no time in the turn headers)" in t.missing
    assert any("1 file edit(s) whose dump lost its quoting" in m for m in t.missing)


def test_claude_file_cut_in_the_middle_of_a_write(tmp_path: Path) -> None:
    text = (
        "Session start — s1\n\nAssistant — turn 1 | 2026-04-10T08:00:00Z\n  Tool call — Write (toolu_1)\n"
        '    {\n      "file_path": "/home/ben/task/train_sft.py",\n'
        '      "content": import torch\n    def train('
    )
    t = _read(tmp_path, text)
    assert t is not None
    [call] = t.calls
    [edit] = call.edits
    assert edit.cut and edit.content == "import torch\ndef train("
    assert not call.finished and any("have no result" in p.message for p in t.problems)


def test_an_overlong_block_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rendered, "MAX_BLOCK_CHARS", 200)
    body = "\n".join(f"    line {n} of a long file" for n in range(40))
    text = (
        "Session start — s1\n\nAssistant — turn 1\n  Tool call — Write (toolu_1)\n"
        f'    {{\n      "file_path": "/home/ben/task/big.py",\n      "content": first\n{body}\n    }}\n'
    )
    t = _read(tmp_path, text)
    assert t is not None
    assert t.calls[0].edits[0].cut
    assert any("block(s) longer than 200 characters" in m for m in t.missing)
    assert any("exceed 200 characters (first at line 4)" in p.message for p in t.problems)


CODEX_V2 = """\
=== Event 1 | type: thread.started ===
  Thread: 0199aa00-demo

=== Event 2 | type: turn.started ===

=== Event 3 | type: item.completed (reasoning) | id: item_0 ===
  Item ID: item_0
  Reasoning:
    **Planning**

    Write train_sft.py, then run it.

=== Event 4 | type: item.started (command_execution) | id: item_1 ===
  Item ID: item_1
  Command: /bin/bash -lc "cat > train_sft.py <<'EOF'
  import trl
  print('training')
  EOF"
  Status: in_progress

=== Event 5 | type: item.completed (command_execution) | id: item_1 ===
  Item ID: item_1
  Command: /bin/bash -lc "cat > train_sft.py <<'EOF'
  import trl
  print('training')
  EOF"
  Status: completed
  Exit code: 0

=== Event 6 | type: item.completed (command_execution) | id: item_2 ===
  Item ID: item_2
  Command: /bin/bash -lc 'python train_sft.py'
  Status: failed
  Exit code: 1
  Output:
    Traceback (most recent call last):
      File "train_sft.py", line 1, in <module>
    ModuleNotFoundError: No module named 'trl'

WARNING: proceeding, even though we could not update PATH

=== Event 7 | type: item.completed (file_change) | id: item_3 ===
  Item ID: item_3
  {
    "changes": [
      {
        "path": "/home/ben/task/train_sft.py",
        "kind": "update"
      }
    ],
    "status": "completed"
  }

=== Event 8 | type: turn.completed ===
  {
    "usage": {
      "input_tokens": 52000,
      "output_tokens": 1800
    }
  }

=== Event 9 | type: thread.started ===
  Thread: 0199aa00-resume

=== Event 10 | type: item.started (command_execution) | id: item_0 ===
  Item ID: item_0
  Command: /bin/bash -lc 'sleep 3600'
  Status: in_progress
"""


def test_codex_new_judge_v2_rendering(tmp_path: Path) -> None:
    t = _read(tmp_path, CODEX_V2)
    assert t is not None
    assert t.format == "codex_rendered"
    assert [(s.number, s.session_id) for s in t.sessions] == [(1, "0199aa00-demo"), (2, "0199aa00-resume")]
    heredoc, failing, change, sleeping = t.calls
    assert heredoc.line == 13 and heredoc.result_line == 21
    assert (
        heredoc.command == "/bin/bash -lc \"cat > train_sft.py <<'EOF'\nimport trl\nprint('training')\nEOF\""
    )
    assert (heredoc.exit_code, heredoc.is_error, heredoc.output) == (0, False, None)
    assert failing.command == "/bin/bash -lc 'python train_sft.py'"
    assert (failing.exit_code, failing.is_error) == (1, True)
    assert failing.output == (
        'Traceback (most recent call last):\n  File "train_sft.py", line 1, in <module>\n'
        "ModuleNotFoundError: No module named 'trl'"
    )
    assert (change.kind, [(e.path, e.op) for e in change.edits]) == (
        "edit",
        [("/home/ben/task/train_sft.py", "touch")],
    )
    assert sleeping.session == 2 and not sleeping.finished
    assert t.non_json_lines == 1  # the WARNING line the renderer copied through
    assert all(c.started_at is None for c in t.calls)
    assert "event times of item events (6 item headers carry none)" in t.missing
    assert "file contents of file_change items (only each file's path and kind are shown)" in t.missing


CODEX_MAIN = """\
=== Event 1 | type: thread.started | ts: 2026-04-10T08:00:01Z ===
  {
    "thread_id": "0199aa00-main"
  }

=== Event 2 | type: turn.started | ts: 2026-04-10T08:00:01Z ===

=== Event 3 | type: item.completed | ts: 2026-04-10T08:00:09Z ===
  {
    "item": {
      "id": "item_1",
      "type": "command_execution",
      "command": "/bin/bash -lc 'nvidia-smi'",
      "aggregated_output": NVIDIA H100 80GB
  GPU 0: ok
  ,
      "exit_code": 0,
      "status": "completed"
    }
  }

=== Event 4 | type: item.completed | ts: 2026-04-10T08:00:30Z ===
  {
    "item": {
      "id": "item_2",
      "type": "command_execution",
      "command": "/bin/bash -lc 'python train_sft.py'",
      "aggregated_output": "ModuleNotFoundError: No module named 'trl'",
      "exit_code": 1,
      "status": "failed"
    }
  }

=== Event 5 | type: item.completed | ts: 2026-04-10T08:00:40Z ===
  {
    "item": {
      "id": "item_3",
      "type": "file_change",
      "changes": [
        {
          "path": "/home/ben/task/train_sft.py",
          "kind": "add"
        }
      ],
      "status": "completed"
    }
  }

=== Event 6 | type: item.completed | ts: 2026-04-10T08:01:00Z ===
  {
    "item": {
      "id": "item_4",
      "type": "command_execution",
      "command": "/bin/bash -lc 'cat train_sft.py'",
      "aggregated_output": import trl
      "exit_code": 5,
  print(trl)
  ,
      "exit_code": 0,
      "status": "completed"
    }
  }

=== Event 7 | type: item.completed | ts: 2026-04-10T08:02:00Z ===
  {
    "item": {
      "id": "item_5",
      "type": "command_exec
"""


def test_codex_main_rendering_with_json_dumps(tmp_path: Path) -> None:
    t = _read(tmp_path, CODEX_MAIN)
    assert t is not None
    assert t.format == "codex_rendered"
    [session] = t.sessions
    assert (session.session_id, session.started_at) == ("0199aa00-main", _at(8, 0, 1))
    smi, failing, change, cat = t.calls
    assert (smi.command, smi.output, smi.exit_code, smi.is_error) == (
        "/bin/bash -lc 'nvidia-smi'",
        "NVIDIA H100 80GB\nGPU 0: ok\n",
        0,
        False,
    )
    assert (smi.started_at, smi.ended_at) == (_at(8, 0, 9), _at(8, 0, 9))
    assert (failing.exit_code, failing.is_error) == (1, True)
    assert failing.output == "ModuleNotFoundError: No module named 'trl'"
    assert [(e.path, e.op) for e in change.edits] == [("/home/ben/task/train_sft.py", "touch")]
    # A line of output that looks like the exit_code field: the dump is read, but flagged inexact.
    assert cat.command == "/bin/bash -lc 'cat train_sft.py'"
    assert any("1 item dump(s)" in m for m in t.missing)
    # The final block is cut mid-dump: counted, never raised.
    assert not t.unknown_events
    assert any(
        "1 item event(s) hold a dump that could not be read (first at line 64)" in p.message
        for p in t.problems
    )
    assert (t.first_at, t.last_at) == (_at(8, 0, 1), _at(8, 2, 0))
    assert not any("event times" in m for m in t.missing)


GEMINI = """\
=== Event 1 | type: init | ts: 2026-04-10T08:00:00.000Z ===
  Timestamp: 2026-04-10T08:00:00.000Z
  Session: gem-sess-1
  Model: gemini-3-pro-preview

=== Event 2 | type: message (consolidated from 3 deltas) | ts: 2026-04-10T08:00:01Z -> 2026-04-10T08:00:02 ===
  Role: assistant
  Content:
    I will write the training script.

=== Event 3 | type: tool_use | ts: 2026-04-10T08:00:03.000Z ===
  Timestamp: 2026-04-10T08:00:03.000Z
  Tool call: write_file [w-1]
  Parameters:
    {
      "file_path": "/home/ben/task/train_sft.py",
      "content": import trl
    print("sft")

    }

=== Event 4 | type: tool_result | ts: 2026-04-10T08:00:04.000Z ===
  Timestamp: 2026-04-10T08:00:04.000Z
  Tool result for w-1 (success)
  Output:
    Successfully created and wrote to new file: /home/ben/task/train_sft.py.

=== Event 5 | type: tool_use | ts: 2026-04-10T08:00:05.000Z ===
  Timestamp: 2026-04-10T08:00:05.000Z
  Tool call: run_shell_command [s-1]
  Parameters:
    {
      "command": "python train_sft.py",
      "description": "Run SFT"
    }

=== Event 6 | type: tool_result | ts: 2026-04-10T08:00:09.000Z ===
  Timestamp: 2026-04-10T08:00:09.000Z
  Tool result for s-1 (error)
  Output:
    Command: python train_sft.py
    Output: ModuleNotFoundError: No module named 'trl'
    Exit Code: 1
  Error:
    {
      "type": "shell_error",
      "message": "Command exited with code 1"
    }

=== Event 7 | type: tool_use | ts: 2026-04-10T08:00:10.000Z ===
  Tool call: read_file [r-1]
  Parameters:
    {
      "absolute_path": "/home/ben/task/train_sft.py",
      "offset": 0,
      "limit": 20
    }

=== Event 8 | type: tool_result | ts: 2026-04-10T08:00:11.000Z ===
  Tool result for r-1 (success)
  Output:
    import trl

=== Event 9 | type: tool_use | ts: 2026-04-10T08:00:12.000Z ===
  Tool call: replace [e-1]
  Parameters:
    {
      "file_path": "/home/ben/task/train_sft.py",
      "old_string": "print(\\"sft\\")",
      "new_string": print("sft")
    print("done")
    }

=== Event 10 | type: result | ts: 2026-04-10T08:00:20.000Z ===
  Timestamp: 2026-04-10T08:00:20.000Z
  Status: success
  Stats: total_tokens=1000, input_tokens=900, output_tokens=100, tool_calls=4, duration_ms=20000
"""


def test_gemini_rendering(tmp_path: Path) -> None:
    t = _read(tmp_path, GEMINI)
    assert t is not None
    assert t.format == "gemini_rendered"
    [session] = t.sessions
    assert (session.session_id, session.model, session.outcome) == (
        "gem-sess-1",
        "gemini-3-pro-preview",
        "success",
    )
    write, shell, read, replace = t.calls
    assert [(e.op, e.path, e.content, e.cut) for e in write.edits] == [
        ("write", "/home/ben/task/train_sft.py", 'import trl\nprint("sft")\n', False)
    ]
    assert (write.is_error, write.ended_at) == (False, _at(8, 0, 4))
    assert (shell.kind, shell.command, shell.exit_code, shell.is_error) == (
        "command",
        "python train_sft.py",
        1,
        True,
    )
    assert shell.error == "Command exited with code 1"
    assert (read.kind, read.read_path, read.read_whole, read.output) == (
        "read",
        "/home/ben/task/train_sft.py",
        False,
        "import trl",
    )
    [edit] = replace.edits
    assert (edit.op, edit.old, edit.new, edit.cut) == (
        "replace",
        'print("sft")',
        'print("sft")\nprint("done")',
        False,
    )
    assert not replace.finished
    assert "exit codes of commands (except where the output text states one)" in t.missing


OPENCODE = """\
=== Event 1 | type: step_start | ts: 2026-01-08 23:35:00 UTC ===

=== Event 2 | type: tool_use | tool: write | status: completed | ts: 2026-01-08 23:35:02 UTC ===
  Title: home/ben/task/train_sft.py
  Input:
    {
      "filePath": "/home/ben/task/train_sft.py",
      "content": from trl import SFTTrainer
    SFTTrainer
    }
  Duration: 15ms

=== Event 3 | type: tool_use | tool: bash | status: completed | ts: 2026-01-08 23:35:12 UTC ===
  Title: Run training
  Input:
    $ python train_sft.py
  Output:
    step 1 loss 2.31
    step 2 loss 2.10
    ... [truncated]
  Duration: 10000ms

=== Event 4 | type: tool_use | tool: bash | status: error | ts: 2026-01-08 23:35:20 UTC ===
  Title: Evaluate
  Input:
    $ python evaluate.py
  Error:
    Command failed with exit status 1
  Duration: 300ms

=== Event 5 | type: tool_use | tool: read | status: completed | ts: 2026-01-08 23:35:21 UTC ===
  Title: home/ben/task/evaluate.py
  Input:
    {
      "filePath": "/home/ben/task/evaluate.py"
    }
  Output:
    <file>
    00001| import json
    </file>
  Duration: 2ms

=== Event 6 | NOT PARSABLE ===
  Error: Expecting value
  Raw line:
    npm WARN deprecated inflight@1.0.6

=== Event 7 | type: reasoning | ts: 2026-01-08 23:35:22 UTC ===
  {
    "type": "reasoning",
    "timestamp": 1767915322000,
    "sessionID": "ses_demo",
    "part": {
      "text": "Check the eval."
    }
  }

=== Event 8 | type: step_finish | ts: 2026-01-08 23:35:23 UTC ===
  Reason: stop
  Cost: $0.012000
  Tokens: input=1000, output=200
"""


def test_opencode_rendering(tmp_path: Path) -> None:
    t = _read(tmp_path, OPENCODE)
    assert t is not None
    assert t.format == "opencode_rendered"
    write, train, evaluate, read = t.calls
    assert [(e.op, e.path, e.content, e.cut) for e in write.edits] == [
        ("write", "/home/ben/task/train_sft.py", "from trl import SFTTrainer\nSFTTrainer", False)
    ]
    assert write.finished and write.call_id is None
    ended = datetime(2026, 1, 8, 23, 35, 12, tzinfo=UTC)
    assert (train.command, train.started_at, train.ended_at) == (
        "python train_sft.py",
        datetime(2026, 1, 8, 23, 35, 2, tzinfo=UTC),
        ended,
    )
    assert train.output == "step 1 loss 2.31\nstep 2 loss 2.10\n... [truncated]"
    assert (train.is_error, train.exit_code) == (False, None)
    assert (evaluate.is_error, evaluate.error) == (True, "Command failed with exit status 1")
    assert (read.read_path, read.full_output) == (
        "/home/ben/task/evaluate.py",
        "<file>\n00001| import json\n</file>",
    )
    assert t.non_json_lines == 1
    assert t.unknown_events["reasoning"] == 1
    assert [s.session_id for s in t.sessions] == ["ses_demo"]
    assert "the rest of 1 tool output(s) cut at 2,000 characters" in t.missing
    assert "exit codes of commands" in t.missing
    assert not t.problems[1:]  # only the unknown-event note


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Training started\nloss 2.3\nEvent 1 | type: x\n",
        '{"type":"thread.started","thread_id":"x"}\n',
        "tokens used\n12,345\n",
    ],
)
def test_text_that_is_no_rendering_is_none(tmp_path: Path, text: str) -> None:
    assert _read(tmp_path, text) is None


def test_absent_file_is_none(tmp_path: Path) -> None:
    assert read_rendered(RunFolder(tmp_path), "trace.txt") is None


HEADERS = [
    "Session start — s",
    "Assistant — turn 1 | 2026-04-10T08:00:00Z",
    "User — turn 2 | 0001-01-01T00:00:00Z",
    "  Tool call — Write (t1)",
    "  Tool call — Bash (t1)",
    "  Tool result — Bash (t1)",
    "  Tool call — MultiEdit (t2)",
    "System event — compact_boundary",
    "Result — success",
    "=== Event 1 | type: item.completed | ts: 2026-04-10T08:00:00Z ===",
    "=== Event 2 | type: item.completed (command_execution) | id: item_1 ===",
    "=== Event 3 | type: tool_use | tool: bash | status: completed | ts: 0001-01-01 00:00:00 UTC ===",
    "=== Event 4 | type: tool_use | ts: 2026-04-10T08:00:00Z ===",
    "=== Event 5 | type: tool_result | ts: x ===",
    "=== Event 6 | NOT PARSABLE ===",
    "=== Event 7 | type: patch_apply_begin | id: 0 ===",
    "=== Event 8 | type: exec_command_end ===",
]
JUNK = [
    "    {",
    "    }",
    "{",
    "}",
    "  {",
    "  }",
    '      "content": x',
    '      "edits": [',
    '      "file_path": "/a"',
    '  "item": {',
    '    "changes": [',
    "      {",
    '    "exit_code": 99999999999,',
    "    $ ls",
    "  Command: x",
    "  Exit code: -1",
    "  Output:",
    "  Duration: 99999999999999ms",
    "  Tool call: write_file [w]",
    "  Parameters:",
    "  Tool result for w (error)",
    "  Call ID: c",
    "  Patch:",
    "    *** Update File: a.py",
    "    *** Delete File: b.py",
    "  Error:",
    ",",
    "",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(HEADERS), st.sampled_from(JUNK), st.text(max_size=30)),
        max_size=40,
    )
)
def test_header_like_text_never_raises(parts: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        transcript = _read(Path(folder), "\n".join(parts))
    assert transcript is None or transcript.lossy


CODEX_LEGACY = """\
=== Event 1 | type: thread.started ===
  Thread: 0199aa00-legacy

=== Event 2 | type: session_configured | id: 0 | ts: 2026-04-10T08:00:00Z ===
  Session: sess-legacy
  Model: gpt-5.1-codex
  Working directory: /home/ben/task

=== Event 3 | type: exec_command_begin | id: 0 | ts: 2026-04-10T08:00:05Z ===
  Call ID: call_1
  Command: bash -lc 'python train_sft.py'
  Working directory: /home/ben/task

=== Event 4 | type: exec_command_end | id: 0 | ts: 2026-04-10T08:00:09Z ===
  Call ID: call_1
  Command: bash -lc 'python train_sft.py'
  Exit code: 1
  Stderr:
    Traceback (most recent call last):
    ValueError: lr must be positive

=== Event 5 | type: patch_apply_begin | id: 0 | ts: 2026-04-10T08:00:20Z ===
  Call ID: call_2
  Patch:
    *** Begin Patch
    *** Update File: train_sft.py
    @@
    -lr = -1e-5
    +lr = 2e-5
    *** Delete File: old_train.py
    *** End Patch

=== Event 6 | type: patch_apply_end | id: 0 | ts: 2026-04-10T08:00:21Z ===
  Call ID: call_2
  Success: True
"""


def test_codex_legacy_events_inside_a_rendering(tmp_path: Path) -> None:
    t = _read(tmp_path, CODEX_LEGACY)
    assert t is not None
    assert [(s.session_id, s.model, s.cwd) for s in t.sessions] == [
        ("0199aa00-legacy", None, None),
        ("sess-legacy", "gpt-5.1-codex", "/home/ben/task"),
    ]
    run, patch = t.calls
    assert (run.command, run.cwd, run.exit_code, run.is_error) == (
        "bash -lc 'python train_sft.py'",
        "/home/ben/task",
        1,
        True,
    )
    assert run.output == "Traceback (most recent call last):\nValueError: lr must be positive"
    assert (run.started_at, run.ended_at) == (_at(8, 0, 5), _at(8, 0, 9))
    assert [(e.op, e.path, e.patch) for e in patch.edits] == [
        ("patch", "train_sft.py", "@@\n-lr = -1e-5\n+lr = 2e-5"),
        ("delete", "old_train.py", None),
    ]
    assert (patch.finished, patch.is_error) == (True, False)


MULTI_EDIT = """\
Session start — s1

Assistant — turn 1 | 2026-04-10T08:00:00Z
  Tool call — MultiEdit (toolu_m1)
    {
      "file_path": "/home/ben/task/train_sft.py",
      "edits": [
        {
          "old_string": lr = 1e-5
    epochs = 1,
          "new_string": lr = 2e-5
    epochs = 3
        },
        {
          "old_string": "model_name = 'base'",
          "new_string": "model_name = 'Qwen/Qwen3-4B-Base'",
          "replace_all": true
        }
      ]
    }
"""


def test_claude_multi_edit_with_raw_strings(tmp_path: Path) -> None:
    t = _read(tmp_path, MULTI_EDIT)
    assert t is not None
    [call] = t.calls
    assert call.kind == "edit"
    assert [(e.op, e.old, e.new, e.replace_all, e.cut) for e in call.edits] == [
        ("replace", "lr = 1e-5\nepochs = 1", "lr = 2e-5\nepochs = 3", False, False),
        ("replace", "model_name = 'base'", "model_name = 'Qwen/Qwen3-4B-Base'", True, False),
    ]


OPENCODE_EDIT = """\
=== Event 1 | type: tool_use | tool: edit | status: completed | ts: 2026-01-08 23:40:00 UTC ===
  Title: home/ben/task/train_sft.py
  Input:
    {
      "filePath": "/home/ben/task/train_sft.py",
      "oldString": "lr=1e-5",
      "newString": lr=2e-5
    warmup=100,
      "replaceAll": false
    }
  Duration: 4ms

=== Event 2 | type: tool_use | tool: write | status: completed | ts: 2026-01-08 23:40:05 UTC ===
  Title: home/ben/task/notes.md
  Input:
    File: /home/ben/task/notes.md
    content: # Notes
    lr=2e-5
"""


def test_opencode_edit_from_its_dump_and_the_file_form(tmp_path: Path) -> None:
    t = _read(tmp_path, OPENCODE_EDIT)
    assert t is not None
    edit, write = t.calls
    assert [(e.op, e.old, e.new, e.replace_all, e.cut) for e in edit.edits] == [
        ("replace", "lr=1e-5", "lr=2e-5\nwarmup=100", False, False)
    ]
    assert (edit.started_at, edit.ended_at) == (
        datetime(2026, 1, 8, 23, 39, 59, 996000, tzinfo=UTC),
        datetime(2026, 1, 8, 23, 40, 0, tzinfo=UTC),
    )
    assert [(e.op, e.path, e.content) for e in write.edits] == [
        ("write", "/home/ben/task/notes.md", "# Notes\nlr=2e-5")
    ]
