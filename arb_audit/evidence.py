"""The Evidence pointer: every claim in an audit says where it can be checked."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

EvidenceKind = Literal["code", "command", "log", "artifact", "submission", "transcript", "file"]


@dataclass(frozen=True, slots=True)
class Evidence:
    """A pointer at the place that shows a claim, with a short excerpt a reviewer can read at once."""

    kind: EvidenceKind
    """What is pointed at: a code file at a revision, a command, a log line, an artifact, a submission,
    a transcript event, or a plain file of the run folder."""
    path: str | None = None
    """Path relative to the run folder (or inside the revision for ``code``)."""
    line: int | None = None
    """1-based first line, when the evidence is a line range of a text file."""
    end_line: int | None = None
    """1-based last line of the range; equal to ``line`` for a single line."""
    revision: str | None = None
    """Commit sha in the run's revisions.git, for ``code`` evidence."""
    submission_seq: int | None = None
    """Ledger sequence number, for ``submission`` evidence."""
    command_seq: int | None = None
    """Command sequence number, for ``command`` evidence."""
    excerpt: str = ""
    """A short excerpt (at most a few hundred characters) of what is there."""

    def to_json(self) -> dict[str, Any]:
        """Return the pointer as a JSON-ready dict without empty fields."""
        # Not dataclasses.asdict: it deep-copies, and a run can cite 100,000s of log lines.
        pairs = ((name, getattr(self, name)) for name in _FIELDS)
        return {k: v for k, v in pairs if v is not None and v != ""}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Evidence:
        """Rebuild a pointer written by :meth:`to_json`."""
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(Evidence))


def excerpt(text: str, limit: int = 240) -> str:
    """Shorten ``text`` to one readable line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
