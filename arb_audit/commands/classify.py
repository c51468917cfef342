"""``arb-audit classify PATH...``: what each training file does, with the lines that show it."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arb_audit.inert import inert_json
from arb_audit.redaction import redact, redact_all

if TYPE_CHECKING:
    from arb_audit.analyzer.classify import Classification


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file per line.")
@click.option("-v", "--verbose", is_flag=True, help="Show the evidence lines under each file.")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=0),
    default=None,
    help="Worker processes, each file's time and memory bounded (default: the CPU count; 0: none).",
)
@click.option(
    "--cache/--no-cache",
    default=True,
    help="Reuse results for files whose content was classified before (in the user cache store).",
)
def classify(paths: tuple[Path, ...], as_json: bool, verbose: bool, jobs: int | None, cache: bool) -> None:
    """Classify Python files, notebooks, YAML configs and shell launchers (folders: recursively).

    Each file gets its labels (SFT, DPO, GRPO, PPO, ONLINE_RL, REWARD_MODEL, DISTILLATION, MERGE,
    EVAL_ONLY, NONE_TRAINING, CONFIG_DEPENDENT), its primary label, its role, its training stages and
    the evidence for each. The files under a folder are read in that workspace: a script that calls
    the folder's own modules gets the stages of the code it calls. Nothing is imported or executed.
    Exit status 0, or 2 when no file was found.
    """
    from arb_audit.analyzer.workspace import classify_workspaces
    from arb_audit.cache_dirs import cache_root
    from arb_audit.report import clean
    from arb_audit.store import RunStore, StoreError

    with contextlib.ExitStack() as stack:
        store = None
        if cache:
            try:
                store = stack.enter_context(RunStore.open(cache_root() / "classify.duckdb", wait_s=5.0))
            except StoreError as exc:
                click.echo(clean(f"arb-audit classify: working without the cache: {exc}"), err=True)
        count = _print(
            classify_workspaces(list(paths), (os.cpu_count() or 1) if jobs is None else jobs, store),
            as_json,
            verbose,
            clean,
        )
    if count == 0:
        click.echo("arb-audit classify: no Python, notebook, YAML or shell file found", err=True)
        sys.exit(2)


HEADER = ("file", "primary", "labels", "role", "stages", "note")
"""Columns of the readable table."""


def _row(result: Classification, clean: Callable[[object], str]) -> list[str]:
    """One result as the table's cells (untrusted text escaped)."""
    stages = ", ".join(
        s.kind
        + (f"/{s.variant}" if s.variant and s.variant != s.kind else "")
        + (f"+{s.adapter}" if s.adapter else "")
        + (" (interactive)" if s.interactive else "")
        for s in result.stages
    )
    note = (
        f"error: {result.error}"
        if result.error
        else (f"default {result.default_route}" if result.default_route else "")
    )
    return [
        clean(redact(c))
        for c in (result.path, result.primary, ",".join(result.labels), result.role, stages, note)
    ]


def _print(
    results: Iterable[Classification], as_json: bool, verbose: bool, clean: Callable[[object], str]
) -> int:
    """Print JSON lines as results come, or a table of them (evidence under each row when verbose).

    Return how many files were classified.
    """
    if as_json:
        count = 0
        for result in results:
            click.echo(inert_json(json.dumps(redact_all(result.to_json()), ensure_ascii=False)))
            count += 1
        return count
    done = list(results)
    rows = [_row(r, clean) for r in done]
    widths = [max(len(c) for c in column) for column in zip(HEADER, *rows, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths[:-1]) + "  {}"
    click.echo(line.format(*HEADER).rstrip())
    for result, row in zip(done, rows, strict=True):
        click.echo(line.format(*row).rstrip())
        if verbose:
            for f in result.findings:
                what = (
                    f.signal
                    + (f" {f.kind}" if f.kind else "")
                    + (f" {'/'.join(f.routes)}" if f.routes else "")
                )
                click.echo(
                    f"    {f.line}:{f.col}  {f.detector}  {clean(redact(what))}  {clean(redact(f.excerpt))}"
                )
    return len(done)
