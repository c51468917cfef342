"""The run's scores over its submissions.

One bar per submission, coloured by the route of the artifact it submitted, the best marked with a
star beneath.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

from arb_audit.taxonomy.palette import ROUTE_COLOURS, UNLABELLED
from arb_audit.taxonomy.routes import artifact_route

if TYPE_CHECKING:
    from arb_audit.schema import AuditReport

BARS = " ▁▂▃▄▅▆▇█"
"""Bar heights from none to full."""
MAX_SHOWN = 200
"""Submissions drawn; a longer run shows its last ones (the count says so)."""


def strip(report: AuditReport | None, routes_shown: bool = True) -> Text:
    """Return the strip of ``report``'s submissions: bars, the best marked, and a legend of routes.

    Without ``routes_shown`` (blind review) every bar has one colour and there is no legend; without an
    audit there are no submissions to draw.
    """
    if report is None:
        return Text("no submissions", style="dim")
    submissions = report.submissions
    lineage = report.route.lineage or {}
    best = report.best.seq if report.best else None
    scored = [s.score for s in submissions if s.status == "scored" and s.score is not None]
    top = max([*scored, 1e-9])
    text, marks, used = Text(), Text(), dict[str, str]()
    shown = submissions[-MAX_SHOWN:]
    for s in shown:
        stages = lineage.get(s.artifact_path or s.model_path or "")
        label = artifact_route(stages) if routes_shown and stages else None
        colour = ROUTE_COLOURS.get(label or "", UNLABELLED)
        if label:
            used[label] = colour
        if s.status == "scored" and s.score is not None:
            level = max(1, round(max(0.0, s.score) / top * (len(BARS) - 1)))
            text.append(BARS[level], style=colour)
        else:
            text.append("×", style="dim red")
        marks.append("★" if s.seq == best else " ", style="bold")
    if not shown:
        return Text("no submissions", style="dim")
    text.append(f"  max {max(scored):.1f}" if scored else "  nothing scored", style="dim")
    if len(submissions) > len(shown):
        text.append(f" (last {len(shown)} of {len(submissions)})", style="dim")
    legend = Text()
    for label, colour in used.items():
        legend.append("■ ", style=colour)
        legend.append(f"{label}  ")
    return Text("\n").join([text, marks, legend])


class ScoreStrip(Static):
    """The score-over-submissions strip of one run."""

    def show(self, report: AuditReport | None, routes_shown: bool = True) -> None:
        """Draw ``report``'s submissions (coloured by route unless ``routes_shown`` is false)."""
        self.update(strip(report, routes_shown))
