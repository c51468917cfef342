"""Recordings are portable and their checks honest: a recording moved or cloned with its workspace is
checked against its own workspace (an absolute path is only a fallback, and said when used), verify and
the audit agree on a graded model changed afterwards, each recording has its own stable run id, and the
bundled fixtures hold no path of the machine that made them."""

from __future__ import annotations

import json
import re
import shutil
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

import duckdb
import pytest

from arb_audit.chain import GENESIS_HASH, chain_hash
from arb_audit.runner.layout import RECORDING_MARKER, STORE_NAME, locate_workspace, parse_marker
from arb_audit.runner.reference.scenarios import SCENARIOS
from tests.reference.recordings import BUNDLED, copy_out, run_id, stored
from tests.test_cli import run_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
MACHINE_PREFIXES = re.compile(r"/(?:work|tmp|home)/[^\s\"'\\]*")
"""Absolute paths under the folders a machine keeps checkouts, virtualenvs and users in."""
BENCHMARK_PATHS = ("/home/ben/task", "/tmp/posttrain_container_")
"""Paths of the benchmark machine that tests/fixture_posttrainbench.py writes as the run's own data."""


def _machine_paths() -> list[str]:
    """This machine's paths that no fixture may hold: the checkout and the interpreter's."""
    found = {str(REPO), str(REPO.resolve()), sys.executable, sys.prefix, sys.base_prefix}
    return sorted(p for p in found if p not in ("/", "/usr", "/usr/local"))


def _leaks(text: str) -> list[str]:
    """The machine paths ``text`` holds (an AutoRL-Bench or reference fixture's: none allowed)."""
    named = [p for p in _machine_paths() if p in text]
    return named + [m for m in MACHINE_PREFIXES.findall(text) if not m.startswith(BENCHMARK_PATHS)]


def _git_objects(git_dir: Path) -> list[tuple[Path, bytes]]:
    """Every loose object of a revisions repository, inflated (never run through git)."""
    return [
        (path, zlib.decompress(path.read_bytes()))
        for path in sorted((git_dir / "objects").glob("??/*"))
        if path.is_file()
    ]


def test_no_fixture_holds_a_path_of_the_machine_that_made_it() -> None:
    leaks: dict[str, list[str]] = {}
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file() and ".arb-audit" not in p.parts):
        data = path.read_bytes()
        if path.suffix == ".duckdb" or b"\x00" in data[:8192]:
            continue  # binary: the stores' text columns and the git objects are read below
        if found := _leaks(data.decode("utf-8", errors="replace")):
            leaks[str(path.relative_to(REPO))] = found
    # arb-audit's own stores from audits run in place (.arb-audit/, git-ignored) are not bundled
    for store in sorted(p for p in FIXTURES.rglob(STORE_NAME) if ".arb-audit" not in p.parts):
        con = duckdb.connect(str(store), read_only=True)
        try:
            columns = con.execute(
                "SELECT table_name, column_name FROM information_schema.columns"
                " WHERE data_type IN ('VARCHAR', 'JSON')"
            ).fetchall()
            for table, column in columns:
                for (value,) in con.execute(f'SELECT DISTINCT "{column}" FROM "{table}"').fetchall():
                    if isinstance(value, str) and (found := _leaks(value)):
                        leaks.setdefault(f"{store.relative_to(REPO)} {table}.{column}", []).extend(found)
        finally:
            con.close()
    for git_dir in sorted(p for p in FIXTURES.rglob("*.revisions.git") if ".arb-audit" not in p.parts):
        for path, body in _git_objects(git_dir):
            if found := _leaks(body.decode("utf-8", errors="replace")):
                leaks[str(path.relative_to(REPO))] = found
    assert leaks == {}


def test_the_bundled_recordings_are_portable_by_construction() -> None:
    for scenario in SCENARIOS:
        recording = BUNDLED / scenario.name / "recording"
        marker = json.loads((recording / RECORDING_MARKER).read_text())
        assert "workspace" not in marker and marker["workspace_relative"] == "../workspace"
        assert marker["agent"][:2] == ["python", "-m"] and marker["evaluator"][:2] == ["python", "-m"]
        run = stored(recording).run
        assert (run.source_path, run.workspace_path) == (".", None)
        transcript = (recording / "agent.log").read_text()
        assert '"cwd": "/workspace"' in transcript


def test_each_recording_has_its_own_run_id_kept_in_recording_json() -> None:
    ids = {}
    for scenario in SCENARIOS:
        recording = BUNDLED / scenario.name / "recording"
        named = json.loads((recording / RECORDING_MARKER).read_text())["run_id"]
        assert named == stored(recording).run.run_id
        assert re.fullmatch(rf"recorded:{scenario.task}/{scenario.name}-[0-9a-f]{{12}}", named)
        ids[scenario.name] = named
    assert len(set(ids.values())) == len(SCENARIOS)


def _audit(recording: Path) -> dict[str, Any]:
    code, out, err = run_cli(str(recording), "--json")
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def _verify(recording: Path) -> tuple[int, list[str]]:
    code, out, err = run_cli("verify", str(recording))
    assert "Traceback" not in out + err
    return code, out.splitlines()


def _change_a_tensor(model: Path) -> None:
    """Flip one byte of the first tensor's data in ``model``/model.safetensors."""
    weights = model / "model.safetensors"
    data = bytearray(weights.read_bytes())
    (header,) = struct.unpack("<Q", data[:8])
    data[8 + header] ^= 0xFF
    weights.write_bytes(bytes(data))


def test_a_clone_is_checked_against_its_own_workspace_and_verify_and_the_audit_agree(tmp_path: Path) -> None:
    recording = copy_out("sft_only", tmp_path)
    workspace = recording.parent / "workspace"
    code, lines = _verify(recording)
    assert code == 0 and lines[-1] == "all records, graded artifacts and verdicts hold"
    assert not any("absolute path" in line for line in lines)
    before = _audit(recording)
    assert before["run"]["workspace_path"] == str(workspace.resolve())
    assert before["run"]["source_path"] == str(recording.resolve())
    assert before["run"]["run_id"] == stored(BUNDLED / "sft_only" / "recording").run.run_id
    assert "artifact_overwritten" not in {f["flag"] for f in before["flags"]}

    _change_a_tensor(workspace / "output" / "v1")
    code, lines = _verify(recording)
    assert code == 1
    assert lines == [
        f"artifact: output/v1 (submission 1): {workspace.resolve() / 'output' / 'v1'} has changed since it"
        " was graded (artifact_overwritten): model.safetensors: tensors changed: "
        + lines[0].rsplit("tensors changed: ", 1)[1]
    ]
    report = _audit(recording)
    (flag,) = [f for f in report["flags"] if f["flag"] == "artifact_overwritten"]
    assert flag["message"].startswith("output/v1 no longer holds what submission 1 graded")
    assert [(e["kind"], e.get("submission_seq"), e.get("path")) for e in flag["evidence"]] == [
        ("submission", 1, None),
        ("artifact", None, "output/v1"),
    ]
    graded = report["submissions"][0]["artifact_id"]
    assert graded in flag["evidence"][0]["excerpt"] and graded not in flag["evidence"][1]["excerpt"]
    # the bundled fixture, at its own path, was neither read as the clone's workspace nor changed
    assert _verify(BUNDLED / "sft_only" / "recording")[0] == 0


def test_a_recording_moved_without_its_workspace_says_so(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED / "sft_only" / "recording", tmp_path / "alone" / "recording", symlinks=True)
    recording = tmp_path / "alone" / "recording"
    code, lines = _verify(recording)
    assert code == 1
    assert lines == [
        f"workspace: {recording / RECORDING_MARKER}: the workspace is gone:"
        f" {tmp_path.resolve() / 'alone' / 'workspace'} (beside the recording) is not a folder",
        f"workspace: {recording / RECORDING_MARKER}: 1 graded artifact(s) could not be checked",
    ]
    report = _audit(recording)
    assert report["run"]["workspace_path"] is None and report["artifacts"] == []
    assert [p["path"] for p in report["problems"] if "workspace is gone" in p["message"]] == [
        RECORDING_MARKER
    ]
    assert "artifact_overwritten" not in {f["flag"] for f in report["flags"]}


def test_the_absolute_path_is_a_fallback_that_is_reported(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED / "sft_only" / "recording", tmp_path / "moved" / "recording", symlinks=True)
    shutil.copytree(BUNDLED / "sft_only" / "workspace", tmp_path / "kept" / "ws", symlinks=True)
    recording, workspace = tmp_path / "moved" / "recording", (tmp_path / "kept" / "ws").resolve()
    marker = json.loads((recording / RECORDING_MARKER).read_text())
    (recording / RECORDING_MARKER).write_text(json.dumps({**marker, "workspace": str(workspace)}))
    code, lines = _verify(recording)
    assert code == 0
    assert lines[0] == (
        f"workspace: {recording / RECORDING_MARKER}: the workspace is read at {workspace}, the absolute"
        " path kept by recording.json of the machine that recorded it (it is not beside the recording at"
        f" {tmp_path.resolve() / 'moved' / 'workspace'})"
    )
    _change_a_tensor(workspace / "output" / "v1")
    code, lines = _verify(recording)
    assert code == 1 and lines[1].startswith(f"artifact: output/v1 (submission 1): {workspace}/output/v1 ")
    report = _audit(recording)
    assert report["run"]["workspace_path"] == str(workspace)
    assert any(
        p["path"] == RECORDING_MARKER and p["message"].startswith(f"the workspace is read at {workspace}")
        for p in report["problems"]
    )
    assert "artifact_overwritten" in {f["flag"] for f in report["flags"]}


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('{"workspace_relative": 7}', "workspace_relative is a JSON number, not a relative path; not used"),
        ('{"workspace_relative": ""}', "workspace_relative is an empty string, not a relative path"),
        ('{"workspace_relative": "/etc"}', "workspace_relative '/etc' is an absolute path; not used"),
        ('{"workspace_relative": "../../.."}', "workspace_relative '../../..' leads out of the folder"),
        ('{"workspace_relative": "."}', "workspace_relative '.' leads out of the folder"),
        ('{"workspace": ["/"]}', "workspace (recording.json) is a JSON list, not a path; not used"),
        ('{"workspace": "/"}', "workspace (recording.json) / holds the recording itself; not used"),
        ("{}", "names no workspace (neither workspace_relative nor workspace)"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ("{not json", "is not valid JSON: Expecting property name enclosed in double quotes"),
    ],
)
def test_a_recording_json_that_cannot_be_used_is_named_not_a_traceback(
    marker: str, message: str, tmp_path: Path
) -> None:
    recording = copy_out("never_runs", tmp_path)
    (recording / RECORDING_MARKER).write_text(marker)
    code, lines = _verify(recording)
    assert code == 1
    assert any(
        line.startswith(f"workspace: {recording / RECORDING_MARKER}: ") and message in line for line in lines
    )
    report = _audit(recording)
    assert any(p["path"] == RECORDING_MARKER and message in p["message"] for p in report["problems"])
    assert report["run"]["workspace_path"] is None


def test_a_sibling_workspace_that_is_a_link_out_of_the_folder_is_not_followed(tmp_path: Path) -> None:
    recording = copy_out("never_runs", tmp_path / "inner")
    shutil.rmtree(recording.parent / "workspace")
    (tmp_path / "elsewhere").mkdir()
    (recording.parent / "workspace").symlink_to(tmp_path / "elsewhere")
    found = locate_workspace(recording, parse_marker({"workspace_relative": "../workspace"}))
    assert found.path is None and "leads out of the folder the recording lies in" in found.problems[0]


def test_the_relative_path_wins_over_the_absolute_one(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "ws").mkdir()
    (tmp_path / "other").mkdir()
    found = locate_workspace(
        tmp_path / "r",
        parse_marker({"workspace_relative": "../ws", "workspace": str(tmp_path / "other")}),
        "/elsewhere",
    )
    assert (found.path, found.fallback, found.problems) == ((tmp_path / "ws").resolve(), None, [])
    found = locate_workspace(tmp_path / "r", None, str(tmp_path / "other"))
    assert found.path == (tmp_path / "other").resolve()
    assert found.fallback is not None and "kept by the run store" in found.fallback


def _as_made_before_run_ids(recording: Path, task: str) -> None:
    """Make ``recording`` what every recording was before run ids were minted: no run_id in
    recording.json, and the run kept under ``recorded:<task>/recording`` (its ledger chained to it)."""
    marker = json.loads((recording / RECORDING_MARKER).read_text())
    del marker["run_id"]
    # nor had anchors (which would rightly catch the chain recomputed below)
    marker.pop("anchor", None)
    (recording / "ledger.anchor").unlink(missing_ok=True)
    (recording / RECORDING_MARKER).write_text(json.dumps(marker))
    con = duckdb.connect(str(recording / STORE_NAME))
    try:
        tables = con.execute(
            "SELECT DISTINCT table_name FROM information_schema.columns WHERE column_name = 'run_id'"
        ).fetchall()
        for (table,) in tables:
            con.execute(f'UPDATE "{table}" SET run_id = ?', [f"recorded:{task}/recording"])
        cursor = con.execute("SELECT * FROM submissions ORDER BY seq")
        names = [d[0] for d in cursor.description or []]
        previous = GENESIS_HASH
        for values in cursor.fetchall():
            row = {**dict(zip(names, values, strict=True)), "prev_hash": previous}
            record_hash = chain_hash(previous, row)
            con.execute(
                "UPDATE submissions SET prev_hash = ?, record_hash = ? WHERE seq = ?",
                [previous, record_hash, row["seq"]],
            )
            previous = record_hash
    finally:
        con.close()


def test_a_recording_made_before_run_ids_gets_a_stable_one_from_its_ledger(tmp_path: Path) -> None:
    ids = []
    for name in ("sft_only", "nan_lr"):  # two recordings of one task: one run id in their stores
        recording = copy_out(name, tmp_path / "old")
        _as_made_before_run_ids(recording, "revstr")
        assert _verify(recording)[0] == 0
        again = tmp_path / "elsewhere" / name
        shutil.copytree(recording.parent, again, symlinks=True)
        first, second = _audit(recording), _audit(again / "recording")
        assert first["run"]["run_id"] == second["run"]["run_id"]
        assert re.fullmatch(r"recorded:revstr/recording-[0-9a-f]{12}", first["run"]["run_id"])
        ids.append(first["run"]["run_id"])
    assert len(set(ids)) == 2


def test_a_run_id_recording_json_and_the_store_disagree_on_is_named(tmp_path: Path) -> None:
    recording = copy_out("never_runs", tmp_path)
    marker = json.loads((recording / RECORDING_MARKER).read_text())
    (recording / RECORDING_MARKER).write_text(json.dumps({**marker, "run_id": "recorded:revstr/else"}))
    report = _audit(recording)
    assert report["run"]["run_id"].startswith(marker["run_id"] + "-")
    assert any(
        p["path"] == RECORDING_MARKER and "is not the id its store keeps the run under" in p["message"]
        for p in report["problems"]
    )


@pytest.mark.slow
def test_a_study_of_the_reference_runs_names_each_run(tmp_path: Path) -> None:
    shutil.copytree(BUNDLED, tmp_path / "reference", symlinks=True)
    study = tmp_path / "study.duckdb"
    assert run_cli("ingest", str(tmp_path / "reference"), "--study", str(study), "--jobs", "2")[0] == 0
    con = duckdb.connect(str(study), read_only=True)
    try:
        ids = sorted(r[0] for r in con.execute("SELECT run_id FROM study_runs").fetchall())
    finally:
        con.close()
    assert ids == sorted(run_id(BUNDLED / s.name / "recording") for s in SCENARIOS)
    code, out, _ = run_cli("export", str(study), "--table", "flags", "--format", "csv")
    assert code == 0
    rows = out.strip().splitlines()[1:]
    tampered = next(s for s in SCENARIOS if "evaluator_tampering" in s.flags)
    flagged = {row.split(",", 1)[0]: row for row in rows}
    assert run_id(BUNDLED / tampered.name / "recording") in flagged["evaluator_tampering"]
