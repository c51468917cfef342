"""Classify many files: expand folders, read each file safely, reuse cached results, use all cores."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from analyzer.cache import analyzer_version, blob_sha
from analyzer.classify import Classification, classify_source
from analyzer.launchers import classify_launcher
from analyzer.source import MAX_SOURCE_BYTES, SourceFile, read_source, source_from_bytes
from arb_audit.store import RunStore

SUFFIXES = frozenset({".py", ".pyw", ".ipynb", ".yaml", ".yml", ".sh", ".bash"})
"""Files a folder is searched for."""
SKIPPED_FOLDERS = frozenset({".git", "__pycache__", ".arb-audit", "node_modules", ".venv", ".tox"})
"""Folders never entered."""
CHUNK = 16
"""Files per task sent to a worker process."""

Job = tuple[Path, bytes | None]
"""A file to classify, with its bytes when they were read safely here (else it is read in the worker)."""


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


def read_bytes(path: Path) -> bytes | None:
    """Read a regular file of at most MAX_SOURCE_BYTES without following a symlink; None otherwise."""
    try:
        # O_NONBLOCK: a FIFO planted under a source name must not hang the batch.
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            raw = handle.read(MAX_SOURCE_BYTES + 1)
        except OSError:
            return None
    return raw if len(raw) <= MAX_SOURCE_BYTES else None


def classify_loaded(source: SourceFile) -> Classification:
    """Classify a read file by its kind: launchers (YAML, shell) or Python (scripts, notebooks)."""
    if source.kind in ("yaml", "shell"):
        return classify_launcher(source)
    if source.kind == "other" and source.error is None:
        return Classification(source.path, error="not a Python, notebook, YAML or shell file")
    return classify_source(source)


def classify_path(path: Path) -> Classification:
    """Read and classify one file; whatever goes wrong is the classification's ``error``."""
    return classify_loaded(read_source(path, str(path)))


def _classify_chunk(jobs: list[Job]) -> list[Classification]:
    results = []
    for path, raw in jobs:
        try:
            source = source_from_bytes(raw, str(path)) if raw is not None else read_source(path, str(path))
            results.append(classify_loaded(source))
        except Exception as exc:  # one file never stops the batch; the error names it
            results.append(Classification(str(path), error=f"internal error: {type(exc).__name__}: {exc}"))
    for result in results:
        result.detach()
    return results


def _key(path: Path, raw: bytes | None) -> tuple[str, str] | None:
    return (blob_sha(raw), path.suffix.lower()) if raw is not None else None


def classify_many(
    paths: Sequence[Path], jobs: int = 1, cache: RunStore | None = None
) -> Iterator[Classification]:
    """Classify every file under ``paths``, in order, with ``jobs`` worker processes.

    With a ``cache`` store, files whose content was classified by this analyzer version before are
    not analysed again, and new results are added to it.
    """
    files = list(iter_files(paths))
    loaded: list[Job] = [(p, read_bytes(p)) for p in files]
    version = analyzer_version()
    keys = {p: _key(p, raw) for p, raw in loaded}
    cached = cache.load_classifications([k for k in keys.values() if k], version) if cache else {}
    todo = [(p, raw) for p, raw in loaded if keys[p] not in cached]
    chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
    if jobs <= 1 or len(chunks) <= 1:
        fresh = [r for chunk in chunks for r in _classify_chunk(chunk)]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            fresh = [r for results in pool.map(_classify_chunk, chunks) for r in results]
    by_path = {path: result for (path, _), result in zip(todo, fresh, strict=True)}
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
