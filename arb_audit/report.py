"""The readable audit: the JSON report of ``analyzer.audit`` rendered with rich."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

STATUS_STYLE = {"scored": "green", "error": "red", "rejected": "magenta", "duplicate": "yellow"}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    hours, rest = divmod(round(value), 3600)
    return f"{hours}h{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"


def _short(stamp: str | None) -> str:
    """``2026-03-10T10:25:04.5+08:00`` -> ``03-10 10:25:04`` (the header gives the offset)."""
    return "—" if stamp is None else f"{stamp[5:10]} {stamp[11:19]}"


def _header(console: Console, run: dict[str, Any]) -> None:
    console.rule(f"[bold]arb-audit[/] · {escape(run['run_id'])}")
    rows = [
        ("task", f"{_fmt(run['task'])} (level {_fmt(run['level'])})"),
        ("agent", f"{_fmt(run['scaffold'])} driven by {_fmt(run['driver'])}"),
        ("base model", f"{_fmt(run['base_model'])}, base score {_fmt(run['base_score'])}"),
        ("budget", _seconds(run["budget_s"])),
        (
            "clock",
            f"started {_fmt(run['started_at'])}, agent launched {_fmt(run['agent_launched_at'])},"
            f" ended {_fmt(run['ended_at'])}",
        ),
        (
            "local clock",
            "unknown (times shown as UTC)"
            if run["utc_offset_s"] is None
            else f"UTC{run['utc_offset_s'] / 3600:+g}h",
        ),
        ("folder", _fmt(run["source_path"])),
        ("store", _fmt(run["store_path"])),
    ]
    if run.get("agent_timed_out"):
        rows.append(("agent end", "timed out and was killed"))
    elif run.get("agent_exit_code") is not None:
        rows.append(("agent end", f"exit code {run['agent_exit_code']}"))
    grid = Table.grid(padding=(0, 2))
    for key, value in rows:
        grid.add_row(f"[dim]{key}[/]", value)
    console.print(grid)


def _timeline(console: Console, report: dict[str, Any]) -> None:
    subs = report["submissions"]
    best = (report["best"] or {}).get("seq")
    table = Table(title=f"Submissions ({len(subs)} attempts)", title_justify="left", expand=False)
    for column in ("#", "requested", "completed", "status", "score"):
        table.add_column(column, no_wrap=True)
    table.add_column("model path", overflow="fold")
    table.add_column("note", ratio=1)
    for s in subs:
        status = s["status"]
        note = s["error"] or ""
        if s["duplicate_of"]:
            note = f"cached answer of #{s['duplicate_of']}"
        mark = " ★ best" if s["seq"] == best else ""
        table.add_row(
            str(s["seq"]),
            _short(s["requested_at"]),
            _short(s["completed_at"]),
            f"[{STATUS_STYLE[status]}]{status}[/]{mark}",
            _fmt(s["score"]),
            _fmt(s["artifact_path"] or s["model_path"]),
            escape(note),
        )
    console.print(table)


def _metrics(console: Console, report: dict[str, Any]) -> None:
    m = report["metrics"]
    best = report["best"]
    if best:
        console.print(
            f"[bold]Best valid submission[/]: #{best['seq']} score {_fmt(best['score'])}"
            f" ({_fmt(best['model_path'])}), improvement over base {_fmt(best['improvement'])}"
        )
    else:
        console.print("[bold red]No valid submission.[/]")
    origin = {"agent_launch": "the agent's launch", "run_start": "the run's start (agent launch unknown)"}
    console.print(
        f"[bold]Metrics[/]: {m['n_submissions']} attempts = {m['n_scored']} scored"
        f" ({m['n_zero_score']} of them zero) + {m['n_errors']} errors + {m['n_rejected']} rejected"
        f" + {m['n_duplicates']} duplicates; valid rate {_fmt(m['valid_rate'])};"
        f" first valid after {_seconds(m['time_to_first_valid_s'])}, best after"
        f" {_seconds(m['time_to_best_s'])} (from {origin.get(m['clock_origin'] or '', 'an unknown origin')});"
        f" budget used {_fmt(m['time_used_ratio'])}"
    )


def _verdicts(console: Console, report: dict[str, Any]) -> None:
    route, failure, quadrant = report["route"], report["failure"], report["quadrant"]
    console.print("[bold]Route[/]: not analysed yet.")
    for line in route["can_tell"]:
        console.print(f"  [green]can tell[/]   {escape(line)}")
    for line in route["cannot_tell"]:
        console.print(f"  [yellow]cannot yet[/] {escape(line)}")
    if route["agent_claims"]:
        claims = "; ".join(
            f"{escape(c['train_type'])} in iteration(s) {', '.join(map(str, c['iterations']))}"
            for c in route["agent_claims"]
        )
        console.print(f"  the agent's own reports claim (unverified): {claims}")
    mode = failure["mode"] or "undetermined"
    console.print(f"[bold]Failure[/]: {escape(mode)} — {escape(failure['reason'])}")
    up = {True: "yes", False: "no", None: "unknown"}[quadrant["score_up"]]
    console.print(
        f"[bold]Quadrant[/]: score up beyond noise ({_fmt(quadrant['noise_threshold'])}): {up};"
        f" intended training: unknown ({escape(quadrant['reason'])})"
    )


def _flags_and_problems(console: Console, report: dict[str, Any]) -> None:
    if report["flags"]:
        console.print(f"[bold red]Flags ({len(report['flags'])})[/]")
        for f in report["flags"]:
            console.print(f"  [red]{escape(f['flag'])}[/] {escape(f['message'])}")
    else:
        console.print("[bold]Flags[/]: none raised by what could be checked")
    if report["problems"]:
        console.print(f"[bold yellow]Problems with the run folder ({len(report['problems'])})[/]")
        for p in report["problems"]:
            console.print(f"  [yellow]{escape(p['path'])}[/]: {escape(p['message'])}")


def render(report: dict[str, Any], console: Console | None = None) -> None:
    """Print ``report`` (the object of ``analyzer.audit.build_audit``) as a readable audit."""
    console = console or Console()
    _header(console, report["run"])
    _timeline(console, report)
    _metrics(console, report)
    _verdicts(console, report)
    _flags_and_problems(console, report)
