"""Gemini CLI stream-json: sessions, tool calls and their outcomes, hostile lines, format sniffing."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.gemini import GeminiFormat
from arb_audit.collectors.transcripts.stream import Event
from tests.transcript_lines import calls_by_id, read_lines

TASK = "/home/ben/task"
TRAIN = f"{TASK}/train_sft.py"
TRAIN_BODY = """\
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

data = load_dataset("meta-math/MetaMathQA", split="train[:20000]")
config = SFTConfig(output_dir="final_model", learning_rate=1e-5, num_train_epochs=1)
SFTTrainer(model="Qwen/Qwen3-1.7B-Base", train_dataset=data, args=config).train()
"""
SHELL_OK = """\
Command: python train_sft.py
Directory: (root)
Stdout: {'loss': 0.8123, 'epoch': 1.0}
Stderr: (empty)
Error: (none)
Exit Code: 0
Signal: (none)
Background PIDs: (none)
Process Group PGID: 4242"""
SHELL_FAILED = """\
Output: Traceback (most recent call last):
  File "/home/ben/task/evaluate.py", line 3, in <module>
    import vllm
ModuleNotFoundError: No module named 'vllm'
Error: (none)
Exit Code: 1
Signal: (none)"""


def stamp(second: int, minute: int = 0, hour: int = 8) -> str:
    return f"2026-04-10T{hour:02d}:{minute:02d}:{second:02d}.250Z"


def at(second: int, minute: int = 0, hour: int = 8) -> datetime:
    return datetime(2026, 4, 10, hour, minute, second, 250000, tzinfo=UTC)


def ev(kind: str, second: int | None, **fields: Any) -> str:
    data: dict[str, Any] = {"type": kind}
    if second is not None:
        data["timestamp"] = stamp(second)
    return json.dumps({**data, **fields})


def use(second: int, tool_id: str, tool: str, **params: Any) -> str:
    return ev("tool_use", second, tool_name=tool, tool_id=tool_id, parameters=params)


def result(second: int, tool_id: str, status: str = "success", **fields: Any) -> str:
    return ev("tool_result", second, tool_id=tool_id, status=status, **fields)


TRANSCRIPT = [
    "[2026-04-10T08:00:00Z] " + ev("init", 0, session_id="8c1f-a", model="gemini-2.5-pro"),
    ev("message", 1, role="user", content="Post-train Qwen3-1.7B-Base for GSM8K within 10 hours."),
    "Loaded cached credentials.",
    ev("message", 2, role="assistant", content="I'll write an SFT script first.", delta=True),
    use(3, "write-1", "write_file", file_path=TRAIN, content=TRAIN_BODY),
    result(4, "write-1", output=f"Successfully created and wrote to new file: {TRAIN}."),
    use(
        5,
        "replace-1",
        "replace",
        file_path=TRAIN,
        old_string="learning_rate=1e-5",
        new_string="learning_rate=2e-5",
    ),
    result(6, "replace-1", output="Successfully modified file."),
    # no timestamp of its own: the line's prefix is its time
    "[2026-04-10T08:00:07Z] "
    + ev(
        "tool_use",
        None,
        tool_name="run_shell_command",
        tool_id="shell-1",
        parameters={"command": "python train_sft.py", "description": "Train", "directory": TASK},
    ),
    "[2026-04-10T08:40:00Z] " + result(8, "shell-1", output=SHELL_OK),
    use(9, "shell-2", "run_shell_command", command="python evaluate.py --limit 50"),
    "Warning: could not flush telemetry",
    result(10, "shell-2", output=SHELL_FAILED),
    use(11, "read-1", "read_file", absolute_path=f"{TASK}/evaluate.py"),
    result(12, "read-1", output="import vllm\n"),
    use(13, "read-2", "read_file", file_path=f"{TASK}/logs/train.log", offset=100, limit=50),
    result(
        14, "read-2", "error", error={"type": "file_not_found", "message": "File not found: logs/train.log"}
    ),
    use(15, "search-1", "google_web_search", query="Qwen3 SFT learning rate GSM8K"),
    result(16, "search-1", output="Search results for ..."),
    ev("heartbeat", 17, seq=3),
    ev("tool_use", 18, tool_name="run_shell_command", tool_id="shell-3", parameters="nvidia-smi"),
    result(19, "shell-3", "error", error="Tool execution denied by policy."),
    use(
        20,
        "replace-2",
        "replace",
        file_path=TRAIN,
        old_string="1e-5",
        new_string="3e-5",
        expected_replacements=2,
    ),
    result(21, "replace-2", output="Successfully modified file."),
    ev("error", 22, severity="warning", message="Loop detected, stopping execution"),
    ev("result", 23, status="success", stats={"total_tokens": 91234, "duration_ms": 23000, "tool_calls": 9}),
    ev("init", 30, session_id="8c1f-b", model="gemini-2.5-pro"),
    use(31, "shell-4", "run_shell_command", command="ls final_model"),
    result(32, "shell-4", output="Output: config.json\nmodel.safetensors\nExit Code: (none)"),
    use(33, "write-2", "write_file", file_path=f"{TASK}/notes.md", content="# Notes\n"),
    '{"type":"tool_result","timestamp":"2026-04-10T08:00:34.250Z","tool_id":"write-2","status":"succ',
]


def read(tmp_path: Path, lines: list[str]) -> Transcript:
    return read_lines(tmp_path, lines, "gemini")


def test_every_tool_call_is_read_in_order(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    assert [(c.tool, c.kind) for c in t.calls] == [
        ("write_file", "edit"),
        ("replace", "edit"),
        ("run_shell_command", "command"),
        ("run_shell_command", "command"),
        ("read_file", "read"),
        ("read_file", "read"),
        ("google_web_search", "other"),
        ("run_shell_command", "command"),
        ("replace", "edit"),
        ("run_shell_command", "command"),
        ("write_file", "edit"),
    ]
    assert [c.line for c in t.calls][:3] == [5, 7, 9]


def test_edits_hold_the_body_and_the_replacement(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    (write,) = calls["write-1"].edits
    assert (write.op, write.path, write.content, write.cut) == ("write", TRAIN, TRAIN_BODY, False)
    (replace,) = calls["replace-1"].edits
    assert (replace.op, replace.path, replace.old, replace.new) == (
        "replace",
        TRAIN,
        "learning_rate=1e-5",
        "learning_rate=2e-5",
    )
    assert replace.replace_all is False
    assert calls["replace-2"].edits[0].replace_all is True
    assert calls["write-1"].is_error is False and calls["write-1"].finished


def test_shell_commands_get_their_exit_codes(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    train = calls["shell-1"]
    assert (train.command, train.cwd, train.exit_code, train.is_error) == (
        "python train_sft.py",
        TASK,
        0,
        False,
    )
    failed = calls["shell-2"]
    assert failed.command == "python evaluate.py --limit 50"
    assert (failed.cwd, failed.exit_code, failed.is_error) == (None, 1, True)
    assert "No module named 'vllm'" in (failed.output or "")
    assert calls["shell-4"].exit_code is None  # "Exit Code: (none)" says nothing


def test_reads_and_failed_tools(tmp_path: Path) -> None:
    calls = calls_by_id(read(tmp_path, TRANSCRIPT))
    whole = calls["read-1"]
    assert (whole.read_path, whole.read_whole, whole.full_output) == (
        f"{TASK}/evaluate.py",
        True,
        "import vllm\n",
    )
    part = calls["read-2"]
    assert (part.read_path, part.read_whole) == (f"{TASK}/logs/train.log", False)
    assert (part.is_error, part.error) == (True, "File not found: logs/train.log")
    denied = calls["shell-3"]
    assert (denied.is_error, denied.error) == (True, "Tool execution denied by policy.")


def test_a_field_of_the_wrong_type_is_taken_as_absent(tmp_path: Path) -> None:
    denied = calls_by_id(read(tmp_path, TRANSCRIPT))["shell-3"]
    assert (denied.kind, denied.command, denied.finished) == ("command", None, True)


def test_times_come_from_the_event_or_else_the_line_prefix(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    calls = calls_by_id(t)
    assert calls["write-1"].started_at == at(3)
    assert calls["write-1"].ended_at == at(4)
    assert calls["shell-1"].started_at == datetime(2026, 4, 10, 8, 0, 7, tzinfo=UTC)
    assert calls["shell-1"].ended_at == at(8)  # the event's own time wins over its prefix
    # The span takes in every time seen: the first line's prefix (whole seconds) is the earliest.
    assert (t.first_at, t.last_at) == (
        datetime(2026, 4, 10, 8, 0, 0, tzinfo=UTC),
        datetime(2026, 4, 10, 8, 40, tzinfo=UTC),
    )


def test_two_sessions_each_with_its_calls(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    first, second = t.sessions
    assert (first.number, first.line, first.session_id, first.model) == (1, 1, "8c1f-a", "gemini-2.5-pro")
    assert (first.started_at, first.ended_at, first.outcome) == (at(0), at(23), "success")
    assert (second.number, second.session_id, second.started_at) == (2, "8c1f-b", at(30))
    assert (second.ended_at, second.outcome) == (None, None)
    assert [c.session for c in t.calls] == [1] * 9 + [2] * 2


def test_unknown_types_are_counted_and_a_cut_last_line_leaves_its_call_open(tmp_path: Path) -> None:
    t = read(tmp_path, TRANSCRIPT)
    assert t.unknown_events == {"heartbeat": 1}
    last = t.calls[-1]
    assert (last.call_id, last.finished) == ("write-2", False)
    assert last.edits[0].content == "# Notes\n"  # the edit is known even though its outcome is not
    messages = [p.message for p in t.problems]
    assert any("have no result" in m and "write_file" in m for m in messages)
    assert any("heartbeat ×1" in m for m in messages)


def test_a_call_before_any_init_is_in_session_one(tmp_path: Path) -> None:
    t = read(
        tmp_path,
        [
            use(1, "s1", "run_shell_command", command="nvidia-smi"),
            result(2, "s1", output="Exit Code: 0"),
            ev("init", 3, session_id="late", model="gemini-2.5-flash"),
            ev("result", 4, status="error", stats={}),
        ],
    )
    assert t.calls[0].session == 1
    assert t.sessions[0].number == 1 and t.sessions[0].outcome == "error"


def test_a_result_without_init_opens_a_session_to_end(tmp_path: Path) -> None:
    t = read(tmp_path, [ev("result", 4, status="success", stats={})])
    assert [(s.number, s.outcome, s.ended_at) for s in t.sessions] == [(1, "success", at(4))]


def test_a_result_that_answers_no_call_is_reported(tmp_path: Path) -> None:
    t = read(tmp_path, [ev("init", 0, session_id="x"), result(1, "ghost", output="done")])
    assert not t.calls
    assert any("answer no call" in p.message and "line 2" in p.message for p in t.problems)


def test_an_exit_code_in_the_error_text_and_an_empty_old_string(tmp_path: Path) -> None:
    t = read(
        tmp_path,
        [
            use(1, "s", "run_shell_command", command="false"),
            result(2, "s", "error", error={"message": "Command failed.\nExit Code: 2"}),
            use(3, "r", "replace", file_path="new.py", old_string="", new_string="print(1)\n"),
            result(4, "r"),
        ],
    )
    shell, create = t.calls
    assert (shell.exit_code, shell.is_error) == (2, True)
    assert [(e.op, e.path, e.content) for e in create.edits] == [("write", "new.py", "print(1)\n")]


def test_the_older_api_log_form(tmp_path: Path) -> None:
    def response(*parts: dict[str, Any]) -> str:
        entry = {
            "method": "generateContent",
            "response": {"candidates": [{"content": {"parts": list(parts)}}]},
        }
        return json.dumps(entry)

    t = read(
        tmp_path,
        [
            response(
                {"text": "Let me look around."},
                {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}},
                {"functionCall": {"name": "read_file", "id": "fc-2", "args": {"absolute_path": TRAIN}}},
            ),
            response(
                {"functionResponse": {"name": "run_shell_command", "response": {"output": "train_sft.py"}}},
                {"functionResponse": {"name": "read_file", "id": "fc-2", "response": {"output": TRAIN_BODY}}},
            ),
            json.dumps({"method": "countTokens", "response": {"totalTokens": 12}}),
        ],
    )
    shell, reading = t.calls
    assert (shell.command, shell.call_id, shell.finished, shell.output) == ("ls", None, True, "train_sft.py")
    assert (reading.call_id, reading.read_path, reading.full_output) == ("fc-2", TRAIN, TRAIN_BODY)
    assert not t.unknown_events and not t.problems


def test_an_unanswered_api_log_call_keeps_no_made_up_id(tmp_path: Path) -> None:
    entry = {"functionCall": {"name": "write_file", "args": {"file_path": "a.py", "content": "x = 1\n"}}}
    line = json.dumps(
        {"method": "generateContent", "response": {"candidates": [{"content": {"parts": [entry]}}]}}
    )
    t = read(tmp_path, [line])
    assert (t.calls[0].call_id, t.calls[0].finished) == (None, False)


CLAUDE: list[dict[str, Any]] = [
    {"type": "system", "subtype": "init", "session_id": "c1", "model": "claude-opus-4-6", "cwd": TASK},
    {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]}},
    {"type": "result", "subtype": "success", "session_id": "c1", "total_cost_usd": 1.5, "is_error": False},
]
CODEX: list[dict[str, Any]] = [
    {"type": "thread.started", "thread_id": "0199"},
    {"type": "item.completed", "item": {"id": "item_1", "type": "command_execution", "command": "ls"}},
    {"type": "error", "message": "stream disconnected"},
    {"id": "0", "msg": {"type": "task_started"}},
]
OPENCODE: list[dict[str, Any]] = [
    {"type": "step_start", "timestamp": 1775808000000, "sessionID": "ses_1", "part": {"type": "step-start"}},
    {"type": "tool_use", "timestamp": 1775808001000, "sessionID": "ses_1", "part": {"tool": "bash"}},
    {"type": "error", "timestamp": 1775808002000, "sessionID": "ses_1", "error": {"name": "APIError"}},
]
GEMINI: list[dict[str, Any]] = [
    {"type": "init", "timestamp": stamp(0), "session_id": "g1", "model": "gemini-2.5-pro"},
    {"type": "message", "timestamp": stamp(1), "role": "assistant", "content": "ok", "delta": True},
    {
        "type": "tool_use",
        "timestamp": stamp(2),
        "tool_name": "run_shell_command",
        "tool_id": "t",
        "parameters": {},
    },
    {"type": "tool_result", "timestamp": stamp(3), "tool_id": "t", "status": "success", "output": ""},
    {"type": "error", "timestamp": stamp(4), "severity": "warning", "message": "Loop detected"},
    {"type": "result", "timestamp": stamp(5), "status": "success", "stats": {"total_tokens": 1}},
    {"method": "generateContent", "response": {"candidates": []}},
]


def test_sniff_claims_gemini_events() -> None:
    assert all(GeminiFormat.sniff(data) for data in GEMINI)


def test_sniff_leaves_other_formats_alone() -> None:
    for data in [*CLAUDE, *CODEX, *OPENCODE]:
        assert not GeminiFormat.sniff(data), data
    assert not GeminiFormat.sniff({"type": "message", "role": "user", "content": [{"text": "hi"}]})
    assert not GeminiFormat.sniff({"type": "result", "status": "success"})
    assert not GeminiFormat.sniff({"type": ["init"], "session_id": "x"})
    assert not GeminiFormat.sniff({"type": "init", "session_id": "x", "timestamp": 1775808000000})


KEYS = [
    "type",
    "timestamp",
    "session_id",
    "model",
    "role",
    "content",
    "delta",
    "tool_name",
    "tool_id",
    "parameters",
    "status",
    "output",
    "error",
    "severity",
    "message",
    "stats",
    "command",
    "directory",
    "file_path",
    "absolute_path",
    "old_string",
    "new_string",
    "expected_replacements",
    "offset",
    "limit",
    "method",
    "response",
    "candidates",
    "parts",
    "functionCall",
    "functionResponse",
    "name",
    "args",
    "id",
]
TYPES = ["init", "message", "tool_use", "tool_result", "error", "result", "bogus"]
WORDS = st.sampled_from(
    [
        *TYPES,
        *("run_shell_command", "write_file", "replace", "read_file", "google_web_search"),
        *("t1", "success", "error", "", stamp(1), "Exit Code: 3", "generateContent"),
    ]
)
SCALAR = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12) | WORDS
JSON = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    max_leaves=12,
)


def typed(kind: Any, rest: dict[str, Any]) -> dict[str, Any]:
    return rest if kind is None else {**rest, "type": kind}  # None: no type at all (the API-log form)


TOOLS = st.sampled_from(["run_shell_command", "write_file", "replace", "read_file", "glob"]) | SCALAR
IDS = st.sampled_from(["t1", "t2"]) | SCALAR
PARAM_KEYS = ["command", "directory", "file_path", "absolute_path", "content", "old_string", "new_string"]
PARAMS = st.dictionaries(
    st.sampled_from([*PARAM_KEYS, "expected_replacements", "offset", "limit", "output"]),
    SCALAR | JSON,
    max_size=6,
)
TOOL_USE = st.fixed_dictionaries(
    {"type": st.just("tool_use"), "tool_name": TOOLS, "tool_id": IDS, "parameters": PARAMS | JSON}
)
TOOL_RESULT = st.fixed_dictionaries(
    {
        "type": st.just("tool_result"),
        "tool_id": IDS,
        "status": st.sampled_from(["success", "error"]) | SCALAR,
    },
    optional={"output": JSON, "error": JSON, "timestamp": SCALAR},
)
PART = st.fixed_dictionaries(
    {"functionCall": st.fixed_dictionaries({"name": TOOLS, "args": PARAMS | JSON})}
) | (
    st.fixed_dictionaries(
        {"functionResponse": st.fixed_dictionaries({"name": TOOLS}, optional={"id": IDS, "response": PARAMS})}
    )
    | JSON
)
API_LOG = st.builds(
    lambda parts: {"method": "generateContent", "response": {"candidates": [{"content": {"parts": parts}}]}},
    st.lists(PART, max_size=3),
)
EVENT = (
    TOOL_USE
    | TOOL_RESULT
    | API_LOG
    | st.builds(
        typed, st.sampled_from(TYPES) | SCALAR, st.dictionaries(st.sampled_from(KEYS), JSON, max_size=6)
    )
)


@settings(max_examples=150, deadline=None)
@given(st.lists(EVENT, max_size=8))
def test_any_event_shapes_are_read_without_raising(batch: list[dict[str, Any]]) -> None:
    t = Transcript("t.jsonl", format=GeminiFormat.name)
    fmt = GeminiFormat()
    for line, data in enumerate(batch, 1):
        GeminiFormat.sniff(data)
        fmt.feed(Event(line, None, data), t)
    fmt.finish(t)
    t.close()
