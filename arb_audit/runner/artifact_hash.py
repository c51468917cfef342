"""Content identity of model artifacts: BLAKE3, and a per-tensor Merkle root for safetensors files.

A safetensors file's digest covers its metadata, and each tensor's name, dtype, shape and bytes, but not
where in the file the tensor lies nor how its header is formatted (whitespace, key order): the same
weights written in another order have the same identity,
and one pass gives both the identity and which tensors differ from another artifact. Bytes that no
tensor claims are hashed too, so nothing in the file escapes. A file whose header does not hold up is
hashed whole and says why. A folder's identity is the digest of its manifest (every file's path, size
and digest; a symlink by its target, never followed). Nothing is loaded, imported or unpickled.

Files are opened through :mod:`arb_audit.regular_files` and read in bounded pieces, never mapped: a
FIFO, socket or device anywhere in the artifact is an error naming it (never waited on), and so is a
file that changes while it is hashed (an agent still writing it) rather than a mapping that dies.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

import blake3

from arb_audit.model import ArtifactManifest, FileDigest, TensorDigest
from arb_audit.regular_files import NotRegularFile, check_unchanged, feed, is_special, open_regular
from arb_audit.safetensors import HeaderError, read_header

MERKLE_CONTEXT = "arb-audit 2026-11 safetensors tensor manifest v1"
"""BLAKE3 key-derivation context of the per-tensor root: a separate hash function from the plain BLAKE3
of whole files, so a file whose bytes happen to be some root's input cannot share that root."""
SKIPPED_NAMES = frozenset({".arb-audit", ".git", "__pycache__"})


def _field(hasher: Any, data: bytes) -> None:
    """Feed one length-prefixed field, so that no two field sequences give the same byte stream."""
    hasher.update(len(data).to_bytes(8, "little"))
    hasher.update(data)


def _digest_range(handle: BinaryIO, start: int, end: int, path: Path) -> str:
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    feed(hasher.update, handle, start, end, path)
    return hasher.hexdigest()


def _hash_safetensors(handle: BinaryIO, path: Path, rel: str, size: int) -> FileDigest:
    """Hash an open safetensors file tensor by tensor; HeaderError when its header does not hold up."""
    handle.seek(0)
    checked = read_header(handle, size)
    data_start = checked.data_start
    outer = blake3.blake3(derive_key_context=MERKLE_CONTEXT)
    _field(outer, json.dumps(checked.metadata, sort_keys=True, separators=(",", ":")).encode())
    tensors: list[TensorDigest] = []
    gaps: list[str] = []
    cursor = data_start
    for tensor in checked.tensors:
        start, end = data_start + tensor.start, data_start + tensor.end
        if start > cursor:
            gaps.append(f"{cursor}:{_digest_range(handle, cursor, start, path)}")
        tensors.append(
            TensorDigest(tensor.name, tensor.dtype, tensor.shape, _digest_range(handle, start, end, path))
        )
        cursor = max(cursor, end)
    if cursor < size:
        gaps.append(f"{cursor}:{_digest_range(handle, cursor, size, path)}")
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


def _hash_whole(handle: BinaryIO, path: Path, rel: str, size: int, note: str | None = None) -> FileDigest:
    hasher = blake3.blake3(max_threads=blake3.blake3.AUTO)
    feed(hasher.update, handle, 0, size, path)
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
    with open_regular(path) as handle:
        opened = os.fstat(handle.fileno())
        size = opened.st_size
        digest = None
        if path.suffix == ".safetensors":
            try:
                digest = _hash_safetensors(handle, path, rel, size)
            except HeaderError as exc:
                note = f"not a valid safetensors file ({exc}); hashed whole"
                digest = _hash_whole(handle, path, rel, size, note=note)
        if digest is None:
            digest = _hash_whole(handle, path, rel, size)
        check_unchanged(handle, opened, path)  # a file rewritten meanwhile has no single content
    return digest


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
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
                if is_special(mode):  # graded with the folder, so it cannot be left out unsaid
                    raise NotRegularFile(entry.path, mode)
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
