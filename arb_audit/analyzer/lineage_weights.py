"""Weight forensics on a lineage: each step's artifact against its parent, where both folders are at hand.

A trained step whose weights equal its parent's did nothing (a conflict with the code); an unexplained
step whose weights are the parent's is a ``copy``, or ``config_only`` when only the configuration or
chat template differs. Architecture and chat-template changes are the ``evaluator_tampering`` flag.
torch is optional: without it the lineage keeps its static and log evidence and says what it lacks.
"""

from __future__ import annotations

import importlib.util
import math
import os
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import polars as pl

from arb_audit.analyzer.routes import StageStep
from arb_audit.evidence import Evidence
from arb_audit.model import Flag, RunRecord
from arb_audit.regular_files import open_regular
from arb_audit.safetensors import HeaderError, read_header
from arb_audit.schema import WeightChange
from arb_audit.store_bounds import StoreError

if TYPE_CHECKING:
    from arb_audit.analyzer.weights import WeightDiff
    from arb_audit.store import RunStore

AVAILABLE = importlib.util.find_spec("torch") is not None
"""Whether weight forensics can run here (the ``weights`` extra installs torch)."""


def _folder(run_dir: Path, name: str | None, base_model: str | None, base_dir: Path | None) -> Path | None:
    """Return the folder holding model ``name``: the base model's given folder, or a folder of the run."""
    if name is None:
        return None
    if base_dir is not None and name == base_model:
        return base_dir
    try:
        candidate = (run_dir / name).resolve()
        inside = candidate.is_relative_to(run_dir.resolve())
        return candidate if inside and candidate.is_dir() and not (run_dir / name).is_symlink() else None
    except (OSError, ValueError):  # a name the agent wrote: too long for the file system, a NUL byte
        return None


class Weigher:
    """The weight comparisons of one audit, each pair once, in this process or in one of their own.

    In a process of their own (``separate``), torch is imported there (seconds) and the comparisons
    run while the audit goes on classifying code and reading its store; :meth:`start` has a pair
    compared ahead, :meth:`compare` waits for it (benchmarks/bench_audit.py).
    """

    def __init__(self, separate: bool = False) -> None:
        self.separate = separate
        """Whether comparisons run in a worker process."""
        self._pool: ProcessPoolExecutor | None = None
        self._made: dict[tuple[Path, Path], Future[WeightDiff]] = {}

    def __enter__(self) -> Weigher:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def warm(self) -> None:
        """Start the worker process now, importing torch there, while the audit reads the run."""
        if self.separate and AVAILABLE and self._pool is None:
            from arb_audit.analyzer.weights import import_torch

            self._pool = ProcessPoolExecutor(max_workers=1, initializer=import_torch)
            self._pool.submit(int)  # a worker starts with a task; this one has nothing to do

    def warm_for(self, record: RunRecord) -> None:
        """Start the worker now if the run will likely have weights to compare: code and model folders."""
        if record.revisions and any(a.exists and a.kind != "other" for a in record.artifacts):
            self.warm()

    def start(self, model: Path, reference: Path, trusted: bool) -> None:
        """Have ``model`` compared with ``reference`` (its config trusted, for the base model's folder)."""
        if (model, reference) in self._made:
            return
        from arb_audit.analyzer.weights import compare

        if not self.separate:
            done: Future[WeightDiff] = Future()
            try:
                done.set_result(compare(model, reference, trusted_reference=trusted))
            except Exception as exc:  # kept for compare() to raise, as a worker's would be
                done.set_exception(exc)
            self._made[(model, reference)] = done
            return
        self.warm()
        assert self._pool is not None
        try:
            made = self._pool.submit(compare, model, reference, trusted_reference=trusted)
        except BrokenProcessPool:  # a comparison killed the worker: the next one gets a new one
            self._pool = ProcessPoolExecutor(max_workers=1)
            made = self._pool.submit(compare, model, reference, trusted_reference=trusted)
        self._made[(model, reference)] = made

    def compare(self, model: Path, reference: Path, trusted: bool) -> WeightDiff:
        """Return how ``model``'s weights differ from ``reference``'s (raising what comparing raised)."""
        self.start(model, reference, trusted)
        return self._made[(model, reference)].result()


def weigh(
    steps: list[StageStep],
    run_dir: Path,
    base_model: str | None,
    base_dir: Path | None,
    weigher: Weigher | None = None,
) -> list[Flag]:
    """Compare each step's artifact with its parent; refine the steps; return the flags seen.

    ``weigher`` makes the comparisons (by default in this process) and keeps them across calls:
    lineages of several submissions share their early steps.
    """
    if not AVAILABLE:
        return []
    weigher = Weigher() if weigher is None else weigher
    flags: list[Flag] = []
    for step in steps:
        if not step.on_disk:
            continue  # a version since overwritten: its path holds another model now
        model = _folder(run_dir, step.artifact, base_model, base_dir)
        parent = _folder(run_dir, step.parent, base_model, base_dir)
        if model is None or parent is None or model == parent:
            continue  # a model trained in place has no parent left to compare with
        try:
            diff = weigher.compare(model, parent, trusted=parent == base_dir)
        except Exception as exc:
            # The folders are the agent's: whatever they hold costs this comparison, never the audit.
            step.weights = WeightChange(
                problems=[f"the weights could not be compared: {type(exc).__name__}: {exc}"[:300]]
            )
            continue
        step.weights = diff.summary()
        if diff.compared == 0:
            continue  # nothing comparable (unreadable, other formats): no conclusion either way
        pointer = Evidence(
            "artifact",
            path=step.artifact,
            excerpt=f"{len(diff.changed)} of {diff.compared} tensors changed against {step.parent}",
        )
        step.evidence.append(pointer)
        if diff.weights_identical:
            if step.kind == "unknown":
                step.kind = "config_only" if diff.config_changes else "copy"
                step.strength = "verified"
            elif step.kind not in ("copy", "config_only"):
                step.conflicts.append(
                    f"its weights equal those of {step.parent}: the {step.kind} changed nothing"
                )
                step.strength = "conflicting"
            elif step.strength == "supported":
                step.strength = "verified"  # a copy whose weights equal its source's
        elif step.kind == "copy":
            step.conflicts.append(f"called a copy, but {len(diff.changed)} tensors differ from {step.parent}")
            step.kind, step.strength = "unknown", "conflicting"
        elif step.kind != "unknown" and step.strength == "supported":
            step.strength = "verified"  # the stage's code ran and its weights moved
        if diff.config_changes:
            flags.append(
                Flag(
                    "evaluator_tampering",
                    f"{step.artifact} differs from {step.parent} in " + "; ".join(diff.config_changes),
                    [pointer],
                )
            )
    return flags


def tensor_changes(diff: WeightDiff, names: list[str]) -> dict[str, float | None]:
    """Return each of ``names`` (a model's tensors) that ``diff`` tells about, with its relative change.

    A changed tensor gets ‖a − b‖ / ‖b‖ (None where that has no finite value, as in the audit's JSON);
    the others get 0.0 only when the counts show each was compared and found equal, since the diff
    names only the tensors that differ.
    """
    changed = {n: (c if math.isfinite(c) else None) for n, c in diff.changed}
    found = {n: changed[n] for n in names if n in changed}
    unmatched = set(diff.added) | set(diff.retyped)
    rest = {n for n in names if n not in changed and n not in unmatched}
    if not diff.problems and len(rest) == diff.identical:
        found.update(dict.fromkeys(sorted(rest), 0.0))
    return found


def _graded_now(record: RunRecord) -> dict[str, str]:
    """Return artifact id → path for graded content that is still what its path holds.

    Of a path graded several times only the last content can still be there; a path flagged as
    overwritten after grading, or whose content now hashes otherwise, holds none of it.
    """
    overwritten = {
        e.submission_seq for f in record.flags if f.flag == "artifact_overwritten" for e in f.evidence
    }
    now = {a.path: a.artifact_id for a in record.artifacts if a.artifact_id}
    last: dict[str, tuple[str, int]] = {}
    for s in record.submissions:
        if s.status == "scored" and s.artifact_path and s.artifact_id:
            last[s.artifact_path] = (s.artifact_id, s.seq)
    return {
        artifact_id: path
        for path, (artifact_id, seq) in last.items()
        if seq not in overwritten and now.get(path, artifact_id) == artifact_id
    }


Layout = dict[str, tuple[str, str, list[int]]]
"""Tensor name → (file, dtype, shape), as a model folder's safetensors headers list them."""


def _layout(folder: Path) -> Layout:
    """Return tensor name → (file, dtype, shape) from the safetensors headers of a model folder."""
    found: Layout = {}
    for path in sorted(folder.glob("*.safetensors")):
        if path.is_symlink() or not path.is_file():
            continue  # the folder is the agent's: only its own regular files are read
        try:
            with open_regular(path) as handle:
                header = read_header(handle, os.fstat(handle.fileno()).st_size)
        except (OSError, HeaderError):
            continue
        for t in header.tensors:
            found.setdefault(t.name, (path.name, t.dtype, list(t.shape)))
    return found


_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "artifact_id": pl.String,
    "file_path": pl.String,
    "name": pl.String,
    "dtype": pl.String,
    "shape": pl.List(pl.Int32),
    "rel_change": pl.Float64,
}


def _save_changes(
    store: RunStore, artifact_id: str, changes: dict[str, float | None], layout: Layout
) -> None:
    """Write the changes: into the rows a kept manifest holds, else into rows of the audit's own.

    The audit's own rows have no content hash (it does not hash tensors); an audit run again
    replaces them.
    """
    con = store.con
    con.execute("DELETE FROM tensors WHERE artifact_id = ? AND content_hash IS NULL", [artifact_id])
    # only the names compared are asked for: the store may be the run folder's, holding any number
    kept = {
        row[0]
        for row in con.execute(
            "SELECT DISTINCT name FROM tensors WHERE artifact_id = ?"
            " AND name IN (SELECT unnest(?::VARCHAR[]))",
            [artifact_id, list(changes)],
        ).fetchall()
    }
    rows = []
    for name, change in changes.items():
        file, dtype, shape = layout.get(name) or (None, None, None)
        rows.append((artifact_id, file, name, dtype, shape, change))
    con.register("_arb_rel_change", pl.DataFrame(rows, schema=_SCHEMA, orient="row"))
    try:
        con.execute(
            "UPDATE tensors SET rel_change = c.rel_change FROM _arb_rel_change c"
            " WHERE tensors.artifact_id = ? AND tensors.name = c.name",
            [artifact_id],
        )
        new = [name for name in changes if name not in kept]
        if new:
            con.execute(
                "INSERT INTO tensors (artifact_id, file_path, name, dtype, shape, rel_change)"
                " SELECT artifact_id, file_path, name, dtype, shape, rel_change FROM _arb_rel_change"
                " WHERE name IN (SELECT unnest(?::VARCHAR[]))",
                [new],
            )
    finally:
        con.unregister("_arb_rel_change")


def likely_pairs(record: RunRecord, run_dir: Path, base_dir: Path | None) -> list[tuple[Path, Path, bool]]:
    """Return (model, reference, trusted) pairs an audit will likely compare, known before its lineage.

    Each graded artifact against the base model (its tensors' changes are stored), and against the
    model its own config names as where it started (most often its lineage's parent).
    """
    pairs = [(model, base, base == base_dir) for _, model, base in against_base(record, run_dir, base_dir)]
    if not AVAILABLE:
        return pairs
    graded = {s.artifact_path for s in record.submissions if s.status == "scored"}
    for artifact in record.artifacts:
        if artifact.path not in graded:
            continue
        model = _folder(run_dir, artifact.path, record.run.base_model, base_dir)
        parent = _folder(run_dir, artifact.parent_ref, record.run.base_model, base_dir)
        if model is not None and parent is not None and model != parent:
            pairs.append((model, parent, parent == base_dir))
    return pairs


def against_base(record: RunRecord, run_dir: Path, base_dir: Path | None) -> list[tuple[str, Path, Path]]:
    """Return (artifact id, its folder, the base model's folder) of each graded artifact still at hand.

    Empty without torch or without the base model's folder (given, or in the run folder).
    """
    base_model = record.run.base_model
    base = _folder(run_dir, base_model, base_model, base_dir)
    if not AVAILABLE or base is None:
        return []
    pairs = []
    for artifact_id, path in _graded_now(record).items():
        model = _folder(run_dir, path, base_model, base_dir)
        if model is not None:
            pairs.append((artifact_id, model, base))
    return pairs


def record_tensor_changes(
    store: RunStore,
    record: RunRecord,
    run_dir: Path,
    base_dir: Path | None,
    weigher: Weigher | None = None,
) -> int:
    """Store ``tensors.rel_change`` of each graded artifact: each tensor's change against the base model.

    Needs the base model's folder (given, or in the run folder) and torch; ``weigher`` shares the
    comparisons the lineages made. The tensors are those of the manifest the store keeps of the
    artifact, else those its safetensors headers list. Returns how many tensors were stored.
    """
    pairs = against_base(record, run_dir, base_dir)
    if not pairs:
        return 0
    weigher = Weigher() if weigher is None else weigher
    stored = 0
    for artifact_id, model, base in pairs:
        try:
            # a manifest another wrote (a store planted in the run folder) names no tensors here
            manifest = store.keyed_manifest(artifact_id)
        except (StoreError, duckdb.Error):
            manifest = None
        layout = _layout(model)
        names = [t.name for f in manifest.files for t in f.tensors] if manifest else list(layout)
        try:
            changes = tensor_changes(weigher.compare(model, base, trusted=base == base_dir), names)
        except Exception:
            continue  # the folder is the agent's: the lineage's own comparison names what went wrong
        if changes:
            _save_changes(store, artifact_id, changes, layout)
            stored += len(changes)
    return stored
