"""What a reviewer rules on: the audit's fields and the values the taxonomy allows for each.

Also how to read the analyzer's own value of each field from an audit (an ``AuditReport``).

A field is ``route`` (the best route's label), ``chain`` (its chain, such as ``SFT→GRPO(online)``),
``failure``, ``quadrant``, or ``flag:NAME`` for each integrity flag (``yes`` when the flag holds).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from arb_audit.taxonomy.failures import FAILURE_MODES, INTEGRITY_FLAGS
from arb_audit.taxonomy.routes import ROUTE_LABELS, STAGE_KINDS
from arb_audit.taxonomy.tables import QUADRANT_CELLS

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport

FLAG_PREFIX = "flag:"
"""A flag's field is this prefix and the flag's name."""
FLAG_VALUES = ("yes", "no")
"""What a flag's field may hold."""
FIELDS: tuple[str, ...] = (
    "route",
    "chain",
    "failure",
    "quadrant",
    *(FLAG_PREFIX + f.name for f in INTEGRITY_FLAGS),
)
"""Every field a verdict may rule on, in the order the reviewer's desk shows them."""
ANALYZER = "analyzer"
"""The analyzer's name as a rater in the agreement tables; no reviewer may take it."""
CHAIN_ARROW = "→"
"""Between the stages of a chain."""
_STAGE = re.compile(r"(?P<kind>[A-Z_]+)(?:\((?P<variant>[A-Za-z0-9_.,+\- ]{1,40})\))?")
# A chain without a training stage is written as its route label (NO_TRAINING, UNKNOWN).
_STAGE_NAMES = frozenset(k.name.upper() for k in STAGE_KINDS) | {d.name for d in ROUTE_LABELS}


def choices(field: str) -> tuple[str, ...] | None:
    """Return the values the taxonomy allows for ``field``; None for ``chain``, which is composed.

    Raises KeyError for a field that is not in :data:`FIELDS`.
    """
    if field == "route":
        return tuple(d.name for d in ROUTE_LABELS)
    if field == "failure":
        return tuple(d.name for d in FAILURE_MODES)
    if field == "quadrant":
        return QUADRANT_CELLS
    if field.startswith(FLAG_PREFIX) and field in FIELDS:
        return FLAG_VALUES
    if field == "chain":
        return None
    raise KeyError(f"{field!r} is not a review field ({', '.join(FIELDS)})")


def check_value(field: str, value: str) -> str | None:
    """Return why ``value`` cannot be ``field``'s verdict, or None when the taxonomy allows it.

    A chain is stages joined by ``→`` (or ``->``), each a stage kind in capitals with an optional
    variant in parentheses: ``SFT→GRPO(online)``.
    """
    allowed = choices(field)
    if allowed is not None:
        return None if value in allowed else f"{value!r} is not a {field} ({', '.join(allowed)})"
    stages = normalise_chain(value).split(CHAIN_ARROW)
    for stage in stages:
        match = _STAGE.fullmatch(stage)
        if match is None or match["kind"] not in _STAGE_NAMES:
            return (
                f"{stage!r} is not a stage (one of {', '.join(sorted(_STAGE_NAMES))}, "
                "with an optional variant in parentheses)"
            )
    return None


def normalise_chain(value: str) -> str:
    """Write a chain the way the analyzer does: ``→`` between stages, no spaces around it."""
    return CHAIN_ARROW.join(part.strip() for part in value.replace("->", CHAIN_ARROW).split(CHAIN_ARROW))


def analyzer_values(report: AuditReport | None) -> dict[str, str | None]:
    """Return the analyzer's value of every field of :data:`FIELDS` in the audit ``report``.

    A field the audit leaves empty (no best submission, so no route) is None; a flag the audit did
    not raise is ``no``. Without an audit (None) the analyzer gave no value: every field is None.
    """
    if report is None:
        return dict.fromkeys(FIELDS)
    raised = {f.flag for f in report.flags}
    values: dict[str, str | None] = {
        "route": report.route.best_label,
        "chain": report.route.chain_text,
        "failure": report.failure.mode,
        "quadrant": report.quadrant.cell,
    }
    for field in FIELDS[4:]:
        values[field] = "yes" if field.removeprefix(FLAG_PREFIX) in raised else "no"
    return values
