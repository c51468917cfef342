"""The readable audit: an :class:`~arb_audit.schema.AuditReport` rendered with rich.

Everything that comes from a run folder is untrusted text: it is put on screen as plain ``Text``
(never parsed as rich markup: the console is made with markup off, and cells are ``Text``) with control
characters shown as escapes by :func:`arb_audit.inert.inert`, so a model path cannot style, clear or
retitle the terminal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

from arb_audit.inert import inert

if TYPE_CHECKING:
    from arb_audit.evidence import Evidence
    from arb_audit.schema import AuditReport, AuditTree, Route, Run

STATUS_STYLE = {"scored": "green", "error": "red", "rejected": "magenta", "duplicate": "yellow"}
MAX_HISTORY_ROWS = 24
"""Attempts, revisions and commands shown each (the first and the last ones, and the best attempt);
the JSON report and the reviewer's desk have them all. Rich lays a table out by measuring every
cell, so a long run's report would spend most of its time drawing rows nobody scrolls back to."""
_Row = TypeVar("_Row")


def clean(value: Any, digits: int = 2) -> str:
    """Format a value from a run folder for one terminal line: ``—`` for None, unsafe characters escaped."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return inert(str(value))


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    hours, rest = divmod(round(value), 3600)
    return f"{hours}h{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"


def _short(stamp: str | None) -> str:
    """``2026-03-10T10:25:04.5+08:00`` -> ``03-10 10:25:04`` (the header gives the offset)."""
    return "—" if stamp is None else f"{stamp[5:10]} {stamp[11:19]}"


def _header(console: Console, run: Run) -> None:
    console.rule(Text.assemble(("arb-audit", "bold"), " · ", clean(run.run_id)))
    offset = run.utc_offset_s
    rows = [
        ("task", f"{clean(run.task)} (level {clean(run.level)})"),
        ("agent", f"{clean(run.scaffold)} driven by {clean(run.driver)}"),
        ("base model", f"{clean(run.base_model)}, base score {clean(run.base_score)}"),
        ("budget", _seconds(run.budget_s)),
        (
            "clock",
            f"started {clean(run.started_at)}, agent launched {clean(run.agent_launched_at)},"
            f" ended {clean(run.ended_at)}",
        ),
        ("local clock", "unknown (times shown as UTC)" if offset is None else f"UTC{offset / 3600:+g}h"),
        ("folder", clean(run.source_path)),
        ("store", clean(run.store_path)),
    ]
    # how the agent's process ended, where the run's files say it
    if run.agent_timed_out:
        rows.append(("agent end", "timed out and was killed"))
    elif run.agent_exit_code is not None:
        rows.append(("agent end", f"exit code {clean(run.agent_exit_code)}"))
    grid = Table.grid(padding=(0, 2))
    for key, value in rows:
        grid.add_row(Text(key, style="dim"), Text(value))
    console.print(grid)


def _timeline(console: Console, report: AuditReport) -> None:
    subs = report.submissions
    best = report.best.seq if report.best else None
    shown, left_out = _ends(subs)
    if best is not None and all(s.seq != best for s in shown):
        shown = sorted([*shown, next(s for s in subs if s.seq == best)], key=lambda s: s.seq)
        left_out -= 1
    table = Table(title=f"Submissions ({len(subs)} attempts)", title_justify="left", expand=False)
    for column in ("#", "requested", "completed", "status", "score"):
        table.add_column(column, no_wrap=True)
    table.add_column("model path", overflow="fold")
    table.add_column("note", ratio=1)
    for s in shown:
        note = f"cached answer of #{s.duplicate_of}" if s.duplicate_of else clean(s.error or "")
        table.add_row(
            str(s.seq),
            _short(s.requested_at),
            _short(s.completed_at),
            Text.assemble((s.status, STATUS_STYLE[s.status]), " ★ best" if s.seq == best else ""),
            clean(s.score),
            Text(clean(s.artifact_path or s.model_path)),
            Text(note),
        )
    console.print(table)
    if left_out:
        console.print(f"… {left_out:,} more attempts are in the JSON report (--json).")


def _ends(rows: list[_Row]) -> tuple[list[_Row], int]:
    """Return the first and last rows of a long list, and how many were left out between them."""
    if len(rows) <= MAX_HISTORY_ROWS:
        return rows, 0
    half = MAX_HISTORY_ROWS // 2
    return [*rows[:half], *rows[-half:]], len(rows) - 2 * half


def _code_history(console: Console, report: AuditReport) -> None:
    revisions, commands = report.revisions, report.commands
    if any(r.trigger != "final" for r in revisions):
        table = Table(title=f"Code history ({len(revisions)} revisions)", title_justify="left")
        for column, width in (("#", 3), ("taken", 14), ("trigger", 15)):
            table.add_column(column, no_wrap=True, min_width=width)
        table.add_column("files changed", ratio=1)
        shown, left_out = _ends(revisions)
        for r in shown:
            files = ", ".join(r.files[:6]) + (f" (+{len(r.files) - 6})" if len(r.files) > 6 else "")
            table.add_row(str(r.seq), _short(r.taken_at), Text(clean(r.trigger)), Text(clean(files)))
        console.print(table)
        if left_out:
            console.print(f"… {left_out:,} revisions between these are in the JSON report (--json).")
    if commands:
        table = Table(title=f"Commands ({len(commands)})", title_justify="left")
        for column, width in (("#", 3), ("started", 14), ("exit", 9), ("rev", 3)):
            table.add_column(column, no_wrap=True, min_width=width)
        table.add_column("command", no_wrap=True)
        room = max(console.width - 40, 20)
        shown_commands, left_out = _ends(commands)
        for c in shown_commands:
            if not c.finished:
                ended = Text("no result", style="yellow")
            elif c.exit_code is None:
                ended = Text("error" if c.error else "—", style="red" if c.error else "")
            else:
                ended = Text(str(c.exit_code), style="green" if c.exit_code == 0 else "red")
            line = c.command.strip().split("\n")[0]
            line = line if len(line) <= room else line[: room - 1] + "…"
            table.add_row(str(c.seq), _short(c.started_at), ended, clean(c.revision_seq), Text(clean(line)))
        console.print(table)
        if left_out:
            console.print(f"… {left_out:,} commands between these are in the JSON report (--json).")


def _metrics(console: Console, report: AuditReport) -> None:
    m, best = report.metrics, report.best
    if best:
        console.print(
            Text.assemble(
                ("Best valid submission", "bold"),
                f": #{best.seq} score {clean(best.score)} ({clean(best.model_path)}),"
                f" improvement over base {clean(best.improvement)}",
            )
        )
    else:
        console.print(Text("No valid submission.", style="bold red"))
    origin = {"agent_launch": "the agent's launch", "run_start": "the run's start (agent launch unknown)"}
    console.print(
        Text.assemble(
            ("Metrics", "bold"),
            f": {m.n_submissions} attempts = {m.n_scored} scored ({m.n_zero_score} of them zero)"
            f" + {m.n_errors} errors + {m.n_rejected} rejected + {m.n_duplicates} duplicates;"
            f" valid rate {clean(m.valid_rate)}; first valid after {_seconds(m.time_to_first_valid_s)},"
            f" best after {_seconds(m.time_to_best_s)}"
            f" (from {origin.get(m.clock_origin or '', 'an unknown origin')});"
            f" budget used {clean(m.time_used_ratio)}",
        )
    )


def _pointer(e: Evidence) -> str:
    """Return one evidence pointer as a reviewer reads it: ``train.py:37 @7f9c0931``, ``command #5``."""
    if e.kind == "command":
        return f"command #{e.command_seq}: {e.excerpt}"
    if e.kind == "submission":
        return f"submission #{e.submission_seq}: {e.excerpt}"
    where = e.path or ""
    if e.line:
        where += f":{e.line}"
    if e.revision:
        where += f" @{e.revision[:8]}"
    return f"{where} {e.excerpt}".strip()


def _route(console: Console, route: Route) -> None:
    best = route.best_label or "no valid submission"
    chain = f" ({clean(route.chain_text)})" if route.chain_text and route.chain_text != best else ""
    console.print(
        Text.assemble(("Route", "bold"), f": {clean(best)}{chain}, evidence {clean(route.strength)}")
    )
    listed = {
        k: ", ".join(labels) or "none"
        for k, labels in (
            ("attempted", route.attempted),
            ("written", route.written),
            ("adopted", route.adopted),
        )
    }
    console.print(
        Text(
            f"  attempted (code ran): {clean(listed['attempted'])}; written only: {clean(listed['written'])};"
            f" adopted (in the best lineage): {clean(listed['adopted'])}"
        )
    )
    for number, step in enumerate(route.chain or [], 1):
        head = f"{step.kind} → {step.artifact}" + (
            f" from {' + '.join(step.parents)}" if step.parents else ""
        )
        console.print(Text.assemble(f"  {number}. ", (clean(head), "cyan"), f" ({clean(step.strength)})"))
        for e in step.evidence[:3]:
            console.print(Text("       " + clean(_pointer(e))[:150]))
        weights = step.weights
        if weights is not None and weights.changed is not None:
            console.print(
                Text(
                    f"       weights: {weights.changed} of {weights.compared} tensors changed"
                    f" against the parent (largest relative change {clean(weights.max_rel_change, 4)})"
                )
            )
        for problem in (weights.problems if weights else [])[:2]:
            console.print(Text("       weights: " + clean(problem), style="yellow"))
        for conflict in step.conflicts:
            console.print(Text("       conflict: " + clean(conflict), style="yellow"))


def _verdicts(console: Console, report: AuditReport) -> None:
    route, failure, quadrant = report.route, report.failure, report.quadrant
    if route.status == "analyzed":
        _route(console, route)
    else:
        console.print(Text.assemble(("Route", "bold"), ": not analysed."))
    for line in route.can_tell:
        console.print(Text.assemble("  ", ("can tell  ", "green"), " ", clean(line)))
    for line in route.cannot_tell:
        console.print(Text.assemble("  ", ("cannot yet", "yellow"), " ", clean(line)))
    if route.agent_claims:
        claims = "; ".join(
            f"{clean(c.train_type)} in iteration(s) {', '.join(map(str, c.iterations))}"
            for c in route.agent_claims
        )
        console.print(Text.assemble("  the agent's own reports claim (unverified): ", claims))
    for c in route.score_claims:
        against = (
            "nothing was measured"
            if c.measured is None
            else f"measured {c.measured}" + ("" if c.agrees else " — DISAGREES")
        )
        console.print(
            Text.assemble(
                "  the agent claims (unverified) a score of ",
                f"{c.claimed:g} in {clean(c.source)}: {against}",
                style="" if c.agrees is not False else "yellow",
            )
        )
    console.print(
        Text.assemble(
            ("Failure", "bold"), f": {clean(failure.mode or 'undetermined')} — {clean(failure.reason)}"
        )
    )
    for e in failure.evidence[:3]:
        console.print(Text("       " + clean(_pointer(e))[:150]))
    answer = {True: "yes", False: "no", None: "unknown"}
    console.print(
        Text.assemble(
            ("Quadrant", "bold"),
            f": {clean(quadrant.cell or 'undetermined')} — score up beyond noise"
            f" ({clean(quadrant.noise_threshold)}): {answer[quadrant.score_up]};"
            f" intended training ({clean(quadrant.intended_stage)}) adopted:"
            f" {answer[quadrant.intended]}"
            f" ({clean(quadrant.reason)})",
        )
    )
    for e in quadrant.evidence[:3]:
        console.print(Text("       " + clean(_pointer(e))[:150]))


def _external_verdicts(console: Console, run: Run) -> None:
    """Show the benchmark's own judges' verdicts (PostTrainBench) beside ours, never merged into them."""
    verdicts = run.posttrainbench.external_verdicts if run.posttrainbench is not None else []
    if not verdicts:
        return
    console.print(
        Text(f"The benchmark's own judges ({len(verdicts)} verdicts, not arb-audit's)", style="bold")
    )
    for v in verdicts:
        answer = "yes" if v.value is True else "no" if v.value is False else "unreadable"
        judge = v.judge or "unsuffixed"
        rerun = ", rerun" if v.rerun else ""
        console.print(
            Text.assemble(
                "  ",
                (clean(v.question), "cyan"),
                f": {answer} ({clean(judge)}{rerun}; {clean(v.source)})",
            )
        )


def _flags_and_problems(console: Console, report: AuditReport) -> None:
    if report.flags:
        console.print(Text(f"Flags ({len(report.flags)})", style="bold red"))
        for f in report.flags:
            console.print(Text.assemble("  ", (clean(f.flag), "red"), " ", clean(f.message)))
    else:
        console.print(Text.assemble(("Flags", "bold"), ": none raised by what could be checked"))
    if report.problems:
        console.print(Text(f"Problems with the run folder ({len(report.problems)})", style="bold yellow"))
        for p in report.problems:
            console.print(Text.assemble("  ", (clean(p.path), "yellow"), ": ", clean(p.message)))


def render(audit: AuditReport, console: Console | None = None) -> None:
    """Print ``audit`` as a readable audit."""
    console = console or Console(markup=False)
    _header(console, audit.run)
    _timeline(console, audit)
    _code_history(console, audit)
    _metrics(console, audit)
    _verdicts(console, audit)
    _external_verdicts(console, audit.run)
    _flags_and_problems(console, audit)


def render_tree(audited: AuditTree, console: Console | None = None) -> None:
    """Print the audits of a tree of runs (``arb-audit RESULTS_DIR``) as one table, then what was left out."""
    console = console or Console(markup=False)
    runs = audited.runs
    console.rule(Text.assemble(("arb-audit", "bold"), " · ", clean(audited.tree)))
    table = Table(
        title=f"{len(runs)} runs that count ({clean(audited.format)})", title_justify="left", expand=True
    )
    table.add_column("run", overflow="fold", ratio=3)
    table.add_column("task", overflow="fold", ratio=1)
    table.add_column("base model", overflow="fold", ratio=2)
    for column in ("best", "revs", "cmds", "probs"):
        table.add_column(column, no_wrap=True)
    root = audited.tree.rstrip("/") + "/"
    for r in runs:
        where = r.run.source_path
        table.add_row(
            Text(clean(where[len(root) :] if where.startswith(root) else where)),
            Text(clean(r.run.task)),
            Text(clean(r.run.base_model)),
            clean(r.best.score) if r.best else Text("none valid", style="red"),
            str(len(r.revisions)),
            str(len(r.commands)),
            str(len(r.problems)),
        )
    console.print(table)
    for d in audited.dropped:
        console.print(Text.assemble(("  not counted ", "yellow"), clean(d.path), ": ", clean(d.reason)))
    for p in [*audited.failed, *audited.problems]:
        console.print(Text.assemble(("  problem ", "red"), clean(p.path), ": ", clean(p.message)))
    console.print("Audit one run for its full report: arb-audit RUN_DIR")
