"""Model artifacts of a run folder: where a submitted path points, and what is there now.

Nothing is followed out of the run folder and nothing is loaded: sizes, mtimes and the small JSON files
that name a parent model (``config.json`` ``_name_or_path``, ``adapter_config.json``
``base_model_name_or_path``) are all that is read. Hashing comes with the runner.
"""

from __future__ import annotations

import os
import posixpath
import stat
from datetime import UTC, datetime
from pathlib import Path

from arb_audit.model import STORE_DIRNAME, ArtifactInfo
from collectors.reading import RunFolder
from runner.artifact_hash import hash_artifact

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf")
MAX_WALK_FILES = 200_000
"""Most files listed under one artifact."""
MAX_CONFIG_BYTES = 1024 * 1024


def resolve_submitted(model_path: str, run_dir: Path, workspace: str | None) -> tuple[str | None, str | None]:
    """Map a submitted path onto the run folder.

    Returns ``(path relative to the run folder, None)`` or ``(None, why not)``. Relative paths resolve
    against the run folder (as the grading server does), absolute ones through the workspace path the
    run recorded, or through the run folder's name inside them. Nothing outside the folder is ever
    returned.
    """
    if "\x00" in model_path or not model_path.strip():
        return None, "the path is empty or holds a NUL byte"
    normalized = posixpath.normpath(model_path.replace("\\", "/"))
    if normalized.startswith("/"):
        prefixes = [
            p.rstrip("/") for p in (workspace, str(run_dir.resolve())) if p and len(p.rstrip("/")) > 1
        ]
        for prefix in prefixes:
            if normalized == prefix or normalized.startswith(prefix + "/"):
                normalized = normalized[len(prefix) + 1 :] or "."
                break
        else:
            marker = f"/{run_dir.name}/"
            if not run_dir.name or marker not in normalized:
                return None, f"{model_path!r} lies outside the run folder"
            normalized = normalized.split(marker, 1)[1]
    normalized = posixpath.normpath(normalized)
    if normalized.startswith("/") or normalized == ".." or normalized.startswith("../"):
        return None, f"{model_path!r} escapes the run folder"
    return normalized, None


def _symlink_on_path(run_dir: Path, rel: str) -> str | None:
    current = run_dir
    for part in Path(rel).parts:
        current = current / part
        if current.is_symlink():
            return str(current.relative_to(run_dir))
    return None


def describe(folder: RunFolder, rel: str) -> ArtifactInfo:
    """List the artifact at ``rel`` (relative to the run folder) without following symlinks."""
    root = folder.root / rel
    link = _symlink_on_path(folder.root, rel)
    if link is not None:
        target = os.readlink(folder.root / link)
        return ArtifactInfo(path=rel, exists=True, note=f"{link} is a symlink to {target!r}; not followed")
    if not folder.contains(root):
        return ArtifactInfo(path=rel, exists=False, note="lies outside the run folder; not examined")
    try:
        top = root.lstat()
    except OSError:
        return ArtifactInfo(path=rel, exists=False)
    info = ArtifactInfo(path=rel, exists=True)
    latest = top.st_mtime if stat.S_ISREG(top.st_mode) else 0.0
    names: set[str] = set()
    if stat.S_ISREG(top.st_mode):
        info.size, info.n_files = top.st_size, 1
        names.add(root.name)
    elif stat.S_ISDIR(top.st_mode):
        pending = [root]
        while pending and info.n_files < MAX_WALK_FILES:
            try:
                with os.scandir(pending.pop()) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            if entry.name != STORE_DIRNAME:  # arb-audit's own files are not the model
                                pending.append(Path(entry.path))
                        elif entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            info.size += st.st_size
                            info.n_files += 1
                            latest = max(latest, st.st_mtime)
                            if Path(entry.path).parent == root:
                                names.add(entry.name)
            except OSError as exc:
                folder.problem(rel, f"could not be listed completely: {exc.strerror or exc}")
        if pending:
            info.note = f"more than {MAX_WALK_FILES:,} files; listing stopped"
    info.latest_mtime = datetime.fromtimestamp(latest, tz=UTC) if latest else None
    if "adapter_config.json" in names:
        info.kind = "lora-adapter"
        info.parent_ref = _json_str(folder, f"{rel}/adapter_config.json", "base_model_name_or_path")
    elif "config.json" in names and any(n.endswith(WEIGHT_SUFFIXES) for n in names):
        info.kind = "full"
        info.parent_ref = _json_str(folder, f"{rel}/config.json", "_name_or_path")
    return info


def _json_str(folder: RunFolder, rel: str, key: str) -> str | None:
    data = folder.read_json(rel, max_bytes=MAX_CONFIG_BYTES)
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, str) and value else None


def find_output_artifacts(folder: RunFolder, top: str = "output", depth: int = 3) -> list[str]:
    """Return the model folders (a config or weights inside) and loose weight files under ``top``."""
    found: list[str] = []
    base = folder.root / top
    if base.is_symlink() or not base.is_dir():
        return found

    def visit(path: Path, level: int) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            folder.problem(str(path.relative_to(folder.root)), f"cannot be listed: {exc.strerror or exc}")
            return
        names = {e.name for e in entries if e.is_file(follow_symlinks=False)}
        rel = str(path.relative_to(folder.root))
        if path != base and (
            {"config.json", "adapter_config.json"} & names or any(n.endswith(WEIGHT_SUFFIXES) for n in names)
        ):
            found.append(rel)
            return
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and level < depth:
                visit(Path(entry.path), level + 1)
            elif (
                path == base and entry.is_file(follow_symlinks=False) and entry.name.endswith(WEIGHT_SUFFIXES)
            ):
                found.append(f"{rel}/{entry.name}")

    visit(base, 0)
    return found


MAX_HASHED_FILES = 100_000
"""An artifact with more files than this is not hashed (it is not a model)."""


def identify(folder: RunFolder, artifacts: list[ArtifactInfo]) -> None:
    """Give each artifact that exists inside the folder its content id.

    The id is of what is there now, not necessarily of what was graded: only a recording made at
    submission time knows that.
    """
    for info in artifacts:
        if not info.exists or info.note is not None:
            continue
        if info.n_files > MAX_HASHED_FILES:
            info.note = f"{info.n_files:,} files; not hashed"
            continue
        try:
            info.artifact_id = hash_artifact(folder.root / info.path).artifact_id
        except OSError as exc:
            folder.problem(info.path, f"could not be hashed: {exc.strerror or exc}")
