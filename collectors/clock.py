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


def parse_naive(text: object) -> datetime | None:
    """Parse an ISO-like naive timestamp (``T`` or space separated); None if it is not one."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return moment.replace(tzinfo=None)


def from_epoch(value: object) -> datetime | None:
    """Turn epoch seconds (int or float, not bool) into an aware UTC datetime; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def infer_utc_offset(pairs: Iterable[tuple[datetime, datetime]]) -> int | None:
    """Return the local clock's UTC offset in seconds from ``(aware moment, naive local)`` pairs.

    Each pair votes for its offset rounded to a quarter hour, if it lies within
    :data:`PAIR_TOLERANCE_S` of one; the most common vote wins. None when no pair votes.
    """
    votes: Counter[int] = Counter()
    for moment, local in pairs:
        diff = (local.replace(tzinfo=UTC) - moment).total_seconds()
        rounded = round(diff / QUARTER_HOUR) * QUARTER_HOUR
        if abs(diff - rounded) <= PAIR_TOLERANCE_S and abs(rounded) <= 14 * 3600:
            votes[rounded] += 1
    return votes.most_common(1)[0][0] if votes else None


def localize(local: datetime | None, offset_s: int | None) -> datetime | None:
    """Attach the run's UTC offset to a naive local time (UTC when the offset is unknown)."""
    if local is None:
        return None
    return local.replace(tzinfo=timezone(timedelta(seconds=offset_s or 0)))
