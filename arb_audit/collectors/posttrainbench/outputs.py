"""The pipeline's own files in a PostTrainBench run folder (``src/run_task.sh``), read defensively.

``output.log`` (job args, the ``--- SOLVE DIAGNOSTICS ---`` block, evaluation attempts),
``time_taken.txt``, ``metrics.json`` (or the ``No metrics.json produced.`` placeholder that
``extract_traces.py`` writes in its place), ``final_eval_{n}.txt``, ``prompt.txt``, and the stderr log
(``error.log``, renamed ``judgement.log`` when published).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from arb_audit.collectors.harness_errors import grader_infra_error
from arb_audit.collectors.reading import BOM, RunFolder, json_number, text_int, text_number
from arb_audit.regular_files import open_regular, read_regular

OUTPUT_LOG = "output.log"
TIME_TAKEN = "time_taken.txt"
METRICS = "metrics.json"
PROMPT = "prompt.txt"
STDERR_LOGS = ("error.log", "judgement.log")
"""``error.log`` in the pipeline's folder; ``judgement.log`` is the same file in the published copy."""
MAX_ENTRIES = 10_000
"""Most entries of a run folder looked at when listing it."""
MAX_VALUE_CHARS = 4000
"""Longest job-args line or diagnostics value kept."""
MAX_DIAGNOSTICS = 64
"""Most diagnostics keys kept (a block with no end would otherwise take the rest of the log)."""
MAX_ATTEMPTS = 100
"""Most evaluation attempt numbers kept (the pipeline makes at most 9)."""
HEAD_BYTES = 64 * 1024
"""Bytes read from the start of a small text file (prompt, judgement lines, placeholders)."""
TAIL_BYTES = 16 * 1024
"""Bytes read from the end of a final_eval file to find its last line."""
EXCERPT_CHARS = 500
"""Longest excerpt of a single line kept."""
PROMPT_EXCERPT_CHARS = 2000
"""Longest excerpt of prompt.txt kept."""
PLACEHOLDER_BYTES = 512
"""Files larger than this are not taken for a placeholder."""

_ARGS = re.compile(
    r"(?P<task>[A-Za-z0-9][\w.\-]{0,63}) (?P<agent>[\w.\-]{1,80}) (?P<model>[\w.\-]{1,96}/[\w.\-]{1,96})"
    r" (?P<run_id>[\w.\-]{1,64}) (?P<hours>\d{1,4}(?:\.\d{1,4})?) (?P<config>\S{1,200})"
    r"(?: (?P<gpus>\d{1,3}))?"
)
"""run_task.sh's ``echo "$@"``: task, agent, model, run id, hours, agent config and (since 2026) GPUs."""
ARGS_LINES = 20
"""The args line is looked for among output.log's first lines (a banner may come before it)."""
_DIAG_START = "--- SOLVE DIAGNOSTICS ---"
_DIAG_END = "--- END SOLVE DIAGNOSTICS ---"
_CLI_START = "--- AGENT CLI VERSION ---"
_DIAG_FIELD = re.compile(r"(?P<key>[a-z_]{1,64}):\s?(?P<value>.*)")
_EVAL_ATTEMPT = re.compile(r"Evaluation attempt (?P<n>\d{1,6}) \(phase attempt")
_JUDGE = re.compile(r"=== Judge: (?P<label>.{1,200}?) ===")
_TIMEOUT = re.compile(r"killed by timeout \(reached (?P<hours>[^)]{0,20}?)h limit\)")
_SIGNAL = re.compile(r"killed by signal (?P<n>-?\d{1,10}) \((?P<name>[^)]{0,40})\)")
_ERROR = re.compile(r"exited with error code (?P<code>-?\d{1,10})")
_HMS = re.compile(r"(?P<h>\d{1,5}):(?P<m>\d{1,2}):(?P<s>\d{1,2})")
_PLACEHOLDER = re.compile(r"No [^\n]{1,200} produced\.?")
_FINAL_EVAL = re.compile(r"final_eval_(?P<n>\d{1,6})\.txt")
_PROMPT_MODEL = re.compile(r"`(?P<model>[A-Za-z0-9][\w.\-]{0,95}/[\w.\-]{1,96})`")
_PROMPT_BENCHMARK = re.compile(r"to excel at (?P<benchmark>[^\n]{1,200}?)\.?[ \t]*$", re.MULTILINE)
_PROMPT_HOURS = re.compile(r"maximum of (?P<hours>\d{1,4}(?:\.\d{1,4})?) hours?")
_KILLED = re.compile(r"\bKilled\b")

Outcome = Literal["exited", "timeout", "signal", "error"]
"""How the agent's process ended, as the diagnostics ``status`` says."""


def _cut(text: str, limit: int = EXCERPT_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def list_top(folder: RunFolder, limit: int = MAX_ENTRIES) -> list[str]:
    """Return the names directly inside the run folder, sorted; at most ``limit`` are looked at."""
    try:
        with os.scandir(folder.root) as entries:
            names = [entry.name for entry in itertools.islice(entries, limit + 1)]
    except OSError as exc:
        folder.problem(".", f"cannot be listed: {exc.strerror or exc}")
        return []
    if len(names) > limit:
        folder.problem(".", f"holds more than {limit:,} entries; only {limit:,} were looked at")
        names = names[:limit]
    return sorted(names)


def read_head(folder: RunFolder, rel: str, max_bytes: int = HEAD_BYTES) -> tuple[str, int] | None:
    """Return ``(text of the first max_bytes, size in bytes)`` of a small text file, or None if absent.

    Undecodable bytes become U+FFFD and are reported; a file cut at ``max_bytes`` is not.
    """
    path = folder.file(rel)
    if path is None:
        return None
    try:
        size = path.stat().st_size
        with open_regular(path, follow_symlinks=True) as handle:
            raw = handle.read(max_bytes)
    except OSError as exc:
        folder.problem(rel, f"cannot be read: {exc.strerror or exc}")
        return None
    raw = raw.removeprefix(BOM)
    try:
        return raw.decode("utf-8"), size
    except UnicodeDecodeError as exc:
        # A cut may split the last character; only earlier damage is the file's fault.
        if exc.start < len(raw) - 3 or size <= max_bytes:
            folder.problem(rel, f"is not UTF-8 (byte {exc.start}); undecodable bytes were replaced")
        return raw.decode("utf-8", errors="replace"), size


def placeholder_of(text: str) -> str | None:
    """Return the placeholder text (``No metrics.json produced.``) if that is all ``text`` holds."""
    stripped = text.strip()
    return stripped if _PLACEHOLDER.fullmatch(stripped) else None


def read_placeholder(folder: RunFolder, rel: str) -> str | None:
    """Return the placeholder ``extract_traces.py`` wrote in place of a missing file, if ``rel`` holds one.

    Silent: whatever is wrong with the file is reported by the reader that reads it next.
    """
    path = folder.root / rel
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > PLACEHOLDER_BYTES:
            return None
        raw = read_regular(path, PLACEHOLDER_BYTES)
    except OSError:
        return None
    return placeholder_of(raw.removeprefix(BOM).decode("utf-8", errors="replace"))


# --- output.log ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SolveStatus:
    """The diagnostics ``status`` line, parsed."""

    text: str
    """The status as written (``killed by timeout (reached 10h limit)``)."""
    outcome: Outcome | None = None
    """exited | timeout | signal | error; None when the text is none of the pipeline's forms."""
    timeout_hours: float | None = None
    """For a timeout: the limit in hours the status names."""
    signal: int | None = None
    """For a signal: its number."""
    signal_name: str | None = None
    """For a signal: its name as ``kill -l`` gave it (``KILL``, or ``unknown``)."""
    error_code: int | None = None
    """For an error: the exit code the status names."""

    @property
    def expected_exit_code(self) -> int | None:
        """The exit code run_task.sh prints alongside this status (0, 124, 128+N, or N)."""
        if self.outcome == "exited":
            return 0
        if self.outcome == "timeout":
            return 124
        if self.outcome == "signal" and self.signal is not None:
            return 128 + self.signal
        return self.error_code if self.outcome == "error" else None


def parse_status(text: str) -> SolveStatus:
    """Parse a diagnostics ``status`` value; an unknown form keeps only the text."""
    text = text.strip()[:MAX_VALUE_CHARS]
    if text == "exited normally":
        return SolveStatus(text, "exited")
    if m := _TIMEOUT.fullmatch(text):
        return SolveStatus(text, "timeout", timeout_hours=text_number(m["hours"]))
    if m := _SIGNAL.fullmatch(text):
        return SolveStatus(text, "signal", signal=text_int(m["n"]), signal_name=m["name"])
    if m := _ERROR.fullmatch(text):
        return SolveStatus(text, "error", error_code=text_int(m["code"]))
    return SolveStatus(text)


@dataclass(slots=True)
class SolveDiagnostics:
    """The ``--- SOLVE DIAGNOSTICS ---`` block run_task.sh prints after the agent's process ends."""

    line: int
    """Line of output.log where the block starts."""
    fields: dict[str, str] = field(default_factory=dict)
    """Every key as written (``exit_code``, ``status``, ``hostname``, ``disk_job_dir``, ``memory`` ...)."""
    closed: bool = False
    """Whether the block's end marker was seen."""

    @property
    def exit_code(self) -> int | None:
        """The agent process's exit code (124 on timeout, 128+N when killed by signal N)."""
        return text_int(self.fields.get("exit_code", ""))

    @property
    def status(self) -> SolveStatus | None:
        """The parsed ``status`` line; None when the block has none."""
        return parse_status(self.fields["status"]) if "status" in self.fields else None

    @property
    def final_model_files(self) -> int | None:
        """How many entries ``task/final_model/`` held when the agent stopped."""
        return text_int(self.fields.get("final_model_files", ""))


@dataclass(frozen=True, slots=True)
class JobArgs:
    """run_task.sh's arguments, as its first ``echo "$@"`` wrote them."""

    line: int
    """Line of output.log."""
    task: str
    """The task id."""
    agent: str
    """The agent (``claude``, ``codex`` ...)."""
    model: str
    """The base model id (``Qwen/Qwen3-1.7B-Base``)."""
    run_id: str
    """The run id (the HTCondor cluster id, or whatever id the launcher gave)."""
    hours: float | None
    """The time budget in hours."""
    agent_config: str
    """The agent configuration (the driving model)."""
    gpus: int | None
    """The GPUs the job was given; None when the line has no such field (older pipelines)."""


def parse_args_line(text: str, line: int = 1) -> JobArgs | None:
    """Parse run_task.sh's args line; None when ``text`` is not one."""
    m = _ARGS.fullmatch(text.strip())
    if m is None:
        return None
    return JobArgs(
        line=line,
        task=m["task"],
        agent=m["agent"],
        model=m["model"],
        run_id=m["run_id"],
        hours=text_number(m["hours"]),
        agent_config=m["config"],
        gpus=text_int(m["gpus"]) if m["gpus"] else None,
    )


@dataclass(slots=True)
class OutputLog:
    """What output.log (run_task.sh's stdout) says about the run."""

    job_args: str | None = None
    """The args line: the job's arguments (task, agent, model, run id, hours, agent config, gpus); None
    when none of the first lines is one (a banner is not the args)."""
    args: JobArgs | None = None
    """The args line, parsed."""
    diagnostics: SolveDiagnostics | None = None
    """The last SOLVE DIAGNOSTICS block."""
    diagnostics_blocks: int = 0
    """How many SOLVE DIAGNOSTICS blocks the log holds (one per agent process; more means reuse)."""
    eval_attempts: list[int] = field(default_factory=list)
    """The numbers of the ``Evaluation attempt k (phase attempt i of m)`` lines, in order."""
    cli_version: str | None = None
    """The first line of the AGENT CLI VERSION block, when the pipeline recorded one."""
    judges: list[str] = field(default_factory=list)
    """Judge labels from ``=== Judge: <label> ===`` banners, in order."""
    lines: int = 0
    """Lines read."""


def _diagnostic_line(log: OutputLog, stripped: str) -> bool:
    """Add one line to the open diagnostics block; False when the line ends the block."""
    block = log.diagnostics
    if block is None:
        return False
    if stripped == _DIAG_END:
        block.closed = True
        return False
    m = _DIAG_FIELD.fullmatch(stripped)
    if m is None:
        return False
    if m["key"] in block.fields or len(block.fields) < MAX_DIAGNOSTICS:
        block.fields[m["key"]] = m["value"].strip()[:MAX_VALUE_CHARS]
    return True


def _banner_line(log: OutputLog, stripped: str) -> None:
    if (m := _EVAL_ATTEMPT.match(stripped)) and len(log.eval_attempts) < MAX_ATTEMPTS:
        number = text_int(m["n"])
        if number is not None:
            log.eval_attempts.append(number)
    elif (m := _JUDGE.fullmatch(stripped)) and len(log.judges) < MAX_ATTEMPTS:
        log.judges.append(m["label"])


def parse_output_log(lines: Iterable[tuple[int, str]]) -> OutputLog:
    """Read output.log from ``(line number, text)`` pairs; never raises on any text."""
    log = OutputLog()
    in_block = in_cli = False
    for number, line in lines:
        log.lines = number
        stripped = line.strip()
        if log.args is None and number <= ARGS_LINES and (args := parse_args_line(stripped, number)):
            log.job_args, log.args = stripped[:MAX_VALUE_CHARS], args
        if in_block and _diagnostic_line(log, stripped):
            continue
        in_block = False
        if in_cli:
            in_cli = False
            if stripped and not stripped.startswith("---"):
                log.cli_version = stripped[:MAX_VALUE_CHARS]
                continue
        if stripped == _DIAG_START:
            log.diagnostics, in_block = SolveDiagnostics(line=number), True
            log.diagnostics_blocks += 1
        elif stripped == _CLI_START:
            in_cli = True
        else:
            _banner_line(log, stripped)
    return log


def _check_diagnostics(folder: RunFolder, log: OutputLog) -> None:
    block = log.diagnostics
    if block is None:
        folder.problem(
            OUTPUT_LOG, "has no SOLVE DIAGNOSTICS block (the pipeline stopped before the agent ended?)"
        )
        return
    if log.diagnostics_blocks > 1:
        folder.problem(
            OUTPUT_LOG, f"holds {log.diagnostics_blocks} SOLVE DIAGNOSTICS blocks; the last is used"
        )
    if not block.closed:
        folder.problem(OUTPUT_LOG, f"the SOLVE DIAGNOSTICS block at line {block.line} has no end marker")
    status = block.status
    if status is None:
        folder.problem(OUTPUT_LOG, "the SOLVE DIAGNOSTICS block has no status")
    elif status.outcome is None:
        folder.problem(
            OUTPUT_LOG, f"diagnostics status {_cut(status.text, 80)!r} is not one the pipeline writes"
        )
    elif status.expected_exit_code is not None and block.exit_code != status.expected_exit_code:
        folder.problem(
            OUTPUT_LOG,
            f"diagnostics exit_code {block.fields.get('exit_code', '')[:20]!r} does not match status"
            f" {status.text!r} (expected {status.expected_exit_code})",
        )


def read_output_log(folder: RunFolder) -> OutputLog | None:
    """Stream output.log; None when it is absent. A missing or odd diagnostics block is a problem."""
    if folder.file(OUTPUT_LOG) is None:
        return None
    log = parse_output_log(folder.lines(OUTPUT_LOG))
    _check_diagnostics(folder, log)
    return log


# --- time_taken.txt, metrics.json ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TimeTaken:
    """time_taken.txt: the agent's wall time, ``HH:MM:SS``."""

    text: str
    """The line as written."""
    seconds: int
    """The time in seconds."""


def parse_hms(text: str) -> int | None:
    """Parse ``H:MM:SS`` (hours of any width) into seconds; None unless minutes and seconds are < 60."""
    m = _HMS.fullmatch(text.strip())
    if m is None or int(m["m"]) >= 60 or int(m["s"]) >= 60:
        return None
    return int(m["h"]) * 3600 + int(m["m"]) * 60 + int(m["s"])


def read_time_taken(folder: RunFolder) -> TimeTaken | None:
    """Read time_taken.txt; None when absent or not ``HH:MM:SS`` (then with a problem)."""
    head = read_head(folder, TIME_TAKEN, 256)
    if head is None:
        return None
    text = head[0].strip()
    if not text:
        folder.problem(TIME_TAKEN, "is empty")
        return None
    first = text.splitlines()[0].strip()
    seconds = parse_hms(first)
    if seconds is None:
        folder.problem(TIME_TAKEN, f"holds {_cut(first, 60)!r}, not HH:MM:SS; the wall time is unknown")
        return None
    if first != text:
        folder.problem(TIME_TAKEN, "holds more than one line; the first is used")
    return TimeTaken(first, seconds)


@dataclass(slots=True)
class Metrics:
    """metrics.json as evaluate.py wrote it (or the placeholder written where it was missing)."""

    accuracy: float | None = None
    """The score the aggregators read; None when absent, not a number, or a placeholder."""
    stderr: float | None = None
    """Its standard error."""
    values: dict[str, float] = field(default_factory=dict)
    """Every top-level numeric field (``n_examples``, ``total_grader_calls`` ...), accuracy included."""
    placeholder: str | None = None
    """The placeholder text (``No metrics.json produced.``) when the file holds that instead of JSON."""

    @property
    def score(self) -> float | None:
        """The run's score: the accuracy."""
        return self.accuracy


def read_metrics(folder: RunFolder) -> Metrics | None:
    """Read metrics.json; None when absent or unreadable. A placeholder or no accuracy is a problem."""
    placeholder = read_placeholder(folder, METRICS)
    if placeholder is not None:
        folder.problem(
            METRICS, f"holds the placeholder {placeholder!r}: the run produced no metrics; no score"
        )
        return Metrics(placeholder=placeholder)
    data = folder.read_json(METRICS, expect=dict)
    if data is None:
        return None
    values = {key[:200]: n for key, value in data.items() if (n := json_number(value)) is not None}
    metrics = Metrics(accuracy=values.get("accuracy"), stderr=values.get("stderr"), values=values)
    if metrics.accuracy is None:
        found = repr(data["accuracy"])[:40] if "accuracy" in data else "absent"
        folder.problem(METRICS, f"has no numeric `accuracy` ({found}); no score")
    return metrics


# --- final_eval_{n}.txt, prompt.txt ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FinalEval:
    """One ``final_eval_{n}.txt``: evaluate.py's stdout for the n-th evaluation attempt."""

    path: str
    """The file's name."""
    number: int
    """The attempt number n."""
    size: int
    """Size in bytes."""
    last_line: str
    """The last non-empty line, shortened (usually the score or the error that ended the attempt)."""
    infra_error: str | None = None
    """The grader's own infrastructure error the attempt ended on (``Failed to start vLLM server``), quoted;
    None when its tail holds none."""


def _last_line(folder: RunFolder, rel: str) -> tuple[int, str, str] | None:
    path = folder.file(rel)
    if path is None:
        return None
    try:
        size = path.stat().st_size
        with open_regular(path, follow_symlinks=True) as handle:
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read(TAIL_BYTES)
    except OSError as exc:
        folder.problem(rel, f"cannot be read: {exc.strerror or exc}")
        return None
    text = tail.decode("utf-8", errors="replace")
    lines = [line.strip() for line in text.splitlines()]
    return size, _cut(next((line for line in reversed(lines) if line), "")), text


def read_final_evals(folder: RunFolder, names: Iterable[str] | None = None) -> list[FinalEval]:
    """List the ``final_eval_{n}.txt`` files in n order, with size and last non-empty line."""
    found = []
    for name in list_top(folder) if names is None else names:
        m = _FINAL_EVAL.fullmatch(name)
        if m and (tail := _last_line(folder, name)) is not None:
            found.append(FinalEval(name, int(m["n"]), tail[0], tail[1], grader_infra_error(tail[2])))
    return sorted(found, key=lambda e: (e.number, e.path))


@dataclass(frozen=True, slots=True)
class Prompt:
    """prompt.txt: the exact prompt the agent was given."""

    size: int
    """Size in bytes."""
    first_line: str
    """The first line, shortened."""
    excerpt: str
    """The start of the prompt (at most 2000 characters)."""
    model: str | None = None
    """The first ``org/model`` id the prompt names in backquotes."""
    benchmark: str | None = None
    """The benchmark named in ``... to excel at <benchmark>.``."""
    hours: float | None = None
    """The hours named in ``a maximum of <H> hours``."""


def read_prompt(folder: RunFolder) -> Prompt | None:
    """Read prompt.txt; None when absent."""
    head = read_head(folder, PROMPT)
    if head is None:
        return None
    text, size = head
    if not text.strip():
        folder.problem(PROMPT, "is empty")
    model = _PROMPT_MODEL.search(text)
    benchmark = _PROMPT_BENCHMARK.search(text)
    hours = _PROMPT_HOURS.search(text)
    return Prompt(
        size=size,
        first_line=_cut(text.lstrip().split("\n", 1)[0].strip()),
        excerpt=_cut(text, PROMPT_EXCERPT_CHARS),
        model=model["model"] if model else None,
        benchmark=benchmark["benchmark"].strip() if benchmark else None,
        hours=text_number(hours["hours"]) if hours else None,
    )


# --- error.log / judgement.log ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StderrLog:
    """What the pipeline's stderr log says about how the run ended (``dev_utils/terminated_finder.py``)."""

    path: str
    """``error.log``, or ``judgement.log`` in a published copy."""
    terminated: bool
    """The log starts with ``Terminated``: the job was stopped by its timeout."""
    killed_line: int | None
    """The first line holding the word ``Killed`` (the kernel's OOM killer, as a rule); None if none."""
    killed_excerpt: str | None
    """That line, shortened."""
    lines: int
    """Lines read."""


def _scan_stderr(folder: RunFolder, rel: str) -> StderrLog:
    terminated: bool | None = None  # decided by the first line with text
    killed_line: int | None = None
    killed_excerpt: str | None = None
    count = 0
    for number, text in folder.lines(rel):
        count = number
        if terminated is None and text.strip():
            terminated = text.lstrip().startswith("Terminated")
        if killed_line is None and _KILLED.search(text):
            killed_line, killed_excerpt = number, _cut(text.strip())
    return StderrLog(rel, bool(terminated), killed_line, killed_excerpt, count)


def read_stderr_logs(folder: RunFolder) -> list[StderrLog]:
    """Read error.log and judgement.log (whichever exist) for the Terminated and Killed markers."""
    return [_scan_stderr(folder, rel) for rel in STDERR_LOGS if folder.file(rel) is not None]
