"""Weight forensics: how a model folder's tensors differ from another's (its parent, or the base).

The one module of the analyzer that imports torch, and only once a comparison needs arithmetic: a
comparison found in the cache, or whose tensors all have the same bytes, runs without it (importing
torch costs seconds). Safetensors files are read tensor by tensor from their offsets, in pieces of
:data:`READ_BYTES` (two pieces and their float64 copies are all that is in memory, whatever the
tensor's size): the bytes are compared first, and only a tensor that differs is measured.
``.bin``/``.pt`` files only through ``torch.load(weights_only=True)``, and one that needs more than
plain tensors is refused with a problem, never unpickled. A LoRA adapter is compared by the update it
makes, ``B @ A · alpha / r``, against the weight it adapts. A comparison is cached by the two folders'
file listings (names, sizes, inodes, change times) and the analyzer's version (see
:mod:`arb_audit.analyzer.cache`): auditing an unchanged run again reads no tensor.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import stat
import warnings
import zipfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arb_audit.analyzer.cache import analyzer_version, load_result, save_result
from arb_audit.regular_files import open_regular
from arb_audit.safetensors import HeaderError, read_header
from arb_audit.schema import TensorChange, WeightChange

if TYPE_CHECKING:
    import torch

DTYPE_NAMES = ("F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL")
"""Safetensors dtypes compared (torch's names for them: :func:`torch_dtype`)."""
MAX_TENSOR_BYTES = 512 * 1024**2
"""Larger tensors are not compared (kept from when each side was held whole as float32)."""
READ_BYTES = 1 << 19
"""Bytes of each tensor read (and measured) at a time: two such pieces, and their float64 copies, stay
in the CPU's cache, where converting whole tensors went to memory and paid a page fault per 4 KiB."""
MAX_PICKLE_BYTES = 4 * 1024**3
"""Largest ``.bin``/``.pt`` content (uncompressed) loaded."""
MAX_SMALL_FILE_BYTES = 16 * 1024 * 1024
"""Largest config or chat template read."""
TOP_CHANGED = 10
"""Most changed tensors listed by name."""
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json")


class WeightsError(Exception):
    """A weights file cannot be read as plain tensors; the message names it and says why."""


@cache
def import_torch() -> None:
    """Import torch once, quietly: it warns at import when NumPy is absent, and nothing here needs it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch  # noqa: F401


def torch_dtype(name: str) -> torch.dtype | None:
    """Return torch's dtype for a safetensors dtype name, or None for one that is not compared."""
    if name not in DTYPE_NAMES:
        return None
    import_torch()
    import torch

    return {
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
    }[name]


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

    @classmethod
    def from_cache(cls, data: Any) -> WeightDiff | None:
        """Rebuild a diff that :meth:`to_cache` wrote; None when ``data`` is not one."""
        if not isinstance(data, dict):
            return None
        lists = ("missing", "added", "retyped", "config_changes", "problems")
        counts = ("compared", "identical", "lora_modules")
        changed = data.get("changed")
        if not (
            all(isinstance(data.get(k), int) for k in counts)
            and all(isinstance(data.get(k), list) and all(isinstance(v, str) for v in data[k]) for k in lists)
            and isinstance(changed, list)
            and all(
                isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], float)
                for c in changed
            )
        ):
            return None
        return cls(
            **{k: data[k] for k in counts + lists},
            changed=[(name, change) for name, change in changed],
        )

    def to_cache(self) -> dict[str, Any]:
        """Return every field, in full, as JSON values (non-finite changes as JSON's NaN/Infinity)."""
        return {
            "compared": self.compared,
            "identical": self.identical,
            "changed": [[name, float(change)] for name, change in self.changed],
            "missing": self.missing,
            "added": self.added,
            "retyped": self.retyped,
            "config_changes": self.config_changes,
            "lora_modules": self.lora_modules,
            "problems": self.problems,
        }

    @property
    def weights_identical(self) -> bool:
        """Whether every tensor is present in both, of the same type, with the same bytes."""
        same_names = not (self.missing or self.added or self.retyped)
        return self.compared > 0 and same_names and self.identical == self.compared and not self.problems

    def summary(self) -> WeightChange:
        """Return the summary the audit shows of the diff."""
        # A change against an all-zero tensor (or with NaN in it) has no finite ratio: JSON gets null.
        finite = [c for _, c in self.changed if math.isfinite(c)]
        return WeightChange(
            compared=self.compared,
            identical=self.identical,
            changed=len(self.changed),
            max_rel_change=round(max(finite), 6) if finite else None,
            mean_rel_change=round(sum(finite) / len(finite), 6) if finite else None,
            most_changed=[
                TensorChange(tensor=n, rel_change=round(c, 6) if math.isfinite(c) else None)
                for n, c in self.changed[:TOP_CHANGED]
            ],
            missing=self.missing[:TOP_CHANGED],
            added=self.added[:TOP_CHANGED],
            retyped=self.retyped[:TOP_CHANGED],
            config_changes=list(self.config_changes),
            lora_modules=self.lora_modules,
            weights_identical=self.weights_identical,
            problems=list(self.problems),
        )


def _regular(path: Path, follow: bool = False) -> bool:
    """Whether ``path`` is a regular file (a FIFO would block the read forever; symlinks only if trusted)."""
    try:
        mode = (path.stat() if follow else path.lstat()).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode)


def safetensors_index(path: Path) -> dict[str, TensorRef]:
    """Read a safetensors header: tensor name → where it lies. Raises :class:`WeightsError`."""
    try:
        with open_regular(path, follow_symlinks=True) as handle:
            header = read_header(handle, os.fstat(handle.fileno()).st_size)
    except (OSError, HeaderError) as exc:
        raise WeightsError(f"{path.name}: not readable safetensors ({exc})") from exc
    start = header.data_start
    return {t.name: TensorRef(path, t.dtype, t.shape, start + t.start, start + t.end) for t in header.tensors}


def raw_bytes(ref: TensorRef) -> bytes:
    """Read one tensor's bytes. Raises :class:`WeightsError`."""
    if ref.end - ref.start > MAX_TENSOR_BYTES:
        raise WeightsError(f"{ref.path.name}: a tensor of {ref.end - ref.start:,} bytes is not compared")
    with open_regular(ref.path, follow_symlinks=True) as handle:
        handle.seek(ref.start)
        return handle.read(ref.end - ref.start)


def _checked_dtype(ref: TensorRef, size: int) -> torch.dtype:
    """Return the tensor's torch dtype, checking that ``size`` bytes fill its shape."""
    dtype = torch_dtype(ref.dtype)
    if dtype is None:
        raise WeightsError(f"{ref.path.name}: dtype {ref.dtype} is not compared")
    if len(ref.shape) > 16 or math.prod(ref.shape) * dtype.itemsize != size:
        raise WeightsError(f"{ref.path.name}: a tensor's size does not match its shape")
    return dtype


def read_tensor(ref: TensorRef, data: bytes | None = None) -> torch.Tensor:
    """Read one tensor from its file, as float32 (for comparing). Raises :class:`WeightsError`."""
    if torch_dtype(ref.dtype) is None:
        raise WeightsError(f"{ref.path.name}: dtype {ref.dtype} is not compared")
    data = raw_bytes(ref) if data is None else data
    dtype = _checked_dtype(ref, len(data))
    import torch

    if not data:
        return torch.zeros(0, dtype=torch.float32)
    try:
        return torch.frombuffer(bytearray(data), dtype=dtype).reshape(ref.shape).to(torch.float32)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise WeightsError(f"{ref.path.name}: a tensor cannot be read ({exc})") from exc


def _pickled_tensors(path: Path) -> dict[str, torch.Tensor]:
    """Load a ``.bin``/``.pt`` state dict with ``weights_only=True``; refuse anything needing more."""
    try:
        size = path.stat().st_size
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                size = sum(info.file_size for info in archive.infolist())
    except (OSError, zipfile.BadZipFile) as exc:
        raise WeightsError(f"{path.name}: not readable ({exc})") from exc
    if size > MAX_PICKLE_BYTES:
        raise WeightsError(f"{path.name}: {size:,} bytes once unpacked; not loaded")
    import_torch()
    import torch

    try:
        loaded = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise WeightsError(
            f"{path.name}: refused — it needs unpickling beyond plain tensors ({type(exc).__name__})"
        ) from exc
    if not isinstance(loaded, dict) or not all(isinstance(v, torch.Tensor) for v in loaded.values()):
        raise WeightsError(f"{path.name}: not a plain state dict of tensors")
    try:
        return {str(k): v.to(torch.float32) for k, v in loaded.items() if v.layout == torch.strided}
    except RuntimeError as exc:
        raise WeightsError(f"{path.name}: its tensors cannot be compared ({exc})") from exc


def _tensors(folder: Path, problems: list[str], trusted: bool = False) -> dict[str, TensorRef | torch.Tensor]:
    """Every tensor of a model folder (sharded safetensors, or pickled state dicts read safely).

    Only regular files are read; symlinks only in a ``trusted`` folder (the base model's, given by the
    user, which may be a Hugging Face cache snapshot made of links).
    """
    found: dict[str, TensorRef | torch.Tensor] = {}
    for path in sorted(folder.glob("*.safetensors")):
        if not _regular(path, follow=trusted):
            problems.append(f"{path.name}: not a regular file; not read")
            continue
        try:
            found.update(safetensors_index(path))
        except WeightsError as exc:
            problems.append(str(exc))
    if not found:
        for path in sorted([*folder.glob("*.bin"), *folder.glob("*.pt")]):
            if not _regular(path, follow=trusted):
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


def _small_text(path: Path, trusted: bool) -> str | None:
    if not _regular(path, follow=trusted):
        return None
    try:
        with open_regular(path, follow_symlinks=trusted) as handle:
            return handle.read(MAX_SMALL_FILE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None


def _json(folder: Path, name: str, trusted: bool = False) -> dict[str, Any]:
    text = _small_text(folder / name, trusted)
    try:
        data = json.loads(text) if text is not None else {}
    except (ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _template(folder: Path, trusted: bool = False) -> str | None:
    for name in TEMPLATE_FILES:
        if (text := _small_text(folder / name, trusted)) is not None:
            return text
    value = _json(folder, "tokenizer_config.json", trusted).get("chat_template")
    return value if isinstance(value, str) else None


def config_changes(model: Path, reference: Path, trusted: bool = False) -> list[str]:
    """Say what differs outside the weights: architectures, model type, the chat template."""
    mine, theirs = _json(model, "config.json"), _json(reference, "config.json", trusted)
    changes = [
        f"{key}: {theirs.get(key)!r} → {mine.get(key)!r}"
        for key in ("architectures", "model_type")
        if key in mine and key in theirs and mine[key] != theirs[key]
    ]
    template, reference_template = _template(model), _template(reference, trusted)
    if template is not None and template != reference_template:
        changes.append("chat template changed" if reference_template is not None else "chat template added")
    return changes


class _Reader:
    """Open files and reused buffers of one comparison (a fresh buffer per tensor costs page faults)."""

    def __init__(self) -> None:
        self.handles: dict[Path, io.BufferedReader] = {}
        self.pieces = (bytearray(READ_BYTES), bytearray(READ_BYTES))
        self.floats: tuple[torch.Tensor, torch.Tensor] | None = None
        self.threads = 0
        """torch's thread count before :meth:`buffers` set it to one (0: not set)."""

    def read(self, ref: TensorRef, offset: int, size: int, side: int) -> memoryview:
        """Read ``size`` bytes of ``ref`` from ``offset`` within it into piece ``side``."""
        handle = self.handles.get(ref.path)
        if handle is None:
            handle = self.handles[ref.path] = open_regular(ref.path, follow_symlinks=True)
        handle.seek(ref.start + offset)
        view = memoryview(self.pieces[side])[:size]
        if handle.readinto(view) != size:
            raise WeightsError(f"{ref.path.name}: a tensor's size does not match its shape")
        return view

    def same(self, size: int) -> bool:
        """Whether the two pieces read hold the same ``size`` bytes (bytearray equality is a memcmp)."""
        a, b = self.pieces
        return a == b if size == READ_BYTES else a[:size] == b[:size]

    def buffers(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Two float64 buffers of a piece's elements; torch runs on this thread alone meanwhile.

        Pieces this small gain nothing from more threads, and on a busy machine every parallel step
        waits for a thread the scheduler put aside: 8x slower measured, 2 cores under load 5.
        """
        if self.floats is None:
            import torch

            self.threads = torch.get_num_threads()
            torch.set_num_threads(1)
            self.floats = (
                torch.empty(READ_BYTES, dtype=torch.float64),
                torch.empty(READ_BYTES, dtype=torch.float64),
            )
        return self.floats

    def close(self) -> None:
        """Close the files; give torch its threads back."""
        for handle in self.handles.values():
            handle.close()
        if self.threads:
            import torch

            torch.set_num_threads(self.threads)


def _first_difference(a: TensorRef, b: TensorRef, reader: _Reader) -> int | None:
    """Return the offset of the first piece in which two tensors' bytes differ, or None when none does."""
    size = a.end - a.start
    for offset in range(0, size, READ_BYTES):
        piece = min(READ_BYTES, size - offset)
        reader.read(a, offset, piece, 0)
        reader.read(b, offset, piece, 1)
        if not reader.same(piece):
            return offset
    return None


def _streamed_change(a: TensorRef, b: TensorRef, reader: _Reader, first: int) -> float:
    """Return ‖a − b‖ / ‖b‖ of two tensors of one dtype and shape, read piece by piece.

    Sums of squares are taken in float64: exact for every dtype compared, where float32 sums over
    millions of elements drifted in the fourth digit. ``first``: the first piece whose bytes differ
    (the pieces before it add to ‖b‖ only).
    """
    import torch

    size = a.end - a.start
    dtype = _checked_dtype(a, size)
    _checked_dtype(b, b.end - b.start)
    float_a, float_b = reader.buffers()
    squares_b = squares_d = 0.0
    for offset in range(0, size, READ_BYTES):
        piece = min(READ_BYTES, size - offset)
        count = piece // dtype.itemsize
        reader.read(b, offset, piece, 1)
        values_b = float_b[:count]
        values_b.copy_(torch.frombuffer(reader.pieces[1], dtype=dtype, count=count))
        squares_b += float(torch.dot(values_b, values_b))
        if offset < first:
            continue  # bytes already found equal: no difference to add
        reader.read(a, offset, piece, 0)
        if not reader.same(piece):
            values_a = float_a[:count]
            values_a.copy_(torch.frombuffer(reader.pieces[0], dtype=dtype, count=count))
            values_a.sub_(values_b)
            squares_d += float(torch.dot(values_a, values_a))
    norm, change = math.sqrt(squares_b), math.sqrt(squares_d)
    return change / norm if norm else math.inf


def _pair(a: TensorRef | torch.Tensor, b: TensorRef | torch.Tensor, reader: _Reader) -> float | None:
    """Return ‖a − b‖ / ‖b‖ (infinite when b is zero), or None when the two are the same bytes."""
    if isinstance(a, TensorRef) and isinstance(b, TensorRef):
        for ref in (a, b):
            if ref.end - ref.start > MAX_TENSOR_BYTES:
                raise WeightsError(
                    f"{ref.path.name}: a tensor of {ref.end - ref.start:,} bytes is not compared"
                )
        first = _first_difference(a, b, reader)
        if first is None:
            return None  # byte-identical, NaNs included; floats could blur wide or exotic dtypes
        return _streamed_change(a, b, reader, first)
    import torch

    ta, tb = _as_tensor(a), _as_tensor(b)
    if torch.equal(ta, tb):
        return None
    tb64 = tb.to(torch.float64)
    norm = float(torch.linalg.vector_norm(tb64))
    change = float(torch.linalg.vector_norm(ta.to(torch.float64) - tb64))
    return change / norm if norm else math.inf


def _listing(folder: Path, follow: bool) -> list[list[Any]] | None:
    """Name, type and identity (inode, size, times) of each entry of ``folder``; None if unlistable."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None
    found: list[list[Any]] = []
    for name in names:
        try:
            st = os.stat(folder / name, follow_symlinks=follow)
        except OSError:
            found.append([name, None])
            continue
        found.append([name, st.st_mode, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
    return found


def _cache_key(model: Path, reference: Path, trusted: bool) -> str | None:
    """Key a comparison by what could change its result, without reading a byte of the files.

    Both folders' entries with their inode, size and modification and change times (as git's index
    keys a file: writing a file changes its change time, which no user can set back), both paths, and
    the analyzer's version. None when a folder cannot be listed (such a comparison is not cached).
    """
    mine, theirs = _listing(model, False), _listing(reference, trusted)
    if mine is None or theirs is None:
        return None
    parts = [analyzer_version(), str(model), str(reference), trusted, mine, theirs]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def compare(model: Path, reference: Path, trusted_reference: bool = False) -> WeightDiff:
    """Compare a model folder's tensors with a reference folder's, tensor by tensor.

    ``trusted_reference``: the reference is the user's own folder (the base model), whose symlinks
    (a Hugging Face cache snapshot) may be followed. The result is cached (see :func:`_cache_key`).
    """
    key = _cache_key(model, reference, trusted_reference)
    if key is not None and (hit := WeightDiff.from_cache(load_result("weights", key))) is not None:
        return hit
    diff = _compare(model, reference, trusted_reference)
    if key is not None:
        save_result("weights", key, diff.to_cache())
    return diff


def _compare(model: Path, reference: Path, trusted_reference: bool) -> WeightDiff:
    diff = WeightDiff(config_changes=config_changes(model, reference, trusted_reference))
    if (model / "adapter_config.json").is_file():
        return _compare_adapter(model, reference, diff, trusted_reference)
    mine, theirs = _tensors(model, diff.problems), _tensors(reference, diff.problems, trusted_reference)
    diff.missing = sorted(set(theirs) - set(mine))
    diff.added = sorted(set(mine) - set(theirs))
    reader = _Reader()
    try:
        for name in sorted(set(mine) & set(theirs)):
            if _shape(mine[name]) != _shape(theirs[name]):
                diff.retyped.append(name)
                continue
            try:
                change = _pair(mine[name], theirs[name], reader)
            except (WeightsError, RuntimeError, TypeError, ValueError) as exc:
                diff.problems.append(str(exc)[:300])
                continue
            diff.compared += 1
            if change is None:
                diff.identical += 1
            else:
                diff.changed.append((name, change))
    finally:
        reader.close()
    diff.changed.sort(key=lambda pair: -pair[1] if math.isfinite(pair[1]) else -math.inf)
    return diff


def _update_norm(a: torch.Tensor, b: torch.Tensor) -> float:
    """Return ‖B @ A‖ without forming B @ A: the trace of (BᵀB)(AAᵀ), two r×r products."""
    if a.dim() != 2 or b.dim() != 2 or b.shape[1] != a.shape[0]:
        raise WeightsError(f"lora_A {tuple(a.shape)} and lora_B {tuple(b.shape)} do not multiply")
    return math.sqrt(max(float(((b.T @ b) * (a @ a.T)).sum()), 0.0))


def _compare_adapter(adapter: Path, reference: Path, diff: WeightDiff, trusted: bool) -> WeightDiff:
    """Compare the update a LoRA adapter makes (B @ A · alpha / r) with the weights it adapts."""
    config = _json(adapter, "adapter_config.json")
    rank, alpha = config.get("r"), config.get("lora_alpha")
    scale = alpha / rank if isinstance(rank, int) and rank > 0 and isinstance(alpha, int | float) else 1.0
    import torch

    lora = _tensors(adapter, diff.problems)
    base = _tensors(reference, diff.problems, trusted) if reference.is_dir() else {}
    for a_name in sorted(n for n in lora if ".lora_A." in n):
        b_name = a_name.replace(".lora_A.", ".lora_B.")
        if b_name not in lora:
            continue
        target = a_name.split(".lora_A.")[0].removeprefix("base_model.model.") + ".weight"
        try:
            size = _update_norm(_as_tensor(lora[a_name]), _as_tensor(lora[b_name])) * abs(scale)
            norm = float(torch.linalg.vector_norm(_as_tensor(base[target]))) if target in base else 0.0
        except (WeightsError, RuntimeError, TypeError, ValueError) as exc:
            diff.problems.append(f"{a_name[:120]}: {str(exc)[:200]}")
            continue
        diff.lora_modules += 1
        diff.compared += 1
        if size == 0.0:
            diff.identical += 1
        else:
            diff.changed.append((target, size / norm if norm else math.inf))
    diff.changed.sort(key=lambda pair: -pair[1] if math.isfinite(pair[1]) else -math.inf)
    return diff
