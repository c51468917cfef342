"""The full attempt ledger of an AutoRL-Bench run, from run.log and scores.json together.

scores.json holds only recorded evaluations; run.log also shows cached duplicates (``Cache hit``),
refused requests (``Invalid request``) and evaluations that started but never finished (a ``Started``
with no ``Done``: the next attempt reuses its ``#n``). Evaluations run one at a time under a lock, so
``Started``/``Done`` pairs never interleave.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import Submission, SubmissionStatus
from collectors.autorl_bench.runlog import SubmitEvent
from collectors.autorl_bench.scores import SCORES, ScoreEntry
from collectors.reading import RunFolder

Localize = Callable[[datetime | None], datetime | None]
_NEVER = datetime.max.replace(tzinfo=UTC)


@dataclass(slots=True)
class _Attempt:
    """An attempt being assembled before it gets its seq."""

    status: SubmissionStatus
    events: list[SubmitEvent] = field(default_factory=list)
    entry: ScoreEntry | None = None
    model_path: str | None = None
    score: float | None = None
    error: str | None = None
    gpu: str | None = None
    number: int | None = None
    requested: datetime | None = None
    completed: datetime | None = None

    def sort_key(self) -> tuple[datetime, int]:
        line = self.events[0].line if self.events else 1 << 62
        moment = self.requested or self.completed or _NEVER
        return moment.replace(microsecond=0), line


def _instant(status: SubmissionStatus, ev: SubmitEvent, default_error: str | None) -> _Attempt:
    """Make an attempt that was answered at once (cached, refused, or failed outside an evaluation)."""
    error = (ev.reason or default_error) if default_error else None
    return _Attempt(
        status, [ev], model_path=ev.model_path, score=ev.score, error=error, requested=ev.at, completed=ev.at
    )


def _attempts_from_log(events: list[SubmitEvent]) -> list[_Attempt]:
    attempts: list[_Attempt] = []
    open_eval: _Attempt | None = None
    crashed_by: dict[int, _Attempt] = {}

    def close_crashed(reason: str) -> None:
        nonlocal open_eval
        if open_eval is not None:
            open_eval.status, open_eval.error = "error", reason
            attempts.append(open_eval)
            open_eval = None

    for ev in events:
        if ev.kind == "started":
            close_crashed(f"evaluation #{ev.number} of the previous attempt never finished (no Done line)")
            open_eval = _Attempt(
                "scored", [ev], model_path=ev.model_path, gpu=ev.gpu, number=ev.number, requested=ev.at
            )
        elif ev.kind == "done":
            if open_eval is not None and open_eval.number in (ev.number, None):
                open_eval.events.append(ev)
                open_eval.score, open_eval.completed = ev.score, ev.at
                attempts.append(open_eval)
                open_eval = None
            elif ev.number in crashed_by:
                # The server error belonged to another request: this evaluation did finish.
                revived = crashed_by.pop(ev.number)
                error_event = revived.events.pop()
                revived.events.append(ev)
                revived.status, revived.error, revived.score, revived.completed = (
                    "scored",
                    None,
                    ev.score,
                    ev.at,
                )
                attempts.append(_instant("error", error_event, "internal server error"))
            else:
                attempts.append(_Attempt("scored", [ev], score=ev.score, number=ev.number, completed=ev.at))
        elif ev.kind == "cache_hit":
            attempts.append(_instant("duplicate", ev, None))
        elif ev.kind == "invalid":
            attempts.append(_instant("rejected", ev, "invalid request"))
        elif open_eval is not None:
            crashed = open_eval
            crashed.events.append(ev)
            close_crashed(ev.reason or "internal server error during evaluation")
            if crashed.number is not None:
                crashed_by[crashed.number] = crashed
            crashed.completed = ev.at
        else:
            attempts.append(_instant("error", ev, "internal server error"))
    if open_eval is not None:
        open_eval.status = "error"
        open_eval.error = f"evaluation #{open_eval.number} was still running when run.log ended"
        attempts.append(open_eval)
    return attempts


def _attach_entries(attempts: list[_Attempt], entries: list[ScoreEntry], folder: RunFolder) -> None:
    # The harness numbers entries len(scores)+1, so position stands in for a missing or repeated id.
    ids = Counter(e.submission_id for e in entries if e.submission_id is not None)
    repeated = sorted(i for i, n in ids.items() if n > 1)
    if repeated:
        folder.problem(
            SCORES,
            f"submission_id {repeated[0]} (and {len(repeated) - 1} other id(s)) appear in more"
            " than one entry; entries are matched to run.log by position instead",
        )
        by_id = {e.index + 1: e for e in entries}
    else:
        by_id = {e.index + 1 if e.submission_id is None else e.submission_id: e for e in entries}
    used: set[int] = set()
    mismatches = Counter[str]()
    first_mismatch: dict[str, str] = {}
    for attempt in attempts:
        done = next((e for e in attempt.events if e.kind == "done"), None)
        if done is None or done.number not in by_id:
            continue
        entry = by_id[done.number]
        used.add(entry.index)
        attempt.entry = entry
        if entry.score is not None and done.score is not None and abs(entry.score - done.score) > 1e-9:
            mismatches["score"] += 1
            first_mismatch.setdefault(
                "score",
                f"entry {entry.index + 1} (#{done.number}) says score"
                f" {entry.score} but run.log line {done.line} says {done.score}",
            )
        if entry.model_path and attempt.model_path and entry.model_path != attempt.model_path:
            mismatches["model_path"] += 1
            first_mismatch.setdefault(
                "model_path",
                f"entry {entry.index + 1} (#{done.number}) names"
                f" {entry.model_path!r} but run.log line {attempt.events[0].line} names"
                f" {attempt.model_path!r}",
            )
    for what, count in mismatches.items():
        more = f" ({count - 1:,} more like it)" if count > 1 else ""
        folder.problem(SCORES, first_mismatch[what] + more)
    for entry in entries:
        if entry.index not in used:
            attempts.append(_Attempt("scored", entry=entry))
    for attempt in attempts:
        if attempt.entry is not None:
            _take_entry(attempt, attempt.entry)


def _take_entry(attempt: _Attempt, entry: ScoreEntry) -> None:
    """Let the recorded entry decide path, score, status and times (it is the harness's own record)."""
    attempt.model_path = entry.model_path or attempt.model_path
    attempt.score = entry.score if entry.score is not None else attempt.score
    attempt.number = entry.submission_id
    if entry.error:
        attempt.status, attempt.error = "error", entry.error
    if entry.completed_at is not None:
        attempt.completed = entry.completed_at
        if entry.elapsed_s is not None:
            attempt.requested = entry.completed_at - timedelta(seconds=entry.elapsed_s)


def build_ledger(
    events: list[SubmitEvent], entries: list[ScoreEntry], localize: Localize, folder: RunFolder
) -> list[Submission]:
    """Merge run.log submission records and scores.json entries into the ordered attempt ledger.

    Every time is placed on the run's clock with ``localize`` first, so that log lines (naive local)
    and entries (naive local, or carrying their own offset) compare.
    """
    events = [replace(e, at=localize(e.at) or e.at) for e in events]
    entries = [replace(e, completed_at=localize(e.completed_at)) for e in entries]
    attempts = _attempts_from_log(events)
    _attach_entries(attempts, entries, folder)
    attempts.sort(key=_Attempt.sort_key)
    first_seq_of_path: dict[str, int] = {}
    submissions: list[Submission] = []
    for seq, a in enumerate(attempts, 1):
        evidence = [
            Evidence("log", path="run.log", line=e.line, end_line=e.line, excerpt=excerpt(e.text))
            for e in a.events
        ]
        if a.entry is not None:
            evidence.insert(
                0,
                Evidence(
                    "file",
                    path=SCORES,
                    excerpt=f"entry {a.entry.index + 1}:"
                    f" submission_id={a.entry.submission_id}, score={a.entry.score}",
                ),
            )
        duplicate_of = None
        if a.status == "duplicate" and a.model_path is not None:
            duplicate_of = first_seq_of_path.get(a.model_path)
        elif a.status == "scored" and a.model_path is not None:
            first_seq_of_path.setdefault(a.model_path, seq)
        submissions.append(
            Submission(
                seq=seq,
                status=a.status,
                model_path=a.model_path,
                requested_at=a.requested,
                completed_at=a.completed,
                score=a.score,
                error=a.error,
                harness_id=a.number,
                elapsed_s=a.entry.elapsed_s if a.entry else None,
                gpu=a.gpu,
                baseline_score=a.entry.baseline_score if a.entry else None,
                duplicate_of=duplicate_of,
                evidence=evidence,
            )
        )
    return submissions
