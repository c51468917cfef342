r"""Tables written out: LaTeX (booktabs, laid out to fit a column or a page), Markdown, CSV and Parquet.

CSV and Parquet keep the raw values (for further work); LaTeX and Markdown show them formatted as each
column's kind says, identifiers as their display names (:mod:`arb_audit.taxonomy.labels`), with ``—`` for
a missing value.

A LaTeX table is laid out for the width it is for (:class:`TableOptions` ``width``: ``column``, the
narrowest column of a two-column article, 229.5 pt; ``page``, the text of a one-column article, 345 pt).
Its width is estimated from Computer Modern's glyph widths (the TFM metrics of ``cmr10``), and the
first layout that fits is kept, in this order: as it is; headers wrapped over lines; long text
columns wrapped (``p{}``, from ``array``); ``\small``; identifiers and headers abbreviated, with a
legend in the caption; ``\footnotesize`` with tighter column gaps; the columns split into parts
stacked under each other, each repeating the columns that identify a row. Only when none fits is the
table scaled down with ``\resizebox``, and :attr:`Layout.resized` says so. Columns that hold no
value are dropped first.
"""

from __future__ import annotations

import io
import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from arb_audit.taxonomy.labels import DEFAULT_LABELS, Labels
from arb_audit.taxonomy.tables import Column, TableSpec

FORMATS = ("latex", "markdown", "csv", "parquet")
NUMERIC = frozenset({"int", "score", "ratio", "share", "minutes"})
WIDTHS = ("column", "page")
"""What ``--width`` takes: one column of a two-column article, or the page's text."""
BUDGET_PT = {"column": 229.5, "page": 345.0}
"""The width each is laid out for, in points: ``\\columnwidth`` of a two-column ``article`` and
``\\textwidth`` of a one-column one (the narrowest each may be put in; measured with pdflatex)."""
SAFETY = 0.97
"""Share of the budget a layout may fill: the estimate ignores kerning and ligatures."""
BOLD = ("best", "unique", "none")
"""What ``--bold`` takes: every best value (ties included), a best no other row ties, or none."""
MISSING = "—"
LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "→": r"$\rightarrow$",
    "×": r"$\times$",
    "Δ": r"$\Delta$",
    "—": "---",
    "–": "--",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "…": r"\ldots{}",
    # a row that starts with "[" would be read as the optional argument of the "\\" before it
    "[": "{[}",
    "]": "{]}",
    # in LaTeX's default (OT1) encoding these three print as other glyphs
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
"""Characters that must not reach LaTeX as they are, and what stands for them."""
ACCENTS = {
    "\u0301": "'",
    "\u0300": "`",
    "\u0308": '"',
    "\u0302": "^",
    "\u0303": "~",
    "\u0327": "c",
    "\u030c": "v",
}
"""Combining accents and the LaTeX accent command for each."""


def cell_text(value: object, kind: str) -> str:
    """Format one value as the column's kind says; ``—`` when missing."""
    if value is None or (isinstance(value, float) and value != value):
        return "—"
    if kind == "int":
        return str(int(value))  # type: ignore[call-overload]
    if kind in ("score", "minutes"):
        return f"{float(value):.1f}"  # type: ignore[arg-type]
    if kind == "ratio":
        return f"{float(value):.2f}"  # type: ignore[arg-type]
    if kind == "share":
        return f"{100 * float(value):.0f}%"  # type: ignore[arg-type]
    return str(value)


def best_rows(frame: pl.DataFrame, column: Column, bold: str = "best") -> set[int]:
    """Rows holding the column's best value as printed; none when it has no values.

    ``bold`` ``best`` marks every tied row, ``unique`` only a best no other row ties, ``none`` nothing.
    Values are compared as the table shows them, so two cells that print alike are both marked or neither.
    """
    if bold not in BOLD:
        raise ValueError(f"no bold mode {bold!r} (there are: {', '.join(BOLD)})")
    if bold == "none" or column.best is None or column.name not in frame.columns:
        return set()
    shown = {
        i: float(cell_text(v, column.kind).rstrip("%"))
        for i, v in enumerate(frame[column.name].to_list())
        if cell_text(v, column.kind) != "—"
    }
    if not shown:
        return set()
    target = max(shown.values()) if column.best == "max" else min(shown.values())
    rows = {i for i, v in shown.items() if v == target}
    return rows if bold == "best" or len(rows) == 1 else set()


def latex_escape(text: str) -> str:
    """Make ``text`` safe in a plain LaTeX article: specials escaped, accents as commands, others named."""
    out = []
    for char in unicodedata.normalize("NFC", text):
        if char in LATEX_SPECIAL:
            out.append(LATEX_SPECIAL[char])
        elif char.isascii() and char.isprintable():
            out.append(char)
        else:
            parts = unicodedata.normalize("NFD", char)
            if len(parts) == 2 and parts[0].isascii() and parts[1] in ACCENTS:
                out.append(f"\\{ACCENTS[parts[1]]}{{{parts[0]}}}")
            else:
                out.append(f"\\texttt{{[U+{ord(char):04X}]}}")
    return "".join(out)


# Computer Modern Roman 10 pt (cmr10.tfm), each character's width in points; a space is 3.33 pt.
_CMR10 = {
    **dict.fromkeys("!',.:;[]`il", 2.78),
    **dict.fromkeys("fj", 3.06),
    "-": 3.33,
    "I": 3.61,
    **dict.fromkeys("()t", 3.89),
    "r": 3.92,
    "s": 3.94,
    **dict.fromkeys("cez", 4.44),
    "?": 4.72,
    **dict.fromkeys('$*/0123456789^ago~_{}<>|"', 5.0),
    "J": 5.14,
    **dict.fromkeys("kqvxy", 5.28),
    **dict.fromkeys("Sbdhnpu", 5.56),
    "Z": 6.11,
    "L": 6.25,
    "F": 6.53,
    **dict.fromkeys("EP", 6.81),
    "B": 7.08,
    **dict.fromkeys("CTw", 7.22),
    "R": 7.36,
    **dict.fromkeys("AHNUVXY", 7.5),
    "D": 7.64,
    **dict.fromkeys("&+=@KOQ", 7.78),
    "G": 7.85,
    **dict.fromkeys("#%m", 8.33),
    "M": 9.17,
    "W": 10.28,
    " ": 3.33,
    "→": 10.0,
    "×": 7.78,
    "Δ": 8.33,
    "—": 10.0,
    "–": 5.0,
    "≥": 7.78,
    "≤": 7.78,
    "…": 8.34,
    "\\": 5.0,
}
BOLD_FACTOR = 1.15
"""How much wider bold (cmbx10) sets than roman, at most, for the characters a table holds."""
SIZES = {"normalsize": 10.0, "small": 9.0, "footnotesize": 8.0}
"""Font size of each size command in a 10 pt article."""


def text_width(text: str, *, size: float = 10.0, bold: bool = False) -> float:
    """Estimate the width in points ``text`` sets at in Computer Modern.

    A character it cannot print counts as the ``[U+XXXX]`` typewriter stand-in :func:`latex_escape` gives.
    """
    total = 0.0
    for char in unicodedata.normalize("NFC", text):
        if char in _CMR10:
            total += _CMR10[char]
        else:
            base = unicodedata.normalize("NFD", char)[0]
            total += _CMR10.get(base, 8 * 5.25)  # \texttt{[U+XXXX]}: eight typewriter characters
    return total * size / 10 * (BOLD_FACTOR if bold else 1.0) * (1.03 if size < 10 else 1.0)


@dataclass(frozen=True, slots=True)
class TableOptions:
    """How a table is written: the options of ``arb-audit export``, the same in Python."""

    width: str = "column"
    """``column`` (fits one column of a two-column article) or ``page`` (the text's full width)."""
    columns: tuple[str, ...] | None = None
    """The columns to keep, by name and in this order; None keeps the table's own."""
    caption: str | None = None
    """The caption; None takes the table's own."""
    label: str | None = None
    """The ``\\label``; None derives one from ``study`` and the table's name."""
    study: str | None = None
    """The study's name (its file's stem), to make the default label unique in a paper."""
    star: bool | None = None
    """``table*`` (spanning both columns); None: when ``width`` is ``page``."""
    bold: str = "best"
    """``best`` (every best value, ties included), ``unique`` (no tie bolded) or ``none``."""
    notes: str | None = None
    """A footnote printed under the table."""
    labels: Labels = field(default_factory=lambda: DEFAULT_LABELS)
    """The display names of identifiers."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A LaTeX table as laid out: its text and what was done to make it fit."""

    text: str
    """The LaTeX (a ``table`` float)."""
    steps: tuple[str, ...]
    """What was done to fit, in words (``dropped empty columns: Mode, Seed``, ``wrapped headers``, ...)."""
    width_pt: float
    """Its estimated width (the widest part's), before any scaling."""
    budget_pt: float
    """The width it had to fit."""
    resized: bool
    """Whether it is scaled down with ``\\resizebox`` (no other layout fitted)."""
    dropped: tuple[str, ...] = ()
    """The columns left out because they hold no value."""


@dataclass(frozen=True, slots=True)
class _Col:
    """A column ready to lay out: its header, cells (text, bold) and how it may shrink."""

    spec: Column
    header: str
    short: str | None
    cells: tuple[tuple[str, bool], ...]
    short_cells: tuple[tuple[str, bool], ...] | None
    """The cells as abbreviations, where the column's vocabulary has them."""

    @property
    def numeric(self) -> bool:
        return self.spec.kind in NUMERIC


@dataclass(frozen=True, slots=True)
class _Knobs:
    """One rung of the layout ladder."""

    wrap_headers: bool = False
    wrap_text: bool = False
    abbreviate: bool = False
    size: str = "normalsize"
    tabcolsep: float = 6.0

    def describe(self) -> list[str]:
        steps = []
        if self.wrap_headers:
            steps.append("wrapped headers")
        if self.wrap_text:
            steps.append("wrapped long text (p{})")
        if self.size != "normalsize":
            steps.append(f"\\{self.size}")
        if self.abbreviate:
            steps.append("abbreviations with a legend")
        if self.tabcolsep != 6.0:
            steps.append(f"column gap {2 * self.tabcolsep:g} pt")
        return steps


LADDER = (
    _Knobs(),
    _Knobs(wrap_headers=True),
    _Knobs(wrap_headers=True, wrap_text=True),
    _Knobs(wrap_headers=True, wrap_text=True, size="small"),
    _Knobs(wrap_headers=True, wrap_text=True, size="small", abbreviate=True),
    _Knobs(wrap_headers=True, wrap_text=True, size="footnotesize", abbreviate=True, tabcolsep=4.0),
)
"""The layouts tried, least changed first; then the same, split into parts; then ``\\resizebox``."""
RESIZED = _Knobs(wrap_headers=True, abbreviate=True, size="footnotesize", tabcolsep=4.0)
"""The layout scaled down when nothing fits (no ``tabularx``: its width is the one it is scaled to)."""


def _prepare(frame: pl.DataFrame, spec: TableSpec, options: TableOptions) -> tuple[list[_Col], list[str]]:
    """Each column to print (the chosen ones, empty ones dropped) and the headers of those dropped."""
    columns = list(spec.columns)
    if options.columns is not None:
        by_name = {c.name: c for c in spec.columns}
        unknown = [n for n in options.columns if n not in by_name]
        if unknown:
            raise ValueError(
                f"{spec.name} has no column {', '.join(map(repr, unknown))} (there are: {', '.join(by_name)})"
            )
        columns = [by_name[n] for n in options.columns]
    labels = options.labels
    prepared, dropped = [], []
    for column in columns:
        values = frame[column.name].to_list() if column.name in frame.columns else [None] * frame.height
        texts = [cell_text(v, column.kind) for v in values]
        header = labels.name(column.named, column.name) if column.named else column.header
        short = labels.short_name(column.named, column.name) if column.named else column.short
        if texts and all(t == MISSING for t in texts) and options.columns is None:
            dropped.append(header)
            continue
        best = best_rows(frame, column, options.bold)
        shown = [labels.name(column.vocab, t) if column.vocab and t != MISSING else t for t in texts]
        abbreviated = None
        if column.vocab and any(labels.short_name(column.vocab, t) for t in texts):
            abbreviated = tuple(
                (labels.short_name(column.vocab, t) or s, i in best)
                for i, (t, s) in enumerate(zip(texts, shown, strict=True))
            )
        prepared.append(
            _Col(column, header, short, tuple((t, i in best) for i, t in enumerate(shown)), abbreviated)
        )
    return prepared, dropped


def _lines(text: str, width: float, size: float) -> list[str]:
    """Break ``text`` at spaces into lines no wider than ``width`` (a word wider stays whole)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and text_width(f"{lines[-1]} {word}", size=size) <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return lines


def _longest_word(texts: Sequence[str], size: float, bold: bool = False) -> float:
    return max((text_width(w, size=size, bold=bold) for t in texts for w in t.split(" ")), default=0.0)


@dataclass(frozen=True, slots=True)
class _Planned:
    """A part of a table laid out by one rung: its columns' specs and its estimated width."""

    cols: tuple[_Col, ...]
    knobs: _Knobs
    header_lines: tuple[tuple[str, ...], ...]
    wrapped: dict[int, float]
    """The columns that wrap, by position, and their width in points."""
    width: float


def _plan(cols: Sequence[_Col], knobs: _Knobs, budget: float) -> _Planned:
    """Lay out ``cols`` with ``knobs``: header lines, which columns wrap, and the estimated width."""
    size = SIZES[knobs.size]
    gaps = 2 * knobs.tabcolsep * (len(cols) - 1)
    bodies, headers, minimum = [], [], []
    for col in cols:
        cells = col.short_cells if knobs.abbreviate and col.short_cells else col.cells
        body = max((text_width(t, size=size, bold=b) for t, b in cells), default=0.0)
        header = col.short if knobs.abbreviate and col.short else col.header
        bodies.append(body)
        headers.append(header)
        minimum.append(
            max(_longest_word([t for t, _ in cells], size, bold=True), _longest_word([header], size))
        )
    header_lines = []
    widths = []
    for header, body in zip(headers, bodies, strict=True):
        if knobs.wrap_headers:
            lines = _lines(header, max(body, _longest_word([header], size)), size)
        else:
            lines = [header]
        header_lines.append(tuple(lines))
        widths.append(max(body, *(text_width(line, size=size) for line in lines)))
    wrapped: dict[int, float] = {}
    total = sum(widths) + gaps
    if knobs.wrap_text and total > budget:
        # the widest text columns that hold spaces wrap (p{}), each from its longest word up, sharing
        # what the others leave in proportion to how much wider each would rather be
        candidates = sorted(
            (i for i, c in enumerate(cols) if not c.numeric and widths[i] > minimum[i] + 1),
            key=lambda i: -widths[i],
        )
        chosen: list[int] = []
        for i in candidates:
            chosen.append(i)
            fixed = sum(w for j, w in enumerate(widths) if j not in chosen) + gaps
            if fixed + sum(minimum[j] for j in chosen) <= budget:
                break
        if chosen:
            fixed = sum(w for j, w in enumerate(widths) if j not in chosen) + gaps
            spare = max(0.0, budget - fixed - sum(minimum[j] for j in chosen))
            slack = sum(widths[j] - minimum[j] for j in chosen)
            wrapped = {
                j: min(widths[j], minimum[j] + spare * (widths[j] - minimum[j]) / slack) for j in chosen
            }
            total = fixed + sum(wrapped.values())
            header_lines = [
                tuple(_lines(" ".join(h), wrapped[i], size)) if i in wrapped else h
                for i, h in enumerate(header_lines)
            ]
    return _Planned(tuple(cols), knobs, tuple(header_lines), wrapped, total)


def _fit(cols: Sequence[_Col], budget: float) -> _Planned | None:
    """Return the first rung of the ladder whose layout of ``cols`` fits ``budget``; None when none does."""
    for knobs in LADDER:
        planned = _plan(cols, knobs, budget)
        if planned.width <= budget:
            return planned
    return None


def _split(cols: Sequence[_Col], budget: float) -> list[_Planned] | None:
    """Split the columns into parts stacked one under another, each repeating the key columns.

    Every part is laid out with the same rung, so the parts read as one table: the rung that needs the
    fewest parts (the least changed among those). None when even one column beside the keys does not fit.
    """
    keys = [c for c in cols if c.spec.key]
    rest = [c for c in cols if not c.spec.key]
    if not rest or len(cols) < 3:
        return None
    best: list[_Planned] | None = None
    for knobs in LADDER:
        parts: list[list[_Col]] = [[]]
        for col in rest:
            if parts[-1] and _plan([*keys, *parts[-1], col], knobs, budget).width > budget:
                parts.append([])
            parts[-1].append(col)
        planned = [_plan([*keys, *part], knobs, budget) for part in parts]
        fits = len(parts) > 1 and all(p.width <= budget for p in planned)
        if fits and (best is None or len(planned) < len(best)):
            best = planned
    return best


def _cell(text: str, bold: bool) -> str:
    escaped = latex_escape(text)
    return f"\\textbf{{{escaped}}}" if bold else escaped


def _header(lines: Sequence[str], numeric: bool, wrapped: bool) -> str:
    if len(lines) == 1 or wrapped:
        return latex_escape(" ".join(lines))
    align = "r" if numeric else "l"
    return (
        f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}"
        + "\\\\".join(latex_escape(x) for x in lines)
        + "\\end{tabular}"
    )


def _tabular(part: _Planned) -> list[str]:
    """Return the ``tabular`` of one part."""
    spec = []
    for i, col in enumerate(part.cols):
        if i in part.wrapped:
            spec.append(f">{{\\raggedright\\arraybackslash}}p{{{part.wrapped[i]:.1f}pt}}")
        else:
            spec.append("r" if col.numeric else "l")
    align = "@{}" + "".join(spec) + "@{}"
    lines = [
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(
            _header(h, c.numeric, i in part.wrapped)
            for i, (h, c) in enumerate(zip(part.header_lines, part.cols, strict=True))
        )
        + " \\\\",
        "\\midrule",
    ]
    rows = [c.short_cells if part.knobs.abbreviate and c.short_cells else c.cells for c in part.cols]
    for row in zip(*rows, strict=True):
        lines.append(" & ".join(_cell(t, b) for t, b in row) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return lines


def _legend(parts: Sequence[_Planned]) -> str:
    """Return the abbreviations the parts print, each with what it stands for (``Up/I: Score up, ...``)."""
    seen: dict[str, str] = {}
    for part in parts:
        if not part.knobs.abbreviate:
            continue
        for col in part.cols:
            if col.short and col.short != col.header:
                seen.setdefault(col.short, col.header)
            if col.short_cells:
                for (full, _), (short, _) in zip(col.cells, col.short_cells, strict=True):
                    if short != full:
                        seen.setdefault(short, full)
    return "; ".join(f"{short}: {full}" for short, full in seen.items())


def default_label(spec: TableSpec, study: str | None) -> str:
    """``tab:<study>-<table>`` (``tab:<table>`` without a study), safe as a LaTeX label."""
    name = f"{study}-{spec.name}" if study else spec.name
    return "tab:" + re.sub(r"[^A-Za-z0-9:.-]+", "-", name).strip("-")


def latex_layout(frame: pl.DataFrame, spec: TableSpec, options: TableOptions | None = None) -> Layout:
    """Lay a table out as a LaTeX float that fits ``options.width`` and say what it took.

    The preamble needs ``booktabs``, and ``array`` or ``graphicx`` when a layout uses them (the
    first line of the text names what it needs).
    """
    options = options or TableOptions()
    if options.width not in WIDTHS:
        raise ValueError(f"no width {options.width!r} (there are: {', '.join(WIDTHS)})")
    budget = BUDGET_PT[options.width] * SAFETY
    cols, dropped = _prepare(frame, spec, options)
    if not cols:
        raise ValueError(f"{spec.name}: no column left to print")
    steps = [f"dropped empty columns: {', '.join(dropped)}"] if dropped else []
    resized = False
    single = _fit(cols, budget)
    if single is not None:
        parts = [single]
    else:
        split = _split(cols, budget)
        if split is not None:
            parts = split
            steps.append(f"split into {len(parts)} parts")
        else:
            parts = [_plan(cols, RESIZED, budget)]
            resized = True
    steps[len(dropped) > 0 : len(dropped) > 0] = parts[0].knobs.describe()
    width = max(p.width for p in parts)
    if resized:
        steps.append(f"scaled to {math.floor(100 * budget / width)}% with \\resizebox (no layout fitted)")
    legend = _legend(parts)
    if not legend:
        steps = [s for s in steps if s != "abbreviations with a legend"]
    caption = options.caption if options.caption is not None else spec.caption
    caption = caption.rstrip(".") + "." + (f" {legend}." if legend else "")
    packages = ["booktabs"]
    if any(p.wrapped for p in parts):
        packages.append("array")
    if resized:
        packages.append("graphicx")
    star = options.star if options.star is not None else options.width == "page"
    env = "table*" if star else "table"
    lines = [f"% needs \\usepackage{{{','.join(packages)}}}"]
    if steps:
        lines.append(f"% layout for the {options.width} width: {'; '.join(steps)}")
    lines += [f"\\begin{{{env}}}[t]", "\\centering"]
    if parts[0].knobs.size != "normalsize":
        lines.append(f"\\{parts[0].knobs.size}")
    if parts[0].knobs.tabcolsep != 6.0:
        lines.append(f"\\setlength{{\\tabcolsep}}{{{parts[0].knobs.tabcolsep:g}pt}}")
    lines += [
        f"\\caption{{{latex_escape(caption)}}}",
        f"\\label{{{options.label or default_label(spec, options.study)}}}",
    ]
    for i, part in enumerate(parts):
        if i:
            lines.append("\\par\\medskip")
        body = _tabular(part)
        if resized:
            body = ["\\resizebox{\\linewidth}{!}{%", *body, "}"]
        lines += body
    if options.notes:
        lines += [
            "\\par\\smallskip",
            f"\\parbox{{\\linewidth}}{{\\footnotesize {latex_escape(options.notes)}}}",
        ]
    lines.append(f"\\end{{{env}}}")
    return Layout(
        "\n".join(lines) + "\n", tuple(steps), round(width, 1), round(budget, 1), resized, tuple(dropped)
    )


def to_latex(frame: pl.DataFrame, spec: TableSpec, options: TableOptions | None = None) -> str:
    """Render a table float that fits ``options.width`` (:func:`latex_layout`'s text)."""
    return latex_layout(frame, spec, options).text


def to_markdown(frame: pl.DataFrame, spec: TableSpec, options: TableOptions | None = None) -> str:
    """Render a GitHub-flavoured Markdown table: display names, numbers right-aligned, best values bold."""
    options = options or TableOptions()
    cols, _ = _prepare(frame, spec, options)

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")

    lines = [
        "| " + " | ".join(escape(c.header) for c in cols) + " |",
        "|" + "|".join("---:" if c.numeric else "---" for c in cols) + "|",
    ]
    for row in zip(*(c.cells for c in cols), strict=True):
        lines.append("| " + " | ".join(f"**{escape(t)}**" if best else escape(t) for t, best in row) + " |")
    return "\n".join(lines) + "\n"


def write(
    frame: pl.DataFrame, spec: TableSpec, fmt: str, out: Path | None, options: TableOptions | None = None
) -> str | None:
    """Write the table in ``fmt`` to ``out``, or return it as text when ``out`` is None (not Parquet).

    CSV and Parquet keep raw values and every column unless ``options.columns`` chooses some.
    """
    if options is not None and options.columns is not None:
        _prepare(frame, spec, options)  # an unknown column is a ValueError naming the ones there are
        frame = frame.select(options.columns)
    if fmt == "parquet":
        if out is None:
            raise ValueError("Parquet is binary: give a file with -o")
        frame.write_parquet(out)
        return None
    if fmt == "csv":
        buffer = io.StringIO()
        frame.with_columns(pl.col(pl.List(pl.String)).list.join("; ")).write_csv(buffer)
        text = buffer.getvalue()
    elif fmt == "latex":
        text = to_latex(frame, spec, options)
    elif fmt == "markdown":
        text = to_markdown(frame, spec, options)
    else:
        raise ValueError(f"no format {fmt!r} (there are: {', '.join(FORMATS)})")
    if out is None:
        return text
    out.write_text(text, encoding="utf-8")
    return None
