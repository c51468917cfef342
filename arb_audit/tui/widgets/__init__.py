"""The reviewer's desk's widgets, one per file (as harlequin's components)."""

from arb_audit.tui.widgets.code_view import CodeView
from arb_audit.tui.widgets.evidence_table import EvidenceTable
from arb_audit.tui.widgets.field_table import FieldTable
from arb_audit.tui.widgets.key_bar import KeyBar
from arb_audit.tui.widgets.runs_table import RunsTable
from arb_audit.tui.widgets.score_strip import ScoreStrip

__all__ = ["CodeView", "EvidenceTable", "FieldTable", "KeyBar", "RunsTable", "ScoreStrip"]
