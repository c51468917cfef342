r"""Which detectors a text can trigger: the cheap pre-scan before libcst parses anything.

A detector runs on a file exactly when one of its ``TRIGGERS`` is a substring of the text. Testing
each trigger with ``in`` scans the whole text once per absent trigger, hundreds of scans per file
(a sixth of a parse on the corpora's files, measured; this way, under a tenth). Here the text's
words (runs of ``\w`` characters) are collected once, and each trigger is first looked up among them
by one of its word runs: the run must be a word of the text, or a word's start, end or part,
depending on what surrounds it in the trigger. That lookup decides alone for a trigger of word
characters only; for any other it only rules texts out, and the trigger is then looked for in the
text itself. The answer is always the one substring tests give.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from arb_audit.analyzer.detector import RouteDetector

_WORD = re.compile(r"\w+")

Lookup = tuple[bool, str, str | None]
"""``(in_words, needle, trigger)``: a word to find in the set of the text's words, or a string to find
in their lines (see :class:`TextWords`), and the trigger to look for in the text once the needle is
found (None when finding it decides)."""


def lookup(trigger: str) -> Lookup:
    """Return how ``trigger`` is looked up: by one of its word runs, where it must lie in a word."""
    runs = list(_WORD.finditer(trigger))
    if not runs:
        return (False, "", trigger)  # (no word in it: only the text can tell)
    if len(runs) == 1 and runs[0].group() == trigger:
        return (False, trigger, None)  # somewhere inside a word, and that decides
    whole = [r.group() for r in runs if r.start() > 0 and r.end() < len(trigger)]
    if whole:  # a run with other characters on both sides is a whole word: a set lookup
        return (True, max(whole, key=len), trigger)
    # The last run: what a trigger opens with is the common part (``from rllm``, ``import swift``).
    # At the trigger's end a run begins a word of the text; at its start it ends one.
    run = runs[-1]
    return (False, "\n" + run.group() if run.start() > 0 else run.group() + "\n", trigger)


class TextWords:
    """The words of one text, for looking triggers up."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = set(_WORD.findall(text))
        # one word per line, a newline before the first and after the last: ``"\\nrun"`` is found
        # only at a word's start, ``"run\\n"`` only at its end, and no match spans two words
        self.lines = "\n" + "\n".join(self.words) + "\n"

    def has(self, lookups: Sequence[Lookup]) -> bool:
        """Say whether one of the looked-up triggers is a substring of the text."""
        words, lines, text = self.words, self.lines, self.text
        return any(
            needle in (words if in_words else lines) and (trigger is None or trigger in text)
            for in_words, needle, trigger in lookups
        )


_LOOKUPS: dict[type[RouteDetector], tuple[Lookup, ...]] = {}


def _lookups(detector: type[RouteDetector]) -> tuple[Lookup, ...]:
    found = _LOOKUPS.get(detector)
    if found is None:
        found = _LOOKUPS[detector] = tuple(lookup(t) for t in detector.TRIGGERS)
    return found


def contains(text: str, trigger: str) -> bool:
    """Say whether ``trigger`` is in ``text``, as the pre-scan decides it (``trigger in text``)."""
    return TextWords(text).has((lookup(trigger),))


def triggered(text: str, candidates: Sequence[type[RouteDetector]]) -> list[type[RouteDetector]]:
    """Return the detectors that could report something in ``text``: one of their triggers is in it."""
    words = TextWords(text)
    return [d for d in candidates if words.has(_lookups(d))]
