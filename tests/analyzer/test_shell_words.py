"""Shell words: what shlex says, within a bound that keeps hostile command lines cheap."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.analyzer.batch import classify_path
from arb_audit.analyzer.shell_words import MAX_SHLEX_CHARS, shell_words


@given(st.lists(st.text(min_size=1, max_size=20), max_size=8))
def test_words_joined_for_a_shell_come_back_as_they_were(words: list[str]) -> None:
    assert shell_words(shlex.join(words)) == words


def test_what_shlex_cannot_split_or_should_not_read_is_none() -> None:
    assert shell_words("python train.py --name 'unclosed") is None
    assert shell_words("python a.py  # run it", comments=True) == ["python", "a.py"]
    assert shell_words("x" * (MAX_SHLEX_CHARS + 1)) is None


def _launcher_seconds(folder: Path, repeats: int) -> float:
    """Classify a launcher whose quoted word repeats ``"a "`` so often; return the seconds it took."""
    folder.mkdir()
    (folder / "train_dpo.py").write_text("from trl import DPOTrainer\nDPOTrainer(model=m).train()\n")
    (folder / "run.sh").write_text('python train_dpo.py --note "' + "a " * repeats + '"\n')
    start = time.monotonic()
    result = classify_path(folder / "run.sh")
    seconds = time.monotonic() - start
    assert result.error is None and result.primary == "DPO"
    return seconds


@pytest.mark.slow  # (tens of seconds: a deadline waited out, a big file read)
def test_a_launcher_with_a_megabyte_quoted_word_is_read_in_time_linear_in_its_size(tmp_path: Path) -> None:
    """A word four times longer costs about four times as long (shlex's quadratic split: over eight).

    A ratio against a quarter-size word in the same run, not a wall-clock bound: a loaded machine
    slows both alike.
    """
    quarter = _launcher_seconds(tmp_path / "quarter", 125_000)
    whole = _launcher_seconds(tmp_path / "whole", 500_000)
    assert whole < 6 * max(quarter, 0.05)
