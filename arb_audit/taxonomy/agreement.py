"""How far the reviewers agree with the analyzer and with each other: Cohen's and Fleiss' κ, confusion.

Cohen's κ is computed for every pair of raters, Fleiss' κ across the reviewers, and the confusion of
values behind each pair is counted.

Every function takes the standing verdicts of a ledger as a polars frame, one row per reviewer, run and
field with the columns ``run_key``, ``reviewer``, ``field``, ``value`` and ``analyzer``, in ledger order
(``arb_audit.verdicts.current_verdicts`` of ``load_verdicts`` gives exactly that)::

    from arb_audit.taxonomy import agreement

    table = agreement.kappa(current_verdicts(load_verdicts(store)))

The analyzer is one more rater, called ``analyzer``. Its value for a run's field is the ``analyzer``
column of the latest verdict on that run and field, by any reviewer: what the analyzer said when the
field was last looked at. A field the analyzer left empty is the label ``(none)``, so that giving no
value is a category like any other, and a reviewer who supplies one disagrees with it.

This is the one module that imports scikit-learn (the ``review`` extra); nothing else in the taxonomy
imports it, so the rest stays light.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from arb_audit.taxonomy.review import ANALYZER, FIELDS
from arb_audit.taxonomy.tables import Column, TableSpec

NO_VALUE = "(none)"
"""The label standing for a field the analyzer gave no value."""
FLEISS = "all reviewers (Fleiss)"
"""``rater_a`` of a field's Fleiss' κ row (``rater_b`` holds how many reviewers)."""
RATINGS_SCHEMA = pl.Schema(
    {"field": pl.String(), "run_key": pl.String(), "rater": pl.String(), "value": pl.String()}
)
"""What :func:`ratings` returns."""
KAPPA_SCHEMA = pl.Schema(
    {
        "field": pl.String(),
        "rater_a": pl.String(),
        "rater_b": pl.String(),
        "n": pl.Int64(),  # runs both raters rated (every reviewer, in a Fleiss row)
        "agree": pl.Float64(),  # share of those runs with identical values (Fleiss: mean pairwise share)
        "kappa": pl.Float64(),  # null where κ is undefined
    }
)
"""What :func:`kappa` returns (the comments say what each column holds)."""
CONFUSION_SCHEMA = pl.Schema(
    {
        "field": pl.String(),
        "rater_a": pl.String(),
        "rater_b": pl.String(),
        "value_a": pl.String(),
        "value_b": pl.String(),
        "count": pl.Int64(),
    }
)
"""What :func:`confusion` returns."""


def ratings(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Return every rating in long form (field, run_key, rater, value), the analyzer's included.

    Rows are sorted by field (in ``arb_audit.taxonomy.review.FIELDS`` order), run and rater. Raises ValueError
    when a reviewer is called ``analyzer``: their ratings could not be told from the analyzer's.
    """
    if verdicts["reviewer"].eq(ANALYZER).any():
        raise ValueError(
            f"a reviewer is called {ANALYZER!r}: their verdicts cannot be told from the analyzer's"
        )
    reviewers = verdicts.select("field", "run_key", rater="reviewer", value="value")
    analyzer = verdicts.group_by("field", "run_key", maintain_order=True).agg(
        rater=pl.lit(ANALYZER), value=pl.col("analyzer").last().fill_null(NO_VALUE)
    )
    return _by_field(
        pl.concat([reviewers, analyzer.select(RATINGS_SCHEMA.names())]), "run_key", "rater"
    ).cast(RATINGS_SCHEMA)


def _by_field(frame: pl.DataFrame, *then: str) -> pl.DataFrame:
    """Sort by field as the reviewer's desk orders them (any other field after, by name), then ``then``."""
    order = {field: i for i, field in enumerate(FIELDS)}
    return (
        frame.with_columns(
            _order=pl.col("field").replace_strict(order, default=len(order), return_dtype=pl.Int64)
        )
        .sort("_order", "field", *then, maintain_order=True)
        .drop("_order")
    )


@dataclass(frozen=True, slots=True)
class _Pair:
    """What two raters gave the runs both rated, in run order."""

    field: str
    rater_a: str
    rater_b: str
    values_a: list[str]
    values_b: list[str]

    @property
    def labels(self) -> list[str]:
        """Every value either rater used, sorted."""
        return sorted(set(self.values_a) | set(self.values_b))


def _by_rater(field_ratings: pl.DataFrame) -> dict[str, dict[str, str]]:
    """Rater → run → value, for one field's ratings."""
    values: dict[str, dict[str, str]] = {}
    for run_key, rater, value in field_ratings.select("run_key", "rater", "value").iter_rows():
        values.setdefault(rater, {})[run_key] = value
    return values


def _pairs(verdicts: pl.DataFrame) -> Iterator[_Pair]:
    """Every pair of raters of each field that rated a run in common.

    The analyzer with each reviewer first, then each two reviewers; names in order within each group.
    """
    rated = ratings(verdicts)
    for (field,), group in rated.group_by("field", maintain_order=True):
        values = _by_rater(group)
        reviewers = sorted(values.keys() - {ANALYZER})
        for a, b in [*((ANALYZER, r) for r in reviewers), *itertools.combinations(reviewers, 2)]:
            shared = sorted(values[a].keys() & values[b].keys())
            if shared:
                yield _Pair(str(field), a, b, [values[a][k] for k in shared], [values[b][k] for k in shared])


def _fleiss_counts(verdicts: pl.DataFrame) -> Iterator[tuple[str, int, list[list[int]]]]:
    """Per field with three or more reviewers: how many, and the runs × values counts of the runs all rated.

    A field whose reviewers have no run in common has no counts.
    """
    reviewed = ratings(verdicts).filter(pl.col("rater") != ANALYZER)
    for (field,), group in reviewed.group_by("field", maintain_order=True):
        values = _by_rater(group)
        if len(values) < 3:
            continue
        shared = sorted(set.intersection(*(set(v) for v in values.values())))
        if not shared:
            continue
        labels = sorted({v[k] for v in values.values() for k in shared})
        counts = [[sum(v[k] == label for v in values.values()) for label in labels] for k in shared]
        yield str(field), len(values), counts


def cohen_kappa(values_a: Sequence[str], values_b: Sequence[str]) -> float | None:
    """Return Cohen's κ of two raters' values of the same runs (scikit-learn's), or None where undefined.

    κ = (p_o − p_e) / (1 − p_e), with p_o the share of runs the two agree on and p_e the agreement their
    own label frequencies make by chance (Cohen, 1960). κ is undefined when p_e = 1, which happens
    exactly when both raters gave every run one and the same label (scikit-learn would answer NaN), and
    is not reported for fewer than two runs.
    """
    labels = sorted(set(values_a) | set(values_b))
    if len(values_a) < 2 or len(labels) < 2:
        return None
    return float(cohen_kappa_score(list(values_a), list(values_b), labels=labels))


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Return Fleiss' κ of a subjects × categories matrix of counts, or None where undefined.

    Each row counts how many raters put that subject in each category; every row sums to the same
    number of raters n ≥ 2. With N subjects (Fleiss, 1971, "Measuring nominal scale agreement among many
    raters", Psychological Bulletin 76(5), 378-382)::

        p_j  = Σ_i n_ij / (N n)                          share of all ratings in category j
        P_i  = (Σ_j n_ij² − n) / (n (n − 1))             share of rater pairs agreeing on subject i
        P̄    = Σ_i P_i / N,   P̄_e = Σ_j p_j²
        κ    = (P̄ − P̄_e) / (1 − P̄_e)

    κ is undefined when P̄_e = 1 (every rating in one category), and is not reported for fewer than two
    subjects. Raises ValueError when the rows do not all sum to the same n ≥ 2.
    """
    matrix = np.asarray(counts, dtype=np.float64)
    raters = matrix.sum(axis=1) if matrix.ndim == 2 else np.zeros(0)
    if raters.size == 0 or raters.min() != raters.max() or raters[0] < 2:
        raise ValueError("every subject needs the same number of raters, two or more")
    totals = matrix.sum(axis=0)
    if matrix.shape[0] < 2 or np.count_nonzero(totals) < 2:
        return None
    p_e = float(np.square(totals / totals.sum()).sum())
    return (_pair_agreement(matrix) - p_e) / (1 - p_e)


def _pair_agreement(matrix: npt.NDArray[np.float64]) -> float:
    """Return P̄ of Fleiss' κ: the share of rater pairs agreeing on a subject, averaged over subjects."""
    n = matrix.sum(axis=1)
    return float(((np.square(matrix).sum(axis=1) - n) / (n * (n - 1))).mean())


def kappa(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Return Cohen's κ per field and pair of raters over the runs both rated, and Fleiss' κ per field.

    The pairs are the analyzer with each reviewer, then each two reviewers (the analyzer first, then
    reviewers by name); a pair with no run in common has no row. ``agree`` is the share of their common
    runs with identical values; ``kappa`` is Cohen's κ (:func:`cohen_kappa`), null where undefined or
    where they share fewer than two runs.

    A field with three or more reviewers also gets a row ``all reviewers (Fleiss)`` whose ``rater_b``
    is how many, with Fleiss' κ (:func:`fleiss_kappa`) over the runs every one of them rated (no row
    when there is none) and ``agree`` its P̄, the mean share of agreeing reviewer pairs per run. The
    analyzer is left out of it: the row measures whether the reviewers agree among themselves, and so
    whether their verdicts can serve as the reference the analyzer is measured against.
    """
    rows: list[dict[str, object]] = [
        {
            "field": pair.field,
            "rater_a": pair.rater_a,
            "rater_b": pair.rater_b,
            "n": len(pair.values_a),
            "agree": sum(a == b for a, b in zip(pair.values_a, pair.values_b, strict=True))
            / len(pair.values_a),
            "kappa": cohen_kappa(pair.values_a, pair.values_b),
        }
        for pair in _pairs(verdicts)
    ]
    rows += [
        {
            "field": field,
            "rater_a": FLEISS,
            "rater_b": str(reviewers),
            "n": len(counts),
            "agree": _pair_agreement(np.asarray(counts, dtype=np.float64)),
            "kappa": fleiss_kappa(counts),
        }
        for field, reviewers, counts in _fleiss_counts(verdicts)
    ]
    # a stable sort by field keeps each field's pairs in the order they were made, Fleiss last
    return _by_field(pl.DataFrame(rows, schema=KAPPA_SCHEMA))


def confusion(verdicts: pl.DataFrame) -> pl.DataFrame:
    """Return, for each pair of raters :func:`kappa` compares, how often rater A's value met rater B's.

    Long form: one row per pair and pair of values that occurred (no zero cells), values in order.
    """
    rows: list[dict[str, object]] = []
    for pair in _pairs(verdicts):
        labels = pair.labels
        with warnings.catch_warnings():
            # scikit-learn warns of any 1 × 1 matrix, even with the labels given: here it only means
            # both raters gave every run the same value
            warnings.filterwarnings("ignore", "A single label was found", UserWarning)
            matrix = confusion_matrix(pair.values_a, pair.values_b, labels=labels)
        for i, j in zip(*np.nonzero(matrix), strict=True):
            rows.append(
                {
                    "field": pair.field,
                    "rater_a": pair.rater_a,
                    "rater_b": pair.rater_b,
                    "value_a": labels[i],
                    "value_b": labels[j],
                    "count": int(matrix[i, j]),
                }
            )
    return pl.DataFrame(rows, schema=CONFUSION_SCHEMA)


AGREEMENT_TABLES: dict[str, TableSpec] = {
    t.name: t
    for t in (
        TableSpec(
            "kappa",
            "Agreement of reviewers with the analyzer and with each other: Cohen's kappa per pair, "
            "Fleiss' kappa across reviewers",
            (
                Column("field", "Field", vocab="field", key=True),
                Column("rater_a", "Rater A", key=True),
                Column("rater_b", "Rater B", key=True),
                Column("n", "Runs", "int"),
                Column("agree", "Agree", "share"),
                Column("kappa", "Kappa", "ratio", best="max"),
            ),
            kappa,
        ),
        TableSpec(
            "confusion",
            "How often rater A's value met rater B's, per field and pair of raters",
            (
                Column("field", "Field", vocab="field", key=True),
                Column("rater_a", "Rater A", key=True),
                Column("rater_b", "Rater B", key=True),
                Column("value_a", "A's value"),
                Column("value_b", "B's value"),
                Column("count", "Runs", "int"),
            ),
            confusion,
        ),
    )
}
"""Every table ``arb-audit agreement --table`` makes; ``compute`` takes the standing verdicts."""
