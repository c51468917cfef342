"""Errors of the harness, not of the agent's work: its provider refusing it, its grader failing to run.

A run that died on ``Invalid API key`` or whose every evaluation failed to start the grader's server
failed for a reason outside the agent's code (TAXONOMY.md ``harness_failure``). Collectors find such
messages in the files they read and list them in the run's ``harness_errors``, each quoting
the harness's own words; the audit decides the failure from that list only.
"""

from __future__ import annotations

import re

from arb_audit.model import HarnessError, HarnessStage, TranscriptSummary

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


def entry(stage: HarnessStage, path: str, message: str, line: int | None = None) -> HarnessError:
    """One harness error as the run's ``harness_errors`` lists it (its message shortened)."""
    return HarnessError(stage, path, line, message[:MAX_MESSAGE_CHARS])


def transcript_errors(summary: TranscriptSummary | None) -> list[HarnessError]:
    """Return the provider errors that ended sessions of a transcript (the run's ``transcript``)."""
    if summary is None:
        return []
    found = [
        entry("agent", summary.path, session.error, session.line)
        for session in summary.sessions
        if session.error is not None and provider_error(session.error)
    ]
    return found[:MAX_LISTED]
