"""Artifact identity: per-tensor digests equal an independent computation; bad headers are hashed whole."""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import blake3
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.runner.artifact_hash import hash_artifact, hash_file

Tensors = dict[str, tuple[str, list[int], bytes]]


def write_safetensors(
    path: Path,
    tensors: Tensors,
    *,
    order: list[str] | None = None,
    metadata: dict[str, str] | None = None,
    tail: bytes = b"",
) -> None:
    """Write a safetensors file by the format's spec: u64 header length, JSON header, tensor bytes."""
    header: dict[str, object] = {"__metadata__": metadata} if metadata is not None else {}
    body = b""
    for name in order or sorted(tensors):
        dtype, shape, data = tensors[name]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(body), len(body) + len(data)]}
        body += data
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + body + tail)


WEIGHTS: Tensors = {
    "lm_head.weight": ("F32", [2, 2], bytes(range(16))),
    "model.embed.weight": ("F32", [4], bytes(range(16, 32))),
    "model.norm.bias": ("BF16", [2], b"\x01\x02\x03\x04"),
}


def test_tensor_digests_equal_an_independent_computation(tmp_path: Path) -> None:
    write_safetensors(tmp_path / "model.safetensors", WEIGHTS, metadata={"format": "pt"})
    digest = hash_file(tmp_path / "model.safetensors")
    assert digest.note is None
    assert {t.name: t.digest for t in digest.tensors} == {
        name: blake3.blake3(data).hexdigest() for name, (_, _, data) in WEIGHTS.items()
    }
    assert [(t.dtype, t.shape) for t in digest.tensors] == [("F32", (2, 2)), ("F32", (4,)), ("BF16", (2,))]


def test_identity_ignores_layout_but_not_content_or_metadata(tmp_path: Path) -> None:
    a, b, c, d = (tmp_path / f"{x}.safetensors" for x in "abcd")
    write_safetensors(a, WEIGHTS)
    write_safetensors(b, WEIGHTS, order=["model.norm.bias", "lm_head.weight", "model.embed.weight"])
    changed = dict(WEIGHTS, **{"model.norm.bias": ("BF16", [2], b"\x01\x02\x03\x05")})
    write_safetensors(c, changed)
    write_safetensors(d, WEIGHTS, metadata={"format": "pt"})
    da, db, dc, dd = (hash_file(p) for p in (a, b, c, d))
    assert da.digest == db.digest
    assert dc.digest != da.digest and dd.digest != da.digest
    differ = {t.name for t, u in zip(da.tensors, dc.tensors, strict=True) if t.digest != u.digest}
    assert differ == {"model.norm.bias"}


def test_bytes_outside_any_tensor_count(tmp_path: Path) -> None:
    write_safetensors(tmp_path / "a.safetensors", WEIGHTS)
    write_safetensors(tmp_path / "b.safetensors", WEIGHTS, tail=b"hidden payload")
    a, b = hash_file(tmp_path / "a.safetensors"), hash_file(tmp_path / "b.safetensors")
    assert a.digest != b.digest and "outside any tensor" in (b.note or "")


def framed(header: bytes, body: bytes) -> bytes:
    return struct.pack("<Q", len(header)) + header + body


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (b"\x01\x02", "shorter than the 8-byte header length"),
        (struct.pack("<Q", 2**40) + b"{}", "does not fit the file"),
        (framed(b"nope!", b""), "header is not JSON"),
        (framed(b"[]", b""), "not a JSON object"),
        (framed(b'{"w":{"dtype":"F32","shape":[1],"data_offsets":[0,9]}}', b"x" * 4), "outside the file"),
        (
            framed(
                b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                b'"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}',
                b"x" * 6,
            ),
            "overlap",
        ),
        (framed(b'{"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', b"x" * 4), "shape"),
        (framed(b'{"w":{"dtype":"F32","shape":[1]}}', b"x" * 4), "data_offsets"),
    ],
)
def test_a_header_that_does_not_hold_up_is_hashed_whole(tmp_path: Path, raw: bytes, why: str) -> None:
    path = tmp_path / "bad.safetensors"
    path.write_bytes(raw)
    digest = hash_file(path)
    assert digest.tensors == [] and why in (digest.note or "")
    assert digest.digest == blake3.blake3(raw).hexdigest()


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_named_safetensors_hash_without_error(tmp_path_factory, raw: bytes) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path_factory.mktemp("st") / "x.safetensors"
    path.write_bytes(raw)
    assert len(hash_file(path).digest) == 64


def test_folder_manifest_never_follows_links_and_skips_our_own_files(tmp_path: Path) -> None:
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    write_safetensors(model / "model.safetensors", WEIGHTS)
    (model / "config.json").write_text('{"_name_or_path": "Qwen/Qwen2.5-1.5B"}')
    (model / "sub" / "empty.txt").write_bytes(b"")
    secret = tmp_path / "secret"
    secret.write_text("never read")
    (model / "link").symlink_to(secret)
    (model / ".arb-audit").mkdir()
    (model / ".arb-audit" / "run.duckdb").write_text("ours")
    manifest = hash_artifact(model)
    assert [f.path for f in manifest.files] == ["config.json", "link", "model.safetensors", "sub/empty.txt"]
    link = manifest.files[1]
    assert link.note == f"symlink to {str(secret)!r} (not followed)"
    assert manifest.files[3].digest == blake3.blake3(b"").hexdigest()
    before = manifest.artifact_id
    secret.write_text("changed, but only the link's target text counts")
    assert hash_artifact(model).artifact_id == before
    (model / "config.json").write_text('{"_name_or_path": "other"}')
    assert hash_artifact(model).artifact_id != before
    os.utime(model / "model.safetensors", (1, 1))
    assert hash_artifact(model).artifact_id == hash_artifact(model).artifact_id


def test_fields_cannot_be_shifted_into_each_other(tmp_path: Path) -> None:
    # A NUL inside a dtype once let one tensor stand for two: fields are length-prefixed now.
    a_bytes, b_bytes = b"\x01" * 4, b"\x02" * 4
    write_safetensors(tmp_path / "two.safetensors", {"a": ("X", [1], a_bytes), "b": ("X", [1], b_bytes)})
    forged = f"X\x00[1]\x00{blake3.blake3(a_bytes).hexdigest()}\x00b\x00X"
    write_safetensors(tmp_path / "one.safetensors", {"a": (forged, [1], b_bytes)})
    assert hash_file(tmp_path / "two.safetensors").digest != hash_file(tmp_path / "one.safetensors").digest


@pytest.mark.parametrize(
    ("header", "why"),
    [
        ('{"__metadata__": {"n": ' + "9" * 5000 + "}}", "header is not JSON"),
        ('{"\\ud800": {"dtype": "X", "shape": [1], "data_offsets": [0, 4]}}', "not text"),
        ('{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 4]}}', "does not fill"),
    ],
)
def test_hostile_headers_are_hashed_whole(tmp_path: Path, header: str, why: str) -> None:
    path = tmp_path / "x.safetensors"
    path.write_bytes(framed(header.encode(), b"\x00" * 4))
    digest = hash_file(path)
    assert why in (digest.note or "") and digest.digest == blake3.blake3(path.read_bytes()).hexdigest()
