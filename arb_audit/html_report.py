"""One audit as one self-contained HTML page: for co-authors and reviewers who will not install a CLI.

Everything is inlined (styles, the score strip as SVG, code excerpts): the page opens from a mail
attachment with no server and no network. Every string from the run is escaped, and the page's own
Content-Security-Policy allows no script at all, so nothing an agent wrote can run in a reader's
browser; expanding evidence uses ``<details>``, which needs none. Code evidence is shown at the
revision it cites, read from the run's revisions.git, with the cited lines marked and, collapsed, the
diff against the file's previous version; a command shows its output's first and last lines. Terminal
escapes in run text are dropped and other control characters shown as symbols.
"""

from __future__ import annotations

import difflib
import html
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from arb_audit.schema import AuditReport, Evidence, Stage
from arb_audit.taxonomy.labels import DEFAULT_LABELS
from arb_audit.taxonomy.palette import ROUTE_COLOURS, UNLABELLED
from arb_audit.taxonomy.routes import artifact_route

CONTEXT_LINES = 3
"""Lines shown around the cited ones in a code excerpt."""
MAX_EXCERPT_LINES = 40
"""Most lines of one code excerpt."""
MAX_EVIDENCE = 12
"""Pointers shown per claim (the JSON report has them all)."""
DIFF_CONTEXT = 3
"""Unchanged lines around each change in a diff against the previous version."""
MAX_DIFF_LINES = 120
"""Most lines of one diff (a file rewritten whole would otherwise repeat itself twice)."""
OUTPUT_HEAD = 10
OUTPUT_TAIL = 10
"""Lines of a command's output shown first and last; the rest opens on demand."""
_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")
"""Terminal escape sequences (colours, cursor moves, titles): a page shows the text without them."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_UNPRINTABLE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
"""What :func:`printable` changes: the control characters but tab and newline (a carriage return, an
escape's start included). Most text has none, and is passed on without the three rewrites."""

CodeReader = Callable[[str, str], str | None]
"""(revision, path) -> the file's text at that revision, or None."""
PreviousReader = Callable[[str, str], tuple[str, str | None] | None]
"""(revision, path) -> (the revision before the file's version there, its text then or None), or None."""


@dataclass(frozen=True, slots=True)
class CodeSource:
    """Where a page reads the code its evidence cites: a file at a revision, and its version before."""

    at: CodeReader
    """The file at a revision."""
    before: PreviousReader | None = None
    """The file's previous version (None: no diffs shown)."""


STYLE = "".join(
    (
        "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;",
        "max-width:1100px;padding:1.5rem;color:#1d1d1f}",
        "h1{font-size:1.3rem;margin:0 0 .3rem}",
        "h2{font-size:1.05rem;margin:1.6rem 0 .5rem;border-bottom:1px solid #ddd}",
        ".meta{color:#555}",
        ".pill{display:inline-block;padding:0 .45rem;border-radius:.6rem;background:#eee;margin-right:.3rem}",
        ".ok{background:#d8f3dc}",
        ".bad{background:#ffd6d6}",
        ".warn{background:#fff1c2}",
        "table{border-collapse:collapse;width:100%;font-size:13px}",
        "th,td{border-bottom:1px solid #eee;padding:.2rem .4rem;text-align:left;vertical-align:top}",
        "td.num{text-align:right;font-variant-numeric:tabular-nums}",
        "code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}",
        "pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;margin:.3rem 0}",
        ".hit{background:#fff3b0;display:block}",
        ".add{background:#e6ffec;display:block}",
        ".del{background:#ffebe9;display:block}",
        "details{margin:.2rem 0}",
        "summary{cursor:pointer}",
        ".ev{color:#444;margin-left:1rem}",
    )
)
"""The page's only style: plain, printable, readable without it."""


def printable(text: str) -> str:
    """Return ``text`` without terminal escape sequences, other control characters shown as symbols."""
    if not _UNPRINTABLE.search(text):
        return text
    lines = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")  # a progress bar's redraws
    return _CONTROLS.sub(lambda m: "\u2421" if m[0] == "\x7f" else chr(0x2400 + ord(m[0])), lines)


def escape(value: object) -> str:
    """Escape any value for HTML text or an attribute (agent-written text included); None shows as —.

    Terminal escapes are dropped and other control characters shown as symbols (:func:`printable`).
    """
    return html.escape(printable("—" if value is None else str(value)), quote=True)


_e = escape


def _el(tag: str, text: str = "", **attrs: object) -> str:
    """Return one SVG or HTML element; attribute names take ``-`` for ``_``, values are escaped."""
    shown = "".join(f' {name.rstrip("_").replace("_", "-")}="{_e(value)}"' for name, value in attrs.items())
    return f"<{tag}{shown}>{text}</{tag}>"


def _seconds(value: float | None) -> str:
    if value is None:
        return "—"
    minutes, seconds = divmod(int(value), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{seconds:02d}s"


def _when(stamp: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp) if stamp else None
    except ValueError:
        return None


def _code(evidence: Evidence, code: CodeSource | None) -> str:
    """Return the cited lines of a code pointer at its revision, with context, and its diff.

    The diff against the file's previous version is collapsed; '' when the code is not at hand.
    """
    if code is None or evidence.kind != "code" or not evidence.revision or not evidence.path:
        return ""
    text = code.at(evidence.revision, evidence.path)
    if text is None or evidence.line is None:
        return ""
    lines = text.splitlines()
    first, last = evidence.line, evidence.end_line or evidence.line
    start = max(1, first - CONTEXT_LINES)
    stop = min(len(lines), last + CONTEXT_LINES, start + MAX_EXCERPT_LINES - 1)
    shown = []
    for number in range(start, stop + 1):
        row = f"{number:>5}  {_e(lines[number - 1])}"
        shown.append(f'<span class="hit">{row}</span>' if first <= number <= last else row + "\n")
    return "<pre>" + "".join(shown) + "</pre>" + _diff(evidence.revision, evidence.path, text, code)


def _diff(revision: str, path: str, text: str, code: CodeSource) -> str:
    """Return the diff of ``path`` at ``revision`` against its previous version, in a closed details."""
    previous = code.before(revision, path) if code.before else None
    if previous is None:
        return ""
    sha, old = previous
    if old is None:
        return f"<div class='meta'>new in this revision (not in {_e(sha[:8])})</div>"
    lines = list(
        difflib.unified_diff(
            old.splitlines(),
            text.splitlines(),
            f"{path} @{sha[:8]}",
            f"{path} @{revision[:8]}",
            n=DIFF_CONTEXT,
            lineterm="",
        )
    )
    rest = len(lines) - MAX_DIFF_LINES
    rows = []
    for number, line in enumerate(lines[:MAX_DIFF_LINES]):
        kind = "" if number < 2 else "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        rows.append(f'<span class="{kind}">{_e(line)}</span>' if kind else _e(line) + "\n")
    more = f"<div class='meta'>and {rest} more diff lines</div>" if rest > 0 else ""
    changed = sum(1 for line in lines[2:] if line[:1] in "+-")
    return (
        f"<details><summary>diff against the previous version ({_e(sha[:8])}, {changed} lines"
        f" changed)</summary><pre>{''.join(rows)}</pre>{more}</details>"
    )


def _pointer(evidence: Evidence, code: CodeSource | None) -> str:
    """One evidence pointer: where, the excerpt, and for code the lines at their revision."""
    if evidence.kind == "code":
        where = f"{evidence.path}:{evidence.line} @{(evidence.revision or '')[:8]}"
    elif evidence.kind == "command":
        where = f"command #{evidence.command_seq}"
    elif evidence.kind == "submission":
        where = f"submission #{evidence.submission_seq}"
    else:
        where = f"{evidence.kind} {evidence.path or ''}" + (f":{evidence.line}" if evidence.line else "")
    shown = _code(evidence, code)
    head = f"<code>{_e(where)}</code> {_e(evidence.excerpt or '')}"
    return f"<details><summary>{head}</summary>{shown}</details>" if shown else f"<div>{head}</div>"


def _evidence(items: Iterable[Evidence], code: CodeSource | None) -> str:
    shown = list(items)
    rest = len(shown) - MAX_EVIDENCE
    body = "".join(_pointer(e, code) for e in shown[:MAX_EVIDENCE])
    more = f"<div class='meta'>and {rest} more (in the JSON report)</div>" if rest > 0 else ""
    return f'<div class="ev">{body}{more}</div>' if shown else ""


def _strip(report: AuditReport) -> str:
    """Score over time as inline SVG: each attempt coloured by its artifact's route, the best ringed."""
    start = _when(report.run.agent_launched_at) or _when(report.run.started_at)
    points = []
    for s in report.submissions:
        moment = _when(s.completed_at) or _when(s.requested_at)
        if start is None or moment is None:
            continue
        steps = (report.route.lineage or {}).get(s.artifact_path or "", [])
        chain = [st.label for st in steps if st.label]
        # a chain (SFT → GRPO) takes its last stage's colour and is named in words, not "COMPOSITE"
        route = (
            " → ".join(DEFAULT_LABELS.name("route", label) for label in chain)
            if len(chain) >= 2
            else DEFAULT_LABELS.name("route", artifact_route(steps))
        )
        colour = ROUTE_COLOURS.get(chain[-1] if chain else artifact_route(steps), UNLABELLED)
        points.append(
            (
                (moment - start).total_seconds(),
                s.score,
                s.seq,
                (route, colour) if s.score is not None else None,
            )
        )
    if not points:
        return "<p class='meta'>No attempt with a time to place on a strip.</p>"
    width, height, pad = 760, 170, 36
    span = max(max(p[0] for p in points), report.run.budget_s or 0.0, 1.0)
    scores = [p[1] for p in points if p[1] is not None] + [report.run.base_score or 0.0]
    low, high = min([*scores, 0.0]), max([*scores, 1.0])
    top = high + (high - low) * 0.08 or 1.0

    def x(t: float) -> float:
        return pad + (width - 2 * pad) * t / span

    def y(v: float) -> float:
        return height - pad - (height - 2 * pad) * (v - low) / ((top - low) or 1.0)

    best = report.best.seq if report.best else None
    marks = []
    if report.run.base_score is not None:
        base = round(y(report.run.base_score), 1)
        marks.append(
            _el("line", x1=pad, x2=width - pad, y1=base, y2=base, stroke="#999", stroke_dasharray="4 3")
        )
        marks.append(
            _el("text", "base", x=width - pad, y=base - 4, font_size=10, text_anchor="end", fill="#777")
        )
    for t, score, seq, shown in points:
        cx = round(x(t), 1)
        if score is None:  # an attempt with no score: a hollow mark on the axis
            title = _el("title", _e(f"#{seq}: no score"))
            marks.append(_el("circle", title, cx=cx, cy=height - pad, r=4, fill="none", stroke="#999"))
            continue
        cy = round(y(score), 1)
        scored_route, colour = shown or ("", UNLABELLED)
        title = _el("title", _e(f"#{seq}: {score} ({scored_route})"))
        marks.append(_el("circle", title, cx=cx, cy=cy, r=5, fill=colour, stroke="#333", stroke_width=0.6))
        if seq == best:
            marks.append(_el("circle", cx=cx, cy=cy, r=9, fill="none", stroke="#111", stroke_width=1.5))
    axis = "".join(
        (
            _el("line", x1=pad, x2=width - pad, y1=height - pad, y2=height - pad, stroke="#333"),
            _el("text", "0", x=pad, y=height - 10, font_size=10),
            _el("text", _e(_seconds(span)), x=width - pad, y=height - 10, font_size=10, text_anchor="end"),
            _el("text", _e(round(high, 2)), x=6, y=round(y(high), 1), font_size=10),
        )
    )
    legend = " ".join(
        f'<span class="pill" style="background:{colour};color:#fff">{_e(route)}</span>'
        for route, colour in sorted({p[3] for p in points if p[3]})
    )
    svg = (
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="score over time">'
        f"{axis}{''.join(marks)}</svg>"
    )
    return svg + f"<div>{legend}</div>"


def _stage(number: int, step: Stage, code: CodeSource | None) -> str:
    parents = " + ".join(step.parents) or (step.parent or "—")
    weights = ""
    if step.weights is not None and step.weights.compared:
        weights = (
            f" · weights: {step.weights.changed} of {step.weights.compared} tensors changed"
            f" (largest relative change {_e(step.weights.max_rel_change)})"
        )
    conflicts = "".join(f"<div class='bad pill'>{_e(c)}</div>" for c in step.conflicts)
    head = (
        f"{number}. <b>{_e(step.kind)}</b> → <code>{_e(step.artifact)}</code> from <code>{_e(parents)}</code>"
        f" <span class='pill'>{_e(step.strength)}</span>{weights}"
    )
    return f"<details open><summary>{head}</summary>{conflicts}{_evidence(step.evidence, code)}</details>"


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(rows_cell for rows_cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _td(value: object, number: bool = False) -> str:
    return f"<td class='num'>{_e(value)}</td>" if number else f"<td>{_e(value)}</td>"


def _output(output: str | None, error: str | None) -> str:
    """Return a command's output: its first and last lines, the middle behind a closed details."""
    lines = printable(output or "").splitlines()
    shown = f"<div class='bad pill'>{_e(error)}</div>" if error else ""
    if not lines:
        return shown + "<div class='meta'>no output recorded</div>"
    if len(lines) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return shown + f"<pre>{_e(chr(10).join(lines))}</pre>"
    head, middle, tail = lines[:OUTPUT_HEAD], lines[OUTPUT_HEAD:-OUTPUT_TAIL], lines[-OUTPUT_TAIL:]
    return (
        shown
        + f"<pre class='head'>{_e(chr(10).join(head))}</pre>"
        + f"<details><summary>{len(middle)} more lines</summary>"
        + f"<pre>{_e(chr(10).join(middle))}</pre></details>"
        + f"<pre class='tail'>{_e(chr(10).join(tail))}</pre>"
    )


def _unfinished(finished: bool) -> str:
    return "" if finished else ", not finished"


def render_html(report: AuditReport, code: CodeSource | None = None, back: str | None = None) -> str:
    """Return the page of ``report``; ``code`` reads code at a revision (None: excerpts only).

    ``back``: a relative link to the page listing it (a study site's index), shown above the header.
    """
    run, route, failure, quadrant = report.run, report.route, report.failure, report.quadrant
    best = report.best
    level = f" (level {run.level})" if run.level is not None else ""
    used = report.metrics.time_used_ratio
    head = (
        (f"<nav><a href='{_e(back)}'>← all runs of the study</a></nav>" if back else "")
        + f"<h1>{_e(run.run_id)}</h1><div class='meta'>task <b>{_e(run.task)}</b>{_e(level)} · agent"
        f" {_e(run.scaffold)} driven by {_e(run.driver)} · base {_e(run.base_model)} ({_e(run.base_score)})"
        f" → best {_e(best.score if best else None)}"
        f" · budget {_e(_seconds(run.budget_s))}"
        + (f", {used:.0%} used" if used is not None else "")
        + f" · {_e(run.format)} · schema v{report.schema_version}</div>"
    )
    cell = quadrant.cell or "undetermined"
    mood = "ok" if failure.mode == "none" else "bad"
    verdict = (
        "<p>"
        + _el("span", f"failure: {_e(failure.mode or 'undetermined')}", class_=f"pill {mood}")
        + _el("span", _e(cell), class_="pill")
        + _el(
            "span",
            f"route: {_e(route.chain_text or route.best_label)}, evidence {_e(route.strength)}",
            class_="pill",
        )
        + "</p>"
    )
    chain = "".join(_stage(i, step, code) for i, step in enumerate(route.chain or [], 1))
    routes = (
        f"<p>attempted (code ran): {_e(', '.join(route.attempted) or 'none')}; written only:"
        f" {_e(', '.join(route.written) or 'none')}; adopted: {_e(', '.join(route.adopted) or 'none')}</p>"
    )
    cannot = "".join(f"<li>{_e(c)}</li>" for c in route.cannot_tell)
    flags = (
        "".join(
            f"<details open><summary><span class='pill bad'>{_e(f.flag)}</span> {_e(f.message)}</summary>"
            f"<div class='meta'>{_e(f.definition)}</div>{_evidence(f.evidence, code)}</details>"
            for f in report.flags
        )
        or "<p>None raised by what could be checked.</p>"
    )
    submissions = _table(
        ["#", "completed", "status", "score", "model path", "error"],
        (
            [
                _td(s.seq, True),
                _td(s.completed_at),
                _td(s.status + (" ★ best" if best and s.seq == best.seq else "")),
                _td(s.score, True),
                _td(s.model_path),
                _td(s.error),
            ]
            for s in report.submissions
        ),
    )
    commands = "".join(
        f"<details><summary><code>#{c.seq}</code> [exit {_e(c.exit_code)}{_unfinished(c.finished)}]"
        f" <code>{_e(c.command[:300])}</code></summary>{_output(c.output_excerpt, c.error)}</details>"
        for c in report.commands
    )
    problems = "".join(f"<li><code>{_e(p.path)}</code>: {_e(p.message)}</li>" for p in report.problems)
    body = (
        head
        + verdict
        + "<h2>Score over time</h2>"
        + _strip(report)
        + "<h2>How the best submission was made</h2>"
        + routes
        + (chain or "<p>No lineage: no valid submission, or no code to read.</p>")
        + (f"<p class='meta'>Cannot tell:</p><ul>{cannot}</ul>" if cannot else "")
        + f"<h2>Failure: {_e(failure.mode or 'undetermined')}</h2><p>{_e(failure.reason)}</p>"
        + _evidence(failure.evidence, code)
        + f"<h2>Quadrant: {_e(cell)}</h2><p>{_e(quadrant.reason)}</p>"
        + _evidence(quadrant.evidence, code)
        + f"<h2>Flags ({len(report.flags)})</h2>"
        + flags
        + f"<h2>Submissions ({len(report.submissions)})</h2>"
        + submissions
        + f"<h2>Commands ({len(report.commands)})</h2>"
        + (commands or "<p>None recorded.</p>")
        + (
            f"<h2>Problems with the run folder ({len(report.problems)})</h2><ul>{problems}</ul>"
            if problems
            else ""
        )
    )
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{policy}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>arb-audit · {_e(run.run_id)}</title><style>{STYLE}</style></head><body>"
        + body
        + "</body></html>\n"
    )


def code_reader(report: AuditReport) -> CodeSource | None:
    """Return what reads code from the run's revisions.git: at a revision, and its version before.

    None when the run has no revisions.git at hand. One reader answers every pointer of the page, so
    each commit and tree it walks is read once.
    """
    from arb_audit.revisions import RevisionReader, shown_text

    if not report.run.revisions_path:
        return None
    git_dir = Path(report.run.revisions_path)
    if not git_dir.is_dir():
        return None
    reader = RevisionReader(git_dir)
    cache: dict[tuple[str, str], str | None] = {}

    def read(revision: str, path: str) -> str | None:
        if (revision, path) not in cache:
            raw = reader.file_at(revision, path)
            cache[(revision, path)] = None if raw is None else shown_text(raw, path)
        return cache[(revision, path)]

    def before(revision: str, path: str) -> tuple[str, str | None] | None:
        found = reader.previous(revision, path)
        if found is None:
            return None
        return found[0], None if found[1] is None else shown_text(found[1], path)

    return CodeSource(read, before)


def write_html(report: AuditReport, target: Path) -> None:
    """Write ``report``'s page to ``target``, with code excerpts from its revisions when at hand."""
    target.write_text(render_html(report, code_reader(report)), encoding="utf-8")
