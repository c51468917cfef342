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

import json
import mmap
import os
import stat
from pathlib import Path
from typing import Any

import blake3

from arb_audit.model import ArtifactManifest, FileDigest, TensorDigest
from arb_audit.safetensors import HeaderError, read_header

MERKLE_CONTEXT = "arb-audit 2026-11 safetensors tensor manifest v1"
"""BLAKE3 key-derivation context of the per-tensor root: a separate hash function from the plain BLAKE3
of whole files, so a file whose bytes happen to be some root's input cannot share that root."""
SKIPPED_NAMES = frozenset({".arb-audit", ".git", "__pycache__"})


def _field(hasher: Any, data: bytes) -> None:
    """Feed one length-prefixed field, so that no two field sequences give the same byte stream."""
    hasher.update(len(data).to_bytes(8, "little"))
    hasher.update(data)


def _digest_range(view: memoryview, start: int, end: int) -> str:
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    hasher.update(view[start:end])
    return hasher.hexdigest()


def _hash_safetensors(path: Path, rel: str, size: int) -> FileDigest:
    """Hash a safetensors file tensor by tensor; HeaderError when its header does not hold up."""
    with path.open("rb") as handle:
        checked = read_header(handle, size)
        data_start = checked.data_start
        outer = blake3.blake3(derive_key_context=MERKLE_CONTEXT)
        metadata = checked.metadata
        _field(outer, json.dumps(metadata, sort_keys=True, separators=(",", ":")).encode())
        tensors: list[TensorDigest] = []
        gaps: list[str] = []
        # size > 8 + header length here, so there is something to map.
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            view = memoryview(mapped)
            try:
                cursor = data_start
                for tensor in checked.tensors:
                    start, end = data_start + tensor.start, data_start + tensor.end
                    if start > cursor:
                        gaps.append(f"{cursor}:{_digest_range(view, cursor, start)}")
                    tensors.append(
                        TensorDigest(tensor.name, tensor.dtype, tensor.shape, _digest_range(view, start, end))
                    )
                    cursor = max(cursor, end)
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
