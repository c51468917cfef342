"""The runs list's filter and sort orders, as polars expressions over the session's runs.

A filter is words separated by spaces, all of which must hold: ``key:value`` matches a field
(case-insensitive substring; ``reviewed:yes|no`` and ``flag:NAME`` are exact about what they test),
a bare word matches the run, task, route or chain. ``task:gsm8k route:sft reviewed:no``.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from arb_audit.taxonomy.strength import STRENGTHS, rank

FIELD_COLUMNS = {
    "task": "task",
    "level": "level",
    "scaffold": "scaffold",
    "driver": "driver",
    "mode": "mode",
    "seed": "seed",
    "route": "route_label",
    "chain": "chain",
    "failure": "failure",
    "quadrant": "quadrant",
    "run": "run_key",
}
"""Filter keys that match one column of the runs list."""
FILTER_KEYS = (*FIELD_COLUMNS, "stack", "flag", "reviewed")
"""Every key a filter word may have."""
_BARE = ("run_key", "task", "route_label", "chain")


class FilterError(ValueError):
    """A filter that cannot be read, with the word that is wrong."""


STRENGTH_RANKS = {d.name: rank(d.name) for d in STRENGTHS}
"""Evidence levels as sort keys: the weakest first among runs that need review."""


def _contains(column: str, value: str) -> pl.Expr:
    return (
        pl.col(column).cast(pl.String).str.to_lowercase().str.contains(value, literal=True).fill_null(False)
    )


def _word(word: str, reviewed: set[str]) -> pl.Expr:
    """Return the expression one filter word stands for."""
    key, sep, value = word.partition(":")
    if not sep:
        needle = word.lower()
        return pl.any_horizontal(*(_contains(c, needle) for c in _BARE))
    value = value.lower()
    if key in FIELD_COLUMNS:
        return _contains(FIELD_COLUMNS[key], value)
    if key == "stack":
        return _contains("scaffold", value) | _contains("driver", value)
    if key == "flag":
        return (
            pl.col("flags")
            .list.eval(pl.element().str.to_lowercase().str.contains(value, literal=True))
            .list.any()
        )
    if key == "reviewed":
        if value not in ("yes", "no"):
            raise FilterError(f"{word!r}: reviewed is yes or no")
        done = pl.col("run_key").is_in(sorted(reviewed))
        return done if value == "yes" else ~done
    raise FilterError(f"{word!r}: no filter key {key!r} (keys: {', '.join(FILTER_KEYS)})")


BLIND_KEYS = ("route", "chain", "failure", "quadrant", "flag")
"""Keys that filter on the analyzer's labels: refused under blind review, where they would reveal them."""


def apply_filter(runs: pl.DataFrame, text: str, reviewed: set[str], blind: bool = False) -> pl.DataFrame:
    """Return the runs that every word of ``text`` matches (all of them for an empty filter)."""
    words = text.split()
    if not words:
        return runs
    for word in words:
        key, sep, _ = word.partition(":")
        if blind and (key in BLIND_KEYS or not sep):
            raise FilterError(
                f"{word!r}: blind review filters on task, level, stack, mode, seed, run or reviewed"
            )
    return runs.filter(pl.all_horizontal(*(_word(w, reviewed) for w in words)))


def _needs_review(runs: pl.DataFrame, reviewed: set[str]) -> pl.DataFrame:
    """Order the runs that most need a reviewer first.

    Unreviewed runs first; among them, where score and intended training disagree, then the weakest
    evidence (the route's evidence level, none counting as weakest); runs that were not audited last.
    """
    return (
        runs.with_columns(_done=pl.col("run_key").is_in(sorted(reviewed)))
        .sort(
            [
                pl.col("error").is_not_null(),
                "_done",
                "disagrees",
                pl.col("strength")
                .replace_strict(STRENGTH_RANKS, default=0, return_dtype=pl.Int8)
                .fill_null(-1),
                "run_key",
            ],
            descending=[False, False, True, False, False],
        )
        .drop("_done")
    )


def _by(column: str, descending: bool = False) -> Callable[[pl.DataFrame, set[str]], pl.DataFrame]:
    def order(runs: pl.DataFrame, reviewed: set[str]) -> pl.DataFrame:
        return runs.sort([column, "run_key"], descending=[descending, False], nulls_last=True)

    return order


SORTS: dict[str, Callable[[pl.DataFrame, set[str]], pl.DataFrame]] = {
    "needs review": _needs_review,
    "run": _by("run_key"),
    "task": _by("task"),
    "best score": _by("best_score", descending=True),
    "route": _by("route_label"),
    "failure": _by("failure"),
    "quadrant": _by("quadrant"),
}
"""The runs list's orders, in the order ``s`` cycles through them."""
BLIND_SORTS = ("needs review", "run", "task", "best score")
"""The orders blind review cycles through: none sorts by an analyzer label."""
