"""An unchanged run's audit is read back; any changed input (code aside) has it made anew."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pytest

import arb_audit.analyzer.run_analysis
from arb_audit.audit_cache import (
    SECRET_NAME,
    _secret_in,
    depends_on,
    fingerprint,
    input_key,
    listing,
    secret,
    unchanged,
)
from arb_audit.cache_dirs import cache_root
from tests.reference.recordings import copy_out
from tests.test_cli import MakeRun, run_cli


@pytest.fixture
def anew(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Count the audits made anew (route analyses run), by the run folder each was made of."""
    made: list[Path] = []
    analyse = arb_audit.analyzer.run_analysis.route_analysis

    def counted(record: Any, *args: Any, **kwargs: Any) -> Any:
        made.append(Path(record.run.source_path))
        return analyse(record, *args, **kwargs)

    monkeypatch.setattr(arb_audit.analyzer.run_analysis, "route_analysis", counted)
    return made


def _audit(run: Path, *options: str) -> dict[str, Any]:
    code, out, err = run_cli(str(run), "--json", *options)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def test_an_unchanged_run_is_read_back_and_a_changed_one_audited_anew(
    make_run: MakeRun, anew: list[Path]
) -> None:
    run = make_run("improves")
    first = _audit(run)
    assert _audit(run) == first and len(anew) == 1
    assert _audit(run, "--noise", "0.5") != first and len(anew) == 2  # another option
    (run / "code" / "train.py").write_text("print('edited after the audit')\n")
    _audit(run)
    assert len(anew) == 3


def test_a_recordings_workspace_is_an_input_too(tmp_path: Path, anew: list[Path]) -> None:
    recording = copy_out("sft_only", tmp_path)
    first = _audit(recording)
    assert _audit(recording) == first and len(anew) == 1
    (tmp_path / "sft_only" / "workspace" / "output" / "v1" / "config.json").write_text("{}")
    second = _audit(recording)
    assert len(anew) == 2 and second != first


def test_a_kept_audit_that_does_not_read_back_is_made_anew(make_run: MakeRun, anew: list[Path]) -> None:
    run = make_run("improves")
    first = _audit(run)
    con = duckdb.connect(str(run / ".arb-audit" / "run.duckdb"))
    con.execute("UPDATE audits SET report = '[1, 2]'")
    con.close()
    assert _audit(run) == first and len(anew) == 2


def test_the_key_follows_the_listing_and_the_options(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "a.txt").write_text("a")
    key = input_key(tmp_path / "run", {"noise": None})
    assert key == input_key(tmp_path / "run", {"noise": None})
    assert key != input_key(tmp_path / "run", {"noise": 1.0})
    os.utime(tmp_path / "run" / "a.txt", ns=(1, 1))
    assert key != input_key(tmp_path / "run", {"noise": None})
    # arb-audit's own store beside the run is not part of it
    moved = input_key(tmp_path / "run", {"noise": None})
    (tmp_path / "run" / ".arb-audit").mkdir()
    (tmp_path / "run" / ".arb-audit" / "run.duckdb").write_text("store")
    assert input_key(tmp_path / "run", {"noise": None}) == moved


def test_what_lies_outside_the_run_folder_is_watched(tmp_path: Path) -> None:
    run, workspace = tmp_path / "run", tmp_path / "workspace"
    run.mkdir()
    workspace.mkdir()
    (workspace / "model.safetensors").write_bytes(b"x")
    depends = depends_on(run, [workspace, run / "inside", None, ""])
    assert list(depends) == [str(workspace.resolve())] and unchanged(depends)
    (workspace / "model.safetensors").write_bytes(b"xy")
    assert not unchanged(depends)
    assert listing(tmp_path / "gone").startswith("unreadable")


def test_a_row_keyed_without_this_users_secret_is_not_read_back(
    make_run: MakeRun, anew: list[Path], tmp_path: Path
) -> None:
    run = make_run("improves")
    _audit(run)
    kept = cache_root() / SECRET_NAME
    assert kept.stat().st_mode & 0o777 == 0o600 and len(kept.read_bytes()) == 32
    # another secret: what the agent that wrote the folder could have keyed a planted store with
    kept.write_bytes(b"k" * 32)
    _secret_in.cache_clear()
    _audit(run)
    assert len(anew) == 2


def test_a_cut_secret_is_made_again(tmp_path: Path) -> None:
    (cache_root() / SECRET_NAME).parent.mkdir(parents=True, exist_ok=True)
    (cache_root() / SECRET_NAME).write_bytes(b"cut")
    _secret_in.cache_clear()
    made = secret()
    assert made is not None and len(made) == 32 and (cache_root() / SECRET_NAME).read_bytes() == made


def test_a_folder_that_is_not_a_run_is_left_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("nothing to audit")
    assert run_cli(str(tmp_path / "notes"))[0] == 2
    assert sorted(p.name for p in (tmp_path / "notes").iterdir()) == ["todo.txt"]


def test_an_edit_to_the_same_size_with_its_time_restored_is_seen(tmp_path: Path) -> None:
    # a red-team case: scores.json edited in place, same length, modification time set back
    run = tmp_path / "run"
    run.mkdir()
    scores = run / "scores.json"
    scores.write_text('{"best": 68.9}')
    before = fingerprint(run)
    kept = scores.stat()
    scores.write_text('{"best": 98.9}')
    os.utime(scores, ns=(kept.st_atime_ns, kept.st_mtime_ns))
    assert scores.stat().st_size == kept.st_size and scores.stat().st_mtime_ns == kept.st_mtime_ns
    assert fingerprint(run) != before


def test_a_fifo_in_the_folder_is_listed_not_read(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "model.safetensors")
    assert fingerprint(run) == fingerprint(run)  # returns at all: nothing blocked on the FIFO


def test_a_run_folder_is_listed_once_per_audit(make_run: MakeRun, monkeypatch: pytest.MonkeyPatch) -> None:
    import arb_audit
    import arb_audit.audit_cache

    calls: list[Path] = []
    real = arb_audit.audit_cache.listing

    def counted(path: Path) -> str:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(arb_audit.audit_cache, "listing", counted)
    run = make_run("improves")
    arb_audit.audit(run)  # made anew
    assert calls.count(run.resolve()) == 1
    calls.clear()
    arb_audit.audit(run)  # read back
    assert calls.count(run.resolve()) == 1
