"""Classify many files: expand folders, read each file safely, reuse cached results, use all cores."""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import resource
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from arb_audit.analyzer.cache import analyzer_version, blob_sha
from arb_audit.analyzer.classify import Classification, classify_source
from arb_audit.analyzer.launchers import classify_launcher
from arb_audit.analyzer.source import SourceFile, kind_for, read_bytes, read_source, source_from_bytes
from arb_audit.store import RunStore

SUFFIXES = frozenset({".py", ".pyw", ".ipynb", ".yaml", ".yml", ".sh", ".bash"})
"""Files a folder is searched for."""
SKIPPED_FOLDERS = frozenset({".git", "__pycache__", ".arb-audit", "node_modules", ".venv", ".tox"})
"""Folders never entered."""
CHUNK = 16
"""Files per task sent to a worker process."""
FILE_TIMEOUT_S = 60
"""Longest the analysis of one file may take in a worker process before the worker is stopped."""
WORKER_MEMORY_BYTES = 4 * 1024**3
"""Address space a worker process may map beyond what it maps when it starts."""

Job = tuple[Path, bytes | None, str | None, Path | None]
"""A file to classify: its path, its bytes as read once here, or why they could not be read, and the
folder nothing above which is read for it (a shell launcher's scripts; None: its repository's)."""


def iter_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Yield each path given, and every candidate file under each folder given, in sorted order.

    Symlinks inside folders are not followed; a path given that does not exist is yielded as it is,
    so that it gets its own error entry.
    """
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            pending = [path]
            found: list[Path] = []
            while pending:
                folder = pending.pop()
                try:
                    entries = list(os.scandir(folder))
                except OSError:
                    found.append(folder)
                    continue
                for entry in entries:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir():
                        if entry.name not in SKIPPED_FOLDERS:
                            pending.append(Path(entry.path))
                    elif Path(entry.name).suffix.lower() in SUFFIXES:
                        found.append(Path(entry.path))
            yield from sorted(found)
        else:
            yield path


def classify_loaded(source: SourceFile, guarded: bool = True, boundary: Path | None = None) -> Classification:
    """Classify a read file by its kind: launchers (YAML, shell) or Python (scripts, notebooks).

    ``boundary``: see :func:`arb_audit.analyzer.launchers.place_of`.
    """
    if source.kind in ("yaml", "shell"):
        return classify_launcher(source, boundary)
    if source.kind == "other" and source.error is None:
        return Classification(source.path, error="not a Python, notebook, YAML or shell file")
    return classify_source(source, guarded)


def classify_path(path: Path) -> Classification:
    """Read and classify one file; whatever goes wrong is the classification's ``error``."""
    try:
        return classify_loaded(read_source(path, str(path)))
    except Exception as exc:  # a detector's fault is this file's error, as in a worker's batch
        return _internal_error(path, exc)


def _internal_error(path: Path, exc: Exception) -> Classification:
    """Return the classification of a file whose analysis raised: the error names the exception."""
    return Classification(str(path), error=f"internal error: {type(exc).__name__}: {exc}")


def _mapped_bytes() -> int:
    """Return the address space this process maps now (Linux's VmSize; 0 where it cannot be read)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            return int(statm.read().split()[0]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def _limit_worker() -> None:
    """Bound a worker's memory and silence its stderr.

    A worker killed by a hostile file is reported as that file's error, not as a crash dump on the
    user's terminal.
    """
    with contextlib.suppress(ValueError, OSError):
        # On top of what the worker maps already: forked from a process that loaded torch (the demo,
        # an audit that weighed models), it starts with gigabytes of address space mapped, and a
        # fixed bound below that would fail every later mapping — libcst's own native module first.
        bound = _mapped_bytes() + WORKER_MEMORY_BYTES
        resource.setrlimit(resource.RLIMIT_AS, (bound, bound))
    faulthandler.disable()  # its dump goes to a descriptor of its own (pytest enables it)
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)


def _classify_chunk(jobs: list[Job], timeout_s: int = 0, guarded: bool = True) -> list[Classification]:
    """Classify files one by one; with ``timeout_s`` (in a worker only) a file that takes longer kills it.

    libcst's parser holds the GIL, so no thread can interrupt it; SIGALRM's default action ends the
    worker process instead, and :func:`_isolated` reports the file. ``guarded``: see
    :func:`arb_audit.analyzer.source.parse_python`.
    """
    results = []
    for path, raw, unreadable, boundary in jobs:
        signal.alarm(timeout_s)
        try:
            if raw is not None:
                source = source_from_bytes(raw, str(path))
            else:
                source = SourceFile(str(path), kind_for(str(path)), None, unreadable)
            results.append(classify_loaded(source, guarded, boundary))
        except Exception as exc:  # one file never stops the batch; the error names it
            results.append(_internal_error(path, exc))
        finally:
            signal.alarm(0)
    for result in results:
        result.detach()
    return results


def _isolated(todo: list[Job], jobs: int, timeout_s: int) -> dict[Path, Classification]:
    """Classify in worker processes; a file that kills its worker (time, memory, a crash) gets an error.

    Workers parse without the stack guards (a worker may die; the guards cost half a parse). When one
    dies, every unfinished task of its pool fails with it: those files are then classified one at a
    time, guarded, in a worker of their own, so that the file that kills it is known and the others,
    and the guards' clear messages (too deeply nested), come back.
    """
    results: dict[Path, Classification] = {}
    suspects: list[Job] = []
    chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    with ProcessPoolExecutor(max_workers=jobs, initializer=_limit_worker) as pool:
        futures = [(pool.submit(_classify_chunk, chunk, timeout_s, False), chunk) for chunk in chunks]
        for future, chunk in futures:
            try:
                results.update((job[0], r) for job, r in zip(chunk, future.result(), strict=True))
            except BrokenProcessPool:
                suspects.extend(chunk)
    alone: ProcessPoolExecutor | None = None
    try:
        for job in suspects:
            path = job[0]
            alone = alone or ProcessPoolExecutor(max_workers=1, initializer=_limit_worker)
            try:
                results[path] = alone.submit(_classify_chunk, [job], timeout_s, True).result()[0]
            except BrokenProcessPool:
                results[path] = Classification(
                    str(path),
                    error=f"analysis stopped: it took longer than {timeout_s} s, needed more than "
                    f"{WORKER_MEMORY_BYTES // 1024**3} GiB or crashed its worker",
                )
                alone.shutdown()
                alone = None
    finally:
        if alone is not None:
            alone.shutdown()
    return results


def _key(path: Path, raw: bytes | None) -> tuple[str, str] | None:
    # A shell launcher's result depends on the scripts beside it too: it is never cached by content.
    if raw is None or kind_for(str(path)) == "shell":
        return None
    return (blob_sha(raw), path.suffix.lower())


def classify_many(
    paths: Sequence[Path],
    jobs: int = 0,
    cache: RunStore | None = None,
    timeout_s: int = FILE_TIMEOUT_S,
    boundary: Path | None = None,
) -> Iterator[Classification]:
    """Classify every file under ``paths``, in order, in ``jobs`` worker processes (0: in this one).

    Workers bound each file's time (``timeout_s``) and memory. With a ``cache`` store, files whose
    content was classified by this analyzer version before are not analysed again, and new results
    are added to it. A shell launcher under a folder given is read within that folder; one given on
    its own within ``boundary`` (an audit's folder of a run's files), else within its repository.
    """
    within = {f: p if p.is_dir() and not p.is_symlink() else boundary for p in paths for f in iter_files([p])}
    files = list(within)
    loaded: list[Job] = [(p, *read_bytes(p), within[p]) for p in files]
    version = analyzer_version()
    keys = {p: _key(p, raw) for p, raw, *_ in loaded}
    cached = cache.load_classifications([k for k in keys.values() if k], version) if cache else {}
    todo = [job for job in loaded if keys[job[0]] not in cached]
    if jobs <= 0:
        by_path = {job[0]: result for job, result in zip(todo, _classify_chunk(todo), strict=True)}
    else:
        by_path = _isolated(todo, jobs, timeout_s) if todo else {}
    if cache is not None:
        new = {}
        for path, result in by_path.items():
            key = keys[path]
            if key is not None and not (result.error or "").startswith("internal error"):
                new[key] = json.dumps({**result.to_json(), "path": None})
        cache.save_classifications(new, version)
    for path in files:
        key = keys[path]
        if path in by_path:
            yield by_path[path]
        elif key is not None:
            yield Classification.from_json(json.loads(cached[key]), str(path))
