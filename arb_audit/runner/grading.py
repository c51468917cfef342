"""A grading API compatible with AutoRL-Bench's, recording every request before it answers.

``POST /submit {model_path, gpu?}``, ``GET /health`` and ``GET /time`` behave as the benchmark's own
server does (reference/autorl_bench.md §2), so existing agents work unchanged. Before evaluating, the
submitted path is checked (inside the workspace, no NUL, no escape through ``..`` or symlinks), the
code is snapshotted and the artifact hashed; evaluations run one at a time; the attempt — scored,
error or rejected — is appended to the hash-chained ledger before the answer is sent.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from arb_audit.evidence import Evidence, excerpt
from arb_audit.model import ArtifactManifest, Submission, SubmissionStatus
from arb_audit.runner.artifact_hash import hash_artifact

MAX_BODY_BYTES = 1024 * 1024
"""Largest request body read."""
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
    cannot be reached or answers what is not JSON is an error with the reason.
    """

    def evaluate(sent: str, _resolved: Path, gpu: str | None) -> Evaluation:
        body = {"model_path": sent, **({"gpu": gpu} if gpu is not None else {})}
        request = urllib.request.Request(
            url.rstrip("/") + "/submit",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as answer:
                status, raw = answer.status, answer.read(MAX_OUTPUT_BYTES)
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read(MAX_OUTPUT_BYTES)
        except (urllib.error.URLError, OSError) as exc:
            return Evaluation(None, f"upstream grader unreachable: {getattr(exc, 'reason', exc)}")
        try:
            result = json.loads(raw)
        except ValueError:
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


def run_evaluator(
    command: list[str], model_path: Path, timeout_s: float, env: Mapping[str, str] | None = None
) -> Evaluation:
    """Run ``command <model_path>`` and read ``{"score": ..., "error"?: ...}`` from its last stdout line.

    A crash, a timeout or output that is not such an object is an error with the reason, never lost.
    """
    try:
        done = subprocess.run(
            [*command, str(model_path)],
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=None if env is None else dict(env),
        )
    except subprocess.TimeoutExpired:
        return Evaluation(None, f"evaluator timed out after {timeout_s:g}s")
    except OSError as exc:
        return Evaluation(None, f"evaluator could not be started: {exc.strerror or exc}")
    lines = done.stdout[-MAX_OUTPUT_BYTES:].decode("utf-8", errors="replace").strip().splitlines()
    if done.returncode != 0:
        tail = done.stderr[-2000:].decode("utf-8", errors="replace").strip().splitlines()
        return Evaluation(
            None, f"evaluator exited with {done.returncode}: {excerpt(tail[-1] if tail else '')}"
        )
    try:
        result = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
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
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Serialises evaluations (and ledger appends)."""
    recorded: list[Submission] = field(default_factory=list)
    """Scored and errored attempts, as the benchmark's scores.json would hold them."""
    unrecorded: list[Submission] = field(default_factory=list)
    """Attempts answered while the ledger could not take them (a full disk), oldest first."""

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
            reason = f"internal error: {type(exc).__name__}: {exc}"
            with self.lock:
                self.unrecorded.append(
                    Submission(
                        seq=0,
                        status="error",
                        model_path=str(body.get("model_path"))[:4000],
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
            return self._reject(requested, None, "Missing model_path")
        try:
            resolved = resolve_inside(self.workspace, model_path)
        except ValueError:
            return self._reject(requested, model_path, "Invalid request")
        gpu = body.get("gpu")
        with self.lock:
            self._catch_up()
            self.snapshot()
            manifest, unreadable = self._hash(resolved)
            artifact_id = manifest.artifact_id if manifest else None
            evaluation = (
                Evaluation(None, unreadable)
                if unreadable is not None
                else self.evaluate(model_path, resolved, None if gpu is None else str(gpu))
            )
            if evaluation.refused:
                return self._record_rejection(requested, model_path, evaluation.error or "refused")
            completed = datetime.now(UTC)
            status: SubmissionStatus = "error" if evaluation.error else "scored"
            score = evaluation.score if evaluation.score is not None else 0.0
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
                    gpu=None if gpu is None else str(gpu),
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

    def _reject(self, requested: datetime, model_path: str | None, reason: str) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self._catch_up()
            return self._record_rejection(requested, model_path, reason)

    def _record_rejection(
        self, requested: datetime, model_path: str | None, reason: str
    ) -> tuple[int, dict[str, Any]]:
        """Record a refused request (the caller holds the lock) and answer it as the benchmark does."""
        self.record(
            Submission(
                seq=0,
                status="rejected",
                model_path=model_path,
                requested_at=requested,
                completed_at=datetime.now(UTC),
                error=reason,
            ),
            None,
        )
        return 400, {"error": reason}

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


def serve(grader: Grader, host: str, port: int) -> ThreadingHTTPServer:
    """Start serving ``grader`` on ``host:port`` in a daemon thread; return the server (port 0 picks one)."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, status: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            routes = {"/health": grader.health, "/time": grader.time}
            if self.path in routes:
                self._send(200, routes[self.path]())
            else:
                self._send(404, {"error": "Not found"})

        def do_POST(self) -> None:
            if self.path != "/submit":
                self._send(404, {"error": "Not found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(413, {"error": "Request too large"})
                return
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except (ValueError, UnicodeDecodeError):
                body = {}
            status, answer = grader.submit(body if isinstance(body, dict) else {})
            self._send(status, answer)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 -- the base class names it
            return  # the ledger is the log

    server = ThreadingHTTPServer((host, port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
