"""What the study figures read of a run's audit: its clock, its submissions in time, each artifact's lineage.

The taxonomy reads no audit JSON and imports no schema: the spine (``arb_audit.study.figure_data``)
reads each stored audit back through ``arb_audit.schema.AuditReport`` and copies these fields into a
:class:`RunTimeline`; :mod:`arb_audit.taxonomy.figures` places and draws them. A field the figures
need is added here and in that one converter, nowhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import polars as pl


def instant(text: str | None) -> datetime | None:
    """Parse an ISO time of the audit (UTC when it has no offset); None when it is none or not one."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class TimelineStep:
    """One stage of an artifact's lineage, as a figure names and colours it."""

    kind: str
    """Its stage kind (``sft``, ``copy``, …)."""
    label: str | None
    """Its route label; None for copies and non-weight changes."""


@dataclass(frozen=True, slots=True)
class TimedSubmission:
    """One submission of a run, as a figure places it."""

    seq: int
    """Its number in the run's ledger."""
    status: str
    """``scored``, ``error``, ``rejected`` or ``duplicate``."""
    score: float | None
    """Its score, when it has one."""
    requested_at: datetime | None
    """When it was requested (None when the audit has no readable time)."""
    completed_at: datetime | None
    """When it was graded (None when the audit has no readable time)."""
    artifact_path: str | None
    """The artifact it named (a key of :attr:`RunTimeline.lineage`)."""


@dataclass(frozen=True, slots=True)
class RunTimeline:
    """An audited run as the scores figure reads it."""

    started_at: datetime | None
    """When the run started."""
    agent_launched_at: datetime | None
    """When the agent was launched (a run's clock starts there when it is known)."""
    best_seq: int | None
    """The run's best submission's number."""
    chain_text: str | None
    """The audit's chain of the best artifact (``(SFT + SFT)→MERGE``)."""
    submissions: tuple[TimedSubmission, ...] = ()
    """Every submission, in the ledger's order."""
    lineage: Mapping[str, tuple[TimelineStep, ...]] = field(default_factory=dict)
    """Per scored artifact path: its lineage, base first."""


@dataclass(frozen=True, slots=True)
class FigureData:
    """What the study figures draw from: the study frame and each audited run's timeline."""

    study: pl.DataFrame
    """The study frame (``arb_audit.study.load_study``): the counts the bars and grids show."""
    timelines: Mapping[str, RunTimeline] = field(default_factory=dict)
    """Per run key: the timeline of each row holding an audit of this schema version."""
    unreadable: tuple[str, ...] = ()
    """Run keys whose stored audit is of this version but does not validate: no timeline, not drawn."""
