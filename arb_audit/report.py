"""The readable audit: the JSON report of ``analyzer.audit`` rendered with rich.

Everything that comes from a run folder is untrusted text: it is put on screen as plain ``Text``
(never parsed as rich markup) with control characters shown as escapes, so a model path cannot style,
clear or retitle the terminal.
"""

from __future__ import annotations

import re
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

STATUS_STYLE = {"scored": "green", "error": "red", "rejected": "magenta", "duplicate": "yellow"}
MAX_TIMELINE_ROWS = 200
"""Attempts shown in the readable timeline; the JSON report has them all."""
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control characters, line breaks and bidirectional overrides: each could forge or hide report lines."""


def clean(value: Any, digits: int = 2) -> str:
    """Format a value from a run folder for one terminal line: ``—`` for None, unsafe characters escaped."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return _UNSAFE.sub(_escape, str(value))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    hours, rest = divmod(round(value), 3600)
    return f"{hours}h{rest // 60:02d}m{rest % 60:02d}s" if hours else f"{rest // 60}m{rest % 60:02d}s"


def _short(stamp: str | None) -> str:
    """``2026-03-10T10:25:04.5+08:00`` -> ``03-10 10:25:04`` (the header gives the offset)."""
    return "—" if stamp is None else f"{stamp[5:10]} {stamp[11:19]}"


def _header(console: Console, run: dict[str, Any]) -> None:
    console.rule(Text.assemble(("arb-audit", "bold"), " · ", clean(run["run_id"])))
    offset = run["utc_offset_s"]
    rows = [
        ("task", f"{clean(run['task'])} (level {clean(run['level'])})"),
        ("agent", f"{clean(run['scaffold'])} driven by {clean(run['driver'])}"),
        ("base model", f"{clean(run['base_model'])}, base score {clean(run['base_score'])}"),
        ("budget", _seconds(run["budget_s"])),
        (
            "clock",
            f"started {clean(run['started_at'])}, agent launched {clean(run['agent_launched_at'])},"
            f" ended {clean(run['ended_at'])}",
        ),
        ("local clock", "unknown (times shown as UTC)" if offset is None else f"UTC{offset / 3600:+g}h"),
        ("folder", clean(run["source_path"])),
        ("store", clean(run["store_path"])),
    ]
    if run.get("agent_timed_out"):
        rows.append(("agent end", "timed out and was killed"))
    elif run.get("agent_exit_code") is not None:
        rows.append(("agent end", f"exit code {clean(run['agent_exit_code'])}"))
    grid = Table.grid(padding=(0, 2))
    for key, value in rows:
        grid.add_row(Text(key, style="dim"), Text(value))
    console.print(grid)


def _timeline(console: Console, report: dict[str, Any]) -> None:
    subs = report["submissions"]
    best = (report["best"] or {}).get("seq")
    shown = subs[:MAX_TIMELINE_ROWS]
    if best is not None and all(s["seq"] != best for s in shown):
        shown = [*shown, next(s for s in subs if s["seq"] == best)]
    table = Table(title=f"Submissions ({len(subs)} attempts)", title_justify="left", expand=False)
    for column in ("#", "requested", "completed", "status", "score"):
        table.add_column(column, no_wrap=True)
    table.add_column("model path", overflow="fold")
    table.add_column("note", ratio=1)
    for s in shown:
        status = s["status"]
        note = f"cached answer of #{s['duplicate_of']}" if s["duplicate_of"] else clean(s["error"] or "")
        table.add_row(
            str(s["seq"]),
            _short(s["requested_at"]),
            _short(s["completed_at"]),
            Text.assemble((status, STATUS_STYLE[status]), " ★ best" if s["seq"] == best else ""),
            clean(s["score"]),
            Text(clean(s["artifact_path"] or s["model_path"])),
            Text(note),
        )
    console.print(table)
    if len(shown) < len(subs):
        console.print(f"… {len(subs) - len(shown):,} more attempts are in the JSON report (--json).")


def _metrics(console: Console, report: dict[str, Any]) -> None:
    m = report["metrics"]
    best = report["best"]
    if best:
        console.print(
            Text.assemble(
                ("Best valid submission", "bold"),
                f": #{best['seq']} score {clean(best['score'])} ({clean(best['model_path'])}),"
                f" improvement over base {clean(best['improvement'])}",
            )
        )
    else:
        console.print(Text("No valid submission.", style="bold red"))
    origin = {"agent_launch": "the agent's launch", "run_start": "the run's start (agent launch unknown)"}
    console.print(
        Text.assemble(
            ("Metrics", "bold"),
            f": {m['n_submissions']} attempts = {m['n_scored']} scored ({m['n_zero_score']} of them zero)"
            f" + {m['n_errors']} errors + {m['n_rejected']} rejected + {m['n_duplicates']} duplicates;"
            f" valid rate {clean(m['valid_rate'])}; first valid after {_seconds(m['time_to_first_valid_s'])},"
            f" best after {_seconds(m['time_to_best_s'])}"
            f" (from {origin.get(m['clock_origin'] or '', 'an unknown origin')});"
            f" budget used {clean(m['time_used_ratio'])}",
        )
    )


def _verdicts(console: Console, report: dict[str, Any]) -> None:
    route, failure, quadrant = report["route"], report["failure"], report["quadrant"]
    console.print(Text.assemble(("Route", "bold"), ": not analysed yet."))
    for line in route["can_tell"]:
        console.print(Text.assemble("  ", ("can tell  ", "green"), " ", clean(line)))
    for line in route["cannot_tell"]:
        console.print(Text.assemble("  ", ("cannot yet", "yellow"), " ", clean(line)))
    if route["agent_claims"]:
        claims = "; ".join(
            f"{clean(c['train_type'])} in iteration(s) {', '.join(map(str, c['iterations']))}"
            for c in route["agent_claims"]
        )
        console.print(Text.assemble("  the agent's own reports claim (unverified): ", claims))
    console.print(
        Text.assemble(
            ("Failure", "bold"), f": {clean(failure['mode'] or 'undetermined')} — {clean(failure['reason'])}"
        )
    )
    up = {True: "yes", False: "no", None: "unknown"}[quadrant["score_up"]]
    console.print(
        Text.assemble(
            ("Quadrant", "bold"),
            f": score up beyond noise ({clean(quadrant['noise_threshold'])}): {up};"
            f" intended training: unknown ({clean(quadrant['reason'])})",
        )
    )


def _flags_and_problems(console: Console, report: dict[str, Any]) -> None:
    if report["flags"]:
        console.print(Text(f"Flags ({len(report['flags'])})", style="bold red"))
        for f in report["flags"]:
            console.print(Text.assemble("  ", (clean(f["flag"]), "red"), " ", clean(f["message"])))
    else:
        console.print(Text.assemble(("Flags", "bold"), ": none raised by what could be checked"))
    if report["problems"]:
        console.print(Text(f"Problems with the run folder ({len(report['problems'])})", style="bold yellow"))
        for p in report["problems"]:
            console.print(Text.assemble("  ", (clean(p["path"]), "yellow"), ": ", clean(p["message"])))


def render(report: dict[str, Any], console: Console | None = None) -> None:
    """Print ``report`` (the object of ``analyzer.audit.build_audit``) as a readable audit."""
    console = console or Console()
    _header(console, report["run"])
    _timeline(console, report)
    _metrics(console, report)
    _verdicts(console, report)
    _flags_and_problems(console, report)
