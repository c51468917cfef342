"""The PostTrainBench collector: one run folder read whole, its transcript rebuilt, its judges kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from arb_audit.collectors import registry
from arb_audit.collectors.base import CollectOptions
from arb_audit.collectors.posttrainbench import PostTrainBenchCollector
from arb_audit.model import RunRecord, run_facts_json
from tests.test_cli import run_cli

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "posttrainbench"
CLAUDE = "claude_claude-opus-4-6_10h_run2/gsm8k_Qwen_Qwen3-4B-Base_16852431"
SUPERSEDED = "claude_claude-opus-4-6_10h_run2/gsm8k_Qwen_Qwen3-4B-Base_16800000"
CODEX = "codex_gpt-5.4_10h/humaneval_google_gemma-3-4b-pt_16900001"


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A private copy of the bundled results tree (audits write their store into run folders)."""
    return Path(shutil.copytree(FIXTURES, tmp_path / "results", symlinks=True))


def _collect(run: Path, tmp_path: Path) -> RunRecord:
    return PostTrainBenchCollector().collect(
        run, revisions_git=tmp_path / "rev.git", options=CollectOptions()
    )


def test_a_claude_run_is_read_whole(results: Path, tmp_path: Path) -> None:
    run = results / CLAUDE
    assert type(registry.detect(run)).__name__ == "PostTrainBenchCollector"
    record = _collect(run, tmp_path)
    info = record.run
    assert info.run_id == f"posttrainbench:{CLAUDE}"
    assert (info.task, info.base_model, info.scaffold, info.driver, info.budget_s) == (
        "gsm8k",
        "Qwen/Qwen3-4B-Base",
        "claude",
        "claude-opus-4-6",
        36000.0,
    )
    # One graded attempt: the final model, its accuracy in percent.
    [sub] = record.submissions
    assert (sub.seq, sub.status, sub.model_path, sub.artifact_path) == (
        1,
        "scored",
        "final_model",
        "final_model",
    )
    assert sub.score is not None and 0 < sub.score <= 100
    assert [a.path for a in record.artifacts] == ["final_model"] and record.artifacts[0].kind == "full"
    # The code history from the transcript, then the task/ snapshot.
    triggers = [r.trigger for r in record.revisions]
    assert triggers[-1] == "final" and set(triggers[:-1]) == {"transcript-edit"} and len(triggers) > 2
    transcript = info.transcript
    assert transcript is not None and transcript.format == "claude_code" and transcript.compactions
    assert transcript.final_check is not None
    assert transcript.final_check.differs == [] and "train_sft.py" in transcript.final_check.same
    runs = [c for c in record.commands if c.command == "python train_sft.py"]
    assert [c.exit_code for c in runs] == [1, 0] and runs[0].revision_seq is not None
    assert runs[0].started_at is not None and runs[0].source_path == "solve_out.txt"
    assert info.posttrainbench is not None
    verdicts = info.posttrainbench.external_verdicts
    assert {v.source for v in verdicts} >= {
        "judge_result.json",
        "judgement_kimi.json",
        "contamination_judgement.txt",
    }
    assert info.agent_exit_code == 0 and info.agent_timed_out is False
    everything = json.dumps([run_facts_json(info), [c.output_excerpt for c in record.commands]], default=str)
    assert "sk-proj-" not in everything


def test_a_superseded_run_and_placeholder_metrics(results: Path, tmp_path: Path) -> None:
    record = _collect(results / SUPERSEDED, tmp_path)
    assert record.run.posttrainbench is not None
    assert record.run.posttrainbench.superseded_by == "gsm8k_Qwen_Qwen3-4B-Base_16852431"
    [sub] = record.submissions
    assert sub.status == "error" and sub.score is None
    messages = {(p.path, p.message.split(":")[0]) for p in record.problems}
    assert (
        ".",
        "a later run of the same task and model exists (gsm8k_Qwen_Qwen3-4B-Base_16852431)",
    ) in messages
    assert (
        "solve_out.txt",
        "no transcript (solve_out.txt, solve_parsed.txt, trace.txt) could be read",
    ) in messages


def test_a_codex_run_that_timed_out(results: Path, tmp_path: Path) -> None:
    record = _collect(results / CODEX, tmp_path)
    assert record.run.agent_timed_out is True and record.run.agent_exit_code == 124
    transcript = record.run.transcript
    assert transcript is not None and transcript.format == "codex" and len(transcript.sessions) == 2
    assert record.commands[-1].finished is False
    assert any("no result" in p.message for p in record.problems)


def test_the_cli_shows_history_and_commands_for_a_posttrainbench_folder(results: Path) -> None:
    code, out, _ = run_cli(str(results / CLAUDE), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["run"]["format"] == "posttrainbench"
    assert all({"seq", "trigger", "taken_at", "files"} <= set(r) for r in report["revisions"])
    assert all({"seq", "command", "started_at", "exit_code", "tool"} <= set(c) for c in report["commands"])
    assert "sk-proj-" not in out
    code, text, _ = run_cli(str(results / CLAUDE))
    assert "The benchmark's own judges" in text and "Code history" in text


def test_a_results_tree_audits_the_runs_that_count(results: Path) -> None:
    code, out, _ = run_cli(str(results), "--json")
    assert code == 0
    tree = json.loads(out)
    assert tree["format"] == "posttrainbench"
    assert sorted(r["run"]["run_id"] for r in tree["runs"]) == [
        f"posttrainbench:{CLAUDE}",
        f"posttrainbench:{CODEX}",
    ]
    assert [(Path(d["path"]).name, d["reason"]) for d in tree["dropped"]] == [
        (
            "gsm8k_Qwen_Qwen3-4B-Base_16800000",
            "superseded by gsm8k_Qwen_Qwen3-4B-Base_16852431 (higher cluster id)",
        )
    ]
    code, text, _ = run_cli(str(results / "codex_gpt-5.4_10h"))
    assert code == 0 and "1 runs that count (posttrainbench)" in text


PUBLISHED_TRACE = """\
Session start — sess-p1
  Model: claude-opus-4-6
  Working dir: /home/ben/task

Assistant — turn 1 | 2026-04-10T08:00:10Z
  Tool call — Write (toolu_w1)
    {
      "file_path": "/home/ben/task/train_sft.py",
      "content": from trl import SFTTrainer
    trainer = SFTTrainer(model="Qwen/Qwen3-4B-Base")
    trainer.train()

    }

User — turn 1 | 2026-04-10T08:00:11Z
  Tool result — Write (toolu_w1)
    File created successfully at: /home/ben/task/train_sft.py

Assistant — turn 2 | 2026-04-10T08:00:20Z
  Tool call — Bash (toolu_b1)
    $ python train_sft.py

User — turn 2 | 2026-04-10T09:00:20Z
  Tool result — Bash (toolu_b1)
    {'train_loss': 0.4}

Result — success
"""


def test_a_published_run_with_only_the_readable_trace(results: Path, tmp_path: Path) -> None:
    run = results / CLAUDE
    (run / "solve_out.txt").unlink()
    (run / "trace.txt").write_text(PUBLISHED_TRACE, encoding="utf-8")
    record = _collect(run, tmp_path)
    transcript = record.run.transcript
    assert transcript is not None
    assert (transcript.path, transcript.format, transcript.lossy) == (
        "trace.txt",
        "claude_code_rendered",
        True,
    )
    assert transcript.missing  # what the rendering cannot show is said, not guessed
    assert [(c.command, c.exit_code) for c in record.commands] == [("python train_sft.py", None)]
    assert [r.trigger for r in record.revisions] == ["transcript-edit", "final"]


def test_one_run_that_breaks_the_collector_does_not_stop_the_tree(
    results: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = PostTrainBenchCollector.collect

    def collect(self: PostTrainBenchCollector, run_dir: Path, **kwargs: Any) -> RunRecord:
        if "humaneval" in run_dir.name:
            raise RecursionError("a shape nobody foresaw")
        return real(self, run_dir, **kwargs)

    monkeypatch.setattr(PostTrainBenchCollector, "collect", collect)
    code, out, _ = run_cli(str(results), "--json")
    tree = json.loads(out)
    assert code == 0 and [r["run"]["task"] for r in tree["runs"]] == ["gsm8k"]
    assert tree["failed"][0]["message"] == "could not be audited: RecursionError: a shape nobody foresaw"
