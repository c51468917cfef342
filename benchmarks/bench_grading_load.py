"""The grading API under concurrent submissions: latency percentiles against the evaluator alone.

Run on demand: ``python benchmarks/bench_grading_load.py [BURST] [SUBMITTERS] [SECONDS]`` (defaults 200,
8, 20). A 100-file workspace and a small safetensors model are recorded into a real store (ledger and
anchor), as in bench_grading_proxy.py. Two loads, each measured in the same run against a baseline:

- a burst: BURST ``POST /submit`` calls released at once over HTTP. Baseline: the same number of
  evaluator runs one after another, as the API runs them, each latency counted from the same start
  (what a queue with no overhead would answer).
- a steady load: SUBMITTERS clients each submitting again as soon as answered, for SECONDS. Baseline:
  as many threads running the evaluator alone for as long, taking turns through a lock.

Prints p50/p95/p99 latency, throughput, the ratios, and how many were answered and recorded (the
ledger must hold every one).
"""

from __future__ import annotations

import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from arb_audit.model import ArtifactManifest, RunInfo, Submission
from arb_audit.revisions import Snapshotter, run_ref
from arb_audit.runner.anchor import AnchorWriter, anchor_head
from arb_audit.runner.grading import Grader, command_evaluator, run_evaluator, serve
from arb_audit.runner.layout import ANCHOR_NAME
from arb_audit.store import RunStore, revisions_path_for

# A shell evaluator: its start-up is small and steady, so the API's own cost is not lost in its noise.
EVALUATOR = ["/bin/sh", "-c", "echo '{\"score\": 1.0}'", "sh"]


def percentiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p95 and p99 of ``values`` (seconds), by the inclusive method."""
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return cuts[49], cuts[94], cuts[98]


def show(title: str, api: list[float], alone: list[float], api_s: float, alone_s: float) -> None:
    """Print one load's percentiles, throughputs and ratios."""
    print(f"{title}")
    rows = (("through the API", api, api_s), ("evaluator alone", alone, alone_s))
    for name, values, wall in rows:
        p50, p95, p99 = percentiles(values)
        print(
            f"  {name:16}: p50 {p50 * 1000:8.1f} ms  p95 {p95 * 1000:8.1f} ms  p99 {p99 * 1000:8.1f} ms"
            f"  ({len(values)} in {wall:.1f}s, {len(values) / wall:6.1f}/s)"
        )
    ratios = [a / b for a, b in zip(percentiles(api), percentiles(alone), strict=True)]
    print(f"  ratio           : p50 {ratios[0]:.2f}x  p95 {ratios[1]:.2f}x  p99 {ratios[2]:.2f}x")
    # one evaluation at a time either way: the wall time per submission is what each costs the line
    cost = api_s / len(api) - alone_s / len(alone)
    print(f"  the API's own cost per submission in the line: {cost * 1000:.1f} ms")


def submit(port: int) -> tuple[int, float]:
    """POST one submission; return the status and the seconds it took."""
    start = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        connection.request("POST", "/submit", body=b'{"model_path": "output/v1"}')
        answer = connection.getresponse()
        answer.read()
        return answer.status, time.perf_counter() - start
    finally:
        connection.close()


def burst(count: int, work: Callable[[], tuple[int, float]]) -> tuple[list[float], list[int], float]:
    """Release ``count`` calls of ``work`` at once; return their latencies, statuses and the wall time."""
    gate = threading.Barrier(count + 1)
    results: list[tuple[int, float]] = []

    def one() -> None:
        gate.wait()
        results.append(work())

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    start = time.perf_counter()
    gate.wait()
    for thread in threads:
        thread.join()
    return [t for _, t in results], [s for s, _ in results], time.perf_counter() - start


def steady(
    clients: int, seconds: float, work: Callable[[], tuple[int, float]]
) -> tuple[list[float], list[int], float]:
    """Run ``clients`` loops of ``work`` for ``seconds``; return latencies, statuses and the wall time."""
    end = time.perf_counter() + seconds
    results: list[tuple[int, float]] = []

    def loop() -> None:
        while time.perf_counter() < end:
            results.append(work())

    threads = [threading.Thread(target=loop) for _ in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [t for _, t in results], [s for s, _ in results], time.perf_counter() - start


def main() -> None:
    """Set up a recording, run both loads through the API and alone, print the comparison."""
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        (workspace / "output" / "v1").mkdir(parents=True)
        for i in range(100):
            (workspace / f"m{i:03d}.py").write_text(f"x = {i}\n" * 100)
        header = json.dumps({"w": {"dtype": "F32", "shape": [262144], "data_offsets": [0, 1048576]}}).encode()
        (workspace / "output" / "v1" / "model.safetensors").write_bytes(
            len(header).to_bytes(8, "little") + header + bytes(1048576)
        )
        model = workspace / "output" / "v1"
        with RunStore.open(Path(tmp) / "run.duckdb") as store:
            run = RunInfo("recorded:bench/load", "recorded", tmp, started_at=datetime.now(UTC))
            store.ensure_run(run, None)
            snapshotter = Snapshotter(
                revisions_path_for(store.path), workspace, run_ref(run.run_id), lambda p, m: None
            )
            anchor = AnchorWriter.open(Path(tmp) / ANCHOR_NAME)
            anchor_head(anchor, store, run.run_id)
            ledger_lock = threading.Lock()

            def take() -> None:
                if (rev := snapshotter.take("submission")) is not None:
                    with ledger_lock:
                        store.append_revision(run.run_id, rev)

            def append(s: Submission, manifest: ArtifactManifest | None) -> Submission:
                with ledger_lock:  # as the recorder does: the row, then its anchor line (fsync'd)
                    stored = store.append_submission(run.run_id, s, manifest)
                    anchor_head(anchor, store, run.run_id)
                    return stored

            grader = Grader(
                workspace=workspace,
                evaluate=command_evaluator(EVALUATOR),
                record=append,
                snapshot=take,
                meta={},
            )
            server = serve(grader, "127.0.0.1", 0)
            port = server.server_address[1]
            submit(port)  # warm: the first snapshot and the manifest

            turn = threading.Lock()

            def alone() -> tuple[int, float]:
                start = time.perf_counter()
                with turn:
                    run_evaluator(EVALUATOR, model, 60)
                return 200, time.perf_counter() - start

            api_burst, burst_status, api_burst_s = burst(count, lambda: submit(port))
            alone_burst, _, alone_burst_s = burst(count, alone)
            api_steady, steady_status, api_steady_s = steady(clients, seconds, lambda: submit(port))
            alone_steady, _, alone_steady_s = steady(clients, seconds, alone)
            server.shutdown()
            server.server_close()
            recorded = len(store.load_record(run.run_id).submissions) - 1  # less the warm-up
    sent = len(burst_status) + len(steady_status)
    answered = sum(1 for s in burst_status + steady_status if s == 200)
    show(f"burst of {count} concurrent submissions", api_burst, alone_burst, api_burst_s, alone_burst_s)
    show(f"{clients} submitters for {seconds:g}s", api_steady, alone_steady, api_steady_s, alone_steady_s)
    print(f"answered 200: {answered}/{sent}; recorded in the ledger: {recorded}/{sent}")


if __name__ == "__main__":
    main()
