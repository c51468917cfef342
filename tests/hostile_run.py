"""Run one case of the hostile corpus as a user runs it, under limits, and judge what it did.

A case (``tests.hostile_corpus``) writes a run folder into a sandbox of its own::

    root/runs/...   the run folder (or the folder given to ``classify``)
    root/outside/   files the run folder links to; no command may change them
    root/cache/     XDG_CACHE_HOME, the only place outside the run folder a command may write
    root/home/      HOME;  root/tmp/  TMPDIR (scratch space, not judged)

The command runs in a subprocess of its own session (``arb-audit RUN --json``, then the readable
``arb-audit RUN``; ``classify --json`` and ``classify -v`` for a classify case) under a wall-clock
limit and a memory limit, and is judged on five counts: a traceback in its stderr; a hang (past the
limit, or processes of its session left running after it exited); a leak (a secret the case planted
found in stdout, stderr or a store the command wrote); an escape (a file outside the run folder other
than the cache written or changed, a file of the run folder other than its ``.arb-audit/`` changed,
or a raw control character or escape sequence in what reaches the terminal); a file the case
expected to be named that no problem names.

Peak memory is the highest sum of ``Pss_Anon`` (anonymous resident memory: the heap, not the page
cache or mapped files; each page shared by N processes counted 1/N in each) over every process of the
command's session, sampled every :data:`SAMPLE_S` seconds from ``/proc/PID/smaps_rollup`` (``RssAnon``
from ``/proc/PID/status`` where that file is missing); a command over the memory limit is killed there.
The audit's workers are forked: each one's ``RssAnon`` counts every page of the parent's heap it still
shares, so a sum of ``RssAnon`` counted the same memory up to four times (arb-runlog-submit-flood:
1,036 MB of ``RssAnon``, some 600 MB in fact).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_S = 0.1
"""How often the memory of a command's processes is sampled."""
FILE_PRIVILEGES = (1, 2)
"""CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: what lets root read a file whose mode forbids it."""
PR_CAPBSET_DROP = 24
RAW_CONTROL = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)
"""What must never reach a terminal raw: C0 and C1 controls (ESC, CSI, OSC, BEL, ...) but the tab and the
line feed, bidirectional controls, line and paragraph separators. Written here, not imported from
arb_audit.inert: the check must not share a mistake with what it checks."""


@dataclass(frozen=True)
class Place:
    """Where a case writes: its run folders go under ``runs``; what they link to, under ``outside``."""

    runs: Path
    outside: Path


Writer = Callable[[Place], Path]
"""A case's fixture: write the run folder (or classify input) under ``place.runs`` and return its path."""
Check = Callable[[dict[str, Any]], str | None]
"""An extra check of a case's ``--json`` report: None when it holds, else what is wrong."""


@dataclass(frozen=True)
class Case:
    """One hostile input and what it probes."""

    name: str
    probes: str
    """The kind of defect it looks for (traceback, hang, memory, leak, escape, verdict)."""
    collector: str
    """Whose reader it aims at: autorl_bench, posttrainbench, recorded, a transcript format, classify."""
    write: Writer
    names: tuple[str, ...] = ()
    """Paths (relative to the audited folder) that some problem must name."""
    secrets: tuple[str, ...] = ()
    """Values that must appear nowhere the command writes."""
    command: str = "audit"
    """``audit`` (``arb-audit PATH``) or ``classify`` (``arb-audit classify PATH``)."""
    args: tuple[str, ...] = ()
    """More options for the command (``--hash-artifacts``: the models are read too)."""
    huge: bool = False
    """Takes minutes or gigabytes: run by the benchmark, never in the fast lane."""
    xfail: str | None = None
    """Why the case still fails, where the fix belongs to code this corpus does not change."""
    unprivileged: bool = False
    """Needs a file its reader cannot open: run without root's file privileges when the tests are root."""
    check: Check | None = None
    exit_codes: tuple[int, ...] = (0,)
    """Exit statuses that are an answer (2: "not a run folder", said in one line)."""


@dataclass
class Outcome:
    """What one case did, judged."""

    case: str
    seconds: float = 0.0
    peak_mb: float = 0.0
    traceback: list[str] = field(default_factory=list)
    hang: list[str] = field(default_factory=list)
    leak: list[str] = field(default_factory=list)
    escape: list[str] = field(default_factory=list)
    unnamed: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    """Other failures: an unexpected exit status, output that is not JSON, a failed extra check, memory."""

    def failures(self) -> list[str]:
        """Every failure, each prefixed by its kind."""
        kinds = {
            "traceback": self.traceback,
            "hang": self.hang,
            "leak": self.leak,
            "escape": self.escape,
            "unnamed": self.unnamed,
            "wrong": self.wrong,
        }
        return [f"{kind}: {what}" for kind, items in kinds.items() for what in items]


@dataclass
class Ran:
    """One command's run."""

    rc: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    peak_mb: float
    timed_out: bool
    over_memory: bool
    stragglers: int
    """Processes of its session still running after it exited (killed then)."""


def _session_pids(sid: int) -> list[int]:
    """Every process whose session is ``sid``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                text = handle.read()
        except OSError:
            continue
        # fields after the command name, which is in parentheses and may hold anything
        fields = text[text.rindex(b")") + 2 :].split()
        if int(fields[3]) == sid and fields[0] != b"Z":  # a zombie holds no memory and runs nothing
            found.append(int(entry.name))
    return found


def _anon_kb(pid: int) -> int:
    """Return the anonymous memory ``pid`` holds (KiB): its share of each page (Pss_Anon), else RssAnon."""
    for name, key in ((f"/proc/{pid}/smaps_rollup", b"Pss_Anon:"), (f"/proc/{pid}/status", b"RssAnon:")):
        try:
            with open(name, "rb") as handle:
                for line in handle:
                    if line.startswith(key):
                        return int(line.split()[1])
        except (OSError, ValueError):
            continue
    return 0


def _without_file_privileges() -> None:
    """Drop root's power to read any file (in the child, before it runs the command)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in FILE_PRIVILEGES:
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def run_limited(
    argv: list[str], env: dict[str, str], *, timeout_s: float, memory_mb: float, unprivileged: bool = False
) -> Ran:
    """Run ``argv`` in a session of its own, killed past ``timeout_s`` or ``memory_mb`` (:func:`_anon_kb`)."""
    started = time.monotonic()
    child = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=env["HOME"],
        start_new_session=True,
        # dropped from the bounding set, the capabilities are gone once the child executes the command
        preexec_fn=_without_file_privileges if unprivileged and os.geteuid() == 0 else None,
    )
    peak_kb = 0
    over_memory = False
    done = threading.Event()

    def watch() -> None:
        nonlocal peak_kb, over_memory
        while not done.wait(SAMPLE_S):
            total = sum(_anon_kb(pid) for pid in _session_pids(child.pid))
            peak_kb = max(peak_kb, total)
            if total > memory_mb * 1024:
                over_memory = True
                _kill_session(child.pid)
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    timed_out = False
    try:
        stdout, stderr = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_session(child.pid)
        stdout, stderr = child.communicate()
    seconds = time.monotonic() - started
    done.set()
    watcher.join()
    stragglers = [] if timed_out or over_memory else _lingering(child.pid)
    _kill_session(child.pid)
    return Ran(
        child.returncode, stdout, stderr, seconds, peak_kb / 1024, timed_out, over_memory, len(stragglers)
    )


def _lingering(sid: int, grace_s: float = 2.0) -> list[int]:
    """The processes of session ``sid`` still running ``grace_s`` after its leader exited."""
    deadline = time.monotonic() + grace_s
    while (left := _session_pids(sid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_session(sid: int) -> None:
    for pid in _session_pids(sid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


Listing = dict[bytes, tuple[int, int, int]]


def listing(top: Path, skip: Iterable[Path] = ()) -> Listing:
    """Every entry under ``top`` (links not followed, names as bytes): its mode, size and modification time.

    Walked with directory descriptors, so paths longer than the system's limit are listed too.
    """
    skipped = {os.fsencode(p) for p in skip}
    found: Listing = {}
    root = os.fsencode(top)
    for folder, dirs, files, fd in os.fwalk(root, follow_symlinks=False):
        if folder in skipped:
            dirs.clear()
            continue
        dirs[:] = [d for d in dirs if os.path.join(folder, d) not in skipped]
        for name in [*dirs, *files]:
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
            changed = 0 if stat.S_ISDIR(info.st_mode) else info.st_mtime_ns  # a folder's time: its entries
            found[os.path.join(folder, name)[len(root) + 1 :]] = (info.st_mode, info.st_size, changed)
    return found


def _changes(before: Listing, after: Listing) -> list[str]:
    out = []
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) != after.get(path):
            what = "added" if path not in before else "removed" if path not in after else "changed"
            out.append(f"{os.fsdecode(path)!r} {what}")
    return out


def sandbox_env(root: Path) -> dict[str, str]:
    """The environment a case's command runs in: its own cache, home and scratch, no colour, wide lines."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "VIRTUAL_ENV") or key.startswith("ARB_AUDIT_")
    }
    env.update(
        PYTHONPATH=str(ROOT),
        XDG_CACHE_HOME=str(root / "cache"),
        HOME=str(root / "home"),
        TMPDIR=str(root / "tmp"),
        NO_COLOR="1",
        TERM="dumb",
        COLUMNS="200",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("ARB_AUDIT_DEBUG", None)
    return env


def make_place(root: Path) -> Place:
    """Create the sandbox's folders under ``root``."""
    for sub in ("runs", "outside", "cache", "home", "tmp"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "outside" / "victim.txt").write_text("a file outside every run folder\n")
    return Place(root / "runs", root / "outside")


def _commands(case: Case, target: Path) -> tuple[list[str], list[str]]:
    exe = [sys.executable, "-m", "arb_audit"]
    if case.command == "classify":
        exe = [*exe, "classify"]
        return [*exe, str(target), "--json", *case.args], [*exe, str(target), "-v", *case.args]
    return [*exe, str(target), "--json", *case.args], [*exe, str(target), *case.args]


def _stores(root: Path, target: Path) -> list[Path]:
    """The DuckDB files a command may have written: the per-user cache's and the run folder's own."""
    where = [root / "cache", target / ".arb-audit"]
    found: list[Path] = []
    for top in where:
        if top.is_dir() and not top.is_symlink():
            found.extend(p for p in top.rglob("*.duckdb") if p.is_file() and not p.is_symlink())
    return found


def store_text(path: Path) -> str:
    """Every base table's rows of a store, as text, and its raw bytes (secrets are looked for in both)."""
    import duckdb

    parts = [path.read_bytes().decode("latin-1")]
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        return parts[0] + f"\n(not opened: {exc})"
    try:
        tables = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE NOT temporary"
        ).fetchall()
        for schema, table in tables:
            rows = con.execute(f'SELECT * FROM "{schema}"."{table}" LIMIT 200000').fetchall()
            parts.append(repr(rows))
    finally:
        con.close()
    return "\n".join(parts)


def _leaks(secrets: Iterable[str], texts: dict[str, str]) -> list[str]:
    from tests.arb_audit.test_redaction import leaks

    return [
        f"{secret[:12]}... in {where} ({', '.join(forms)})"
        for secret in secrets
        for where, text in texts.items()
        if (forms := leaks(text, secret))
    ]


def _raw_controls(where: str, text: str) -> list[str]:
    found = RAW_CONTROL.search(text)
    if found is None:
        return []
    start = max(0, found.start() - 30)
    return [f"raw {found.group()!r} in {where}: {text[start : found.end() + 30]!r}"]


def _named(case: Case, report: dict[str, Any] | None, said: str) -> list[str]:
    """The expected names no problem (or, for classify, no output line) names."""
    if not case.names:
        return []
    if case.command == "audit" and report is not None:
        problems = report.get("problems") or []
        said = "\n".join(f"{p.get('path')}: {p.get('message')}" for p in problems if isinstance(p, dict))
    return [name for name in case.names if name not in said]


def run_case(
    case: Case, root: Path, *, timeout_s: float = 120.0, memory_mb: float = 3072.0, readable: bool = True
) -> Outcome:
    """Write ``case`` under ``root``, run its commands, and judge them."""
    place = make_place(root)
    outcome = Outcome(case.name)
    try:
        target = case.write(place)
    except Exception as exc:  # the tree under test cannot even write its fixture (an import broke)
        outcome.wrong.append(f"the case could not be written: {type(exc).__name__}: {exc}"[:300])
        return outcome
    env = sandbox_env(root)
    run_store = target / ".arb-audit"
    skip = [root / "cache", root / "tmp", run_store]
    before = listing(root, skip)
    as_json, as_text = _commands(case, target)
    first = run_limited(
        as_json, env, timeout_s=timeout_s, memory_mb=memory_mb, unprivileged=case.unprivileged
    )
    runs = [("--json", first)]
    if readable and not first.timed_out and not first.over_memory:
        runs.append(
            (
                "readable",
                run_limited(
                    as_text, env, timeout_s=timeout_s, memory_mb=memory_mb, unprivileged=case.unprivileged
                ),
            )
        )
    outcome.seconds = first.seconds
    outcome.peak_mb = max(r.peak_mb for _, r in runs)
    texts: dict[str, str] = {}
    for label, ran in runs:
        out = ran.stdout.decode("utf-8", errors="replace")
        err = ran.stderr.decode("utf-8", errors="replace")
        texts[f"{label} stdout"], texts[f"{label} stderr"] = out, err
        if "Traceback" in err:
            outcome.traceback.append(f"{label}: " + err.strip().splitlines()[-1][:300])
        if ran.timed_out:
            outcome.hang.append(f"{label}: still running after {timeout_s:g}s")
        if ran.stragglers:
            outcome.hang.append(f"{label}: {ran.stragglers} process(es) left running after it exited")
        if ran.over_memory:
            outcome.wrong.append(f"{label}: killed over {memory_mb:g} MB of anonymous memory")
        elif not ran.timed_out and ran.rc not in case.exit_codes:
            outcome.wrong.append(f"{label}: exit status {ran.rc}: {err.strip()[-300:]}")
        for stream, text in ((f"{label} stdout", out), (f"{label} stderr", err)):
            outcome.escape.extend(_raw_controls(stream, text))
        if ran.stdout and b"\xef\xbf\xbd" not in ran.stdout:
            try:
                ran.stdout.decode("utf-8")
            except UnicodeDecodeError as exc:
                outcome.wrong.append(f"{label}: stdout is not UTF-8 ({exc})")
    report = _report(case, first, outcome)
    if report is not None and case.check is not None and (said := case.check(report)):
        outcome.wrong.append(said)
    outcome.unnamed = _named(case, report, texts["--json stdout"] + texts["--json stderr"])
    outcome.escape.extend(f"outside the run folder: {c}" for c in _changes(before, listing(root, skip)))
    if case.secrets:
        stores = {f"store {p.relative_to(root)}": store_text(p) for p in _stores(root, target)}
        outcome.leak = _leaks(case.secrets, {**texts, **stores})
    return outcome


def _report(case: Case, ran: Ran, outcome: Outcome) -> dict[str, Any] | None:
    """The ``--json`` report of an audit that answered, else None (a wrong one is noted)."""
    if case.command != "audit" or ran.rc != 0 or ran.timed_out:
        return None
    try:
        report = json.loads(ran.stdout)
    except ValueError as exc:
        outcome.wrong.append(f"--json stdout is not JSON: {exc}")
        return None
    if not isinstance(report, dict):
        outcome.wrong.append("--json stdout is not a JSON object")
        return None
    return report
