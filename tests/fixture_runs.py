"""Writes the small AutoRL-Bench-layout run folders under ``fixtures/`` (and variants in tests).

Every file is produced here from a scenario: the harness's own files (run.log, scores.json,
run_meta.json, reports/metrics.json, agent.log), the agent's summaries in each known form, a ``code/``
tree and ``output/`` models made of small JSON and weight files. File times are set to the moments the
scenario says they were written. Regenerate the bundled fixtures with
``python -m tests.fixture_runs fixtures/autorl_bench``.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from tests.transcript_lines import (
    claude_call,
    claude_end,
    claude_init,
    claude_result,
    codex_command,
    codex_thread,
    jsonl,
)

START = datetime(2026, 3, 10, 10, 15, 0)
"""Local time at which every scenario's harness starts."""
UTC_OFFSET = timedelta(hours=8)
"""The run machine's offset from UTC."""
REMOTE_ROOT = "/data/rdagent/rdagent/scenarios/rl/autorl_bench/workspace"


def epoch(local: datetime) -> int:
    """Epoch seconds of a local time of the run machine."""
    return int((local - UTC_OFFSET - datetime(1970, 1, 1)).total_seconds())


@dataclass
class Attempt:
    """One request to the grading server, minutes after the agent's launch."""

    kind: Literal["eval", "duplicate", "invalid", "crash"]
    minute: float
    path: str = ""
    score: float = 0.0
    elapsed: float = 60.0
    error: str | None = None
    queued: float = 0.0
    """Seconds the request waited for the evaluation lock."""


@dataclass
class Scenario:
    """A run folder to write."""

    folder: str
    task: str
    agent: str
    baseline: float
    attempts: list[Attempt]
    timeout: int = 3600
    minutes: float = 50.0
    base_model: str = "Qwen/Qwen2.5-1.5B"
    code: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, float] = field(default_factory=dict)
    """Output folder -> minute (after launch) its files were last written."""
    baseline_reset: tuple[float, float] | None = None
    """(minute, new baseline) of a /set_baseline call by the agent."""
    summaries: dict[str, str] = field(default_factory=dict)
    agent_log: str = ""
    exit_code: int = 0
    extra_files: dict[str, str] = field(default_factory=dict)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _write(path: Path, text: str, when: datetime) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (epoch(when), epoch(when)))


def _model(folder: Path, when: datetime, seed: int) -> None:
    config = {
        "_name_or_path": "Qwen/Qwen2.5-1.5B",
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": "qwen2",
        "hidden_size": 64,
    }
    _write(folder / "config.json", json.dumps(config, indent=2), when)
    weights = folder / "model.safetensors"
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    body = bytes((seed + i) % 256 for i in range(16))
    weights.write_bytes(len(header).to_bytes(8, "little") + header + body)
    os.utime(weights, (epoch(when), epoch(when)))


def write_run(scenario: Scenario, root: Path) -> Path:
    """Write ``scenario`` under ``root`` and return the run folder."""
    run = root / scenario.folder
    if run.exists():
        shutil.rmtree(run)
    run.mkdir(parents=True)
    server = START + timedelta(seconds=2)
    launched = START + timedelta(seconds=4)
    end = launched + timedelta(minutes=scenario.minutes)
    remote = f"{REMOTE_ROOT}/{scenario.task}/{scenario.folder}"
    lines: list[tuple[datetime, int, str]] = []

    def log(at: datetime, level: str, message: str, *continuation: str) -> None:
        lines.append((at, len(lines), f"{_stamp(at)} | {level} | {message}"))
        lines.extend((at, len(lines), text) for text in continuation)

    log(START, "INFO", "=== AutoRL-Bench ===")
    log(START, "INFO", f"Agent: {scenario.agent}, Task: {scenario.task}, Model: {scenario.base_model}")
    log(START, "INFO", f"Workspace: {remote}")
    log(START, "INFO", f"Start: {_stamp(START)}")
    log(START, "INFO", "Preparing resources...")
    log(server, "INFO", "[Local Mode] Starting evaluation server on port 5000...")
    log(server, "INFO", "Evaluating baseline...")
    log(
        server,
        "INFO",
        f"Baseline cache hit: /data/rl_files/baseline_workspace/{scenario.task}_Qwen_Qwen2.5-1.5B"
        f".json, score={scenario.baseline}",
    )
    log(server, "INFO", f"[BASELINE] Set to {scenario.baseline}")
    log(server, "INFO", f"Baseline Score: {scenario.baseline}")
    log(launched, "INFO", f"Running agent: {scenario.agent}")
    scores: list[dict[str, object]] = []
    baseline = scenario.baseline
    best = 0.0
    last_submit = None
    for attempt in scenario.attempts:
        asked = launched + timedelta(minutes=attempt.minute)
        if (
            scenario.baseline_reset
            and attempt.minute > scenario.baseline_reset[0] >= 0
            and baseline != scenario.baseline_reset[1]
        ):
            reset_at = launched + timedelta(minutes=scenario.baseline_reset[0])
            baseline = scenario.baseline_reset[1]
            log(reset_at, "INFO", f"[BASELINE] Set to {baseline}")
        number = len(scores) + 1
        started = asked + timedelta(seconds=attempt.queued)
        if attempt.kind == "duplicate":
            log(asked, "INFO", f"[SUBMIT] Cache hit for {attempt.path}, score={attempt.score}")
        elif attempt.kind == "invalid":
            log(
                asked,
                "WARNING",
                "[SUBMIT] Invalid request",
                "Traceback (most recent call last):",
                '  File "server.py", line 118, in submit',
                f"ValueError: {attempt.error}",
            )
        elif attempt.kind == "crash":
            log(started, "INFO", f"[SUBMIT #{number}] Started | model_path={attempt.path} | gpu=None")
            log(
                started + timedelta(seconds=attempt.elapsed),
                "ERROR",
                "[SUBMIT] Internal server error",
                "Traceback (most recent call last):",
                f"OSError: {attempt.error}",
            )
        else:
            done = asked + timedelta(seconds=attempt.queued + attempt.elapsed)
            log(started, "INFO", f"[SUBMIT #{number}] Started | model_path={attempt.path} | gpu=None")
            entry: dict[str, object] = {
                "submission_id": number,
                "timestamp": done.isoformat(timespec="microseconds"),
                "model_path": attempt.path,
                "score": attempt.score,
                "baseline_score": baseline,
                "improvement": round(attempt.score - baseline, 6),
                "elapsed_seconds": round(attempt.queued + attempt.elapsed, 2),
            }
            if attempt.error:
                entry["error"] = attempt.error
            scores.append(entry)
            best = max(best, attempt.score)
            log(done, "INFO", f"[SUBMIT #{number}] Done | score={attempt.score}, best={best}")
            last_submit = done
    log(end, "INFO", f"Agent finished, exit_code={scenario.exit_code}, log: {remote}/agent.log")
    log(end, "INFO", "=" * 60)
    log(end, "INFO", f"Baseline: {scenario.baseline}")
    log(end, "INFO", f"Best Score: {best}")
    log(end, "INFO", f"Total Submissions: {len(scores)}")
    log(end, "INFO", f"Log saved to: {remote}/run.log")
    lines.sort(key=lambda item: (item[0], item[1]))
    _write(run / "run.log", "\n".join(text for _, _, text in lines) + "\n", end)
    if scores or scenario.attempts:
        _write(run / "scores.json", json.dumps(scores, indent=2, ensure_ascii=False), last_submit or end)
    meta = {
        "start_time": epoch(server),
        "timeout_s": scenario.timeout,
        "last_submit_time": epoch(last_submit) if last_submit else None,
        "end_time": epoch(end),
    }
    _write(run / "run_meta.json", json.dumps(meta, indent=2), end)
    valid = [float(str(s["score"])) for s in scores]
    metrics = {
        "valid_submission_rate": (sum(1 for v in valid if v > 0) / len(valid)) if valid else None,
        "score_trajectory": valid,
        "copy_model_count": 0,
        "time_used_ratio": round((epoch(end) - epoch(server)) / scenario.timeout, 4),
    }
    _write(run / "reports" / "metrics.json", json.dumps(metrics, indent=2), end)
    _write(run / "agent.log", scenario.agent_log, end)
    for rel, text in {**scenario.code, **scenario.summaries, **scenario.extra_files}.items():
        _write(run / rel, text, end - timedelta(minutes=1))
    for seed, (rel, minute) in enumerate(sorted(scenario.outputs.items())):
        _model(run / rel, launched + timedelta(minutes=minute), seed)
    (run / "models").mkdir()
    (run / "models" / "Qwen").symlink_to("/data/rl_files/models/Qwen")
    (run / "description.md").symlink_to("/data/rdagent/benchmarks/description.md")
    return run


TRAIN_SFT = """\
from datasets import load_dataset
from trl import SFTConfig, SFTTrainer

data = load_dataset("json", data_files="data/train.jsonl")["train"]
trainer = SFTTrainer(model="models/Qwen/Qwen2.5-1.5B", train_dataset=data,
                     args=SFTConfig(output_dir="output/v3", learning_rate=2e-5, num_train_epochs=2))
trainer.train()
trainer.save_model("output/v3")
"""

CODEX_LOG = """\
=== Codex CLI Agent ===
Task: gsm8k
Model: gpt-5.2
Workspace: {ws}
Grading Server: http://localhost:5000
Prompt length: 5123 chars
{{"type":"thread.started","thread_id":"t-1"}}
{{"type":"turn.started"}}
{{"type":"turn.completed","usage":{{"input_tokens":1200,"output_tokens":300}}}}
--- DIAGNOSTICS ---
exit_code: 0
elapsed: 00:50:01
model_files: 3 dirs in output/
code_files: 1 files in code/
summary_exists: yes
gpu_memory:
  0, 81559 MiB, 120 MiB
disk_workspace: 9.1G
--- END DIAGNOSTICS ---
Codex CLI exited with code: 0
"""


def codex_agent_jsonl(workspace: str) -> str:
    """The Codex CLI's event stream of the ``improves`` run: three versions of train.py, run each time."""
    v1 = TRAIN_SFT.replace("output/v3", "output/v1").replace("num_train_epochs=2", "num_train_epochs=1")
    bump = "*** Begin Patch\n*** Update File: code/train.py\n@@\n-{0}\n+{1}\n*** End Patch"
    version = 'args=SFTConfig(output_dir="output/{0}", learning_rate=2e-5, num_train_epochs={1}))'
    to_v2 = bump.format(version.format("v1", 1), version.format("v2", 1))
    return jsonl(
        [
            codex_thread("t-1"),
            {"type": "turn.started"},
            codex_command("c1", "ls", "code\ndata\nmodels\noutput\n"),
            codex_command("c2", f"mkdir -p code && cat > {workspace}/code/train.py <<'EOF'\n{v1}EOF", ""),
            codex_command("c3", "python code/train.py", "KeyError: 'messages'", exit_code=1),
            codex_command("c4", "python code/train.py", "{'train_loss': 0.52}\n"),
            codex_command(
                "c5", 'curl -s -X POST localhost:5000/submit -d \'{"model_path": "output/v1"}\'', ""
            ),
            codex_command("c6", f"apply_patch <<'EOF'\n{to_v2}\nEOF", "Done!"),
            codex_command("c7", "python code/train.py", "{'train_loss': 0.44}\n"),
            codex_command("c8", f"cat > code/train.py <<'EOF'\n{TRAIN_SFT}EOF\npython code/train.py", "ok\n"),
            {"type": "turn.completed", "usage": {"input_tokens": 1200, "output_tokens": 300}},
        ]
    )


def claude_agent_jsonl(workspace: str) -> str:
    """The Claude Code event stream of the ``attempts_en`` run: train.py written, fixed, and run."""
    final = TRAIN_SFT.replace("SFT", "GRPO")
    return jsonl(
        [
            claude_init(cwd=workspace),
            claude_call(
                "w1", "Write", file_path=f"{workspace}/code/train.py", content=final.replace("2e-5", "2e-3")
            ),
            claude_result("w1", "File created successfully"),
            claude_call("b1", "Bash", command="python code/train.py"),
            claude_result("b1", "Exit code 1\nloss is nan", is_error=True),
            claude_call(
                "e1", "Edit", file_path=f"{workspace}/code/train.py", old_string="2e-3", new_string="2e-5"
            ),
            claude_result("e1", "The file has been updated."),
            claude_call("b2", "Bash", command="python code/train.py"),
            claude_result("b2", "{'train_loss': 0.61}"),
            claude_end(),
        ]
    )


SKILL_SUMMARY_ZH = """\
# 运行总结

## Iteration 1 (2026-03-10 10:25, 耗时 540s)
- **状态**: ✅ 成功 (exit_code=0)
- **Score**: 60.1 | Improvement: -2.6 | Best: 60.1 (iter 1)
- **训练类型**: SFT
- **关键配置**: lr=1e-5, epochs=1, batch=8
- **做了什么**: 在训练集上做 SFT
- **为什么**: 先建立基线
- **问题/进步**: valid_submission_rate=1.0，分数低于基线
- **关键代码**: `trainer = SFTTrainer(...)`

## Iteration 2 (2026-03-10 10:40, 耗时 600s)
- **状态**: ✅ 成功 (exit_code=0)
- **Score**: 66.4 | Improvement: +3.7 | Best: 66.4 (iter 2)
- **训练类型**: SFT
- **关键配置**: lr=2e-5, epochs=2, batch=8
- **做了什么**: 增加训练轮数
- **为什么**: Iteration 1 欠拟合
- **问题/进步**: 分数提升 3.7
- **代码片段（上下文）**:
```python
trainer = SFTTrainer(model=model, train_dataset=data)
trainer.train()
```
"""

SKILL_JSONL = (
    '{"iteration": 1, "timestamp": "2026-03-10 10:25", "duration_s": 540, "status": "success",'
    ' "exit_code": 0, "score": 60.1, "improvement": -2.6, "train_type": "SFT", "failure_type": null}\n'
    '{"iteration": 2, "timestamp": "2026-03-10 10:40", "duration_s": 600, "status": "success",'
    ' "exit_code": 0, "score": 66.4, "improvement": 3.7, "train_type": "SFT", "failure_type": null}\n'
)

OPENHANDS_SUMMARY = """\
# 运行总结
> Task: alfworld | Model: Qwen/Qwen2.5-1.5B
> 自动生成，每轮追加

## Iteration 1 | 2026-03-10 10:30 | 耗时 900s
- **状态**: ✅ 成功
- **Score**: 12.7 | Improvement: +6.7 | Best: 12.7 (iter 1)
- **train.py**: 120 行, SFT
- **关键配置**: lr=1e-5, epochs=1
- **模型路径**: output/v1

## Iteration 2 | 2026-03-10 10:52 | 耗时 1200s
- **状态**: ❌ 训练失败 (exit_code=1)
- **Score**: N/A | Improvement: N/A | Best: 12.7 (iter 1)
- **train.py**: 210 行, GRPO
- **错误摘要**: torch.OutOfMemoryError: CUDA out of memory (training_diverged? no: code_error_runtime)
- **Agent 分析**: rollout 太长
"""

ATTEMPTS_EN = """\
# Run Summary

## Attempt 1 (2026-03-10 10:30)
- **Status**: ✅ Success
- **Score**: 14.00 | Improvement: +2.00 | Best: 14.00
- **Training Type**: GRPO
- **Hyperparameters**: lr=1e-6, epochs=1, batch_size=4
- **What Was Done**: GRPO with a success reward over webshop episodes
- **Why**: the task is interactive
- **Issues/Progress**: reward_std is low
- **Key Code**: `GRPOTrainer(reward_funcs=[success])`
- **Next Step**: longer rollouts

## Attempt 2 (2026-03-10 11:00)
- **Status**: ❌ Failed
- **Score**: 0.00 | Improvement: -12.00 | Best: 14.00
- **Training Type**: GRPO
- **Hyperparameters**: lr=1e-4
- **Issues/Progress**: loss became NaN, training_diverged
"""

PIPELINE_RESULTS = {
    "task": "humaneval",
    "base_model": "Qwen/Qwen2.5-1.5B",
    "best_score": 0.0,
    "best_iteration": None,
    "total_time": 2950.5,
    "total_agent_cost": 1.82,
    "total_agent_tokens": 412000,
    "iterations": [
        {
            "iteration": 1,
            "exit_code": 1,
            "training_time": 310.2,
            "score": None,
            "improvement": None,
            "analysis": "ImportError: cannot import name 'GRPOConfig'",
            "agent_cost": 0.9,
            "agent_tokens": 200000,
        },
        {
            "iteration": 2,
            "exit_code": 0,
            "training_time": 820.0,
            "score": 0.0,
            "improvement": -35.4,
            "analysis": "evaluation failed: model not found",
            "agent_cost": 0.92,
            "agent_tokens": 212000,
        },
    ],
}


def improves() -> Scenario:
    """gsm8k, codex: three SFT submissions, the last one best; skill summaries in Chinese."""
    return Scenario(
        folder="20260310T101500_codex",
        task="gsm8k",
        agent="codex",
        baseline=62.7,
        attempts=[
            Attempt("eval", 10, "output/v1", 60.1, 80),
            Attempt("eval", 25, "output/v2", 66.4, 80),
            Attempt("eval", 45, "output/v3", 68.9, 85),
        ],
        code={"code/train.py": TRAIN_SFT, "code/README.md": "SFT on the training split.\n"},
        outputs={"output/v1": 9, "output/v2": 24, "output/v3": 44},
        summaries={"reports/summary.md": SKILL_SUMMARY_ZH, "reports/summary.jsonl": SKILL_JSONL},
        agent_log=CODEX_LOG.format(ws=f"{REMOTE_ROOT}/gsm8k/20260310T101500_codex"),
        extra_files={"agent.jsonl": codex_agent_jsonl(f"{REMOTE_ROOT}/gsm8k/20260310T101500_codex")},
    )


def no_valid() -> Scenario:
    """humaneval, opencode: every attempt fails or is refused; the budget runs out."""
    return Scenario(
        folder="20260310T101500_opencode",
        task="humaneval",
        agent="opencode",
        baseline=35.4,
        attempts=[
            Attempt("invalid", 5, error="Invalid model_path"),
            Attempt("eval", 20, "output/v1", 0.0, 30, error="OpenCompass exit code: 1"),
            Attempt("eval", 48, "output/v2", 0.0, 25, error="Model not found"),
        ],
        minutes=59.9,
        exit_code=-9,
        code={"code/train.py": "import trl\nfrom trl import GRPOConfig\n"},
        outputs={"output/v1": 19},
        extra_files={"pipeline_results.json": json.dumps(PIPELINE_RESULTS, indent=2)},
        agent_log="opencode-rl pipeline\niteration 1: training failed\niteration 2: evaluation failed\n",
    )


def messy() -> Scenario:
    """alfworld, openhands: a rejected request, a duplicate, a crash, an error, a baseline reset and an
    artifact overwritten after it was scored; openhands' fallback summary in the root."""
    return Scenario(
        folder="20260310T101500_p5001_openhands",
        task="alfworld",
        agent="openhands",
        baseline=5.97,
        attempts=[
            Attempt("eval", 10, "output/v1", 12.69, 120),
            Attempt("duplicate", 12, "output/v1", 12.69),
            Attempt("invalid", 14, error="Invalid model_path"),
            Attempt("crash", 20, "output/v2", elapsed=40, error="[Errno 28] No space left on device"),
            Attempt("eval", 30, "output/v2", 0.0, 50, error="vLLM inference failed"),
            Attempt(
                "eval",
                40,
                "/data/rdagent/rdagent/scenarios/rl/autorl_bench/workspace/alfworld/"
                "20260310T101500_p5001_openhands/output/v3",
                9.7,
                150,
                queued=20,
            ),
        ],
        baseline_reset=(35, 1.0),
        code={"code/train.py": TRAIN_SFT.replace("SFT", "GRPO"), "code/analysis.md": "rollouts too long\n"},
        outputs={"output/v1": 50, "output/v2": 29, "output/v3": 39},
        summaries={"summary.md": OPENHANDS_SUMMARY},
        agent_log="[openhands] iteration 1\n[openhands] iteration 2\n",
    )


def attempts_en() -> Scenario:
    """webshop, claude: the AGENTS.md "Attempt N" summary with English labels."""
    return Scenario(
        folder="20260310T101500_claude",
        task="webshop",
        agent="claude",
        baseline=12.0,
        attempts=[Attempt("eval", 14, "output/v1", 14.0, 200), Attempt("eval", 45, "output/v2", 0.0, 100)],
        code={"code/train.py": TRAIN_SFT.replace("SFT", "GRPO")},
        outputs={"output/v1": 13, "output/v2": 44},
        summaries={"summary.md": ATTEMPTS_EN},
        agent_log="=== Claude Code Agent ===\nTask: webshop\nModel: claude-sonnet-4-6\n",
        extra_files={"agent.jsonl": claude_agent_jsonl(f"{REMOTE_ROOT}/webshop/20260310T101500_claude")},
    )


RESULTS_HEADER = (
    "run_id,timestamp,task,agent,driver_model,base_model,baseline,best_score,improvement,"
    "submissions,duration_s,success,workspace\n"
)
"""results.csv's header as run.py writes it (``RESULTS_CSV_COLUMNS``, since Feb 2026 with driver_model)."""


def results_csv(root: Path, folder: str, task: str, row: str) -> Path:
    """Write the harness's results.csv beside ``workspace/`` (as ``append_result`` does) with one row.

    ``row`` is the columns from ``baseline`` to ``success``; the others follow from the run folder.
    """
    path = root / "results.csv"
    stamp = folder.split("_", 1)[0]
    path.write_text(
        RESULTS_HEADER + f"{stamp},2026-03-10 10:15:00,{task},codex,gpt-5.2,Qwen/Qwen2.5-1.5B,{row},"
        f"{REMOTE_ROOT}/{task}/{folder}\n",
        encoding="utf-8",
    )
    return path


def harness_only(root: Path) -> tuple[Path, Path]:
    """A run whose folder holds no record of its submissions (no scores.json, none in run.log) while
    the harness's results.csv row counts 2, best 17.51; return the run folder and the csv."""
    scenario = Scenario(
        folder="20260312T091500_codex",
        task="gsm8k",
        agent="codex",
        baseline=12.0,
        attempts=[],
        code={"code/train.py": TRAIN_SFT},
        outputs={"output/v1": 30, "output/v2": 45},
    )
    run = write_run(scenario, root / "workspace" / "gsm8k")
    (run / "scores.json").unlink(missing_ok=True)
    return run, results_csv(root, scenario.folder, "gsm8k", "12.0,17.51,5.51,2,3004,True")


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "improves": improves,
    "no_valid": no_valid,
    "messy": messy,
    "attempts_en": attempts_en,
}
"""Bundled scenarios: fixtures/autorl_bench/<name>/<run folder>."""


def write_all(root: Path) -> dict[str, Path]:
    """Write every scenario under ``root/<name>/`` and return the run folders."""
    return {name: write_run(make(), root / name) for name, make in SCENARIOS.items()}


if __name__ == "__main__":
    for name, path in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "fixtures/autorl_bench")).items():
        print(f"{name}: {path}")
