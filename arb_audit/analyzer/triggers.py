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
        self.seen: dict[str, bool] = {}
        """Whether each needle looked for in :attr:`lines` so far is there."""

    def has(self, lookups: Sequence[Lookup]) -> bool:
        """Say whether one of the looked-up triggers is a substring of the text."""
        words, lines, text, seen = self.words, self.lines, self.text, self.seen
        for in_words, needle, trigger in lookups:
            if in_words:
                found: bool | None = needle in words
            else:
                # detectors share needles (``eval``, ``generate``): each is looked for once per text
                found = seen.get(needle)
                if found is None:
                    # (a word that is the run itself starts, ends and holds it: no scan needed)
                    found = seen[needle] = needle.strip("\n") in words or needle in lines
            if found and (trigger is None or trigger in text):
                return True
        return False


_LOOKUPS: dict[type[RouteDetector], tuple[Lookup, ...]] = {}


def _lookups(detector: type[RouteDetector]) -> tuple[Lookup, ...]:
    """Return a detector's lookups, set lookups first (they cost no scan of the text).

    A trigger holding another of the same detector is left out: the text has the other whenever it
    has this one, so the answer is the same without it.
    """
    found = _LOOKUPS.get(detector)
    if found is None:
        triggers = detector.TRIGGERS
        kept = [t for t in triggers if not any(other != t and other in t for other in triggers)]
        found = _LOOKUPS[detector] = tuple(sorted(map(lookup, dict.fromkeys(kept)), key=lambda k: not k[0]))
    return found


def contains(text: str, trigger: str) -> bool:
    """Say whether ``trigger`` is in ``text``, as the pre-scan decides it (``trigger in text``)."""
    return TextWords(text).has((lookup(trigger),))


def triggered(text: str, candidates: Sequence[type[RouteDetector]]) -> list[type[RouteDetector]]:
    """Return the detectors that could report something in ``text``: one of their triggers is in it."""
    words = TextWords(text)
    return [d for d in candidates if words.has(_lookups(d))]
