"""Weight forensics: how a model folder's tensors differ from another's (its parent, or the base).

The one module of the analyzer that imports torch. Safetensors files are read tensor by tensor from
their offsets (nothing but the header and the tensor compared is in memory); ``.bin``/``.pt`` files
only through ``torch.load(weights_only=True)``, and one that needs more than plain tensors is refused
with a problem, never unpickled. A LoRA adapter is compared by the update it makes, ``B @ A ·
alpha / r``, against the weight it adapts.
"""

from __future__ import annotations

import json
import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # torch warns at import when NumPy is absent; nothing here needs it
    import torch

DTYPES: dict[str, torch.dtype] = {
    "F64": torch.float64,
    "F32": torch.float32,
    "F16": torch.float16,
    "BF16": torch.bfloat16,
    "I64": torch.int64,
    "I32": torch.int32,
    "I16": torch.int16,
    "I8": torch.int8,
    "U8": torch.uint8,
    "BOOL": torch.bool,
}
MAX_HEADER_BYTES = 100 * 1024 * 1024
MAX_TENSOR_BYTES = 8 * 1024**3
"""Larger tensors are not read (a hostile header could name any size)."""
TOP_CHANGED = 10
"""Most changed tensors listed by name."""
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


class WeightsError(Exception):
    """A weights file cannot be read as plain tensors; the message names it and says why."""


@dataclass(frozen=True, slots=True)
class TensorRef:
    """Where one tensor of a safetensors file lies."""

    path: Path
    """The file."""
    dtype: str
    """Its dtype as the header writes it."""
    shape: tuple[int, ...]
    """Its shape."""
    start: int
    """Byte offset of its data in the file."""
    end: int
    """Byte offset after its data."""


@dataclass(slots=True)
class WeightDiff:
    """How one model's tensors differ from a reference's."""

    compared: int = 0
    """Tensors present in both with the same dtype and shape."""
    identical: int = 0
    """Of those, the ones with the same bytes."""
    changed: list[tuple[str, float]] = field(default_factory=list)
    """(name, ‖a − b‖ / ‖b‖) of the tensors that differ, most changed first."""
    missing: list[str] = field(default_factory=list)
    """Tensors of the reference the model lacks."""
    added: list[str] = field(default_factory=list)
    """Tensors the model has that the reference lacks."""
    retyped: list[str] = field(default_factory=list)
    """Tensors whose dtype or shape differs."""
    config_changes: list[str] = field(default_factory=list)
    """What differs outside the weights: ``architectures``, ``model_type``, the chat template."""
    lora_modules: int = 0
    """For an adapter: the modules it adapts."""
    problems: list[str] = field(default_factory=list)
    """Files that could not be read, and why."""

    @property
    def weights_identical(self) -> bool:
        """Whether every tensor is present in both, of the same type, with the same bytes."""
        same_names = not (self.missing or self.added or self.retyped)
        return self.compared > 0 and same_names and self.identical == self.compared and not self.problems

    def to_json(self) -> dict[str, Any]:
        """Return the summary the audit shows."""
        changes = [c for _, c in self.changed]
        return {
            "compared": self.compared,
            "identical": self.identical,
            "changed": len(self.changed),
            "max_rel_change": round(max(changes), 6) if changes else 0.0,
            "mean_rel_change": round(sum(changes) / len(changes), 6) if changes else 0.0,
            "most_changed": [{"tensor": n, "rel_change": round(c, 6)} for n, c in self.changed[:TOP_CHANGED]],
            "missing": self.missing[:TOP_CHANGED],
            "added": self.added[:TOP_CHANGED],
            "retyped": self.retyped[:TOP_CHANGED],
            "config_changes": self.config_changes,
            "lora_modules": self.lora_modules,
            "weights_identical": self.weights_identical,
            "problems": self.problems,
        }


def safetensors_index(path: Path) -> dict[str, TensorRef]:
    """Read a safetensors header: tensor name → where it lies. Raises :class:`WeightsError`."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(8)
            if len(raw) != 8:
                raise WeightsError(f"{path.name}: too short to be safetensors")
            (length,) = struct.unpack("<Q", raw)
            if length > MAX_HEADER_BYTES:
                raise WeightsError(f"{path.name}: header of {length:,} bytes is not believed")
            header = json.loads(handle.read(length))
        size = path.stat().st_size
    except (OSError, ValueError, RecursionError) as exc:
        raise WeightsError(f"{path.name}: not readable safetensors ({exc})") from exc
    if not isinstance(header, dict):
        raise WeightsError(f"{path.name}: the header is not an object")
    index: dict[str, TensorRef] = {}
    for name, info in header.items():
        if name == "__metadata__" or not isinstance(info, dict):
            continue
        offsets, shape, dtype = info.get("data_offsets"), info.get("shape"), info.get("dtype")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise WeightsError(f"{path.name}: tensor {name[:80]!r} has no usable offsets")
        start, end = 8 + length + offsets[0], 8 + length + offsets[1]
        if not (isinstance(shape, list) and all(isinstance(d, int) and d >= 0 for d in shape)) or not (
            8 + length <= start <= end <= size
        ):
            raise WeightsError(f"{path.name}: tensor {name[:80]!r} lies outside the file or has no shape")
        index[name] = TensorRef(path, str(dtype), tuple(shape), start, end)
    return index


def read_tensor(ref: TensorRef) -> torch.Tensor:
    """Read one tensor from its file, as float32 (for comparing). Raises :class:`WeightsError`."""
    dtype = DTYPES.get(ref.dtype)
    if dtype is None:
        raise WeightsError(f"{ref.path.name}: dtype {ref.dtype} is not compared")
    if ref.end - ref.start > MAX_TENSOR_BYTES:
        raise WeightsError(f"{ref.path.name}: a tensor of {ref.end - ref.start:,} bytes is not read")
    with ref.path.open("rb") as handle:
        handle.seek(ref.start)
        data = bytearray(handle.read(ref.end - ref.start))
    count = 1
    for d in ref.shape:
        count *= d
    if count * dtype.itemsize != len(data):
        raise WeightsError(f"{ref.path.name}: a tensor's size does not match its shape")
    if not data:
        return torch.zeros(ref.shape, dtype=torch.float32)
    return torch.frombuffer(data, dtype=dtype).reshape(ref.shape).to(torch.float32)


def _pickled_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Load a ``.bin``/``.pt`` state dict with ``weights_only=True``; refuse anything needing more."""
    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise WeightsError(
            f"{path.name}: refused — it needs unpickling beyond plain tensors ({type(exc).__name__})"
        ) from exc
    if not isinstance(loaded, dict) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise WeightsError(f"{path.name}: not a plain state dict of tensors")
    return {str(k): v.to(torch.float32) for k, v in loaded.items()}


def _tensors(folder: Path, problems: list[str]) -> dict[str, TensorRef | torch.Tensor]:
    """Every tensor of a model folder (sharded safetensors, or pickled state dicts read safely)."""
    found: dict[str, TensorRef | torch.Tensor] = {}
    for path in sorted(folder.glob("*.safetensors")):
        if path.is_symlink():
            problems.append(f"{path.name}: a symlink; not followed")
            continue
        try:
            found.update(safetensors_index(path))
        except WeightsError as exc:
            problems.append(str(exc))
    if not found:
        for path in sorted([*folder.glob("*.bin"), *folder.glob("*.pt")]):
            if path.is_symlink():
                continue
            try:
                found.update(_pickled_tensors(path))
            except WeightsError as exc:
                problems.append(str(exc))
    return found


def _as_tensor(value: TensorRef | torch.Tensor) -> torch.Tensor:
    return read_tensor(value) if isinstance(value, TensorRef) else value


def _shape(value: TensorRef | torch.Tensor) -> tuple[str, tuple[int, ...]]:
    if isinstance(value, TensorRef):
        return value.dtype, value.shape
    return str(value.dtype), tuple(value.shape)


def _json(folder: Path, name: str) -> dict[str, Any]:
    path = folder / name
    try:
        data = (
            json.loads(path.read_text(encoding="utf-8")) if path.is_file() and not path.is_symlink() else {}
        )
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _template(folder: Path) -> str | None:
    for name in TEMPLATE_FILES:
        path = folder / name
        if path.is_file() and not path.is_symlink():
            return path.read_text(encoding="utf-8", errors="replace")
    value = _json(folder, "tokenizer_config.json").get("chat_template")
    return value if isinstance(value, str) else None


def config_changes(model: Path, reference: Path) -> list[str]:
    """Say what differs outside the weights: architectures, model type, the chat template."""
    mine, theirs = _json(model, "config.json"), _json(reference, "config.json")
    changes = [
        f"{key}: {theirs.get(key)!r} → {mine.get(key)!r}"
        for key in ("architectures", "model_type")
        if key in mine and key in theirs and mine[key] != theirs[key]
    ]
    if _template(model) != _template(reference) and _template(model) is not None:
        changes.append("chat template changed")
    return changes


def compare(model: Path, reference: Path) -> WeightDiff:
    """Compare a model folder's tensors with a reference folder's, tensor by tensor."""
    diff = WeightDiff(config_changes=config_changes(model, reference))
    if (model / "adapter_config.json").is_file():
        return _compare_adapter(model, reference, diff)
    mine, theirs = _tensors(model, diff.problems), _tensors(reference, diff.problems)
    diff.missing = sorted(set(theirs) - set(mine))
    diff.added = sorted(set(mine) - set(theirs))
    for name in sorted(set(mine) & set(theirs)):
        if _shape(mine[name]) != _shape(theirs[name]):
            diff.retyped.append(name)
            continue
        try:
            a, b = _as_tensor(mine[name]), _as_tensor(theirs[name])
        except WeightsError as exc:
            diff.problems.append(str(exc))
            continue
        diff.compared += 1
        if torch.equal(a, b):
            diff.identical += 1
        else:
            norm = float(torch.linalg.vector_norm(b))
            change = float(torch.linalg.vector_norm(a - b))
            diff.changed.append((name, change / norm if norm else float("inf")))
    diff.changed.sort(key=lambda pair: -pair[1])
    return diff


def _compare_adapter(adapter: Path, reference: Path, diff: WeightDiff) -> WeightDiff:
    """Compare the update a LoRA adapter makes (B @ A · alpha / r) with the weights it adapts."""
    config = _json(adapter, "adapter_config.json")
    rank, alpha = config.get("r"), config.get("lora_alpha")
    scale = alpha / rank if isinstance(rank, int) and rank > 0 and isinstance(alpha, int | float) else 1.0
    lora = _tensors(adapter, diff.problems)
    base = _tensors(reference, diff.problems) if reference.is_dir() else {}
    for a_name in sorted(n for n in lora if ".lora_A." in n):
        b_name = a_name.replace(".lora_A.", ".lora_B.")
        if b_name not in lora:
            continue
        try:
            update = (_as_tensor(lora[b_name]) @ _as_tensor(lora[a_name])) * scale
        except (WeightsError, RuntimeError) as exc:
            diff.problems.append(f"{a_name}: {exc}")
            continue
        diff.lora_modules += 1
        target = a_name.split(".lora_A.")[0].removeprefix("base_model.model.") + ".weight"
        norm = float(torch.linalg.vector_norm(_as_tensor(base[target]))) if target in base else 0.0
        size = float(torch.linalg.vector_norm(update))
        diff.compared += 1
        if size == 0.0:
            diff.identical += 1
        else:
            diff.changed.append((target, size / norm if norm else float("inf")))
    diff.changed.sort(key=lambda pair: -pair[1])
    return diff
