"""The hash chains that make the ledgers tamper-evident: each row's hash covers the row before it.

Kept apart from the store's module, which imports polars: checking a chain needs only DuckDB.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

import duckdb

from arb_audit.store_bounds import bounded_rows

GENESIS_HASH = "0" * 64
"""prev_hash of the first row of a hash chain."""

CHAINED_COLUMNS = (
    "run_id",
    "seq",
    "requested_at",
    "completed_at",
    "model_path",
    "artifact_id",
    "score",
    "error",
    "status",
    "best_so_far",
    "prev_hash",
    "harness_id",
    "elapsed_s",
    "gpu",
    "baseline_score",
    "artifact_path",
    "duplicate_of",
    "evidence",
)
"""The submission columns the hash chain covers; a later migration's new columns are not in it."""


def chain_hash(prev_hash: str, row: dict[str, Any], columns: Sequence[str] = CHAINED_COLUMNS) -> str:
    """Return the hash that chains ``row`` to the row before it (SHA-256 over canonical JSON).

    The JSON holds ``columns``: the submission ledger's, unless another ledger names its own.
    """
    body = json.dumps({k: row.get(k) for k in columns}, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256((prev_hash + body).encode()).hexdigest()


def submission_chain_break(con: duckdb.DuckDBPyConnection, run_id: str) -> int | None:
    """Return the seq of the first submission of ``run_id`` whose hash chain no longer holds, or None.

    Raises ``TooManyRows`` (arb_audit.store_bounds) for a ledger longer than any run keeps.
    """
    rows = bounded_rows(
        con, "SELECT * FROM submissions WHERE run_id = ? ORDER BY seq", [run_id], f"submissions of {run_id}"
    )
    names = [d[0] for d in con.description or []]
    prev = GENESIS_HASH
    for values in rows:
        row = dict(zip(names, values, strict=True))
        if row["prev_hash"] != prev or chain_hash(prev, row) != row["record_hash"]:
            return int(row["seq"])
        prev = row["record_hash"]
    return None


def ledger_heads(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple[int, str]]:
    """Return ``(seq, record_hash)`` of every submission of ``run_id``, in seq order."""
    rows = bounded_rows(
        con,
        "SELECT seq, record_hash FROM submissions WHERE run_id = ? ORDER BY seq",
        [run_id],
        f"submissions of {run_id}",
    )
    return [(int(seq), str(record_hash)) for seq, record_hash in rows]


def ledger_head(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[int, str]:
    """Return ``(seq, record_hash)`` of the last submission of ``run_id``; ``(0, GENESIS_HASH)`` if none."""
    row = con.execute(
        "SELECT seq, record_hash FROM submissions WHERE run_id = ? ORDER BY seq DESC LIMIT 1", [run_id]
    ).fetchone()
    return (int(row[0]), str(row[1])) if row else (0, GENESIS_HASH)
