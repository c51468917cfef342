"""The code history rebuilt from a transcript: edits in order, gaps kept, revisions committed, checked."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.collectors.reading import RunFolder
from arb_audit.collectors.transcripts.history import read_output_text
from arb_audit.collectors.transcripts.ingest import Snapshot, TranscriptFacts, ingest_transcript
from arb_audit.collectors.transcripts.patches import PatchError, apply_patch, split_apply_patch
from arb_audit.collectors.transcripts.paths import PathMap
from arb_audit.collectors.transcripts.shell_writes import shell_writes
from arb_audit.model import FinalCheck
from arb_audit.revisions import run_ref
from tests.transcript_lines import (
    claude_call,
    claude_init,
    claude_result,
    codex_command,
    codex_thread,
    jsonl,
    legacy,
)

ROOT = "/home/ben/task"
START = datetime(2026, 4, 10, 8, 0, 0, tzinfo=UTC)
SFT = "from trl import SFTTrainer\nlr = 1e-5\ntrainer = SFTTrainer(model='m', args=None)\ntrainer.train()\n"


Events = Sequence[dict[str, Any] | str]


def _ingest(
    tmp_path: Path, events: Events, snapshot: Snapshot | None = None, start: datetime | None = START
) -> TranscriptFacts:
    run = tmp_path / "run"
    run.mkdir(exist_ok=True)
    (run / "solve_out.txt").write_text(jsonl(events, start=start), encoding="utf-8")
    facts = ingest_transcript(
        RunFolder(run),
        "solve_out.txt",
        roots=[ROOT],
        git_dir=tmp_path / "revisions.git",
        ref=run_ref("r"),
        snapshot=snapshot,
    )
    assert facts is not None
    return facts


def _show(tmp_path: Path, sha: str, path: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(tmp_path / "revisions.git"), "show", f"{sha}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _claude_session() -> Events:
    return [
        claude_init(),
        claude_call("w1", "Write", file_path=f"{ROOT}/train_sft.py", content=SFT),
        claude_result("w1", "File created"),
        claude_call(
            "e1", "Edit", file_path=f"{ROOT}/train_sft.py", old_string="lr = 1e-5", new_string="lr = 2e-5"
        ),
        claude_result("e1", "ok"),
        claude_call("e2", "Edit", file_path=f"{ROOT}/train_sft.py", old_string="not there", new_string="x"),
        claude_result(
            "e2", "<tool_use_error>String to replace not found in file.</tool_use_error>", is_error=True
        ),
        claude_call("b1", "Bash", command="python train_sft.py"),
        claude_result("b1", "Exit code 1\nKeyError: 'text'", is_error=True),
        claude_call(
            "e3",
            "Edit",
            file_path="train_sft.py",
            old_string="trainer.train()",
            new_string="trainer.train()  # fixed",
        ),
        claude_result("e3", "ok"),
        claude_call("b2", "Bash", command="python train_sft.py"),
        claude_result("b2", "done"),
        claude_call("w2", "Write", file_path="/tmp/probe.py", content="print(1)\n"),
        claude_result("w2", "ok"),
    ]


def test_each_change_is_a_revision_and_commands_know_the_revision_in_force(tmp_path: Path) -> None:
    facts = _ingest(tmp_path, _claude_session())
    assert [r.seq for r in facts.revisions] == [1, 2, 3, 4]
    assert {r.trigger for r in facts.revisions} == {"transcript-edit"}
    assert facts.revisions[0].taken_at == datetime(2026, 4, 10, 8, 0, 5, tzinfo=UTC)
    assert [f.path for f in facts.revisions[-1].files] == ["_outside/tmp/probe.py", "train_sft.py"]
    assert _show(tmp_path, facts.revisions[1].sha, "train_sft.py") == SFT.replace("1e-5", "2e-5")
    assert _show(tmp_path, facts.revisions[2].sha, "train_sft.py").endswith("trainer.train()  # fixed\n")
    assert [(c.seq, c.command, c.exit_code, c.revision_seq) for c in facts.commands] == [
        (1, "python train_sft.py", 1, 2),
        (2, "python train_sft.py", 0, 3),
    ]
    assert facts.summary is not None and (history := facts.summary.history) is not None
    assert history.gaps == 0 and history.failed_edits_not_applied == 1
    assert facts.problems == []


def test_collecting_again_gives_the_same_revisions(tmp_path: Path) -> None:
    first = [r.sha for r in _ingest(tmp_path, _claude_session()).revisions]
    again = [r.sha for r in _ingest(tmp_path, _claude_session()).revisions]
    assert first == again
    head = (tmp_path / "revisions.git" / run_ref("r")).read_text().strip()
    assert head == first[-1]


def test_an_edit_that_does_not_apply_is_a_gap_and_the_history_goes_on(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call("w1", "Write", file_path=f"{ROOT}/t.py", content="a = 1\n"),
        claude_result("w1", "ok"),
        # The agent changed the file with sed, so the transcript's edit no longer matches what it rebuilt.
        claude_call("e1", "Edit", file_path=f"{ROOT}/t.py", old_string="a = 2", new_string="a = 3"),
        claude_result("e1", "ok"),
        claude_call("e2", "Edit", file_path=f"{ROOT}/never_seen.py", old_string="x", new_string="y"),
        claude_result("e2", "ok"),
        claude_call("e3", "Edit", file_path=f"{ROOT}/t.py", old_string="a = 1", new_string="a = 4"),
        claude_result("e3", "ok"),
    ]
    facts = _ingest(tmp_path, events)
    assert len(facts.revisions) == 2
    assert _show(tmp_path, facts.revisions[-1].sha, "t.py") == "a = 4\n"
    messages = [p.message for p in facts.problems]
    kept = "; the history keeps its last known contents"
    assert messages == [
        f"line 4: t.py: the text to replace is not in the rebuilt file{kept}",
        f"line 6: never_seen.py: a replace of a file whose contents were never seen{kept}",
    ]
    assert all(p.path == "solve_out.txt" for p in facts.problems)


def test_a_whole_read_seeds_a_file_first_seen_through_an_edit(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call("r1", "Read", file_path=f"{ROOT}/evaluate.py"),
        claude_result("r1", "     1\timport json\n     2\tMAX = 10\n\n<system-reminder>x</system-reminder>"),
        claude_call(
            "e1", "Edit", file_path=f"{ROOT}/evaluate.py", old_string="MAX = 10", new_string="MAX = 99"
        ),
        claude_result("e1", "ok"),
    ]
    facts = _ingest(tmp_path, events)
    assert _show(tmp_path, facts.revisions[0].sha, "evaluate.py") == "import json\nMAX = 99\n"
    assert facts.summary is not None and facts.summary.history is not None
    assert facts.summary.history.seeded_from_reads == ["evaluate.py"]


def test_multiedit_is_all_or_nothing(tmp_path: Path) -> None:
    events = [
        claude_init(),
        claude_call("w", "Write", file_path=f"{ROOT}/m.py", content="a\nb\n"),
        claude_result("w", "ok"),
        claude_call(
            "m",
            "MultiEdit",
            file_path=f"{ROOT}/m.py",
            edits=[{"old_string": "a", "new_string": "A"}, {"old_string": "zz", "new_string": "Z"}],
        ),
        claude_result("m", "ok"),
    ]
    facts = _ingest(tmp_path, events)
    assert len(facts.revisions) == 1
    assert "the text to replace is not in the rebuilt file" in facts.problems[0].message


def test_codex_here_documents_and_patches_rebuild_files(tmp_path: Path) -> None:
    script = f"cat > {ROOT}/train.py <<'EOF'\nimport trl\nlr = 1\nEOF\npython -c 'print(1)'"
    hunk = "*** Update File: train.py\n@@\n-lr = 1\n+lr = 3"
    patch = f"apply_patch <<'EOF'\n*** Begin Patch\n{hunk}\n*** End Patch\nEOF"
    events = [
        codex_thread(),
        codex_command("c1", script, "1\n"),
        legacy("x", "session_configured", cwd=ROOT),  # a stray legacy line is not this format's: ignored
        codex_command("c2", patch, "Done!"),
        codex_command("c3", f"cat > {ROOT}/broken.py <<EOF\nx = $HOME\nEOF", "", exit_code=1),
    ]
    facts = _ingest(tmp_path, events, start=None)
    assert len(facts.revisions) == 3
    assert facts.revisions[0].taken_at is None
    # Relative paths in a patch are taken from the workspace root when no cwd is known.
    assert _show(tmp_path, facts.revisions[1].sha, "train.py") == "import trl\nlr = 3\n"
    # The here-document lands before the script's later failure; each command ran its own revision.
    assert _show(tmp_path, facts.revisions[2].sha, "broken.py") == "x = $HOME\n"
    assert [c.revision_seq for c in facts.commands] == [1, 2, 3]


def test_the_rebuilt_final_state_is_checked_against_the_workspace(tmp_path: Path) -> None:
    task = tmp_path / "run" / "task"
    task.mkdir(parents=True)
    (task / "train_sft.py").write_text(
        SFT.replace("1e-5", "2e-5").replace("trainer.train()", "trainer.train()  # fixed")
    )
    facts = _ingest(tmp_path, _claude_session(), Snapshot(task, "task"))
    assert facts.summary is not None
    assert facts.summary.final_check == FinalCheck(
        snapshot="task", same=["train_sft.py"], differs=[], absent=[]
    )
    (task / "train_sft.py").write_text("edited by sed\n")
    facts = _ingest(tmp_path, _claude_session(), Snapshot(task, "task"))
    assert facts.summary is not None and facts.summary.final_check is not None
    assert facts.summary.final_check.differs == ["train_sft.py"]
    assert "1 rebuilt file(s) differ from task/" in facts.problems[-1].message


def test_an_unusable_revisions_store_leaves_commands_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "revisions.git").write_text("not a repository")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    facts = _ingest(tmp_path, _claude_session())
    assert facts.revisions == [] and len(facts.commands) == 2
    assert "the code history cannot be stored" in facts.problems[0].message
    assert "is in the way: it is not a folder" in facts.problems[0].message
    # GitPython, given a file, would have run git init in the current folder.
    assert list(elsewhere.iterdir()) == []


def test_paths_map_onto_the_workspace() -> None:
    paths = PathMap(["/home/ben/task", "/data/ws/gsm8k/run1", None])
    assert paths.rel("/home/ben/task/a/b.py") == "a/b.py"
    assert paths.rel("/data/ws/gsm8k/run1/code/t.py") == "code/t.py"
    assert paths.rel("rel.py", "/home/ben/task/sub") == "sub/rel.py"
    assert paths.rel("/home/ben/task/../secrets.txt") == "_outside/home/ben/secrets.txt"
    assert paths.rel("/home/ben/taskforce/x.py") == "_outside/home/ben/taskforce/x.py"
    assert paths.rel("~/x.py") is None and paths.rel("") is None and paths.rel("/") is None
    assert PathMap([]).rel("../up.py") is None and PathMap([]).rel("ok/x.py") == "ok/x.py"


def test_patches_apply_with_loose_whitespace_and_refuse_missing_hunks() -> None:
    text = "def f():\n    return 1\n\nprint(f())\n"
    assert apply_patch(text, "@@\n def f():\n-    return 1\n+    return 2\n") == text.replace("1\n", "2\n", 1)
    assert apply_patch(text, "@@ -4 +4 @@\n-print(f())   \n+print(f() + 1)\n").endswith("print(f() + 1)\n")
    with pytest.raises(PatchError, match="hunk 1 not found"):
        apply_patch(text, "@@\n-return 3\n+return 4\n")
    edits = split_apply_patch(
        "*** Begin Patch\n*** Add File: n.py\n+a\n+b\n*** Update File: o.py\n*** Move to: p.py\n@@\n-x\n+y\n"
        "*** Delete File: d.py\n*** End Patch"
    )
    assert [(e.op, e.path, e.content, e.move_to) for e in edits] == [
        ("write", "n.py", "a\nb\n", None),
        ("patch", "o.py", None, "p.py"),
        ("delete", "d.py", None, None),
    ]


def test_shell_here_documents() -> None:
    script = (
        "mkdir -p out\ncat > out/a.py << 'PY'\nprint('$HOME')\nPY\n"
        'cat <<EOF >> "log.txt"\nstep $i\nEOF\n'
        "tee -a b.txt <<-END\n\tindented\n\tEND\n"
        "python - <<EOF\nprint(1)\nEOF\n"
        "cat > never_closed.py <<EOF\nx = 1\n"
    )
    writes = [(w.path, w.content, w.append, w.expanded) for w in shell_writes(script)]
    assert writes == [
        ("out/a.py", "print('$HOME')\n", False, False),
        ("log.txt", "step $i\n", True, True),
        ("b.txt", "indented\n", True, True),
    ]


def test_read_output_is_a_file_only_when_numbered_from_one() -> None:
    assert read_output_text("     1→a\n     2→b") == "a\nb\n"
    assert (
        read_output_text("<file>\n00001| import os\n00002| \n00003| x = 1\n</file>") == "import os\n\nx = 1\n"
    )
    assert read_output_text("     3\ta\n     4\tb") is None
    assert read_output_text("File does not exist.") is None


@given(st.text(max_size=300), st.text(max_size=300))
def test_patch_application_never_fails_unexpectedly(content: str, patch: str) -> None:
    with contextlib.suppress(PatchError):
        apply_patch(content, patch)


@given(st.text(max_size=400))
def test_here_document_parsing_never_fails(script: str) -> None:
    for write in shell_writes(script):
        assert write.content.endswith("\n")
