"""The trigger pre-scan: a detector runs on a file exactly when one of its triggers is in the text."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from arb_audit.analyzer.classify import detectors
from arb_audit.analyzer.detector import RouteDetector
from arb_audit.analyzer.triggers import contains, triggered

# word and non-word characters, a newline (what the word index separates words with) and a letter
# beyond ASCII, so that triggers fall inside, across and at the ends of words
_ALPHABET = "ab_1'\".(\n é"


@given(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), st.text(alphabet=_ALPHABET, max_size=40))
@example(".b", "a.ba")  # a trigger ending in a word's start
@example("a.", "ba.a")  # ... beginning at a word's end
@example("'a'", "'ab'")  # a whole word between quotes that is only part of one in the text
@example("a\nb", "a\nb")  # a trigger holding the word index's separator
def test_the_word_index_answers_as_a_substring_test(trigger: str, text: str) -> None:
    assert contains(text, trigger) == (trigger in text)


def test_every_detector_is_triggered_by_each_of_its_own_triggers() -> None:
    for detector in detectors():
        for trigger in detector.TRIGGERS:
            assert detector in triggered(f"x = 1\n{trigger}\n", [detector]), (detector.__name__, trigger)
            assert detector in triggered(f"x{trigger}x", [detector]), (detector.__name__, trigger)
        assert detector not in triggered("", [detector])


def test_on_every_detectors_examples_the_same_detectors_run_as_substring_tests_say() -> None:
    every = detectors()
    codes = {e.code for d in every for e in d.VALID} | {e.code for d in every for e in d.INVALID}
    for example_code in codes:
        expected = [d for d in every if any(t in example_code for t in d.TRIGGERS)]
        assert triggered(example_code, every) == expected


def _detector(triggers: list[str]) -> type[RouteDetector]:
    return type("Made", (RouteDetector,), {"TRIGGERS": tuple(triggers)})


_TRIGGER = st.text(alphabet=_ALPHABET, min_size=1, max_size=5)


@given(
    st.lists(st.lists(_TRIGGER, min_size=1, max_size=5), min_size=1, max_size=4),
    st.text(alphabet=_ALPHABET, max_size=40),
)
@example([["ab", "a"], ["a."]], "xab")  # a trigger holding another, needles shared between detectors
def test_detectors_sharing_or_nesting_triggers_run_as_substring_tests_say(
    triggers: list[list[str]], text: str
) -> None:
    made = [_detector(t) for t in triggers]
    assert triggered(text, made) == [d for d in made if any(t in text for t in d.TRIGGERS)]
