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

The key is an HMAC under a secret kept in the per-user cache, never in the run folder, and so is each
kept row (:func:`audit_mac`, over its key, report and inputs): the agent that wrote the folder, and
could plant a store in it or rewrite one there, cannot make a row that passes for our audit. Where that
secret cannot be kept, nothing is read back. A store is opened with the bounds every store gets
(:mod:`arb_audit.store_bounds`): a planted one with views or huge tables reads back nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.metadata
import importlib.util
import json
import os
import secrets
import stat
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import blake3
import duckdb

from arb_audit.cache_dirs import cache_root
from arb_audit.chain import submission_chain_break
from arb_audit.model import STORE_DIRNAME
from arb_audit.schema import SCHEMA_VERSION, AuditReport
from arb_audit.store_bounds import StoreError, capped

CODE_PACKAGES = ("arb_audit", "arb_audit.collectors", "arb_audit.analyzer", "arb_audit.taxonomy")
"""The packages whose code makes an audit (the TUI and the runner only read or write runs)."""
ROOMS = ("analyzer", "collectors", "runner", "taxonomy", "tui")
"""The spine's sub-packages that are rooms of their own: each counts (or not) under its own name."""
LIBRARIES = ("libcst", "torch", "safetensors", "duckdb", "polars", "pyyaml")
"""Installed libraries whose version can change what an audit finds (absent ones count as absent)."""
MAX_FINGERPRINT_FILES = 100_000
"""Files listed for a run's fingerprint; a larger folder's fingerprint also says it was cut."""
SECRET_NAME = "audit-key"
"""The secret's file in the per-user cache folder."""
SECRET_BYTES = 32


def secret() -> bytes | None:
    """Return this user's secret for audit keys, made on first use; None where it cannot be kept."""
    return _secret_in(cache_root())


@cache
def _secret_in(folder: Path) -> bytes | None:
    path = folder / SECRET_NAME
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            with path.open("rb") as kept:
                found = kept.read(SECRET_BYTES + 1)
            if len(found) == SECRET_BYTES:
                return found
            # cut short (a process stopped while writing it): a new one; what the old one keyed is lost
            made = secrets.token_bytes(SECRET_BYTES)
            spare = path.with_name(f"{SECRET_NAME}.{os.getpid()}")
            spare.write_bytes(made)
            spare.chmod(0o600)
            spare.replace(path)
            return made
        made = secrets.token_bytes(SECRET_BYTES)
        with os.fdopen(handle, "wb") as out:
            out.write(made)
        return made
    except OSError:
        return None


@cache
def code_version() -> str:
    """Return a digest of the code that makes an audit and of the libraries it relies on (once a process)."""
    digest = hashlib.sha256()
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        for root in sorted((spec.submodule_search_locations or []) if spec else []):
            for path in sorted(Path(root).rglob("*.py")):
                if name == "arb_audit" and path.relative_to(root).parts[0] in ROOMS:
                    continue
                digest.update(f"{name}/{path.relative_to(root).as_posix()}\0".encode())
                digest.update(path.read_bytes() + b"\0")
    for library in LIBRARIES:
        try:
            version = importlib.metadata.version(library)
        except importlib.metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{library}={version}\0".encode())
    return digest.hexdigest()[:32]


CONTENT_BYTES = 64 * 1024
"""Files up to this size are fingerprinted by their content too: the JSON, logs and scripts that decide
an audit. Larger ones (models, datasets) by size, times and inode: their content ids are checked when
the audit hashes them."""


def _content(entry: os.DirEntry[str], st: os.stat_result) -> str:
    """Return the BLAKE3 of a small regular file's bytes ('' for anything else, or what cannot be read)."""
    if not stat.S_ISREG(st.st_mode) or st.st_size > CONTENT_BYTES:
        return ""
    try:
        # O_NONBLOCK: a file swapped for a FIFO between stat and open must not block the audit
        handle = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "unreadable"
    with os.fdopen(handle, "rb") as file:
        return blake3.blake3(file.read(CONTENT_BYTES + 1)).hexdigest()


def fingerprint(folder: Path) -> str:
    """Return a fingerprint of the files under ``folder``.

    Every file counts by path, size, modification and status-change times and mode; a small one by its
    content too (:data:`CONTENT_BYTES`). The status-change time cannot be set back by the folder's
    writer, so an edit to the same size with the modification time restored still changes the
    fingerprint. arb-audit's own store inside the folder is left out: auditing a run must not change
    its fingerprint.
    """
    hasher = blake3.blake3()
    pending, seen = [folder], 0
    while pending and seen <= MAX_FINGERPRINT_FILES:
        current = pending.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            hasher.update(f"!{current}:{exc.strerror}\n".encode("utf-8", "surrogateescape"))
            continue
        for entry in entries:
            if entry.name == STORE_DIRNAME and Path(entry.path).parent == folder:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            seen += 1
            # surrogateescape: a name that is not UTF-8 (an agent can write any bytes) is hashed as is
            line = (
                f"{entry.path}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_mode}"
                f"\0{_content(entry, st)}\n"
            )
            hasher.update(line.encode("utf-8", "surrogateescape"))
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
    if pending:
        hasher.update(b"cut")
    return hasher.hexdigest()


def listing(path: Path) -> str:
    """Return a digest of what ``path`` holds by its listing: a folder's files, a file's size and time."""
    try:
        if path.is_dir():
            return fingerprint(path)
        st = path.stat()
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    return hashlib.sha256(
        f"{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}\0{st.st_ino}".encode()
    ).hexdigest()


def input_key(run_dir: Path, options: dict[str, Any], listed: str | None = None) -> str | None:
    """Return the key of an audit of ``run_dir`` asked with ``options`` (JSON values), by this code.

    ``listed`` is the folder's :func:`listing` when already taken. None when there is no secret to key
    it with (then nothing is kept or read back).
    """
    key = secret()
    if key is None:
        return None
    digest = hmac.new(key, digestmod=hashlib.sha256)
    digest.update(code_version().encode() + b"\0")
    digest.update(
        str(run_dir).encode("utf-8", "surrogateescape")
        + b"\0"
        + (listed or listing(run_dir)).encode()
        + b"\0"
    )
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


def audit_mac(key: str, report: str, depends: str | None) -> str | None:
    """Return the HMAC that keys a kept audit's row to this user's secret (None without a secret).

    ``key`` is the row's :func:`input_key`, ``report`` and ``depends`` its JSON text as stored.
    """
    secret_key = secret()
    if secret_key is None:
        return None
    message = "\0".join((key, report, depends or "")).encode("utf-8", "surrogateescape")
    return hmac.new(secret_key, message, hashlib.sha256).hexdigest()


def kept_in(con: duckdb.DuckDBPyConnection, key: str | None) -> AuditReport | None:
    """Return the audit the store on ``con`` kept for ``key``, if nothing it was made from changed since.

    None when there is none, when its row does not carry this user's key (:func:`audit_mac`: written
    or rewritten by another), when it does not read back as an audit of this schema version (an older
    arb-audit's, or an edited store: the run is audited anew, never misread), when a path it read
    outside the run folder changed, when the run's submission ledger no longer holds its hash chain,
    or when the store predates kept audits.
    """
    if key is None:
        return None
    try:
        # texts past the bound read as NULL, and so as no kept audit (the store may be the agent's)
        found = con.execute(
            f"SELECT run_id, {capped('report')}, {capped('depends')}, mac FROM audits"
            " WHERE input_key = ? LIMIT 1",
            [key],
        ).fetchall()
        if not found:
            return None
        run_id, report, depends, mac = found[0]
        expected = audit_mac(key, report, depends) if isinstance(report, str) else None
        if not isinstance(mac, str) or expected is None or not hmac.compare_digest(mac, expected):
            return None
        audit, outside = json.loads(report), json.loads(depends or "{}")
        if not isinstance(audit, dict) or not isinstance(outside, dict):
            return None
        if audit.get("schema_version") != SCHEMA_VERSION:
            return None
        if not unchanged({str(k): str(v) for k, v in outside.items()}):
            return None
        if submission_chain_break(con, str(run_id)) is not None:
            return None
        return AuditReport.model_validate(audit)
    # pydantic's ValidationError included; StoreError: a ledger over the bounds of arb_audit.store_bounds
    except (duckdb.Error, StoreError, TypeError, ValueError, RecursionError):
        return None


def read_back(store_file: Path, key: str | None) -> AuditReport | None:
    """Return the audit the store at ``store_file`` kept for ``key`` (see :func:`kept_in`), if any.

    The store is opened read-only and only for this, within the bounds of every store: one another
    process holds, that is not a DuckDB file, or that holds what arb-audit never makes, reads back
    nothing (the audit made anew says why).
    """
    from arb_audit.store import RunStore

    if key is None or not store_file.is_file():
        return None
    try:
        with RunStore.open(store_file, read_only=True, wait_s=0) as store:
            return kept_in(store.con, key)
    except StoreError:
        return None
