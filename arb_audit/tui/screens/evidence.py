"""One evidence pointer opened.

Code at its revision with the cited lines highlighted (and the diff between any two versions of the
file), a command and its output, a submission, a log excerpt, or an artifact's tensor changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Static

from arb_audit.inert import inert
from arb_audit.tui.evidence import EvidenceItem, command, revision_seq, submission, tensor_changes
from arb_audit.tui.session import FileVersion, ReviewSession
from arb_audit.tui.widgets import CodeView, KeyBar
from arb_audit.tui.widgets.code_view import unified_diff

if TYPE_CHECKING:
    from arb_audit.evidence import Evidence
    from arb_audit.schema import AuditReport, Command


class EvidenceScreen(Screen[None]):
    """The pointer ``index`` of ``items``; n and p walk the list, d shows a diff of the cited file."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "step(1)", "Next evidence"),
        Binding("p", "step(-1)", "Previous evidence"),
        Binding("d", "diff", "Diff"),
        Binding("left_square_bracket", "move_old(-1)", "Older from", show=False),
        Binding("right_square_bracket", "move_old(1)", "Newer from", show=False),
        Binding("less_than_sign", "move_new(-1)", "Older to", show=False),
        Binding("greater_than_sign", "move_new(1)", "Newer to", show=False),
        Binding("escape", "app.pop_screen", "Back"),
    ]

    def __init__(self, session: ReviewSession) -> None:
        super().__init__()
        self.session = session
        self.report: AuditReport | None = None
        """The audit whose evidence is shown (set before the screen is)."""
        self.items: list[EvidenceItem] = []
        self.index = 0
        """Which pointer is shown."""
        self.fresh = False
        """Whether another pointer was chosen since the screen was last shown."""
        self.versions: list[FileVersion] = []
        """The cited file's versions in the run's history (code evidence)."""
        self.diff_pair: tuple[int, int] | None = None
        """Indexes into :attr:`versions` of the diff's two sides, or None when the code is shown."""

    def compose(self) -> ComposeResult:
        """Lay out the title line, the view, the tensor table (artifacts) and the footer."""
        yield Static(id="evidence-title")
        yield CodeView(id="code")
        yield DataTable(id="tensors", cursor_type="row")
        yield KeyBar()

    def show_pointer(self, report: AuditReport, items: list[EvidenceItem], index: int) -> None:
        """Point the screen at ``items[index]`` of ``report`` (one EvidenceScreen serves every pointer)."""
        self.report, self.items, self.index = report, items, index
        self.fresh = True
        # a notice about the last pointer (no other version...) is not about this one
        self.app.clear_notifications()

    def on_mount(self) -> None:
        """Lay out the tensor table's columns."""
        self.query_one("#tensors", DataTable).add_columns("what", "value")

    def on_screen_resume(self) -> None:
        """Show the pointer chosen."""
        if self.fresh:
            self.fresh = False
            self.show()

    @property
    def item(self) -> EvidenceItem:
        """The pointer shown."""
        return self.items[self.index]

    @property
    def audit(self) -> AuditReport:
        """The audit whose evidence is shown."""
        if self.report is None:
            raise RuntimeError("the evidence screen is shown before a pointer was chosen")
        return self.report

    def show(self) -> None:
        """Show the current pointer by its kind."""
        item, pointer, report = self.item, self.item.pointer, self.audit
        self.diff_pair = None
        position = f"{self.index + 1} of {len(self.items)}"
        self.query_one("#evidence-title", Static).update(
            Text.assemble((inert(item.claim), "bold"), inert(f" · {item.kind} · {item.where} · {position}"))
        )
        table = self.query_one("#tensors", DataTable)
        table.clear()
        table.display = False
        view = self.query_one(CodeView)
        if item.kind == "code" and pointer.path:
            self.versions = self.session.file_versions(report, pointer.path)
            self._show_code(view)
        elif item.kind == "command" and pointer.command_seq is not None:
            found = command(report, pointer.command_seq)
            view.show_text(_command_text(found) if found else pointer.excerpt)
        elif item.kind == "submission" and pointer.submission_seq is not None:
            attempt = submission(report, pointer.submission_seq)
            # every field of the attempt as --json names it (the pointer's own when the audit lacks it)
            fields = attempt.to_json() if attempt else pointer.to_json()
            view.show_text("\n".join(f"{k}: {v}" for k, v in fields.items() if k != "evidence"))
        elif item.kind == "artifact" and pointer.path:
            rows = tensor_changes(report, pointer.path)
            view.show_text(pointer.excerpt + ("" if rows else "\n(no weight comparison recorded)"))
            # tensor names come from a header the agent wrote: plain Text, never read as markup
            table.add_rows([tuple(Text(inert(cell)) for cell in row) for row in rows])
            table.display = bool(rows)
        else:
            view.show_text(f"{item.where}\n\n{pointer.excerpt}")

    def _show_code(self, view: CodeView) -> None:
        pointer, report = self.item.pointer, self.audit
        at = version_at(report, self.versions, pointer.revision or "")
        text = self.session.code(report, at.blob, pointer.path) if at else None
        if text is None:
            view.show_text(
                f"{self.item.where}\n\n{pointer.excerpt}\n\n(the code at this revision is not available)"
            )
            return
        view.show_code(text, pointer.path or "", cited_lines(pointer))

    def action_step(self, delta: int) -> None:
        """Show the next (1) or previous (-1) pointer."""
        self.index = (self.index + delta) % len(self.items)
        self.show()

    def action_diff(self) -> None:
        """Toggle the diff between the cited version of the file and the version before it."""
        if self.item.kind != "code" or len(self.versions) < 2:
            self.notify("no other version of this file to compare with", severity="warning")
            return
        if self.diff_pair is not None:
            self.show()
            return
        at = version_at(self.audit, self.versions, self.item.pointer.revision or "")
        cited = self.versions.index(at) if at is not None else len(self.versions) - 1
        new = max(cited, 1)
        self._show_diff((new - 1, new))

    def action_move_old(self, delta: int) -> None:
        """Move the diff's older side through the file's versions."""
        if self.diff_pair is not None:
            old, new = self.diff_pair
            self._show_diff((min(max(0, old + delta), new - 1), new))

    def action_move_new(self, delta: int) -> None:
        """Move the diff's newer side through the file's versions."""
        if self.diff_pair is not None:
            old, new = self.diff_pair
            self._show_diff((old, min(max(old + 1, new + delta), len(self.versions) - 1)))

    def _show_diff(self, pair: tuple[int, int]) -> None:
        self.diff_pair = pair
        old, new = (self.versions[i] for i in pair)
        path = self.item.pointer.path or ""
        diff = unified_diff(
            self.session.code(self.audit, old.blob, path) or "",
            self.session.code(self.audit, new.blob, path) or "",
            path,
            f"revision {old.revision_seq}",
            f"revision {new.revision_seq}",
        )
        self.query_one(CodeView).show_diff(diff)
        self.query_one("#evidence-title", Static).update(
            Text.assemble(
                ("diff ", "bold"),
                f"{inert(path)}: revision {old.revision_seq} → {new.revision_seq} "
                f"(version {pair[0] + 1} → {pair[1] + 1} of {len(self.versions)}; "
                "[ ] and < > move the sides)",
            )
        )


def _command_text(found: Command) -> str:
    lines = [f"$ {found.command}", f"exit code: {found.exit_code}"]
    if found.error:
        lines.append(f"error: {found.error}")
    lines += ["", found.output_excerpt or "(no output recorded)"]
    return "\n".join(lines)


def version_at(report: AuditReport, versions: list[FileVersion], revision: str) -> FileVersion | None:
    """Return the version of a file in force at commit ``revision``.

    That is the last one taken at or before it: a revision that did not change the file holds an
    earlier version.
    """
    seq = revision_seq(report, revision)
    if seq is None:
        return next((v for v in versions if v.commit == revision), None)
    before = [v for v in versions if v.revision_seq <= seq]
    return before[-1] if before else None


def cited_lines(pointer: Evidence) -> tuple[int, int] | None:
    """Return the (first, last) lines a code pointer cites, or None when it cites none it can mean.

    The audit was built from agent-written files: a line that is not a positive number is none.
    """
    first = pointer.line
    if first is None or first <= 0:
        return None
    return (first, max(first, pointer.end_line or first))
