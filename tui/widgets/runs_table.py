"""The runs list: one row per run, keyed by its run key."""

from __future__ import annotations

import polars as pl
from textual.widgets import DataTable

HEADERS = ("✓", "run", "task", "stack", "best", "route", "failure", "quadrant", "flags")
"""The list's columns (✓: this reviewer has recorded a verdict on the run)."""
HIDDEN = "·"
"""An analyzer label a blind reviewer has not ruled on yet."""
MAX_KEY_CHARS = 48
"""A run key (a folder path) is shown by its end, where the runs differ."""


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _short(key: str) -> str:
    return key if len(key) <= MAX_KEY_CHARS else "…" + key[-(MAX_KEY_CHARS - 1) :]


class RunsTable(DataTable[str]):
    """The runs of the session, in the order and under the filter the runs screen chose."""

    def on_mount(self) -> None:
        """Lay out the columns."""
        self.cursor_type = "row"
        self.zebra_stripes = True
        self.add_columns(*HEADERS)

    def show(self, runs: pl.DataFrame, reviewed: set[str], ruled: set[tuple[str, str]] | None = None) -> None:
        """Replace the rows with ``runs``, ticking those this reviewer has reviewed.

        Under blind review ``ruled`` holds the (run, field) pairs the reviewer has ruled on; the
        analyzer's route, failure, quadrant and flags of the others are not shown.
        """
        self.clear()
        rows = []
        for r in runs.iter_rows(named=True):
            if ruled is not None:
                key = r["run_key"]
                r = {
                    **r,
                    "chain": r["chain"] if (key, "chain") in ruled else HIDDEN,
                    "failure": r["failure"] if (key, "failure") in ruled else HIDDEN,
                    "quadrant": r["quadrant"] if (key, "quadrant") in ruled else HIDDEN,
                    "flags": [f for f in r["flags"] or [] if (key, f"flag:{f}") in ruled] or [HIDDEN],
                }
            stack = f"{r['scaffold'] or '—'} × {r['driver'] or '—'}"
            route = r["chain"] or r["route_label"] or ("(error)" if r["error"] else "—")
            rows.append(
                (
                    "✓" if r["run_key"] in reviewed else " ",
                    _short(r["run_key"]),
                    f"{r['task'] or '—'}",
                    stack,
                    _score(r["best_score"]),
                    route,
                    r["failure"] or "—",
                    r["quadrant"] or "—",
                    ", ".join(r["flags"] or []),
                )
            )
        keys = runs["run_key"].to_list()
        for key, row in zip(keys, rows, strict=True):
            self.add_row(*row, key=key)
