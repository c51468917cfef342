"""The agent's own per-iteration reports: claims to check, never findings.

Three Markdown forms, each with Chinese or English field labels, and two JSON forms:

- ``reports/summary.md`` (the cumulative-summary skill): ``## Iteration N (YYYY-MM-DD HH:MM, 耗时 Xs)``;
- root ``summary.md`` from openhands-rl's fallback: ``## Iteration N | YYYY-MM-DD HH:MM | 耗时 Ts``;
- root ``summary.md`` of the CLI agents (AGENTS.md): ``## Attempt N (YYYY-MM-DD HH:MM)``;
- ``reports/summary.jsonl``, one JSON object per iteration;
- ``pipeline_results.json`` of openhands-rl / opencode-rl.
"""

from __future__ import annotations

import re
from typing import Any

from arb_audit.collectors.clock import parse_time
from arb_audit.collectors.reading import RunFolder, json_int, json_number, parse_json, text_int, text_number
from arb_audit.model import PipelineTotals, ReportedIteration, ReportLabel

MARKDOWN_SOURCES = ("reports/summary.md", "summary.md")
JSONL_SOURCE = "reports/summary.jsonl"
PIPELINE_SOURCE = "pipeline_results.json"
MAX_FIELD_CHARS = 2000
"""Longest field value kept; the agent writes these files and may write anything."""
MAX_ITERATIONS = 10_000
"""Most iterations read from one report."""

FAILURE_TYPES = (
    "code_error_runtime",
    "rollout_logic_wrong",
    "timeout_no_submission",
    "copy_model_fallback",
    "training_diverged",
)
"""The failure_type values of the cumulative-summary skill (besides ``unknown``)."""

LABELS: dict[str, ReportLabel] = {
    "状态": "status",
    "status": "status",
    "训练类型": "train_type",
    "training type": "train_type",
    "train type": "train_type",
    "关键配置": "config",
    "key configuration": "config",
    "key config": "config",
    "超参数": "config",
    "hyperparameters": "config",
    "做了什么": "what_was_done",
    "what was done": "what_was_done",
    "为什么": "why",
    "why": "why",
    "问题/进步": "issues_progress",
    "issues/progress": "issues_progress",
    "problems/progress": "issues_progress",
    "关键代码": "key_code",
    "key code": "key_code",
    "代码片段（上下文）": "code_snippet",
    "代码片段(上下文)": "code_snippet",
    "code snippet (context)": "code_snippet",
    "code snippet": "code_snippet",
    "下一步建议": "next_step",
    "next step": "next_step",
    "next steps": "next_step",
    "train.py": "train_py",
    "模型路径": "model_path",
    "model path": "model_path",
    "错误摘要": "error_summary",
    "error summary": "error_summary",
    "agent 分析": "agent_analysis",
    "agent analysis": "agent_analysis",
    "失败类型": "failure_type",
    "failure type": "failure_type",
    "failure_type": "failure_type",
    "score": "score",
}
"""Field labels as the skills write them, Chinese and English, mapped to one English key."""

HEADING = re.compile(
    r"^##\s+(?:Iteration|Attempt|迭代|尝试|第)\s*#?\s*(?P<n>\d+)\s*(?:轮|次)?(?P<rest>.*)$", re.IGNORECASE
)
WHEN = re.compile(r"(?P<d>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?)")
DURATION = re.compile(
    r"(?:耗时|took|takes|duration|elapsed)\s*[:：]?\s*(?P<s>\d+(?:\.\d+)?)\s*s", re.IGNORECASE
)
FIELD = re.compile(r"^\s*[-*]\s*\*\*(?P<label>[^*]+?)\*\*\s*[:：]?\s*(?P<value>.*)$")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
EXIT_CODE = re.compile(r"exit_code\s*=\s*(?P<c>-?\d+)")


def _first_number(text: str) -> float | None:
    m = NUMBER.search(text)
    return text_number(m.group()) if m else None


def _status(text: str) -> str | None:
    low = text.lower()
    if "✅" in text or "成功" in text or "success" in low:
        return "success"
    if "❌" in text or "失败" in text or "fail" in low:
        return "failed"
    return None


def _finish(it: ReportedIteration) -> ReportedIteration:
    """Derive the typed fields of a Markdown iteration from its labelled fields."""
    f = it.labelled
    for label, value in f.items():
        f[label] = value.strip()
    status = f.get("status", "")
    it.status = _status(status)
    if m := EXIT_CODE.search(status):
        it.exit_code = text_int(m["c"])
    score_line = f.get("score", "")
    if score_line:
        parts = dict.fromkeys(("score", "improvement", "best"), None)
        for chunk in ("score: " + score_line).split("|"):
            key, _, value = chunk.partition(":")
            if key.strip().lower() in parts:
                parts[key.strip().lower()] = _first_number(value)
        it.score = parts["score"]
        it.improvement, it.best = parts["improvement"], parts["best"]
    train = f.get("train_type") or ""
    if not train and "train_py" in f:
        train = f["train_py"].split(",")[-1]
    it.train_type = train.strip().strip("`") or None
    text = " ".join(f.values())
    it.failure_type = (
        f["failure_type"].strip()
        if f.get("failure_type")
        else next((t for t in FAILURE_TYPES if t in text), None)
    )
    return it


def read_markdown(folder: RunFolder, rel: str) -> list[ReportedIteration]:
    """Parse one summary.md in any of the three forms (streamed; fields capped in length)."""
    iterations: list[ReportedIteration] = []
    current: ReportedIteration | None = None
    key: ReportLabel | None = None
    for number, line in folder.lines(rel):
        if m := HEADING.match(line):
            if current is not None:
                iterations.append(_finish(current))
            if len(iterations) >= MAX_ITERATIONS:
                folder.problem(rel, f"has more than {MAX_ITERATIONS:,} iterations; the rest were skipped")
                current = None
                break
            rest = m["rest"]
            when = WHEN.search(rest)
            took = DURATION.search(rest)
            iteration = text_int(m["n"])
            if iteration is None:
                folder.problem(
                    rel, f"line {number}: iteration number {m['n'][:20]!r} is out of range; skipped"
                )
                current = None
                continue
            current = ReportedIteration(
                source=rel,
                number=iteration,
                line=number,
                reported_at=parse_time(when["d"]) if when else None,
                duration_s=text_number(took["s"]) if took else None,
            )
            key = None
            continue
        if current is None:
            continue
        if line.startswith("#"):
            key = None
            continue
        if (m := FIELD.match(line)) and (label := LABELS.get(m["label"].strip().lower())):
            key = label
            current.labelled[key] = m["value"].strip()[:MAX_FIELD_CHARS]
        elif key is not None:
            joined = f"{current.labelled[key]}\n{line}" if current.labelled[key] else line
            current.labelled[key] = joined[:MAX_FIELD_CHARS]
    if current is not None:
        iterations.append(_finish(current))
    return iterations


def _str(value: Any) -> str | None:
    return str(value)[:MAX_FIELD_CHARS] if value not in (None, "") else None


def read_jsonl(folder: RunFolder, rel: str = JSONL_SOURCE) -> list[ReportedIteration]:
    """Parse summary.jsonl; bad lines are counted and reported, good ones kept."""
    iterations: list[ReportedIteration] = []
    bad, first_bad = 0, 0
    for number, line in folder.lines(rel):
        if not line.strip():
            continue
        row, error, _ = parse_json(line)
        if error is not None or not isinstance(row, dict) or json_int(row.get("iteration")) is None:
            bad, first_bad = bad + 1, first_bad or number
            continue
        iterations.append(
            ReportedIteration(
                source=rel,
                number=row["iteration"],
                line=number,
                reported_at=parse_time(row.get("timestamp")),
                status=_str(row.get("status")),
                exit_code=json_int(row.get("exit_code")),
                score=json_number(row.get("score")),
                train_type=_str(row.get("train_type")),
                failure_type=_str(row.get("failure_type")),
                duration_s=json_number(row.get("duration_s")),
                improvement=json_number(row.get("improvement")),
            )
        )
        if len(iterations) >= MAX_ITERATIONS:
            folder.problem(rel, f"has more than {MAX_ITERATIONS:,} iterations; the rest were skipped")
            break
    if bad:
        folder.problem(rel, f"{bad:,} line(s) are not iteration objects (first: line {first_bad}); skipped")
    return iterations


def read_pipeline_results(folder: RunFolder) -> tuple[list[ReportedIteration], PipelineTotals | None]:
    """Parse pipeline_results.json into iterations and its run-level totals (None without the file)."""
    data = folder.read_json(PIPELINE_SOURCE, expect=dict)
    if data is None:
        return [], None
    best = data.get("best_score")
    totals = PipelineTotals(
        task=_str(data.get("task")),
        base_model=_str(data.get("base_model")),
        best_score=_first_number(best) if isinstance(best, str) else json_number(best),
        best_iteration=json_int(data.get("best_iteration")),
        total_time=json_number(data.get("total_time")),
        total_agent_cost=json_number(data.get("total_agent_cost")),
        total_agent_tokens=json_int(data.get("total_agent_tokens")),
    )
    raw = data.get("iterations")
    if raw is None:
        return [], totals
    if not isinstance(raw, list):
        folder.problem(PIPELINE_SOURCE, "`iterations` is not a list")
        return [], totals
    iterations = []
    for index, item in enumerate(raw[:MAX_ITERATIONS]):
        if not isinstance(item, dict) or json_int(item.get("iteration")) is None:
            folder.problem(
                PIPELINE_SOURCE, f"iteration entry {index + 1} has no integer `iteration`; skipped"
            )
            continue
        exit_code = json_int(item.get("exit_code"))
        iterations.append(
            ReportedIteration(
                source=PIPELINE_SOURCE,
                number=item["iteration"],
                exit_code=exit_code,
                status=None if exit_code is None else ("success" if exit_code == 0 else "failed"),
                score=json_number(item.get("score")),
                duration_s=json_number(item.get("training_time")),
                improvement=json_number(item.get("improvement")),
                analysis=_str(item.get("analysis")),
                agent_cost=json_number(item.get("agent_cost")),
                agent_tokens=json_int(item.get("agent_tokens")),
            )
        )
    return iterations, totals


def read_reports(folder: RunFolder) -> tuple[list[ReportedIteration], PipelineTotals | None]:
    """Read every self-report the run folder has; return the iterations and pipeline totals."""
    iterations: list[ReportedIteration] = []
    for rel in MARKDOWN_SOURCES:
        iterations.extend(read_markdown(folder, rel))
    iterations.extend(read_jsonl(folder))
    pipeline, totals = read_pipeline_results(folder)
    iterations.extend(pipeline)
    return iterations, totals
