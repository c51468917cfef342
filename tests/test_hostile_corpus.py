"""The hostile corpus through the command line: no traceback, no hang, no leak, no escape (issue 21, item 11).

Each case of ``tests.hostile_corpus`` is written into a sandbox of its own and run as a user runs it,
in a subprocess under a deadline (``tests.hostile_run``): ``arb-audit RUN --json`` and the readable
report, or ``arb-audit classify``. Every case is a full audit (seconds of CPU each), so the fast lane
runs one case of each kind against each collector (the first the corpus lists) and the rest are marked
slow; the huge cases (gigabytes, minutes) run in the slow lane and in ``benchmarks/bench_hostile.py``,
which measures their memory.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile_corpus import CASES, FOUND
from tests.hostile_run import Case, run_case

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/proc").is_dir(), reason="POSIX only")

DEADLINE_S = 120.0
"""Far above what a case takes (seconds), far below a hang; the huge ones get more."""
KNOWN_DEADLINE_S = 30.0
"""A case known to fail (some hang) is given less: it answers in seconds once fixed."""


def _fast_lane() -> set[str]:
    """The first case of each (collector, kind of defect) pair, and every case that found a defect."""
    first: dict[tuple[str, str], str] = {}
    for case in CASES.values():
        if not case.huge:
            first.setdefault((case.collector, case.probes), case.name)
    return set(first.values()) | set(FOUND)


FAST_LANE = _fast_lane()


def _param(case: Case) -> object:
    marks = []
    if case.name not in FAST_LANE:
        marks.append(pytest.mark.slow)
    if case.huge and not os.environ.get("ARB_AUDIT_HUGE_CASES"):
        # gigabytes written and read for minutes each: they would take CI past its 30-minute budget on
        # their own; benchmarks/bench_hostile.py runs them under its limits (or set ARB_AUDIT_HUGE_CASES=1)
        marks.append(pytest.mark.skip(reason="huge case: run by benchmarks/bench_hostile.py"))
    if case.xfail:
        marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES.values()])
def test_hostile_case(case: Case, tmp_path: Path) -> None:
    deadline = KNOWN_DEADLINE_S if case.xfail else DEADLINE_S * (5 if case.huge else 1)
    outcome = run_case(case, tmp_path, timeout_s=deadline)
    assert not outcome.failures(), "\n".join(outcome.failures())


def test_the_corpus_covers_every_collector_and_kind() -> None:
    assert len(CASES) >= 100
    assert set(FOUND) <= set(CASES)
    collectors = {c.collector for c in CASES.values()}
    assert {
        "autorl_bench",
        "posttrainbench",
        "recorded",
        "classify",
        "claude_code",
        "codex",
        "opencode",
    } <= collectors
    assert {"gemini"} <= collectors
    probes = {c.probes for c in CASES.values()}
    assert {"traceback", "hang", "memory", "leak", "escape", "verdict"} <= probes
