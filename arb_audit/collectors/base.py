"""The collector interface: one class per foreign run format."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from arb_audit.model import Problem, RunRecord


@dataclass(frozen=True, slots=True)
class CollectOptions:
    """Inputs that live outside the run folder."""

    results_csv: Path | None = None
    """AutoRL-Bench's global results.csv, to take this run's row from."""
    hash_artifacts: bool = False
    """Hash every model artifact found (BLAKE3; per tensor for safetensors) to give it its content id."""


@dataclass(slots=True)
class RunListing:
    """The run folders of one format found under a folder that is not itself a run (a results tree)."""

    runs: list[Path]
    """Run folders that count, in a stable order."""
    dropped: list[tuple[Path, str]]
    """Run folders that do not count under the benchmark's own rules, each with the reason."""
    problems: list[Problem]
    """What could not be listed."""


class Collector(ABC):
    """Reads one format of run folder into a :class:`RunRecord`.

    A collector never executes, imports or unpickles anything from the folder, never writes into it,
    and reports every bad input as a Problem naming the file.
    """

    name: ClassVar[str]
    """The registry name (the entry point's name)."""
    description: ClassVar[str]
    """One line saying which folders this collector reads."""

    @abstractmethod
    def detect(self, run_dir: Path) -> float:
        """Return how surely ``run_dir`` is of this format, from 0 (not at all) to 1 (certain)."""

    def runs_in(self, folder: Path) -> RunListing | None:
        """List the run folders under ``folder`` when it is a tree of this format's runs; None otherwise."""
        del folder
        return None

    @abstractmethod
    def collect(self, run_dir: Path, *, revisions_git: Path, options: CollectOptions) -> RunRecord:
        """Read ``run_dir``; code revisions go into ``revisions_git``."""
