"""The grading API's logic: evaluator commands and an upstream server, and how each answer is recorded."""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from arb_audit.model import ArtifactManifest, Submission
from arb_audit.runner.grading import (
    Evaluate,
    Evaluation,
    Grader,
    command_evaluator,
    run_evaluator,
    serve,
    upstream_evaluator,
)
from tests.runner.scripted_agent import checkpoint

HERE = Path(__file__).resolve().parent
SIZE_EVALUATOR = [sys.executable, str(HERE / "size_evaluator.py")]


def grader(workspace: Path, evaluate: Evaluate) -> tuple[Grader, list[Submission]]:
    ledger: list[Submission] = []

    def record(s: Submission, _manifest: ArtifactManifest | None) -> Submission:
        s.seq = len(ledger) + 1
        ledger.append(s)
        return s

    return Grader(
        workspace=workspace,
        evaluate=evaluate,
        record=record,
        snapshot=lambda: None,
        meta={"start_time": 0, "timeout_s": 10},
    ), ledger


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("print('{\"score\": 42}')", (42.0, None)),
        (
            'print(\'noise\'); print(\'{"score": 0, "error": "vLLM inference failed"}\')',
            (0.0, "vLLM inference failed"),
        ),
        ("print('not json')", (None, "evaluator's last line is not a JSON object: not json")),
        ("import sys; sys.exit(3)", (None, "evaluator exited with 3: ")),
        ("import time; time.sleep(5)", (None, "evaluator timed out after 0.5s")),
        ('print(\'{"score": "high"}\')', (None, "evaluator gave no numeric score: 'high'")),
    ],
)
def test_evaluator_command_outcomes(
    tmp_path: Path, script: str, expected: tuple[float | None, str | None]
) -> None:
    result = run_evaluator([sys.executable, "-c", script], tmp_path, timeout_s=0.5)
    assert (result.score, result.error) == expected


def test_upstream_answers_are_recorded_as_they_come(tmp_path: Path) -> None:
    front_ws, upstream_ws = tmp_path, tmp_path / "upstream"
    upstream_ws.mkdir()
    checkpoint(upstream_ws / "v1", 4)
    checkpoint(front_ws / "elsewhere", 1)
    real, _ = grader(upstream_ws, command_evaluator(SIZE_EVALUATOR))
    server = serve(real, "127.0.0.1", 0)
    try:
        front, ledger = grader(front_ws, upstream_evaluator(f"http://127.0.0.1:{server.server_address[1]}"))
        status, answer = front.submit({"model_path": str(upstream_ws / "v1")})
        assert status == 200 and answer["score"] == 40.0
        status, answer = front.submit({"model_path": str(front_ws / "elsewhere")})  # inside the front's only
        assert status == 400 and answer == {"error": "Invalid request"}
    finally:
        server.shutdown()
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
    offline, offline_ledger = grader(front_ws, upstream_evaluator(f"http://127.0.0.1:{closed_port}"))
    status, answer = offline.submit({"model_path": "elsewhere"})
    assert status == 200 and "upstream grader unreachable" in str(answer["error"])
    assert [(s.status, s.score) for s in ledger] == [("scored", 40.0), ("rejected", None)]
    assert offline_ledger[0].status == "error"


def test_requests_the_api_refuses_are_recorded(tmp_path: Path) -> None:
    front, ledger = grader(tmp_path, command_evaluator(SIZE_EVALUATOR))
    assert front.submit({})[0] == 400
    assert front.submit({"model_path": "a\x00b"})[0] == 400
    assert front.submit({"model_path": "../../etc"})[0] == 400
    (tmp_path / "link").symlink_to("/etc")
    assert front.submit({"model_path": "link"})[0] == 400
    assert [(s.status, s.error) for s in ledger] == [
        ("rejected", "Missing model_path"),
        ("rejected", "Invalid request"),
        ("rejected", "Invalid request"),
        ("rejected", "Invalid request"),
    ]
    assert front.time()["remaining"] == 0 and front.health()["status"] == "ok"


def test_a_failure_inside_the_grader_is_answered_and_recorded(tmp_path: Path) -> None:
    def broken(_sent: str, _resolved: Path, _gpu: str | None) -> Evaluation:
        raise OSError(28, "No space left on device")

    checkpoint(tmp_path / "v1", 1)
    front, ledger = grader(tmp_path, broken)
    status, answer = front.submit({"model_path": "v1"})
    assert status == 500 and "No space left on device" in str(answer["error"])
    assert [(s.status, s.model_path) for s in ledger] == [("error", "v1")]


class DripServer:
    """A real upstream that answers a byte at a time, each well within a socket timeout, never whole.

    ``head`` says whether it drips its answer's head (status line and headers) or, after a whole
    head, its body.
    """

    def __init__(self, head: bool, every_s: float = 0.1) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.head, self.every_s = head, every_s
        self.served = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self.listener.accept()
                self.served += 1
                with connection, contextlib.suppress(OSError):
                    connection.recv(65536)  # the forwarded request (small: one read holds it)
                    whole = b'{"score": 1.0}' + b" " * 100_000
                    answer = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(whole) + whole
                    if not self.head:
                        connection.sendall(answer[: answer.index(b"\r\n\r\n") + 4])
                        answer = whole
                    for byte in answer:
                        connection.sendall(bytes([byte]))
                        time.sleep(self.every_s)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()


@pytest.mark.parametrize("head", [True, False], ids=["drips-its-head", "drips-its-body"])
def test_a_slow_drip_upstream_is_cut_at_the_deadline_and_the_next_request_served(
    tmp_path: Path, head: bool
) -> None:
    drip = DripServer(head)
    try:
        front, ledger = grader(tmp_path, upstream_evaluator(f"http://127.0.0.1:{drip.port}", timeout_s=1.0))
        checkpoint(tmp_path / "v1", 1)
        started = time.monotonic()
        status, answer = front.submit({"model_path": "v1"})
        took = time.monotonic() - started
        # each byte came 0.1 s after the last, far within a per-read timeout of 1 s: only a deadline on
        # the whole exchange ends it
        assert took < 3.0, took
        assert status == 200 and answer["error"] == "upstream grader did not answer within 1s"
        status, answer = front.submit({"model_path": "v1"})  # the next one is forwarded, and cut alike
        assert status == 200 and "did not answer within 1s" in str(answer["error"])
        assert [(s.status, s.error) for s in ledger] == [
            ("error", "upstream grader did not answer within 1s")
        ] * 2
        assert drip.served == 2
    finally:
        drip.close()
