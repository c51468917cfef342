"""Hostile and broken files never stop a batch: each gets a clear error, the rest are classified."""

from __future__ import annotations

import json
import time
from pathlib import Path

from click.testing import CliRunner

from arb_audit.analyzer.batch import classify_many
from arb_audit.analyzer.classify import find
from arb_audit.cli import main

GOOD = "from trl import SFTTrainer\nSFTTrainer(model='m').train()\n"


def make_folder(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "a_good.py").write_text(GOOD)
    (root / "binary.py").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    (root / "latin1.py").write_bytes(b"# caf\xe9\nfrom trl import DPOTrainer\nDPOTrainer(model='m')\n")
    (root / "python2.py").write_text(
        'print "starting"\nfrom trl import GRPOTrainer\nGRPOTrainer(model="m")\n'
    )
    (root / "broken.py").write_text(
        "from trl import SFTTrainer\n\ndef oops(:\n    pass\n\nSFTTrainer(model='m').train()\n"
    )
    (root / "deep.py").write_text("x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n")
    with (root / "huge.py").open("wb") as handle:
        handle.truncate(20 * 1024 * 1024)
    (root / "notebook.ipynb").write_text("{ not json")
    (root / "link.py").symlink_to("/etc/passwd")
    return root


def test_every_bad_file_gets_an_error_and_the_good_ones_a_verdict(tmp_path: Path) -> None:
    root = make_folder(tmp_path)
    start = time.monotonic()
    results = {Path(r.path).name: r for r in classify_many([root], jobs=1)}
    assert time.monotonic() - start < 30
    assert "link.py" not in results  # symlinks inside a folder are not followed
    assert results["a_good.py"].primary == "SFT" and results["a_good.py"].error is None
    assert "binary" in (results["binary.py"].error or "")
    assert "UTF-8" in (results["latin1.py"].error or "")
    assert "Python 2" in (results["python2.py"].error or "")
    assert results["python2.py"].primary == "GRPO"  # the statements that parse are still read
    broken = results["broken.py"]
    assert "line 3" in (broken.error or "") and broken.primary == "SFT"
    assert broken.stages[0].evidence[0].line == 6
    assert "nest" in (results["deep.py"].error or "")
    assert "20,971,520" in (results["huge.py"].error or "") or "20971520" in (results["huge.py"].error or "")
    assert results["notebook.ipynb"].error


def test_a_symlink_named_on_the_command_line_is_refused_not_followed(tmp_path: Path) -> None:
    root = make_folder(tmp_path)
    result = CliRunner().invoke(main, ["classify", "--json", "-j", "1", str(root / "link.py")])
    assert result.exit_code == 0
    assert "symlink" in json.loads(result.output)["error"]


def test_the_batch_goes_on_in_parallel_too(tmp_path: Path) -> None:
    root = make_folder(tmp_path)
    for i in range(40):
        (root / f"copy_{i:02d}.py").write_text(GOOD)
    result = CliRunner().invoke(main, ["classify", "--json", "-j", "2", "--no-cache", str(root)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert len(rows) == 48 and sum(r["primary"] == "SFT" for r in rows) == 42  # good ones, broken.py, copies


def test_a_file_that_takes_too_long_is_stopped_and_named(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a_good.py").write_text(GOOD)
    # libcst's time grows with size times bracket depth: seconds here, inside every size limit.
    slow = "x = " + "(" * 150 + "[" + "1," * 5000 + "]" + ")" * 150 + "\n"
    (root / "slow.py").write_text(GOOD + slow)  # a trainer, so that the pre-scan sends it to libcst
    (root / "z_good.py").write_text(GOOD)
    start = time.monotonic()
    results = {Path(r.path).name: r for r in classify_many([root], jobs=2, timeout_s=1)}
    assert time.monotonic() - start < 20
    assert "took longer than 1 s" in (results["slow.py"].error or "")
    assert results["a_good.py"].primary == results["z_good.py"].primary == "SFT"


def test_a_hostile_name_quoted_in_a_finding_is_not_copied_whole(tmp_path: Path) -> None:
    # messages quote names from the file; one of 300 000 characters is cut, the verdict unchanged
    name = "bench_" + "x" * 300_000
    script = f"from vllm import LLM\n{name} = 1\nouts = LLM('m').generate({name})\n"
    (path := tmp_path / "gen.py").write_text(script)
    (result,) = classify_many([path], jobs=0)
    assert result.primary == "EVAL_ONLY"
    assert any(f.signal == "purpose" for f in result.findings)
    assert all(len(f.message) <= 240 for f in result.findings)


def test_a_cue_repeated_on_every_line_is_reported_once(tmp_path: Path) -> None:
    # a file padded with the same cue: one finding, and no more than a bounded number of cues in all
    lines = "".join(f"x{i} = d['test']\nanswer_file_{i} = 1\n" for i in range(3000))
    (path := tmp_path / "gen.py").write_text("from vllm import LLM\nouts = LLM('m').generate(x)\n" + lines)
    (result,) = classify_many([path], jobs=0)
    cues = [f for f in result.findings if f.signal == "purpose"]
    assert result.primary == "EVAL_ONLY"
    assert 1 <= len(cues) <= 16
    assert sum(f.message == "reads a held-out split by its key" for f in cues) == 1


def test_evidence_too_deep_to_write_is_located_by_its_statement() -> None:
    # libcst writes code by recursion: a finding on 600 operands added in one expression (past the
    # guarded nesting bound) is located by its statement's line in a worker, not lost to a recursion error
    tail = " + ".join(f"'x{i}'" for i in range(600))
    script = (
        "import json\nfrom pathlib import Path\nfrom vllm import LLM\n"
        "records = [o.outputs[0].text for o in LLM('m').generate(prompts)]\n"
        f"Path('o.json').write_text(json.dumps(records) + {tail})\n"
    )
    findings, error = find(script, guarded=False)
    assert error is None
    written = [f for f in findings if f.signal == "data_output"]
    assert written and written[0].line == 5
