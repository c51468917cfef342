"""Headless Chromium for the tests that check what a person sees in a page (Debian's ``chromium``).

A test that needs it is marked :data:`needs_chromium` and says it skipped, with the reason, where the
package is not installed (``.ci/run`` installs it).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium (Debian's chromium package) is not installed"
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Run offline and alone: no first-run pages, no update checks, nothing fetched behind the page."""


def chromium(profile: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run headless Chromium with a fresh profile folder; fail the test when it fails."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def dump_dom(page: Path, profile: Path, fragment: str = "") -> str:
    """Return the DOM of ``page`` once it has loaded and its own script (if any) has run."""
    return load(page, profile, fragment)[0]


def load(page: Path, profile: Path, fragment: str = "") -> tuple[str, list[str]]:
    """Return the DOM of ``page`` once loaded, and what its console said (CSP refusals, script errors)."""
    url = page.as_uri() + (f"#{fragment}" if fragment else "")
    done = chromium(profile, "--enable-logging=stderr", "--v=0", "--dump-dom", url)
    return done.stdout, [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
