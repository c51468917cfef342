"""Code revisions in a git directory of arb-audit's own (``revisions.git``).

Snapshots are written through GitPython's object interface into a bare repository with a private
index: the snapshotted folder is only read, never written, and an agent's own ``.git`` inside it is
skipped (its files are still taken one by one, so a nested repository is not reduced to a gitlink).
Symlinks are stored as links (their target text) and never followed. Large or binary files are not
committed; they are listed with their size and the reason.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import git
from git.index import IndexFile
from git.index.typ import BaseIndexEntry
from git.objects import Commit
from git.refs import Reference
from gitdb import IStream

from arb_audit.model import FileEntry, Revision, RevisionTrigger

MAX_COMMIT_BYTES = 1024 * 1024
"""Files larger than this are listed, not committed (checkpoints, datasets)."""
MAX_FILES = 10_000
"""Most files taken into one snapshot."""
BINARY_SUFFIXES = (
    ".safetensors",
    ".bin",
    ".pt",
    ".pth",
    ".ckpt",
    ".gguf",
    ".npy",
    ".npz",
    ".pkl",
    ".pickle",
    ".parquet",
    ".arrow",
    ".zip",
    ".tar",
    ".gz",
    ".so",
    ".pyc",
)
ACTOR = git.Actor("arb-audit", "arb-audit@localhost")

OnProblem = Callable[[str, str], None]


class RevisionError(Exception):
    """The revisions repository could not be created, read or written; the message says why."""


def run_ref(run_id: str) -> str:
    """Return the git ref that holds the revisions of ``run_id`` (any run id gives a valid ref name)."""
    return "refs/runs/" + hashlib.sha256(run_id.encode()).hexdigest()[:24]


def open_repo(git_dir: Path) -> git.Repo:
    """Open the bare revisions repository at ``git_dir``, creating it when missing."""
    if (git_dir / "HEAD").exists():
        return git.Repo(git_dir)
    repo = git.Repo.init(git_dir, bare=True, mkdir=True)
    with repo.config_writer() as cfg:
        cfg.set_value("gc", "auto", "0")
    return repo


def _store_blob(repo: git.Repo, data: bytes) -> bytes:
    stream = repo.odb.store(IStream("blob", len(data), io.BytesIO(data)))
    return bytes(stream.binsha)


def _walk(root: Path, on_problem: OnProblem) -> list[tuple[str, os.stat_result]]:
    """List regular files and symlinks under ``root`` (sorted; at most MAX_FILES + 1)."""
    found: list[tuple[str, os.stat_result]] = []
    unnamed = 0
    pending = [root]
    while pending and len(found) <= MAX_FILES:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            on_problem(folder.relative_to(root).as_posix(), f"cannot be listed: {exc.strerror or exc}")
            continue
        for entry in entries:
            rel = Path(entry.path).relative_to(root).as_posix()
            if entry.name.lower() == ".git" or entry.name == "__pycache__":
                continue  # git metadata of the agent's own (never read) and bytecode caches
            if not rel.isprintable() and _undecodable(rel):
                unnamed += 1
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                on_problem(rel, f"cannot be read: {exc.strerror or exc}")
                continue
            if stat.S_ISDIR(st.st_mode):
                pending.append(Path(entry.path))
            elif stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                found.append((rel, st))
    if unnamed:
        on_problem(".", f"{unnamed:,} file(s) have names that are not UTF-8; they were not taken")
    found.sort()
    return found


def _undecodable(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _entry(
    repo: git.Repo, root: Path, rel: str, st: os.stat_result, on_problem: OnProblem
) -> tuple[FileEntry, BaseIndexEntry | None]:
    path = root / rel
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(path)
        sha = _store_blob(repo, os.fsencode(target))
        note = f"symlink to {target!r} (not followed)"
        return FileEntry(rel, len(target), sha.hex(), note), BaseIndexEntry((0o120000, sha, 0, rel))
    if st.st_size > MAX_COMMIT_BYTES:
        return FileEntry(rel, st.st_size, None, f"over {MAX_COMMIT_BYTES:,} bytes; not committed"), None
    if rel.endswith(BINARY_SUFFIXES):
        return FileEntry(rel, st.st_size, None, "binary type; not committed"), None
    try:
        data = path.read_bytes()
    except OSError as exc:
        on_problem(rel, f"cannot be read: {exc.strerror or exc}")
        return FileEntry(rel, st.st_size, None, "unreadable"), None
    if b"\x00" in data[:8192]:
        return FileEntry(rel, len(data), None, "binary content; not committed"), None
    sha = _store_blob(repo, data)
    mode = 0o100755 if st.st_mode & stat.S_IXUSR else 0o100644
    return FileEntry(rel, len(data), sha.hex()), BaseIndexEntry((mode, sha, 0, rel))


def snapshot(
    git_dir: Path,
    root: Path,
    *,
    ref: str,
    seq: int,
    trigger: RevisionTrigger,
    message: str,
    on_problem: OnProblem,
    taken_at: datetime | None = None,
) -> Revision:
    """Commit the tree under ``root`` to ``ref`` of ``git_dir`` and return the revision.

    ``taken_at`` defaults to the newest mtime in the tree, so snapshotting an unchanged folder again
    gives the same commit. Problems with single files (unreadable, too many) go to
    ``on_problem(path relative to root, message)``; a repository that cannot be used raises
    :class:`RevisionError`.
    """
    try:
        repo = open_repo(git_dir)
        files, index_entries, newest = _stage(repo, root, on_problem)
        taken_at = taken_at or newest
        sha = _commit(repo, git_dir, index_entries, ref=ref, message=message, when=taken_at)
    except Exception as exc:
        # A damaged or planted repository can fail anywhere inside GitPython (config parsing, refs
        # that point at blobs, ...); whatever it is, the audit goes on without the revision.
        raise RevisionError(f"{git_dir}: {type(exc).__name__}: {exc}") from exc
    return Revision(seq=seq, sha=sha, taken_at=taken_at, trigger=trigger, files=files)


def _stage(
    repo: git.Repo, root: Path, on_problem: OnProblem
) -> tuple[list[FileEntry], list[BaseIndexEntry], datetime]:
    """Store the blobs of ``root``; return its file list, the index entries and the newest mtime."""
    listed = _walk(root, on_problem)
    if len(listed) > MAX_FILES:
        on_problem(".", f"has more than {MAX_FILES:,} files; only {MAX_FILES:,} of them were taken")
        listed = listed[:MAX_FILES]
    files: list[FileEntry] = []
    index_entries: list[BaseIndexEntry] = []
    for rel, st in listed:
        info, entry = _entry(repo, root, rel, st, on_problem)
        files.append(info)
        if entry is not None:
            index_entries.append(entry)
    newest = max((st.st_mtime for _, st in listed), default=0.0)
    return files, index_entries, datetime.fromtimestamp(newest, tz=UTC)


def _commit(
    repo: git.Repo,
    git_dir: Path,
    index_entries: list[BaseIndexEntry],
    *,
    ref: str,
    message: str,
    when: datetime,
) -> str:
    """Write the tree and, unless ``ref`` already holds it with the same message, a commit on ``ref``."""
    index = IndexFile(repo, str(git_dir / "arb-index"))
    index.entries.clear()
    if index_entries:
        index.add(index_entries, write=False)
    tree = index.write_tree()
    parents = []
    reference = Reference(repo, ref)
    if reference.is_valid():
        parents = [reference.commit]
        if parents[0].tree.hexsha == tree.hexsha and parents[0].message == message:
            return str(parents[0].hexsha)
    stamp = f"{int(when.timestamp())} +0000"
    commit = Commit.create_from_tree(
        repo,
        tree,
        message,
        parent_commits=parents,
        head=False,
        author=ACTOR,
        committer=ACTOR,
        author_date=stamp,
        commit_date=stamp,
    )
    reference.set_commit(commit)
    return str(commit.hexsha)
