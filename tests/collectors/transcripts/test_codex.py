"""Codex exec --json, modern and legacy: commands, file changes, patches, sessions."""

from __future__ import annotations

from pathlib import Path

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.codex import CodexFormat, CodexLegacyFormat, unwrap_shell
from arb_audit.collectors.transcripts.events import Transcript
from arb_audit.collectors.transcripts.read import read_transcript
from tests.transcript_lines import claude_init, codex_command, codex_file_change, codex_thread, jsonl, legacy


def _read(tmp_path: Path, text: str) -> Transcript:
    (tmp_path / "agent.jsonl").write_text(text, encoding="utf-8")
    transcript = read_transcript(RunFolder(tmp_path), "agent.jsonl")
    assert transcript is not None
    return transcript


def test_modern_stream_commands_file_changes_and_sessions(tmp_path: Path) -> None:
    events = [
        codex_thread("th-1"),
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "r0", "type": "reasoning", "text": "**Plan**"}},
        {
            "type": "item.started",
            "item": {"id": "c1", "type": "command_execution", "command": "bash -lc 'nvidia-smi'"},
        },
        codex_command("c1", "nvidia-smi", "NVIDIA H100\n"),
        codex_command("c2", "python train.py", "KeyError: 'x'", exit_code=1),
        codex_file_change("f1", ("/home/ben/task/train.py", "update"), ("/home/ben/task/old.py", "delete")),
        {"type": "turn.completed", "usage": {"input_tokens": 5}},
        codex_thread("th-2"),
        codex_command("c3", "ls", ""),
        {"type": "item.plan.delta", "item_id": "p", "delta": "x"},
        {"type": "brand.new", "x": 1},
    ]
    t = _read(tmp_path, jsonl(events))
    assert t.format == "codex"
    assert [s.session_id for s in t.sessions] == ["th-1", "th-2"]
    commands = [(c.command, c.exit_code, c.is_error, c.session) for c in t.calls if c.kind == "command"]
    assert commands == [("nvidia-smi", 0, False, 1), ("python train.py", 1, True, 1), ("ls", 0, False, 2)]
    change = next(c for c in t.calls if c.kind == "edit")
    assert [(e.path, e.op) for e in change.edits] == [
        ("/home/ben/task/train.py", "touch"),
        ("/home/ben/task/old.py", "delete"),
    ]
    assert t.unknown_events == {"brand.new": 1}


def test_legacy_envelope_with_patches(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: train.py\n@@\n-lr = 1e-5\n+lr = 2e-5\n*** End Patch"
    events = [
        {"prompt": "train a model", "model": "gpt-5.1-codex"},
        legacy("0", "session_configured", session_id="s", model="gpt-5.1-codex", cwd="/home/ben/task"),
        legacy(
            "1",
            "exec_command_begin",
            call_id="c1",
            command=["bash", "-lc", "python t.py"],
            cwd="/home/ben/task",
        ),
        legacy("1", "exec_command_output_delta", call_id="c1", chunk="aGk="),
        legacy("1", "exec_command_end", call_id="c1", exit_code=2, stdout="", stderr="no such file"),
        legacy(
            "2",
            "patch_apply_begin",
            call_id="p1",
            changes={"/home/ben/task/new.py": {"add": {"content": "a\n"}}},
        ),
        legacy("2", "patch_apply_end", call_id="p1", success=True, stdout="ok"),
        legacy("3", "patch_apply_begin", call_id="p2", patch=patch),
        legacy("3", "patch_apply_end", call_id="p2", success=False, stderr="hunk failed"),
        legacy(
            "4",
            "patch_apply_begin",
            call_id="p3",
            changes={
                "/home/ben/task/new.py": {
                    "update": {"unified_diff": "@@ -1 +1 @@\n-a\n+b\n", "move_path": None}
                }
            },
        ),
        legacy("4", "patch_apply_end", call_id="p3", success=True),
    ]
    t = _read(tmp_path, jsonl(events))
    assert t.format == "codex_legacy"
    assert t.sessions[0].cwd == "/home/ben/task"
    run, add, failed, update = t.calls
    assert (run.command, run.exit_code, run.error, run.cwd) == (
        "python t.py",
        2,
        "no such file",
        "/home/ben/task",
    )
    assert [(e.op, e.content) for e in add.edits] == [("write", "a\n")]
    assert failed.is_error and [(e.path, e.op) for e in failed.edits] == [("train.py", "patch")]
    assert update.edits[0].patch is not None and update.is_error is False
    assert t.problems == []


def test_unwrap_shell() -> None:
    assert unwrap_shell("/bin/bash -lc 'cd x && python t.py'") == "cd x && python t.py"
    assert unwrap_shell(["bash", "-lc", "ls -la"]) == "ls -la"
    assert unwrap_shell(["python", "t.py", "--lr", "1e-5"]) == "python t.py --lr 1e-5"
    assert unwrap_shell("python 'unterminated") == "python 'unterminated"


def test_sniffers() -> None:
    assert CodexFormat.sniff(codex_thread()) and not CodexFormat.sniff(claude_init())
    assert CodexLegacyFormat.sniff(legacy("1", "task_started")) and not CodexLegacyFormat.sniff(
        codex_thread()
    )
    assert not CodexLegacyFormat.sniff({"id": "1", "msg": "text"})
