"""Errors of the harness, not of the agent's work: its provider refusing it, its grader failing to run.

A run that died on ``Invalid API key`` or whose every evaluation failed to start the grader's server
failed for a reason outside the agent's code (TAXONOMY.md ``harness_failure``). Collectors find such
messages in the files they read and list them in the run's ``extra["harness_errors"]``, each quoting
the harness's own words; the audit decides the failure from that list only.
"""

from __future__ import annotations

import re
from typing import Any, Literal

HarnessStage = Literal["agent", "evaluation"]
"""agent: the agent could not start or was stopped by its provider; evaluation: the grader failed."""

MAX_MESSAGE_CHARS = 300
"""Longest quote kept of a harness message."""
MAX_LISTED = 10
"""Most harness errors listed for one run."""

PROVIDER_ERROR = re.compile(
    r"invalid[ _]api[ _]key|authentication[ _](?:failed|error)|\bunauthori[sz]ed\b|\b401\b"
    r"|please run /login|oauth token (?:has )?expired|credit balance is too low|insufficient[ _]quota"
    r"|quota exceeded|usage limit|spending limit|billing[ _]error|\boverloaded(?:_error)?\b|\b529\b",
    re.IGNORECASE,
)
"""Messages of a model provider refusing or failing the agent (authentication, quota, billing, outage)."""

GRADER_INFRA_ERROR = re.compile(
    r"Failed to start vLLM server|vLLM server (?:failed|did not start|exited)", re.IGNORECASE
)
"""Messages of the benchmark's grader failing to bring up its own evaluation infrastructure."""


def provider_error(text: str | None) -> bool:
    """Whether ``text`` is a model provider's refusal or outage, as the agent's CLI reports it."""
    return bool(text and PROVIDER_ERROR.search(text))


def grader_infra_error(text: str) -> str | None:
    """Return the grader's infrastructure error that ``text`` holds (the matching line), or None."""
    for line in text.splitlines():
        if GRADER_INFRA_ERROR.search(line):
            return line.strip()[:MAX_MESSAGE_CHARS]
    return None


def entry(stage: HarnessStage, path: str, message: str, line: int | None = None) -> dict[str, Any]:
    """One harness error as the run's ``extra["harness_errors"]`` lists it."""
    return {"stage": stage, "path": path, "line": line, "message": message[:MAX_MESSAGE_CHARS]}


def transcript_errors(summary: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Return the provider errors that ended sessions of a transcript (its ``extra["transcript"]``)."""
    if not summary:
        return []
    found = []
    for session in summary.get("sessions") or []:
        said = session.get("error")
        if provider_error(said):
            found.append(entry("agent", summary.get("path") or "?", said, session.get("line")))
    return found[:MAX_LISTED]
