"""A study as a static site: an index of its runs, filterable and sortable in the page, and one page per run.

``arb-audit site STUDY -o DIR`` writes ``DIR/index.html``, ``DIR/runs/<run>.html`` (each run's own audit
page, :mod:`arb_audit.html_report`) and ``DIR/figures/<figure>.png``. Nothing outside the folder is
fetched: the site opens from ``file://`` and from any static host.

The index holds every run as JSON in a data block (never executed) and one script of our own that
renders the table a page of rows at a time, so a 5,000-run study stays quick. The page's
Content-Security-Policy allows that one script by its hash and nothing else; run text reaches the page
only through ``textContent``, so nothing an agent wrote is ever parsed as markup. The table's state
(filters, sort, page) lives in the address's fragment: a view can be bookmarked or sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import ValidationError

from arb_audit.html_report import STYLE, code_reader, escape, render_html
from arb_audit.schema import AuditReport
from arb_audit.store import RunStore, StoreError
from arb_audit.taxonomy.review import FLAG_PREFIX
from arb_audit.verdicts import current_verdicts, load_verdicts

PAGE_ROWS = 100
"""Rows the index shows at once: enough to scan, few enough to render at once for any study size."""
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("run", "run", "text"),
    ("task", "task", "text"),
    ("agent", "agent", "text"),
    ("route", "route", "text"),
    ("strength", "evidence", "text"),
    ("base", "base", "number"),
    ("best", "best score", "number"),
    ("failure", "failure", "text"),
    ("quadrant", "quadrant", "text"),
    ("flags", "flags", "list"),
)
"""The index's columns: key in a row, header, and how it sorts."""
FILTERS: tuple[tuple[str, str], ...] = (
    ("task", "task"),
    ("route", "route"),
    ("failure", "failure"),
    ("quadrant", "quadrant"),
    ("flags", "flag"),
)
"""Columns with a menu of their values to filter by: key, and what the menu is called."""
VERDICT_COLUMN = {"route": "route", "chain": "route", "failure": "failure", "quadrant": "quadrant"}
"""Which column shows reviewers' verdicts on a field (a flag's verdict shows under flags)."""
PAGE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
PAGES_PER_TASK = 32
"""Run pages a worker process writes per task: enough that handing work over costs little beside it."""

SCRIPT = r"""(function () {
"use strict";
var data = JSON.parse(document.getElementById("runs-data").textContent);
var rows = data.rows, columns = data.columns, filters = data.filters, size = data.page;
var body = document.getElementById("runs-body"), count = document.getElementById("count");
var search = document.getElementById("q"), disputed = document.getElementById("disputed");
var menus = {};
var safeLink = /^runs\/[A-Za-z0-9._-]+\.html$/;

function text(tag, value, cls) {
  var el = document.createElement(tag);
  el.textContent = value === null || value === undefined ? "\u2014" : String(value);
  if (cls) { el.className = cls; }
  return el;
}
function cellValues(row, key) {
  var v = row[key];
  return Array.isArray(v) ? v : [v];
}
function state() {
  var p = new URLSearchParams(location.hash.slice(1));
  var s = {q: p.get("q") || "", sort: p.get("sort") || "", page: parseInt(p.get("page") || "1", 10) || 1,
           disputed: p.get("disputed") === "1"};
  filters.forEach(function (f) { s[f[0]] = p.get(f[0]) || ""; });
  return s;
}
function go(change) {
  var s = state(), p = new URLSearchParams();
  Object.keys(change).forEach(function (k) { s[k] = change[k]; });
  if (!("page" in change)) { s.page = 1; }
  ["q", "sort"].concat(filters.map(function (f) { return f[0]; })).forEach(function (k) {
    if (s[k]) { p.set(k, s[k]); }
  });
  if (s.disputed) { p.set("disputed", "1"); }
  if (s.page > 1) { p.set("page", String(s.page)); }
  location.hash = p.toString();
}
function searchable(row) {
  if (row.search === undefined) {  // the words a free-text filter looks in, made once per row
    var words = columns.map(function (c) { return cellValues(row, c[0]).join(" "); });
    row.search = words.concat([row.note || ""]).join(" ").toLowerCase();
  }
  return row.search;
}
function matches(row, s) {
  if (s.disputed && !row.disputed) { return false; }
  for (var i = 0; i < filters.length; i++) {
    var key = filters[i][0];
    if (s[key] && cellValues(row, key).indexOf(s[key]) < 0) { return false; }
  }
  if (!s.q) { return true; }
  var needle = s.q.toLowerCase();
  return searchable(row).indexOf(needle) >= 0;
}
function compare(key, kind, down) {
  return function (a, b) {
    var x = a[key], y = b[key];
    if (Array.isArray(x)) { x = x.join(" "); y = y.join(" "); }
    var none = (x === null || x === "") - (y === null || y === "");
    if (none) { return none; }  // empty values last, whichever way
    var order = kind === "number" ? x - y : String(x).localeCompare(String(y));
    return down ? -order : order;
  };
}
function render() {
  var s = state();
  search.value = s.q;
  disputed.checked = s.disputed;
  filters.forEach(function (f) { menus[f[0]].value = s[f[0]]; });
  var shown = rows.filter(function (r) { return matches(r, s); });
  var key = s.sort.replace(/^-/, ""), down = s.sort.charAt(0) === "-";
  columns.forEach(function (c) {
    var th = document.getElementById("col-" + c[0]);
    th.setAttribute("aria-sort", c[0] === key ? (down ? "descending" : "ascending") : "none");
    if (c[0] === key) { shown.sort(compare(key, c[2], down)); }
  });
  var pages = Math.max(1, Math.ceil(shown.length / size)), page = Math.min(s.page, pages);
  var start = (page - 1) * size, part = shown.slice(start, start + size);
  var fresh = document.createElement("tbody");
  fresh.id = "runs-body";
  part.forEach(function (row) {
    var tr = document.createElement("tr");
    columns.forEach(function (c) {
      var td = document.createElement("td");
      if (c[2] === "number") { td.className = "num"; }
      if (c[0] === "run" && row.href && safeLink.test(row.href)) {
        var a = text("a", row.run);
        a.setAttribute("href", row.href);
        td.appendChild(a);
      } else if (c[2] === "list") {
        row[c[0]].forEach(function (v) { td.appendChild(text("span", v, "pill bad")); });
      } else {
        td.appendChild(text("span", row[c[0]]));
      }
      if (c[0] === "failure" && row.note) { td.appendChild(text("div", row.note, "meta")); }
      (row.verdicts[c[0]] || []).forEach(function (v) {
        td.appendChild(text("div", v[0] + ": " + v[1], v[2] ? "verdict" : "verdict differs"));
      });
      tr.appendChild(td);
    });
    fresh.appendChild(tr);
  });
  body.parentNode.replaceChild(fresh, body);
  body = fresh;
  count.textContent = shown.length ? "runs " + (start + 1) + "\u2013" + (start + part.length) + " of " +
    shown.length + (shown.length < rows.length ? " (" + rows.length + " in the study)" : "") +
    " \u00b7 page " + page + " of " + pages : "no run matches (" + rows.length + " in the study)";
  document.getElementById("prev").disabled = page <= 1;
  document.getElementById("next").disabled = page >= pages;
  document.body.setAttribute("data-rendered", String(part.length));
}
columns.forEach(function (c) {
  document.getElementById("col-" + c[0]).querySelector("button").addEventListener("click", function () {
    var s = state();
    go({sort: s.sort === c[0] ? "-" + c[0] : c[0]});
  });
});
filters.forEach(function (f) {
  var menu = document.getElementById("f-" + f[0]), seen = {};
  rows.forEach(function (r) { cellValues(r, f[0]).forEach(function (v) { if (v) { seen[v] = true; } }); });
  menu.appendChild(new Option("any " + f[1], ""));
  Object.keys(seen).sort().forEach(function (v) { menu.appendChild(new Option(v, v)); });
  menu.addEventListener("change", function () { var c = {}; c[f[0]] = menu.value; go(c); });
  menus[f[0]] = menu;
});
search.addEventListener("change", function () { go({q: search.value}); });
disputed.addEventListener("change", function () { go({disputed: disputed.checked}); });
document.getElementById("prev").addEventListener("click", function () { go({page: state().page - 1}); });
document.getElementById("next").addEventListener("click", function () { go({page: state().page + 1}); });
window.addEventListener("hashchange", render);
document.getElementById("controls").hidden = false;
render();
}());
"""
"""The index's one script: it reads the rows, renders a page of them, and never parses run text as HTML."""
SCRIPT_HASH = base64.b64encode(hashlib.sha256(SCRIPT.encode("utf-8")).digest()).decode("ascii")
POLICY = (
    f"default-src 'none'; script-src 'sha256-{SCRIPT_HASH}'; style-src 'unsafe-inline';"
    " img-src 'self' file: data:; base-uri 'none'; form-action 'none'"
)
"""The index's Content-Security-Policy: our script by its hash, inline styles, the site's own figures
(``file:`` where 'self' does not cover a page opened from disk); nothing else is fetched or run."""
SITE_STYLE = STYLE + "".join(
    (
        "body{max-width:none}",
        "#controls{margin:.6rem 0;display:flex;flex-wrap:wrap;gap:.4rem;align-items:center}",
        "th button{font:inherit;font-weight:bold;border:0;background:none;cursor:pointer;padding:0}",
        "th[aria-sort=ascending] button::after{content:' \\25B2'}",
        "th[aria-sort=descending] button::after{content:' \\25BC'}",
        ".verdict{font-size:12px;color:#2d6a4f}",
        ".differs{color:#9d0208;font-weight:bold}",
        ".figures img{max-width:48%;margin:.3rem;border:1px solid #eee}",
    )
)


@dataclass(slots=True)
class SiteSummary:
    """What :func:`write_site` wrote, and what it left out and why."""

    runs: int = 0
    """Runs in the index."""
    pages: int = 0
    """Run pages written."""
    figures: list[str] = field(default_factory=list)
    """Figures drawn."""
    skipped: list[str] = field(default_factory=list)
    """One line per run or figure left out, saying why."""


def page_name(run_key: str, run_id: str | None) -> str:
    """Return a run's page's file name: readable from its id, unique by its key, safe on any host."""
    readable = PAGE_NAME.sub("_", run_id or Path(run_key).name).strip("._")[:60] or "run"
    return f"{readable}-{hashlib.sha256(run_key.encode('utf-8')).hexdigest()[:10]}.html"


def _agent(scaffold: str | None, driver: str | None) -> str | None:
    parts = [p for p in (scaffold, driver) if p]
    return " / ".join(parts) or None


def _verdicts_by_run(ledger: pl.DataFrame | None) -> dict[str, list[tuple[str, str, str]]]:
    """Return each run's standing verdicts as (reviewer, field, value)."""
    found: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    if ledger is None or ledger.is_empty():
        return found
    for key, reviewer, name, value in (
        current_verdicts(ledger)
        .sort("reviewer", "field")
        .select("run_key", "reviewer", "field", "value")
        .rows()
    ):
        found[key].append((reviewer, name, value))
    return found


def index_row(row: dict[str, Any], href: str | None, verdicts: list[tuple[str, str, str]]) -> dict[str, Any]:
    """Return one run's row of the index: the study's values, and reviewers' verdicts beside them."""
    flags: list[str] = list(row.get("flags") or [])
    analyzer = {
        "route": row.get("route_label"),
        "chain": row.get("chain"),
        "failure": row.get("failure"),
        "quadrant": row.get("quadrant"),
    }
    shown: dict[str, list[tuple[str, str, bool]]] = defaultdict(list)
    for reviewer, name, value in verdicts:
        if name.startswith(FLAG_PREFIX):
            flag = name.removeprefix(FLAG_PREFIX)
            agrees = (value == "yes") == (flag in flags)
            shown["flags"].append((reviewer, f"{flag} {value}", agrees))
        elif name in VERDICT_COLUMN:
            shown[VERDICT_COLUMN[name]].append((reviewer, value, value == analyzer[name]))
    task = row.get("task")
    level = row.get("level")
    note = f"not audited: {row['error']}" if row.get("error") else None
    values = {
        "run": row.get("run_id") or row["run_key"],
        "href": href,
        "task": f"{task} L{level}" if task and level is not None else task,
        "agent": _agent(row.get("scaffold"), row.get("driver")),
        "route": row.get("chain") or row.get("route_label"),
        "strength": row.get("strength"),
        "base": row.get("base_score"),
        "best": row.get("best_score"),
        "failure": row.get("failure"),
        "quadrant": row.get("quadrant"),
        "flags": flags,
        "note": note,
        "verdicts": shown,
        "disputed": any(not agrees for entries in shown.values() for _, _, agrees in entries),
    }
    return values


def _data_block(payload: dict[str, Any]) -> str:
    """Return ``payload`` as JSON that cannot end its ``<script>`` data block, whatever a run wrote."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def render_index(title: str, rows: list[dict[str, Any]], figures: dict[str, str]) -> str:
    """Return a study's index page: ``rows`` from :func:`index_row`, ``figures`` name -> caption."""
    payload = {
        "rows": rows,
        "columns": [list(c) for c in COLUMNS],
        "filters": [list(f) for f in FILTERS],
        "page": PAGE_ROWS,
    }
    heads = "".join(
        f"<th id='col-{key}' aria-sort='none'><button type='button'>{escape(label)}</button></th>"
        for key, label, _ in COLUMNS
    )
    menus = "".join(f"<select id='f-{key}' aria-label='{escape(name)}'></select>" for key, name in FILTERS)
    controls = (
        "<div id='controls' hidden><input id='q' type='search' placeholder='filter runs' aria-label='filter'>"
        f"{menus}<label><input id='disputed' type='checkbox'> disputed by a reviewer</label>"
        "<button id='prev' type='button'>← previous</button><button id='next' type='button'>next →</button>"
        "<span id='count' class='meta'></span></div>"
    )
    shown_figures = "".join(
        f"<a href='figures/{escape(name)}.png'><img alt='{escape(caption)}' title='{escape(caption)}'"
        f" src='figures/{escape(name)}.png'></a>"
        for name, caption in figures.items()
    )
    reviewed = sum(1 for r in rows if r["verdicts"])
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>arb-audit · {escape(title)}</title><style>{SITE_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><div class='meta'>{len(rows)} runs · {reviewed} with reviewers' verdicts"
        " (shown under the analyzer's value; in red where they differ)</div>"
        + (f"<h2>Figures</h2><div class='figures'>{shown_figures}</div>" if shown_figures else "")
        + "<h2>Runs</h2>"
        + "<noscript><p>The runs table needs JavaScript (the page runs its own script only). Each run's"
        " page is in the runs/ folder.</p></noscript>"
        + controls
        + f"<table><thead><tr>{heads}</tr></thead><tbody id='runs-body'></tbody></table>"
        + f'<script type="application/json" id="runs-data">{_data_block(payload)}</script>'
        + f"<script>{SCRIPT}</script></body></html>\n"
    )


Page = tuple[str, str, str]
"""A run page to write: the run's key, the page's file name, the run's stored audit (JSON)."""


def _draw_figures(study: pl.DataFrame, folder: Path, names: Iterable[str]) -> list[str | None]:
    """Draw each study figure of ``names`` into ``folder`` as PNG; per figure, why not when it is not drawn.

    The study's audits are read back (``figure_data``) once for all of them.
    """
    from arb_audit.study import figure_data
    from arb_audit.taxonomy.figures import figure, save

    data = figure_data(study)  # a run whose audit does not validate is named by its page, not drawn
    notes: list[str | None] = []
    for name in names:
        try:
            save(figure(name, data), folder / f"{name}.png")
        except ValueError as exc:
            notes.append(f"figure {name}: {exc}")
        else:
            notes.append(None)
    return notes


def _draw_stored_figure(study_path: Path, folder: Path, name: str) -> str | None:
    """Draw figure ``name`` of the study store at ``study_path``, read here (in a worker process)."""
    from arb_audit.study import load_study

    return _draw_figures(load_study(study_path), folder, [name])[0]


def _write_pages(folder: Path, pages: Iterable[Page]) -> list[str]:
    """Write each run's page into ``folder``; return the keys of the runs whose audit does not read back."""
    unreadable = []
    for key, name, stored in pages:
        try:
            report = AuditReport.model_validate_json(stored)
        except (ValidationError, ValueError):
            unreadable.append(key)
            continue
        page = render_html(report, code_reader(report), back="../index.html")
        (folder / name).write_text(page, encoding="utf-8")
    return unreadable


def _chunks(pages: Iterable[Page]) -> Iterator[list[Page]]:
    chunk: list[Page] = []
    for page in pages:
        chunk.append(page)
        if len(chunk) == PAGES_PER_TASK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _write_in_workers(
    folder: Path, pages: Iterable[Page], jobs: int, figures: Sequence[Callable[[], str | None]]
) -> tuple[set[str], list[str | None]]:
    """Draw the figures and write the pages in ``jobs`` worker processes.

    The figures' tasks (``figures``, one a figure) go first: the largest figure of a big study takes
    about as long as all its pages. The pages follow, a few tasks at a time to whichever worker is
    free, so only a few tasks' audits are copied at once whatever the study's size. Return the keys
    of the runs whose audit does not read back, and what each figure's task returned.
    """
    unreadable: set[str] = set()
    # spawned, not forked: the parent's polars and DuckDB threads do not survive a fork
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        drawing = [pool.submit(task) for task in figures]
        ahead: deque[Future[list[str]]] = deque()
        for chunk in _chunks(pages):
            ahead.append(pool.submit(_write_pages, folder, chunk))
            if len(ahead) >= 2 * jobs:
                unreadable.update(ahead.popleft().result())
        while ahead:
            unreadable.update(ahead.popleft().result())
        return unreadable, [done.result() for done in drawing]


def write_site(study_path: Path, out: Path, *, figures: bool = True, jobs: int | None = None) -> SiteSummary:
    """Write the static site of the study store at ``study_path`` into the folder ``out``.

    Raises StoreError when the study cannot be read. A run whose stored audit does not read back (made
    by an older arb-audit) is listed without a page, and said so in the summary. ``jobs``: worker
    processes that write the pages and draw the figures (default: the CPU count; 1: none, all here).
    """
    from arb_audit.study import load_study

    study = load_study(study_path)
    try:
        with RunStore.open(study_path, read_only=True) as store:
            ledger: pl.DataFrame | None = load_verdicts(store)
    except StoreError:  # a study from before the verdict ledger: nothing reviewed
        ledger = None
    verdicts = _verdicts_by_run(ledger)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    captions: dict[str, str] = {}  # the figures to draw: name -> caption
    if figures and not study.is_empty():
        from arb_audit.taxonomy.figures import FIGURES

        captions = {name: spec.caption for name, spec in FIGURES.items()}
        (out / "figures").mkdir(exist_ok=True)
    stored = study.filter(pl.col("report").fill_null("") != "")
    names = {key: page_name(key, run_id) for key, run_id in stored.select("run_key", "run_id").iter_rows()}
    # read a few hundred audits at a time (polars' buffer), never the whole study's at once
    pages = ((key, names[key], report) for key, report in stored.select("run_key", "report").iter_rows())
    workers = max(1, jobs or os.cpu_count() or 1)
    if workers > 1 and len(names) > PAGES_PER_TASK:
        tasks = [partial(_draw_stored_figure, study_path, out / "figures", name) for name in captions]
        unreadable, notes = _write_in_workers(out / "runs", pages, workers, tasks)
    else:
        unreadable = set(_write_pages(out / "runs", pages))
        notes = _draw_figures(study, out / "figures", captions)
    summary = SiteSummary()
    rows = []
    for row in study.drop("report").iter_rows(named=True):
        key = row["run_key"]
        href = None
        if key in unreadable:
            summary.skipped.append(f"{key}: its stored audit is of another schema (ingest again)")
        elif key in names:
            href = f"runs/{names[key]}"
            summary.pages += 1
        rows.append(index_row(row, href, verdicts.get(key, [])))
    drawn = {name: caption for (name, caption), note in zip(captions.items(), notes, strict=True) if not note}
    summary.figures = list(drawn)
    summary.skipped += [note for note in notes if note is not None]
    summary.runs = len(rows)
    (out / "index.html").write_text(render_index(study_path.stem, rows, drawn), encoding="utf-8")
    return summary
