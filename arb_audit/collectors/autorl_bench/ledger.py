"""The full attempt ledger of an AutoRL-Bench run, from run.log and scores.json together.

scores.json holds only recorded evaluations; run.log also shows cached duplicates (``Cache hit``),
refused requests (``Invalid request``) and evaluations that started but never finished. How the
grading server logs them decides how they are matched:

- the evaluation lock covers the evaluation only: ``[SUBMIT #n] Started`` is logged once the lock is
  taken, but scores.json is saved and ``Done`` logged after it is released, so the next evaluation's
  ``Started`` can come before the previous ``Done``; at most one evaluation *runs* at a time;
- ``#n`` is ``len(scores) + 1`` read inside the lock, so a crashed evaluation's number is reused by the
  next one, and two evaluations can even share a number when the second read scores.json before the
  first saved it (the later save then overwrites the earlier result: a lost entry);
- an exception in the evaluator is logged as ``Internal server error`` and belongs to the evaluation
  that was running, the most recently started one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from arb_audit.collectors.autorl_bench.runlog import SubmitEvent
from arb_audit.collectors.autorl_bench.scores import SCORES, ScoreEntry
from arb_audit.collectors.reading import RunFolder, Tally
from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import Submission, SubmissionStatus

Localize = Callable[[datetime | None], datetime | None]
_NEVER = datetime.max.replace(tzinfo=UTC)
HANDOFF = timedelta(seconds=2)
"""How soon after the next evaluation's Started the previous one's Done is logged (second-resolution log)."""


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
    note: str | None = None
    """The last evaluator warning or error logged while this evaluation ran."""

    def sort_key(self) -> tuple[datetime, int]:
        line = self.events[0].line if self.events else 1 << 62
        moment = self.requested or self.completed or _NEVER
        return moment.replace(microsecond=0), line

    def done_event(self) -> SubmitEvent | None:
        return next((e for e in self.events if e.kind == "done"), None)


def _instant(status: SubmissionStatus, ev: SubmitEvent, default_error: str | None) -> _Attempt:
    """Make an attempt that was answered at once (cached, refused, or failed outside an evaluation)."""
    error = (ev.reason or default_error) if default_error else None
    return _Attempt(
        status, [ev], model_path=ev.model_path, score=ev.score, error=error, requested=ev.at, completed=ev.at
    )


class _LogReplay:
    """Replays run.log's submission records into attempts."""

    def __init__(self) -> None:
        self.attempts: list[_Attempt] = []
        self.running: list[_Attempt] = []
        """Started evaluations without a Done yet, in start order."""
        self.crashed: dict[int, _Attempt] = {}
        """Evaluations closed by an Internal server error, by number (in case the error was another's)."""

    def started(self, ev: SubmitEvent) -> None:
        self.running.append(
            _Attempt("scored", [ev], model_path=ev.model_path, gpu=ev.gpu, number=ev.number, requested=ev.at)
        )

    def done(self, ev: SubmitEvent) -> None:
        match = self._owner(ev)
        if match is not None:
            self.running.remove(match)
            match.events.append(ev)
            match.score, match.completed = ev.score, ev.at
            self.attempts.append(match)
        elif ev.number in self.crashed:
            # The server error belonged to another request: this evaluation did finish.
            revived = self.crashed.pop(ev.number)
            error_event = revived.events.pop()
            revived.events.append(ev)
            revived.status, revived.error, revived.score, revived.completed = "scored", None, ev.score, ev.at
            self.attempts.append(_instant("error", error_event, "internal server error"))
        else:
            self.attempts.append(_Attempt("scored", [ev], score=ev.score, number=ev.number, completed=ev.at))

    def _owner(self, ev: SubmitEvent) -> _Attempt | None:
        """Find the evaluation a Done line closes.

        Only one evaluation runs at a time, so a later evaluation's Started means every earlier one had
        ended. An earlier one's Done follows right after (it is logged once the lock is released); a
        Done well after the latest Started can only be the latest one's, and the earlier ones ended
        without a line (crashed with an error the server did not log).
        """
        candidates = [a for a in self.running if a.number in (ev.number, None)]
        if len(candidates) < 2:
            return candidates[0] if candidates else None
        latest_start = candidates[-1].requested
        if latest_start is not None and ev.at - latest_start <= HANDOFF:
            return candidates[0]
        return candidates[-1]

    def internal_error(self, ev: SubmitEvent) -> None:
        if not self.running:
            self.attempts.append(_instant("error", ev, "internal server error"))
            return
        crashed = self.running.pop()
        crashed.events.append(ev)
        crashed.status, crashed.completed = "error", ev.at
        crashed.error = ev.reason or "internal server error during evaluation"
        self.attempts.append(crashed)
        if crashed.number is not None:
            self.crashed[crashed.number] = crashed

    def finish(self) -> list[_Attempt]:
        last = self.running[-1] if self.running else None
        for attempt in self.running:
            attempt.status = "error"
            attempt.error = (
                f"evaluation #{attempt.number} was still running when run.log ended"
                if attempt is last
                else f"evaluation #{attempt.number} never finished (no Done line; a later evaluation started)"
            )
            self.attempts.append(attempt)
        return self.attempts


def _attempts_from_log(events: list[SubmitEvent]) -> list[_Attempt]:
    replay = _LogReplay()
    for ev in events:
        if ev.kind == "started":
            replay.started(ev)
        elif ev.kind == "done":
            replay.done(ev)
        elif ev.kind == "cache_hit":
            replay.attempts.append(_instant("duplicate", ev, None))
        elif ev.kind == "invalid":
            replay.attempts.append(_instant("rejected", ev, "invalid request"))
        elif ev.kind == "internal_error":
            replay.internal_error(ev)
        elif ev.kind == "evaluator_note" and replay.running:
            replay.running[-1].note = ev.text
    return replay.finish()


def _entry_index(entries: list[ScoreEntry], folder: RunFolder) -> dict[int, ScoreEntry]:
    """Key entries by submission id, or by position when an id is missing or repeated.

    The harness numbers entries ``len(scores) + 1``, so position is what the id would have been.
    """
    ids = [e.submission_id for e in entries if e.submission_id is not None]
    if len(ids) != len(set(ids)):
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        folder.problem(
            SCORES,
            f"submission_id {repeated[0]} (and {len(repeated) - 1} other id(s)) appear in more than one"
            " entry; entries are matched to run.log by position instead",
        )
        return {e.index + 1: e for e in entries}
    return {e.index + 1 if e.submission_id is None else e.submission_id: e for e in entries}


def _attach_entries(attempts: list[_Attempt], entries: list[ScoreEntry], folder: RunFolder) -> None:
    by_id = _entry_index(entries, folder)
    used: set[int] = set()
    score_mismatch, path_mismatch, lost = Tally(), Tally(), Tally()
    # An attempt whose path is the recorded one gets the entry before another with the same number.
    ordered = sorted(attempts, key=lambda a: not (a.entry is None and _names_recorded(a, by_id)))
    for attempt in ordered:
        done = attempt.done_event()
        if done is None or done.number not in by_id:
            continue
        entry = by_id[done.number]
        if entry.index in used:
            lost.add(done.line, f"#{done.number} of {attempt.model_path!r}")
            continue
        used.add(entry.index)
        attempt.entry = entry
        if entry.score is not None and done.score is not None and abs(entry.score - done.score) > 1e-9:
            score_mismatch.add(
                entry.index + 1,
                f"entry {entry.index + 1} (#{done.number}) says score {entry.score} but run.log line"
                f" {done.line} says {done.score}",
            )
        if entry.model_path and attempt.model_path and entry.model_path != attempt.model_path:
            path_mismatch.add(
                entry.index + 1,
                f"entry {entry.index + 1} (#{done.number}) names {entry.model_path!r} but run.log line"
                f" {attempt.events[0].line} names {attempt.model_path!r}",
            )
    for tally in (score_mismatch, path_mismatch):
        if tally.count:
            more = f" ({tally.count - 1:,} more like it)" if tally.count > 1 else ""
            folder.problem(SCORES, tally.example + more)
    if lost.count:
        folder.problem(
            SCORES,
            f"run.log shows {lost.count:,} finished evaluation(s) that scores.json does not hold (first:"
            f" run.log line {lost.first}, {lost.example}): two evaluations took the same submission id and"
            " the later save overwrote the earlier result; the score is taken from run.log",
        )
    for entry in entries:
        if entry.index not in used:
            attempts.append(_Attempt("scored", entry=entry))
    for attempt in attempts:
        if attempt.entry is not None:
            _take_entry(attempt, attempt.entry)


def _names_recorded(attempt: _Attempt, by_id: dict[int, ScoreEntry]) -> bool:
    done = attempt.done_event()
    entry = by_id.get(done.number) if done is not None and done.number is not None else None
    return entry is not None and entry.model_path == attempt.model_path


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


def _judge_unrecorded(attempts: list[_Attempt]) -> None:
    """Without a recorded entry, a zero score after an evaluator error message is an error, not a score.

    The Done line of a failed evaluation carries the placeholder score 0.0; only scores.json's ``error``
    field says it failed, so when the entry is missing the evaluator's own message stands in.
    """
    for a in attempts:
        if a.entry is None and a.status == "scored" and a.score == 0 and a.note:
            a.status, a.error = "error", f"{excerpt(a.note, 200)} (run.log; not in scores.json)"


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
    _judge_unrecorded(attempts)
    attempts.sort(key=_Attempt.sort_key)
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
                    excerpt=f"entry {a.entry.index + 1}: submission_id={a.entry.submission_id},"
                    f" score={a.entry.score}",
                ),
            )
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
                evidence=evidence,
            )
        )
    return submissions
