"""Local clock times from run folders, made absolute.

Harnesses write naive local times (``2026-03-10T10:15:00.123456``, ``2026-03-10 10:15:00``) next to
absolute epoch seconds. Pairs of the two that record the same moment give the run machine's offset
from UTC, so every time of the run can be placed on one absolute timeline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta, timezone

QUARTER_HOUR = 900
"""UTC offsets in use are multiples of 15 minutes."""
PAIR_TOLERANCE_S = 120
"""How far apart two records of 'the same moment' may be and still count as a pair."""


EARLIEST = datetime(1990, 1, 1)
LATEST = datetime(2200, 1, 1)
"""Times outside this window are not believed (and would overflow arithmetic at the extremes)."""


def parse_time(text: object) -> datetime | None:
    """Parse an ISO-like timestamp (``T`` or space separated) written by a harness.

    Returns a naive local time, or an aware one when the text carries an offset; None when the text is
    not a time or lies outside 1990-2200.
    """
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
        # a time at the calendar's edge (9999-12-31T23:59-14:00) has no UTC moment: it overflows
        naive = moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment
    except (ValueError, OverflowError):
        return None
    return moment if EARLIEST <= naive < LATEST else None


def from_epoch(value: object) -> datetime | None:
    """Turn epoch seconds (int or float, not bool) into an aware UTC datetime; None unless 1990-2200."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        moment = datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment if EARLIEST <= moment.replace(tzinfo=None) < LATEST else None


def infer_utc_offset(pairs: Iterable[tuple[datetime, datetime]]) -> int | None:
    """Return the local clock's UTC offset in seconds from ``(aware moment, naive local)`` pairs.

    Each pair votes for its offset rounded to a quarter hour, if it lies within
    :data:`PAIR_TOLERANCE_S` of one; the most common vote wins. None when no pair votes.
    """
    votes: Counter[int] = Counter()
    for moment, local in pairs:
        if local.tzinfo is not None:
            continue
        diff = (local.replace(tzinfo=UTC) - moment).total_seconds()
        rounded = round(diff / QUARTER_HOUR) * QUARTER_HOUR
        if abs(diff - rounded) <= PAIR_TOLERANCE_S and abs(rounded) <= 14 * 3600:
            votes[rounded] += 1
    return votes.most_common(1)[0][0] if votes else None


def localize(local: datetime | None, offset_s: int | None) -> datetime | None:
    """Attach the run's UTC offset to a naive local time (UTC when unknown); aware times pass as they are."""
    if local is None or local.tzinfo is not None:
        return local
    return local.replace(tzinfo=timezone(timedelta(seconds=offset_s or 0)))
