"""revisions.git snapshots: text committed, big and binary files listed, links never followed."""

from __future__ import annotations

import os
from pathlib import Path

import git
import pytest

from arb_audit.revisions import MAX_COMMIT_BYTES, RevisionError, snapshot


def read_blob(git_dir: Path, sha: str) -> bytes:
    return bytes(git.Repo(git_dir).odb.stream(bytes.fromhex(sha)).read())


def _snap(git_dir: Path, root: Path, problems: list[tuple[str, str]]):  # type: ignore[no-untyped-def]
    return snapshot(
        git_dir,
        root,
        ref="refs/heads/run",
        seq=1,
        trigger="final",
        message="final",
        on_problem=lambda p, m: problems.append((p, m)),
    )


def test_snapshot_commits_text_lists_the_rest_and_never_follows_links(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "train.py").write_text("print('train')\n")
    (code / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(code / "run.sh", 0o755)
    (code / "pkg" / "big.txt").write_bytes(b"x" * (MAX_COMMIT_BYTES + 1))
    (code / "model.safetensors").write_bytes(b"\x00" * 10)
    (code / "blob.dat").write_bytes(b"abc\x00def")
    secret = tmp_path / "outside.txt"
    secret.write_text("never read me")
    (code / "link.txt").symlink_to(secret)
    (code / "vendored" / ".git").mkdir(parents=True)
    (code / "vendored" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (code / "vendored" / "lib.py").write_text("x = 1\n")
    problems: list[tuple[str, str]] = []
    rev = _snap(tmp_path / "r.git", code, problems)
    by_path = {f.path: f for f in rev.files}
    assert set(by_path) == {
        "train.py",
        "run.sh",
        "pkg/big.txt",
        "model.safetensors",
        "blob.dat",
        "link.txt",
        "vendored/lib.py",
    }
    assert by_path["pkg/big.txt"].blob_sha is None and "not committed" in (by_path["pkg/big.txt"].note or "")
    assert by_path["model.safetensors"].blob_sha is None
    assert by_path["blob.dat"].note == "binary content; not committed"
    assert read_blob(tmp_path / "r.git", by_path["link.txt"].blob_sha or "") == str(secret).encode()
    assert read_blob(tmp_path / "r.git", by_path["train.py"].blob_sha or "") == b"print('train')\n"
    tree = git.Repo(tmp_path / "r.git").commit(rev.sha).tree
    assert (tree / "run.sh").mode == 0o100755
    assert (tree / "link.txt").mode == 0o120000
    assert problems == []


def test_snapshot_of_an_unchanged_tree_is_the_same_commit(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("a = 1\n")
    first = _snap(tmp_path / "r.git", code, [])
    again = _snap(tmp_path / "r.git", code, [])
    assert first.sha == again.sha
    (code / "a.py").write_text("a = 2\n")
    changed = _snap(tmp_path / "r.git", code, [])
    assert changed.sha != first.sha
    assert git.Repo(tmp_path / "r.git").commit(changed.sha).parents[0].hexsha == first.sha


def test_empty_tree_still_makes_a_revision(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    rev = _snap(tmp_path / "r.git", tmp_path / "code", [])
    assert rev.files == []
    assert len(rev.sha) == 40


def test_a_damaged_repository_is_a_revision_error(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("a = 1\n")
    _snap(tmp_path / "r.git", tmp_path / "code", [])
    (tmp_path / "r.git" / "config").write_text("this is not [ a git config")
    with pytest.raises(RevisionError, match=r"r\.git"):
        _snap(tmp_path / "r.git", tmp_path / "code", [])
