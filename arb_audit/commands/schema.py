"""``arb-audit schema``: the JSON Schema of the audit record that ``arb-audit RUN_DIR --json`` prints."""

from __future__ import annotations

import json

import click


@click.command()
@click.option("--tree", is_flag=True, help="The schema of a tree's audits (arb-audit RESULTS_DIR --json).")
def schema(tree: bool) -> None:
    """Print the JSON Schema (draft 2020-12) of the audit record, with a description for every field.

    The record carries ``schema_version``; a kept audit of another version is audited anew, never
    misread.
    """
    from arb_audit.schema import json_schema

    click.echo(json.dumps(json_schema(tree=tree), indent=2, ensure_ascii=False))
