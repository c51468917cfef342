"""The hostile corpus: run folders (and classify inputs) an agent could leave, each written here by code.

Every case is a small function that writes one input under a sandbox (:class:`tests.hostile_run.Place`)
and returns the path to audit; :data:`CASES` holds them by name, each with the kind of defect it probes
and the collector it aims at. ``tests/test_hostile_corpus.py`` runs each one through the command line
(``tests.hostile_run``); ``benchmarks/bench_hostile.py`` runs them all, the huge ones too, with time and
memory limits and prints a table (issue 21, item 11).

The run folders start from the repository's own fixture writers (``tests.fixture_runs``,
``tests.fixture_posttrainbench``, ``tests.transcript_lines``) and the reference recordings under
``fixtures/reference``; each case then breaks one thing. Keys planted for the leak cases are made up
here (random, of each provider's shape).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import socket
import string
import struct
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from tests.arb_audit.test_redaction import ENCODINGS
from tests.fixture_posttrainbench import (
    TASK_DIR,
    real_output_log,
    real_run,
    trained_events,
)
from tests.fixture_runs import REMOTE_ROOT, SCENARIOS, TRAIN_SFT, write_run
from tests.hostile_run import Case, Check, Place, Writer
from tests.transcript_lines import (
    claude_call,
    claude_end,
    claude_init,
    claude_result,
    codex_command,
    codex_file_change,
    codex_thread,
    jsonl,
    legacy,
)

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "fixtures" / "reference"
CASES: dict[str, Case] = {}
"""Every case of the corpus, by name."""
KNOWN_FAILURES: dict[str, str] = {}
"""Cases that still fail, each with where its fix belongs (run as strict xfails: a fix shows)."""
FOUND: dict[str, str] = {
    "arb-scores-timestamp-max-date-west": "a time at the calendar's edge overflowed (OverflowError)",
    "arb-scores-timestamp-min-date-east": "a time at the calendar's edge overflowed (OverflowError)",
    "arb-scores-model-path-number": "a model_path of another type was dropped without a word",
    "arb-scores-model-path-object": "a model_path of another type was dropped without a word",
    "arb-undecodable-names": "a model folder's name that is not UTF-8 stopped the store (DuckDB)",
    "arb-escape-sequences-in-file-names": "--json carried C1 controls and bidi overrides raw",
    "arb-run-folder-name-escapes": "--json carried C1 controls and bidi overrides raw",
    "arb-unreadable-agent-jsonl": "a transcript no one can open read as no transcript, unnamed",
    "arb-unreadable-output-v3": "a model folder that cannot be searched stopped the audit",
    "ptb-unreadable-task": "a task/ folder that cannot be listed stopped the audit",
    "rec-marker-workspace-too-long": "a workspace name too long for the file system stopped the audit",
    "classify-secrets-in-code": "classify printed the keys its evidence lines hold",
    "classify-undecodable-names": "classify wrote a name that is not UTF-8 as raw bytes (not JSON)",
    "arb-planted-store-is-a-fifo": "RunStore.open handed DuckDB a FIFO planted as the store: it blocked",
    "rec-planted-forged-manifests": "a manifest in a planted store forged same-weights grader_probing",
}
"""Cases that showed a defect when they were written (fixed since): each stays in the fast lane."""

OSC = "\x1b]0;PWNED\x07\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x9b1;1H\u202eevil\u202c"
"""Terminal escapes an agent may write: retitle, write the clipboard, clear, C1 CSI, bidi override."""
ARB_FOLDER = "20260310T101500_codex"
ARB_WORKSPACE = f"{REMOTE_ROOT}/gsm8k/{ARB_FOLDER}"
GiB = 1024**3
T = TypeVar("T")


def add(
    name: str,
    probes: str,
    collector: str,
    write: Writer,
    *,
    names: tuple[str, ...] = (),
    secrets: tuple[str, ...] = (),
    command: str = "audit",
    args: tuple[str, ...] = (),
    huge: bool = False,
    unprivileged: bool = False,
    check: Check | None = None,
    exit_codes: tuple[int, ...] = (0,),
) -> None:
    """Register one case (names are unique)."""
    assert name not in CASES, name
    CASES[name] = Case(
        name,
        probes,
        collector,
        write,
        names=names,
        secrets=secrets,
        command=command,
        args=args,
        huge=huge,
        xfail=KNOWN_FAILURES.get(name),
        unprivileged=unprivileged,
        check=check,
        exit_codes=exit_codes,
    )


# --- Building blocks ----------------------------------------------------------------------------------


def arb_run(place: Place, scenario: str = "improves") -> Path:
    """An AutoRL-Bench run folder of a bundled scenario (``improves``: codex, three SFT submissions)."""
    return write_run(SCENARIOS[scenario](), place.runs)


def ptb_run(place: Place, events: list[dict[str, Any] | str] | None = None, **options: Any) -> Path:
    """A PostTrainBench run folder: a short Claude Code session that trains and stores final_model/."""
    options.setdefault("output_log", real_output_log(0, "exited normally"))
    options.setdefault("metrics", {"accuracy": 0.61, "stderr": 0.01})
    return real_run(place.runs, trained_events() if events is None else events, **options)


def recording(place: Place, name: str = "sft_only") -> Path:
    """A copy of a reference recording (recording/ beside its workspace, and the base model it names)."""
    for folder in (name, "base"):
        shutil.copytree(
            REFERENCE / folder,
            place.runs / folder,
            symlinks=True,
            ignore=shutil.ignore_patterns(".arb-audit"),
        )
    return place.runs / name / "recording"


def classify_input(place: Place, files: dict[str, str | bytes]) -> Path:
    """A folder of files for ``arb-audit classify``."""
    root = place.runs / "code"
    root.mkdir(parents=True)
    (root / "train.py").write_text(TRAIN_SFT)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    """Rewrite a JSON file through ``change`` (its result replaces the data, unless None: edited in place)."""
    data = json.loads(path.read_text())
    changed = change(data)
    path.write_text(json.dumps(data if changed is None else changed))


def bytes_name(folder: Path, name: bytes, content: bytes = b"x = 1\n") -> None:
    """Write a file whose name is raw bytes (not UTF-8, or holding characters a str path would refuse)."""
    fd = os.open(os.fsencode(folder) + b"/" + name, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    try:
        os.write(fd, content)
    finally:
        os.close(fd)


def fifo(path: Path) -> None:
    """Replace ``path`` by a FIFO (reading it waits for a writer that never comes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    """Leave a listening-less Unix socket at ``path``."""
    path.unlink(missing_ok=True)
    # A socket address is limited to about 108 bytes and pytest's tmp paths can be longer: bind by a
    # path relative to the socket's folder, in a child process so the tests' working folder stays put.
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only binds and exits
        try:
            os.chdir(path.parent)
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(path.name)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    if not path.exists():
        raise OSError(f"could not leave a socket at {path}")


def link(path: Path, target: str | Path) -> None:
    """Replace ``path`` by a symlink to ``target``."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


def links(*pairs: tuple[str, str]) -> Callable[[Path, Place], None]:
    """A change that makes each ``rel`` of the run folder a symlink to its ``target`` (as written)."""

    def change(run: Path, _: Place) -> None:
        for rel, target in pairs:
            link(run / rel, target)

    return change


def deep_json(depth: int) -> str:
    """An object nested ``depth`` deep (Python's parser gives up long before)."""
    return '{"a": ' * depth + "1" + "}" * depth


def deep_yaml_mapping(depth: int) -> str:
    """A YAML block mapping nested ``depth`` deep, one key a line."""
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "v\n"


BILLION_LAUGHS = "".join(
    [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n',
        *(f"{n}: &{n} [{','.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefghi", "bcdefghij", strict=True)),
        "trainer: *j\nrl: grpo\n",
    ]
)
"""Ten levels of nine aliases: 9**10 strings once expanded, a few hundred bytes as written."""


def safetensors_bytes(header: dict[str, Any] | bytes, body: bytes = b"") -> bytes:
    """A safetensors file: the header's length (8 bytes, little-endian), the header, the body."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + body


def _key(rng: random.Random, alphabet: str, size: int) -> str:
    body = [rng.choice(alphabet) for _ in range(size)]
    body[0] = rng.choice(string.digits)  # real keys of these lengths hold a digit and a capital
    body[-1] = rng.choice(string.ascii_uppercase)
    return "".join(body)


def _secrets() -> dict[str, tuple[str, str]]:
    """Made-up keys of every shape: name -> (the value that must not leak, how it is written)."""
    rng = random.Random(21)
    alnum = string.ascii_letters + string.digits
    b64 = alnum + "+/"
    hexa = "0123456789abcdef"
    shaped = {
        "openai": "sk-" + _key(rng, alnum + "_-", 48),
        "openai-project": "sk-proj-" + _key(rng, alnum + "_-", 120),
        "anthropic": "sk-ant-api03-" + _key(rng, alnum + "_-", 80),
        "github": "ghp_" + _key(rng, alnum, 36),
        "github-pat": "github_pat_" + _key(rng, alnum + "_", 82),
        "huggingface": "hf_" + _key(rng, string.ascii_lowercase, 34),
        "aws-key-id": "AKIA" + _key(rng, string.ascii_uppercase + string.digits, 16),
        "google": "AIza" + _key(rng, alnum + "_-", 35),
        "slack": "xoxb-" + _key(rng, alnum, 40),
    }
    out = {name: (value, value) for name, value in shaped.items()}
    aws = _key(rng, b64, 40)
    out["aws-secret"] = (aws, f"aws_secret_access_key = {aws}")
    wandb = "".join(rng.choice(hexa) for _ in range(40))
    out["wandb"] = (wandb, f"export WANDB_API_KEY={wandb}")
    bearer = _key(rng, alnum + "._-", 32)
    out["bearer"] = (bearer, f"Authorization: Bearer {bearer}")
    pem = _key(rng, b64, 64)
    out["private-key"] = (
        pem,
        f"-----BEGIN RSA PRIVATE KEY-----\n{pem}\n{_key(rng, b64, 64)}\n-----END RSA PRIVATE KEY-----",
    )
    return out


SECRETS = _secrets()
SECRET_VALUES = tuple(value for value, _ in SECRETS.values())
ALL_WRITTEN = "\n".join(written for _, written in SECRETS.values())
"""Every key, each on its line(s) as it is written."""


def _files_of(run: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text(text)


def _arb_with(files: dict[str, str], scenario: str = "improves") -> Writer:
    """An AutoRL-Bench run with ``files`` written (or replaced) in it."""

    def write(place: Place) -> Path:
        run = arb_run(place, scenario)
        _files_of(run, files)
        return run

    return write


Change = Callable[[Path, Place], object]
"""A change made to a written run folder (``run``), which may place files outside it (``place``)."""


def _arb_then(*changes: Change, scenario: str = "improves") -> Writer:
    """An AutoRL-Bench run, then each of ``changes`` in turn."""

    def write(place: Place) -> Path:
        run = arb_run(place, scenario)
        for change in changes:
            change(run, place)
        return run

    return write


def _ptb_then(*changes: Change, **options: Any) -> Writer:
    """A PostTrainBench run, then each of ``changes`` in turn."""

    def write(place: Place) -> Path:
        run = ptb_run(place, **options)
        for change in changes:
            change(run, place)
        return run

    return write


Lazy = Callable[[], T]
"""Content made only when the case is written (the corpus is imported whole; its big inputs are not)."""


def _made(content: T | Lazy[T]) -> T:
    return content() if callable(content) else content


def _ptb_events(events: list[dict[str, Any] | str] | Lazy[list[dict[str, Any] | str]]) -> Writer:
    """A PostTrainBench run whose solve_out.txt holds ``events`` (dicts get their own timestamps)."""
    return lambda place: ptb_run(place, _made(events))


def _ptb_lines(content: str | bytes | Lazy[str | bytes]) -> Writer:
    """A PostTrainBench run whose solve_out.txt is exactly ``content``."""

    def write(place: Place) -> Path:
        run = ptb_run(place)
        text = content() if callable(content) else content
        target = run / "solve_out.txt"
        target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        return run

    return write


def _recording_then(*changes: Change) -> Writer:
    """A reference recording (its ``recording/`` folder is audited), then each of ``changes``."""

    def write(place: Place) -> Path:
        run = recording(place)
        for change in changes:
            change(run, place)
        return run

    return write


def _classify(files: dict[str, str | bytes] | Lazy[dict[str, str | bytes]]) -> Writer:
    return lambda place: classify_input(place, _made(files))


def _scores(change: Callable[[list[dict[str, Any]]], Any]) -> Writer:
    return _arb_then(lambda run, _: edit_json(run / "scores.json", change))


def _first_score(**fields: Any) -> Writer:
    return _scores(lambda s: s[0].update(fields))


def _replace_in(rel: str, old: str, new: str) -> Callable[[Path, Place], None]:
    def change(run: Path, _: Place) -> None:
        text = (run / rel).read_text()
        assert old in text, (rel, old)
        (run / rel).write_text(text.replace(old, new))

    return change


# --- 1. Dates and numbers out of range, wrong types ------------------------------------------------------

for name, meta in {
    "start-year-10000": {"start_time": 253402300800, "timeout_s": 3600},
    "start-before-year-1": {"start_time": -62135596900, "timeout_s": 3600},
    "end-year-10000": {"start_time": 1773108902, "timeout_s": 3600, "end_time": 253402300800},
    "timeout-negative-huge": {"start_time": 1773108902, "timeout_s": -1e300},
    "wrong-types": {"start_time": "yesterday", "timeout_s": [1], "end_time": {"a": 1}},
}.items():
    add(
        f"arb-run-meta-{name}",
        "traceback",
        "autorl_bench",
        _arb_with({"run_meta.json": json.dumps(meta)}),
        names=("run_meta.json",),
    )

for name, stamp in {
    "max-date-west": "9999-12-31T23:59:59-14:00",
    "min-date-east": "0001-01-01T00:00:00+14:00",
    "year-0": "0000-01-01T00:00:00",
    "offset-overflow": "2026-03-10T10:00:00+99:99",
    "number": 1e300,
}.items():
    add(
        f"arb-scores-timestamp-{name}",
        "traceback",
        "autorl_bench",
        _first_score(timestamp=stamp),
        names=("scores.json",),
    )

BAD_FIELDS: dict[str, dict[str, Any]] = {
    "score-string": {"score": "60.1"},
    "score-list": {"score": [60.1]},
    "score-huge-int": {"score": int("9" * 400)},
    "elapsed-1e308": {"elapsed_seconds": 1e308},
    "id-string": {"submission_id": "one"},
    "id-negative": {"submission_id": -(2**63)},
    "model-path-number": {"model_path": 123},
    "model-path-object": {"model_path": {"a": "output/v1"}},
}
for name, fields in BAD_FIELDS.items():
    add(f"arb-scores-{name}", "traceback", "autorl_bench", _first_score(**fields), names=("scores.json",))

for name, value in {
    "object": {"scores": [1, 2]},
    "string": "not a list",
    "numbers": [1, 2, 3],
    "nested-lists": [[[]]],
}.items():
    add(
        f"arb-scores-is-{name}",
        "traceback",
        "autorl_bench",
        _arb_with({"scores.json": json.dumps(value)}),
        names=("scores.json",),
    )

add(
    "arb-runlog-dates-out-of-range",
    "traceback",
    "autorl_bench",
    _arb_then(
        lambda run, _: (run / "run.log").write_text(
            (run / "run.log")
            .read_text()
            .replace("Start: 2026-03-10 10:15:00", "Start: 9999-12-31 23:59:59")
            .replace("2026-03-10 10:", "9999-12-31 23:", 3)
            + "0000-00-00 00:00:00 | INFO | [SUBMIT #4] Started | model_path=output/v9 | gpu=None\n"
        )
    ),
    names=("run.log",),
)
add(
    "arb-summary-jsonl-out-of-range",
    "traceback",
    "autorl_bench",
    _arb_with(
        {
            "reports/summary.jsonl": json.dumps(
                {"iteration": 10**30, "timestamp": "9999-12-31 23:59", "duration_s": 1e308, "score": "x"}
            )
            + "\n"
            + json.dumps({"iteration": 2, "timestamp": 99, "duration_s": -1e308, "exit_code": 2**70})
            + "\n"
        }
    ),
    names=("reports/summary.jsonl",),
)
add(
    "arb-summary-md-out-of-range",
    "traceback",
    "autorl_bench",
    _arb_with(
        {
            "reports/summary.md": "## Iteration 1 (9999-12-31 23:59, 耗时 1e400s)\n"
            "- **状态**: ✅ (exit_code=99999999999999999999)\n- **Score**: 1e400 | Best: -1e400\n"
            "## Iteration 2 (0000-00-00 99:99)\n"
        }
    ),
)


def _file_times(run: Path, _: Place) -> None:
    """Times a file system holds but a datetime may not: far past, far future, and 0."""
    os.utime(run / "code" / "train.py", (0, 0))
    os.utime(run / "scores.json", ns=(2**62, 2**62))  # clamped by the file system to its largest
    os.utime(run / "output" / "v2" / "model.safetensors", (-(2**31), -(2**31)))
    os.utime(run / "reports", (2**40, 2**40))


add("arb-file-times-out-of-range", "traceback", "autorl_bench", _arb_then(_file_times))
add(
    "arb-metrics-deep-json",
    "traceback",
    "autorl_bench",
    _arb_with({"reports/metrics.json": deep_json(100_000)}),
    names=("reports/metrics.json",),
)
add(
    "arb-config-json-deep",
    "traceback",
    "autorl_bench",
    _arb_with({"output/v3/config.json": deep_json(100_000)}),
    names=("output/v3/config.json",),
)
add(
    "ptb-metrics-deep-json",
    "traceback",
    "posttrainbench",
    _ptb_then(lambda run, _: (run / "metrics.json").write_text(deep_json(100_000))),
    names=("metrics.json",),
)
for name, text in {
    "overflow": '{"accuracy": 1e400, "stderr": -1e400}',
    "wrong-types": '{"accuracy": "high", "stderr": [0.1], "extra": {"a": null}}',
    "huge-int": '{"accuracy": ' + "9" * 5000 + "}",
}.items():
    add(
        f"ptb-metrics-{name}",
        "traceback",
        "posttrainbench",
        _ptb_then(lambda run, _, text=text: (run / "metrics.json").write_text(text)),  # type: ignore[misc]
        names=("metrics.json",),
    )
add(
    "ptb-time-taken-garbage",
    "traceback",
    "posttrainbench",
    _ptb_then(lambda run, _: (run / "time_taken.txt").write_text("99999999999999999999:99:99\n")),
)
add(
    "ptb-output-log-out-of-range",
    "traceback",
    "posttrainbench",
    _ptb_then(
        lambda run, _: (run / "output.log").write_text(
            real_output_log(2**70, "exited with error code " + "9" * 400).replace(
                "gsm8k claude", "gsm8k\x00claude"
            )
        )
    ),
)
add(
    "ptb-judgements-wrong-types",
    "traceback",
    "posttrainbench",
    _ptb_then(
        lambda run, _: _files_of(
            run,
            {
                "judgement_gpt5_4.json": '{"contamination": "yes", "disallowed_model": [1]}',
                "judge_result.json": "[1, 2, 3]",
                "contamination_judgement.txt": "\x00\xff" * 10,
            },
        )
    ),
)

# --- 2. NUL bytes, undecodable and impossible names ------------------------------------------------------

add(
    "arb-scores-model-path-nul",
    "traceback",
    "autorl_bench",
    _first_score(model_path="output/v1\u0000/../../../etc"),
    names=("scores.json",),
)
add(
    "arb-scores-model-path-lone-surrogate",
    "traceback",
    "autorl_bench",
    _arb_then(
        lambda run, _: (run / "scores.json").write_text(
            (run / "scores.json").read_text().replace('"output/v1"', '"output/v1\\ud800\\udfff\\udc00"', 1)
        )
    ),
)
add(
    "arb-runlog-model-path-nul",
    "traceback",
    "autorl_bench",
    _arb_then(_replace_in("run.log", "model_path=output/v2", "model_path=output/v\x002")),
)
add(
    "arb-runlog-workspace-too-long",
    "traceback",
    "autorl_bench",
    _arb_then(
        _replace_in("run.log", f"Workspace: {ARB_WORKSPACE}", "Workspace: /" + "w" * 300 + "/x" * 3000)
    ),
)


def _undecodable_names(run: Path, _: Place) -> None:
    bytes_name(run / "code", b"bad\xff\xfe.py", b"from trl import SFTTrainer\n")
    bytes_name(run, b"\xff\xfe.log", b"log\n")
    os.mkdir(os.fsencode(run / "output") + b"/v\xff")
    bytes_name(run / "output", b"v\xff/model.safetensors", safetensors_bytes({}))


add("arb-undecodable-names", "traceback", "autorl_bench", _arb_then(_undecodable_names))


def _escape_names(run: Path, _: Place) -> None:
    (run / "code" / f"train{OSC}.py").write_text(TRAIN_SFT)
    (run / "code" / "new\nline\r.py").write_text("x = 1\n")
    (run / "output" / f"v{OSC}").mkdir()
    (run / "output" / f"v{OSC}" / "config.json").write_text("{}")


add("arb-escape-sequences-in-file-names", "escape", "autorl_bench", _arb_then(_escape_names))


def _too_deep(run: Path, _: Place) -> None:
    """code/ nested past the system's path limit (4096 bytes), made one folder at a time."""
    fd = os.open(run / "code", os.O_RDONLY)
    try:
        for _level in range(300):
            os.mkdir("d" * 30, dir_fd=fd)
            inner = os.open("d" * 30, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("train.py", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd)
        os.write(out, TRAIN_SFT.encode())
        os.close(out)
    finally:
        os.close(fd)


add("arb-code-nested-past-path-max", "traceback", "autorl_bench", _arb_then(_too_deep))


def _renamed(suffix: str) -> Writer:
    def write(place: Place) -> Path:
        run = arb_run(place)
        return run.rename(run.with_name(run.name + suffix))

    return write


add("arb-run-folder-name-escapes", "escape", "autorl_bench", _renamed(OSC.replace("/", "_")))
add("arb-run-folder-name-newline", "escape", "autorl_bench", _renamed("\n[SUBMIT #9] Done | score=99"))

# --- 3. Unreadable files (run without the file privileges of root when the tests are root) --------------


def _folder_instead(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _unreadable(rel: str, ptb: bool = False) -> Writer:
    def write(place: Place) -> Path:
        run = ptb_run(place, task={"train_sft.py": TRAIN_SFT}) if ptb else arb_run(place)
        (run / rel).chmod(0)
        return run

    return write


for rel in (
    "reports/metrics.json",
    "scores.json",
    "run.log",
    "run_meta.json",
    "agent.jsonl",
    "code/train.py",
    "code",
    "output/v2/model.safetensors",
    "output/v3",
):
    add(
        f"arb-unreadable-{rel.replace('/', '-').replace('.', '-')}",
        "traceback",
        "autorl_bench",
        _unreadable(rel),
        names=(rel,),
        unprivileged=True,
        args=("--hash-artifacts",) if rel.startswith("output/") else (),
    )
for rel in ("solve_out.txt", "metrics.json", "final_model/config.json", "task"):
    add(
        f"ptb-unreadable-{rel.replace('/', '-').replace('.', '-')}",
        "traceback",
        "posttrainbench",
        _unreadable(rel, ptb=True),
        names=(rel,),
        unprivileged=True,
    )
add(
    "arb-metrics-is-a-folder",
    "traceback",
    "autorl_bench",
    _arb_then(lambda run, _: _folder_instead(run / "reports" / "metrics.json")),
    names=("reports/metrics.json",),
)

# --- 4. Special files: FIFOs, sockets, devices, symlink loops ---------------------------------------------

for rel in (
    "output/v2/model.safetensors",
    "output/v3/config.json",
    "run.log",
    "scores.json",
    "agent.jsonl",
    "reports/summary.md",
    "code/train.py",
):
    add(
        f"arb-fifo-{rel.replace('/', '-').replace('.', '-')}",
        "hang",
        "autorl_bench",
        _arb_then(lambda run, _, rel=rel: fifo(run / rel)),  # type: ignore[misc]
        # the code snapshot takes regular files and links only: a FIFO there is left out, unnamed
        names=(rel,) if not rel.startswith("code/") else (),
        args=("--hash-artifacts",) if rel.startswith("output/") else (),
    )
for rel in ("final_model/model.safetensors", "solve_out.txt", "metrics.json"):
    add(
        f"ptb-fifo-{rel.replace('/', '-').replace('.', '-')}",
        "hang",
        "posttrainbench",
        _ptb_then(lambda run, _, rel=rel: fifo(run / rel)),  # type: ignore[misc]
        names=(rel,),
    )
add(
    "arb-socket-as-code-file",
    "hang",
    "autorl_bench",
    _arb_then(lambda run, _: unix_socket(run / "code" / "serve.py")),
)
for rel, device in (
    ("output/v2/model.safetensors", "/dev/zero"),
    ("agent.jsonl", "/dev/urandom"),
    ("run.log", "/dev/zero"),
    ("code/train.py", "/dev/zero"),
):
    add(
        f"arb-device-link-{rel.replace('/', '-').replace('.', '-')}",
        "hang",
        "autorl_bench",
        _arb_then(lambda run, _, rel=rel, device=device: link(run / rel, device)),  # type: ignore[misc]
        args=("--hash-artifacts",),
    )
add(
    "ptb-device-link-final-model",
    "hang",
    "posttrainbench",
    _ptb_then(lambda run, _: link(run / "final_model" / "model.safetensors", "/dev/zero")),
    args=("--hash-artifacts",),
)


def _loops(run: Path, _: Place) -> None:
    (run / "code" / "self").symlink_to(".")
    (run / "code" / "a").symlink_to("b")
    (run / "code" / "b").symlink_to("a")
    (run / "code" / "up").symlink_to("..")
    (run / "output" / "v1" / "loop.safetensors").symlink_to("loop.safetensors")
    chain = run / "code" / "chain"
    chain.mkdir()
    for i in range(60):
        (chain / f"l{i}").symlink_to(f"l{i + 1}")
    (chain / "l60").write_text("x = 1\n")


add("arb-symlink-loops", "hang", "autorl_bench", _arb_then(_loops))
add(
    "arb-symlink-to-root",
    "hang",
    "autorl_bench",
    _arb_then(links(("code/root", "/"), ("output/all", "/"))),
)


def _outside_links(run: Path, place: Place) -> None:
    secret = place.outside / "secret"
    secret.mkdir()
    (secret / "train.py").write_text("from trl import GRPOTrainer\n# OUTSIDE_MARKER\n")
    (secret / "config.json").write_text('{"_name_or_path": "OUTSIDE_MARKER"}')
    link(run / "code", secret)
    link(run / "output" / "v3", secret)
    link(run / "scores.json", place.outside / "victim.txt")


def _never_outside(report: dict[str, Any]) -> str | None:
    return (
        "text from outside the run folder in the report" if "OUTSIDE_MARKER" in json.dumps(report) else None
    )


add(
    "arb-symlinks-out-of-the-folder",
    "escape",
    "autorl_bench",
    _arb_then(_outside_links),
    check=_never_outside,
)
add(
    "ptb-task-symlink-loops-and-root",
    "hang",
    "posttrainbench",
    _ptb_then(links(("task/self", "."), ("task/root", "/"), ("task/x", "y"), ("task/y", "x"))),
)


def _run_folder_fifo(place: Place) -> Path:
    fifo(place.runs / "run")
    return place.runs / "run"


def _run_folder_loop(place: Place) -> Path:
    (place.runs / "run").symlink_to("run")
    return place.runs / "run"


add("arb-run-folder-is-a-fifo", "hang", "autorl_bench", _run_folder_fifo, exit_codes=(2,))
add("arb-run-folder-is-a-symlink-loop", "hang", "autorl_bench", _run_folder_loop, exit_codes=(2,))

# --- 5. Models: headers that lie, bombs --------------------------------------------------------------------

for name, content in {
    "header-length-2-63": struct.pack("<Q", 2**63) + b"{}",
    "header-deep": safetensors_bytes(deep_json(100_000).encode()),
    "header-not-utf8": safetensors_bytes(b'{"w": "\xff\xfe"}'),
    "offsets-past-end": safetensors_bytes(
        {"w": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 2**62]}}, b"\0" * 16
    ),
    "shape-negative": safetensors_bytes(
        {"w": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, b"\0" * 16
    ),
}.items():
    add(
        f"arb-safetensors-{name}",
        "traceback",
        "autorl_bench",
        _arb_then(
            lambda run, _, content=content: (run / "output" / "v3" / "model.safetensors").write_bytes(content)  # type: ignore[misc]
        ),
        args=("--hash-artifacts",),
    )


def _zip_bomb(path: Path, declared_small: bool) -> None:
    """A torch-style zip whose one member inflates to 1 GiB from about 1 MB."""
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive,
        archive.open("archive/data.pkl", "w", force_zip64=True) as member,
    ):
        block = b"\0" * (1024 * 1024)
        for _ in range(1024):
            member.write(block)
    if declared_small:
        # rewrite the sizes the directory declares: a reader that trusts them is fooled
        raw = bytearray(path.read_bytes())
        at = raw.rfind(b"PK\x01\x02")
        struct.pack_into("<II", raw, at + 20, 100, 100)
        path.write_bytes(bytes(raw))


def _bomb_for_weights(model: str, declared_small: bool) -> Callable[[Path, Place], None]:
    """A change that swaps the model folder's safetensors for a zip bomb named ``pytorch_model.bin``."""

    def change(run: Path, _: Place) -> None:
        (run / model / "model.safetensors").unlink()
        _zip_bomb(run / model / "pytorch_model.bin", declared_small)

    return change


add(
    "arb-zip-bomb-pytorch-model-bin",
    "memory",
    "autorl_bench",
    _arb_then(_bomb_for_weights("output/v3", declared_small=False)),
    args=("--hash-artifacts",),
)
add(
    "arb-zip-bomb-lying-sizes",
    "memory",
    "autorl_bench",
    _arb_then(_bomb_for_weights("output/v3", declared_small=True)),
    args=("--hash-artifacts",),
)


def _gzip_bomb() -> bytes:
    return gzip.compress(b"\0" * (256 * 1024 * 1024), compresslevel=9)


add("ptb-gzip-bomb-as-transcript", "memory", "posttrainbench", _ptb_lines(_gzip_bomb))
add(
    "arb-gzip-bomb-as-agent-jsonl",
    "memory",
    "autorl_bench",
    _arb_then(lambda run, _: (run / "agent.jsonl").write_bytes(_gzip_bomb())),
)
add(
    "ptb-zip-bomb-final-model",
    "memory",
    "posttrainbench",
    _ptb_then(_bomb_for_weights("final_model", declared_small=True)),
    args=("--hash-artifacts",),
)

# --- 6. YAML and config bombs in the code an audit classifies ---------------------------------------------

PYTHON_TAG = '!!python/object/apply:os.system ["touch ../../../outside/pwned"]\n'
for name, text in {
    "deep-yaml-flow": "[" * 100_000 + "]" * 100_000 + "\n",
    "deep-yaml-mapping": deep_yaml_mapping(5_000),
    "billion-laughs": BILLION_LAUGHS,
    "python-tag": "trainer: " + PYTHON_TAG,
}.items():
    add(
        f"arb-{name}",
        "hang",
        "autorl_bench",
        _arb_with(
            {"code/config.yaml": text, "code/launch.sh": "accelerate launch train.py --config config.yaml\n"}
        ),
    )
    add(f"classify-{name}", "hang", "classify", _classify({"config.yaml": text}), command="classify")
    add(
        f"ptb-task-{name}",
        "hang",
        "posttrainbench",
        _ptb_then(lambda run, _, text=text: _files_of(run, {"task/recipe.yaml": text})),  # type: ignore[misc]
    )

# --- 7. classify: the static analyzer's inputs -------------------------------------------------------------

ANALYZER_INPUTS: dict[str, dict[str, str | bytes]] = {
    "py-deep-parentheses": {"deep.py": "x = " + "(" * 100_000 + "1" + ")" * 100_000 + "\n"},
    "py-deep-blocks": {
        "deep.py": "".join(" " * i + "if x:\n" for i in range(3_000)) + " " * 3_000 + "pass\n"
    },
    "py-nul-bytes": {"nul.py": b"from trl import SFTTrainer\x00\x00\nSFTTrainer()\n"},
    "py-latin1": {"latin.py": "# caf\xe9\nfrom trl import DPOTrainer\n".encode("latin-1")},
    "py-utf16": {"wide.py": "from trl import GRPOTrainer\n".encode("utf-16")},
    "py-lone-surrogates": {"sur.py": b"x = '\xed\xa0\x80'\nfrom trl import SFTTrainer\n"},
    "notebook-deep": {"deep.ipynb": deep_json(100_000)},
    "notebook-wrong-types": {
        "bad.ipynb": json.dumps({"cells": [{"cell_type": "code", "source": 5}, 7, {"source": [None, 3]}]})
    },
    "notebook-not-json": {"junk.ipynb": b"\xff\xfe{{{"},
    "shell-huge-heredoc": {
        "run.sh": "cat > gen.py <<'EOF'\n" + "print(1)\n" * 200_000 + "EOF\npython gen.py\n"
    },
    "escapes-in-code": {"esc.py": f"# {OSC}\nfrom trl import SFTTrainer  # {OSC}\nSFTTrainer()\n"},
}
for name, files in ANALYZER_INPUTS.items():
    add(f"classify-{name}", "traceback", "classify", _classify(files), command="classify")

add(
    "classify-py-20mb-line",
    "memory",
    "classify",
    _classify(lambda: {"long.py": "x = '" + "a" * 20_000_000 + "'\n"}),
    command="classify",
)
add(
    "classify-secrets-in-code",
    "leak",
    "classify",
    _classify(
        {
            "keys.py": "".join(f"KEY_{i} = {json.dumps(w)}\n" for i, (_, w) in enumerate(SECRETS.values()))
            + "from trl import SFTTrainer\nSFTTrainer(token="
            + json.dumps(SECRETS["huggingface"][0])
            + ")\n"
        }
    ),
    command="classify",
    secrets=SECRET_VALUES,
)


def _classify_then(*changes: Callable[[Path], object]) -> Writer:
    """A folder for classify, then each of ``changes`` to it."""

    def write(place: Place) -> Path:
        root = classify_input(place, {})
        for change in changes:
            change(root)
        return root

    return write


add(
    "classify-undecodable-names",
    "traceback",
    "classify",
    _classify_then(
        lambda root: bytes_name(root, b"bad\xff.py", b"import trl\n"),
        lambda root: bytes_name(root, b"c\xc3(.yaml", b"rl: grpo\n"),
    ),
    command="classify",
)
add(
    "classify-escape-names",
    "escape",
    "classify",
    _classify_then(lambda root: (root / f"t{OSC}.py").write_text("from trl import SFTTrainer\n")),
    command="classify",
)
add(
    "classify-fifo-and-socket",
    "hang",
    "classify",
    _classify_then(lambda root: fifo(root / "model_train.py"), lambda root: unix_socket(root / "sock.py")),
    command="classify",
    names=("model_train.py",),
)
add(
    "classify-device-links",
    "hang",
    "classify",
    _classify_then(
        lambda root: link(root / "zero.py", "/dev/zero"),
        lambda root: link(root / "rand.yaml", "/dev/urandom"),
    ),
    command="classify",
)
add(
    "classify-symlink-loops-and-root",
    "hang",
    "classify",
    _classify_then(
        lambda root: (root / "self").symlink_to("."),
        lambda root: (root / "root").symlink_to("/"),
        lambda root: (root / "a").symlink_to("b"),
        lambda root: (root / "b").symlink_to("a"),
    ),
    command="classify",
)
add(
    "classify-unreadable",
    "traceback",
    "classify",
    _classify_then(
        lambda root: (root / "secret.py").write_text("import trl\n"),
        lambda root: (root / "secret.py").chmod(0),
    ),
    command="classify",
    names=("secret.py",),
    unprivileged=True,
)


def _fifo_alone(place: Place) -> Path:
    fifo(place.runs / "train.py")
    return place.runs / "train.py"


add(
    "classify-path-is-a-fifo",
    "hang",
    "classify",
    _fifo_alone,
    command="classify",
    exit_codes=(0, 2),
)

# --- 8. Planted stores and revisions in the run folder ---------------------------------------------------


def _planted_store(build: Callable[[Any], object]) -> Callable[[Path, Place], None]:
    """Plant ``.arb-audit/run.duckdb`` with the real schema, then let ``build(con)`` change it."""

    def change(run: Path, _: Place) -> None:
        import duckdb

        from arb_audit.store import RunStore

        path = run / ".arb-audit" / "run.duckdb"
        path.parent.mkdir()
        with RunStore.open(path):
            pass
        con = duckdb.connect(str(path))
        try:
            build(con)
        finally:
            con.close()

    return change


def _all_views(con: Any) -> None:
    for (table,) in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main'"
    ).fetchall():
        con.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_base"')
        con.execute(f'CREATE VIEW "{table}" AS SELECT * FROM "{table}_base"')


def _drop_columns(con: Any) -> None:
    con.execute("CREATE TABLE runs2 AS SELECT run_id FROM runs")
    con.execute("DROP TABLE runs")
    con.execute("ALTER TABLE runs2 RENAME TO runs")
    con.execute("DROP TABLE problems")
    con.execute("CREATE TABLE problems (x INTEGER)")


def _huge_view(con: Any) -> None:
    con.execute("DROP TABLE audits")
    con.execute("CREATE VIEW audits AS SELECT range::VARCHAR AS run_id, NULL AS x FROM range(1000000000000)")


def _future_schema(con: Any) -> None:
    con.execute("INSERT INTO _arb_migrations VALUES ('m999_from_the_future', now())")
    con.execute("CREATE MACRO length(x) AS 0")


add(
    "arb-planted-store-not-duckdb",
    "traceback",
    "autorl_bench",
    _arb_then(lambda run, _: _files_of(run, {".arb-audit/run.duckdb": "planted by the agent"})),
    names=(".arb-audit/run.duckdb",),
)
add(
    "arb-planted-store-of-views",
    "traceback",
    "autorl_bench",
    _arb_then(_planted_store(_all_views)),
    names=(".arb-audit/run.duckdb",),
)
add(
    "arb-planted-store-missing-columns",
    "traceback",
    "autorl_bench",
    _arb_then(_planted_store(_drop_columns)),
    names=(".arb-audit/run.duckdb",),
)
add(
    "arb-planted-store-huge-view",
    "hang",
    "autorl_bench",
    _arb_then(_planted_store(_huge_view)),
)
add(
    "arb-planted-store-from-the-future",
    "traceback",
    "autorl_bench",
    _arb_then(_planted_store(_future_schema)),
)
add(
    "arb-planted-store-is-a-fifo",
    "hang",
    "autorl_bench",
    _arb_then(lambda run, _: fifo(run / ".arb-audit" / "run.duckdb")),
)
add(
    "arb-planted-store-folder-is-a-file",
    "traceback",
    "autorl_bench",
    _arb_then(lambda run, _: _files_of(run, {".arb-audit": "a file"})),
)
add(
    "arb-planted-store-links-outside",
    "escape",
    "autorl_bench",
    _arb_then(lambda run, place: (run / ".arb-audit").symlink_to(place.outside)),
)
add(
    "arb-planted-wal",
    "traceback",
    "autorl_bench",
    _arb_then(lambda run, _: _files_of(run, {".arb-audit/run.duckdb.wal": "\x00garbage WAL\xff" * 100})),
)


def _hooked_revisions(run: Path, place: Place) -> None:
    """A planted revisions repository whose hooks and config would run commands (they must not)."""
    git = run / ".arb-audit" / "run.revisions.git"
    (git / "hooks").mkdir(parents=True)
    (git / "objects").mkdir()
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    pwned = place.outside / "pwned"
    (git / "config").write_text(
        "[core]\n\trepositoryformatversion = 0\n\tbare = true\n"
        f"\tfsmonitor = touch {pwned}\n\thooksPath = hooks\n\tsshCommand = touch {pwned}\n"
        f'[filter "x"]\n\tclean = touch {pwned}\n\tsmudge = touch {pwned}\n'
    )
    for hook in ("pre-commit", "post-commit", "reference-transaction", "post-index-change", "pre-auto-gc"):
        (git / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {pwned}\n")
        (git / "hooks" / hook).chmod(0o755)


add("arb-planted-revisions-with-hooks", "escape", "autorl_bench", _arb_then(_hooked_revisions))


def _forged_classifications(run: Path, _: Place) -> None:
    """The audit's own store with every cached classification rewritten to an on-policy GRPO stage."""
    import subprocess
    import sys

    import duckdb

    env = {**os.environ, "XDG_CACHE_HOME": str(run.parent / "forger-cache"), "PYTHONPATH": str(REPO)}
    subprocess.run(
        [sys.executable, "-m", "arb_audit", str(run), "--json"], env=env, capture_output=True, check=True
    )
    shutil.rmtree(run.parent / "forger-cache")
    con = duckdb.connect(str(run / ".arb-audit" / "run.duckdb"))
    try:
        con.execute(
            "UPDATE classifications SET result = replace(replace(result, 'SFT', 'GRPO'), 'sft', 'grpo')"
        )
        con.execute("DELETE FROM audits")
    finally:
        con.close()


def _route_is(label: str) -> Check:
    def check(report: dict[str, Any]) -> str | None:
        got = (report.get("route") or {}).get("best_label")
        return None if got == label else f"route {got!r}, not {label!r}: a planted verdict was believed"

    return check


add(
    "arb-planted-forged-classifications",
    "verdict",
    "autorl_bench",
    _arb_then(_forged_classifications),
    check=_route_is("SFT"),
)

# --- 9. Recordings --------------------------------------------------------------------------------------


def _recording_store(build: Callable[[Any], object]) -> Callable[[Path, Place], None]:
    def change(run: Path, _: Place) -> None:
        import duckdb

        con = duckdb.connect(str(run / "run.duckdb"))
        try:
            build(con)
        finally:
            con.close()

    return change


def _runs_without_extra(con: Any) -> None:
    columns = [
        c
        for (c,) in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE table_name = 'runs'"
        ).fetchall()
    ]
    keep = ", ".join(f'"{c}"' for c in columns if c != "extra")
    con.execute(f"CREATE TABLE runs2 AS SELECT {keep} FROM runs")
    con.execute("DROP TABLE runs")
    con.execute("ALTER TABLE runs2 RENAME TO runs")


def _second_run(con: Any) -> None:
    con.execute("INSERT INTO runs SELECT * REPLACE ('forged/' || run_id AS run_id) FROM runs")


def _submissions_view(con: Any) -> None:
    con.execute("ALTER TABLE submissions RENAME TO submissions_base")
    con.execute("CREATE VIEW submissions AS SELECT * FROM submissions_base")


add(
    "rec-store-without-a-column",
    "traceback",
    "recorded",
    _recording_then(_recording_store(_runs_without_extra)),
    names=("run.duckdb",),
)
add(
    "rec-store-with-two-runs",
    "traceback",
    "recorded",
    _recording_then(_recording_store(_second_run)),
    names=("run.duckdb",),
    exit_codes=(0, 2),
)
add(
    "rec-store-submissions-a-view",
    "traceback",
    "recorded",
    _recording_then(_recording_store(_submissions_view)),
)
add(
    "rec-store-not-duckdb",
    "traceback",
    "recorded",
    _recording_then(lambda run, _: (run / "run.duckdb").write_text("not a database")),
    names=("run.duckdb",),
    exit_codes=(0, 2),
)
for name, marker in {
    "not-json": "{{{",
    "a-list": "[1, 2]",
    "deep": deep_json(100_000),
    "nul-run-id": json.dumps({"run_id": "rec\x00orded:\x1b]0;x\x07", "workspace_relative": "../workspace"}),
    "workspace-root": json.dumps({"run_id": "recorded:x", "workspace_relative": "/"}),
    "workspace-far-up": json.dumps({"run_id": "recorded:x", "workspace_relative": "../" * 40}),
    "workspace-too-long": json.dumps({"run_id": "recorded:x", "workspace_relative": "../" + "w" * 300}),
    "workspace-wrong-type": json.dumps(
        {"run_id": 5, "workspace_relative": ["../workspace"], "task": {"a": 1}}
    ),
}.items():
    add(
        f"rec-marker-{name}",
        "traceback",
        "recorded",
        _recording_then(lambda run, _, marker=marker: (run / "recording.json").write_text(marker)),  # type: ignore[misc]
    )


def _recording_transcript(events: list[dict[str, Any] | str]) -> Writer:
    return _recording_then(lambda run, _: (run / "agent.log").write_text(jsonl(events)))


add(
    "rec-agent-log-escapes",
    "escape",
    "recorded",
    _recording_transcript(
        [
            claude_init(cwd="/workspace"),
            {"type": "assistant", "message": {"content": [{"type": "text", "text": f"done {OSC}"}]}},
            claude_call("b1", "Bash", command=f"echo '{OSC}'"),
            claude_result("b1", OSC),
            {"type": "result", "subtype": "success", "result": f"final {OSC}", "is_error": False},
        ]
    ),
)
add(
    "rec-ledger-anchor-garbage",
    "traceback",
    "recorded",
    _recording_then(lambda run, _: (run / "ledger.anchor").write_bytes(b"\xff\x00" * 1000 + b"\n" * 10)),
)
add(
    "rec-ledger-anchor-fifo",
    "hang",
    "recorded",
    _recording_then(lambda run, _: fifo(run / "ledger.anchor")),
)
add(
    "rec-revisions-symlink-loop",
    "hang",
    "recorded",
    _recording_then(lambda run, _: link(run / "run.revisions.git", "run.revisions.git")),
)
add(
    "rec-agent-log-fifo",
    "hang",
    "recorded",
    _recording_then(lambda run, _: fifo(run / "agent.log")),
    names=("agent.log",),
)
add(
    "rec-workspace-model-fifo",
    "hang",
    "recorded",
    _recording_then(lambda run, _: fifo(run.parent / "workspace" / "output" / "v1" / "model.safetensors")),
    names=("output/v1/model.safetensors",),
)


def _forged_manifests(run: Path, place: Place) -> None:
    """Three gradings of other artifacts, and a planted audit store whose manifests give them one weights.

    The recording's ledger gets two more scored gradings (each its own artifact id); the store planted at
    ``.arb-audit/run.duckdb`` keeps, for every graded artifact, a manifest listing the same tensors with a
    config changed: believed, the audit would flag the run as probing the grader with the same weights.
    """
    import dataclasses

    from arb_audit.store import RunStore

    with RunStore.open(run / "run.duckdb") as store:
        ((run_id,),) = store.con.execute("SELECT run_id FROM runs").fetchall()
        last = store.load_record(run_id).submissions[-1]
        for n in (1, 2):
            store.append_submission(run_id, dataclasses.replace(last, artifact_id=f"{n:x}" * 64))
        graded = [r[0] for r in store.con.execute("SELECT artifact_id FROM submissions").fetchall()]

    def plant(con: Any) -> None:
        for n, artifact_id in enumerate(graded):
            con.execute(
                "INSERT INTO artifact_files (artifact_id, path, size, digest)"
                " VALUES (?, 'config.json', 10, ?), (?, 'model.safetensors', 100, ?)",
                [artifact_id, f"{n:x}" * 64, artifact_id, "e" * 64],
            )
            con.execute(
                "INSERT INTO tensors (artifact_id, file_path, name, dtype, shape, content_hash)"
                " VALUES (?, 'model.safetensors', 'layer.0.weight', 'BF16', [4, 4], ?)",
                [artifact_id, "d" * 64],
            )

    _planted_store(plant)(run, place)


def _no_forged_weights(report: dict[str, Any]) -> str | None:
    said = [f["message"] for f in report.get("flags", []) if "same weights" in f.get("message", "")]
    return f"a planted manifest was believed: {said[0]}" if said else None


add(
    "rec-planted-forged-manifests",
    "verdict",
    "recorded",
    _recording_then(_forged_manifests),
    names=(".arb-audit/run.duckdb",),
    check=_no_forged_weights,
)

# --- 10. Transcripts: Claude Code, Codex, OpenCode, Gemini ------------------------------------------------


def _init_event() -> dict[str, Any]:
    first = trained_events()[0]
    assert isinstance(first, dict)
    return first


INIT = _init_event()
"""The init event a PostTrainBench Claude Code session starts with (``trained_events()``'s first)."""


def _claude(*middle: dict[str, Any] | str) -> list[dict[str, Any] | str]:
    base = trained_events()
    return [*base[:-1], *middle, base[-1]]


add(
    "claude-osc-in-agent-text",
    "escape",
    "claude_code",
    _ptb_events(
        _claude(
            {"type": "assistant", "message": {"content": [{"type": "text", "text": f"Training done {OSC}"}]}},
            claude_call("x1", "Bash", command=f"printf '{OSC}'"),
            claude_result("x1", f"{OSC}\n{OSC}"),
            {"type": "result", "subtype": "success", "is_error": False, "result": f"accuracy 0.99 {OSC}"},
        )
    ),
)
add(
    "claude-write-path-nul",
    "traceback",
    "claude_code",
    _ptb_events(
        _claude(
            claude_call("w9", "Write", file_path=f"{TASK_DIR}/tr\x00ain.py", content="x = 1\n"),
            claude_result("w9", "ok"),
            claude_call("e9", "Edit", file_path=f"{TASK_DIR}/\x00", old_string="a", new_string="b"),
            claude_result("e9", "ok"),
        )
    ),
)
add(
    "claude-write-path-too-long",
    "traceback",
    "claude_code",
    _ptb_events(
        _claude(
            claude_call("w9", "Write", file_path=f"{TASK_DIR}/{'x' * 300}/a.py", content="x = 1\n"),
            claude_result("w9", "ok"),
            claude_call("w10", "Write", file_path=f"{TASK_DIR}/" + "d/" * 3000 + "a.py", content="y = 2\n"),
            claude_result("w10", "ok"),
        )
    ),
)
add(
    "claude-write-path-traversal",
    "escape",
    "claude_code",
    _ptb_events(
        _claude(
            claude_call("w9", "Write", file_path="../../../../outside/pwned.py", content="x = 1\n"),
            claude_result("w9", "ok"),
            claude_call("w10", "Write", file_path=f"{TASK_DIR}/../../../../../tmp/pwned.py", content="y\n"),
            claude_result("w10", "ok"),
        )
    ),
)
add(
    "claude-lone-surrogates",
    "traceback",
    "claude_code",
    _ptb_lines(
        "\n".join(
            [
                json.dumps(INIT),
                '{"type":"assistant","message":{"content":[{"type":"text",'
                '"text":"\\ud800 \\udfff \\udc00"}]}}',
                '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"s1","name":"Write",'
                '"input":{"file_path":"/home/ben/task/\\ud800.py","content":"x = \'\\udfff\'"}}]}}',
                '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"s1",'
                '"content":"\\udc80\\udcff"}]}}',
            ]
        )
        + "\n"
    ),
)
add(
    "claude-deep-nesting-line",
    "traceback",
    "claude_code",
    _ptb_lines(
        lambda: json.dumps(INIT) + "\n" + '{"type": "assistant", "message": ' + deep_json(200_000) + "}\n"
    ),
)


def _json_in_json(depth: int) -> str:
    text = json.dumps(claude_result("b1", "x"))
    for _ in range(depth):
        text = json.dumps(text)
    return text


add(
    "claude-json-in-json-bomb",
    "memory",
    "claude_code",
    _ptb_lines(lambda: json.dumps(INIT) + "\n" + _json_in_json(16) + "\n"),
)
add(
    "claude-line-over-the-limit",
    "memory",
    "claude_code",
    _ptb_events(
        lambda: _claude(
            claude_call("w9", "Write", file_path=f"{TASK_DIR}/big.py", content="x = 1\n" * 4_000_000),
            claude_result("w9", "ok"),
        )
    ),
)
add(
    "claude-line-of-escapes",
    "memory",
    "claude_code",
    _ptb_events(
        lambda: _claude(
            # a 16 MB line that is almost all JSON escapes: every one is a piece to map back
            claude_call("w9", "Write", file_path=f"{TASK_DIR}/blank.py", content="\n" * 8_000_000),
            claude_result("w9", "ok"),
        )
    ),
)
add(
    "claude-times-out-of-range",
    "traceback",
    "claude_code",
    _ptb_lines(
        "[9999-12-31T23:59:59Z] "
        + json.dumps({**INIT, "timestamp": "0001-01-01T00:00:00-14:00"})
        + "\n[0000-01-01T00:00:00Z] "
        + json.dumps(
            {**claude_call("b1", "Bash", command="ls"), "timestamp": "9999-12-31T23:59:59.999999+14:00"}
        )
        + "\n"
        + json.dumps({**claude_result("b1", "ok"), "timestamp": 1e300})
        + "\n"
    ),
)
add(
    "claude-wrong-types",
    "traceback",
    "claude_code",
    _ptb_lines(
        "\n".join(
            json.dumps(e)
            for e in [
                INIT,
                {"type": "assistant", "message": [1, 2]},
                {"type": "assistant", "message": {"content": "text, not blocks"}},
                {
                    "type": "assistant",
                    "message": {"content": [{"type": "tool_use", "id": 5, "name": None, "input": "x"}]},
                },
                {
                    "type": "assistant",
                    "message": {
                        "content": [
                            {
                                "type": "tool_use",
                                "id": "e",
                                "name": "Edit",
                                "input": {"file_path": 5, "old_string": [1], "new_string": {}},
                            }
                        ]
                    },
                },
                {
                    "type": "user",
                    "message": {
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": ["e"],
                                "content": [{"type": "text", "text": 5}],
                            }
                        ]
                    },
                },
                {"type": "system", "subtype": "init", "cwd": 7, "session_id": {"a": 1}},
                {"type": "result", "total_cost_usd": "free", "num_turns": 10**30},
                [1, 2, 3],
                "a string event",
            ]
        )
        + "\n"
    ),
)
add(
    "claude-transcript-utf16",
    "traceback",
    "claude_code",
    _ptb_lines(jsonl(trained_events()).encode("utf-16")),
)
add(
    "claude-binary-noise",
    "traceback",
    "claude_code",
    _ptb_lines(lambda: random.Random(3).randbytes(2_000_000)),
)
add(
    "claude-100k-calls-without-results",
    "memory",
    "claude_code",
    _ptb_events(
        lambda: _claude(*(claude_call(f"c{i}", "Bash", command=f"echo {i}") for i in range(100_000)))
    ),
    huge=True,
)


def _edit_bomb(files: int) -> list[dict[str, Any] | str]:
    """Writes of tiny files each grown by one replace_all edit to the largest size a history keeps."""
    events: list[dict[str, Any] | str] = [INIT]
    grown = "y" * 4000
    for i in range(files):
        path = f"{TASK_DIR}/bomb/f{i}.py"
        events.append(claude_call(f"w{i}", "Write", file_path=path, content="x" * 1000))
        events.append(claude_result(f"w{i}", "ok"))
        events.append(
            claude_call(f"e{i}", "Edit", file_path=path, old_string="x", new_string=grown, replace_all=True)
        )
        events.append(claude_result(f"e{i}", "ok"))
    return events


add("claude-edit-expansion-bomb", "memory", "claude_code", _ptb_events(lambda: _edit_bomb(5000)), huge=True)

CODEX_WS = "/home/ben/task"
add(
    "codex-hostile-items",
    "traceback",
    "codex",
    _ptb_lines(
        jsonl(
            [
                codex_thread(),
                codex_command("c1", f"echo '{OSC}'", OSC, exit_code=2**70),
                codex_command("c2", "python train.py", "ok", exit_code=-(2**63)),
                {
                    "type": "item.completed",
                    "item": {"id": "c3", "type": "command_execution", "command": ["a"], "exit_code": "1"},
                },
                codex_file_change("f1", ("../../../../outside/pwned", "add"), ("/\x00", "update")),
                codex_command(
                    "c4",
                    "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ../../../outside/pwned2\n+x\n"
                    "*** End Patch\nEOF",
                    "",
                ),
                {"type": "turn.completed", "usage": {"input_tokens": 10**30, "output_tokens": "many"}},
                {"type": "item.completed", "item": "not an object"},
            ]
        )
    ),
)
add(
    "codex-legacy-hostile",
    "traceback",
    "codex_legacy",
    _ptb_lines(
        jsonl(
            [
                legacy("0", "session_configured", model="gpt-5", session_id=[1]),
                legacy("1", "exec_command_begin", call_id=5, command="ls", cwd=7),
                legacy("2", "exec_command_end", call_id=5, exit_code=10**40, stdout=OSC),
                legacy("3", "patch_apply_begin", call_id="p", changes={"/\x00": {"add": {"content": 5}}}),
                legacy("4", "agent_message", message=OSC),
            ]
        )
    ),
)


def _opencode(kind: str, ms: Any, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": ms, "sessionID": "ses_x", **fields})


def _opencode_tool(ms: Any, call_id: Any, tool: str, inputs: Any, **state: Any) -> str:
    part = {"id": "prt", "sessionID": "ses_x", "type": "tool", "tool": tool, "callID": call_id,
            "state": {"status": "completed", "input": inputs, "output": "", **state}}  # fmt: skip
    return _opencode("tool_use", ms, part=part)


add(
    "opencode-hostile-events",
    "traceback",
    "opencode",
    _ptb_lines(
        "\n".join(
            [
                _opencode("step_start", 1775808000000, part={"type": "step-start"}),
                _opencode("text", 10**20, part={"type": "text", "text": OSC}),
                _opencode_tool(-(10**20), "t1", "write", {"filePath": f"{TASK_DIR}/\x00.py", "content": 5}),
                _opencode_tool(
                    1e308, "t2", "bash", {"command": ["ls"]}, metadata={"exit": 2**70}, output=OSC
                ),
                _opencode_tool("soon", None, "edit", "not an object", time={"start": "a", "end": 10**30}),
                _opencode(
                    "step_finish", 1775808000001, part={"type": "step-finish", "cost": "free", "tokens": [1]}
                ),
            ]
        )
        + "\n"
    ),
)


def _gemini(kind: str, stamp: Any, **fields: Any) -> str:
    return json.dumps({"type": kind, "timestamp": stamp, **fields})


add(
    "gemini-hostile-events",
    "traceback",
    "gemini",
    _ptb_lines(
        "\n".join(
            [
                _gemini("init", "2026-04-10T08:00:00.250Z", session_id="g", model="gemini-2.5-pro"),
                _gemini("message", "9999-12-31T23:59:59.999Z", role="assistant", content=OSC, delta=True),
                _gemini(
                    "tool_use",
                    "0000-01-01T00:00:00Z",
                    tool_name="write_file",
                    tool_id="w",
                    parameters={"file_path": f"{TASK_DIR}/\x00", "content": [1]},
                ),
                _gemini("tool_result", 10**30, tool_id="w", status="success", output=OSC),
                _gemini("tool_use", None, tool_name=5, tool_id={"a": 1}, parameters="ls"),
                _gemini("tool_result", "2026-04-10T08:00:05Z", tool_id=None, status=["error"], error=5),
                _gemini("result", "2026-04-10T08:00:06Z", status="success", stats={"total_tokens": "x"}),
            ]
        )
        + "\n"
    ),
)
add(
    "arb-agent-jsonl-hostile",
    "traceback",
    "autorl_bench",
    _arb_with(
        {
            "agent.jsonl": jsonl(
                [
                    codex_thread(),
                    codex_command(
                        "c1", "cat > code/train.py <<'EOF'\n" + "x = 1\n" * 10 + "EOF", "", exit_code=0
                    ),
                    codex_command("c2", f"cd /\x00 && echo '{OSC}'", OSC),
                    codex_command("c3", "cat > ../../../../../outside/pwned <<'EOF'\nx\nEOF", ""),
                ]
            )
        }
    ),
)
add(
    "arb-agent-log-hostile",
    "traceback",
    "autorl_bench",
    _arb_with(
        {
            "agent.log": "=== Codex CLI Agent ===\nTask: gsm8k"
            + OSC
            + "\nWorkspace: /\x00/"
            + "x" * 5000
            + "\n"
            "--- DIAGNOSTICS ---\nexit_code: "
            + "9"
            * 5000
            + "\nelapsed: 99999:99:99\n--- END DIAGNOSTICS ---\n"
            "Codex CLI exited with code: -99999999999999999999\n"
        }
    ),
)

# --- 11. Secrets, in every escaping, wherever agents put them ---------------------------------------------


def _secret_events(call: Callable[[str, str], list[dict[str, Any]]]) -> list[dict[str, Any] | str]:
    out: list[dict[str, Any] | str] = []
    for i, (name, (_, written)) in enumerate(SECRETS.items()):
        for enc, encode in ENCODINGS.items():
            out.extend(call(f"k{i}{enc}", f"{name}: {encode(written)}"))
    return out


add(
    "claude-secrets-in-tool-results",
    "leak",
    "claude_code",
    _ptb_events(
        _claude(
            *_secret_events(
                lambda cid, text: [claude_call(cid, "Bash", command="cat creds"), claude_result(cid, text)]
            )
        )
    ),
    secrets=SECRET_VALUES,
)
add(
    "claude-secrets-in-commands",
    "leak",
    "claude_code",
    _ptb_events(
        _claude(
            *_secret_events(
                lambda cid, text: [claude_call(cid, "Bash", command=text), claude_result(cid, "ok")]
            )
        )
    ),
    secrets=SECRET_VALUES,
)
add(
    "claude-secrets-in-writes-and-text",
    "leak",
    "claude_code",
    _ptb_events(
        _claude(
            claude_call("w9", "Write", file_path=f"{TASK_DIR}/keys.py", content=ALL_WRITTEN),
            claude_result("w9", "ok"),
            {"type": "assistant", "message": {"content": [{"type": "text", "text": ALL_WRITTEN}]}},
            {"type": "result", "subtype": "success", "is_error": False, "result": ALL_WRITTEN},
        )
    ),
    secrets=SECRET_VALUES,
)
add(
    "codex-secrets",
    "leak",
    "codex",
    _ptb_lines(
        jsonl(
            [
                codex_thread(),
                *(
                    codex_command(f"c{i}", f"echo {json.dumps(w)}", w)
                    for i, (_, w) in enumerate(SECRETS.values())
                ),
                codex_command("cat", f"cat > {CODEX_WS}/keys.py <<'EOF'\n{ALL_WRITTEN}\nEOF", ""),
            ]
        )
    ),
    secrets=SECRET_VALUES,
)
add(
    "opencode-secrets",
    "leak",
    "opencode",
    _ptb_lines(
        "\n".join(
            [_opencode("step_start", 1775808000000, part={"type": "step-start"})]
            + [
                _opencode_tool(
                    1775808000000 + i, f"t{i}", "bash", {"command": f"echo {json.dumps(w)}"}, output=w
                )
                for i, (_, w) in enumerate(SECRETS.values())
            ]
        )
        + "\n"
    ),
    secrets=SECRET_VALUES,
)
add(
    "gemini-secrets",
    "leak",
    "gemini",
    _ptb_lines(
        "\n".join(
            [_gemini("init", "2026-04-10T08:00:00.250Z", session_id="g", model="gemini-2.5-pro")]
            + [
                line
                for i, (_, w) in enumerate(SECRETS.values())
                for line in (
                    _gemini(
                        "tool_use",
                        "2026-04-10T08:00:01Z",
                        tool_name="run_shell_command",
                        tool_id=f"s{i}",
                        parameters={"command": f"echo {json.dumps(w)}"},
                    ),
                    _gemini(
                        "tool_result", "2026-04-10T08:00:02Z", tool_id=f"s{i}", status="success", output=w
                    ),
                )
            ]
        )
        + "\n"
    ),
    secrets=SECRET_VALUES,
)


def _arb_secrets(run: Path, _: Place) -> None:
    body = ALL_WRITTEN + "\n"
    _files_of(
        run,
        {
            ".env": "".join(f"SECRET_{i}={v}\n" for i, (v, _) in enumerate(SECRETS.values())),
            "code/keys.py": "".join(f"# {w}\n" for _, w in SECRETS.values()),
            "code/launch.sh": "".join(
                f"export SECRET_{i}_KEY='{v}'\n" for i, (v, _) in enumerate(SECRETS.values())
            )
            + "python train.py\n",
            "logs/train.log": body,
            "agent.log": (run / "agent.log").read_text() + body,
            "summary.md": "# Run Summary\n\n## Attempt 1 (2026-03-10 10:30)\n- **Status**: ✅\n"
            "- **Issues/Progress**: "
            + " ".join(w for name, (_, w) in SECRETS.items() if name != "private-key")  # one line
            + f"\n\n```\n{ALL_WRITTEN}\n```\n",
        },
    )
    key = SECRETS["huggingface"][0]
    train = (run / "code" / "train.py").read_text()
    (run / "code" / "train.py").write_text(
        train.replace(
            'SFTTrainer(model="models/Qwen/Qwen2.5-1.5B"',
            f'SFTTrainer(model="models/Qwen/Qwen2.5-1.5B", hub_token="{key}"',
        )
    )
    edit_json(
        run / "scores.json", lambda s: s[1].update(error=ALL_WRITTEN, model_path=f"output/v2?token={key}")
    )
    log = (run / "run.log").read_text()
    (run / "run.log").write_text(log + f"2026-03-10 11:00:00 | INFO | token {SECRETS['openai-project'][0]}\n")


add("arb-secrets-everywhere", "leak", "autorl_bench", _arb_then(_arb_secrets), secrets=SECRET_VALUES)
add(
    "arb-secrets-in-transcript",
    "leak",
    "autorl_bench",
    _arb_with(
        {
            "agent.jsonl": jsonl(
                [
                    claude_init(cwd=ARB_WORKSPACE),
                    *_secret_events(
                        lambda cid, text: [claude_call(cid, "Bash", command="env"), claude_result(cid, text)]
                    ),
                    claude_end(),
                ]
            )
        },
        scenario="attempts_en",
    ),
    secrets=SECRET_VALUES,
)
add(
    "ptb-secrets-in-task-and-logs",
    "leak",
    "posttrainbench",
    _ptb_then(
        lambda run, _: _files_of(
            run,
            {
                "task/.env": "".join(f"K{i}={v}\n" for i, (v, _) in enumerate(SECRETS.values())),
                "task/train_sft.py": "".join(f"# {w}\n" for _, w in SECRETS.values()) + TRAIN_SFT,
                "error.log": ALL_WRITTEN,
                "final_eval_1.txt": ALL_WRITTEN,
                "output.log": real_output_log(0, "exited normally") + ALL_WRITTEN,
            },
        )
    ),
    secrets=SECRET_VALUES,
)
add(
    "rec-secrets-in-agent-log",
    "leak",
    "recorded",
    _recording_transcript(
        [
            claude_init(cwd="/workspace"),
            *_secret_events(
                lambda cid, text: [claude_call(cid, "Bash", command=text), claude_result(cid, text)]
            ),
            claude_end(),
        ]
    ),
    secrets=SECRET_VALUES,
)

# --- 12. Terminal escapes wherever agent text is shown -----------------------------------------------------

add(
    "arb-escapes-in-harness-files",
    "escape",
    "autorl_bench",
    _arb_then(
        lambda run, _: edit_json(
            run / "scores.json", lambda s: s[1].update(error=OSC, model_path=f"v2{OSC}")
        ),
        _replace_in("run.log", "Task: gsm8k", f"Task: gsm8k{OSC}"),
        lambda run, _: _files_of(
            run,
            {
                "summary.md": "# Run Summary\n\n## Attempt 1 (2026-03-10 10:30)\n"
                f"- **Status**: {OSC}\n- **Training Type**: {OSC}\n"
            },
        ),
    ),
)
add(
    "ptb-escapes-in-run-files",
    "escape",
    "posttrainbench",
    _ptb_then(
        lambda run, _: _files_of(
            run,
            {
                "final_eval_1.txt": f"gsm8k: final_model {OSC}\n",
                "error.log": OSC,
                "time_taken.txt": OSC,
                "judgement_gpt5_4.json": json.dumps(
                    {"contamination": True, "justification_contamination": OSC}
                ),
                "task/SUMMARY.md": f"# Summary\nAccuracy: 0.99 {OSC}\n",
            },
        )
    ),
)

# --- 13. Large and huge inputs (the huge ones: the benchmark and the slow lane only) -------------------


def _wide(run: Path, _: Place) -> None:
    for i in range(20_000):
        (run / "code" / f"m{i:05d}.py").write_text(f"X = {i}\n")


add("arb-code-20k-files", "memory", "autorl_bench", _arb_then(_wide))


def _sparse(path: Path, size: int, head: bytes = b"") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.write(head)
        handle.truncate(size)


def _sparse_model(run: Path, _: Place) -> None:
    body = 5 * GiB
    header = {"w": {"dtype": "F32", "shape": [body // 4], "data_offsets": [0, body]}}
    raw = safetensors_bytes(header)
    _sparse(run / "output" / "v3" / "model.safetensors", len(raw) + body, raw)
    _sparse(run / "output" / "v3" / "optimizer.pt", 5 * GiB)
    _sparse(run / "data" / "shard.bin", 5 * GiB)


add(
    "arb-sparse-5gb-files",
    "memory",
    "autorl_bench",
    _arb_then(_sparse_model),
    huge=True,
    args=("--hash-artifacts",),
)


def _big_runlog(run: Path, _: Place) -> None:
    noise = b"2026-03-10 10:30:00 | DEBUG | [17/200] Predicted: x | Gold: x | Correct=True\n" * 1000
    with (run / "run.log").open("ab") as handle:
        for _piece in range(200 * 1024 * 1024 // len(noise)):
            handle.write(noise)


add("arb-runlog-200mb", "memory", "autorl_bench", _arb_then(_big_runlog), huge=True)


def _transcript_lines(total: int) -> Iterator[bytes]:
    """Lines of one long Claude Code session, generated as written (never held whole)."""
    yield (json.dumps(INIT) + "\n").encode()
    i, written = 0, 0
    output = "x" * 2000
    while written < total:
        call = claude_call(f"c{i}", "Bash", command=f"python train.py --step {i}")
        result = claude_result(f"c{i}", f"step {i}: {output}")
        chunk = (json.dumps(call) + "\n" + json.dumps(result) + "\n").encode()
        written += len(chunk)
        i += 1
        yield chunk


def _huge_transcript(place: Place) -> Path:
    run = ptb_run(place)
    with (run / "solve_out.txt").open("wb") as handle:
        for chunk in _transcript_lines(2 * GiB):
            handle.write(chunk)
    return run


add("ptb-transcript-2gb", "memory", "claude_code", _huge_transcript, huge=True)


def _many_big_files(place: Place) -> Path:
    root = classify_input(place, {})
    body = "from trl import SFTTrainer\nSFTTrainer(model='m').train()\n"
    line = "value = " + repr("a" * 100) + "\n"
    filler = line * (2 * 1024 * 1024 // len(line))
    for i in range(300):
        (root / f"m{i:03d}.py").write_text(body + filler)
    return root


add("classify-many-2mb-files", "memory", "classify", _many_big_files, command="classify", huge=True)


def _many_scores(count: int) -> Change:
    def change(run: Path, _: Place) -> None:
        entry = json.loads((run / "scores.json").read_text())[0]
        (run / "scores.json").write_text(json.dumps([{**entry, "submission_id": i} for i in range(count)]))

    return change


add(
    "arb-scores-60k-entries",
    "memory",
    "autorl_bench",
    _arb_then(_many_scores(60_000)),
    names=("scores.json",),
)
add(
    "arb-scores-300k-entries",
    "memory",
    "autorl_bench",
    _arb_then(_many_scores(300_000)),
    names=("scores.json",),
    huge=True,
)


def _submit_flood(run: Path, _: Place) -> None:
    """200,000 duplicate submissions answered from the grader's cache, and 50,000 evaluated ones."""
    with (run / "run.log").open("a") as handle:
        for n in range(200_000):
            handle.write(
                f"2026-03-10 10:30:00 | INFO | [SUBMIT] Cache hit for output/v{n % 3 + 1}, score=60.1\n"
            )
        for n in range(4, 50_004):
            handle.write(
                f"2026-03-10 10:40:00 | INFO | [SUBMIT #{n}] Started | model_path=output/v1 | gpu=None\n"
            )
            handle.write(f"2026-03-10 10:41:00 | INFO | [SUBMIT #{n}] Done | score=61.0, best=68.9\n")


add(
    "arb-runlog-submit-flood",
    "memory",
    "autorl_bench",
    _arb_then(_submit_flood),
    names=("run.log",),
    huge=True,
)
