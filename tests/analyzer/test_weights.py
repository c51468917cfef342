"""Weight forensics: tensors compared one by one, LoRA updates measured, pickles refused."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from arb_audit.analyzer.routes import StageStep

torch = pytest.importorskip("torch")

from arb_audit.analyzer.lineage_weights import weigh  # noqa: E402
from arb_audit.analyzer.weights import compare, safetensors_index  # noqa: E402


def _safetensors(path: Path, tensors: dict[str, list[list[float]]], dtype: str = "F32") -> None:
    """Write float tensors in the safetensors layout by hand (no library between us and the format)."""
    header: dict[str, object] = {}
    body = b""
    for name, rows in tensors.items():
        flat = [v for row in rows for v in row]
        data = struct.pack(f"<{len(flat)}f", *flat)
        header[name] = {
            "dtype": dtype,
            "shape": [len(rows), len(rows[0])],
            "data_offsets": [len(body), len(body) + len(data)],
        }
        body += data
    raw = json.dumps(header).encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body)


def _model(
    folder: Path, w: list[list[float]], extra: dict[str, list[list[float]]] | None = None, **config: object
) -> Path:
    _safetensors(folder / "model.safetensors", {"layer.weight": w, **(extra or {})})
    (folder / "config.json").write_text(
        json.dumps({"architectures": ["TinyLM"], "model_type": "tiny", **config})
    )
    return folder


def test_an_identical_copy_and_a_changed_tensor(tmp_path: Path) -> None:
    base = _model(tmp_path / "base", [[3.0, 4.0]], {"head.weight": [[1.0, 0.0]]})
    copy = _model(tmp_path / "copy", [[3.0, 4.0]], {"head.weight": [[1.0, 0.0]]})
    tuned = _model(tmp_path / "tuned", [[3.0, 4.5]], {"head.weight": [[1.0, 0.0]]})
    same = compare(copy, base)
    assert same.weights_identical and same.summary().changed == 0
    diff = compare(tuned, base)
    assert not diff.weights_identical and (diff.compared, diff.identical) == (2, 1)
    # ‖(3, 4.5) − (3, 4)‖ / ‖(3, 4)‖ = 0.5 / 5
    [(name, change)] = diff.changed
    assert name == "layer.weight" and change == pytest.approx(0.1)


def test_missing_added_and_retyped_tensors_and_config_changes(tmp_path: Path) -> None:
    base = _model(tmp_path / "base", [[1.0, 2.0]], {"old.weight": [[1.0]]})
    other = _model(
        tmp_path / "other", [[1.0], [2.0]], {"new.weight": [[1.0]]}, architectures=["Qwen2ForCausalLM"]
    )
    (other / "chat_template.jinja").write_text("{{ messages }}")
    diff = compare(other, base)
    assert (diff.missing, diff.added, diff.retyped) == (["old.weight"], ["new.weight"], ["layer.weight"])
    assert diff.config_changes == [
        "architectures: ['TinyLM'] → ['Qwen2ForCausalLM']",
        "chat template added",
    ]


def test_a_lora_adapter_is_measured_by_the_update_it_makes(tmp_path: Path) -> None:
    base = _model(tmp_path / "base", [[3.0, 0.0], [0.0, 4.0]])
    adapter = tmp_path / "adapter"
    _safetensors(
        adapter / "adapter_model.safetensors",
        {
            "base_model.model.layer.lora_A.weight": [[1.0, 0.0]],  # r=1 × in=2
            "base_model.model.layer.lora_B.weight": [[0.5], [0.0]],  # out=2 × r=1
        },
    )
    (adapter / "adapter_config.json").write_text(
        json.dumps({"r": 1, "lora_alpha": 2, "base_model_name_or_path": "base"})
    )
    diff = compare(adapter, base)
    # B @ A · alpha/r = [[0.5, 0], [0, 0]] · 2 → ‖·‖ = 1; ‖W‖ = 5
    [(name, change)] = diff.changed
    assert diff.lora_modules == 1 and name == "layer.weight" and change == pytest.approx(0.2)


def test_pickled_weights_load_only_as_plain_tensors(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    torch.save({"layer.weight": torch.tensor([[1.0, 2.0]])}, base / "pytorch_model.bin")
    tuned = tmp_path / "tuned"
    tuned.mkdir()
    torch.save({"layer.weight": torch.tensor([[1.0, 2.0]])}, tuned / "pytorch_model.bin")
    assert compare(tuned, base).weights_identical
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    torch.save({"layer.weight": torch.tensor([[1.0]]), "extra": Path("/etc")}, hostile / "pytorch_model.bin")
    diff = compare(hostile, base)
    assert diff.problems and "refused — it needs unpickling beyond plain tensors" in diff.problems[0]


def test_a_header_that_lies_is_a_problem_not_a_read(tmp_path: Path) -> None:
    bad = tmp_path / "bad" / "model.safetensors"
    bad.parent.mkdir()
    header = json.dumps({"w": {"dtype": "F32", "shape": [10**6], "data_offsets": [0, 4 * 10**6]}}).encode()
    bad.write_bytes(struct.pack("<Q", len(header)) + header + b"\x00" * 16)
    with pytest.raises(Exception, match="lies outside the file"):
        safetensors_index(bad)
    diff = compare(bad.parent, _model(tmp_path / "base", [[1.0]]))
    assert diff.problems and not diff.weights_identical


def test_the_lineage_learns_from_the_weights(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _model(run / "outputs" / "sft", [[3.0, 4.0]])
    _model(run / "final_model", [[3.0, 4.0]])
    _model(run / "outputs" / "grpo", [[3.0, 4.0]])
    unknown = StageStep("unknown", "final_model", "outputs/sft")
    trained = StageStep("grpo", "outputs/grpo", "outputs/sft", strength="supported")
    flags = weigh([unknown, trained], run, "base", None)
    assert (unknown.kind, unknown.strength) == ("copy", "verified")
    assert trained.strength == "conflicting" and trained.conflicts == [
        "its weights equal those of outputs/sft: the grpo changed nothing"
    ]
    assert trained.weights is not None and trained.weights.weights_identical is True
    assert flags == []
    (run / "final_model" / "config.json").write_text(
        json.dumps({"architectures": ["Other"], "model_type": "tiny"})
    )
    templated = StageStep("unknown", "final_model", "outputs/sft")
    flags = weigh([templated], run, "base", None)
    assert templated.kind == "config_only" and flags[0].flag == "evaluator_tampering"


def test_changes_without_a_finite_ratio_and_files_that_are_not_files(tmp_path: Path) -> None:
    zero = _model(tmp_path / "zero", [[0.0, 0.0]])
    grown = _model(tmp_path / "grown", [[1.0, 0.0]])
    summary = compare(grown, zero).summary()
    assert (
        summary.max_rel_change is None and summary.most_changed and summary.most_changed[0].rel_change is None
    )
    json.dumps(summary.to_json(), allow_nan=False)  # the report is printed with allow_nan=False
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "model.safetensors")
    diff = compare(fifo, zero)  # reading a FIFO would block forever
    assert diff.problems == ["model.safetensors: not a regular file; not read"] and diff.compared == 0
