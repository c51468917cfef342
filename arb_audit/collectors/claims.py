"""The agent's own claims about its run: its last word and the summaries it wrote. Claims, never findings.

Any benchmark's agent may end with a message ("the final model reaches 68.2% on GSM8K") and leave a
README, SUMMARY or report beside its code. Each becomes a :class:`ReportedIteration` marked
``fields["claim"]`` (``final_message`` or ``summary_file``), with the score it claims in percent, so
the analyzer can set it against the score the benchmark measured. A summary written in the
per-iteration form of AutoRL-Bench's skills is read by that collector's own parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from arb_audit.collectors.autorl_bench.summaries import MAX_FIELD_CHARS, read_markdown
from arb_audit.collectors.reading import RunFolder, text_number
from arb_audit.collectors.transcripts.secrets import redact
from arb_audit.model import ClaimKind, ReportedIteration

SUMMARY_NAME = re.compile(r"^(?:readme|summary|report|results?|final[_-]?report|notes)[\w.-]*\.md$", re.I)
"""Names of the Markdown summaries an agent writes at the top of its workspace."""
MAX_SUMMARIES = 10
"""Most summary files read from one folder."""
MAX_SUMMARY_BYTES = 256 * 1024
"""Largest summary file read; the agent may write anything."""
SCORE = re.compile(
    r"(?P<what>accuracy|acc|score|exact[ _-]?match|pass@1|gsm8k)\b[^\n\d%]{0,40}?"
    r"(?P<value>\d{1,3}(?:\.\d+)?)\s*(?P<pct>%)?",
    re.IGNORECASE,
)
"""A score as agents word it: a metric's name, a few words, then the number (a fraction or a percent)."""
PERCENT_FIRST = re.compile(
    r"(?P<value>\d{1,3}(?:\.\d+)?)\s*(?P<pct>%)[*_\s]*(?:accuracy|acc\b|score|exact[ _-]?match|pass@1)",
    re.IGNORECASE,
)
"""The other order: a percent, then the metric's name (``**71.2% accuracy**``)."""
BASELINE = re.compile(r"\b(?:base(?:line)?|before|original|untrained|initial)\b", re.IGNORECASE)
"""Words that make a number the starting point, not the claim."""


@dataclass(frozen=True, slots=True)
class ClaimedScore:
    """A score the agent claims, in percent, with the line that claims it."""

    value: float
    """The score in percent (a fraction such as 0.68 is read as 68)."""
    line: int
    """The line of the text it is on (1-based)."""
    excerpt: str
    """That line, shortened."""


def claimed_scores(text: str) -> list[ClaimedScore]:
    """Return every score ``text`` claims for the agent's own model (baselines left out), in order."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        matches = sorted(
            [*SCORE.finditer(line), *PERCENT_FIRST.finditer(line)], key=lambda m: m.start("value")
        )
        for m in matches:
            value = text_number(m["value"])
            if value is None or BASELINE.search(line[max(0, m.start() - 40) : m.start("value")]):
                continue
            percent = value if m["pct"] or value > 1 else value * 100
            if 0 <= percent <= 100:
                found.append(ClaimedScore(round(percent, 6), number, line.strip()[:240]))
    return found


def _claim(source: str, kind: ClaimKind, text: str, line: int, at: datetime | None) -> ReportedIteration:
    """Return the claim ``text`` makes: its text, and the score it claims when it claims one."""
    text = redact(text)
    scores = claimed_scores(text)
    # Agents report their best last or loudest; the highest score claimed is what they stand by.
    top = max(scores, key=lambda s: s.value) if scores else None
    return ReportedIteration(
        source=source,
        number=1,
        line=line + top.line - 1 if top and kind == "summary_file" else line,
        reported_at=at,
        score=top.value if top else None,
        claim=kind,
        excerpt=top.excerpt if top else text.strip()[:240],
        text=text[:MAX_FIELD_CHARS],
    )


def final_message_claim(source: str, text: str, line: int, at: datetime | None) -> ReportedIteration:
    """Return the claim the agent's last message (at ``line`` of the transcript ``source``) makes."""
    return _claim(source, "final_message", text, line, at)


def summary_claims(folder: RunFolder, rel_dir: str) -> list[ReportedIteration]:
    """Return the claims of the summaries at the top of ``rel_dir`` (per-iteration ones as iterations)."""
    root = folder.root / rel_dir
    if not root.is_dir() or root.is_symlink():
        return []
    try:
        names = sorted(p.name for p in root.iterdir() if SUMMARY_NAME.match(p.name) and p.is_file())
    except OSError as exc:
        folder.problem(rel_dir, f"cannot be listed: {exc.strerror or exc}")
        return []
    claims: list[ReportedIteration] = []
    for name in names[:MAX_SUMMARIES]:
        rel = f"{rel_dir}/{name}"
        path = root / name
        if path.is_symlink() or path.stat().st_size > MAX_SUMMARY_BYTES:
            folder.problem(rel, "not read as a summary: a link, or larger than 256 KiB")
            continue
        iterations = read_markdown(folder, rel)
        if iterations:
            claims.extend(iterations)
            continue
        text = "\n".join(line for _, line in folder.lines(rel))
        if text.strip():
            claims.append(_claim(rel, "summary_file", text, 1, None))
    return claims
