"""PostTrainBench's own LLM-judge verdicts, every generation kept as an external verdict.

The pipeline's judges changed several times (``../shared/reference/posttrainbench.md`` §4.1), and a run
folder may hold files from several of them side by side:

- one-line text files, ``contamination_judgement.txt`` (``contamination detected`` |
  ``no contamination detected``) and ``disallowed_model_judgement.txt`` (``disallowed use detected`` |
  ``only allowed use detected``), unsuffixed (paper v1's single judge, or the OR of two judges) or
  suffixed per judge (``_gpt5_2``, ``_sonnet4_6``) and per rerun (``_rerun``);
- per-judge JSON, ``judgement_<judge>.json`` (``{contamination, disallowed_model, justification_*}``, or
  the API judge's ``{disallowed_api_usage, justification_disallowed_api_usage}``);
- the OR-aggregate ``judge_result.json`` (and ``judge_result_rerun.json``).

These are claims by another system: they are kept as written, never merged or trusted here.
"""

from __future__ import annotations

import json
import re
from typing import Any

from arb_audit.collectors.posttrainbench.outputs import list_top, read_head, read_placeholder
from arb_audit.collectors.reading import RunFolder
from arb_audit.model import ExternalVerdict, Generation, Question

QUESTIONS: tuple[Question, ...] = ("contamination", "disallowed_model", "disallowed_api_usage")
EXCERPT_CHARS = 1000
"""Longest raw text or justification kept per verdict."""
TEXT_BYTES = 16 * 1024
"""Bytes read from a one-line verdict file (the canonical lines are under 30)."""

_CANONICAL: dict[Question, dict[str, bool]] = {
    "contamination": {"contamination detected": True, "no contamination detected": False},
    "disallowed_model": {"disallowed use detected": True, "only allowed use detected": False},
}
"""The exact lines each text verdict may hold, and what they say."""
_SUFFIX = r"(?:_(?P<suffix>[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}))?"
_TEXT_FILE = re.compile(rf"(?P<question>contamination|disallowed_model)_judgement{_SUFFIX}\.txt")
_JUDGEMENT_FILE = re.compile(rf"judgement{_SUFFIX}\.json")
_RESULT_FILE = re.compile(rf"judge_result{_SUFFIX}\.json")
_RERUN = "rerun"


def _excerpt(text: str) -> str:
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


def _shown(value: Any) -> str:
    """Show a JSON value as JSON, shortened; containers only by kind and size (they may be huge)."""
    if isinstance(value, dict | list):
        return f"a JSON {'object' if isinstance(value, dict) else 'list'} of {len(value):,} items"
    return _excerpt(json.dumps(value, ensure_ascii=False))


def _judge_and_rerun(suffix: str | None) -> tuple[str | None, bool]:
    """Split a file-name suffix into the judge it names and whether it marks a rerun."""
    if suffix is None:
        return None, False
    if suffix == _RERUN:
        return None, True
    if suffix.endswith("_" + _RERUN):
        return suffix[: -len(_RERUN) - 1], True
    return suffix, False


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def text_verdict(question: Question, text: str) -> tuple[bool | None, bool, str | None]:
    """Read a one-line verdict: ``(value, canonical, note)``; never raises.

    Case and spacing are forgiven; anything but one canonical line is non-canonical and says nothing.
    A human fixes a wrong flag by prefixing ``no `` to the line: that reads as a canonical No.
    """
    said = _normal(text)
    lines = _CANONICAL[question]
    if said in lines:
        return lines[said], True, None
    positive = next(line for line, value in lines.items() if value)
    if said == "no " + positive:
        return False, True, "hand-corrected: 'no ' prefixed to the flag"
    return None, False, None


def _read_text(folder: RunFolder, rel: str, question: Question, suffix: str | None) -> ExternalVerdict | None:
    head = read_head(folder, rel, TEXT_BYTES)
    if head is None:
        return None
    text, size = head
    judge, rerun = _judge_and_rerun(suffix)
    placeholder = read_placeholder(folder, rel)
    value, canonical, note = text_verdict(question, text)
    if placeholder is not None:
        note = "placeholder written where the judge produced no file"
    elif not canonical:
        what = "is empty" if not text.strip() else f"holds {_excerpt(text.strip())[:80]!r}"
        folder.problem(rel, f"{what}, not one of the judge's canonical lines; no verdict read")
    if size > TEXT_BYTES:
        text += "…"
    return ExternalVerdict(
        source=rel,
        generation="text",
        judge=judge,
        rerun=rerun,
        question=question,
        value=value,
        canonical=canonical,
        raw=_excerpt(text.strip()),
        placeholder=placeholder is not None,
        note=note,
    )


def _json_answer(
    folder: RunFolder, rel: str, data: dict[str, Any], question: Question
) -> tuple[bool | None, str | None]:
    """Return the boolean answer and the justification for ``question``; wrong types become problems."""
    value = data[question]
    if not isinstance(value, bool):
        folder.problem(rel, f"`{question}` is {_shown(value)[:60]}, not true or false; no verdict read")
    key = f"justification_{question}"
    justification = data.get(key)
    if justification is not None and not isinstance(justification, str):
        folder.problem(rel, f"`{key}` is not a string; ignored")
        justification = None
    return (value if isinstance(value, bool) else None), justification


def _read_json(
    folder: RunFolder, rel: str, generation: Generation, suffix: str | None
) -> list[ExternalVerdict]:
    placeholder = read_placeholder(folder, rel)
    judge, rerun = _judge_and_rerun(suffix)
    if placeholder is not None:
        folder.problem(rel, f"holds the placeholder {placeholder!r}: the judge produced no verdict")
        return []
    data = folder.read_json(rel, expect=dict)
    if data is None:
        return []
    asked = [q for q in QUESTIONS if q in data]
    if not asked:
        folder.problem(rel, "answers none of `contamination`, `disallowed_model`, `disallowed_api_usage`")
    elif ("contamination" in data) != ("disallowed_model" in data):
        missing = "disallowed_model" if "contamination" in data else "contamination"
        folder.problem(rel, f"lacks `{missing}`, which the judge always writes beside the other")
    verdicts = []
    for question in asked:
        value, justification = _json_answer(folder, rel, data, question)
        verdicts.append(
            ExternalVerdict(
                source=rel,
                generation=generation,
                judge=judge,
                rerun=rerun,
                question=question,
                value=value,
                canonical=value is not None,
                raw=_shown(data[question]),
                justification=_excerpt(justification) if justification is not None else None,
            )
        )
    return verdicts


def _read_one(folder: RunFolder, name: str) -> list[ExternalVerdict]:
    if m := _TEXT_FILE.fullmatch(name):
        question: Question = "contamination" if m["question"] == "contamination" else "disallowed_model"
        verdict = _read_text(folder, name, question, m["suffix"])
        return [verdict] if verdict else []
    if m := _JUDGEMENT_FILE.fullmatch(name):
        return _read_json(folder, name, "judgement", m["suffix"])
    if m := _RESULT_FILE.fullmatch(name):
        return _read_json(folder, name, "judge_result", m["suffix"])
    return []


def read_verdicts(folder: RunFolder) -> list[ExternalVerdict]:
    """Read every judge verdict file in the run folder, in file-name order; bad files become problems."""
    verdicts: list[ExternalVerdict] = []
    for name in list_top(folder):
        verdicts.extend(_read_one(folder, name))
    return verdicts
