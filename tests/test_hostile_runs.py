"""Hostile and broken run folders, end to end: an audit (exit 0, valid JSON) and a problem naming the file.

Each case here was a crash, a wrong answer or an escape from the run folder found by a review.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from arb_audit.cli import main

MakeRun = Callable[[str], Path]


def audit(run: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(main, [str(run), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in --json output"))  # type: ignore[no-any-return]


def problems(report: dict) -> list[str]:  # type: ignore[type-arg]
    return [f"{p['path']}: {p['message']}" for p in report["problems"]]


def edit_scores(run: Path, change: Callable[[list[dict]], object]) -> None:  # type: ignore[type-arg]
    scores = json.loads((run / "scores.json").read_text())
    change(scores)
    (run / "scores.json").write_text(json.dumps(scores))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "scores.json: is nested too deeply to read"),
        ('[{"submission_id": ' + "9" * 5000 + "}]", "scores.json: is not readable JSON"),
    ],
    # short ids: pytest puts the test's id in the environment, and 200 KB there makes every
    # subprocess (gitpython's git) fail to start with "Argument list too long"
    ids=["deeply-nested", "huge-integer"],
)
def test_json_that_python_cannot_hold(make_run: MakeRun, text: str, expected: str) -> None:
    run = make_run("improves")
    (run / "scores.json").write_text(text)
    assert any(p.startswith(expected) for p in problems(audit(run)))


@pytest.mark.parametrize(
    "meta",
    [
        '{"start_time": NaN, "timeout_s": 3600}',
        '{"start_time": 1773108902, "timeout_s": 1e400}',
        '{"start_time": 1773108902, "timeout_s": 3600, "end_time": 100000000000000000000}',
    ],
)
def test_impossible_run_meta_values_are_ignored(make_run: MakeRun, meta: str) -> None:
    run = make_run("improves")
    (run / "run_meta.json").write_text(meta)
    (run / "scores.json").touch()  # file times no longer agree with the run
    assert any(p.startswith("run_meta.json:") for p in problems(audit(run)))


def test_numbers_too_big_for_the_store_or_for_python(make_run: MakeRun) -> None:
    run = make_run("messy")
    edit_scores(run, lambda s: s[0].update(submission_id=2**31))
    log = (run / "run.log").read_text()
    log = log.replace("[SUBMIT #2] Started", "[SUBMIT #99999999999] Started")
    log = log.replace("Agent finished, exit_code=0", "Agent finished, exit_code=" + "9" * 5000)
    log = log.replace("Start: 2026-03-10 10:15:00", "Start: 2026-13-45 10:15:00")
    (run / "run.log").write_text(log)
    (run / "agent.log").write_text(
        "Codex CLI exited with code: "
        + "9" * 5000
        + "\n--- DIAGNOSTICS ---\n"
        + "elapsed: 1\n"
        + "  more\n" * 200_000
    )
    (run / "summary.md").write_text(
        "## Iteration 99999999999 (2026-03-10 10:00)\n- **状态**: ❌ (exit_code="
        + "9" * 30
        + ")\n## Iteration 2\n- **Status**: ✅ (exit_code=99999999999)\n"
    )
    report = audit(run)
    assert report["metrics"]["n_submissions"] == 6
    assert report["run"]["agent_exit_code"] is None
    assert len(report["run"]["autorl_bench"]["agent_log"]["diagnostics"]["elapsed"]) <= 4000
    assert [(r["number"], r["exit_code"]) for r in report["reports"]] == [(2, None)]
    assert any("out of range" in p for p in problems(report))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("elapsed_seconds", 1e20),
        ("elapsed_seconds", -50),
        ("timestamp", "0001-01-01T00:00:00"),
        ("timestamp", "9999-12-31T23:59:59"),
        ("score", float("nan")),
    ],
)
def test_impossible_times_and_scores_in_scores_json(make_run: MakeRun, field: str, value: object) -> None:
    run = make_run("improves")
    edit_scores(run, lambda s: s[0].update({field: value}))
    report = audit(run)
    assert report["metrics"]["n_submissions"] == 3
    assert any(p.startswith("scores.json:") for p in problems(report))


def test_timestamps_with_an_offset_are_kept_on_their_clock(make_run: MakeRun) -> None:
    run = make_run("improves")
    edit_scores(run, lambda s: s[0].update(timestamp="2026-03-10T02:26:24+00:00"))
    first = audit(run)["submissions"][0]
    assert first["completed_at"] == "2026-03-10T10:26:24+08:00"


def test_names_git_refuses_do_not_stop_the_audit(tmp_path: Path, make_run: MakeRun) -> None:
    run = make_run("improves")
    (run / "code" / ".git").write_text("gitdir: /elsewhere\n")
    (run / "code" / "sub").mkdir()
    (run / "code" / "sub" / ".GIT").write_text("x")
    (run / "code" / "new\nline.py").write_text("x = 1\n")
    os.close(os.open(os.fsencode(run / "code") + b"/bad\xff.py", os.O_CREAT | os.O_WRONLY))
    odd = run.parent / "r..x_claude.lock"
    run.rename(odd)
    report = audit(odd)
    assert report["route"]["code_revision"] is not None
    assert any("not UTF-8" in p for p in problems(report))


def test_results_csv_with_a_giant_field_or_not_a_file(make_run: MakeRun, tmp_path: Path) -> None:
    run = make_run("improves")
    big = tmp_path / "results.csv"
    big.write_text("run_id,x\n" + "a" * 200_000 + ",b\n")
    assert any("results.csv" in p for p in problems(audit(run, "--results-csv", str(big))))
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    assert any("not a regular file" in p for p in problems(audit(run, "--results-csv", str(fifo))))


def test_infinite_scores_and_nan_metrics_stay_out_of_the_json(make_run: MakeRun) -> None:
    run = make_run("improves")
    (run / "scores.json").unlink()
    log = (run / "run.log").read_text().replace("Done | score=60.1, best=60.1", "Done | score=inf, best=inf")
    (run / "run.log").write_text(log)
    (run / "reports" / "metrics.json").write_text('{"best": NaN, "x": -Infinity}')
    report = audit(run)
    assert report["submissions"][0]["score"] is None
    assert report["run"]["autorl_bench"]["harness_metrics"] == {"best": None, "x": None}


def test_cr_only_line_endings(make_run: MakeRun) -> None:
    run = make_run("messy")
    (run / "run.log").write_bytes((run / "run.log").read_bytes().replace(b"\n", b"\r"))
    report = audit(run)
    assert [s["status"] for s in report["submissions"]] == [
        "scored",
        "duplicate",
        "rejected",
        "error",
        "error",
        "scored",
    ]
    assert report["run"]["agent_launched_at"] is not None


def test_unknown_submit_records_and_repeated_ids_are_reported(make_run: MakeRun) -> None:
    run = make_run("messy")
    (run / "run.log").write_bytes(
        (run / "run.log").read_bytes().replace(b"[SUBMIT #1] Done", b"[SUBMIT #1] Do\x00ne")
    )
    assert any("in no known form" in p for p in problems(audit(run)))
    run = make_run("messy")
    edit_scores(run, lambda s: [e.update(submission_id=1) for e in s])
    report = audit(run)
    assert report["metrics"]["n_submissions"] == 6
    assert any("appear in more than one entry" in p for p in problems(report))


@pytest.mark.slow  # (about 10 s: the fast lane stays under five minutes on two cores)
def test_reads_never_leave_the_folder(make_run: MakeRun, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "reports").mkdir(parents=True)
    (outside / "reports" / "metrics.json").write_text('{"leaked": true}')
    (outside / "model").mkdir()
    (outside / "model" / "config.json").write_text('{"_name_or_path": "LEAKED_PARENT"}')
    run = make_run("improves")
    os.rename(run / "reports", tmp_path / "gone")
    (run / "reports").symlink_to(outside / "reports")
    log = (run / "run.log").read_text()
    log = re.sub(r"Workspace: .*", "Workspace: /", log)
    (run / "run.log").write_text(log)
    edit_scores(run, lambda s: s[0].update(model_path=f"/{outside}/model"))
    text = json.dumps(audit(run))
    assert "leaked" not in text and "LEAKED_PARENT" not in text


def test_writes_never_leave_the_folder(
    make_run: MakeRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    run = make_run("improves")
    (run / ".arb-audit").symlink_to(victim)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = audit(run)
    assert list(victim.iterdir()) == []
    assert report["run"]["store_path"].startswith(str(tmp_path / "cache"))
    assert any(p.startswith(".arb-audit: .arb-audit is a symlink") for p in problems(report))


def test_terminal_control_characters_are_shown_escaped(make_run: MakeRun) -> None:
    run = make_run("improves")
    edit_scores(run, lambda s: s[0].update(model_path="\x1b]0;PWNED\x07\x1b[2Jx [bold]y\\"))
    result = CliRunner().invoke(main, [str(run)])
    assert result.exit_code == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "\\x1b]0;PWNED" in result.stdout and "[bold]y\\" in result.stdout


def test_a_flood_of_duplicates_keeps_the_readable_report_short(make_run: MakeRun) -> None:
    run = make_run("improves")
    flood = "".join(
        "2026-03-10 10:30:00 | INFO | [SUBMIT] Cache hit for output/v1, score=60.1\n" for _ in range(5000)
    )
    (run / "run.log").write_text((run / "run.log").read_text() + flood)
    result = CliRunner().invoke(main, [str(run)])
    assert result.exit_code == 0
    assert "Submissions (5,003 attempts)" in result.stdout or "Submissions (5003 attempts)" in result.stdout
    assert "more attempts are in the JSON report" in result.stdout


def test_a_planted_store_that_does_not_open_sends_the_audit_to_the_cache(
    make_run: MakeRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = make_run("improves")
    (run / ".arb-audit").mkdir()
    (run / ".arb-audit" / "run.duckdb").write_text("not a database, planted by the agent")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = audit(run)
    assert report["run"]["store_path"].startswith(str(tmp_path / "cache"))
    assert any(".arb-audit/run.duckdb is not a usable store" in p for p in problems(report))
    assert (run / ".arb-audit" / "run.duckdb").read_text() == "not a database, planted by the agent"


def test_a_model_path_too_long_for_the_file_system_is_a_note_not_a_traceback(make_run: MakeRun) -> None:
    run = make_run("improves")
    edit_scores(run, lambda scores: scores[1].update(model_path="output/" + "x" * 300 + "/y"))
    report = audit(run)
    notes = [a["note"] for a in report["artifacts"] if a["path"].startswith("output/xxx")]
    assert notes == ["its path cannot be examined: File name too long"]


def test_whatever_a_reader_still_fails_on_is_one_line_naming_the_file(
    make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arb_audit.collectors.autorl_bench import AutoRLBenchCollector

    def broken(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", "reports/\x1b[2Jmetrics.json")

    monkeypatch.setattr(AutoRLBenchCollector, "collect", broken)
    monkeypatch.delenv("ARB_AUDIT_DEBUG", raising=False)
    run = make_run("improves")
    result = CliRunner().invoke(main, [str(run), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"arb-audit: {run}: could not be audited: PermissionError: Permission denied (reports/"
    )
    assert "\x1b" not in line and "Traceback" not in result.stderr
