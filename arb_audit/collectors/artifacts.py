"""Model artifacts of a run folder: where a submitted path points, and what is there now.

Nothing is followed out of the run folder and nothing is loaded: sizes, mtimes and the small JSON files
that name a parent model (``config.json`` ``_name_or_path``, ``adapter_config.json``
``base_model_name_or_path``) are all that is read. Hashing comes with the runner.
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from datetime import UTC, datetime
from pathlib import Path

from arb_audit.collectors.reading import RunFolder, utf8_name
from arb_audit.model import STORE_DIRNAME, ArtifactInfo, LoggedSteps, TrainerEvidence
from arb_audit.regular_files import is_special, kind
from arb_audit.runner.artifact_hash import hash_artifact

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".gguf")
MAX_WALK_FILES = 200_000
"""Most files listed under one artifact."""
MAX_CONFIG_BYTES = 1024 * 1024
MAX_STATE_BYTES = 32 * 1024 * 1024
"""Largest trainer_state.json read (a long run logs every step)."""
MAX_LOG_ENTRIES = 100_000
MAX_LOG_KEYS = 200
MAX_CARD_LINES = 400
_TRAINED_WITH = re.compile(r"(?:trained|fine-tuned) (?:with|using) (?:\[)?([A-Za-z][\w-]{1,30})")
"""TRL's model card: "This model was trained with GRPO, a method introduced in ..." (or "with SFT")."""


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
    try:
        link = _symlink_on_path(folder.root, rel)
        target = os.readlink(folder.root / link) if link is not None else ""
    except (OSError, ValueError) as exc:  # a name too long for the file system, a NUL byte
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return ArtifactInfo(path=rel, exists=False, note=f"its path cannot be examined: {reason}")
    if link is not None:
        return ArtifactInfo(path=rel, exists=True, note=f"{link} is a symlink to {target!r}; not followed")
    if not folder.contains(root):
        return ArtifactInfo(path=rel, exists=False, note="lies outside the run folder; not examined")
    try:
        top = root.lstat()
    except OSError:
        return ArtifactInfo(path=rel, exists=False)
    info = ArtifactInfo(path=rel, exists=True)
    if is_special(top.st_mode):
        info.note = f"it is {kind(top.st_mode)}, not a regular file; not read"
        folder.problem(rel, info.note)
        return info
    latest = top.st_mtime if stat.S_ISREG(top.st_mode) else 0.0
    special: list[tuple[str, int]] = []  # FIFOs, sockets, devices in the folder: listed, never read
    names: set[str] = set()
    folders: set[str] = set()
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
                                if Path(entry.path).parent == root:
                                    folders.add(entry.name)
                        elif entry.is_file(follow_symlinks=False):
                            st = entry.stat(follow_symlinks=False)
                            info.size += st.st_size
                            info.n_files += 1
                            latest = max(latest, st.st_mtime)
                            if Path(entry.path).parent == root:
                                names.add(entry.name)
                        elif is_special(mode := entry.stat(follow_symlinks=False).st_mode):
                            special.append((Path(entry.path).relative_to(folder.root).as_posix(), mode))
            except OSError as exc:
                folder.problem(rel, f"could not be listed completely: {exc.strerror or exc}")
        if pending:
            info.note = f"more than {MAX_WALK_FILES:,} files; listing stopped"
    if special:
        first, mode = special[0]
        more = f" ({len(special) - 1:,} more special file(s) in {rel})" if len(special) > 1 else ""
        folder.problem(first, f"it is {kind(mode)}, not a regular file; not read{more}")
    info.latest_mtime = datetime.fromtimestamp(latest, tz=UTC) if latest else None
    if stat.S_ISDIR(top.st_mode):
        info.trainer_evidence = trainer_evidence(folder, rel, names, folders)
    if "adapter_config.json" in names:
        info.kind = "lora-adapter"
        info.parent_ref = _json_str(folder, f"{rel}/adapter_config.json", "base_model_name_or_path")
    elif "config.json" in names and any(n.endswith(WEIGHT_SUFFIXES) for n in names):
        info.kind = "full"
        info.parent_ref = _json_str(folder, f"{rel}/config.json", "_name_or_path")
    return info


def _newest_checkpoint(rel: str, names: set[str]) -> str | None:
    """Return the ``checkpoint-N`` subfolder with the highest N (HF Trainer keeps its state there)."""
    steps = [
        (int(n[11:]), n) for n in names if n.startswith("checkpoint-") and n[11:].isdigit() and len(n) < 30
    ]
    return f"{rel}/{max(steps)[1]}" if steps else None


_LOSS_KEYS = re.compile(r"(?:^|/|_)(?:loss|grad_norm|kl)$")
"""Logged values a trainer writes as NaN/Infinity when training diverges (read back as null)."""
_REWARD_STD_KEYS = re.compile(r"(?:^|/)reward_std$")
_ENV_CALL_KEYS = re.compile(
    r"(?:^|/)(?:tools?/call_frequency|tool_call_frequency|env_steps|env/steps|num_env_steps|env_calls)$"
)
"""Logged counts of a rollout's calls into its environment or tools (TRL, verl, OpenRLHF names)."""
MAX_CITED_STEPS = 5


def _log_history(folder: RunFolder, rel: str) -> TrainerEvidence | None:
    """Return what ``trainer_state.json``'s ``log_history`` shows of how training went.

    That is the keys the trainer logged, the steps whose loss went non-finite, and how many logged
    steps had a reward that never varied or rollouts that called no environment. Python's json writes
    NaN and Infinity, which are read as null: a null loss is a non-finite one.
    """
    state = folder.read_json(rel, expect=dict, max_bytes=MAX_STATE_BYTES)
    if state is None:
        return None
    history = state.get("log_history")
    entries = (
        [e for e in history[:MAX_LOG_ENTRIES] if isinstance(e, dict)] if isinstance(history, list) else []
    )
    keys: set[str] = set()
    nonfinite: list[str] = []
    stds: list[float] = []
    calls: list[float] = []
    for entry in entries:
        if len(keys) <= MAX_LOG_KEYS:
            keys.update(k[:100] for k in entry if isinstance(k, str))
        step = entry.get("step")
        for key, value in entry.items():
            if not isinstance(key, str):
                continue
            if value is None and _LOSS_KEYS.search(key) and len(nonfinite) < MAX_CITED_STEPS:
                nonfinite.append(f"{key[:60]} at step {step}")
            elif isinstance(value, int | float) and not isinstance(value, bool):
                if _REWARD_STD_KEYS.search(key):
                    stds.append(float(value))
                elif _ENV_CALL_KEYS.search(key):
                    calls.append(float(value))
    return TrainerEvidence(
        trainer_state=rel,
        log_keys=sorted(keys)[:MAX_LOG_KEYS],
        log_steps=len(entries),
        log_nonfinite=nonfinite,
        log_reward_std=LoggedSteps(len(stds), sum(1 for v in stds if v == 0.0)) if stds else None,
        log_env_calls=LoggedSteps(len(calls), sum(1 for v in calls if v == 0.0)) if calls else None,
    )


def model_card(folder: RunFolder, rel: str) -> TrainerEvidence:
    """Return a model card's front-matter tags and its "trained with X" line (TRL writes both)."""
    found = TrainerEvidence()
    tags: list[str] = []
    in_front = in_tags = False
    for number, line in folder.lines(rel, max_line=4096):
        if number > MAX_CARD_LINES:
            break
        if number == 1 and line.strip() == "---":
            in_front = True
            continue
        if in_front and line.strip() == "---":
            in_front = in_tags = False
            continue
        if in_front:
            if line.startswith("tags:"):
                in_tags = True
                tags.extend(t.strip(" '\"") for t in line[5:].strip(" []").split(",") if t.strip(" '\""))
            elif in_tags and line.lstrip().startswith("- "):
                tags.append(line.strip()[2:].strip(" '\""))
            elif not line.startswith(" "):
                in_tags = False
        elif found.card_trained_with is None:
            # TRL's card says "trained using [TRL]" before "trained with GRPO": the tool is not the method.
            named = [m[1] for m in _TRAINED_WITH.finditer(line) if m[1].lower() != "trl"]
            if named:
                found.card_trained_with = named[0][:40]
    found.card_tags = [t[:60] for t in tags[:50]]
    return found


def trainer_evidence(folder: RunFolder, rel: str, names: set[str], folders: set[str]) -> TrainerEvidence:
    """Read what the files of a model folder say about how it was trained (nothing is loaded).

    ``names`` and ``folders`` are the files and subfolders at its top.
    """
    evidence = TrainerEvidence()
    checkpoint = _newest_checkpoint(rel, folders)
    for state in (f"{rel}/trainer_state.json", f"{checkpoint}/trainer_state.json" if checkpoint else None):
        if state and _present(folder.root / state) and (facts := _log_history(folder, state)) is not None:
            evidence = facts
            break
    if "README.md" in names:
        card = model_card(folder, f"{rel}/README.md")
        evidence.card_trained_with, evidence.card_tags = card.card_trained_with, card.card_tags
    return evidence


def _present(path: Path) -> bool:
    """Tell whether an optional file is there (not if its folder cannot be searched: its listing says why)."""
    try:
        return path.is_file()
    except OSError:
        return False


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
        rel = str(path.relative_to(folder.root))
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            folder.problem(rel, f"cannot be listed: {exc.strerror or exc}")
            return
        if unnamed := sum(not utf8_name(e.name) for e in entries):
            folder.problem(rel, f"{unnamed:,} name(s) in it are not UTF-8; they were not examined")
            entries = [e for e in entries if utf8_name(e.name)]
        names = {e.name for e in entries if e.is_file(follow_symlinks=False)}
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
            where = Path(exc.filename) if exc.filename else folder.root / info.path
            inside = where.is_relative_to(folder.root)
            shown = where.relative_to(folder.root).as_posix() if inside else info.path
            folder.problem(shown, f"could not be hashed: {exc.strerror or exc}")
