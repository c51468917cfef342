"""Code snapshots into revisions.git against the plain git CLI doing the same, in the same run.

Run on demand: ``python benchmarks/bench_snapshot.py [ROUNDS] [CHECKPOINT_MB]`` (default 20 rounds, 1024 MB).
A workspace of 100 Python files beside a checkpoint (a sparse file, listed but never committed) is
snapshotted after one file changes and again after nothing changed, by (a) ``arb_audit.revisions.snapshot``
(one call, state from disk), (b) the recorder's ``Snapshotter`` (state kept in memory) and (c) git's CLI
with its own git dir and private index (``add -A``, ``write-tree``, ``commit-tree``,
``update-ref``; the checkpoint excluded through ``info/exclude``). Order alternates each round; medians
and ratios are printed (goal for the runner issue: changed no slower than the CLI, no change under 1 ms).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from arb_audit.revisions import Snapshotter, snapshot


def git_cli_snapshot(git_dir: Path, work: Path, message: str) -> None:
    """Snapshot ``work`` with the git CLI into ``git_dir`` (private index), skipping an unchanged tree."""
    env = {
        **os.environ,
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(work),
        "GIT_INDEX_FILE": str(git_dir / "cli-index"),
    }

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], env=env, capture_output=True, text=True, check=True
        ).stdout.strip()

    git("add", "-A")
    tree = git("write-tree")
    parent = subprocess.run(
        ["git", "rev-parse", "-q", "--verify", "refs/heads/cli"], env=env, capture_output=True, text=True
    ).stdout.strip()
    if parent and git("rev-parse", f"{parent}^{{tree}}") == tree:
        return
    commit = git("commit-tree", tree, *(["-p", parent] if parent else []), "-m", message)
    git("update-ref", "refs/heads/cli", commit)


def main() -> None:
    """Build the workspace, time both snapshotters changed and unchanged, print medians and ratios."""
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    checkpoint_mb = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    with tempfile.TemporaryDirectory() as tmp:
        work, ours, theirs = Path(tmp) / "ws", Path(tmp) / "ours.git", Path(tmp) / "cli.git"
        (work / "ckpt").mkdir(parents=True)
        for i in range(100):
            (work / f"module_{i:03d}.py").write_text(f"value = {i}\n" * 200)
        with (work / "ckpt" / "model.safetensors").open("wb") as handle:
            handle.truncate(checkpoint_mb * 1024 * 1024)
        subprocess.run(["git", "init", "-q", "--bare", str(theirs)], check=True)
        (theirs / "info").mkdir(exist_ok=True)
        (theirs / "info" / "exclude").write_text("ckpt/\n")

        def ours_snap(message: str) -> None:
            snapshot(
                ours,
                work,
                ref="refs/heads/ours",
                seq=1,
                trigger="timer",
                message=message,
                on_problem=lambda path, problem: None,
            )

        def cli_snap(message: str) -> None:
            git_cli_snapshot(theirs, work, message)

        live = Snapshotter(Path(tmp) / "live.git", work, "refs/heads/live", lambda path, problem: None)

        def live_snap(message: str) -> None:
            live.take("timer")

        methods: dict[str, Callable[[str], None]] = {
            "arb-audit": ours_snap,
            "arb-audit live": live_snap,
            "git CLI": cli_snap,
        }
        for method in methods.values():
            method("snapshot")
        times: dict[tuple[str, str], list[float]] = {}
        for round_ in range(rounds):
            (work / "module_000.py").write_text(f"value = {round_}\n")
            order = list(methods) if round_ % 2 == 0 else list(reversed(methods))
            for case in ("changed", "unchanged"):  # the second pass finds what the first committed
                for name in order:
                    start = time.perf_counter()
                    methods[name]("snapshot")
                    times.setdefault((name, case), []).append(time.perf_counter() - start)
        for case in ("changed", "unchanged"):
            base = statistics.median(times[("git CLI", case)])
            for name in methods:
                median = statistics.median(times[(name, case)])
                print(f"{case:9} {name:14}: {median * 1000:7.2f} ms  ratio to git CLI {base / median:6.2f}x")


if __name__ == "__main__":
    main()
