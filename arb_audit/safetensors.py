"""The safetensors layout: the header that says where each tensor lies, read and checked, never trusted.

Shared by the runner (content identity, tensor by tensor) and the analyzer (weight forensics): both read
the 8-byte length, the JSON header, and tensor ranges that must lie inside the file, fill their shape and
not overlap.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
from typing import BinaryIO

MAX_HEADER_BYTES = 100 * 1024 * 1024
"""A safetensors header larger than this is not believed (the format's own reference limit)."""
MAX_DIM = 2**31 - 1
"""A tensor dimension beyond this is not believed."""
DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "I64": 8,
    "U64": 8,
    "F64": 8,
}
"""Bytes per element of the dtypes the safetensors format defines; others are not size-checked."""


class HeaderError(ValueError):
    """A safetensors header that does not describe its file."""


@dataclass(frozen=True, slots=True)
class TensorRange:
    """Where one tensor lies, relative to the start of the data (after the header)."""

    start: int
    """First byte of its data."""
    end: int
    """Byte after its data."""
    name: str
    """Its name."""
    dtype: str
    """Its dtype as the header writes it."""
    shape: tuple[int, ...]
    """Its shape."""


@dataclass(frozen=True, slots=True)
class Header:
    """A checked safetensors header."""

    data_start: int
    """Offset of the data in the file (8 + the header's length)."""
    metadata: object
    """The ``__metadata__`` entry, as written."""
    tensors: list[TensorRange]
    """The tensors, sorted by where they start."""


def read_header(handle: BinaryIO, size: int) -> Header:
    """Read and check the header of an open safetensors file of ``size`` bytes; HeaderError if it lies."""
    prefix = handle.read(8)
    if len(prefix) < 8:
        raise HeaderError("shorter than the 8-byte header length")
    length = int.from_bytes(prefix, "little")
    if length < 2 or length > min(MAX_HEADER_BYTES, size - 8):
        raise HeaderError(f"header length {length:,} does not fit the file")
    try:
        header = json.loads(handle.read(length))
    except (ValueError, RecursionError) as exc:  # ValueError covers bad UTF-8, bad JSON, giant ints
        raise HeaderError(f"header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise HeaderError("header is not a JSON object")
    data_start = 8 + length
    ranges = [TensorRange(*r) for r in _tensor_ranges(header, size - data_start)]
    return Header(data_start, header.get("__metadata__"), ranges)


def _tensor_ranges(
    header: dict[str, object], data_size: int
) -> list[tuple[int, int, str, str, tuple[int, ...]]]:
    """Validate the tensor entries; return ``(start, end, name, dtype, shape)`` sorted by start."""
    ranges = []
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(spec, dict):
            raise HeaderError(f"entry {name!r} is not an object")
        dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
        if not isinstance(dtype, str):
            raise HeaderError(f"tensor {name!r} has no dtype")
        if not (isinstance(shape, list) and all(isinstance(d, int) and 0 <= d <= MAX_DIM for d in shape)):
            raise HeaderError(f"tensor {name!r} has no valid shape")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(o, int) for o in offsets)):
            raise HeaderError(f"tensor {name!r} has no valid data_offsets")
        start, end = offsets
        if not 0 <= start <= end <= data_size:
            raise HeaderError(f"tensor {name!r} lies outside the file ({start}..{end} of {data_size} bytes)")
        if dtype in DTYPE_BYTES and math.prod(shape) * DTYPE_BYTES[dtype] != end - start:
            raise HeaderError(f"tensor {name!r}: shape {shape} of {dtype} does not fill {end - start} bytes")
        try:
            name.encode(), dtype.encode()
        except UnicodeEncodeError as exc:
            raise HeaderError(f"tensor name or dtype is not text ({exc.reason})") from exc
        ranges.append((start, end, name, dtype, tuple(shape)))
    ranges.sort()
    for (_, end, name, _, _), (start, _, other, _, _) in itertools.pairwise(ranges):
        if start < end:
            raise HeaderError(f"tensors {name!r} and {other!r} overlap")
    return ranges
