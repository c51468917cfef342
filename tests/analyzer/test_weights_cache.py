"""Weight comparisons read tensors piece by piece and are cached by the folders' listings."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

import pytest

pytest.importorskip("torch")

from arb_audit.analyzer import weights
from arb_audit.analyzer.cache import save_result


def _model(folder: Path, values: list[float]) -> Path:
    """Write one F32 tensor ``w`` in the safetensors layout by hand."""
    data = struct.pack(f"<{len(values)}f", *values)
    header = json.dumps({"w": {"dtype": "F32", "shape": [len(values)], "data_offsets": [0, len(data)]}})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header.encode() + data)
    return folder


def test_a_change_is_measured_across_pieces_from_the_first_that_differs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(weights, "READ_BYTES", 16)  # four floats a piece: 100 floats are 25 pieces
    base = [float(i % 7) - 3.0 for i in range(100)]
    tuned = base[:40] + [v + 0.5 for v in base[40:]]  # the first ten pieces are the same bytes
    diff = weights.compare(_model(tmp_path / "tuned", tuned), _model(tmp_path / "base", base))
    expected = math.sqrt(sum((a - b) ** 2 for a, b in zip(tuned, base, strict=True))) / math.sqrt(
        sum(b * b for b in base)
    )
    assert diff.compared == 1 and diff.changed[0][0] == "w"
    assert diff.changed[0][1] == pytest.approx(expected, rel=1e-12)
    same = weights.compare(_model(tmp_path / "copy", base), tmp_path / "base")
    assert same.weights_identical


def test_an_unchanged_pair_is_answered_from_the_cache_and_a_changed_one_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tuned, base = _model(tmp_path / "tuned", [1.0, 2.0]), _model(tmp_path / "base", [1.0, 3.0])
    first = weights.compare(tuned, base)

    def unread(*args: object) -> weights.WeightDiff:
        raise AssertionError("the tensors were read again")

    with monkeypatch.context() as patched:
        patched.setattr(weights, "_compare", unread)
        assert weights.compare(tuned, base).summary() == first.summary()
    _model(tuned, [1.0, 3.0])  # rewritten: its change time moves, so the key does
    assert weights.compare(tuned, base).weights_identical
    (tuned / "config.json").write_text('{"model_type": "other"}')  # a new file in the folder
    with monkeypatch.context() as patched:
        patched.setattr(weights, "_compare", unread)
        with pytest.raises(AssertionError, match="read again"):
            weights.compare(tuned, base)


def test_a_broken_cache_entry_is_computed_again(tmp_path: Path) -> None:
    tuned, base = _model(tmp_path / "tuned", [1.0, 2.0]), _model(tmp_path / "base", [1.0, 3.0])
    key = weights._cache_key(tuned, base, False)
    assert key is not None
    save_result("weights", key, {"compared": "many"})
    assert weights.compare(tuned, base).compared == 1
