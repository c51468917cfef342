"""What a store may hold and how far a query on it may go, before anything trusts it.

A store can be found in a run folder (``.arb-audit/run.duckdb``, a recording's ``run.duckdb``): the
agent could have written it. DuckDB runs what a file defines, so a view over ``range(10^12)``, a
recursive view, a macro that shadows a built-in function, a trigger, a generated column or an index
on an expression would run inside our queries. Every store is therefore opened with limits (memory, threads,
a deadline per query, spill files in the per-user cache, no access to other files) and checked against
the tables arb-audit's own migrations make: an object they never make, a table defined otherwise, or
one holding more rows than a run store ever does makes the store unusable, with what was found named.
Each read of a store's rows is bounded too (:func:`bounded_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import duckdb

from arb_audit.cache_dirs import cache_root
from arb_audit.migrations import MIGRATIONS, MIGRATIONS_TABLE

QUERY_DEADLINE_S = 60.0
"""Longest one statement may run (DuckDB's ``max_execution_time``); our own queries take milliseconds."""
MEMORY_LIMIT = "512MB"
"""DuckDB's memory for one store; beyond it, work spills to :func:`spill_folder`."""
THREADS = 2
"""DuckDB's threads for one store: a run store is small, and an ingest runs many at once."""
MAX_ROWS = 5_000_000
"""Most rows a table of a store may hold, and a read of one may return (a run's record writes a few
hundred thousand at most: transcripts list at most a million files over all revisions)."""
MAX_MIGRATION_ROWS = 1_000
"""Most rows ``_arb_migrations`` is read for (arb-audit has a few dozen migrations)."""
MAX_FINDINGS = 6
"""What makes a store unusable, named in one message; the rest are counted."""


MAX_TEXT_CHARS = 64 * 1024 * 1024
"""Longest text (a kept audit's JSON) read from one cell of a store; an audit is a few MB at most."""


def capped(column: str) -> str:
    """Return a select expression for text ``column``: its value, NULL when over :data:`MAX_TEXT_CHARS`.

    With :func:`too_long` beside it, a reader tells an absent value from one it would not read.
    """
    return f"CASE WHEN length({column}::VARCHAR) <= {MAX_TEXT_CHARS} THEN {column} END"


def too_long(column: str) -> str:
    """Return a select expression that is true when text ``column`` is longer than :data:`MAX_TEXT_CHARS`."""
    return f"coalesce(length({column}::VARCHAR) > {MAX_TEXT_CHARS}, false)"


class StoreError(Exception):
    """The store cannot be opened, read or written; the message names the file."""


class TooManyRows(StoreError):
    """A read of a store would return more rows than :data:`MAX_ROWS`."""


def spill_folder() -> str:
    """Return where DuckDB spills what does not fit in :data:`MEMORY_LIMIT`: the per-user cache."""
    return str(cache_root() / "duckdb-spill")


def connect_config(deadline_s: float = QUERY_DEADLINE_S) -> dict[str, str | bool | int | float | list[str]]:
    """Return the settings every store connection starts with (``duckdb.connect(config=...)``).

    Extensions are never installed or loaded on a file's demand (a column of an extension's type).
    """
    return {
        "memory_limit": MEMORY_LIMIT,
        "threads": THREADS,
        "temp_directory": spill_folder(),
        "max_execution_time": max(1, int(deadline_s * 1000)),
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }


def lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """Forbid the connection every file but its store (COPY, read_csv, ATTACH), and any later SET."""
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def bounded_rows(
    con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any], what: str, limit: int = MAX_ROWS
) -> list[tuple[Any, ...]]:
    """Return the rows of ``sql`` (a SELECT without LIMIT), at most ``limit`` of them.

    Raises :class:`TooManyRows`, naming ``what`` was read, when there are more.
    """
    rows = con.execute(f"{sql} LIMIT {limit + 1}", list(params)).fetchall()
    if len(rows) > limit:
        raise TooManyRows(f"{what}: more than {limit:,} rows; not read")
    return rows


@dataclass(frozen=True, slots=True)
class _Catalog:
    """What a set of migrations makes: each table's definition and columns, and the indexes."""

    tables: dict[str, str]
    """Table name → its CREATE statement as DuckDB renders it."""
    columns: dict[str, dict[str, str]]
    """Table name → column name → type."""
    indexes: frozenset[str]
    """Index names (migrations make none beyond primary keys, which are not listed)."""


def _catalog(con: duckdb.DuckDBPyConnection, database: str) -> _Catalog:
    tables = dict(
        con.execute(
            "SELECT table_name, sql FROM duckdb_tables() WHERE database_name = ? AND NOT temporary",
            [database],
        ).fetchall()
    )
    columns: dict[str, dict[str, str]] = {}
    for table, column, kind in con.execute(
        "SELECT table_name, column_name, data_type FROM duckdb_columns()"
        " WHERE database_name = ? AND NOT internal ORDER BY table_name, column_index",
        [database],
    ).fetchall():
        columns.setdefault(table, {})[column] = kind
    indexes = frozenset(
        r[0]
        for r in con.execute(
            "SELECT index_name FROM duckdb_indexes() WHERE database_name = ?", [database]
        ).fetchall()
    )
    return _Catalog(tables, columns, indexes)


@cache
def _made_by(applied: frozenset[str]) -> _Catalog | None:
    """Return what the ``applied`` migrations make, in their order; None when they cannot all apply."""
    con = duckdb.connect(config={"threads": 1})
    try:
        con.execute(MIGRATIONS_TABLE)
        for step in MIGRATIONS:
            if step.__name__ in applied:
                step(con)
        return _catalog(con, "memory")
    except duckdb.Error:
        return None
    finally:
        con.close()


@cache
def _our_tables() -> frozenset[str]:
    """Every table any migration makes: one of these names is read as ours, so it must be ours."""
    made = _made_by(frozenset(step.__name__ for step in MIGRATIONS))
    assert made is not None, "arb-audit's own migrations apply"
    return frozenset(made.tables)


def _table_findings(name: str, found: dict[str, str], kept: dict[str, str]) -> list[str]:
    """Say how table ``name`` with columns ``found`` differs from arb-audit's ``kept`` columns."""
    said = [f"table {name} lacks column {c}" for c in kept if c not in found]
    said += [
        f"table {name}: column {c} is {found[c]}, arb-audit's is {kept[c]}"
        for c in kept
        if c in found and found[c] != kept[c]
    ]
    said += [f"table {name} has a column {c} arb-audit's has not" for c in found if c not in kept]
    return said or [f"table {name} is defined otherwise (its constraints, defaults or generated columns)"]


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def refusals(con: duckdb.DuckDBPyConnection, database: str) -> list[str]:
    """Return what in the store attached as ``database`` arb-audit never makes (empty when all is ours).

    Views, macros, types, triggers and indexes; a table of ours defined otherwise than the migrations
    the store lists make it, or holding more than :data:`MAX_ROWS` rows. Tables of other names are
    never read.
    """
    found: list[str] = []
    for kind, sql in (
        ("view", "SELECT view_name FROM duckdb_views() WHERE database_name = ? AND NOT internal"),
        ("macro or function", "SELECT function_name FROM duckdb_functions() WHERE database_name = ?"),
        ("type", "SELECT type_name FROM duckdb_types() WHERE database_name = ? AND NOT internal"),
        ("trigger", "SELECT trigger_name FROM duckdb_triggers() WHERE database_name = ?"),
    ):
        names = sorted({str(r[0]) for r in con.execute(sql, [database]).fetchall()})
        found += [f"a {kind} {name!r}" for name in names]
    catalog = _catalog(con, database)
    applied: frozenset[str] = frozenset()
    if "_arb_migrations" in catalog.tables:
        reference = _made_by(frozenset())
        assert reference is not None
        if catalog.tables["_arb_migrations"] != reference.tables["_arb_migrations"]:
            found.append("table _arb_migrations is defined otherwise")
        else:
            listed = bounded_rows(
                con,
                f"SELECT name FROM {_quoted(database)}.main._arb_migrations",
                [],
                "_arb_migrations",
                MAX_MIGRATION_ROWS,
            )
            applied = frozenset(str(r[0]) for r in listed)
    known = {step.__name__ for step in MIGRATIONS}
    unknown = sorted(applied - known)
    if unknown:
        found.append(
            f"migrations this arb-audit does not know ({', '.join(unknown[:3])}): a newer one made it"
        )
    made = _made_by(applied & known)
    if made is None:
        found.append(f"its migrations ({', '.join(sorted(applied))}) are not a set arb-audit applies")
        made = _Catalog({}, {}, frozenset())
    found += [f"an index {name!r}" for name in sorted(catalog.indexes - made.indexes)]
    for name in sorted(_our_tables() & catalog.tables.keys()):
        if name not in made.tables:
            found.append(f"table {name}, which its migrations do not make")
        elif catalog.tables[name] != made.tables[name]:
            found += _table_findings(name, catalog.columns.get(name, {}), made.columns[name])
    # a store without _arb_migrations lists no migration: a new store, or a DuckDB file of another's
    missing = made.tables.keys() - catalog.tables.keys() - {"_arb_migrations"}
    found += [f"no table {name}, which its migrations make" for name in sorted(missing)]
    if not found:
        for name in sorted(_our_tables() & catalog.tables.keys()):
            # fetchall, not fetchone: a result left unfinished blocks the connection's next relation
            ((counted,),) = con.execute(f"SELECT count(*) FROM {_quoted(database)}.main.{name}").fetchall()
            if counted > MAX_ROWS:
                found.append(f"table {name} holds {counted:,} rows, more than {MAX_ROWS:,}")
    return found


def refusal_message(findings: list[str]) -> str:
    """Say in one line what makes a store unusable (the first :data:`MAX_FINDINGS` findings)."""
    shown = "; ".join(findings[:MAX_FINDINGS])
    more = len(findings) - MAX_FINDINGS
    return f"not a store arb-audit made ({shown}{f'; and {more} more' if more > 0 else ''}); not read"
