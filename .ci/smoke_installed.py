"""Every command of an installed arb-audit, run as a user runs it: from its own bin/, venv not activated.

    python3 .ci/smoke_installed.py VENV

Runs with the standard library only (any python3). Each command runs from a scratch folder outside the
checkout (so nothing is imported from the sources), with PATH cut down to the system's and no
VIRTUAL_ENV: what works here works from pipx, ``uv tool`` or a venv nobody activated. The bundled
reference recordings are copied first, so the checkout is left as it was.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "fixtures" / "reference"
SCENARIOS = ("sft_grpo", "sft_only", "copy_base")


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    env["HOME"] = str(home)  # a fresh per-user cache: nothing kept from the developer's audits
    env.pop("XDG_CACHE_HOME", None)
    env["TERM"] = "xterm-256color"
    return env


def run(tool: Path, *args: str, cwd: Path, env: dict[str, str], expect: int = 0) -> str:
    """Run ``arb-audit ARGS`` and return its stdout; stop the smoke test if its exit status differs."""
    started = time.monotonic()
    done = subprocess.run(
        [str(tool), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )
    took = time.monotonic() - started
    shown = " ".join(args)
    if done.returncode != expect:
        sys.exit(
            f"smoke: arb-audit {shown}: exit {done.returncode}, expected {expect}\n"
            f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
        )
    print(f"ok   {took:6.1f}s  arb-audit {shown}", flush=True)
    return done.stdout


def review_in_a_terminal(tool: Path, study: Path, cwd: Path, env: dict[str, str]) -> None:
    """Open the desk in a pseudo-terminal, agree with one run's route from the keyboard, quit."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the desk, as a person starts it
        os.chdir(cwd)
        os.execve(str(tool), [str(tool), "review", str(study), "--reviewer", "smoke"], env)
    screen = b""

    def read_until(marker: bytes, limit_s: float) -> None:
        nonlocal screen
        deadline = time.monotonic() + limit_s
        while marker not in screen:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                tail = screen[-2000:].decode(errors="replace")
                sys.exit(f"smoke: arb-audit review: {marker!r} not shown in {limit_s:.0f} s\n{tail}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                try:
                    screen += os.read(fd, 65536)
                except OSError:  # the child exited
                    break

    started = time.monotonic()
    read_until(b"runs", 60)
    for key, wait in ((b"\r", 1.0), (b"v", 1.0), (b"a", 1.0), (b"\x1b", 1.0), (b"\x1b", 1.0), (b"q", 0)):
        os.write(fd, key)
        time.sleep(wait)
    deadline = time.monotonic() + 30
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            sys.exit("smoke: arb-audit review did not quit on q")
        try:
            if select.select([fd], [], [], 0.2)[0]:
                screen += os.read(fd, 65536)
        except OSError:
            time.sleep(0.2)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"smoke: arb-audit review exited {code}\n{screen[-3000:].decode(errors='replace')}")
    print(f"ok   {time.monotonic() - started:6.1f}s  arb-audit review (in a terminal: enter v a esc esc q)")


def main() -> int:
    """Run every command; exit non-zero at the first that fails."""
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    venv = Path(sys.argv[1]).resolve()
    tool = venv / "bin" / "arb-audit"
    scratch = Path(tempfile.mkdtemp(prefix="arb-audit-smoke-"))
    try:
        env = _env(scratch / "home")
        runs = scratch / "runs"
        for name in SCENARIOS:
            shutil.copytree(REFERENCE / name, runs / name, ignore=shutil.ignore_patterns(".arb-audit"))
        shutil.copytree(REFERENCE / "base", runs / "base", ignore=shutil.ignore_patterns(".arb-audit"))
        run(tool, "--help", cwd=scratch, env=env)
        run(tool, "demo", "--list", cwd=scratch, env=env)
        text = run(tool, str(runs / "sft_grpo" / "recording"), cwd=scratch, env=env)
        assert "SFT→GRPO" in text, text[-2000:]
        report = json.loads(run(tool, str(runs / "sft_grpo" / "recording"), "--json", cwd=scratch, env=env))
        page = scratch / "audit.html"
        run(tool, str(runs / "sft_grpo" / "recording"), "--html", str(page), cwd=scratch, env=env)
        assert "<script" not in page.read_text(encoding="utf-8") and "SFT→GRPO" in page.read_text(
            encoding="utf-8"
        )
        run(tool, "schema", cwd=scratch, env=env)
        assert report["route"]["best_label"] == "COMPOSITE", report["route"]
        classified = run(
            tool, "classify", "--json", str(runs / "sft_grpo" / "workspace" / "code"), cwd=scratch, env=env
        )
        labels = {json.loads(line)["primary"] for line in classified.splitlines()}
        assert "SFT" in labels and "ONLINE_RL" in labels, labels
        run(tool, "verify", str(runs / "sft_grpo" / "recording"), cwd=scratch, env=env)
        study = scratch / "study.duckdb"
        recordings = [str(runs / name / "recording") for name in SCENARIOS]
        run(tool, "ingest", *recordings, "--study", str(study), "--jobs", "2", cwd=scratch, env=env)
        table = run(tool, "export", str(study), "--table", "routes", "--format", "csv", cwd=scratch, env=env)
        assert "COMPOSITE" in table or "SFT" in table, table
        run(tool, "export", str(study), "--table", "cells", "--format", "latex", cwd=scratch, env=env)
        run(tool, "export", str(study), "--table", "stages", "--format", "csv", cwd=scratch, env=env)
        run(
            tool,
            "plot",
            str(study),
            "--figure",
            "scores",
            "-o",
            str(scratch / "scores.png"),
            cwd=scratch,
            env=env,
        )
        assert (scratch / "scores.png").stat().st_size > 1000
        review_in_a_terminal(tool, study, scratch, env)
        run(tool, "agreement", str(study), cwd=scratch, env=env)
        run(tool, "verify", str(study), cwd=scratch, env=env)
        run(tool, "demo", "sft_only", "--out", str(scratch / "demo"), cwd=scratch, env=env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print("smoke: every command works from the installed wheel, venv not activated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
