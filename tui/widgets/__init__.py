"""The reviewer's desk's widgets, one per file (as harlequin's components)."""

from tui.widgets.code_view import CodeView
from tui.widgets.evidence_table import EvidenceTable
from tui.widgets.field_table import FieldTable
from tui.widgets.key_bar import KeyBar
from tui.widgets.runs_table import RunsTable
from tui.widgets.score_strip import ScoreStrip

__all__ = ["CodeView", "EvidenceTable", "FieldTable", "KeyBar", "RunsTable", "ScoreStrip"]
