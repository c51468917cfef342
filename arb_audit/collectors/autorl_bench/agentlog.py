"""AutoRL-Bench ``agent.log``: the agent wrapper's stdout, streamed.

CLI agents (codex, claude, gemini) write a header (``=== Codex CLI Agent ===``, ``Task:``, ``Model:``, ...),
then their JSON event stream, then a ``--- DIAGNOSTICS ---`` block and ``<X> CLI exited with code: N``.
Their wrappers pipe through ``tee`` without pipefail, so the exit code they print is tee's; that is
reported, not trusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from arb_audit.collectors.reading import RunFolder, text_int

AGENT_LOG = "agent.log"
TITLE = re.compile(r"^=== (?P<title>.+?) ===\s*$")
HEADER_FIELD = re.compile(
    r"^(?P<key>Task|Model|Workspace|Grading Server|Prompt length|Timeout|Agent)\s*:\s*(?P<v>.*)$"
)
CLI_EXIT = re.compile(r"^(?P<cli>.+?) exited with code:\s*(?P<code>-?\d+)")
MAX_DIAGNOSTICS = 64
"""Most DIAGNOSTICS keys kept (an unterminated block would otherwise take the rest of the log)."""
MAX_VALUE_CHARS = 4000
"""Longest header or DIAGNOSTICS value kept."""
HEADER_LINES = 60
"""Lines at the top of agent.log searched for the header."""


@dataclass(slots=True)
class AgentLog:
    """What agent.log says about the agent process."""

    title: str | None = None
    """The wrapper's title line (``Codex CLI Agent``)."""
    header: dict[str, str] = field(default_factory=dict)
    """Header fields (Task, Model, Workspace, Grading Server, Prompt length)."""
    diagnostics: dict[str, str] = field(default_factory=dict)
    """The DIAGNOSTICS block, key by key (multi-line values joined)."""
    cli_exit: int | None = None
    """The exit code the wrapper printed (tee's, under the wrappers' pipe)."""
    json_lines: int = 0
    """Lines that look like JSON events (the agent's transcript stream)."""
    lines: int = 0
    """Lines read."""


def read_agent_log(folder: RunFolder) -> AgentLog | None:
    """Stream agent.log; None when it is absent."""
    if folder.file(AGENT_LOG) is None:
        return None
    log = AgentLog()
    in_diag = False
    key: str | None = None
    for number, line in folder.lines(AGENT_LOG):
        log.lines = number
        stripped = line.strip()
        if stripped.startswith("{"):
            log.json_lines += 1
            continue
        if stripped == "--- DIAGNOSTICS ---":
            in_diag, key = True, None
            continue
        if stripped == "--- END DIAGNOSTICS ---":
            in_diag = False
            continue
        if in_diag:
            name, sep, value = stripped.partition(":")
            if sep and name and " " not in name.strip() and not line.startswith((" ", "\t")):
                key = name.strip()[:MAX_VALUE_CHARS]
                if key in log.diagnostics or len(log.diagnostics) < MAX_DIAGNOSTICS:
                    log.diagnostics[key] = value.strip()[:MAX_VALUE_CHARS]
            elif key in log.diagnostics and stripped and len(log.diagnostics[key]) < MAX_VALUE_CHARS:
                joined = f"{log.diagnostics[key]}\n{stripped}" if log.diagnostics[key] else stripped
                log.diagnostics[key] = joined[:MAX_VALUE_CHARS]
            continue
        if m := CLI_EXIT.match(stripped):
            log.cli_exit = text_int(m["code"])
        elif number <= HEADER_LINES:
            if (m := TITLE.match(stripped)) and log.title is None:
                log.title = m["title"][:MAX_VALUE_CHARS]
            elif m := HEADER_FIELD.match(stripped):
                log.header.setdefault(m["key"], m["v"].strip()[:MAX_VALUE_CHARS])
    return log
