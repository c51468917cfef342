"""AutoRL-Bench ``run.log``: the loguru sink of the whole harness process, streamed.

Record lines read ``YYYY-MM-DD HH:mm:ss | LEVEL | message`` (naive local time); other lines belong to the
record before them (tracebacks, multi-line messages) or are foreign. The submission lines reveal what
``scores.json`` never holds: request order, cached duplicates, rejected requests and evaluations that
crashed before they were recorded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from arb_audit.collectors.clock import parse_time
from arb_audit.collectors.reading import RunFolder, Tally, text_int, text_number

RECORD = re.compile(
    r"^(?P<at>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[.,]\d+)?"
    r"\s*\|\s*(?P<level>[A-Z]+)\s*\|\s?(?P<msg>.*)$"
)
NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf|None"
EXCEPTION_LINE = re.compile(
    r"^(?:[\w.]+\.)?(?P<name>\w*(?:Error|Exception|Exit|Interrupt))(?::\s*(?P<text>.*))?$"
)

SubmitKind = Literal["started", "done", "cache_hit", "invalid", "internal_error", "evaluator_note"]
MAX_EVENTS = 50_000
"""Submission records kept from run.log (a started and a done record per attempt); later ones are counted
and reported. Each kept one costs kilobytes on its way through the audit; a real run has hundreds."""
EVALUATOR_TROUBLE = re.compile(r"fail|error|not found|timeout|timed out|exit code", re.IGNORECASE)
"""Words of an evaluator's warning that may explain a failed evaluation (its Done line says only 0.0);
evaluators log their failures as warnings (``OpenCompass failed: ...``)."""


@dataclass(slots=True)
class SubmitEvent:
    """One ``[SUBMIT...]`` record."""

    kind: SubmitKind
    """started | done | cache_hit | invalid | internal_error | evaluator_note (a warning or error logged
    while an evaluation ran; only the latest one per evaluation is kept)."""
    line: int
    """Line number in run.log."""
    at: datetime
    """Naive local time of the record (second resolution)."""
    text: str
    """The record's message."""
    number: int | None = None
    """The harness's ``#n`` (started, done)."""
    model_path: str | None = None
    """The path as the agent sent it (started, cache_hit)."""
    gpu: str | None = None
    """The GPU field of a started record."""
    score: float | None = None
    """Score of a done or cache_hit record."""
    best: float | None = None
    """Best-so-far of a done record."""
    reason: str | None = None
    """The exception line that followed (invalid, internal_error)."""


@dataclass(slots=True)
class Moment:
    """A record that marks a point of the run."""

    at: datetime
    """Naive local time."""
    line: int
    """Line number in run.log."""
    text: str
    """The record's message."""
    value: str | None = None
    """The value the record carries (exit code, signal, seconds), if any."""


@dataclass(slots=True)
class RunLog:
    """What run.log says."""

    agent: str | None = None
    """Agent id from the header."""
    task: str | None = None
    """Task from the header."""
    base_model: str | None = None
    """Base model from the header."""
    workspace: str | None = None
    """The run folder's path on the run machine."""
    server_started: Moment | None = None
    """``[Local Mode] Starting evaluation server`` (right after run_meta's start_time is written)."""
    baseline_sets: list[tuple[Moment, float]] = field(default_factory=list)
    """Every ``[BASELINE] Set to X`` in order; later ones after the agent's launch are resets."""
    baseline_score: float | None = None
    """The baseline the harness reported (``Baseline Score: X``)."""
    baseline_cache: str | None = None
    """The baseline cache file used, if the baseline came from cache."""
    agent_launched: Moment | None = None
    """``Running agent: X``: when the agent process was started."""
    agent_finished: Moment | None = None
    """``Agent finished, exit_code=N``."""
    agent_timed_out: Moment | None = None
    """``Agent timed out after Ns``."""
    interrupted: Moment | None = None
    """``Received SIGTERM/SIGINT``."""
    summary: dict[str, str] = field(default_factory=dict)
    """The closing summary block (Best Score, Improvement, Total Submissions, ...)."""
    events: list[SubmitEvent] = field(default_factory=list)
    """Every submission record in order."""
    first_at: datetime | None = None
    """Time of the first record."""
    last_at: datetime | None = None
    """Time of the last record."""
    n_records: int = 0
    """Record lines read."""
    n_lines: int = 0
    """Lines read."""
    foreign: Tally = field(default_factory=Tally)
    """Lines that are neither records nor part of a traceback or multi-line record."""
    unknown_submits: Tally = field(default_factory=Tally)
    """``[SUBMIT`` records in no known form (a submission may be missing from the ledger)."""
    dropped_events: Tally = field(default_factory=Tally)
    """Submission records past :data:`MAX_EVENTS`, counted and not kept."""


_SIMPLE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"Agent: (?P<agent>.+?), Task: (?P<task>.+?), Model: (?P<model>.+)$"), "header"),
    (re.compile(r"^Workspace: (?P<v>.+)$"), "workspace"),
    (re.compile(r"\[Local Mode\] Starting evaluation server"), "server"),
    (re.compile(rf"Baseline cache hit: (?P<v>.+), score=(?P<s>{NUMBER})$"), "baseline_cache"),
    (re.compile(rf"^Baseline Score: (?P<s>{NUMBER})$"), "baseline_final"),
    (re.compile(rf"\[BASELINE\] Set to (?P<s>{NUMBER})$"), "baseline_set"),
    (re.compile(r"^Running agent: (?P<v>.+)$"), "launched"),
    (re.compile(r"Agent finished, exit_code=(?P<v>-?\d+)"), "finished"),
    (re.compile(r"Agent timed out after (?P<v>\d+)s"), "timed_out"),
    (re.compile(r"Received (?P<v>SIG\w+), terminating"), "interrupted"),
    (re.compile(r"^(?P<k>Baseline|Best Score|Improvement|Total Submissions): (?P<v>.*)$"), "summary"),
]
# Every _SIMPLE pattern contains one of these; most records (evaluator chatter) contain none, and
# plain substring tests reject them about twice as fast as one alternation regex.
_KEYWORDS = (
    "gent",
    "Workspace",
    "Local Mode",
    "aseline",
    "BASELINE",
    "Received SIG",
    "Best Score",
    "Improvement",
    "Total Submissions",
)
_STARTED = re.compile(r"\[SUBMIT #(?P<n>\d+)\] Started \| model_path=(?P<rest>.*)$")
_DONE = re.compile(rf"\[SUBMIT #(?P<n>\d+)\] Done \| score=(?P<s>{NUMBER}), best=(?P<b>{NUMBER})")
_CACHE = re.compile(r"\[SUBMIT\] Cache hit (?P<after>\(after lock\) )?for (?P<rest>.*)$")
_INVALID = re.compile(r"\[SUBMIT\] Invalid request")
_INTERNAL = re.compile(r"\[SUBMIT\] Internal server error")


def _submit_event(number: int, at: datetime, msg: str) -> SubmitEvent | None:
    if m := _STARTED.search(msg):
        path, _, gpu = m["rest"].rpartition(" | gpu=")
        if not _:
            path, gpu = m["rest"], "None"
        return SubmitEvent(
            "started",
            number,
            at,
            msg,
            number=text_int(m["n"]),
            model_path=path,
            gpu=None if gpu == "None" else gpu,
        )
    if m := _DONE.search(msg):
        return SubmitEvent(
            "done",
            number,
            at,
            msg,
            number=text_int(m["n"]),
            score=text_number(m["s"]),
            best=text_number(m["b"]),
        )
    if m := _CACHE.search(msg):
        path, _, score = m["rest"].rpartition(", score=")
        return SubmitEvent(
            "cache_hit",
            number,
            at,
            msg,
            model_path=path or m["rest"],
            score=text_number(score) if _ else None,
        )
    if _INVALID.search(msg):
        return SubmitEvent("invalid", number, at, msg)
    if _INTERNAL.search(msg):
        return SubmitEvent("internal_error", number, at, msg)
    return None


def _apply(log: RunLog, kind: str, m: re.Match[str], moment: Moment) -> None:
    if kind == "header":
        log.agent, log.task, log.base_model = m["agent"].strip(), m["task"].strip(), m["model"].strip()
    elif kind == "workspace" and log.workspace is None:
        log.workspace = m["v"].strip()
    elif kind == "server":
        log.server_started = moment
    elif kind == "baseline_cache":
        log.baseline_cache = m["v"]
    elif kind == "baseline_final":
        log.baseline_score = text_number(m["s"])
    elif kind == "baseline_set" and (score := text_number(m["s"])) is not None:
        log.baseline_sets.append((moment, score))
    elif kind == "launched":
        log.agent_launched = moment
    elif kind == "finished":
        log.agent_finished = moment
    elif kind == "timed_out":
        log.agent_timed_out = moment
    elif kind == "interrupted":
        log.interrupted = moment
    elif kind == "summary" and log.agent_launched is not None:
        log.summary[m["k"]] = m["v"].strip()


CHAINED = ("During handling of the above exception", "The above exception was the direct cause")


def _continues(text: str) -> bool:
    """Tell whether a non-record line continues the record before it (indented, blank or chained)."""
    return not text.strip() or text[:1].isspace() or text.strip().startswith(CHAINED)


def read_run_log(folder: RunFolder, rel: str = "run.log") -> RunLog | None:
    """Stream ``rel`` into a :class:`RunLog`; None when the file is absent or unreadable."""
    if folder.file(rel) is None:
        return None
    log = RunLog()
    last_event: SubmitEvent | None = None
    running = 0
    last_stamp: str | None = None
    at: datetime | None = None
    after_record = False
    in_traceback = False
    for number, text in folder.lines(rel):
        log.n_lines = number
        record = RECORD.match(text)
        if record is None:
            stripped = text.strip()
            if after_record and stripped.startswith("Traceback (most recent call last)"):
                in_traceback = True
            elif in_traceback and not text[:1].isspace() and EXCEPTION_LINE.match(stripped):
                in_traceback = False
                if last_event is not None and last_event.kind in ("invalid", "internal_error"):
                    last_event.reason = stripped
            elif not (in_traceback or (after_record and _continues(text))):
                log.foreign.add(number)
                after_record = False
            continue
        stamp = record["at"]
        if stamp != last_stamp:  # records come many to a second; parse each second once
            last_stamp, at = stamp, parse_time(stamp)
        if at is None:
            log.foreign.add(number)
            continue
        log.n_records += 1
        log.first_at = log.first_at or at
        log.last_at = at
        msg = record["msg"].strip()
        after_record, in_traceback, last_event = True, False, None
        if "[SUBMIT" in msg and len(log.events) >= MAX_EVENTS:
            log.dropped_events.add(number)
            continue
        if "[SUBMIT" in msg:
            event = _submit_event(number, at, msg)
            if event is not None:
                log.events.append(event)
                last_event = event
                running += {"started": 1, "done": -1, "internal_error": -1}.get(event.kind, 0)
                running = max(running, 0)
            else:
                log.unknown_submits.add(number)
            continue
        if running and record["level"] in ("WARNING", "ERROR", "CRITICAL") and EVALUATOR_TROUBLE.search(msg):
            note = SubmitEvent("evaluator_note", number, at, msg[:500])
            if log.events and log.events[-1].kind == "evaluator_note":
                log.events[-1] = note
            else:
                log.events.append(note)
            continue
        if not any(k in msg for k in _KEYWORDS):
            continue
        for pattern, kind in _SIMPLE:
            if m := pattern.search(msg):
                _apply(log, kind, m, Moment(at, number, msg, m.groupdict().get("v")))
                break
    if log.dropped_events.count:
        folder.problem(
            rel,
            f"{log.dropped_events.count:,} submission record(s) past the first {MAX_EVENTS:,} (first: line"
            f" {log.dropped_events.first}) were counted but not read: the ledger stops there",
        )
    if log.unknown_submits.count:
        folder.problem(
            rel,
            f"{log.unknown_submits.count:,} `[SUBMIT` record(s) are in no known form (first: line"
            f" {log.unknown_submits.first}); the attempts they stand for may be missing from the ledger",
        )
    if log.n_lines and not log.n_records:
        folder.problem(rel, "has no line in the AutoRL-Bench `time | level | message` format")
    elif log.foreign.count:
        folder.problem(
            rel,
            f"{log.foreign.count:,} line(s) are neither `time | level | message` records nor tracebacks"
            f" (first: line {log.foreign.first}); they were skipped",
        )
    return log
