"""Tables written out: LaTeX (booktabs, escaped, best values in bold), Markdown, CSV and Parquet.

CSV and Parquet keep the raw values (for further work); LaTeX and Markdown show them formatted as each
column's kind says, with ``—`` for a missing value.
"""

from __future__ import annotations

import io
import unicodedata
from pathlib import Path

import polars as pl

from arb_audit.taxonomy.tables import Column, TableSpec

FORMATS = ("latex", "markdown", "csv", "parquet")
NUMERIC = frozenset({"int", "score", "ratio", "share", "minutes"})
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


def best_rows(frame: pl.DataFrame, column: Column) -> set[int]:
    """Rows holding the column's best value as printed (every tied row); none when it has no values.

    Values are compared as the table shows them, so two cells that print alike are both marked or neither.
    """
    if column.best is None or column.name not in frame.columns:
        return set()
    shown = {
        i: float(cell_text(v, column.kind).rstrip("%"))
        for i, v in enumerate(frame[column.name].to_list())
        if cell_text(v, column.kind) != "—"
    }
    if not shown:
        return set()
    target = max(shown.values()) if column.best == "max" else min(shown.values())
    return {i for i, v in shown.items() if v == target}


def _cells(frame: pl.DataFrame, spec: TableSpec) -> list[list[tuple[str, bool]]]:
    """Every row's formatted cells, each with whether it is its column's best."""
    best = {c.name: best_rows(frame, c) for c in spec.columns}
    rows = frame.select(c.name for c in spec.columns).rows()
    return [
        [(cell_text(v, c.kind), i in best[c.name]) for v, c in zip(row, spec.columns, strict=True)]
        for i, row in enumerate(rows)
    ]


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


def to_latex(frame: pl.DataFrame, spec: TableSpec) -> str:
    """Render a ``table`` float holding a booktabs ``tabular`` (the preamble needs booktabs)."""
    align = "".join("r" if c.kind in NUMERIC else "l" for c in spec.columns)
    lines = [
        "% needs \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
        f"\\caption{{{latex_escape(spec.caption)}}}",
        f"\\label{{tab:{spec.name}}}",
        f"\\begin{{tabular}}{{{align}}}",
        "\\toprule",
        " & ".join(latex_escape(c.header) for c in spec.columns) + " \\\\",
        "\\midrule",
    ]
    for row in _cells(frame, spec):
        cells = [f"\\textbf{{{latex_escape(t)}}}" if best else latex_escape(t) for t, best in row]
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def to_markdown(frame: pl.DataFrame, spec: TableSpec) -> str:
    """Render a GitHub-flavoured Markdown table, numbers right-aligned, best values in bold."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")

    lines = [
        "| " + " | ".join(escape(c.header) for c in spec.columns) + " |",
        "|" + "|".join("---:" if c.kind in NUMERIC else "---" for c in spec.columns) + "|",
    ]
    for row in _cells(frame, spec):
        lines.append("| " + " | ".join(f"**{escape(t)}**" if best else escape(t) for t, best in row) + " |")
    return "\n".join(lines) + "\n"


def write(frame: pl.DataFrame, spec: TableSpec, fmt: str, out: Path | None) -> str | None:
    """Write the table in ``fmt`` to ``out``, or return it as text when ``out`` is None (not Parquet)."""
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
        text = to_latex(frame, spec)
    elif fmt == "markdown":
        text = to_markdown(frame, spec)
    else:
        raise ValueError(f"no format {fmt!r} (there are: {', '.join(FORMATS)})")
    if out is None:
        return text
    out.write_text(text, encoding="utf-8")
    return None
