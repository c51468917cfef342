"""Which library carries the audit's schema: pydantic v2 or msgspec, measured on an audit's own shapes.

    python benchmarks/bench_schema.py [SUBMISSIONS]

The same part of the report (submissions, revisions and commands with their evidence, as a 150-submission
run has them) is modelled in both libraries; each one's import and class creation, JSON decode+validate
and validate+encode are timed against ``json.loads``/``json.dumps`` of the same text (the baseline: what
the untyped dict cost). Prints ratios; run on demand, not in the tests.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from typing import Any

IMPORT_PYDANTIC = """
import pydantic
from typing import Literal
class Evidence(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(use_attribute_docstrings=True, extra="forbid")
    kind: Literal["code", "command", "log", "artifact", "submission", "transcript"]
    path: str | None = None
    revision: str | None = None
    line: int | None = None
    end_line: int | None = None
    command_seq: int | None = None
    submission_seq: int | None = None
    excerpt: str | None = None
class Submission(pydantic.BaseModel):
    seq: int
    status: str
    score: float | None
    requested_at: str | None
    completed_at: str | None
    model_path: str | None
    artifact_id: str | None
    artifact_path: str | None
    error: str | None
    evidence: list[Evidence]
class Revision(pydantic.BaseModel):
    seq: int
    sha: str
    trigger: str
    taken_at: str | None
    files: list[str]
    n_files: int
class Command(pydantic.BaseModel):
    seq: int
    command: str
    started_at: str | None
    ended_at: str | None
    exit_code: int | None
    finished: bool
    output_excerpt: str | None
    evidence: Evidence | None
class Report(pydantic.BaseModel):
    submissions: list[Submission]
    revisions: list[Revision]
    commands: list[Command]
"""

IMPORT_MSGSPEC = """
import msgspec
from typing import Literal
class Evidence(msgspec.Struct, omit_defaults=True, forbid_unknown_fields=True):
    kind: Literal["code", "command", "log", "artifact", "submission", "transcript"]
    path: str | None = None
    revision: str | None = None
    line: int | None = None
    end_line: int | None = None
    command_seq: int | None = None
    submission_seq: int | None = None
    excerpt: str | None = None
class Submission(msgspec.Struct):
    seq: int
    status: str
    score: float | None
    requested_at: str | None
    completed_at: str | None
    model_path: str | None
    artifact_id: str | None
    artifact_path: str | None
    error: str | None
    evidence: list[Evidence]
class Revision(msgspec.Struct):
    seq: int
    sha: str
    trigger: str
    taken_at: str | None
    files: list[str]
    n_files: int
class Command(msgspec.Struct):
    seq: int
    command: str
    started_at: str | None
    ended_at: str | None
    exit_code: int | None
    finished: bool
    output_excerpt: str | None
    evidence: Evidence | None
class Report(msgspec.Struct):
    submissions: list[Submission]
    revisions: list[Revision]
    commands: list[Command]
"""


def _report(n: int) -> dict[str, Any]:
    ev = {
        "kind": "code",
        "path": "code/train.py",
        "revision": "a" * 40,
        "line": 12,
        "excerpt": "loss.backward()",
    }
    return {
        "submissions": [
            {
                "seq": i,
                "status": "scored",
                "score": 40.0 + i / 10,
                "requested_at": "2026-03-10T10:15:00+00:00",
                "completed_at": "2026-03-10T10:16:00+00:00",
                "model_path": f"output/v{i}",
                "artifact_id": "b" * 64,
                "artifact_path": f"output/v{i}",
                "error": None,
                "evidence": [ev, {"kind": "submission", "submission_seq": i}],
            }
            for i in range(n)
        ],
        "revisions": [
            {
                "seq": i,
                "sha": "c" * 40,
                "trigger": "timer",
                "taken_at": "2026-03-10T10:15:00+00:00",
                "files": [f"code/f{j}.py" for j in range(3)],
                "n_files": 500,
            }
            for i in range(2 * n)
        ],
        "commands": [
            {
                "seq": i,
                "command": f"python code/train.py --step {i}",
                "started_at": "2026-03-10T10:15:00+00:00",
                "ended_at": None,
                "exit_code": 0,
                "finished": True,
                "output_excerpt": "loss 0.1\n" * 20,
                "evidence": {"kind": "transcript", "path": "agent.log", "line": i},
            }
            for i in range(3 * n)
        ],
    }


def _median(fn: Any, rounds: int = 15) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _import_s(code: str) -> float:
    """Median wall time of a fresh interpreter importing the library and creating the classes."""
    probe = f"import time; t = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"
    return statistics.median(
        float(
            subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
        )
        for _ in range(5)
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 150
    text = json.dumps(_report(n))
    data = text.encode()
    base_load = _median(lambda: json.loads(text))
    base_dump = _median(lambda: json.dumps(json.loads(text)))
    space_p: dict[str, Any] = {}
    exec(compile(IMPORT_PYDANTIC, "<pydantic>", "exec", dont_inherit=True), space_p)
    space_m: dict[str, Any] = {}
    exec(compile(IMPORT_MSGSPEC, "<msgspec>", "exec", dont_inherit=True), space_m)
    report_p, report_m = space_p["Report"], space_m["Report"]
    import msgspec

    obj_p = report_p.model_validate_json(data)
    obj_m = msgspec.json.decode(data, type=report_m)
    rows = [
        (
            "decode+validate",
            base_load,
            _median(lambda: report_p.model_validate_json(data)),
            _median(lambda: msgspec.json.decode(data, type=report_m)),
        ),
        (
            "encode",
            base_dump,
            _median(lambda: obj_p.model_dump_json()),
            _median(lambda: msgspec.json.encode(obj_m)),
        ),
        ("import + classes", _import_s("import json"), _import_s(IMPORT_PYDANTIC), _import_s(IMPORT_MSGSPEC)),
    ]
    print(f"report: {n} submissions, {2 * n} revisions, {3 * n} commands, {len(data) / 1e6:.2f} MB of JSON")
    print(f"{'':18} {'json (dict)':>12} {'pydantic':>12} {'msgspec':>12}   pydantic/json  msgspec/json")
    for name, base, p, m in rows:
        times = f"{base * 1e3:10.2f}ms {p * 1e3:10.2f}ms {m * 1e3:10.2f}ms"
        print(f"{name:18} {times}   {p / base:12.2f}x {m / base:12.2f}x")


if __name__ == "__main__":
    main()
