"""Local clocks placed on UTC from pairs of records of the same moment."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from arb_audit.collectors.clock import from_epoch, infer_utc_offset, localize, parse_time

MOMENT = datetime(2026, 3, 10, 2, 15, tzinfo=UTC)


@given(st.integers(-48, 56).map(lambda q: q * 900), st.integers(-60, 60))
def test_offset_is_recovered_from_a_pair(offset: int, jitter: int) -> None:
    local = (MOMENT + timedelta(seconds=offset + jitter)).replace(tzinfo=None)
    assert infer_utc_offset([(MOMENT, local)]) == offset


def test_majority_wins_and_unrelated_pairs_do_not_vote() -> None:
    plus8 = (MOMENT + timedelta(hours=8)).replace(tzinfo=None)
    odd = (MOMENT + timedelta(minutes=37)).replace(tzinfo=None)
    assert infer_utc_offset([(MOMENT, plus8), (MOMENT, plus8), (MOMENT, odd)]) == 28800
    assert infer_utc_offset([(MOMENT, odd)]) is None
    assert infer_utc_offset([]) is None


def test_parsers_refuse_what_is_not_a_time() -> None:
    assert parse_time("2026-03-10T10:15:00.123456") == datetime(2026, 3, 10, 10, 15, 0, 123456)
    assert parse_time("2026-03-10 10:15") == datetime(2026, 3, 10, 10, 15)
    assert parse_time("yesterday") is None and parse_time(17) is None
    assert from_epoch(True) is None and from_epoch("1") is None and from_epoch(10**20) is None
    assert from_epoch(0) is None  # 1970: before any run this tool can meet
    assert from_epoch(1773108902) == datetime(2026, 3, 10, 2, 15, 2, tzinfo=UTC)
    assert parse_time("0001-01-01T00:00:00") is None and parse_time("9999-12-31T23:59:59") is None
    assert parse_time("2026-03-10T02:27:04+00:00") == datetime(2026, 3, 10, 2, 27, 4, tzinfo=UTC)
    assert localize(datetime(2026, 1, 1), None) == datetime(2026, 1, 1, tzinfo=UTC)
