"""Every ledger edit is caught: a recording made here, then tampered with as code, then verified and audited.

One recording is made per module (the scripted agent: four answered submissions and a refused one);
each test edits a copy of it and asserts that `verify` names the edit and the audit flags
``ledger_broken``, and that harmless handling (reading the store) raises nothing.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from arb_audit.chain import GENESIS_HASH, chain_hash
from arb_audit.cli import main
from arb_audit.runner.anchor import NO_ANCHOR
from arb_audit.runner.layout import ANCHOR_NAME, RECORDING_MARKER, STORE_NAME
from tests.runner.test_record import HERE, RUN_ENV, record_argv


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A recording beside its workspace (made once), and the ledger head `record` printed."""
    root = tmp_path_factory.mktemp("anchored")
    workspace, run_dir = root / "ws", root / "recording"
    workspace.mkdir()
    done = subprocess.run(
        record_argv(workspace, run_dir, agent=[sys.executable, str(HERE / "scripted_agent.py")]),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env=RUN_ENV,
    )
    head = re.search(r"ledger head: submission 5, record hash ([0-9a-f]{64})", done.stdout)
    assert head is not None, done.stdout
    return root, head[1]


@pytest.fixture
def recording(recorded: tuple[Path, str], tmp_path: Path) -> Path:
    """A fresh copy of the recording (and its workspace), with the graded v1 put back as it was graded."""
    shutil.copytree(recorded[0], tmp_path / "copy", symlinks=True)
    from tests.runner.scripted_agent import checkpoint

    checkpoint(tmp_path / "copy" / "ws" / "output" / "v1", 1)  # the agent overwrote it after grading
    return tmp_path / "copy" / "recording"


def verify(run_dir: Path, *args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(main, ["verify", str(run_dir), *args])
    return result.exit_code, result.stdout.splitlines()


def ledger_flags(run_dir: Path) -> list[str]:
    result = CliRunner().invoke(main, [str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    return [f["message"] for f in json.loads(result.stdout)["flags"] if f["flag"] == "ledger_broken"]


def edit(run_dir: Path, *sql: str) -> None:
    con = duckdb.connect(str(run_dir / STORE_NAME))
    for statement in sql:
        con.execute(statement)
    con.close()


def rechain(run_dir: Path) -> None:
    """Recompute every record hash in seq order, as a forger who knows the chain's recipe would."""
    con = duckdb.connect(str(run_dir / STORE_NAME))
    cursor = con.execute("SELECT * FROM submissions ORDER BY seq")
    names = [d[0] for d in cursor.description or []]
    prev = GENESIS_HASH
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        row["prev_hash"] = prev
        new = chain_hash(prev, row)
        con.execute(
            "UPDATE submissions SET prev_hash = ?, record_hash = ? WHERE seq = ?", [prev, new, row["seq"]]
        )
        prev = new
    con.close()


def test_an_untouched_recording_holds_and_reading_it_changes_nothing(
    recording: Path, recorded: tuple[Path, str]
) -> None:
    assert json.loads((recording / RECORDING_MARKER).read_text())["anchor"] == ANCHOR_NAME
    lines = (recording / ANCHOR_NAME).read_text().splitlines()
    assert len(lines) == 6  # the start, then one per attempt
    con = duckdb.connect(str(recording / STORE_NAME), read_only=True)
    con.execute("SELECT * FROM submissions").fetchall()
    con.close()
    assert verify(recording, "--head", recorded[1])[0] == 0
    assert ledger_flags(recording) == []
    assert verify(recording)[0] == 0  # audited: still holds


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            ["DELETE FROM submissions WHERE seq = 5"],
            "ledger: submission 5: submission(s) 5 were anchored and are gone",
        ),
        (["DELETE FROM submissions"], "ledger: every submission: all 5 anchored submission(s) are gone"),
        (
            [
                "UPDATE submissions SET seq = 99 WHERE seq = 2",
                "UPDATE submissions SET seq = 2 WHERE seq = 3",
                "UPDATE submissions SET seq = 3 WHERE seq = 99",
            ],
            "ledger: submission 2: submission(s) 2, 3 no longer have the hash anchored",
        ),
    ],
    ids=["last-deleted", "all-deleted", "reordered"],
)
def test_deleted_and_reordered_rows_are_named(recording: Path, sql: list[str], expected: str) -> None:
    edit(recording, *sql)
    status, lines = verify(recording)
    assert status == 1 and any(line.startswith(expected) for line in lines), lines
    assert any(f.startswith(expected) for f in ledger_flags(recording))


def test_a_recomputed_chain_is_named(recording: Path, recorded: tuple[Path, str]) -> None:
    edit(recording, "UPDATE submissions SET score = 99 WHERE seq = 2")
    rechain(recording)
    status, lines = verify(recording)
    assert status == 1
    assert not any("no longer matches the hash chain" in line for line in lines)  # the chain holds...
    assert any(
        line.startswith("ledger: submission 2: submission(s) 2, 3, 4, 5 no longer have") for line in lines
    )
    assert any("no longer have the hash anchored" in f for f in ledger_flags(recording))
    assert any("the ledger's head is not" in line for line in verify(recording, "--head", recorded[1])[1])


def test_a_forged_append_with_its_chain_is_named(recording: Path) -> None:
    edit(
        recording,
        "INSERT INTO submissions SELECT * REPLACE (6 AS seq, 100.0 AS score) FROM submissions WHERE seq = 1",
    )
    rechain(recording)
    status, lines = verify(recording)
    assert status == 1
    assert any(
        line.startswith("ledger: submission 6: submission(s) 6 are not in the anchor") for line in lines
    )
    assert any("are not in the anchor" in f for f in ledger_flags(recording))


def test_a_deleted_manifest_is_named(recording: Path) -> None:
    edit(
        recording,
        "DELETE FROM artifact_files WHERE artifact_id = (SELECT artifact_id FROM submissions WHERE seq = 1)",
    )
    status, lines = verify(recording)
    assert status == 1
    assert any(
        line.startswith("manifest: output/v1 (submission 1): its kept manifest is gone") for line in lines
    )
    assert any("kept manifest is gone" in f for f in ledger_flags(recording))


def test_the_anchor_edited_or_deleted_is_named(recording: Path) -> None:
    anchor = recording / ANCHOR_NAME
    lines = anchor.read_text().splitlines()
    anchor.write_text("\n".join(lines[:2] + lines[3:]) + "\n")  # a middle line taken out
    status, out = verify(recording)
    assert status == 1 and any(
        line.startswith("anchor: ledger.anchor: line 3 no longer chains") for line in out
    )
    anchor.unlink()
    status, out = verify(recording)
    assert status == 1 and "anchor: ledger.anchor: is gone" in "\n".join(out)
    marker = json.loads((recording / RECORDING_MARKER).read_text())
    del marker["anchor"]  # as a recording made before anchors: said, not failed
    (recording / RECORDING_MARKER).write_text(json.dumps(marker))
    status, out = verify(recording)
    assert status == 0 and f"ledger: {NO_ANCHOR}" in out


def test_verify_does_not_hang_on_a_fifo_anchor(recording: Path) -> None:
    import os

    (recording / ANCHOR_NAME).unlink()
    os.mkfifo(recording / ANCHOR_NAME)
    done = subprocess.run(
        [sys.executable, "-m", "arb_audit", "verify", str(recording)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=RUN_ENV,
    )
    assert done.returncode == 1 and "anchor: ledger.anchor: cannot be read: it is a FIFO" in done.stdout
