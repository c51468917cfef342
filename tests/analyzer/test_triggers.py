"""The trigger pre-scan: a detector runs on a file exactly when one of its triggers is in the text."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from arb_audit.analyzer.classify import any_of, detectors, triggered

# a small alphabet with regex metacharacters, so that substrings share prefixes and need escaping
_TEXT = st.text(alphabet="ab'\".(*+?\\[|]", max_size=40)


@given(st.lists(st.text(alphabet="ab'\".(*+?\\[|]", min_size=1, max_size=6), min_size=1, max_size=12), _TEXT)
def test_the_merged_expression_finds_what_substring_tests_find(substrings: list[str], text: str) -> None:
    assert (any_of(substrings).search(text) is not None) == any(s in text for s in substrings)


def test_every_detector_is_triggered_by_each_of_its_own_triggers() -> None:
    for detector in detectors():
        for trigger in detector.TRIGGERS:
            assert detector in triggered(f"x = 1\n{trigger}\n", [detector]), (detector.__name__, trigger)
        assert detector not in triggered("", [detector])
