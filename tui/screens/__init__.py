"""The reviewer's desk's screens, one per file."""

from tui.screens.evidence import EvidenceScreen
from tui.screens.help import HelpScreen
from tui.screens.override import OverrideModal
from tui.screens.run import RunScreen
from tui.screens.runs import RunsScreen
from tui.screens.verdict import VerdictScreen

__all__ = ["EvidenceScreen", "HelpScreen", "OverrideModal", "RunScreen", "RunsScreen", "VerdictScreen"]
