"""The cheap pass over code no command ran: a file's words allow every route its analysis finds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.analyzer.batch import classify_many
from arb_audit.analyzer.classify import classify_source, detectors
from arb_audit.analyzer.detector import Invalid, Valid
from arb_audit.analyzer.route_words import ALL_ROUTES, possible_routes
from arb_audit.analyzer.source import source_from_bytes
from arb_audit.taxonomy.routes import label_of
from tests.analyzer.test_routes import DPO, GRPO, ONLINE, SFT, _bash, _run, _write

ROOT = Path(__file__).resolve().parents[2]


def _found(text: str) -> set[str]:
    """The routes the full analysis finds in ``text``."""
    classified = classify_source(source_from_bytes(text.encode(), "x.py"))
    return {label for s in classified.stages if (label := label_of(s.kind, s.on_policy, s.interactive))}


@pytest.mark.parametrize(
    ("text", "routes"),
    [
        (SFT, {"SFT"}),
        (GRPO, {"GRPO"}),
        (ONLINE, {"GRPO", "ONLINE_RL"}),
        (DPO, {"DPO"}),
        ("import json\nprint(json.dumps({'a': 1}))\n", set()),
        ("from mergekit.merge import run_merge\nrun_merge(config, 'out')\n", {"MERGE"}),
        ("loss = criterion(model(x), y)\nloss.backward()\n", ALL_ROUTES),
        ("from trl import SFTTrainer\nclass MyTrainer(SFTTrainer):\n    pass\n", ALL_ROUTES),
        ("import subprocess\nsubprocess.run(['trl', 'dpo'])\n", ALL_ROUTES),
        ("from trl import RewardTrainer\nRewardTrainer(model=m)\n", set()),
        ("model = PeftModel.from_pretrained(base, path).merge_and_unload()\n", {"MERGE"}),
        (SFT + "trainer.model.merge_and_unload()\n", {"SFT"}),  # the fold ends the SFT stage
        ("from trl import SFTTrainer\nmodel = model.merge_and_unload()\n", {"SFT", "MERGE"}),  # no call
    ],
)
def test_what_a_files_words_allow(text: str, routes: set[str]) -> None:
    assert possible_routes(text) == routes


def _examples() -> list[str]:
    """Every detector's embedded examples, and the training scripts this repository holds."""
    texts = [e.code for d in detectors() for e in (*d.VALID, *d.INVALID) if isinstance(e, Valid | Invalid)]
    for folder in ("runner/reference/recipes", "fixtures", "tests/analyzer"):
        texts += [p.read_text() for p in sorted((ROOT / folder).rglob("*.py")) if p.stat().st_size < 200_000]
    return texts


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_the_words_allow_every_route_the_analysis_finds() -> None:
    for text in _examples():
        assert _found(text) <= possible_routes(text), text[:300]


@given(
    st.lists(
        st.sampled_from(
            [
                "from trl import GRPOTrainer, DPOTrainer, SFTTrainer\n",
                "t = GRPOTrainer(model=m, reward_funcs=r)\n",
                "t = GRPOTrainer(model=m, environment_factory=Env)\n",
                "d = DPOTrainer(model=m)\n",
                "s = SFTTrainer(model=m)\n",
                "for turn in range(4):\n    a = model.generate(o)\n    o, r, done, _ = env.step(a)\n",
                "sd = {k: (a[k] + b[k]) / 2 for k in a}\n",
                "model.load_state_dict(sd)\n",
                "model = model.merge_and_unload()\n",
                "from transformers import Trainer\n",
                "t = Trainer(model=m)\n",
                "from peft import PeftModel\n",
                "x = y.view(-1)\n",
                "print('done')\n",
            ]
        ),
        max_size=6,
    )
)
def test_any_mix_of_those_lines_stays_within_its_words(lines: list[str]) -> None:
    text = "".join(lines)
    assert _found(text) <= possible_routes(text)


def test_a_route_only_an_earlier_unrun_version_held_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    classified: list[Any] = []

    def counted(paths: Any, **kwargs: Any) -> Any:
        classified.extend(paths)
        return classify_many(paths, **kwargs)

    monkeypatch.setattr("arb_audit.analyzer.code_labels.classify_many", counted)
    events = [
        *_write("w1", "train.py", DPO),  # DPO, never run, then replaced
        *_write("w2", "train.py", SFT),
        *_bash("b1", "python train.py"),
    ]
    # versions of an SFT script that no command ran and that show nothing new are not parsed
    events += [e for i in range(6) for e in _write(f"s{i}", "sft_copy.py", SFT.replace("r=8", f"r={i + 9}"))]
    route = _run(tmp_path, events)
    assert route["attempted"] == ["SFT"] and route["written"] == ["DPO"]
    assert len(classified) == 3  # SFT run, DPO read, the last sft_copy; not its 5 earlier versions (of 8)
