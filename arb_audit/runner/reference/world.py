"""Record scenarios of the reference world through the runner, as ``arb-audit record`` would.

Each scenario gets ``OUT/<name>/workspace`` (a fresh workspace: the base model, the tasks' data) and
``OUT/<name>/recording`` (what the runner records: store, revisions, the agent's transcript). The base
model is pre-trained once into ``OUT/base`` and reused.

The recordings are portable (they are bundled as fixtures and cloned anywhere): each finds its workspace
beside it, its run id is ``recorded:<task>/<scenario>-<random>``, and its agent and evaluator commands
are recorded as ``python -m ...``; ``python`` is this interpreter while recording (a shim first on PATH),
so no path of the machine that recorded them is kept.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from arb_audit.runner.record import RecordOptions, record
from arb_audit.runner.reference.agent import interpreter_shims
from arb_audit.runner.reference.build import build_base, write_workspace
from arb_audit.runner.reference.scenarios import Scenario
from arb_audit.runner.reference.tasks import DESCRIPTIONS

SNAPSHOT_EVERY_S = 0.25
"""The recorder's timer: shorter than the scripted agent's pause between steps."""
MARKER = "scenario.txt"
"""Names the scenario a folder holds; a folder without it is never cleared."""


class WorldError(Exception):
    """A scenario cannot be recorded where asked; the message says why."""


def base_model(out: Path) -> Path:
    """Return the pre-trained base model folder under ``out`` (built on first use)."""
    return build_base(out / "base")


def base_score(base: Path, task: str) -> float:
    """Return the base model's held-out score on ``task`` (kept next to its folder once measured)."""
    from arb_audit.runner.reference.evaluate import score

    cache = base.parent / f"{base.name}.{task}.score"
    if not cache.is_file():
        cache.write_text(f"{score(base, task)}\n")
    return float(cache.read_text())


def scenario_folder(out: Path, scenario: Scenario) -> Path:
    """Where ``scenario`` is recorded under ``out``."""
    return out / scenario.name


def record_scenario(scenario: Scenario, out: Path) -> Path:
    """Record ``scenario`` into ``out/<name>`` (replacing an earlier one); return the recording."""
    folder = scenario_folder(out, scenario)
    if folder.exists():
        if not (folder / MARKER).is_file():
            raise WorldError(f"{folder}: exists and is not a scenario recording; not replaced")
        shutil.rmtree(folder)
    workspace, recording = folder / "workspace", folder / "recording"
    workspace.mkdir(parents=True)
    (folder / MARKER).write_text(f"{scenario.name}: {scenario.story}\n")
    base = base_model(out)
    write_workspace(workspace, base)
    with tempfile.TemporaryDirectory(prefix="arb-audit-world-") as shims:
        record(
            RecordOptions(
                workspace=workspace,
                run_dir=recording,
                agent=["python", "-m", "arb_audit.runner.reference.agent", scenario.name],
                evaluator=["python", "-m", "arb_audit.runner.reference.evaluate", "--task", scenario.task],
                snapshot_every_s=SNAPSHOT_EVERY_S,
                budget_s=scenario.budget_s,
                task=scenario.task,
                task_description=DESCRIPTIONS[scenario.task],
                scaffold="scripted",
                driver=scenario.name,
                base_model="models/base",
                baseline_score=base_score(base, scenario.task),
                name=scenario.name,
                portable=True,
                env=interpreter_shims(Path(shims)),
            )
        )
    return recording


def main(argv: list[str] | None = None) -> int:
    """Record the named scenarios (all by default) into OUT.

    ``python -m arb_audit.runner.reference.world OUT`` is how ``fixtures/reference`` is made.
    """
    import argparse

    from arb_audit.runner.reference.scenarios import SCENARIOS, find

    parser = argparse.ArgumentParser(
        prog="python -m arb_audit.runner.reference.world", description=main.__doc__
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("scenarios", nargs="*", help="scenario names (default: every scenario)")
    args = parser.parse_args(argv)
    try:
        chosen = [find(n) for n in args.scenarios] if args.scenarios else list(SCENARIOS)
        for scenario in chosen:
            print(f"recording {scenario.name}", flush=True)
            record_scenario(scenario, args.out)
    except (KeyError, WorldError) as exc:
        print(f"python -m arb_audit.runner.reference.world: {exc.args[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
