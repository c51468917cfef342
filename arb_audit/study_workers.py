"""Worker processes that audit a study's runs, each run under a deadline of its own.

A run folder is untrusted: its audit can hang (a store held by another process, a file that never
ends) or take a worker down. So each worker is a process of its own session, and everything it starts
is in its process group: a run past its deadline has the whole group killed, the run is reported as
stopped, and a fresh worker takes the next run. A worker whose parent is gone (the ingest was killed)
kills its group too. Interrupting the ingest kills every worker and reports the runs in flight as
interrupted, so the caller keeps what was done and no worker is left spinning.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport

RUN_DEADLINE_S = 900.0
"""Longest one run's audit may take in a study (a large run's weights and code take minutes)."""
MAX_ERROR_CHARS = 2000
"""Longest error kept for a run."""
PARENT_CHECK_S = 1.0
"""How often a worker looks whether the ingest that started it is still there."""
STOP_WAIT_S = 5.0
"""How long an idle worker is given to leave when asked, before it is killed."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How one run's audit ended."""

    key: str
    """The run folder, as given."""
    report: AuditReport | None
    """The audit, when there is one."""
    error: str | None
    """Why there is none."""
    retry: bool = False
    """Whether the failure was not the run's own answer (a deadline, a worker killed, an interruption):
    its next ingest audits it again."""


def audit_one(folder: str) -> tuple[AuditReport | None, str | None]:
    """Audit one run folder; return its audit, or why there is none (never raises)."""
    from arb_audit.pipeline import audit

    try:
        return audit(Path(folder)), None
    except Exception as exc:  # one bad run must never stop the study
        return None, f"{type(exc).__name__}: {exc}"[:MAX_ERROR_CHARS]


def _watch_parent(parent: int) -> None:
    """Kill this worker's process group once the process that started it is gone."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _serve(conn: Connection, parent: int) -> None:
    """Audit the run folders sent on ``conn`` one by one, answering each; stop on None."""
    os.setsid()  # its own session and process group: whatever the audit starts is killed with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the ingest decides; a terminal's Ctrl-C is its
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    while (folder := conn.recv()) is not None:
        conn.send(audit_one(folder))


@dataclass(slots=True)
class _Worker:
    process: BaseProcess
    conn: Connection
    key: str | None = None
    deadline: float = 0.0

    def kill(self) -> None:
        """Kill the worker and every process it started (its process group)."""
        pid = self.process.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)  # its group: the worker and what it started
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()  # not yet in a group of its own
        self.process.join(STOP_WAIT_S)
        self.conn.close()

    def stop(self) -> None:
        """Ask an idle worker to leave; kill it (and its group) when it does not."""
        with contextlib.suppress(OSError, ValueError):
            self.conn.send(None)
        self.process.join(STOP_WAIT_S)
        self.kill()


def _start() -> _Worker:
    # Spawned, not forked: a fork would copy the open study store's connection and its threads.
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_serve, args=(theirs, os.getpid()), daemon=False)
    process.start()
    theirs.close()
    return _Worker(process, ours)


def _handed(worker: _Worker, key: str) -> _Worker:
    """Send ``key`` to ``worker``; to a fresh worker when that one has gone while idle (killed)."""
    try:
        worker.conn.send(key)
    except (OSError, ValueError):
        worker.kill()
        worker = _start()
        worker.conn.send(key)
    worker.key = key
    return worker


def _died(worker: _Worker) -> str:
    worker.process.join(STOP_WAIT_S)
    code = worker.process.exitcode
    if code is not None and code < 0:
        return f"the worker auditing it was killed by signal {signal.Signals(-code).name}"
    return f"the worker auditing it died (exit status {code})"


def audit_runs(keys: Sequence[str], jobs: int, deadline_s: float, done: Callable[[Outcome], None]) -> None:
    """Audit each run folder of ``keys`` in ``jobs`` worker processes, calling ``done`` as each ends.

    Each run has ``deadline_s`` seconds; one past it has its worker (and all it started) killed and
    ends with an error saying so. On KeyboardInterrupt every worker is killed and each run in flight
    ends as interrupted before the interrupt goes on; runs not started get no outcome.
    """
    pending = deque(keys)
    idle: list[_Worker] = []
    busy: dict[Connection, _Worker] = {}
    try:
        while pending or busy:
            while pending and len(busy) < max(1, jobs):
                worker = _handed(idle.pop() if idle else _start(), pending.popleft())
                worker.deadline = time.monotonic() + deadline_s
                busy[worker.conn] = worker
            soonest = min(w.deadline for w in busy.values())
            for conn in wait(list(busy), timeout=max(0.0, soonest - time.monotonic())):
                assert isinstance(conn, Connection)
                worker = busy.pop(conn)
                key = worker.key or ""
                try:
                    report, error = conn.recv()
                except (EOFError, OSError):  # killed (out of memory, a signal) or crashed
                    outcome = Outcome(key, None, _died(worker), retry=True)
                    worker.kill()
                else:
                    outcome = Outcome(key, report, error)
                    idle.append(worker)
                done(outcome)
            now = time.monotonic()
            for conn, worker in list(busy.items()):
                if now >= worker.deadline:
                    del busy[conn]
                    worker.kill()
                    done(
                        Outcome(
                            worker.key or "",
                            None,
                            f"not audited within {deadline_s:g} s: its audit was stopped",
                            retry=True,
                        )
                    )
    except BaseException:
        # interrupted (Ctrl-C, SIGTERM) or failing: no worker outlives the ingest
        for worker in busy.values():
            worker.kill()
        for worker in busy.values():
            with contextlib.suppress(Exception):  # what interrupted the ingest is what it reports
                done(
                    Outcome(
                        worker.key or "",
                        None,
                        "the ingest was interrupted before its audit ended",
                        retry=True,
                    )
                )
        busy.clear()
        raise
    finally:
        for worker in [*idle, *busy.values()]:
            worker.stop()
