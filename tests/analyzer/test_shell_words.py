"""Shell words: what shlex says, within a bound that keeps hostile command lines cheap."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

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


def test_a_launcher_with_a_megabyte_quoted_word_is_read_quickly(tmp_path: Path) -> None:
    (tmp_path / "train_dpo.py").write_text("from trl import DPOTrainer\nDPOTrainer(model=m).train()\n")
    hostile = 'python train_dpo.py --note "' + "a " * 500_000 + '"\n'
    start = time.monotonic()
    result = classify_path(tmp_path / "run.sh") if (tmp_path / "run.sh").write_text(hostile) else None
    assert result is not None and result.error is None
    assert result.primary == "DPO"
    assert time.monotonic() - start < 10  # shlex alone took seconds on such a word
