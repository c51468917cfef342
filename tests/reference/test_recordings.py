"""The bundled reference recordings: facts known by construction hold, and the audit recovers each
scenario's stated chain, failure and quadrant."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arb_audit.collectors.base import CollectOptions
from arb_audit.collectors.recorded import RecordedCollector
from arb_audit.commands.demo import found
from arb_audit.model import RunRecord
from arb_audit.pipeline import audit
from arb_audit.runner.artifact_hash import hash_file
from arb_audit.runner.reference.scenarios import SCENARIOS, Run, Scenario, Write
from arb_audit.schema import AuditReport
from arb_audit.store import RunStore
from tests.reference.recordings import BUNDLED, copy_out, stored, tool_calls

NAMES = [s.name for s in SCENARIOS]


def _scenario(name: str) -> Scenario:
    return next(s for s in SCENARIOS if s.name == name)


def test_every_scenario_is_bundled_and_small() -> None:
    assert sorted(p.name for p in BUNDLED.iterdir() if p.is_dir() and p.name != "base") == sorted(NAMES)
    total = sum(p.stat().st_size for p in BUNDLED.rglob("*") if p.is_file())
    assert total < 30 * 1024 * 1024


@pytest.mark.parametrize("name", NAMES)
def test_recorded_facts_hold(name: str) -> None:
    scenario, recording = _scenario(name), BUNDLED / name / "recording"
    record = stored(recording)
    calls = tool_calls(recording)
    # every step became one tool call, in order (the budget scenario is cut inside its last command)
    assert [c[0] for c in calls] == ["Write" if isinstance(s, Write) else "Bash" for s in scenario.steps]
    assert [c[1].get("command") for c in calls if c[0] == "Bash"] == [
        s.command for s in scenario.steps if isinstance(s, Run)
    ]
    assert len(record.submissions) == scenario.submissions
    assert all(s.status == "scored" for s in record.submissions)
    written = {f"code/{Path(s.path).name}" for s in scenario.steps if isinstance(s, Write)}
    final_code = {f.path for f in record.revisions[-1].files if f.path.startswith("code/")}
    assert final_code == written
    # every graded model's weights differ from the base model's, but for the copies'
    base = hash_file(BUNDLED / name / "workspace" / "models" / "base" / "model.safetensors").digest
    for s in record.submissions:
        assert s.artifact_path is not None and s.artifact_id is not None
        weights = hash_file(BUNDLED / name / "workspace" / s.artifact_path / "model.safetensors").digest
        assert (weights == base) == (scenario.chain == "NO_TRAINING"), s.artifact_path


def _unbacked(report: AuditReport) -> list[str]:
    """Return the audit's claims that point at no evidence."""
    route, failure, quadrant = report.route, report.failure, report.quadrant
    missing = [f"step {s.kind} → {s.artifact}" for s in route.chain or [] if not s.evidence]
    cited = route.evidence
    for kind, labels, by_label in (
        ("attempted", route.attempted, cited.attempted if cited else {}),
        ("written", route.written, cited.written if cited else {}),
    ):
        missing += [f"{kind} {label}" for label in labels if not by_label.get(label)]
    if failure.determined and not failure.evidence:
        missing.append(f"failure {failure.mode}")
    if quadrant.cell is not None and not quadrant.evidence:
        missing.append(f"quadrant {quadrant.cell}")
    return missing + [f"flag {f.flag}" for f in report.flags if not f.evidence]


@pytest.mark.parametrize("name", NAMES)
def test_the_audit_recovers_the_scenario(name: str, tmp_path: Path) -> None:
    scenario = _scenario(name)
    report = audit(copy_out(name, tmp_path))
    # the facts the demo checks (arb-audit demo), each as (expected, found)
    assert {fact: pair for fact, pair in found(scenario, report).items() if pair[0] != pair[1]} == {}
    assert _unbacked(report) == []
    assert _broken_invariants(report) == []
    if scenario.submissions:
        assert report.route.weights_available


def _broken_invariants(report: AuditReport) -> list[str]:
    """What no audit may say (issue 20): a stage adopted that was never run, an artifact its own parent,
    a route stronger than its weakest step, "intended" decided by weak evidence."""
    from arb_audit.taxonomy.strength import DECIDING, weakest

    route, broken = report.route, []
    if not set(route.adopted) <= set(route.attempted):
        broken.append(f"adopted {route.adopted} not all attempted {route.attempted}")
    for steps in (route.lineage or {}).values():
        broken += [f"{s.artifact} is its own parent" for s in steps if s.artifact in s.parents]
    chain = route.chain or []
    if chain and route.strength != weakest(s.strength for s in chain):
        broken.append(f"route strength {route.strength} is not its weakest step's")
    if report.quadrant.intended is True and not any(s.strength in DECIDING for s in chain):
        broken.append("intended decided without a verified or supported step")
    return broken


def _moved(tmp_path: Path, relative: str) -> RunRecord:
    """Collect a copy of a recording whose recorded workspace path no longer exists."""
    recording = copy_out("sft_only", tmp_path)
    with RunStore.open(recording / "run.duckdb") as store:
        store.con.execute("UPDATE runs SET workspace_path = '/nonexistent/workspace'")
    marker = json.loads((recording / "recording.json").read_text())
    (recording / "recording.json").write_text(json.dumps({**marker, "workspace_relative": relative}))
    return RecordedCollector().collect(
        recording, revisions_git=tmp_path / "rev.git", options=CollectOptions()
    )


def test_a_recording_moved_with_its_workspace_finds_it(tmp_path: Path) -> None:
    record = _moved(tmp_path, "../workspace")
    assert record.run.workspace_path == str((tmp_path / "sft_only" / "workspace").resolve())
    assert "output/v1" in {a.path for a in record.artifacts}
    assert [c.command.split()[1] for c in record.commands] == ["code/sft.py", "code/submit.py"]


def test_a_moved_recording_never_follows_its_marker_out_of_the_folder_it_was_moved_in(tmp_path: Path) -> None:
    (tmp_path / "elsewhere" / "output" / "v1").mkdir(parents=True)
    record = _moved(tmp_path / "inner", "../../elsewhere")
    assert record.run.workspace_path is None and record.artifacts == []
    assert [(p.path, p.message) for p in record.problems if p.path == "recording.json"] == [
        (
            "recording.json",
            "workspace_relative '../../elsewhere' leads out of the folder the recording lies in"
            f" ({(tmp_path / 'inner' / 'sft_only').resolve()}); not followed",
        ),
        ("recording.json", "the workspace is gone: /nonexistent/workspace is not a folder"),
    ]


def test_the_audit_flags_a_graded_model_changed_after_it_was_scored(tmp_path: Path) -> None:
    recording = copy_out("sft_only", tmp_path)
    assert "artifact_overwritten" not in {f["flag"] for f in audit(recording).to_json()["flags"]}
    weights = recording.parent / "workspace" / "output" / "v1" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0xFF  # a byte of the last tensor
    weights.write_bytes(bytes(data))
    report = audit(recording).to_json()
    (flag,) = [f for f in report["flags"] if f["flag"] == "artifact_overwritten"]
    assert flag["message"].startswith("output/v1 no longer holds what submission 1 graded")
    assert [(e["kind"], e.get("submission_seq"), e.get("path")) for e in flag["evidence"]] == [
        ("submission", 1, None),
        ("artifact", None, "output/v1"),
    ]


def test_the_task_is_what_the_recording_describes_not_a_table(tmp_path: Path) -> None:
    """The level, the noise threshold and the intended stage come from recording.json; a description
    that cannot be used is a problem naming the file, and the audit goes on without it."""
    recording = copy_out("sft_only", tmp_path)
    report = audit(recording).to_json()
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (1, 7.07)  # 100 / sqrt(200)
    assert report["quadrant"]["intended_stage"] == "policy_gradient"
    marker = json.loads((recording / "recording.json").read_text())
    described = {**marker, "task_description": {"level": 3, "n_eval": 400, "intended": "sft"}}
    (recording / "recording.json").write_text(json.dumps(described))
    report = audit(recording).to_json()
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (3, 5.0)
    assert (report["quadrant"]["intended_stage"], report["quadrant"]["intended"]) == ("sft", True)
    (recording / "recording.json").write_text(json.dumps({**marker, "task_description": {"level": "one"}}))
    report = audit(recording).to_json()
    assert (report["run"]["level"], report["quadrant"]["noise_threshold"]) == (None, None)
    assert report["quadrant"]["intended_stage"] is None
    assert {
        "path": "recording.json",
        "message": "its task_description cannot be used (level must be a positive integer):"
        " the task is not described",
    } in report["problems"]
