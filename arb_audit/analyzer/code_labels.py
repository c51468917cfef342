"""The static analyzer's verdict on the code files of a run's revisions, once per distinct content.

Files are read from the run's revisions.git by blob sha, written to a private folder, and classified by
:func:`arb_audit.analyzer.batch.classify_many` (worker processes bounded in time and memory, results
cached per content and analyzer version in the run store). Given the files commands ran, the others
are read cheaply first (:mod:`arb_audit.analyzer.route_words`): a Python version no command ran is
analysed in depth only while it could show a route none of those analysed shows.
"""

from __future__ import annotations

import posixpath
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

from arb_audit.analyzer.batch import classify_many
from arb_audit.analyzer.classify import Classification, Stage
from arb_audit.analyzer.route_words import ALL_ROUTES, possible_routes
from arb_audit.analyzer.source import kind_for
from arb_audit.analyzer.workspace import (
    Use,
    bindings,
    in_workspace,
    keeps_own,
    module_index,
    reexport,
    uses,
)
from arb_audit.model import RunRecord
from arb_audit.revisions import read_blob
from arb_audit.store import RunStore
from arb_audit.taxonomy.routes import label_of

ROUND = 8
"""Files that could show a route not found yet, classified per route in one round."""
MAX_BLOBS = 5000
"""Most distinct code files classified per run (a history of more is cut, the latest kept)."""


def code_blobs(record: RunRecord) -> dict[str, str]:
    """Return blob sha → one path it had, for every code file of every revision (latest revisions first)."""
    found: dict[str, str] = {}
    for revision in reversed(record.revisions):
        for f in revision.files:
            if f.blob_sha and f.blob_sha not in found and kind_for(f.path) != "other":
                found[f.blob_sha] = f.path
                if len(found) >= MAX_BLOBS:
                    return found
    return found


def classify_blobs(
    record: RunRecord,
    git_dir: Path | None,
    store: RunStore | None,
    jobs: int = 0,
    ran: set[str] | None = None,
) -> dict[str, Classification]:
    """Classify the distinct code blobs of the run's revisions; blob sha → classification.

    With ``ran`` (the blobs commands ran) every blob is classified but Python versions that no command
    ran and that are not the last version of their file: those only while their words allow a route
    that no blob classified so far shows (in rounds, each adding what it found).
    """
    if git_dir is None:
        return {}
    blobs = code_blobs(record)
    if not blobs:
        return {}
    in_depth = set(blobs) if ran is None else _in_depth(record, blobs, ran)
    with tempfile.TemporaryDirectory(prefix="arb-audit-blobs-") as tmp:
        local: dict[str, Path] = {}
        texts: dict[str, str] = {}  # of the files read cheaply first
        for sha, path in blobs.items():
            raw = read_blob(git_dir, sha)
            if raw is None:
                continue
            # Named by content so that each file is its own, whatever the run's paths look like.
            local[sha] = Path(tmp) / f"{sha}{posixpath.splitext(path)[1].lower()}"
            local[sha].write_bytes(raw)
            if sha not in in_depth:
                texts[sha] = raw.decode("utf-8", "replace")
        deep = in_depth & set(local)
        labels = _classify(deep, local, store, jobs)
        waiting = {sha: possible_routes(texts[sha]) for sha in set(local) - deep}
        while waiting:
            shown = {label for c in labels.values() for s in c.stages if (label := _label(s)) is not None}
            wanted = {sha for sha, could in waiting.items() if could - shown}
            # a round per unfound route: the first few files that could show it (the rest may not need it)
            chosen = set().union(
                *(
                    sorted(sha for sha in wanted if route in waiting[sha])[:ROUND]
                    for route in ALL_ROUTES - shown
                )
            )
            if not chosen:
                break
            labels.update(_classify(chosen, local, store, jobs))
            waiting = {sha: could for sha, could in waiting.items() if sha not in chosen}
        return _in_workspaces(record, labels, local, store, jobs)


def _in_workspaces(
    record: RunRecord,
    labels: dict[str, Classification],
    local: dict[str, Path],
    store: RunStore | None,
    jobs: int,
) -> dict[str, Classification]:
    """Classify each Python file in its workspace: the revision in which its content last stood.

    A script that calls the run's own modules (``from trainer import MyTrainer``) gets the stages of
    the code it calls, as that revision held it (:mod:`arb_audit.analyzer.workspace`). Modules it
    uses that were not classified yet are classified first.
    """
    in_force: dict[str, int] = {}  # blob -> index of the last revision holding it
    for i, revision in enumerate(record.revisions):
        for f in revision.files:
            if f.blob_sha in labels and f.path.endswith(".py"):
                in_force[f.blob_sha] = i
    texts: dict[str, str | None] = {}

    def text(sha: str) -> str | None:
        if sha not in texts:
            path = local.get(sha)
            try:
                texts[sha] = path.read_text("utf-8", "replace") if path is not None else None
            except OSError:
                texts[sha] = None
        return texts[sha]

    resolved = dict(labels)
    for i in sorted(set(in_force.values())):
        files = {f.path: f.blob_sha for f in record.revisions[i].files if f.blob_sha in local}
        here = {path for path, sha in files.items() if in_force.get(sha) == i}
        index = module_index(sorted(files))
        read = {
            path: uses(path, t, index)
            for path in here
            if not keeps_own(resolved[files[path]]) and (t := text(files[path])) is not None
        }
        used = _used_modules(read, partial(_text_at, text, files), index)
        wanted = {files[m] for m in used if m in files and files[m] not in resolved}
        resolved.update(_classify(wanted, local, store, jobs))
        by_path = {path: resolved[sha] for path, sha in files.items() if sha in resolved}
        shown = in_workspace(by_path, partial(_text_at, text, files), only=here, read=read)
        for path, result in shown.items():
            if result is not by_path[path]:
                resolved[files[path]] = result
    return resolved


def _used_modules(
    read: dict[str, list[Use]], text_of: Callable[[str], str | None], index: dict[str, str]
) -> set[str]:
    """Return the workspace modules the files in ``read`` use.

    A name taken from a package's ``__init__`` is read where the package takes it from.
    """
    imports: dict[str, dict[str, tuple[str, str | None]]] = {}

    def imports_of(path: str) -> dict[str, tuple[str, str | None]]:
        if path not in imports:
            t = text_of(path)
            imports[path] = bindings(path, t, index) if t is not None else {}
        return imports[path]

    return {
        (reexport(u.module, u.symbol, imports_of) if u.symbol else None) or u.module
        for found in read.values()
        for u in found
    }


def _text_at(text: Callable[[str], str | None], files: dict[str, str], path: str) -> str | None:
    return text(files[path])


def _label(stage: Stage) -> str | None:
    return label_of(stage.kind, stage.on_policy, stage.interactive)


def _in_depth(record: RunRecord, blobs: dict[str, str], ran: set[str]) -> set[str]:
    """Return the blobs analysed in depth whatever they hold.

    Those are the blobs commands ran, the last version of each file, and every file that is not Python
    (configs, shell scripts and notebooks are few, and their words are not the detectors').
    """
    last = {f.path: f.blob_sha for revision in record.revisions for f in revision.files if f.blob_sha}
    return {
        sha
        for sha, path in blobs.items()
        if sha in ran or last.get(path) == sha or kind_for(path) != "python"
    }


def _classify(
    shas: set[str], local: dict[str, Path], store: RunStore | None, jobs: int
) -> dict[str, Classification]:
    if not shas:
        return {}
    by_path = {local[sha]: sha for sha in shas}
    # the run's files lie in one folder: a launcher among them reads nothing outside it
    folder = next(iter(by_path)).parent
    return {
        by_path[Path(c.path)]: c
        for c in classify_many(sorted(by_path), jobs=jobs, cache=store, boundary=folder)
    }
