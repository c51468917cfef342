"""The reference world's model folder: written, read back, and refused with the file named when broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from arb_audit.runner.reference.tinylm import (
    EOS,
    VOCAB,
    ModelFolderError,
    TinyConfig,
    TinyLM,
    encode,
    load_model,
    save_model,
)


def _model(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    folder = tmp_path / "m"
    save_model(TinyLM(TinyConfig(d_model=16, n_layers=1, n_heads=2)), folder, "parent/model")
    return folder


def test_folder_round_trip(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["TinyCausalLM"] and config["_name_or_path"] == "parent/model"
    assert {p.name for p in folder.iterdir()} == {
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
    }
    loaded = load_model(folder)
    torch.manual_seed(0)
    fresh = TinyLM(TinyConfig(d_model=16, n_layers=1, n_heads=2))
    for name, tensor in fresh.state_dict().items():
        assert torch.equal(tensor, loaded.model.state_dict()[name])
    assert loaded.chat_template == "{prompt}" and loaded.max_new_tokens == 8


def test_generation_stops_at_the_end_of_an_answer(tmp_path: Path) -> None:
    model = load_model(_model(tmp_path)).model
    answers = model.generate(["rev abcd:", "kl dr h0>", "x"], max_new_tokens=5)
    assert len(answers) == 3 and all(len(a) <= 5 and EOS not in a for a in answers)
    # unknown characters read as "?", never fail
    assert encode("é") == [VOCAB.index("?")]


@pytest.mark.parametrize(
    ("file", "content", "says"),
    [
        ("config.json", '{"architectures": ["LlamaForCausalLM"]}', "architectures"),
        ("config.json", "{not json", "not readable JSON"),
        ("config.json", '{"architectures": ["TinyCausalLM"], "d_model": 100000000}', "out of range"),
        ("config.json", '{"architectures": ["TinyCausalLM"], "d_model": 30, "n_heads": 4}', "multiple"),
        (
            "config.json",
            '{"architectures": ["TinyCausalLM"], "d_model": 1024, "n_layers": 1024}',
            "parameters",
        ),
        ("config.json", "[" * 100000 + "]" * 100000, "not readable JSON"),
        (
            "tokenizer_config.json",
            '{"chat_template": "' + "a" * 5000 + '{prompt}"}',
            "longer than the context",
        ),
        ("generation_config.json", '{"max_new_tokens": true}', "max_new_tokens"),
        ("model.safetensors", "\x00" * 4, "model.safetensors"),
        ("tokenizer_config.json", '{"chat_template": "no slot"}', "chat_template"),
        ("generation_config.json", '{"max_new_tokens": 100000}', "max_new_tokens"),
    ],
)
def test_a_broken_folder_is_refused_naming_the_file(
    tmp_path: Path, file: str, content: str, says: str
) -> None:
    folder = _model(tmp_path)
    (folder / file).write_text(content)
    with pytest.raises(ModelFolderError, match=says) as caught:
        load_model(folder)
    assert file in str(caught.value)


def test_weights_of_another_shape_are_refused(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    save_model(TinyLM(TinyConfig(d_model=8, n_layers=1, n_heads=2)), tmp_path / "other", "x")
    (folder / "model.safetensors").write_bytes((tmp_path / "other" / "model.safetensors").read_bytes())
    with pytest.raises(ModelFolderError, match=r"does not fit config\.json"):
        load_model(folder)


def test_a_header_of_empty_tensors_is_refused_not_a_crash(tmp_path: Path) -> None:
    folder = _model(tmp_path)
    header = json.dumps({"embed.weight": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]}}).encode()
    header += b" " * (-len(header) % 8)
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(ModelFolderError, match="does not fit") as caught:
        load_model(folder)
    assert len(str(caught.value)) < 500


def test_a_missing_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelFolderError, match="missing"):
        load_model(tmp_path / "nowhere")
