"""Grading-proxy overhead per submission, beyond the evaluator's own time, measured in the same run.

Run on demand: ``python benchmarks/bench_grading_proxy.py [ROUNDS]`` (default 50). A 100-file workspace
and a small safetensors model are recorded into a real store; each round times (a) the evaluator
command alone and (b) a full ``POST /submit`` over HTTP (path check, code snapshot, artifact hash,
the same evaluator, the hash-chained ledger append), alternating the order. Prints medians and the
overhead (goal for the runner issue: under 10 ms).
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from arb_audit.model import ArtifactManifest, RunInfo, Submission
from arb_audit.revisions import Snapshotter, run_ref
from arb_audit.runner.grading import Grader, command_evaluator, run_evaluator, serve
from arb_audit.store import RunStore, revisions_path_for

# A shell evaluator: its start-up is small and steady, so the overhead is not lost in its noise.
EVALUATOR = ["/bin/sh", "-c", "echo '{\"score\": 1.0}'", "sh"]


def main() -> None:
    """Set up a recording, time both paths, print medians and the overhead."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        (workspace / "output" / "v1").mkdir(parents=True)
        for i in range(100):
            (workspace / f"m{i:03d}.py").write_text(f"x = {i}\n" * 100)
        header = json.dumps({"w": {"dtype": "F32", "shape": [262144], "data_offsets": [0, 1048576]}}).encode()
        (workspace / "output" / "v1" / "model.safetensors").write_bytes(
            len(header).to_bytes(8, "little") + header + bytes(1048576)
        )
        with RunStore.open(Path(tmp) / "run.duckdb") as store:
            run = RunInfo("recorded:bench/r", "recorded", tmp, started_at=datetime.now(UTC))
            store.ensure_run(run, None)
            git_dir = revisions_path_for(store.path)

            snapshotter = Snapshotter(git_dir, workspace, run_ref(run.run_id), lambda p, m: None)

            def take() -> None:
                if (rev := snapshotter.take("submission")) is not None:
                    store.append_revision(run.run_id, rev)

            def append(s: Submission, manifest: ArtifactManifest | None) -> Submission:
                return store.append_submission(run.run_id, s, manifest)

            grader = Grader(
                workspace=workspace,
                evaluate=command_evaluator(EVALUATOR),
                record=append,
                snapshot=take,
                meta={},
            )
            server = serve(grader, "127.0.0.1", 0)
            url = f"http://127.0.0.1:{server.server_address[1]}/submit"

            def through_proxy() -> None:
                request = urllib.request.Request(
                    url,
                    data=b'{"model_path": "output/v1"}',
                    method="POST",
                    headers={"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(request) as answer:
                    answer.read()

            def alone() -> None:
                run_evaluator(EVALUATOR, workspace / "output" / "v1", 60)

            times: dict[str, list[float]] = {"evaluator alone": [], "through the proxy": []}
            methods = {"evaluator alone": alone, "through the proxy": through_proxy}
            through_proxy()
            for round_ in range(rounds):
                order = list(methods) if round_ % 2 == 0 else list(reversed(methods))
                for name in order:
                    start = time.perf_counter()
                    methods[name]()
                    times[name].append(time.perf_counter() - start)
            server.shutdown()
    base = statistics.median(times["evaluator alone"])
    proxied = statistics.median(times["through the proxy"])
    for name, values in times.items():
        print(f"{name:18}: {statistics.median(values) * 1000:7.2f} ms")
    print(f"overhead per submission: {(proxied - base) * 1000:.2f} ms (ratio {proxied / base:.2f}x)")


if __name__ == "__main__":
    main()
