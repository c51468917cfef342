"""A reviewer audits the bundled reference runs end to end from the keyboard; the verdicts survive a
restart, pass `arb-audit verify`, and the agreement table exports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from arb_audit.store import RunStore
from arb_audit.taxonomy.review import FIELDS
from arb_audit.tui.app import ReviewApp
from arb_audit.tui.screens import RunScreen, VerdictScreen
from arb_audit.tui.session import ReviewSession
from arb_audit.verdicts import load_verdicts
from tests.test_cli import run_cli
from tests.tui.conftest import REFERENCE


@pytest.mark.slow
async def test_every_reference_run_is_reviewed_from_the_keyboard(tmp_path: Path) -> None:
    runs = tmp_path / "reference"
    shutil.copytree(REFERENCE, runs, symlinks=True)
    study = tmp_path / "study.duckdb"
    code, out, _ = run_cli("ingest", str(runs), "--study", str(study), "--jobs", "2")
    assert code == 0, out
    session = ReviewSession.open(study, "ann")
    total = session.runs.height
    assert total == sum(1 for p in REFERENCE.iterdir() if (p / "recording").is_dir())  # every scenario
    app = ReviewApp(session)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(total):
            # the needs-review order puts an unreviewed run first until none is left
            await pilot.press("home", "enter")
            assert isinstance(app.screen, RunScreen)
            await pilot.press("v")
            assert isinstance(app.screen, VerdictScreen)
            if app.screen.run_key.endswith("copy_base/recording"):
                await pilot.press("o", "home", "enter")  # route: overridden (SFT), then the rest agreed
            await pilot.press("A", "escape", "escape")
        assert session.reviewed_keys() == set(session.runs["run_key"])
    again = ReviewSession.open(study, "ann")
    assert again.ledger.height == sum(
        1 for key in again.runs["run_key"] for value in _analyzer(again, key).values() if value is not None
    )
    overridden = again.ledger.filter(again.ledger["value"] != again.ledger["analyzer"])
    assert overridden.select("field", "value", "analyzer").rows() == [("route", "SFT", "NO_TRAINING")]
    code, out, _ = run_cli("verify", str(study))
    assert code == 0, out
    code, out, _ = run_cli("agreement", str(study), "--format", "csv")
    assert code == 0 and out.startswith("field,rater_a,rater_b,n,agree,kappa")
    # two runs have no best route; of the rest, one overridden
    n = total - 2
    row = next(line.split(",") for line in out.splitlines() if line.startswith("route,analyzer,ann,"))
    assert (int(row[3]), float(row[4])) == (n, (n - 1) / n) and 0.8 < float(row[5]) < 1.0
    with RunStore.open(study, read_only=True) as store:
        assert load_verdicts(store).height == again.ledger.height


def _analyzer(session: ReviewSession, key: str) -> dict[str, str | None]:
    from arb_audit.taxonomy.review import analyzer_values

    values = analyzer_values(session.audit(key))
    assert set(values) == set(FIELDS)
    return values
