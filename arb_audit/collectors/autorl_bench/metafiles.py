"""AutoRL-Bench's small run files: ``run_meta.json``, ``reports/metrics.json`` and a ``results.csv`` row."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue

from arb_audit.collectors.clock import from_epoch
from arb_audit.collectors.reading import RunFolder, json_number, text_int, text_number
from arb_audit.model import HarnessAccount
from arb_audit.regular_files import open_regular

RUN_META = "run_meta.json"
METRICS = "reports/metrics.json"
RESULTS_COLUMNS = (
    "run_id",
    "timestamp",
    "task",
    "agent",
    "driver_model",
    "base_model",
    "baseline",
    "best_score",
    "improvement",
    "submissions",
    "duration_s",
    "success",
    "workspace",
)
"""results.csv columns at the harness's HEAD; the Feb 2026 schema lacks ``driver_model``."""
OLD_RESULTS_COLUMNS = tuple(c for c in RESULTS_COLUMNS if c != "driver_model")
MAX_RESULTS_BYTES = 256 * 1024 * 1024
MAX_TEXT = 1000
"""Longest text kept from a results.csv column."""
MAX_BUDGET_S = 10 * 365 * 24 * 3600
"""A budget longer than ten years is not believed."""


@dataclass(slots=True)
class RunMeta:
    """run_meta.json: the harness's clock (epoch seconds)."""

    start_time: int | None = None
    """Set after setup, before the baseline evaluation and the agent's launch."""
    timeout_s: int | None = None
    """The budget."""
    last_submit_time: int | None = None
    """After the last recorded submission."""
    end_time: int | None = None
    """After the grading server shut down."""


def _seconds(data: dict[str, Any], key: str, folder: RunFolder, *, duration: bool) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    number = json_number(value)
    ok = number is not None and (0 < number <= MAX_BUDGET_S if duration else from_epoch(number) is not None)
    if number is None or not ok:
        what = "a duration in seconds" if duration else "epoch seconds between 1990 and 2200"
        folder.problem(RUN_META, f"`{key}` is {str(value)[:40]!r}, not {what}; ignored")
        return None
    return int(number)


def read_run_meta(folder: RunFolder) -> RunMeta | None:
    """Read run_meta.json; None when absent or unreadable."""
    data = folder.read_json(RUN_META, expect=dict)
    if data is None:
        return None
    return RunMeta(
        start_time=_seconds(data, "start_time", folder, duration=False),
        timeout_s=_seconds(data, "timeout_s", folder, duration=True),
        last_submit_time=_seconds(data, "last_submit_time", folder, duration=False),
        end_time=_seconds(data, "end_time", folder, duration=False),
    )


def read_harness_metrics(folder: RunFolder) -> dict[str, JsonValue] | None:
    """Read reports/metrics.json as the harness computed it (kept for comparison, not trusted)."""
    data: dict[str, JsonValue] | None = folder.read_json(METRICS, expect=dict)
    return data


def find_results_row(csv_path: Path, run_dir: Path, folder: RunFolder) -> tuple[dict[str, str], int] | None:
    """Return the results.csv row of this run (matched on the workspace folder name or run id) and its line.

    Both headers are accepted; a 13-value row under the old 12-column header (rows appended after the
    schema changed) is read with the new columns, and said so.
    """
    label = str(csv_path)
    if not csv_path.is_file():
        folder.problem(label, "is not a regular file; not read")
        return None
    try:
        if csv_path.stat().st_size > MAX_RESULTS_BYTES:
            folder.problem(label, "is over 256 MiB; not read")
            return None
        raw = open_regular(csv_path, follow_symlinks=True)  # a FIFO swapped in is not waited on
        with io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="") as handle:
            return _match_row(csv.reader(handle), run_dir, folder, label)
    except OSError as exc:
        folder.problem(label, f"cannot be read: {exc.strerror or exc}")
    except csv.Error as exc:
        folder.problem(label, f"is not readable CSV: {exc}")
    return None


def _match_row(
    reader: Iterator[list[str]], run_dir: Path, folder: RunFolder, label: str
) -> tuple[dict[str, str], int] | None:
    header = tuple(c.strip() for c in next(reader, []))
    if not header:
        folder.problem(label, "is empty")
        return None
    if header not in (RESULTS_COLUMNS, OLD_RESULTS_COLUMNS):
        folder.problem(label, f"has an unknown header {list(header)[:20]!r}; not read")
        return None
    for number, values in enumerate(reader, 2):
        if len(values) == len(RESULTS_COLUMNS):
            row = dict(zip(RESULTS_COLUMNS, values, strict=True))
        elif len(values) == len(OLD_RESULTS_COLUMNS):
            row = dict(zip(OLD_RESULTS_COLUMNS, values, strict=True))
        else:
            continue
        workspace = row["workspace"].rstrip("/")
        if (
            workspace.rsplit("/", 1)[-1] == run_dir.name
            or run_dir.name.startswith(row["run_id"] + "_")
            or run_dir.name == row["run_id"]
        ):
            if len(values) != len(header):
                folder.problem(
                    label,
                    f"row {number} has {len(values)} values under a {len(header)}-column"
                    " header (schema changed between runs); read by value count",
                )
            return row, number
    folder.problem(label, f"has no row for the run folder {run_dir.name!r}")
    return None


def results_account(row: dict[str, str], line: int, label: str, folder: RunFolder) -> HarnessAccount:
    """Type the results.csv row as the harness's account; a value that does not parse is a problem."""
    unreadable: list[str] = []

    def number(column: str) -> float | None:
        text = row.get(column, "").strip()
        value = text_number(text) if text else None
        if text and value is None:
            unreadable.append(column)
        return value

    numbers = {c: number(c) for c in ("baseline", "best_score", "improvement", "duration_s")}
    count_text = row.get("submissions", "").strip()
    count = text_int(count_text) if count_text else None
    if count_text and (count is None or count < 0):
        unreadable.append("submissions")
        count = None
    success_text = row.get("success", "").strip()
    success = {"true": True, "false": False}.get(success_text.lower())  # Python's str(bool)
    if success_text and success is None:
        unreadable.append("success")
    if unreadable:
        folder.problem(label, f"row {line}: {', '.join(unreadable)} cannot be read; taken as unknown")

    def text(column: str) -> str | None:
        return row.get(column, "").strip()[:MAX_TEXT] or None

    return HarnessAccount(
        path=label,
        line=line,
        run_id=text("run_id"),
        timestamp=text("timestamp"),
        task=text("task"),
        agent=text("agent"),
        driver_model=text("driver_model"),
        base_model=text("base_model"),
        baseline=numbers["baseline"],
        best_score=numbers["best_score"],
        improvement=numbers["improvement"],
        submissions=count,
        duration_s=numbers["duration_s"],
        success=success,
        workspace=text("workspace"),
    )
