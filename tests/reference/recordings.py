"""Reading a reference recording: the bundled one, copied out so audits never write into fixtures/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from arb_audit.model import RunRecord
from arb_audit.revisions import read_blob
from arb_audit.runner.layout import AGENT_OUTPUT, STORE_NAME
from arb_audit.store import RunStore

BUNDLED = Path(__file__).resolve().parents[2] / "fixtures" / "reference"


def copy_out(name: str, tmp_path: Path) -> Path:
    """Copy bundled scenario ``name`` (workspace and recording) under ``tmp_path``; return its recording."""
    shutil.copytree(BUNDLED / name, tmp_path / name, symlinks=True)
    return tmp_path / name / "recording"


def stored(recording: Path) -> RunRecord:
    """The recording's run, as the runner wrote it."""
    with RunStore.open(recording / STORE_NAME, read_only=True) as store:
        run_id = store.con.execute("SELECT run_id FROM runs").fetchone()
        assert run_id is not None
        return store.load_record(run_id[0])


def tool_calls(recording: Path) -> list[tuple[str, dict[str, Any]]]:
    """The agent's tool calls (name and input) from its transcript, in order."""
    calls = []
    for line in (recording / AGENT_OUTPUT).read_text().splitlines():
        _, _, text = line.partition("] ")
        event = json.loads(text) if text.startswith("{") else {}
        for block in event.get("message", {}).get("content", []) if event.get("type") == "assistant" else []:
            calls.append((block["name"], block["input"]))
    return calls


def deterministic_view(scenario_folder: Path) -> dict[str, Any]:
    """What recording a scenario twice must give alike: not times, scores, weights or timer revisions.

    The code trees (consecutive duplicates dropped: the timer may catch an output folder half saved),
    the agent's tool calls (their paths are the container's, ``/workspace/...``, on any machine), the
    ledger's attempts, the task data and what ``recording.json`` says but the run id (minted anew).
    """
    recording, workspace = scenario_folder / "recording", scenario_folder / "workspace"
    record = stored(recording)
    trees: list[dict[str, str]] = []
    for revision in record.revisions:
        code = {
            f.path: (read_blob(recording / "run.revisions.git", f.blob_sha) or b"").decode()
            for f in revision.files
            if f.path.startswith("code/") and f.blob_sha
        }
        if not trees or trees[-1] != code:
            trees.append(code)
    marker = json.loads((recording / "recording.json").read_text())
    return {
        "code_trees": trees,
        "tool_calls": tool_calls(recording),
        "attempts": [(s.model_path, s.status) for s in record.submissions],
        "data": {p.name: p.read_bytes() for p in sorted((workspace / "data").glob("*_*.jsonl"))},
        "recording": {k: v for k, v in marker.items() if k != "run_id"},
    }


def run_id(recording: Path) -> str:
    """The run id a bundled recording was minted (``recorded:<task>/<scenario>-<hex>``)."""
    return str(json.loads((recording / "recording.json").read_text())["run_id"])
