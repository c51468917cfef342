"""Content identity of model artifacts: BLAKE3, and a per-tensor Merkle root for safetensors files.

A safetensors file's digest covers its metadata, and each tensor's name, dtype, shape and bytes, but not
where in the file the tensor lies nor how its header is formatted (whitespace, key order): the same
weights written in another order have the same identity,
and one pass gives both the identity and which tensors differ from another artifact. Bytes that no
tensor claims are hashed too, so nothing in the file escapes. A file whose header does not hold up is
hashed whole and says why. A folder's identity is the digest of its manifest (every file's path, size
and digest; a symlink by its target, never followed). Nothing is loaded, imported or unpickled.
"""

from __future__ import annotations

import itertools
import json
import math
import mmap
import os
import stat
from pathlib import Path
from typing import Any

import blake3

from arb_audit.model import ArtifactManifest, FileDigest, TensorDigest

MAX_HEADER_BYTES = 100 * 1024 * 1024
"""A safetensors header larger than this is not believed (the format's own reference limit)."""
MAX_DIM = 2**31 - 1
"""A tensor dimension beyond this is not believed."""
MERKLE_CONTEXT = "arb-audit 2026-11 safetensors tensor manifest v1"
"""BLAKE3 key-derivation context of the per-tensor root: a separate hash function from the plain BLAKE3
of whole files, so a file whose bytes happen to be some root's input cannot share that root."""
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
SKIPPED_NAMES = frozenset({".arb-audit", ".git", "__pycache__"})


class HeaderError(ValueError):
    """A safetensors header that does not describe its file."""


def _field(hasher: Any, data: bytes) -> None:
    """Feed one length-prefixed field, so that no two field sequences give the same byte stream."""
    hasher.update(len(data).to_bytes(8, "little"))
    hasher.update(data)


def _digest_range(view: memoryview, start: int, end: int) -> str:
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update(view[start:end])
    return hasher.hexdigest()


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


def _hash_safetensors(path: Path, rel: str, size: int) -> FileDigest:
    """Hash a safetensors file tensor by tensor; HeaderError when its header does not hold up."""
    with path.open("rb") as handle:
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
        ranges = _tensor_ranges(header, size - data_start)
        outer = blake3.blake3(derive_key_context=MERKLE_CONTEXT)
        metadata = header.get("__metadata__")
        _field(outer, json.dumps(metadata, sort_keys=True, separators=(",", ":")).encode())
        tensors: list[TensorDigest] = []
        gaps: list[str] = []
        # size > 8 + header length here, so there is something to map.
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                cursor = data_start
                for start, end, name, dtype, shape in ranges:
                    if data_start + start > cursor:
                        gaps.append(f"{cursor}:{_digest_range(view, cursor, data_start + start)}")
                    tensors.append(
                        TensorDigest(
                            name, dtype, shape, _digest_range(view, data_start + start, data_start + end)
                        )
                    )
                    cursor = max(cursor, data_start + end)
                if cursor < size:
                    gaps.append(f"{cursor}:{_digest_range(view, cursor, size)}")
            finally:
                view.release()
    for t in sorted(tensors, key=lambda t: t.name):
        for part in (
            b"tensor",
            t.name.encode(),
            t.dtype.encode(),
            json.dumps(list(t.shape)).encode(),
            t.digest.encode(),
        ):
            _field(outer, part)
    for gap in gaps:
        _field(outer, b"gap")
        _field(outer, gap.encode())
    note = f"{len(gaps)} stretch(es) of bytes outside any tensor, hashed too" if gaps else None
    return FileDigest(rel, size, outer.hexdigest(), sorted(tensors, key=lambda t: t.name), note)


def _hash_whole(path: Path, rel: str, size: int, note: str | None = None) -> FileDigest:
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    if size:
        hasher.update_mmap(str(path))
    return FileDigest(rel, size, hasher.hexdigest(), note=note)


def hash_file(path: Path, rel: str | None = None) -> FileDigest:
    """Hash one regular file (never following a symlink): tensor by tensor when it is safetensors."""
    rel = rel or path.name
    st = path.lstat()
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        return FileDigest(
            rel,
            len(os.fsencode(target)),
            blake3.blake3(b"symlink\0" + os.fsencode(target)).hexdigest(),
            note=f"symlink to {target!r} (not followed)",
        )
    if path.suffix == ".safetensors":
        try:
            return _hash_safetensors(path, rel, st.st_size)
        except HeaderError as exc:
            return _hash_whole(
                path, rel, st.st_size, note=f"not a valid safetensors file ({exc}); hashed whole"
            )
    return _hash_whole(path, rel, st.st_size)


def _walk(root: Path) -> list[Path]:
    found = []
    pending = [root]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name in SKIPPED_NAMES:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    found.append(Path(entry.path))
    return sorted(found)


def hash_artifact(root: Path) -> ArtifactManifest:
    """Return the manifest and identity of the file or folder ``root`` (symlinks are not followed)."""
    if root.is_dir() and not root.is_symlink():
        files = [hash_file(p, p.relative_to(root).as_posix()) for p in _walk(root)]
    else:
        files = [hash_file(root)]
    return ArtifactManifest(manifest_id(files), files)


def manifest_id(files: list[FileDigest]) -> str:
    """Return the identity of an artifact made of ``files`` (sorted by path): BLAKE3 of its manifest."""
    canonical = json.dumps([[f.path, f.size, f.digest] for f in files], separators=(",", ":"))
    return blake3.blake3(canonical.encode()).hexdigest()
