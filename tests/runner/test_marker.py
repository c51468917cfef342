"""recording.json is read once into a typed Marker: a field that cannot be used is named, the rest read."""

from __future__ import annotations

import json
from pathlib import Path

from arb_audit.model import TaskDescription
from arb_audit.runner.layout import ANCHOR_NAME, RECORDING_MARKER, Marker, parse_marker, read_marker


def test_a_well_formed_marker_reads_into_its_fields() -> None:
    marker = parse_marker(
        {
            "run_id": "recorded:tiny-1a2b",
            "workspace_relative": "../workspace",
            "workspace": "/home/u/workspace",
            "task_description": {"level": 2, "n_eval": 400, "intended": "sft"},
            "anchor": ANCHOR_NAME,
            "agent": ["claude", "-p"],  # what was run: written, read by no reader
        }
    )
    assert marker == Marker(
        run_id="recorded:tiny-1a2b",
        workspace_relative="../workspace",
        workspace="/home/u/workspace",
        task_description=TaskDescription(RECORDING_MARKER, level=2, n_eval=400, intended="sft"),
        anchored=True,
        workspace_named=True,
    )


def test_each_field_that_cannot_be_used_is_named_and_the_rest_is_read() -> None:
    marker = parse_marker(
        {
            "run_id": 5,
            "workspace_relative": "../workspace",
            "workspace": "relative/path",
            "task_description": {"level": "one"},
            "anchor": ["ledger.anchor"],
        }
    )
    assert (marker.run_id, marker.workspace, marker.task_description, marker.anchored) == (
        None,
        None,
        None,
        False,
    )
    assert marker.workspace_relative == "../workspace" and marker.workspace_named
    assert marker.problems == {
        "run_id": "its run_id is a JSON number, not a run id; not used",
        "workspace": "workspace (recording.json) 'relative/path' is not an absolute path; not used",
        "task_description": "its task_description cannot be used (level must be a positive integer):"
        " the task is not described",
        "anchor": "its anchor is a JSON list, not ledger.anchor; not used (were the anchor gone, the"
        " recording would read as one made before anchors)",
    }
    too_long = parse_marker({"run_id": "r" * 201, "workspace_relative": "/etc"})
    assert too_long.run_id is None and "201 characters, over 200" in too_long.problems["run_id"]
    assert (
        too_long.problems["workspace_relative"] == "workspace_relative '/etc' is an absolute path; not used"
    )


def test_read_marker_gives_the_typed_record_or_why_not(tmp_path: Path) -> None:
    (tmp_path / RECORDING_MARKER).write_text(json.dumps({"run_id": "r1", "anchor": ANCHOR_NAME}))
    assert read_marker(tmp_path) == (Marker(run_id="r1", anchored=True), None)
    (tmp_path / RECORDING_MARKER).write_text("[1, 2]")
    assert read_marker(tmp_path) == (None, "holds a JSON list, not an object")
