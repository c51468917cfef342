"""The grading API's queue: submissions take turns at the evaluator in the order they arrived.

AutoRL-Bench's server evaluates one submission at a time behind a plain lock, and a plain lock is not
fair: under 200 concurrent submissions the order they are graded (and so recorded) in is whatever the
scheduler picks. Here each submission draws a ticket when it arrives and is evaluated when its ticket
comes up, so the ledger holds evaluated attempts in arrival order. The line is bounded twice: a
submission arriving while ``max_waiting`` already wait is refused at once, and one whose turn has not
come within ``max_wait_s`` gives its place up; both are told when to retry (HTTP 503, ``Retry-After``),
estimated from how long recent turns took. With the evaluator's own timeout, every submission is thus
answered within ``max_wait_s`` plus one evaluation.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

MAX_WAITING = 256
"""Submissions that may wait for the evaluator at once (200 concurrent ones are all taken)."""
MAX_WAIT_S = 4 * 3600.0
"""Longest a submission waits for its turn (two of AutoRL-Bench's 7200 s evaluator timeouts)."""
RECENT_TURNS = 20
"""Turns whose length estimates ``Retry-After``."""
MAX_RETRY_AFTER_S = 3600
"""Largest ``Retry-After`` said (an estimate, not a promise)."""
ENDED = "the recording has ended; not evaluated"
"""Why a submission still waiting when the run ends is not evaluated."""


class Busy(Exception):
    """The submission is not evaluated now.

    The message says why, ``retry_after_s`` when to retry (None: not in this run, which has ended).
    """

    def __init__(self, message: str, retry_after_s: int | None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


@dataclass(frozen=True, slots=True)
class Ticket:
    """A submission's place in the line."""

    number: int
    """Its place: tickets are drawn in arrival order."""
    arrived_at: datetime
    """When it was drawn (the attempt's ``requested_at``: ordered as the tickets are)."""
    arrived_mono: float
    """The same moment on the monotonic clock, for the wait limit."""


class TurnQueue:
    """A bounded first-come-first-served line in front of one evaluator."""

    def __init__(self, max_waiting: int = MAX_WAITING, max_wait_s: float = MAX_WAIT_S) -> None:
        self.max_waiting = max_waiting
        self.max_wait_s = max_wait_s
        self._lock = threading.Lock()
        self._calls: dict[int, threading.Condition] = {}
        """Each waiting ticket's own condition: a turn that ends wakes the next ticket only, not all
        of those waiting (200 waiters woken 200 times is 40,000 wake-ups)."""
        self._turn_ended = threading.Condition(self._lock)
        """Notified when a turn ends, for :meth:`close`."""
        self._drawn = 0
        """Tickets drawn so far; the next one gets this number."""
        self._serving = 0
        """The ticket whose turn it is (or comes next when nobody is evaluated)."""
        self._given_up: set[int] = set()
        """Tickets that left the line before their turn: skipped when it comes."""
        self._turn_started: float | None = None
        self._closed = False
        """The run has ended: no more turns are given."""
        self._recent: deque[float] = deque(maxlen=RECENT_TURNS)

    @property
    def waiting(self) -> int:
        """Submissions waiting for their turn (not counting the one being evaluated)."""
        with self._lock:
            return self._waiting()

    @property
    def evaluating(self) -> bool:
        """A submission holds the evaluator now."""
        with self._lock:
            return self._turn_started is not None

    def _waiting(self) -> int:
        in_turn = 1 if self._turn_started is not None else 0
        return self._drawn - self._serving - in_turn - len(self._given_up)

    def retry_after_s(self) -> int:
        """Seconds until the line has likely moved on: recent turns' mean length times the line's length."""
        with self._lock:
            return self._retry_after_s()

    def _retry_after_s(self) -> int:
        mean = sum(self._recent) / len(self._recent) if self._recent else 1.0
        return max(1, min(MAX_RETRY_AFTER_S, math.ceil(mean * (self._waiting() + 1))))

    @contextmanager
    def turn(self) -> Iterator[Ticket]:
        """Hold the evaluator for one submission: wait for its turn, hand it on when done.

        Raises Busy, before the turn, when the line is full or the turn does not come in time.
        """
        ticket = self.arrive()
        self.wait(ticket)
        try:
            yield ticket
        finally:
            self.leave(ticket)

    def arrive(self) -> Ticket:
        """Draw a ticket; raise Busy when ``max_waiting`` submissions already wait."""
        with self._lock:
            if self._closed:
                raise Busy(ENDED, None)
            if self._waiting() >= self.max_waiting:
                raise Busy(
                    f"grading queue full: {self._waiting()} submissions waiting",
                    self._retry_after_s(),
                )
            ticket = Ticket(self._drawn, datetime.now(UTC), time.monotonic())
            self._drawn += 1
            return ticket

    def wait(self, ticket: Ticket) -> None:
        """Block until it is ``ticket``'s turn; raise Busy (the place given up) after ``max_wait_s``."""
        deadline = ticket.arrived_mono + self.max_wait_s
        with self._lock:
            call = self._calls[ticket.number] = threading.Condition(self._lock)
            try:
                while not (self._serving == ticket.number and self._turn_started is None):
                    if self._closed:
                        raise Busy(ENDED, None)
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Busy(
                            f"waited {self.max_wait_s:g}s for the evaluator without a turn; not evaluated",
                            self._retry_after_s(),
                        )
                    call.wait(left)
            except BaseException:
                # Whatever ends the wait (the limit, an interrupt), the place is given up: a ticket
                # left in the line would stop every later one.
                self._given_up.add(ticket.number)
                self._skip_given_up()
                raise
            finally:
                del self._calls[ticket.number]
            self._turn_started = time.monotonic()

    def leave(self, ticket: Ticket) -> None:
        """End ``ticket``'s turn (after its attempt is recorded) and hand the turn to the next one."""
        with self._lock:
            if self._serving != ticket.number or self._turn_started is None:
                raise RuntimeError(f"ticket {ticket.number} left a turn it did not hold")
            self._recent.append(time.monotonic() - self._turn_started)
            self._turn_started = None
            self._serving += 1
            self._skip_given_up()

    def _skip_given_up(self) -> None:
        """Move the turn past tickets that left the line and call the next (the caller holds the lock)."""
        if self._turn_started is None:
            while self._serving in self._given_up:
                self._given_up.remove(self._serving)
                self._serving += 1
            if (call := self._calls.get(self._serving)) is not None:
                call.notify()
            self._turn_ended.notify_all()

    def close(self, wait_s: float) -> bool:
        """Give no more turns: those waiting are told the run has ended.

        Waits up to ``wait_s`` for the turn in progress to end; returns whether it did.
        """
        deadline = time.monotonic() + wait_s
        with self._lock:
            self._closed = True
            for call in self._calls.values():
                call.notify()
            while self._turn_started is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._turn_ended.wait(left)
            return True
