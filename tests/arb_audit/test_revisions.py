"""revisions.git snapshots: text committed, big and binary files listed, links never followed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import blake3
import git
import pytest

from arb_audit import revisions
from arb_audit.model import FileEntry
from arb_audit.revisions import MAX_COMMIT_BYTES, RevisionError, snapshot


def read_blob(git_dir: Path, sha: str) -> bytes:
    shown = subprocess.run(
        ["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], capture_output=True, check=True
    )
    return shown.stdout


def _snap(  # type: ignore[no-untyped-def]
    git_dir: Path,
    root: Path,
    problems: list[tuple[str, str]],
    ref: str = "refs/heads/run",
    seq: int = 1,
    trigger: Literal["timer", "final"] = "final",
    message: str = "final",
):
    return snapshot(
        git_dir,
        root,
        ref=ref,
        seq=seq,
        trigger=trigger,
        message=message,
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
    assert by_path["model.safetensors"].content_hash == blake3.blake3(b"\x00" * 10).hexdigest()
    assert by_path["pkg/big.txt"].content_hash == blake3.blake3(b"x" * (MAX_COMMIT_BYTES + 1)).hexdigest()
    assert by_path["blob.dat"].content_hash == blake3.blake3(b"abc\x00def").hexdigest()
    assert by_path["train.py"].content_hash is None
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


@pytest.mark.parametrize("damage", ["ref holds garbage", "objects is a file"])
def test_a_damaged_repository_is_a_revision_error(tmp_path: Path, damage: str) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("a = 1\n")
    _snap(tmp_path / "r.git", tmp_path / "code", [])
    (tmp_path / "code" / "a.py").write_text("a = 2\n")
    if damage == "ref holds garbage":
        (tmp_path / "r.git" / "refs" / "heads" / "run").write_text("not a sha\n")
    else:
        shutil.rmtree(tmp_path / "r.git" / "objects")
        (tmp_path / "r.git" / "objects").write_text("")
    with pytest.raises(RevisionError, match=r"r\.git"):
        _snap(tmp_path / "r.git", tmp_path / "code", [])


def test_snapshots_are_real_git_history(tmp_path: Path) -> None:
    code = tmp_path / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "a.py").write_text("a = 1\n")
    (code / "b-c.py").write_text("b = 1\n")
    first = _snap(tmp_path / "r.git", code, [])
    (code / "pkg" / "a.py").write_text("a = 2\n")
    second = _snap(tmp_path / "r.git", code, [], seq=2, trigger="timer", message="second")
    fsck = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r.git"), "fsck", "--strict"], capture_output=True, text=True
    )
    assert fsck.returncode == 0, fsck.stderr
    log = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r.git"), "log", "--format=%H %s", "refs/heads/run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    assert log[:2] == [f"{second.sha} second", f"{first.sha} final"]
    repo = git.Repo(tmp_path / "r.git")
    assert (repo.commit(second.sha).tree / "pkg" / "a.py").data_stream.read() == b"a = 2\n"


def _objects(git_dir: Path) -> set[str]:
    return {p.parent.name + p.name for p in (git_dir / "objects").glob("??/*")}


def test_an_unchanged_folder_is_not_read_again_and_two_folders_share_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    for root, text in ((one, "a = 1\n"), (two, "b = 2\n")):
        root.mkdir()
        (root / "m.py").write_text(text)
    git_dir = tmp_path / "r.git"
    first_one = _snap(git_dir, one, [])
    first_two = _snap(git_dir, two, [], ref="refs/heads/two")
    assert first_two.files[0].blob_sha != first_one.files[0].blob_sha
    reads: list[str] = []
    original = revisions._entry

    def counting(*args: Any) -> FileEntry:
        reads.append(args[2])
        return original(*args)

    monkeypatch.setattr(revisions, "_entry", counting)
    before = _objects(git_dir)
    assert _snap(git_dir, one, []).sha == first_one.sha
    assert reads == [] and _objects(git_dir) == before


def test_an_edit_that_puts_the_mtime_back_is_still_seen(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("lr = 0.001\n")
    first = _snap(tmp_path / "r.git", code, [])
    stamp = (code / "train.py").stat()
    (code / "train.py").write_text("lr = 9.999\n")  # same size
    os.utime(code / "train.py", ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    second = _snap(tmp_path / "r.git", code, [])
    assert second.sha != first.sha
    assert read_blob(tmp_path / "r.git", second.files[0].blob_sha or "") == b"lr = 9.999\n"


@pytest.mark.parametrize("name", ["c:notes.txt", "GIT~1", ".git.", ".g\u200cit"])
def test_a_name_git_refuses_is_left_out_not_fatal(tmp_path: Path, name: str) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "ok.py").write_text("x = 1\n")
    (code / name).write_text("hidden\n")
    problems: list[tuple[str, str]] = []
    rev = _snap(tmp_path / "r.git", code, problems)
    assert [f.path for f in rev.files if f.blob_sha] == ["ok.py"]
    assert problems and problems[0][0] == name


def test_history_survives_gc_and_concurrent_writers(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("a = 0\n")
    first = _snap(tmp_path / "r.git", code, [])
    subprocess.run(["git", "--git-dir", str(tmp_path / "r.git"), "gc", "-q", "--prune=now"], check=True)
    assert _snap(tmp_path / "r.git", code, []).sha == first.sha  # packed parent, same tree: no new commit
    script = (
        "import sys; from pathlib import Path; from arb_audit.revisions import snapshot\n"
        "for i in range(15):\n"
        "    snapshot(Path(sys.argv[1]), Path(sys.argv[2]), ref='refs/heads/run', seq=1, trigger='timer',"
        " message=f'{sys.argv[3]} {i}', on_problem=lambda p, m: None)\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", script, str(tmp_path / "r.git"), str(code), w])
        for w in ("x", "y")
    ]
    assert [w.wait() for w in writers] == [0, 0]
    log = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "r.git"), "log", "--format=%s", "refs/heads/run"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert sorted(log) == sorted(["final"] + [f"{w} {i}" for w in "xy" for i in range(15)])  # none lost


def test_a_live_snapshotter_checks_for_no_change_in_memory(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "a.py").write_text("a = 1\n")
    live = revisions.Snapshotter(tmp_path / "r.git", code, "refs/heads/live", lambda p, m: None)
    first = live.take("timer")
    assert first is not None and live.take("timer") is None
    (code / "b.py").write_text("b = 1\n")
    second = live.take("submission")
    assert second is not None and second.sha != first.sha and second.trigger == "submission"


def test_the_previous_version_of_a_file_is_before_the_revision_that_last_changed_it(tmp_path: Path) -> None:
    code, git_dir = tmp_path / "code", tmp_path / "r.git"
    code.mkdir()
    (code / "a.py").write_text("a = 1\n")
    first = _snap(git_dir, code, [])
    (code / "a.py").write_text("a = 2\n")
    (code / "b.py").write_text("b = 1\n")
    second = _snap(git_dir, code, [], seq=2, trigger="timer", message="second")
    (code / "b.py").write_text("b = 2\n")
    third = _snap(git_dir, code, [], seq=3, trigger="timer", message="third")
    # a.py last changed in the second revision: its previous version is the first's, whichever is cited
    assert revisions.previous_version(git_dir, third.sha, "a.py") == (first.sha, b"a = 1\n")
    assert revisions.previous_version(git_dir, second.sha, "a.py") == (first.sha, b"a = 1\n")
    assert revisions.previous_version(git_dir, second.sha, "b.py") == (first.sha, None)  # new there
    assert revisions.previous_version(git_dir, first.sha, "a.py") is None  # no earlier revision
    assert revisions.previous_version(git_dir, "0" * 40, "a.py") is None
    assert revisions.previous_version(git_dir, third.sha, "") is None


def test_a_packed_revisions_git_reads_the_same_as_loose_objects(tmp_path: Path) -> None:
    """Snapshots are loose objects, read in-process; after ``git gc`` packs them, git reads them."""
    code, git_dir = tmp_path / "code", tmp_path / "r.git"
    (code / "pkg").mkdir(parents=True)
    (code / "pkg" / "a.py").write_text("a = 1\n")
    first = _snap(git_dir, code, [])
    (code / "pkg" / "a.py").write_text("a = 2\n")
    second = _snap(git_dir, code, [], seq=2, trigger="timer", message="second")
    asked = [
        ("file_at", second.sha, "pkg/a.py"),
        ("file_at", second.sha[:9], "pkg/a.py"),
        ("file_at", first.sha, "pkg"),  # a folder is no file
        ("file_at", first.sha, "pkg/missing.py"),
        ("previous", second.sha, "pkg/a.py"),
        ("previous", second.sha[:9], "pkg/a.py"),
    ]
    loose = [getattr(revisions.RevisionReader(git_dir), how)(sha, path) for how, sha, path in asked]
    assert loose == [b"a = 2\n", b"a = 2\n", None, None, (first.sha, b"a = 1\n"), (first.sha, b"a = 1\n")]
    assert revisions.RevisionReader(git_dir, limit=3).file_at(second.sha, "pkg/a.py") is None  # too big
    subprocess.run(["git", "--git-dir", str(git_dir), "gc", "-q", "--prune=now"], check=True)
    assert not list((git_dir / "objects").glob("??/*"))  # nothing loose is left
    packed = [getattr(revisions.RevisionReader(git_dir), how)(sha, path) for how, sha, path in asked]
    assert packed == loose


def test_an_object_that_is_a_link_or_corrupt_is_not_read(tmp_path: Path) -> None:
    """An object file swapped for a link (to a device that never ends) or for garbage reads as absent."""
    code, git_dir = tmp_path / "code", tmp_path / "r.git"
    code.mkdir()
    (code / "a.py").write_text("a = 1\n")
    (code / "b.py").write_text("b = 1\n")
    made = _snap(git_dir, code, [])
    tree = git.Repo(git_dir).commit(made.sha).tree
    for name, replace in (("a.py", "link"), ("b.py", "garbage")):
        sha = tree[name].hexsha
        stored = git_dir / "objects" / sha[:2] / sha[2:]
        stored.unlink()
        if replace == "link":
            stored.symlink_to("/dev/zero")
        else:
            stored.write_bytes(b"not zlib at all")
    reader = revisions.RevisionReader(git_dir)
    assert reader.file_at(made.sha, "a.py") is None and reader.file_at(made.sha, "b.py") is None
