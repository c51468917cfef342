"""Compile a table or figure into a real LaTeX article (pdflatex, booktabs) and read the log back.

Used by the tests that prove the paper outputs fit; they skip when no TeX engine is installed
(Debian: texlive-latex-base and texlive-latex-recommended, with poppler-utils for pdftoppm; .ci/run
installs them).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

PREAMBLE = r"""\documentclass[{options}]{{article}}
\usepackage{{booktabs}}
\usepackage{{array}}
\usepackage{{graphicx}}
\begin{{document}}
Some text before the float, as in a paper.

{body}

Some text after it.
\end{{document}}
"""
OVERFULL = re.compile(r"^Overfull \\hbox \(([\d.]+)pt too wide\)", re.MULTILINE)
ERROR = re.compile(r"^! (.*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Compiled:
    """What pdflatex said of one article."""

    overfull: list[float]
    """Every overfull box, in points too wide."""
    errors: list[str]
    """Every LaTeX error (``! ...`` lines)."""
    pdf: Path
    """The article, when it compiled."""
    log: str
    """The whole log."""


def tex_engine() -> str | None:
    """The pdflatex on PATH, or None."""
    return shutil.which("pdflatex")


def compile_article(body: str, directory: Path, *, twocolumn: bool, name: str = "article") -> Compiled:
    """Compile ``body`` (a table or figure float) into a one- or two-column article in ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f"{name}.tex"
    source.write_text(PREAMBLE.format(options="twocolumn" if twocolumn else "", body=body), encoding="utf-8")
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", source.name],
        cwd=directory,
        capture_output=True,
        timeout=120,
        check=False,
    )
    log = (directory / f"{name}.log").read_text(encoding="latin-1")
    return Compiled(
        overfull=[float(m) for m in OVERFULL.findall(log)],
        errors=ERROR.findall(log),
        pdf=directory / f"{name}.pdf",
        log=log,
    )
