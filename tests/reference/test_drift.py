"""Recording each scenario again gives the bundled recording (its deterministic parts), and the models
really learn: SFT raises the held-out score above the base, online GRPO raises it further."""

from __future__ import annotations

from pathlib import Path

import pytest

from arb_audit.analyzer.audit import noise_threshold
from arb_audit.runner.reference.scenarios import SCENARIOS, find
from arb_audit.runner.reference.tasks import DESCRIPTIONS
from arb_audit.runner.reference.world import record_scenario
from tests.reference.recordings import BUNDLED, deterministic_view, stored

# Each re-recording trains real (tiny) models for 4-16 s: CI's full lane runs them, `make check` does not.
pytestmark = pytest.mark.slow


def test_the_base_model_is_rebuilt_identically(world: Path) -> None:
    for name in ("config.json", "tokenizer_config.json", "generation_config.json", "tokenizer.json"):
        assert (world / "base" / name).read_bytes() == (BUNDLED / "base" / name).read_bytes()


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_recording_again_matches_the_bundled_recording(name: str, world: Path) -> None:
    record_scenario(find(name), world)
    assert deterministic_view(world / name) == deterministic_view(BUNDLED / name)
    scores = [s.score for s in stored(world / name / "recording").submissions]
    noise = noise_threshold(DESCRIPTIONS[find(name).task], None)
    assert noise is not None
    base = stored(world / name / "recording").run.base_score
    assert base is not None and base < 10
    if name == "sft_only":
        assert scores[0] is not None and scores[0] > base + noise  # SFT learns the task
    if name == "sft_grpo":
        sft, grpo = scores
        assert sft is not None and grpo is not None
        assert sft > base + noise and grpo > sft + noise  # GRPO in the environment adds to SFT
