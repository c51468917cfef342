"""A study's ingest: which runs it audits, and one row per run whatever each run's audit does.

``arb-audit ingest`` is this module called from the command line. The runs are found by
:func:`arb_audit.pipeline.discover_runs`; a mapping file sets cell keys by glob; a run already
ingested and unchanged since (same files, same mapping) is not audited again. Every other run is
audited in a worker process under its own deadline (:mod:`arb_audit.study_workers`) and its row is
saved as soon as its audit ends, so an ingest interrupted, or one with a run that hangs, keeps every
row that was done. A run stopped at its deadline, whose worker died, or in flight when the ingest was
interrupted gets a row saying so, without a fingerprint: the next ingest audits it again.
"""

from __future__ import annotations

import fnmatch
import json
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from arb_audit.store import RunStore
from arb_audit.study import CELL_KEYS, CellValue, fingerprints, row_from_audit, save_rows
from arb_audit.study_workers import RUN_DEADLINE_S, Outcome, audit_runs

Mapping = list[tuple[str, dict[str, CellValue]]]
"""A mapping file's rules: each glob with the cell keys it sets, in the file's order."""


class MappingError(ValueError):
    """A mapping file cannot be used; the message names it and says why."""


def read_mapping(path: Path | None) -> Mapping:
    """Read a mapping file: ``{glob: {task|level|scaffold|driver|mode|seed: value}}`` (YAML or JSON).

    A glob matches a run folder's path (absolute) or its name; later globs override earlier ones.
    Raises :class:`MappingError`.
    """
    import yaml

    if path is None:
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise MappingError(f"{path}: the mapping cannot be read: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise MappingError(f"{path}: the mapping must be {{glob: {{cell key: value}}}}")
    mapping = []
    for pattern, keys in data.items():
        unknown = set(keys) - set(CELL_KEYS)
        if unknown:
            names = ", ".join(sorted(map(str, unknown)))
            raise MappingError(f"{path}: {pattern}: {names} are not cell keys ({', '.join(CELL_KEYS)})")
        mapping.append((str(pattern), {k: _cell_value(path, pattern, k, v) for k, v in keys.items()}))
    return mapping


def _cell_value(path: Path, pattern: object, key: str, value: object) -> str | int | None:
    """Check one mapped cell key: ``level`` a whole number 0-99, the others a scalar kept as text."""
    if value is None:
        return None
    if key == "level":
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 99:
            raise MappingError(f"{path}: {pattern}: level {value!r} is not a whole number 0-99")
        return value
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise MappingError(f"{path}: {pattern}: {key} {value!r} is not a name or a number")
    return str(value)


def overrides_for(folder: Path, mapping: Mapping) -> dict[str, CellValue]:
    """Return the cell keys the mapping sets for ``folder``."""
    found: dict[str, CellValue] = {}
    for pattern, keys in mapping:
        if fnmatch.fnmatch(str(folder), pattern) or fnmatch.fnmatch(folder.name, pattern):
            found.update(keys)
    return found


@dataclass(frozen=True, slots=True)
class Planned:
    """A run to audit: its folder, the fingerprint its row will keep, and its mapped cell keys."""

    folder: Path
    fingerprint: str
    keys: dict[str, CellValue]


def plan(store: RunStore, runs: list[Path], mapping: Mapping) -> dict[str, Planned]:
    """Return the runs of ``runs`` to audit, by run key: those not ingested unchanged (files, mapping)."""
    import blake3

    from arb_audit.audit_cache import fingerprint

    known = fingerprints(store)
    todo: dict[str, Planned] = {}
    for folder in runs:
        keys = overrides_for(folder, mapping)
        print_ = blake3.blake3(
            (fingerprint(folder) + json.dumps(keys, sort_keys=True, default=str)).encode()
        ).hexdigest()
        if known.get(str(folder)) != print_:
            todo[str(folder)] = Planned(folder, print_, keys)
    return todo


@dataclass(slots=True)
class IngestSummary:
    """What an ingest did."""

    runs: int
    """Run folders found."""
    unchanged: int
    """Runs ingested before and unchanged since: not audited again."""
    audited: int = 0
    """Runs audited now, with an audit."""
    failed: list[tuple[str, str]] = field(default_factory=list)
    """Runs with no audit, each with why (stopped at the deadline, a worker died, an error)."""
    interrupted: bool = False
    """Whether the ingest was interrupted (Ctrl-C, SIGTERM): runs not begun have no row."""
    not_begun: int = 0
    """Runs to audit that were not begun when the ingest was interrupted."""


Progress = Callable[[Outcome, int, int], None]
"""Told each run's outcome as it ends, with how many have ended and how many there are."""


@contextmanager
def _terminate_interrupts() -> Iterator[None]:
    """Have SIGTERM interrupt like Ctrl-C while inside (the ingest then keeps what it did)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def ingest(
    study: Path,
    runs: list[Path],
    mapping: Mapping,
    *,
    jobs: int,
    deadline_s: float = RUN_DEADLINE_S,
    progress: Progress | None = None,
) -> IngestSummary:
    """Audit ``runs`` into the study store at ``study``: one row per run, saved as its audit ends.

    Runs ingested before and unchanged since are not audited again. Each run is audited in one of
    ``jobs`` worker processes with ``deadline_s`` seconds. Interrupted (Ctrl-C, SIGTERM), the ingest
    kills its workers, keeps every row saved so far (and one for each run in flight, saying so) and
    returns with ``interrupted`` set. Raises StoreError when the study store cannot be used.
    """
    with RunStore.open(study) as store:
        todo = plan(store, runs, mapping)
        summary = IngestSummary(runs=len(runs), unchanged=len(runs) - len(todo))
        ended: set[str] = set()

        def done(outcome: Outcome) -> None:
            planned = todo[outcome.key]
            row = row_from_audit(
                outcome.key, planned.fingerprint, outcome.report, outcome.error, planned.keys
            )
            if outcome.retry:  # stopped, killed or interrupted: no fingerprint, audited again next time
                row.fingerprint = None
            save_rows(store, [row])
            ended.add(outcome.key)
            if outcome.error is None:
                summary.audited += 1
            else:
                summary.failed.append((outcome.key, outcome.error))
            if progress is not None:
                progress(outcome, len(ended), len(todo))

        try:
            with _terminate_interrupts():
                audit_runs(list(todo), jobs, deadline_s, done)
        except KeyboardInterrupt:
            summary.interrupted = True
            summary.not_begun = len(todo) - len(ended)
    summary.failed.sort()
    return summary
