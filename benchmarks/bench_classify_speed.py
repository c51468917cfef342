"""Classification throughput against ``ast.parse`` and ``libcst.parse_module`` on the same real files.

Run on demand: ``python benchmarks/bench_classify_speed.py [FOLDER ...] [--limit N] [--rounds R]``
(default: this interpreter's site-packages, the first 2000 Python files in sorted order, 3 rounds; more
rounds give a steadier least time per file on a loaded machine). Each file is read once;
then, in the same run and in alternating order, every file is parsed with ``ast``, parsed with libcst,
and classified (pre-scan, libcst parse, name bindings, one batched detector pass, locating evidence)
twice: as a worker process of ``arb-audit classify`` does (unguarded: a hostile file may kill the
worker, which is then reported) and in-process with the stack guards (nesting scan, big-stack thread).
Files that fail to parse in any of them are left out of all three. Prints totals, per-file medians and
worst cases, the ratios of totals, and the median over files of each file's classify time against its
own libcst parse (goal for the analyzer issue: that median at most 1.5x), for all files and for the
files that import an ML library.
"""

from __future__ import annotations

import ast
import re
import statistics
import sys
import sysconfig
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import libcst

from arb_audit.analyzer.classify import find

ML_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(?:torch|trl|transformers|peft|vllm|unsloth|openrlhf|verl)\b", re.M
)


def collect(folders: list[Path], limit: int) -> list[str]:
    """Read up to ``limit`` Python files (sorted) that all three can parse."""
    texts: list[str] = []
    for path in sorted(p for folder in folders for p in folder.rglob("*.py")):
        if len(texts) >= limit:
            break
        try:
            text = path.read_text(encoding="utf-8")
            ast.parse(text)
            libcst.parse_module(text)
        except (
            SyntaxError,
            UnicodeDecodeError,
            ValueError,
            RecursionError,
            libcst.ParserSyntaxError,
            OSError,
        ):
            continue
        texts.append(text)
    return texts


def timed(
    methods: dict[str, Callable[[str], object]], texts: list[str], rounds: int
) -> dict[str, list[float]]:
    """Per-file seconds of each method, the least of ``rounds`` tries.

    The methods run one after another on the same file (in alternating order each round), so that a
    burst of load on a shared machine weighs on all of them alike rather than on one method's pass.
    """
    best = {name: [float("inf")] * len(texts) for name in methods}
    for round_ in range(rounds):
        order = list(methods) if round_ % 2 == 0 else list(reversed(methods))
        for i, text in enumerate(texts):
            for name in order:
                start = time.perf_counter()
                methods[name](text)
                best[name][i] = min(best[name][i], time.perf_counter() - start)
    return best


def report(label: str, texts: list[str], rounds: int) -> None:
    """Time the methods over ``texts`` and print totals and ratios."""
    methods: dict[str, Callable[[str], object]] = {
        "ast.parse": ast.parse,
        "libcst.parse_module": libcst.parse_module,
        "classify (worker)": partial(find, guarded=False),
        "classify (guarded)": find,
    }
    best = timed(methods, texts, rounds)
    base_ast, base_cst = sum(best["ast.parse"]), sum(best["libcst.parse_module"])
    print(f"\n{label}: {len(texts)} files, {sum(map(len, texts)) / 1e6:.1f} MB")
    for name, times in best.items():
        total = sum(times)
        # the measure: the median over files of each file's cost against its own libcst parse
        per_file = statistics.median(t / c for t, c in zip(times, best["libcst.parse_module"], strict=True))
        print(
            f"  {name:19} total {total:7.2f} s  median {statistics.median(times) * 1000:7.2f} ms"
            f"  worst {max(times) * 1000:8.1f} ms  total to ast {total / base_ast:5.2f}x"
            f"  to libcst {total / base_cst:4.2f}x  per-file median to libcst {per_file:4.2f}x"
        )


def main() -> None:
    """Collect files, time, print."""
    args = sys.argv[1:]
    limit, rounds = 2000, 3
    for flag in ("--limit", "--rounds"):
        if flag in args:
            at = args.index(flag)
            value = int(args[at + 1])
            del args[at : at + 2]
            limit, rounds = (value, rounds) if flag == "--limit" else (limit, value)
    folders = [Path(a) for a in args] or [Path(sysconfig.get_paths()["purelib"])]
    texts = collect(folders, limit)
    report("all files", texts, rounds)
    report("files importing an ML library", [t for t in texts if ML_IMPORT.search(t)], rounds)


if __name__ == "__main__":
    main()
