"""OpenCode run --format json: sessions by sessionID, finished tool calls, costs, hostile lines, sniffing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.opencode import OpenCodeFormat
from arb_audit.collectors.transcripts.stream import Event
from tests.transcript_lines import calls_by_id, read_lines

TASK = "/home/ben/task"
TRAIN = f"{TASK}/train_sft.py"
TRAIN_BODY = """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments

BASE = "google/gemma-3-4b-pt"
args = TrainingArguments(output_dir="final_model", learning_rate=1e-5, bf16=True)
"""
PATCH = f"""\
*** Begin Patch
*** Update File: {TRAIN}
@@
-args = TrainingArguments(output_dir="final_model", learning_rate=1e-5, bf16=True)
+args = TrainingArguments(output_dir="final_model", learning_rate=2e-5, bf16=True, num_train_epochs=2)
*** Add File: {TASK}/data/prompt.txt
+Solve the problem step by step.
*** Delete File: {TASK}/scratch.py
*** End Patch"""
T0 = 1775808000000
"""2026-04-10T08:00:00Z in epoch milliseconds."""
SES_A, SES_B = "ses_4f1a9c", "ses_9b2c07"


def ms(second: float) -> int:
    return T0 + int(second * 1000)


def at(second: float) -> datetime:
    return datetime.fromtimestamp(ms(second) / 1000, tz=UTC)


def ev(kind: str, second: float, session: str = SES_A, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": ms(second), "sessionID": session, **fields})


def tool(
    second: float,
    call_id: str | None,
    name: str,
    inputs: Any,
    *,
    status: str = "completed",
    output: str | None = "",
    session: str = SES_A,
    took: float = 1.0,
    **state: Any,
) -> str:
    body: dict[str, Any] = {"status": status, "input": inputs, "title": name}
    if output is not None:
        body["output"] = output
    body["time"] = {"start": ms(second - took), "end": ms(second)}
    part: dict[str, Any] = {"id": f"prt_{second}", "sessionID": session, "type": "tool", "tool": name}
    if call_id is not None:
        part["callID"] = call_id
    part["state"] = {**body, **state}
    return ev("tool_use", second, session, part=part)


def step_finish(second: float, reason: str, cost: float, session: str = SES_A) -> str:
    tokens = {"input": 1200, "output": 300, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    return ev(
        "step_finish",
        second,
        session,
        part={"type": "step-finish", "reason": reason, "cost": cost, "tokens": tokens},
    )


TRANSCRIPT = [
    "[2026-04-10T08:00:00Z] " + ev("step_start", 0, part={"type": "step-start"}),
    ev("text", 1, part={"type": "text", "text": "I'll write a training script."}),
    tool(3, "toolu_01", "write", {"filePath": TRAIN, "content": TRAIN_BODY}, output=""),
    "[2026-04-10T08:00:05Z] "
    + tool(
        5,
        "toolu_02",
        "edit",
        {"filePath": TRAIN, "oldString": "learning_rate=1e-5", "newString": "learning_rate=3e-5"},
    ),
    "npm WARN config production Use `--omit=dev` instead.",
    tool(
        65,
        "toolu_03",
        "bash",
        {"command": "python train_sft.py", "description": "Train the model", "workdir": TASK},
        output="{'train_loss': 0.71}\n",
        took=58,
        metadata={"exit": 0, "description": "Train the model"},
    ),
    step_finish(66, "tool-calls", 0.0123),
    ev("step_start", 67, part={"type": "step-start"}),
    tool(
        70,
        "toolu_04",
        "bash",
        {"command": "python evaluate.py --model final_model", "description": "Evaluate"},
        output="ModuleNotFoundError: No module named 'lm_eval'\n",
        metadata={"exit": 1},
    ),
    tool(
        71,
        "toolu_05",
        "read",
        {"filePath": f"{TASK}/evaluate.py"},
        output="<file>\n00001| import lm_eval\n</file>",
    ),
    tool(72, "toolu_06", "read", {"filePath": f"{TASK}/train.log", "offset": 200, "limit": 40}, output="..."),
    tool(
        73,
        "toolu_07",
        "edit",
        {"filePath": TRAIN, "oldString": "bf16=False", "newString": "bf16=True"},
        status="error",
        output=None,
        error="oldString not found in content",
    ),
    tool(
        74,
        "toolu_08",
        "apply_patch",
        {"patchText": PATCH},
        output="Success. Updated the following files: ...",
    ),
    tool(75, "toolu_09", "glob", {"pattern": "**/*.py"}, output=f"{TRAIN}\n"),
    ev("permission.asked", 76, permission={"type": "bash"}),
    tool(77, "toolu_10", "bash", "nvidia-smi", output="GPU 0: NVIDIA H100"),
    tool(
        78,
        None,
        "edit",
        {"filePath": TRAIN, "oldString": "1e-5", "newString": "2e-5", "replaceAll": True},
        output="",
    ),
    step_finish(79, "stop", 0.02),
    ev(
        "error",
        80,
        error={"name": "APIError", "data": {"message": "Rate limit exceeded", "isRetryable": True}},
    ),
    ev("step_start", 120, SES_B, part={"type": "step-start"}),
    tool(122, "toolu_11", "bash", {"command": "ls final_model"}, session=SES_B, metadata={"exit": 0}),
    step_finish(123, "stop", 0.004, SES_B),
    '{"type":"tool_use","timestamp":1775808124000,"sessionID":"ses_9b2c07","part":{"tool":"bash","callID":"tol',
]


def read(tmp_path: Path, lines: list[str]) -> Transcript:
    return read_lines(tmp_path, lines, "opencode")


def test_every_tool_call_is_read_finished(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    assert [(c.tool, c.kind) for c in t.calls] == [
        ("write", "edit"),
        ("edit", "edit"),
        ("bash", "command"),
        ("bash", "command"),
        ("read", "read"),
        ("read", "read"),
        ("edit", "edit"),
        ("apply_patch", "edit"),
        ("glob", "other"),
        ("bash", "command"),
        ("edit", "edit"),
        ("bash", "command"),
    ]
    assert all(c.finished and c.result_line == c.line for c in t.calls)
    assert [c.line for c in t.calls][:3] == [3, 4, 6]
    # the cut last line is the reader's to report, and no call waits for a result
    assert [p.message.split(" (")[0] for p in t.problems] == [
        "the last line is cut short",
        "event types not understood, counted and skipped: permission.asked ×1",
    ]


def test_edits_hold_the_body_and_the_replacement(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    (write,) = calls["toolu_01"].edits
    assert (write.op, write.path, write.content, write.cut) == ("write", TRAIN, TRAIN_BODY, False)
    (edit,) = calls["toolu_02"].edits
    assert (edit.op, edit.path, edit.old, edit.new, edit.replace_all) == (
        "replace",
        TRAIN,
        "learning_rate=1e-5",
        "learning_rate=3e-5",
        False,
    )
    assert (calls["toolu_02"].is_error, calls["toolu_02"].error) == (False, None)


def test_a_call_without_an_id_is_still_finished(tmp_path: Path) -> None:
    unnamed = calls_by_id(read(tmp_path, TRANSCRIPT))[None]
    assert (unnamed.finished, unnamed.is_error, unnamed.ended_at) == (True, False, at(78))
    assert unnamed.edits[0].replace_all is True


def test_an_apply_patch_gives_one_edit_per_file_section(tmp_path: Path) -> None:
    edits = calls_by_id(read(tmp_path, TRANSCRIPT))["toolu_08"].edits
    assert [(e.op, e.path) for e in edits] == [
        ("patch", TRAIN),
        ("write", f"{TASK}/data/prompt.txt"),
        ("delete", f"{TASK}/scratch.py"),
    ]
    assert "+args = TrainingArguments(" in (edits[0].patch or "")
    assert "Add File" not in (edits[0].patch or "")
    assert edits[1].content == "Solve the problem step by step.\n"


def test_commands_get_exit_codes_and_the_working_directory(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    train = calls["toolu_03"]
    assert (train.command, train.cwd, train.exit_code, train.is_error) == (
        "python train_sft.py",
        TASK,
        0,
        False,
    )
    assert (train.started_at, train.ended_at) == (at(7), at(65))
    failed = calls["toolu_04"]
    assert (failed.command, failed.cwd, failed.exit_code, failed.is_error) == (
        "python evaluate.py --model final_model",
        None,
        1,
        True,
    )
    assert failed.output == "ModuleNotFoundError: No module named 'lm_eval'\n"


def test_reads_and_a_failed_edit(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    whole, part = calls["toolu_05"], calls["toolu_06"]
    assert (whole.read_path, whole.read_whole) == (f"{TASK}/evaluate.py", True)
    assert "import lm_eval" in (whole.full_output or "")
    assert (part.read_path, part.read_whole) == (f"{TASK}/train.log", False)
    failed = calls["toolu_07"]
    assert (failed.is_error, failed.error, failed.output) == (True, "oldString not found in content", None)
    assert failed.edits[0].old == "bf16=False"


def test_wrong_types_are_taken_as_absent_and_other_tools_are_other(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    assert (calls["toolu_10"].kind, calls["toolu_10"].command, calls["toolu_10"].finished) == (
        "command",
        None,
        True,
    )
    assert calls["toolu_09"].output == f"{TRAIN}\n"


def test_two_sessions_with_costs_and_outcomes(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    first, second = t.sessions
    assert (first.number, first.line, first.session_id, first.started_at) == (1, 1, SES_A, at(0))
    assert first.cost_usd is not None and abs(first.cost_usd - 0.0323) < 1e-9
    assert (first.outcome, first.ended_at) == ("error: APIError", at(80))
    assert (second.number, second.session_id, second.started_at, second.outcome) == (
        2,
        SES_B,
        at(120),
        "stop",
    )
    assert second.cost_usd == 0.004
    assert [c.session for c in t.calls] == [1] * 11 + [2]
    assert (t.first_at, t.last_at) == (at(0), at(123))


def test_unknown_types_are_counted(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    assert t.unknown_events == {"permission.asked": 1}


def test_a_running_call_is_finished_by_its_later_event(tmp_path: Path) -> None:
    t = read(
        tmp_path,
        [
            tool(1, "c1", "bash", {"command": "sleep 600"}, status="running", output=None),
            tool(9, "c1", "bash", {"command": "sleep 600"}, took=8, metadata={"exit": 137}),
            tool(10, "c2", "bash", {"command": "python train_sft.py"}, status="running", output=None),
        ],
    )
    done, stuck = t.calls
    assert (done.line, done.result_line, done.exit_code, done.is_error) == (1, 2, 137, True)
    assert (stuck.call_id, stuck.finished) == ("c2", False)
    assert any("have no result" in p.message for p in t.problems)


def test_the_line_prefix_times_an_event_without_a_timestamp(tmp_path: Path) -> None:
    line = json.dumps({"type": "step_start", "sessionID": SES_A, "part": {"type": "step-start"}})
    timed = ev("step_start", 9, SES_A, part={"type": "step-start"})
    t = read(tmp_path, ["[2026-04-10T08:00:05Z] " + line, timed])
    assert t.sessions[0].started_at == datetime(2026, 4, 10, 8, 0, 5, tzinfo=UTC)


CLAUDE: list[dict[str, Any]] = [
    {"type": "system", "subtype": "init", "session_id": "c1", "model": "claude-opus-4-6", "cwd": TASK},
    {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}},
    {"type": "result", "subtype": "success", "session_id": "c1", "total_cost_usd": 1.5, "is_error": False},
]
CODEX: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": "0199"},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "ls"}},
    {"id": "0", "msg": {"type": "task_started"}},
]
GEMINI: list[dict[str, Any]] = [
    {"type": "init", "timestamp": "2026-04-10T08:00:00.000Z", "session_id": "g1", "model": "gemini-2.5-pro"},
    {
        "type": "tool_use",
        "timestamp": "2026-04-10T08:00:04.000Z",
        "tool_name": "run_shell_command",
        "tool_id": "t",
    },
    {"type": "result", "timestamp": "2026-04-10T08:00:09.000Z", "status": "success", "stats": {}},
]
OPENCODE = [json.loads(line) for line in TRANSCRIPT[:-1] if line.startswith("{")]


def test_sniff_claims_opencode_events() -> None:
    assert OPENCODE and all(OpenCodeFormat.sniff(data) for data in OPENCODE)
    assert OpenCodeFormat.sniff({"type": "error", "timestamp": T0, "sessionID": SES_A, "error": {}})


def test_sniff_leaves_other_formats_alone() -> None:
    for data in [*CLAUDE, *CODEX, *GEMINI]:
        assert not OpenCodeFormat.sniff(data), data
    assert not OpenCodeFormat.sniff({"type": "text", "timestamp": "2026-04-10T08:00:00Z", "part": {}})
    assert not OpenCodeFormat.sniff({"type": "text", "timestamp": True, "part": {}})
    assert not OpenCodeFormat.sniff({"type": "text", "timestamp": -5, "part": {}})
    assert not OpenCodeFormat.sniff({"type": "text", "timestamp": T0})
    assert not OpenCodeFormat.sniff({"timestamp": T0, "part": {}})


KEYS = ["type", "timestamp", "sessionID", "part", "error", "tool", "callID", "state", "status", "input"]
KEYS += ["output", "metadata", "exit", "time", "start", "end", "reason", "cost", "tokens", "name", "data"]
INPUT_KEYS = ["command", "workdir", "filePath", "content", "oldString", "newString", "replaceAll"]
INPUT_KEYS += ["offset", "limit", "patchText", "edits"]
WORDS = st.sampled_from(
    [
        *("tool_use", "step_finish", "step_start", "error", "text", "completed", "running", "c1", "c2"),
        *("bash", "read", "write", "edit", "multiedit", "apply_patch", "patch", "glob", SES_A, SES_B, ""),
        *(PATCH, "*** Begin Patch\n*** Update File: a\n", "*** Move to: b"),
    ]
)
SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | WORDS | st.just(T0)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)
INPUTS = st.dictionaries(st.sampled_from(INPUT_KEYS), SCALAR | JSON, max_size=6)
STATE = st.fixed_dictionaries(
    {"status": st.sampled_from(["completed", "error", "running"]) | SCALAR, "input": INPUTS | JSON},
    optional={"output": JSON, "error": JSON, "metadata": JSON, "time": JSON},
)
PART = st.fixed_dictionaries(
    {"tool": st.sampled_from(["bash", "read", "write", "edit", "multiedit", "apply_patch"]) | SCALAR},
    optional={"callID": SCALAR, "state": STATE | JSON, "reason": SCALAR, "cost": SCALAR, "sessionID": SCALAR},
)
EVENT = st.fixed_dictionaries(
    {"type": st.sampled_from(["tool_use", "step_finish", "error", "text", "bogus"]) | JSON},
    optional={"timestamp": SCALAR, "sessionID": SCALAR, "part": PART | JSON, "error": JSON},
) | st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(EVENT, max_size=8))
def test_any_event_shapes_are_read_without_raising(batch: list[dict[str, Any]]) -> None:
    t = Transcript("t.jsonl", format=OpenCodeFormat.name)
    fmt = OpenCodeFormat()
    for line, data in enumerate(batch, 1):
        OpenCodeFormat.sniff(data)
        fmt.feed(Event(line, None, data), t)
    fmt.finish(t)
    t.close()
