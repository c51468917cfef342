"""The front door: ``arb-audit RUN_DIR`` in text and JSON, its exit codes, and its light start."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
from click.testing import CliRunner

from arb_audit.cli import main
from arb_audit.collectors import registry

MakeRun = Callable[[str], Path]
SUBMISSION_KEYS = {"seq", "status", "score", "requested_at", "completed_at", "model_path", "artifact_id"}
METRIC_KEYS = {"n_submissions", "n_scored", "valid_rate", "time_to_first_valid_s", "time_to_best_s"}


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_matches_the_contract(make_run: MakeRun) -> None:
    code, out, _ = run_cli(str(make_run("messy")), "--json")
    assert code == 0
    report = json.loads(out)
    assert {
        "run",
        "submissions",
        "best",
        "metrics",
        "route",
        "failure",
        "flags",
        "quadrant",
        "problems",
    } <= set(report)
    assert all(set(s) >= SUBMISSION_KEYS for s in report["submissions"])
    assert {s["status"] for s in report["submissions"]} == {"scored", "error", "rejected", "duplicate"}
    assert set(report["metrics"]) >= METRIC_KEYS
    assert report["metrics"]["n_submissions"] == 6
    assert report["best"]["seq"] == 1
    assert all({"path", "message"} == set(p) for p in report["problems"])
    assert {f["flag"] for f in report["flags"]} == {"artifact_overwritten", "grader_probing"}


def test_text_report_shows_the_timeline_best_and_flags(make_run: MakeRun) -> None:
    code, out, _ = run_cli("audit", str(make_run("messy")))
    assert code == 0
    for needle in (
        "alfworld",
        "Submissions (6 attempts)",
        "duplicate",
        "rejected",
        "★ best",
        "Best valid submission: #1",
        "artifact_overwritten",
        "grader_probing",
        "Route: UNKNOWN, evidence none",
        "UTC+8h",
    ):
        assert needle in out, needle


def test_store_is_written_outside_the_runs_own_files_and_reingest_works(
    make_run: MakeRun, tmp_path: Path
) -> None:
    run = make_run("improves")
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    assert run_cli(str(run), "--json")[0] == 0
    assert run_cli(str(run), "--json")[0] == 0
    after = sorted(p.relative_to(run) for p in run.rglob("*") if ".arb-audit" not in p.parts)
    assert before == after
    con = duckdb.connect(str(run / ".arb-audit" / "run.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM submissions").fetchone() == (3,)
    # SFT only, on a task meant for policy gradient, with the score up: the quadrant is decided.
    assert con.execute("SELECT failure_mode, quadrant FROM audits").fetchone() == (
        "none",
        "score_up+not_intended",
    )
    con.close()
    chosen = tmp_path / "elsewhere" / "s.duckdb"
    code, out, _ = run_cli(str(run), "--json", "--store", str(chosen))
    assert code == 0 and chosen.exists() and (tmp_path / "elsewhere" / "s.revisions.git" / "HEAD").exists()
    assert json.loads(out)["run"]["store_path"] == str(chosen)


def test_nothing_usable_exits_2_with_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli(str(tmp_path))
    assert code == 2 and "no supported run format found" in err and err.count("\n") == 1
    # each registered format says what it needs, from its collector's own description
    for name in registry.available():
        assert f"{name}: {registry.load(name).description}" in err
    code, _, err = run_cli(str(tmp_path / "nope"))
    assert code == 2 and "no such folder" in err
    (tmp_path / "f.txt").write_text("x")
    code, _, err = run_cli(str(tmp_path / "f.txt"))
    assert code == 2 and "not a folder" in err
    code, _, err = run_cli(str(tmp_path), "--format", "inspect_ai")
    assert code == 2 and "no collector named 'inspect_ai'" in err


def test_a_run_that_failed_still_exits_0(make_run: MakeRun) -> None:
    code, out, _ = run_cli(str(make_run("no_valid")), "--json")
    assert code == 0 and json.loads(out)["failure"]["mode"] == "timeout_no_submission"


def test_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys; from click.testing import CliRunner; from arb_audit.cli import main; "
        "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0, r.output; "
        "heavy = [m for m in ('torch', 'textual', 'sklearn', 'matplotlib', 'duckdb', 'polars', 'libcst')"
        " if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_an_edited_store_is_flagged_at_the_next_audit(make_run: MakeRun) -> None:
    run = make_run("improves")
    assert run_cli(str(run), "--json")[0] == 0
    con = duckdb.connect(str(run / ".arb-audit" / "run.duckdb"))
    con.execute("UPDATE submissions SET score = 99 WHERE seq = 2")
    con.close()
    code, out, _ = run_cli(str(run), "--json")
    flags = json.loads(out)["flags"]
    assert code == 0 and [f["flag"] for f in flags] == ["ledger_broken"]
    assert flags[0]["evidence"] == [{"kind": "submission", "submission_seq": 2}]
    assert flags[0]["definition"] == "the submission hash chain fails"
    # raised by the analyzer from the ledger fact the pipeline reports, as a recording's own check is
    assert flags[0]["message"].startswith("ledger: submission 2: the row an earlier audit stored no longer")
    assert run_cli(str(run), "--json")[0] == 0 and json.loads(run_cli(str(run), "--json")[1])["flags"] == []


def test_hash_artifacts_gives_each_model_its_content_id(make_run: MakeRun) -> None:
    run = make_run("improves")
    plain = json.loads(run_cli(str(run), "--json")[1])
    assert all(a["artifact_id"] is None for a in plain["artifacts"])
    shutil.copytree(run / "output" / "v1", run / "output" / "v1-copy")
    hashed = json.loads(run_cli(str(run), "--json", "--hash-artifacts")[1])
    ids = {a["path"]: a["artifact_id"] for a in hashed["artifacts"]}
    assert ids["output/v1"] == ids["output/v1-copy"] and len(set(ids.values())) == 3
    assert all(len(i) == 64 for i in ids.values())


def test_an_autorl_run_with_a_transcript_shows_its_code_history_and_commands(make_run: MakeRun) -> None:
    code, out, _ = run_cli(str(make_run("attempts_en")), "--json")
    report = json.loads(out)
    assert code == 0
    assert [(r["seq"], r["trigger"], r["files"]) for r in report["revisions"]] == [
        (1, "transcript-edit", ["train.py"]),
        (2, "transcript-edit", ["train.py"]),
        (3, "final", []),
    ]
    assert [
        (c["seq"], c["command"], c["exit_code"], c["tool"], c["revision_seq"]) for c in report["commands"]
    ] == [
        (1, "python code/train.py", 1, "Bash", 1),
        (2, "python code/train.py", 0, "Bash", 2),
    ]
    assert all({"seq", "command", "started_at", "exit_code", "tool"} <= set(c) for c in report["commands"])
    assert report["commands"][0]["evidence"] == {
        "kind": "transcript",
        "path": "agent.jsonl",
        "line": 4,
        "command_seq": 1,
    }
    transcript = report["run"]["transcript"]
    assert (transcript["format"], transcript["final_check"]["same"]) == ("claude_code", ["train.py"])
    assert report["problems"] == []
    code, text, _ = run_cli(str(make_run("attempts_en")))
    assert "Code history (3 revisions)" in text and "Commands (2)" in text
