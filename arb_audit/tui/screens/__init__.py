"""The reviewer's desk's screens, one per file."""

from arb_audit.tui.screens.evidence import EvidenceScreen
from arb_audit.tui.screens.help import HelpScreen
from arb_audit.tui.screens.override import OverrideModal
from arb_audit.tui.screens.run import RunScreen
from arb_audit.tui.screens.runs import RunsScreen
from arb_audit.tui.screens.verdict import VerdictScreen

__all__ = ["EvidenceScreen", "HelpScreen", "OverrideModal", "RunScreen", "RunsScreen", "VerdictScreen"]
