"""``arb-audit audit RUN_DIR`` (also ``arb-audit RUN_DIR``): ingest a run folder and print its audit."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import click

from arb_audit.inert import inert_json

NOTHING_USABLE = 2
"""Exit status when no audit could be produced."""


def describe_failure(exc: BaseException) -> str:
    """Say what failed in one line: the exception's kind, its message, and the file it names."""
    message = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = getattr(exc, "filename", None)
    shown = f"{type(exc).__name__}: {message}" + (f" ({where!s:.300})" if where else "")
    from arb_audit.report import clean  # agent-written names: no control character reaches the terminal

    return clean(shown[:1000])


def _fail(message: str) -> NoReturn:
    click.echo(f"arb-audit: {message}", err=True)
    sys.exit(NOTHING_USABLE)


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=True, dir_okay=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of the readable report.")
@click.option(
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Run store to write (default: RUN_DIR/.arb-audit/run.duckdb, or a per-user cache).",
)
@click.option(
    "--results-csv",
    type=click.Path(path_type=Path, dir_okay=False),
    help="AutoRL-Bench results.csv to take this run's row from.",
)
@click.option("--noise", type=float, help="Score change within which a difference is noise (score points).")
@click.option("--format", "format_name", help="Read the folder as this format instead of detecting it.")
@click.option(
    "--base-model-dir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="The base model's folder (safetensors), to compare the weights of stages trained from it.",
)
@click.option(
    "--intended",
    help="The training the task exists to test: online_rl, policy_gradient or a stage kind (sft, grpo, ...);"
    " default: what the run says of its task (on AutoRL-Bench online_rl on level-3 tasks, policy_gradient"
    " elsewhere; none on PostTrainBench, which prescribes no method).",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write the audit as one self-contained HTML page (no server, no network) to this file.",
)
@click.option(
    "--hash-artifacts",
    is_flag=True,
    help="Hash every model artifact found (BLAKE3, per tensor for safetensors) for its content id.",
)
def audit(
    run_dir: Path,
    as_json: bool,
    store_path: Path | None,
    results_csv: Path | None,
    noise: float | None,
    format_name: str | None,
    hash_artifacts: bool,
    base_model_dir: Path | None,
    intended: str | None,
    html_path: Path | None,
) -> None:
    """Audit the run folder RUN_DIR: ingest it into its run store and print the audit.

    RUN_DIR may also be a tree of runs (a PostTrainBench results folder): every run that counts is
    audited and the runs are reported together. Exit status 0 when an audit was produced (whatever the
    run's outcome), 2 when nothing usable was found.
    """
    from arb_audit.collectors.registry import CollectorLoadError
    from arb_audit.pipeline import AuditRequest, NoRunFound, audit_tree, run_tree
    from arb_audit.pipeline import audit as audit_run_dir
    from arb_audit.store import StoreError

    if not run_dir.exists():
        _fail(f"{run_dir}: no such folder")
    if not run_dir.is_dir():
        _fail(f"{run_dir}: not a folder (give the run folder, not one of its files)")
    run_dir = run_dir.resolve()
    try:
        report = audit_run_dir(
            run_dir,
            store=store_path,
            format=format_name,
            results_csv=results_csv,
            hash_artifacts=hash_artifacts,
            noise=noise,
            intended=intended,
            base_model_dir=base_model_dir,
        )
    except NoRunFound as exc:
        if (tree := run_tree(run_dir)) is None:
            _fail(str(exc))
        request = AuditRequest(hash_artifacts=hash_artifacts, noise=noise, intended=intended)
        audited = audit_tree(run_dir, *tree, request)
        if as_json:
            click.echo(inert_json(audited.to_json_text()))
        else:
            from arb_audit.report import render_tree

            render_tree(audited)
        return
    except StoreError as exc:
        _fail(str(exc) if store_path else f"{exc} (choose where the store goes with --store PATH)")
    except CollectorLoadError as exc:  # a --format that cannot be loaded
        _fail(str(exc))
    except Exception as exc:
        # The run folder is untrusted input: whatever a reader still fails on is said in one line
        # naming the file, never a traceback (ARB_AUDIT_DEBUG=1 shows it, for a bug report).
        if os.environ.get("ARB_AUDIT_DEBUG"):
            raise
        _fail(f"{run_dir}: could not be audited: {describe_failure(exc)}")
    if html_path is not None:
        from arb_audit.html_report import write_html

        try:
            write_html(report, html_path)
        except OSError as exc:
            _fail(f"{html_path}: cannot be written ({exc.strerror or exc})")
        click.echo(f"arb-audit: wrote {html_path}", err=True)
    if as_json:
        click.echo(inert_json(report.to_json_text()))
    else:
        from arb_audit.report import render

        render(report)
