"""A scripted agent: plays a scenario in its workspace and prints its transcript as Claude Code would.

``python -m arb_audit.runner.reference.agent SCENARIO`` is the agent command ``arb-audit record`` starts
(in the workspace, with ``GRADING_SERVER_URL`` set). Each step is a tool call: a ``Write`` writes a whole
file, a ``Bash`` call runs a command and reports its output and exit code. The transcript is Claude Code's
``stream-json``, each line prefixed with its UTC time as PostTrainBench's launcher writes it; the recorder
keeps the agent's output as ``agent.log``. Between steps the agent pauses as a model would while it
thinks, so the recorder's timer sees each edit before the command that uses it.

The transcript is what an agent in a benchmark container sees: its workspace at ``/workspace``
(:data:`WORKSPACE_ALIAS`) and Python installed under ``/usr/local``, whatever this machine's paths are.
So a recording names no folder of the machine that made it, and its audit maps the transcript's paths
through the transcript's own working directory, as it must for a real containerised run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arb_audit.runner.reference.scenarios import Run, Scenario, Step, Write, find

THINK_S = 0.6
"""Pause between steps."""
OUTPUT_CHARS = 4000
"""Tail of a command's output reported in its tool result, as agents' tools truncate it."""
MODEL = "scripted-agent"
WORKSPACE_ALIAS = "/workspace"
"""The workspace's path in the transcript: where a benchmark container mounts it."""
PYTHON_ALIAS = "/usr/local"
"""Where the transcript says Python is installed (the prefix of a container's Python)."""
SITE_ALIAS = "/usr/local/lib/python3/site-packages"
"""Where the transcript says installed packages (arb_audit's reference tasks among them) are."""


def emit(event: dict[str, Any]) -> None:
    """Print one transcript line with its time prefix."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    print(f"[{stamp}] {json.dumps(event)}", flush=True)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}]
    return {"type": "assistant", "message": {"role": "assistant", "model": MODEL, "content": content}}


def _result(call_id: str, content: str, is_error: bool) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


PYTHON_NAMES = ("python", "python3")
"""The names an agent's commands call Python by (``python code/sft.py``)."""


def interpreter_shims(folder: Path) -> dict[str, str]:
    """Make ``python`` and ``python3`` in ``folder`` run this interpreter; return the commands' environment.

    The agent's commands say ``python code/sft.py``, as agents write them. Looked up on PATH, ``python``
    is whatever the user's shell has first, often a system Python without torch (the venv arb-audit was
    installed in is rarely activated: pipx and ``uv tool`` never activate one), and every training
    command would fail with ModuleNotFoundError. A small script per name, first on PATH, runs the
    interpreter arb-audit itself runs on. The folder is outside the workspace, so no revision holds it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for name in PYTHON_NAMES:
        shim = folder / name
        shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n', encoding="utf-8")
        shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(folder), env.get("PATH", os.defpath)])
    return env


class ContainerView:
    """Rewrites this machine's paths in what the agent reports into a container's (``/workspace``...).

    The workspace, the folder of the ``python`` shims, arb_audit's own package (a traceback through
    the reference tasks names it), the interpreter's site-packages and prefixes, and the home folder:
    the longest first, each only as a whole path (``/tmp/ws`` in ``/tmp/ws2`` is left alone).
    """

    def __init__(self, workspace: Path, shims: Path | None = None) -> None:
        import arb_audit

        package = Path(arb_audit.__file__).parent
        paths = sysconfig.get_paths()
        mapping = {
            workspace: WORKSPACE_ALIAS,
            package: f"{SITE_ALIAS}/arb_audit",
            package.parent: SITE_ALIAS,  # a source checkout (an editable install)
            Path(paths["purelib"]): SITE_ALIAS,
            Path(paths["platlib"]): SITE_ALIAS,
            Path(sys.prefix): PYTHON_ALIAS,
            Path(sys.exec_prefix): PYTHON_ALIAS,
            Path(sys.base_prefix): PYTHON_ALIAS,
            Path.home(): "/root",
        }
        if shims is not None:
            mapping[shims] = f"{PYTHON_ALIAS}/bin"
        found: dict[str, str] = {}
        for path, alias in mapping.items():
            for form in (str(path), str(path.resolve())):
                if form not in ("/", "/usr", "/usr/local") and form not in found:
                    found[form] = alias
        self.mapping = found
        self.pattern = re.compile(
            "|".join(re.escape(p) for p in sorted(found, key=len, reverse=True)) + r"(?![\w.-])"
        )

    def __call__(self, text: str) -> str:
        """Return ``text`` with this machine's paths replaced by the container's."""
        return self.pattern.sub(lambda m: self.mapping[m.group(0)], text)


def take(
    step: Step,
    call_id: str,
    workspace: Path,
    env: dict[str, str] | None = None,
    view: ContainerView | None = None,
    background: list[subprocess.Popen[bytes]] | None = None,
) -> None:
    """Take one step as a tool call and print it (a failed command is reported, as an agent sees it).

    A background command is started in a process group of its own and added to ``background``.
    """
    seen = view or ContainerView(workspace)
    if isinstance(step, Write):
        target = workspace / step.path
        shown = f"{WORKSPACE_ALIAS}/{step.path}"
        emit(_call(call_id, "Write", {"file_path": shown, "content": step.text}))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(step.text, encoding="utf-8")
        emit(_result(call_id, f"File created successfully at: {shown}", False))
        return
    assert isinstance(step, Run)
    if step.background:
        arguments = {"command": step.command, "description": "run", "run_in_background": True}
        emit(_call(call_id, "Bash", arguments))
        started = subprocess.Popen(
            ["bash", "-c", step.command],
            cwd=workspace,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if background is not None:
            background.append(started)
        emit(_result(call_id, f"Command running in background with ID: {call_id}", False))
        return
    emit(_call(call_id, "Bash", {"command": step.command, "description": "run"}))
    done = subprocess.run(
        ["bash", "-c", step.command], cwd=workspace, env=env, capture_output=True, text=True, errors="replace"
    )
    output = seen(done.stdout + done.stderr)[-OUTPUT_CHARS:]
    failed = done.returncode != 0
    emit(_result(call_id, f"Exit code {done.returncode}\n{output}" if failed else output, failed))


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop a background command and everything it started (its own process group)."""
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def play(scenario: Scenario, workspace: Path) -> int:
    """Play every step of ``scenario`` (a failed command does not stop it: the agent reads the error)."""
    session = f"scripted-{scenario.name}"
    emit(
        {
            "type": "system",
            "subtype": "init",
            "session_id": session,
            "model": MODEL,
            "cwd": WORKSPACE_ALIAS,
            "tools": ["Bash", "Write"],
        }
    )
    started = time.monotonic()
    background: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="arb-audit-agent-") as shims:
        env = interpreter_shims(Path(shims))
        view = ContainerView(workspace, Path(shims))
        try:
            for number, step in enumerate(scenario.steps, start=1):
                take(step, f"toolu_{number:03d}", workspace, env, view, background)
                time.sleep(THINK_S)
        finally:
            # The session ends: its background commands end with it, never reported done.
            for process in background:
                _stop(process)
    emit(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": session,
            "num_turns": len(scenario.steps),
            "duration_ms": int((time.monotonic() - started) * 1000),
        }
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Play the named scenario in the workspace (``$WORKSPACE``, else the current folder)."""
    parser = argparse.ArgumentParser(prog="python -m arb_audit.runner.reference.agent", description=__doc__)
    parser.add_argument("scenario")
    args = parser.parse_args(argv)
    try:
        scenario = find(args.scenario)
    except KeyError as exc:
        print(exc.args[0], file=sys.stderr)
        return 2
    return play(scenario, Path(os.environ.get("WORKSPACE", ".")).resolve())


if __name__ == "__main__":
    raise SystemExit(main())
