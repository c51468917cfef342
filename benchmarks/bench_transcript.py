"""Read a huge agent transcript: throughput and peak memory against a plain JSON-lines loop.

Run on demand: ``python benchmarks/bench_transcript.py [SIZE_MB]`` (default 2048). It writes a Claude
Code ``stream-json`` transcript of SIZE_MB (each line with PostTrainBench's time prefix, stderr lines
between events, tool results of 200 KB as long training logs make them, a Write and an Edit per
round), then times in fresh processes (a) a baseline that ``json.loads`` every line and keeps nothing,
and (b) ``ingest_transcript`` (redaction, parsing, pairing, the code history committed to git, the
command timeline), and prints their ratio and each one's peak RSS.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from bench_runlog import PEAK, measure

OUTPUT = "step 100 | loss 0.4312 | reward 0.55 | lr 2e-05\n" * 4000  # 200 KB
SCRIPT = "from trl import SFTTrainer\nlr = {lr}\ntrainer = SFTTrainer(model='m')\ntrainer.train()\n"


def _line(event: dict[str, object], second: int) -> str:
    hour, minute, sec = 8 + second // 3600, second // 60 % 60, second % 60
    return f"[2026-04-10T{hour:02d}:{minute:02d}:{sec:02d}Z] {json.dumps(event)}\n"


def _call(call_id: str, name: str, **args: object) -> dict[str, object]:
    block = {"type": "tool_use", "id": call_id, "name": name, "input": args}
    return {"type": "assistant", "message": {"role": "assistant", "content": [block]}}


def _result(call_id: str, content: str) -> dict[str, object]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": False}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def write_transcript(path: Path, size_mb: int) -> None:
    """Write SIZE_MB of transcript: rounds of write, edit, run (a 200 KB result), stderr noise."""
    target = size_mb * 1024 * 1024
    init: dict[str, object] = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "cwd": "/home/ben/task",
    }
    with path.open("w") as out:
        out.write(_line(init, 0))
        n = 0
        while out.tell() < target:
            n += 1
            file = f"/home/ben/task/train_v{n % 50}.py"
            out.write(
                _line(_call(f"w{n}", "Write", file_path=file, content=SCRIPT.format(lr="1e-5")), n % 36000)
            )
            out.write(_line(_result(f"w{n}", "File created"), n % 36000))
            edit = _call(f"e{n}", "Edit", file_path=file, old_string="lr = 1e-5", new_string=f"lr = {n}e-6")
            out.write(_line(edit, n % 36000))
            out.write(_line(_result(f"e{n}", "ok"), n % 36000))
            out.write(_line(_call(f"b{n}", "Bash", command=f"python train_v{n % 50}.py"), n % 36000))
            out.write("warning: TORCH_CUDA_ARCH_LIST is not set\n")
            out.write(_line(_result(f"b{n}", OUTPUT), n % 36000))


CHILD_BASELINE = (
    "import json, sys\n"
    "for line in open(sys.argv[1], 'rb'):\n"
    "    json.loads(line[23:]) if line[:1] == b'[' else None\n" + PEAK
)
CHILD_INGEST = (
    "import sys, tempfile\nfrom pathlib import Path\nfrom arb_audit.collectors.reading import RunFolder\n"
    "from arb_audit.collectors.transcripts.ingest import ingest_transcript\n"
    "p = Path(sys.argv[1])\n"
    "with tempfile.TemporaryDirectory() as git:\n"
    "    f = ingest_transcript(RunFolder(p.parent), p.name, roots=['/home/ben/task'],"
    " git_dir=Path(git) / 'r.git', ref='refs/runs/bench')\n"
    "print(len(f.revisions), len(f.commands), len(f.problems))\n" + PEAK
)


def main() -> None:
    """Write the transcript, measure both readers, print the figures."""
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "solve_out.txt"
        write_transcript(path, size_mb)
        size = path.stat().st_size / 1e6
        base_s, base_mb, _ = measure(CHILD_BASELINE, path)
        ingest_s, ingest_mb, result = measure(CHILD_INGEST, path)
    print(f"transcript: {size:,.0f} MB; revisions, commands, problems: {result}")
    print(f"baseline json.loads loop: {base_s:.2f} s ({size / base_s:,.0f} MB/s), peak RSS {base_mb:,.0f} MB")
    rate = size / ingest_s
    print(f"ingest_transcript:        {ingest_s:.2f} s ({rate:,.0f} MB/s), peak RSS {ingest_mb:,.0f} MB")
    print(f"ratio ingest / baseline: {ingest_s / base_s:.2f}x time")


if __name__ == "__main__":
    main()
