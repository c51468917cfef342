"""Artifact hashing throughput against a raw sequential read of the same file, in the same run.

Run on demand: ``python benchmarks/bench_artifact_hash.py [SIZE_MB] [ROUNDS]`` (default 1024 MB, 5 rounds).
Writes a safetensors file of SIZE_MB in 256 tensors, then times, in alternating order each round,
(a) reading it whole into a reused buffer and (b) ``hash_file`` (per-tensor BLAKE3 + Merkle root),
warm (page cache) and cold (evicted with posix_fadvise before each run). Prints medians and ratios
(goal for the runner issue: hashing >= 0.9x raw read). It also times BLAKE3 over the same bytes already
in memory, with all cores: the compute ceiling, which no way of reading the file can beat.
"""

from __future__ import annotations

import json
import os
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import blake3

from arb_audit.runner.artifact_hash import hash_file

BUFFER = 8 * 1024 * 1024


def write_model(path: Path, size_mb: int, n_tensors: int = 256) -> None:
    """Write a safetensors file of random tensors totalling ``size_mb`` MiB."""
    each = size_mb * 1024 * 1024 // n_tensors // 4 * 4
    header = {
        f"layer.{i}.weight": {
            "dtype": "F32",
            "shape": [each // 4],
            "data_offsets": [i * each, (i + 1) * each],
        }
        for i in range(n_tensors)
    }
    raw = json.dumps(header).encode()
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw)
        for _ in range(n_tensors):
            handle.write(os.urandom(each))


def raw_read(path: Path) -> None:
    """Read the file sequentially into one reused buffer."""
    buffer = bytearray(BUFFER)
    with path.open("rb", buffering=0) as handle:
        while handle.readinto(buffer):
            pass


def in_memory_ceiling(data: bytes) -> None:
    """Hash bytes already in memory with every core: no I/O, no page faults."""
    blake3.blake3(data, max_threads=blake3.blake3.AUTO).hexdigest()


def evict(path: Path) -> None:
    """Drop the file from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main() -> None:
    """Write the model, time both readers warm and cold, print medians and ratios."""
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.safetensors"
        write_model(path, size_mb)
        size = path.stat().st_size / 1e9
        methods: dict[str, Callable[[], object]] = {
            "raw read": partial(raw_read, path),
            "hash_file": partial(hash_file, path),
        }
        for cache in ("warm", "cold"):
            times: dict[str, list[float]] = {name: [] for name in methods}
            raw_read(path)
            for round_ in range(rounds):
                order = list(methods) if round_ % 2 == 0 else list(reversed(methods))
                for name in order:
                    if cache == "cold":
                        evict(path)
                    start = time.perf_counter()
                    methods[name]()
                    times[name].append(time.perf_counter() - start)
            if cache == "warm":
                data = path.read_bytes()
                times["ceiling (BLAKE3 of bytes in memory)"] = []
                for _ in range(rounds):
                    start = time.perf_counter()
                    in_memory_ceiling(data)
                    times["ceiling (BLAKE3 of bytes in memory)"].append(time.perf_counter() - start)
                del data
            base = statistics.median(times["raw read"])
            for name, values in times.items():
                median = statistics.median(values)
                print(
                    f"{cache:4} {name:36}: {median:6.2f} s  {size / median:6.2f} GB/s  ratio to raw read"
                    f" {base / median:4.2f}x"
                )


if __name__ == "__main__":
    main()
