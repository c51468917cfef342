"""A store in the run folder is the agent's to write: a classification cached there is read back only
when this user's secret keyed it, so a planted or rewritten one never decides the route."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb

import arb_audit
from arb_audit.store import RunStore

REFERENCE = Path(__file__).resolve().parents[2] / "fixtures" / "reference"
FORGED = {"labels": ["ONLINE_RL", "GRPO"], "primary": "ONLINE_RL"}


def test_a_rewritten_or_unkeyed_classification_is_not_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.duckdb"
    with RunStore.open(path) as store:
        store.save_classifications({("a" * 40, "python"): '{"primary": "SFT"}'}, "v1")
        assert store.load_classifications([("a" * 40, "python")], "v1") == {
            ("a" * 40, "python"): '{"primary": "SFT"}'
        }
        store.con.execute("UPDATE classifications SET result = ?", [json.dumps(FORGED)])
        assert store.load_classifications([("a" * 40, "python")], "v1") == {}
        store.con.execute("INSERT INTO classifications VALUES (?, 'python', 'v1', '{}', NULL)", ["b" * 40])
        assert store.load_classifications([("b" * 40, "python")], "v1") == {}


def test_a_planted_classification_does_not_turn_the_route(tmp_path: Path) -> None:
    for name in ("sft_only", "base"):
        shutil.copytree(REFERENCE / name, tmp_path / name, ignore=shutil.ignore_patterns(".arb-audit"))
    recording = tmp_path / "sft_only" / "recording"
    honest = arb_audit.audit(recording)
    assert honest.route.best_label == "SFT"
    store = Path(honest.run.store_path or "")
    with duckdb.connect(str(store)) as con:
        rows = con.execute("SELECT count(*) FROM classifications").fetchone()
        assert rows is not None and rows[0] > 0
        # the agent rewrites every cached verdict and drops the kept audit, forcing an audit anew
        con.execute("UPDATE classifications SET result = replace(result, '\"sft\"', '\"grpo\"')")
        con.execute("DELETE FROM audits")
    again = arb_audit.audit(recording)
    assert again.route.best_label == "SFT" and again.route.chain_text == honest.route.chain_text
