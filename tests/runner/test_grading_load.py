"""The grading API under load and hostile requests: real HTTP on localhost, a real store, a shell evaluator.

Every submission is answered and recorded in arrival order; the evaluator works through a bounded line
whose overflow is answered 503 with Retry-After; request bodies are bounded whatever their headers say;
a hung evaluator is ended at its timeout and the next submission served.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import TypeVar

import pytest

from arb_audit.model import Submission
from arb_audit.runner.anchor import check_ledger
from arb_audit.runner.grading import MAX_BODY_BYTES, Grader, command_evaluator, run_evaluator, serve
from arb_audit.runner.grading_queue import ENDED, TurnQueue
from arb_audit.runner.layout import STORE_NAME, Marker
from arb_audit.runner.record import Recorder, RecordOptions
from arb_audit.store import RunStore
from tests.runner.scripted_agent import checkpoint

T = TypeVar("T")
Answer = tuple[int, dict[str, str], dict[str, object]]

SCORE_SCRIPT = """\
# The score is the number after "v" in the model folder's name. With an argument before the model
# path, it waits until that file exists (a gate the test opens); a model holding a file named "hang"
# hangs it, in a child as a stuck inference server would, after writing the shell's pid there.
for model; do :; done
if [ $# -gt 1 ]; then while [ ! -e "$1" ]; do sleep 0.02; done; fi
if [ -e "$model/hang" ]; then echo $$ > "$model/hang"; sleep 60 & wait; fi
name=${model##*/}
echo "{\\"score\\": ${name#v}}"
"""


@dataclass
class Live:
    """A grading API serving a real recording."""

    port: int
    grader: Grader
    store: RunStore
    recorder: Recorder
    workspace: Path
    gate: Path
    """The file the gated evaluator waits for."""

    def ledger(self) -> list[Submission]:
        return self.store.load_record(self.recorder.run.run_id).submissions

    def post(self, body: bytes | str, timeout: float = 60) -> Answer:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            raw = body.encode() if isinstance(body, str) else body
            connection.request("POST", "/submit", body=raw, headers={"Content-Type": "application/json"})
            answer = connection.getresponse()
            return answer.status, dict(answer.getheaders()), json.loads(answer.read())
        finally:
            connection.close()

    def submit(self, model_path: str, timeout: float = 60) -> Answer:
        return self.post(json.dumps({"model_path": model_path}), timeout)

    def raw(self, data: bytes, *, then: Callable[[socket.socket], None] | None = None) -> bytes:
        """Send ``data`` as it is, run ``then`` on the socket, and return all that comes back."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=20) as sock:
            sock.sendall(data)
            if then is not None:
                then(sock)
            return read_all(sock)


def read_all(sock: socket.socket) -> bytes:
    received = b""
    while piece := sock.recv(65536):
        received += piece
    return received


def status_of(response: bytes) -> int:
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/") else 0


@contextmanager
def live(
    tmp_path: Path,
    versions: int,
    *,
    gated: bool = False,
    queue: TurnQueue | None = None,
    timeout_s: float = 60,
    **serving: float,
) -> Iterator[Live]:
    workspace, run_dir = tmp_path / "ws", tmp_path / "recording"
    run_dir.mkdir()
    for i in range(1, versions + 1):
        checkpoint(workspace / "output" / f"v{i}", i % 256)
    script, gate = tmp_path / "score.sh", tmp_path / "gate"
    script.write_text(SCORE_SCRIPT)
    command = ["/bin/sh", str(script), *([str(gate)] if gated else [])]
    options = RecordOptions(workspace=workspace, run_dir=run_dir, agent=["true"], evaluator=command)
    with RunStore.open(run_dir / STORE_NAME) as store:
        recorder = Recorder(options, store)
        grader = Grader(
            workspace=workspace,
            evaluate=command_evaluator(command, timeout_s=timeout_s),
            record=recorder.append,
            snapshot=lambda: recorder.take_snapshot("submission"),
            meta={},
            queue=queue or TurnQueue(),
        )
        server = serve(grader, "127.0.0.1", 0, **serving)  # type: ignore[arg-type]
        try:
            yield Live(server.server_address[1], grader, store, recorder, workspace, gate)
        finally:
            gate.touch()
            server.shutdown()
            server.server_close()
        found = check_ledger(run_dir, Marker(anchored=True), store, recorder.run.run_id)
        assert found.mismatches == []


def arrival_ordered(ledger: list[Submission]) -> bool:
    """Each attempt took its place in the line (its requested_at) no earlier than the one before it."""
    times = [s.requested_at for s in ledger]
    return all(a is not None and b is not None and a <= b for a, b in pairwise(times))


def lined_up(grader: Grader, waiting: int) -> bool:
    """One submission holds the evaluator and ``waiting`` wait behind it."""
    return grader.queue.evaluating and grader.queue.waiting == waiting


def until(condition: Callable[[], bool], seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


def in_thread(work: Callable[[], T]) -> Callable[[], T]:
    """Start ``work`` in a thread; return a function that joins it and returns (or raises) its result."""
    result: list[T] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            result.append(work())
        except BaseException as exc:  # handed to the test's thread
            failed.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()

    def join() -> T:
        thread.join(60)
        assert not thread.is_alive(), "still waiting for an answer"
        if failed:
            raise failed[0]
        return result[0]

    return join


def test_200_concurrent_submissions_are_all_answered_and_recorded_in_arrival_order(tmp_path: Path) -> None:
    count = 200
    with live(tmp_path, count) as api:
        start = threading.Barrier(count)
        answers: dict[int, Answer | str] = {}

        def submitter(i: int) -> None:
            start.wait()
            try:
                answers[i] = api.submit(f"output/v{i}")
            except OSError as exc:  # a reset: what the listen backlog of 5 gave
                answers[i] = repr(exc)

        threads = [threading.Thread(target=submitter, args=(i,)) for i in range(1, count + 1)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        failed = {i: a for i, a in answers.items() if isinstance(a, str) or a[0] != 200}
        assert len(answers) == count and failed == {}
        ledger = api.ledger()
    assert [s.seq for s in ledger] == list(range(1, count + 1))
    assert {s.status for s in ledger} == {"scored"}
    # arrival order: each attempt's requested_at is when it took its place in the line
    assert arrival_ordered(ledger)
    by_path = {s.model_path: s for s in ledger}
    for i, answer in answers.items():
        assert not isinstance(answer, str)
        row = by_path[f"output/v{i}"]
        assert answer[2]["submission_id"] == row.harness_id == row.seq
        assert answer[2]["score"] == row.score == float(i)


def test_submissions_are_evaluated_in_the_order_they_arrive_and_refusals_do_not_wait(tmp_path: Path) -> None:
    with live(tmp_path, 5, gated=True) as api:
        pending = []
        for i in (3, 1, 5, 2, 4):
            pending.append(in_thread(partial(api.submit, f"output/v{i}")))
            ahead = len(pending) - 1  # each waits behind the ones sent before it
            until(partial(lined_up, api.grader, ahead))
        # the evaluator is held: a request the API refuses is answered (and recorded) now, not in line
        started = time.monotonic()
        assert api.submit("../outside")[0] == 400
        assert time.monotonic() - started < 5
        api.gate.touch()
        assert [join()[2]["score"] for join in pending] == [3.0, 1.0, 5.0, 2.0, 4.0]
        ledger = api.ledger()
    assert [(s.status, s.model_path) for s in ledger] == [
        ("rejected", "../outside"),
        *(("scored", f"output/v{i}") for i in (3, 1, 5, 2, 4)),
    ]


def test_a_full_line_and_a_long_wait_are_answered_503_with_retry_after_and_recorded(tmp_path: Path) -> None:
    with live(tmp_path, 5, gated=True, queue=TurnQueue(max_waiting=2, max_wait_s=3)) as api:
        first = in_thread(lambda: api.submit("output/v1"))
        until(lambda: api.grader.queue.evaluating)
        waiting = [in_thread(partial(api.submit, f"output/v{i}")) for i in (2, 3)]
        until(lambda: api.grader.queue.waiting == 2)
        status, headers, answer = api.submit("output/v4")
        assert status == 503 and "grading queue full" in str(answer["error"])
        assert int(headers["Retry-After"]) == answer["retry_after_s"]
        assert int(headers["Retry-After"]) >= 1
        for join in waiting:  # given up after max_wait_s, while the first still holds the evaluator
            status, headers, answer = join()
            assert status == 503 and "waited 3s for the evaluator" in str(answer["error"])
            assert int(headers["Retry-After"]) >= 1
        api.gate.touch()
        assert first()[0] == 200
        assert api.submit("output/v5")[0] == 200
        ledger = api.ledger()
    recorded = [(s.status, s.model_path) for s in ledger]
    assert recorded[0] == ("rejected", "output/v4")
    # the two waiters give up at the same deadline: which is recorded first is the scheduler's choice
    assert sorted(recorded[1:3]) == [("rejected", "output/v2"), ("rejected", "output/v3")]
    assert recorded[3:] == [("scored", "output/v1"), ("scored", "output/v5")]


def test_a_hung_evaluator_is_ended_whole_at_its_timeout_and_the_next_one_served(
    tmp_path: Path,
) -> None:
    with live(tmp_path, 2, timeout_s=1) as api:
        (api.workspace / "output" / "v1" / "hang").write_text("")
        started = time.monotonic()
        status, _, answer = api.submit("output/v1")
        assert (status, answer["error"]) == (200, "evaluator timed out after 1s")
        assert time.monotonic() - started < 10
        shell = int((api.workspace / "output" / "v1" / "hang").read_text())
        assert _alive_in_group(shell) == []  # its child, the sleeping "server", went with it
        assert api.submit("output/v2")[2]["score"] == 2.0


def test_the_end_of_the_run_answers_and_records_what_is_still_in_line(tmp_path: Path) -> None:
    with live(tmp_path, 2, gated=True) as api:
        evaluating = in_thread(lambda: api.submit("output/v1"))
        until(lambda: api.grader.queue.evaluating)
        waiting = in_thread(lambda: api.submit("output/v2"))
        until(lambda: api.grader.queue.waiting == 1)
        api.grader.close(wait_s=20)  # as record does when the agent has exited
        status, _, answer = evaluating()
        assert (status, answer["error"]) == (200, "evaluator exited with -9: ")
        status, headers, answer = waiting()
        assert (status, answer, "Retry-After" in headers) == (503, {"error": ENDED}, False)
        assert api.submit("output/v2")[0] == 503  # nothing is evaluated once the run has ended
        ledger = api.ledger()
    assert sorted((s.status, s.model_path, s.error) for s in ledger) == [
        ("error", "output/v1", "evaluator exited with -9: "),
        ("rejected", "output/v2", ENDED),
        ("rejected", "output/v2", ENDED),
    ]


def _alive_in_group(group: int) -> list[int]:
    """The processes of a process group that are still running (not zombies left to an init that does
    not reap)."""
    alive = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            alive.append(int(stat.parent.name))
    return alive


def _stall(seconds: float) -> Callable[[socket.socket], None]:
    return lambda _sock: time.sleep(seconds)


def _hang_up(sock: socket.socket) -> None:
    sock.shutdown(socket.SHUT_WR)


def _request(headers: str, body: bytes = b"") -> bytes:
    return f"POST /submit HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode() + body


def _chunked(*pieces: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


GOOD = b'{"model_path": "output/v1"}'
DEEP = b"[" * 60_000
# (request, then, expected status, recorded as rejected with this reason or None: not an attempt)
HOSTILE: dict[str, tuple[bytes, Callable[[socket.socket], None] | None, int, str | None]] = {
    "length not a number": (
        _request("Content-Length: abc\r\n", GOOD),
        None,
        400,
        "Content-Length 'abc' is not a number of bytes",
    ),
    "negative length": (_request("Content-Length: -1\r\n", GOOD), None, 400, "Content-Length '-1' is not"),
    "huge length": (_request("Content-Length: 1000000000000\r\n", GOOD), None, 413, "Request body over"),
    "two lengths": (
        _request("Content-Length: 27\r\nContent-Length: 5\r\n", GOOD),
        None,
        400,
        "Content-Length was sent more than once",
    ),
    "no length": (_request("", GOOD), None, 411, "Length Required"),
    "unknown coding": (
        _request("Transfer-Encoding: gzip\r\n", GOOD),
        None,
        400,
        "Transfer-Encoding 'gzip' is not supported",
    ),
    "both framings": (
        _request("Transfer-Encoding: chunked\r\nContent-Length: 27\r\n", _chunked(GOOD)),
        None,
        400,
        "Both Transfer-Encoding and Content-Length",
    ),
    "bad chunk size": (
        _request("Transfer-Encoding: chunked\r\n", b"zz\r\n" + GOOD),
        None,
        400,
        "Malformed chunked body: a chunk size is not hexadecimal",
    ),
    "deeply nested JSON": (
        _request(f"Content-Length: {len(DEEP)}\r\n", DEEP),
        None,
        400,
        "Request body is not a JSON object",
    ),
    "deeply nested path": (
        _request(f"Content-Length: {len(DEEP) + 15}\r\n", b'{"model_path": ' + DEEP),
        None,
        400,
        "Request body is not a JSON object",
    ),
    "not UTF-8": (_request("Content-Length: 4\r\n", b"\xff\xfe{}"), None, 400, "Request body is not a JSON"),
    "chunked, within the limit": (
        _request("Transfer-Encoding: chunked\r\n", _chunked(GOOD[:9], GOOD[9:])),
        None,
        200,
        None,
    ),
    "a body that stalls": (_request("Content-Length: 100\r\n", GOOD[:10]), _stall(1.5), 408, None),
    "a body cut off": (_request("Content-Length: 100\r\n", GOOD[:10]), _hang_up, 400, None),
    "a head that stalls": (b"POST /submit HTTP/1.1\r\nHost: x\r\n", _stall(1.5), 0, None),
}


def test_hostile_request_bodies_get_a_clear_answer_and_the_server_goes_on(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    with live(tmp_path, 2, read_timeout_s=1) as api:
        for name, (request, then, status, _) in HOSTILE.items():
            response = api.raw(request, then=then)
            assert status_of(response) == status, (name, response[:200])
        assert api.submit("output/v2")[2]["score"] == 2.0
        ledger = api.ledger()
    recorded = [(s.status, s.error or "") for s in ledger]
    expected = [
        ("scored" if status == 200 else "rejected", reason or "")
        for _, _, status, reason in HOSTILE.values()
        if status == 200 or reason is not None
    ] + [("scored", "")]
    assert len(recorded) == len(expected)  # the stalled and cut-off requests were no attempts
    for (kind, error), (want_kind, want_error) in zip(recorded, expected, strict=True):
        assert kind == want_kind and error.startswith(want_error), (error, want_error)
    assert "Traceback" not in capfd.readouterr().err


def _vm_rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_body_streamed_without_end_is_refused_413_in_bounded_memory(tmp_path: Path) -> None:
    with live(tmp_path, 1) as api, socket.create_connection(("127.0.0.1", api.port), timeout=20) as sock:
        before = _vm_rss()
        sock.sendall(_request("Transfer-Encoding: chunked\r\n"))
        sent = [0]

        def stream() -> None:
            piece = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
            try:
                while sent[0] < 1024 * 1024 * 1024:  # a gigabyte, or until the server stops reading
                    sock.sendall(piece)
                    sent[0] += len(piece)
            except OSError:
                pass

        streaming = threading.Thread(target=stream, daemon=True)
        streaming.start()
        answer = b""
        while b"}" not in answer:  # the answer comes while the body still streams
            answer += sock.recv(65536)
        assert status_of(answer) == 413 and b"Request body over" in answer
        streaming.join(30)
        assert not streaming.is_alive()
        assert sent[0] < 64 * 1024 * 1024  # the server stopped taking it
        assert _vm_rss() - before < 32 * 1024 * 1024
        ledger = api.ledger()
    assert [(s.status, s.error) for s in ledger] == [
        ("rejected", f"Request body over {MAX_BODY_BYTES} bytes")
    ]


def test_connections_past_the_limit_are_answered_503_not_reset(tmp_path: Path) -> None:
    with live(tmp_path, 1, read_timeout_s=10, max_connections=3) as api:
        idle = [socket.create_connection(("127.0.0.1", api.port)) for _ in range(3)]
        try:
            until(lambda: status_of(api.raw(_request(f"Content-Length: {len(GOOD)}\r\n", GOOD))) == 503)
            response = api.raw(_request(f"Content-Length: {len(GOOD)}\r\n", GOOD))
            assert status_of(response) == 503 and b"Retry-After: 1" in response
        finally:
            for sock in idle:
                sock.close()
        until(lambda: status_of(api.raw(_request(f"Content-Length: {len(GOOD)}\r\n", GOOD))) == 200)
        ledger = api.ledger()
    assert [s.status for s in ledger] == ["scored"]  # a connection refused unread is no attempt


def test_an_evaluator_that_prints_without_end_is_kept_to_its_last_line(tmp_path: Path) -> None:
    noisy = ["/bin/sh", "-c", 'head -c 50000000 /dev/zero | tr "\\0" x; echo; echo \'{"score": 7}\'', "sh"]
    before = _vm_rss()
    result = run_evaluator(noisy, tmp_path, timeout_s=60)
    assert (result.score, result.error) == (7.0, None)
    assert _vm_rss() - before < 32 * 1024 * 1024


@pytest.mark.slow
def test_eight_submitters_for_a_minute_are_all_answered_and_recorded_in_order(tmp_path: Path) -> None:
    submitters, seconds = 8, 60.0
    with live(tmp_path, submitters) as api:
        sent: dict[int, list[tuple[int, object]]] = {i: [] for i in range(1, submitters + 1)}
        end = time.monotonic() + seconds

        def submitter(i: int) -> None:
            while time.monotonic() < end:
                status, _, answer = api.submit(f"output/v{i}")
                sent[i].append((status, answer.get("submission_id")))

        threads = [threading.Thread(target=submitter, args=(i,)) for i in sent]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(seconds + 60)
        ledger = api.ledger()
    answered = [status for answers in sent.values() for status, _ in answers]
    assert answered and set(answered) == {200}
    assert len(ledger) == len(answered) and [s.seq for s in ledger] == list(range(1, len(ledger) + 1))
    assert arrival_ordered(ledger)
    for i, answers in sent.items():  # each submitter's attempts, in the order it made them
        rows = [s.harness_id for s in ledger if s.model_path == f"output/v{i}"]
        assert rows == [submission_id for _, submission_id in answers]
