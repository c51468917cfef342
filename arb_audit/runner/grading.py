"""A grading API compatible with AutoRL-Bench's, recording every request before it answers.

``POST /submit {model_path, gpu?}``, ``GET /health`` and ``GET /time`` behave as the benchmark's own
server does (reference/autorl_bench.md §2), so existing agents work unchanged. Before evaluating, the
submitted path is checked (inside the workspace, no NUL, no escape through ``..`` or symlinks), the
code is snapshotted and the artifact hashed; evaluations run one at a time, in arrival order, from a
bounded line (arb_audit.runner.grading_queue); the attempt — scored, error or rejected — is appended to
the hash-chained ledger before the answer is sent. Load and hostile requests are bounded here: a burst
of connections is taken (a deep listen backlog), the connections held at once are capped, and a request
body is read within a size and a deadline whatever its headers say (arb_audit.runner.request_body).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import ArtifactManifest, Submission, SubmissionStatus
from arb_audit.runner.artifact_hash import hash_artifact
from arb_audit.runner.grading_queue import Busy, Ticket, TurnQueue
from arb_audit.runner.request_body import PIECE_BYTES, BodyRefused, read_body

MAX_BODY_BYTES = 64 * 1024
"""Largest request body read (a submission is a path and a GPU list: some hundreds of bytes)."""
READ_TIMEOUT_S = 30.0
"""Longest wait for a request's head (each read) and for its whole body."""
LISTEN_BACKLOG = 1024
"""Connections the kernel holds until they are accepted (capped by net.core.somaxconn)."""
MAX_CONNECTIONS = 1024
"""Connections served at once, each in a thread of its own; one more is answered 503 unread."""
LINGER_S = 2.0
"""Longest a refused request's unread body is drained before the connection is closed."""
LINGER_BYTES = 16 * 1024 * 1024
"""Most bytes of a refused request's body drained (past that, the client may see a reset)."""
CLOSE_WAIT_S = 30.0
"""Longest the end of a run waits for the evaluation in progress to be recorded, once killed."""
MAX_OUTPUT_BYTES = 1024 * 1024
"""Evaluator output kept (its last line must hold the result)."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """What an evaluator said about one artifact."""

    score: float | None
    """The score, when the evaluator gave one."""
    error: str | None
    """Why the evaluation failed, when it did."""
    refused: bool = False
    """The grader refused the request (an upstream server's 400): nothing was evaluated."""


Evaluate = Callable[[str, Path, str | None], Evaluation]
"""(model path as sent, resolved path, gpu) -> what the grader said."""


def command_evaluator(
    command: list[str], timeout_s: float = 7200.0, env: Mapping[str, str] | None = None
) -> Evaluate:
    """Evaluate by running ``command <resolved model path>`` (see :func:`run_evaluator`).

    ``env`` is the command's environment (None: this process's).
    """
    return lambda _sent, resolved, _gpu: run_evaluator(command, resolved, timeout_s, env)


def upstream_evaluator(url: str, timeout_s: float = 7200.0) -> Evaluate:
    """Evaluate by forwarding the request, as the agent sent it, to a real grading server at ``url``.

    Its ``score`` and ``error`` are taken as they come; a 400 answer is a refusal, and a server that
    cannot be reached, answers what is not JSON or has not answered whole within ``timeout_s`` (the
    evaluator's deadline, as for a command: :func:`forward`) is an error with the reason.
    """

    def evaluate(sent: str, _resolved: Path, gpu: str | None) -> Evaluation:
        body = {"model_path": sent, **({"gpu": gpu} if gpu is not None else {})}
        answered = forward(url.rstrip("/") + "/submit", json.dumps(body).encode(), timeout_s)
        if isinstance(answered, str):
            return Evaluation(None, answered)
        status, raw = answered
        try:
            result = json.loads(raw)
        except (ValueError, RecursionError):
            result = None
        if not isinstance(result, dict):
            return Evaluation(None, f"upstream grader answered {status} with no JSON object")
        error = result.get("error")
        if status == 400:
            return Evaluation(None, str(error or "refused by the upstream grader"), refused=True)
        score = result.get("score")
        number = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
        if status != 200 or error not in (None, ""):
            return Evaluation(number, str(error or f"upstream grader answered {status}")[:2000])
        return Evaluation(number, None) if number is not None else Evaluation(None, "upstream gave no score")

    return evaluate


def forward(url: str, body: bytes, timeout_s: float) -> tuple[int, bytes] | str:
    """POST JSON ``body`` to ``url``; return the answer's status and first bytes, or why there are none.

    The whole exchange (connecting, sending, the answer's head and body) ends within ``timeout_s``:
    a socket's timeout bounds each read, not their sum, and an upstream that drips a byte now and
    then would hold the request, and the grading line behind it, for ever. At the deadline a watchdog
    shuts the connection down, which ends whatever read is waiting.
    """
    parts = urllib.parse.urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    try:
        connection = kind(parts.hostname or "", parts.port, timeout=timeout_s)
    except (ValueError, http.client.HTTPException) as exc:  # a port that is not a number
        return f"upstream grader unreachable: {exc}"
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        with contextlib.suppress(OSError):
            if connection.sock is not None:
                connection.sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request("POST", target, body, {"Content-Type": "application/json"})
        if expired.is_set():  # the deadline passed while connecting: nothing was there to shut down
            raise TimeoutError
        answer = connection.getresponse()
        status, raw = answer.status, answer.read(MAX_OUTPUT_BYTES)
        if expired.is_set():  # cut short by the watchdog: what came is not the answer
            raise TimeoutError
        return status, raw
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            return f"upstream grader did not answer within {timeout_s:g}s"
        return f"upstream grader unreachable: {exc}"
    finally:
        watchdog.cancel()
        connection.close()


def run_evaluator(
    command: list[str], model_path: Path, timeout_s: float, env: Mapping[str, str] | None = None
) -> Evaluation:
    """Run ``command <model_path>`` and read ``{"score": ..., "error"?: ...}`` from its last stdout line.

    A crash, a timeout or output that is not such an object is an error with the reason, never lost.
    The command runs in its own process group, ended whole at the timeout (a child it left holding
    the output cannot hold the answer); its output goes to temporary files, of which only the tails
    are read, so an evaluator that prints without end costs disk, not memory.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            process = subprocess.Popen(
                [*command, str(model_path)],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env=None if env is None else dict(env),
                start_new_session=True,
            )
        except OSError as exc:
            return Evaluation(None, f"evaluator could not be started: {exc.strerror or exc}")
        with _RUNNING_LOCK:
            _RUNNING.add(process)
        try:
            returncode = process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _end_group(process)
            return Evaluation(None, f"evaluator timed out after {timeout_s:g}s")
        except BaseException:
            _end_group(process)
            raise
        finally:
            with _RUNNING_LOCK:
                _RUNNING.discard(process)
        stdout, stderr = _tail(out, MAX_OUTPUT_BYTES), _tail(err, 2000)
    lines = stdout.decode("utf-8", errors="replace").strip().splitlines()
    if returncode != 0:
        tail = stderr.decode("utf-8", errors="replace").strip().splitlines()
        return Evaluation(None, f"evaluator exited with {returncode}: {excerpt(tail[-1] if tail else '')}")
    try:
        result = json.loads(lines[-1]) if lines else None
    except (ValueError, RecursionError):
        result = None
    if not isinstance(result, dict):
        return Evaluation(
            None, f"evaluator's last line is not a JSON object: {excerpt(lines[-1] if lines else '')}"
        )
    score = result.get("score")
    error = result.get("error")
    if error not in (None, ""):
        return Evaluation(float(score) if isinstance(score, int | float) else 0.0, str(error)[:2000])
    if isinstance(score, bool) or not isinstance(score, int | float):
        return Evaluation(None, f"evaluator gave no numeric score: {excerpt(repr(score))}")
    return Evaluation(float(score), None)


def _tail(file: IO[bytes], size: int) -> bytes:
    """Return the last ``size`` bytes written to ``file``."""
    end = file.seek(0, os.SEEK_END)
    file.seek(max(end - size, 0))
    return file.read(size)


_RUNNING: set[subprocess.Popen[bytes]] = set()
"""Evaluator commands running now. In a session of their own, they no longer get the terminal's
Ctrl-C with the runner: the runner ends them itself when it stops (:func:`end_evaluators`)."""
_RUNNING_LOCK = threading.Lock()


def end_evaluators() -> None:
    """Kill every evaluator command this process is running, each with its process group."""
    with _RUNNING_LOCK:
        running = list(_RUNNING)
    for process in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)


def _end_group(process: subprocess.Popen[bytes]) -> None:
    """Kill the evaluator's whole process group and reap the evaluator."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def resolve_inside(workspace: Path, model_path: str) -> Path:
    """Resolve a submitted path as the benchmark's server does; ValueError when it leaves the workspace."""
    if "\x00" in model_path or not model_path.strip():
        raise ValueError("Invalid model_path")
    root = workspace.resolve()
    candidate = Path(model_path) if Path(model_path).is_absolute() else root / model_path
    resolved = candidate.resolve(strict=False)
    if not resolved.is_relative_to(root):
        raise ValueError("Invalid model_path")
    return resolved


@dataclass
class Grader:
    """The grading logic, separate from HTTP so that it can be driven directly."""

    workspace: Path
    """The agent's workspace; submitted paths must resolve inside it."""
    evaluate: Evaluate
    """The evaluator: a command (:func:`command_evaluator`) or a real server (:func:`upstream_evaluator`)."""
    record: Callable[[Submission, ArtifactManifest | None], Submission]
    """Appends an attempt, with the manifest of what was graded, to the ledger (assigning its seq)."""
    snapshot: Callable[[], None]
    """Snapshots the workspace's code (trigger: submission)."""
    meta: dict[str, Any]
    """run_meta: start_time, timeout_s (epoch seconds), as AutoRL-Bench's /time reports them."""
    task: str | None = None
    """Task id for /health."""
    baseline_score: float | None = None
    """The base model's score, for ``improvement``."""
    queue: TurnQueue = field(default_factory=TurnQueue)
    """The line of submissions waiting for the evaluator: one evaluation at a time, in arrival order."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Serialises ledger appends and the lists below; held for an append, never for an evaluation, so
    a refusal is answered at once while evaluations wait their turn."""
    recorded: list[Submission] = field(default_factory=list)
    """Scored and errored attempts, as the benchmark's scores.json would hold them."""
    unrecorded: list[Submission] = field(default_factory=list)
    """Attempts answered while the ledger could not take them (a full disk), oldest first."""

    def close(self, wait_s: float = CLOSE_WAIT_S) -> None:
        """Stop grading when the run ends, before the ledger is closed.

        Submissions still waiting are answered and recorded as not evaluated; a running evaluator
        command is killed and its attempt recorded (waiting up to ``wait_s`` for that).
        """
        deadline = time.monotonic() + wait_s
        # again and again: the turn in progress may start its command after a pass
        while not self.queue.close(0):
            end_evaluators()
            if time.monotonic() >= deadline:
                print(
                    f"arb-audit record: the evaluation in progress did not end within {wait_s:g}s of the run",
                    file=sys.stderr,
                )
                return
            self.queue.close(min(0.1, max(deadline - time.monotonic(), 0)))

    def submit(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Handle one submission; return the HTTP status and the JSON answer.

        Whatever fails on the way (an unreadable artifact, a full disk) is answered with a 500 and
        becomes an error attempt; one the ledger cannot take yet is kept and appended, in arrival
        order, as soon as it can: the agent always gets an answer and no attempt is dropped.
        """
        requested = datetime.now(UTC)
        try:
            return self._submit(body, requested)
        except Exception as exc:
            return self._failed(str(body.get("model_path"))[:4000], requested, exc)

    def refuse(self, reason: str, status: int = 400) -> tuple[int, dict[str, Any]]:
        """Record, as rejected, a request refused before it named a model; return the answer.

        Such as a body over the limit or one that is not JSON. A ledger that cannot take it is
        handled as in :meth:`submit`.
        """
        requested = datetime.now(UTC)
        try:
            return self._refuse(None, reason, status, requested=requested)
        except Exception as exc:
            return self._failed(None, requested, exc)

    def _failed(
        self, model_path: str | None, requested: datetime, exc: Exception
    ) -> tuple[int, dict[str, Any]]:
        """Answer a failure inside the grader with a 500 and keep it as an error attempt."""
        reason = f"internal error: {type(exc).__name__}: {exc}"
        with self.lock:
            self.unrecorded.append(
                Submission(
                    seq=0,
                    status="error",
                    model_path=model_path,
                    requested_at=requested,
                    completed_at=datetime.now(UTC),
                    error=reason,
                )
            )
            try:
                self._catch_up()
            except Exception as again:
                reason += f" (not recorded yet, kept until the ledger can take it: {again})"
        return 500, {"error": reason}

    def _catch_up(self) -> None:
        """Append the attempts the ledger could not take when they came (the caller holds the lock)."""
        while self.unrecorded:
            self.record(self.unrecorded[0], None)
            self.unrecorded.pop(0)

    def catch_up(self) -> list[Submission]:
        """Try once more to append the attempts not recorded yet; return those that still are not."""
        with self.lock, contextlib.suppress(Exception):  # the caller reports what is left
            self._catch_up()
        return list(self.unrecorded)

    def _submit(self, body: dict[str, Any], requested: datetime) -> tuple[int, dict[str, Any]]:
        model_path = body.get("model_path")
        if not isinstance(model_path, str) or not model_path:
            return self._refuse(None, "Missing model_path")
        try:
            resolved = resolve_inside(self.workspace, model_path)
        except ValueError:
            return self._refuse(model_path, "Invalid request")
        gpu = body.get("gpu")
        try:
            with self.queue.turn() as ticket:
                try:
                    return self._evaluate(model_path, resolved, None if gpu is None else str(gpu), ticket)
                except Exception as exc:  # kept in its turn, so in arrival order
                    return self._failed(model_path, ticket.arrived_at, exc)
        except Busy as busy:
            return self._refuse(model_path, str(busy), 503, busy.retry_after_s, requested)

    def _evaluate(
        self, model_path: str, resolved: Path, gpu: str | None, ticket: Ticket
    ) -> tuple[int, dict[str, Any]]:
        """Snapshot, hash, evaluate and record one submission (the caller holds its turn)."""
        requested = ticket.arrived_at
        self.snapshot()
        manifest, unreadable = self._hash(resolved)
        artifact_id = manifest.artifact_id if manifest else None
        evaluation = (
            Evaluation(None, unreadable)
            if unreadable is not None
            else self.evaluate(model_path, resolved, gpu)
        )
        if evaluation.refused:
            return self._refuse(model_path, evaluation.error or "refused", requested=requested)
        completed = datetime.now(UTC)
        status: SubmissionStatus = "error" if evaluation.error else "scored"
        score = evaluation.score if evaluation.score is not None else 0.0
        with self.lock:
            self._catch_up()
            attempt = self.record(
                Submission(
                    seq=0,
                    status=status,
                    model_path=model_path,
                    requested_at=requested,
                    completed_at=completed,
                    score=score,
                    error=evaluation.error,
                    harness_id=len(self.recorded) + 1,
                    elapsed_s=round((completed - requested).total_seconds(), 2),
                    gpu=gpu,
                    baseline_score=self.baseline_score,
                    artifact_path=str(resolved.relative_to(self.workspace.resolve())),
                    artifact_id=artifact_id,
                    evidence=[Evidence("artifact", path=model_path, excerpt=artifact_id or "")],
                ),
                manifest,
            )
            self.recorded.append(attempt)
            return 200, self._answer(attempt)

    def _hash(self, resolved: Path) -> tuple[ArtifactManifest | None, str | None]:
        """Hash what is submitted; else None and why it is not evaluated.

        A FIFO, socket or device in it (or a file rewritten while hashed) is refused here and never
        reaches the evaluator: reading a FIFO waits for a writer that never comes, and the evaluations
        are serialised, so one such submission would hold every later one (see arb_audit.regular_files).
        """
        try:
            return (hash_artifact(resolved) if resolved.exists() else None), None
        except OSError as exc:
            where = Path(exc.filename or resolved)
            with contextlib.suppress(ValueError):
                where = where.relative_to(self.workspace.resolve())
            return None, f"{where} cannot be read: {exc.strerror or exc}; not evaluated"

    def _refuse(
        self,
        model_path: str | None,
        reason: str,
        status: int = 400,
        retry_after_s: int | None = None,
        requested: datetime | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Record a request that is not evaluated, as rejected, and return its answer.

        ``retry_after_s`` (a busy evaluator) goes into the answer as ``retry_after_s``; the HTTP
        server sends it as ``Retry-After`` too.
        """
        with self.lock:
            self._catch_up()
            self.record(
                Submission(
                    seq=0,
                    status="rejected",
                    model_path=model_path,
                    requested_at=requested or datetime.now(UTC),
                    completed_at=datetime.now(UTC),
                    error=reason,
                ),
                None,
            )
        answer: dict[str, Any] = {"error": reason}
        if retry_after_s is not None:
            answer["retry_after_s"] = retry_after_s
        return status, answer

    def _answer(self, attempt: Submission) -> dict[str, Any]:
        entry = self._entry(attempt)
        best = max(self.recorded, key=lambda s: s.score or 0.0)
        return {**entry, "best": self._entry(best), "total_submissions": len(self.recorded)}

    def _entry(self, s: Submission) -> dict[str, Any]:
        improvement = (
            None if self.baseline_score is None else round((s.score or 0.0) - self.baseline_score, 6)
        )
        entry = {
            "submission_id": s.harness_id,
            "timestamp": s.completed_at.isoformat() if s.completed_at else None,
            "model_path": s.model_path,
            "score": s.score,
            "baseline_score": self.baseline_score,
            "improvement": improvement,
            "elapsed_seconds": s.elapsed_s,
        }
        if s.error:
            entry["error"] = s.error
        return entry

    def health(self) -> dict[str, Any]:
        """Answer GET /health."""
        return {"status": "ok", "task": self.task, "workspace": str(self.workspace), "available_gpus": []}

    def time(self) -> dict[str, Any]:
        """Answer GET /time: run_meta plus ``now`` and ``remaining``."""
        now = int(time.time())
        start, budget = self.meta.get("start_time"), self.meta.get("timeout_s")
        remaining = (
            max(budget - (now - start), 0) if isinstance(start, int) and isinstance(budget, int) else None
        )
        return {**self.meta, "now": now, "remaining": remaining}


class GradingServer(ThreadingHTTPServer):
    """A threading HTTP server that takes a burst of connections and bounds how many it holds.

    ``socketserver``'s listen backlog of 5 is what turned 96 of 200 concurrent submissions into
    connection resets: the kernel refuses what the backlog cannot hold while the accept loop starts
    threads. Beyond ``max_connections`` open at once, a connection is answered 503 and closed without
    being read (a thread and a body's worth of memory each is what is bounded).
    """

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], max_connections: int):
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection in a thread of its own, or answer 503 when all slots are taken."""
        if not self._slots.acquire(blocking=False):
            _answer_busy(request)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection; free its slot when done."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Say in one line, not a traceback, what went wrong with a connection; serve the next."""
        kind, error = sys.exc_info()[:2]
        name = kind.__name__ if kind else "error"
        print(f"arb-audit record: grading API: a request failed: {name}: {error}", file=sys.stderr)


def _answer_busy(request: socket.socket) -> None:
    """Answer a connection over the limit 503, read nothing and wait for nothing."""
    body = json.dumps({"error": "too many open connections", "retry_after_s": 1}).encode()
    head = (
        "HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with contextlib.suppress(OSError):
        request.setblocking(False)
        request.send(head + body)


def serve(
    grader: Grader,
    host: str,
    port: int,
    *,
    read_timeout_s: float = READ_TIMEOUT_S,
    max_connections: int = MAX_CONNECTIONS,
) -> GradingServer:
    """Start serving ``grader`` on ``host:port`` in a daemon thread; return the server (port 0 picks one).

    A request's head and body must each arrive within ``read_timeout_s``; one that does not is
    answered 408 (when the client is still there) and is not an attempt: it is not recorded.
    """

    class Handler(BaseHTTPRequestHandler):
        timeout = read_timeout_s  # each read of the request head; the body has its own deadline

        def _send(self, status: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body, ensure_ascii=False).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                if "retry_after_s" in body:
                    self.send_header("Retry-After", str(body["retry_after_s"]))
                self.end_headers()
                self.wfile.write(raw)
            except OSError:  # the client is gone: its attempt is recorded all the same
                self.close_connection = True

        def _drain(self) -> None:
            """Close a request whose body was not read, without a reset.

            Our side's end is sent, then what still comes is read and dropped, within LINGER_S and
            LINGER_BYTES: closing a socket with unread bytes resets it, and the client may lose
            the answer it has not read yet.
            """
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_WR)
                deadline = time.monotonic() + LINGER_S
                dropped = 0
                while dropped < LINGER_BYTES and (left := deadline - time.monotonic()) > 0:
                    self.connection.settimeout(left)
                    piece = self.connection.recv(PIECE_BYTES)
                    if not piece:
                        break
                    dropped += len(piece)

        def do_GET(self) -> None:
            routes = {"/health": grader.health, "/time": grader.time}
            route = routes.get(urllib.parse.urlsplit(self.path).path)
            self._send(200, route()) if route else self._send(404, {"error": "Not found"})

        def do_POST(self) -> None:
            if urllib.parse.urlsplit(self.path).path != "/submit":
                self._send(404, {"error": "Not found"})
                self._drain()
                return
            try:
                raw = read_body(self.rfile, self.connection, self.headers, MAX_BODY_BYTES, read_timeout_s)
            except BodyRefused as refused:
                # A request that stopped arriving is no attempt (nothing was asked); one refused for
                # its size or framing is, and is recorded like any refused submission.
                answer = grader.refuse(refused.reason, refused.status) if refused.whole else None
                self._send(*(answer or (refused.status, {"error": refused.reason})))
                if refused.unread:
                    self._drain()
                return
            try:
                body = json.loads(raw)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, nested past the parser's depth
                body = None
            if not isinstance(body, dict):
                self._send(*grader.refuse("Request body is not a JSON object"))
                return
            self._send(*grader.submit(body))

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- the base class names it
            return  # the ledger is the log

    server = GradingServer((host, port), Handler, max_connections)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
