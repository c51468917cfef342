"""The harness's own account of a run (AutoRL-Bench's results.csv row, issue 20 item 6), through
``arb-audit RUN_DIR --json``: shown typed, compared with the folder, used when it is all there is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixture_runs import harness_only, improves, results_csv, write_run
from tests.test_cli import run_cli


def _audit(run: Path, *options: str) -> dict[str, Any]:
    code, out, err = run_cli(str(run), "--json", *options)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def test_a_results_row_is_all_there_is_when_the_folder_holds_no_submission(tmp_path: Path) -> None:
    run, csv = harness_only(tmp_path)
    report = _audit(run, "--results-csv", str(csv))
    account = report["run"]["harness_account"]
    assert (account["submissions"], account["best_score"], account["baseline"]) == (2, 17.51, 12.0)
    assert account["success"] is True and account["line"] == 2
    assert any("holds no record of any" in d for d in account["disagreements"])
    assert account["used_for"] and "results_csv" not in report["run"]
    # Not "0 attempts, timeout": the harness's best against the base decides, citing the row.
    assert report["best"] is None and report["metrics"]["n_submissions"] == 0
    failure = report["failure"]
    assert failure["mode"] == "none" and "results.csv" in failure["reason"]
    assert failure["evidence"][0]["path"] == str(csv) and failure["evidence"][0]["line"] == 2
    assert report["quadrant"]["score_up"] is True


def test_a_results_row_that_disagrees_with_the_folder_says_where(tmp_path: Path) -> None:
    run = write_run(improves(), tmp_path / "workspace" / "gsm8k")
    csv = results_csv(tmp_path, run.name, "gsm8k", "60.0,70.0,7.3,4,3004,False")
    report = _audit(run, "--results-csv", str(csv))
    said = report["run"]["harness_account"]["disagreements"]
    assert "results.csv counts 4 submission(s); scores.json holds 3" in said
    assert "results.csv's best score is 70.0; scores.json's highest is 68.9" in said
    assert any("success=False" in d for d in said)
    # The folder's own ledger decides; the row is only compared.
    assert report["run"]["harness_account"]["used_for"] == []
    assert report["best"]["score"] == 68.9


def test_a_results_row_with_unreadable_values_names_the_file(tmp_path: Path) -> None:
    run, _ = harness_only(tmp_path)
    csv = results_csv(tmp_path, run.name, "gsm8k", "12.0,lots,5.51,-2,3004,maybe")
    report = _audit(run, "--results-csv", str(csv))
    account = report["run"]["harness_account"]
    assert (account["best_score"], account["submissions"], account["success"]) == (None, None, None)
    assert any(p["path"] == str(csv) and "best_score, submissions, success" in p["message"]
               for p in report["problems"])  # fmt: skip
    assert report["failure"]["mode"] != "none"
