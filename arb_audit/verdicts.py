"""The reviewers' verdicts: an append-only, hash-chained ledger in the store that was reviewed.

A verdict rules on one field of one run's audit (``arb_audit.taxonomy.review.FIELDS``): it agrees with the
analyzer's value or overrides it with another value the taxonomy allows, with a free note. Each
verdict keeps who made it and when, the value it supersedes (the same reviewer's last verdict on that
field of that run) and the analyzer's value at the time. Nothing is updated or deleted: a new verdict
supersedes an old one, and every row is chained to the one before it, so an edit to the ledger shows
in ``arb-audit verify``.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import duckdb
import polars as pl

from arb_audit.chain import GENESIS_HASH, chain_hash
from arb_audit.redaction import redact
from arb_audit.store import RunStore, StoreError
from arb_audit.taxonomy.review import ANALYZER, check_value, normalise_chain

REVIEWER_ENV = "ARB_AUDIT_REVIEWER"
"""The environment variable naming the reviewer when ``--reviewer`` is not given."""
MAX_NOTE_CHARS = 4000
"""A longer note is refused rather than cut: it is the reviewer's own words."""
MAX_REVIEWER_CHARS = 80
CHAINED = (
    "seq",
    "run_key",
    "run_id",
    "reviewer",
    "field",
    "value",
    "previous",
    "analyzer",
    "note",
    "created_at",
    "blind",
)
"""The verdict columns the hash chain covers."""
LEDGER_SCHEMA = pl.Schema(
    {
        "seq": pl.Int32(),  # position in the ledger, from 1
        "run_key": pl.String(),  # the study's run key, or the run id in a run store
        "run_id": pl.String(),
        "reviewer": pl.String(),
        "field": pl.String(),  # arb_audit.taxonomy.review.FIELDS
        "value": pl.String(),  # the reviewer's value
        "previous": pl.String(),  # the value this reviewer gave before (None for a first verdict)
        "analyzer": pl.String(),  # the analyzer's value when the verdict was made
        "note": pl.String(),
        "created_at": pl.Datetime("us"),  # UTC
        "blind": pl.Boolean(),  # made without seeing the analyzer's or other reviewers' values
        "prev_hash": pl.String(),
        "record_hash": pl.String(),
    }
)
"""The verdict ledger as :func:`load_verdicts` returns it (the comments say what each column holds)."""


class VerdictRefused(ValueError):
    """A verdict the ledger does not take (a value outside the taxonomy, no reviewer, a huge note)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """One ruling to append."""

    run_key: str
    """Which run: the study's run key, or the run id when a single run is reviewed."""
    run_id: str | None
    """The run's id as its audit gives it."""
    field: str
    """What it rules on (``arb_audit.taxonomy.review.FIELDS``)."""
    value: str
    """The reviewer's value: the analyzer's when agreeing, another allowed value when overriding."""
    reviewer: str
    """Who."""
    analyzer: str | None
    """The analyzer's value of the field, shown or not."""
    note: str = ""
    """The reviewer's free note."""
    blind: bool = False
    """Whether it was made without seeing the analyzer's or other reviewers' values."""


def reviewer_name(explicit: str | None = None) -> str:
    """Return the reviewer: ``explicit`` (``--reviewer``), else $ARB_AUDIT_REVIEWER, else the login."""
    for name in (explicit, os.environ.get(REVIEWER_ENV)):
        if name and name.strip():
            return name.strip()
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in a bare container
        return ""


def _checked(verdict: Verdict) -> Verdict:
    """Return ``verdict`` with its chain written as the analyzer writes chains, or refuse it."""
    reviewer = verdict.reviewer.strip()
    if not reviewer:
        raise VerdictRefused(f"no reviewer: give --reviewer or set ${REVIEWER_ENV}")
    if reviewer == ANALYZER:
        raise VerdictRefused(f"{ANALYZER!r} is the analyzer's name in the agreement tables, not a reviewer's")
    if len(reviewer) > MAX_REVIEWER_CHARS or not reviewer.isprintable():
        raise VerdictRefused(f"a reviewer's name is printable and at most {MAX_REVIEWER_CHARS} characters")
    if len(verdict.note) > MAX_NOTE_CHARS:
        raise VerdictRefused(f"the note has {len(verdict.note)} characters; at most {MAX_NOTE_CHARS}")
    value = normalise_chain(verdict.value) if verdict.field == "chain" else verdict.value
    try:
        problem = check_value(verdict.field, value)
    except KeyError as exc:
        raise VerdictRefused(str(exc.args[0])) from exc
    if problem is not None:
        raise VerdictRefused(problem)
    return Verdict(
        verdict.run_key,
        verdict.run_id,
        verdict.field,
        value,
        reviewer,
        verdict.analyzer,
        # a note quotes what the reviewer saw, a key in the run's files included: kept redacted
        redact(verdict.note),
        verdict.blind,
    )


def append_verdicts(
    store: RunStore, verdicts: Sequence[Verdict], now: datetime | None = None
) -> pl.DataFrame:
    """Append ``verdicts`` to the ledger of ``store`` in one transaction; return the rows written.

    Every verdict is checked before any is written (:class:`VerdictRefused` names the first bad one).
    """
    checked = [_checked(v) for v in verdicts]
    created = (now or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    rows: list[dict[str, object]] = []
    store.con.execute("BEGIN TRANSACTION")
    try:
        # fetchall, not fetchone: DuckDB refuses other work on a connection with rows left unread
        last = store.con.execute("SELECT seq, record_hash FROM verdicts ORDER BY seq DESC LIMIT 1").fetchall()
        seq, prev_hash = last[0] if last else (0, GENESIS_HASH)
        latest = _latest_values(store, {(v.run_key, v.reviewer, v.field) for v in checked})
        for v in checked:
            row: dict[str, object] = {
                "seq": seq + 1,
                "run_key": v.run_key,
                "run_id": v.run_id,
                "reviewer": v.reviewer,
                "field": v.field,
                "value": v.value,
                "previous": latest.get((v.run_key, v.reviewer, v.field)),
                "analyzer": v.analyzer,
                "note": v.note,
                "created_at": created,
                "blind": v.blind,
                "prev_hash": prev_hash,
            }
            row["record_hash"] = prev_hash = chain_hash(prev_hash, row, CHAINED)
            latest[(v.run_key, v.reviewer, v.field)] = v.value
            seq += 1
            rows.append(row)
        frame = pl.DataFrame(rows, schema=LEDGER_SCHEMA)
        store.con.register("incoming_verdicts", frame)
        store.con.execute(
            f"INSERT INTO verdicts ({', '.join(LEDGER_SCHEMA)}) SELECT * FROM incoming_verdicts"
        )
        store.con.unregister("incoming_verdicts")
        store.con.execute("COMMIT")
    except Exception:
        store.con.execute("ROLLBACK")
        raise
    return frame


def _latest_values(store: RunStore, keys: set[tuple[str, str, str]]) -> dict[tuple[str, str, str], str]:
    """Return each (run key, reviewer, field)'s last value in the ledger, read in one query."""
    if not keys:
        return {}
    wanted = pl.DataFrame(sorted(keys), schema=["run_key", "reviewer", "field"], orient="row")
    store.con.register("wanted_verdicts", wanted)
    try:
        found = store.con.execute(
            "SELECT v.run_key, v.reviewer, v.field, arg_max(v.value, v.seq) FROM verdicts v"
            " JOIN wanted_verdicts USING (run_key, reviewer, field) GROUP BY ALL"
        ).fetchall()
    finally:
        store.con.unregister("wanted_verdicts")
    return {(run_key, reviewer, field): str(value) for run_key, reviewer, field, value in found}


def load_verdicts(store: RunStore) -> pl.DataFrame:
    """Return the whole ledger, oldest first (the columns of :data:`LEDGER_SCHEMA`).

    Raises StoreError, naming the store, when its ledger is missing or damaged.
    """
    try:
        table = store.con.sql(
            f"SELECT {', '.join(LEDGER_SCHEMA)} FROM verdicts ORDER BY seq"
        ).to_arrow_table()
        frame = pl.from_arrow(table)
        assert isinstance(frame, pl.DataFrame)
        return frame.cast(LEDGER_SCHEMA)
    except (duckdb.Error, pl.exceptions.PolarsError) as exc:
        raise StoreError(
            f"{store.path}: its verdict ledger cannot be read ({str(exc).splitlines()[0]})"
        ) from exc


def current_verdicts(ledger: pl.DataFrame) -> pl.DataFrame:
    """Return each reviewer's standing verdict per run and field: the last one they made."""
    return ledger.sort("seq").unique(["run_key", "reviewer", "field"], keep="last", maintain_order=True)


def chain_break(ledger: pl.DataFrame) -> int | None:
    """Return the position (from 1) where the hash chain of ``ledger`` first fails, or None.

    ``ledger`` is what :func:`load_verdicts` returns. An edited row fails at its own position, a
    missing one (a gap in the sequence) at the position it left empty. Verdicts cut from the end of
    the ledger leave a shorter chain that holds: compare :func:`ledger_head` with one kept elsewhere.
    """
    prev, expected = GENESIS_HASH, 1
    for row in ledger.iter_rows(named=True):
        if (
            row["seq"] != expected
            or row["prev_hash"] != prev
            or chain_hash(prev, row, CHAINED) != row["record_hash"]
        ):
            return expected
        prev, expected = row["record_hash"], expected + 1
    return None


def ledger_head(ledger: pl.DataFrame) -> tuple[int, str]:
    """Return how many verdicts ``ledger`` holds and the hash of the last (a value to keep elsewhere)."""
    return ledger.height, (ledger["record_hash"][-1] if ledger.height else GENESIS_HASH)
