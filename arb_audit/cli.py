"""The ``arb-audit`` command line: one click group, one module per command, each imported on use.

``arb-audit RUN_DIR`` is short for ``arb-audit audit RUN_DIR``. Nothing heavy is imported before a
command runs, so ``arb-audit --help`` stays fast.
"""

from __future__ import annotations

import importlib

import click

from arb_audit import __version__

COMMANDS: dict[str, tuple[str, str]] = {
    "agreement": (
        "arb_audit.commands.agreement",
        "Reviewers' agreement with the analyzer and each other (Cohen's and Fleiss' kappa, confusion).",
    ),
    "audit": ("arb_audit.commands.audit", "Audit one run folder (the default command)."),
    "classify": (
        "arb_audit.commands.classify",
        "What each training file does (route labels, with evidence).",
    ),
    "demo": (
        "arb_audit.commands.demo",
        "Record scripted agents in a tiny CPU world and audit them (the reference runs).",
    ),
    "export": (
        "arb_audit.commands.export",
        "A study table (cells, routes, failures, quadrants, flags) as LaTeX, Markdown, CSV or Parquet.",
    ),
    "ingest": ("arb_audit.commands.ingest", "Audit many runs in parallel into one study store."),
    "plot": (
        "arb_audit.commands.plot",
        "A study figure (scores, routes, failures, quadrants) as PDF, PNG or SVG.",
    ),
    "record": ("arb_audit.commands.record", "Run an agent under recording: revisions, submissions, hashes."),
    "review": (
        "arb_audit.commands.review",
        "The reviewer's desk: walk the evidence of runs and record verdicts (Textual).",
    ),
    "schema": (
        "arb_audit.commands.schema",
        "The JSON Schema of the audit record (--json), every field described.",
    ),
    "site": (
        "arb_audit.commands.site",
        "A study as a static site: its runs table (filter, sort) and figures, a page per run.",
    ),
    "verify": (
        "arb_audit.commands.verify",
        "Check that a recording's ledger and graded artifacts, and reviewers' verdicts, still hold.",
    ),
}
"""Command name -> (module holding a click command of that name, one-line help)."""
DEFAULT_COMMAND = "audit"


class LazyGroup(click.Group):
    """A group that imports a command's module only when that command runs or shows its help."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """List the command names without importing them."""
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """Import and return the command called ``cmd_name``."""
        if cmd_name not in COMMANDS:
            return None
        module = importlib.import_module(COMMANDS[cmd_name][0])
        command: click.Command = getattr(module, cmd_name)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """Treat a first argument that names no command as the run folder of ``audit``."""
        if args and args[0] not in COMMANDS and not args[0].startswith("-"):
            args = [DEFAULT_COMMAND, *args]
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Show each command's one-line help without importing it."""
        with formatter.section("Commands"):
            formatter.write_dl([(name, COMMANDS[name][1]) for name in sorted(COMMANDS)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arb-audit")
def main() -> None:
    """Audit agentic post-training runs: what was submitted, how it was made, and whether it holds.

    \b
    arb-audit RUN_DIR            print the audit of a run folder
    arb-audit RUN_DIR --json     the same as one JSON object
    """  # noqa: D301 -- the backspace is click's "do not rewrap" marker, so the string cannot be raw
