"""``arb-audit record``: run an agent under recording (code revisions, every submission, artifact hashes)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from arb_audit.inert import inert


@click.command(context_settings={"ignore_unknown_options": True})
@click.option(
    "--workspace",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The agent's workspace (snapshotted; submitted paths must lie inside it).",
)
@click.option(
    "--run-dir",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Where the recording goes; must lie outside the workspace.",
)
@click.option("--upstream", help="A real AutoRL-Bench grading server to forward submissions to instead.")
@click.option(
    "--evaluator",
    help="Evaluator command; the model path is appended and its last stdout line must be"
    ' {"score": ...} (or {"error": ...}).',
)
@click.option("--port", default=0, show_default=True, help="Port of the grading API (0: any free port).")
@click.option(
    "--snapshot-every",
    "snapshot_every",
    default=60.0,
    show_default=True,
    help="Seconds between timer snapshots of the workspace.",
)
@click.option(
    "--budget-s", type=float, help="Time budget; the agent's process group is ended when it runs out."
)
@click.option("--task", help="Task id.")
@click.option(
    "--level",
    type=click.IntRange(1, 3),
    help="The task's level: 1 static rule-based, 2 static judge-based, 3 interactive rollout.",
)
@click.option(
    "--eval-size",
    type=click.IntRange(min=1),
    help="Items in the task's grading split: the audit's default noise threshold is 100/sqrt(N) points.",
)
@click.option(
    "--intended",
    help="The training the task exists to test (online_rl, policy_gradient or a stage kind), for the audit.",
)
@click.option("--scaffold", help="The agent scaffold (for study tables).")
@click.option("--driver", help="The model or program driving the agent (for study tables).")
@click.option("--base-model", help="Base model id.")
@click.option("--baseline-score", type=float, help="The base model's score (for improvement).")
@click.option(
    "--name",
    help="A short name for the run, in its id (recorded:TASK/NAME-<random>); default: RUN_DIR's name.",
)
@click.option(
    "--portable",
    is_flag=True,
    help="Keep no absolute path of this machine in the recording: the workspace (which must lie beside"
    " RUN_DIR) is found relative to it, wherever the two are moved or cloned together.",
)
@click.argument("agent", nargs=-1, required=True, type=click.UNPROCESSED)
def record(
    workspace: Path,
    run_dir: Path,
    upstream: str | None,
    evaluator: str | None,
    port: int,
    snapshot_every: float,
    budget_s: float | None,
    task: str | None,
    level: int | None,
    eval_size: int | None,
    intended: str | None,
    scaffold: str | None,
    driver: str | None,
    base_model: str | None,
    baseline_score: float | None,
    name: str | None,
    portable: bool,
    agent: tuple[str, ...],
) -> None:
    """Record AGENT (given after --) working in the workspace, into RUN_DIR.

    The agent talks to the grading API at $GRADING_SERVER_URL (POST /submit, GET /health, GET /time);
    `arb-audit RUN_DIR` audits the recording afterwards. The run gets an id of its own, kept in
    RUN_DIR/recording.json; recording again into the same RUN_DIR resumes that run. Exit status: the
    agent's.
    """
    from arb_audit.model import TaskDescription
    from arb_audit.runner.record import RecordError, RecordOptions
    from arb_audit.runner.record import record as run_recording
    from arb_audit.store import StoreError

    try:
        command = shlex.split(evaluator) if evaluator else None
    except ValueError as exc:
        click.echo(inert(f"arb-audit record: --evaluator {evaluator!r}: {exc}"), err=True)
        sys.exit(2)
    options = RecordOptions(
        workspace=workspace,
        run_dir=run_dir,
        agent=list(agent),
        evaluator=command,
        upstream=upstream,
        port=port,
        snapshot_every_s=snapshot_every,
        budget_s=budget_s,
        task=task,
        # what the task is, as the user says: kept in recording.json, where the audit reads it
        task_description=TaskDescription("recording.json", level, eval_size, intended)
        if (level, eval_size, intended) != (None, None, None)
        else None,
        scaffold=scaffold,
        driver=driver,
        base_model=base_model,
        baseline_score=baseline_score,
        name=name,
        portable=portable,
    )
    try:
        sys.exit(run_recording(options))
    except (RecordError, StoreError) as exc:
        click.echo(inert(f"arb-audit record: {exc}"), err=True)
        sys.exit(2)
