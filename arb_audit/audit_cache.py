"""An audit kept with what it was made from: auditing an unchanged run again reads it back.

"Unchanged" is every input the same as when the audit was made:
- the code: every module of the spine, the collectors, the analyzer and the taxonomy, and the
  versions of the libraries that decide what they find;
- the run folder's listing (paths, sizes, modification times: :func:`arb_audit.study.fingerprint`,
  arb-audit's own store left out);
- the options the audit was asked with;
- the listing of each folder or file outside the run folder it read (a recording's workspace, the
  base model's folder, a results CSV).

Anything else, and a store whose submission ledger no longer holds its hash chain, is audited again.
A run audited again whole takes seconds to minutes (classifying its code, comparing its weights);
read back, well under one (benchmarks/bench_audit.py).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from arb_audit.study import fingerprint

CODE_PACKAGES = ("arb_audit", "collectors", "analyzer", "taxonomy")
"""The packages whose code makes an audit (the TUI and the runner only read or write runs)."""
LIBRARIES = ("libcst", "torch", "safetensors", "duckdb", "polars", "pyyaml")
"""Installed libraries whose version can change what an audit finds (absent ones count as absent)."""


@cache
def code_version() -> str:
    """Return a digest of the code that makes an audit and of the libraries it relies on (once a process)."""
    digest = hashlib.sha256()
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        for root in sorted((spec.submodule_search_locations or []) if spec else []):
            for path in sorted(Path(root).rglob("*.py")):
                digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes() + b"\0")
    for library in LIBRARIES:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
    return digest.hexdigest()[:32]


def listing(path: Path) -> str:
    """Return a digest of what ``path`` holds by its listing: a folder's files, a file's size and time."""
    try:
        if path.is_dir():
            return fingerprint(path)
        st = path.stat()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return hashlib.sha256(f"{st.st_size}\0{st.st_mtime_ns}\0{st.st_ino}".encode()).hexdigest()


def input_key(run_dir: Path, options: dict[str, Any]) -> str:
    """Return the key of an audit of ``run_dir`` asked with ``options`` (JSON values), by this code."""
    digest = hashlib.sha256()
    digest.update(code_version().encode() + b"\0")
    digest.update(str(run_dir).encode("utf-8", "surrogateescape") + b"\0" + listing(run_dir).encode() + b"\0")
    digest.update(json.dumps(options, sort_keys=True, default=str).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def depends_on(run_dir: Path, paths: Iterable[str | Path | None]) -> dict[str, str]:
    """Return each of ``paths`` outside ``run_dir`` with its listing: what else the audit read."""
    outside: dict[str, str] = {}
    for given in paths:
        if not given:
            continue
        path = Path(given).resolve()
        if path != run_dir and run_dir not in path.parents:
            outside[str(path)] = listing(path)
    return outside


def unchanged(depends: dict[str, str]) -> bool:
    """Whether every path an audit read outside its run folder still lists as it did."""
    return all(listing(Path(path)) == listed for path, listed in depends.items())
