"""Where a recording keeps its files (read by the recorder, the verifier and the `recorded` collector).

Kept apart from the recorder so that reading a recording imports none of the recording machinery.
"""

from __future__ import annotations

from pathlib import Path

RECORDING_MARKER = "recording.json"
"""The file that marks a folder as an arb-audit recording (and says what was recorded)."""
STORE_NAME = "run.duckdb"
"""The recording's run store, inside the recording folder."""


def is_recording(run_dir: Path) -> bool:
    """Tell whether ``run_dir`` is a folder written by ``arb-audit record``."""
    return (run_dir / RECORDING_MARKER).is_file() and (run_dir / STORE_NAME).is_file()


AGENT_OUTPUT = "agent.log"
"""The agent's stdout and stderr; a transcript when the agent prints one (Claude Code ``stream-json``)."""
