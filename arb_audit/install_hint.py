"""The install command to print when something optional is missing, for the way arb-audit was installed.

A hint that says ``pip install 'arb-audit[weights]'`` is wrong for most users: a plain ``pip`` may be
another interpreter's (the venv is often not activated: pipx and ``uv tool`` never activate one), a
checkout was installed from its folder, not from the index, and pipx or uv manage their own
environments. The installer and source are read from the distribution's own metadata (``INSTALLER``
and PEP 610's ``direct_url.json``), so the printed command installs into *this* interpreter.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shlex
import sys
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "arb-audit"
"""The distribution name on the package index."""


def _distribution() -> importlib.metadata.Distribution | None:
    try:
        return importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _source(dist: importlib.metadata.Distribution | None) -> tuple[str, bool]:
    """Return what to install (the index name, or the folder it came from) and whether it is editable."""
    if dist is None:
        return DISTRIBUTION, False
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "null")
    except (OSError, ValueError):
        direct = None
    if not isinstance(direct, dict):
        return DISTRIBUTION, False
    url = urlparse(str(direct.get("url", "")))
    info = direct.get("dir_info")
    if url.scheme == "file" and isinstance(info, dict):
        return str(Path(unquote(url.path))), bool(info.get("editable"))
    return DISTRIBUTION, False


def _manager() -> str:
    """Return who manages this environment: ``pipx``, ``uv-tool``, ``uv`` or ``pip``."""
    prefix = Path(sys.prefix).as_posix()
    if "/pipx/venvs/" in prefix:
        return "pipx"
    if re.search(r"/uv/tools/", prefix):
        return "uv-tool"
    dist = _distribution()
    installer = (dist.read_text("INSTALLER") or "").strip() if dist is not None else ""
    return "uv" if installer == "uv" else "pip"


def install_command(extra: str | None = None, requirement: str | None = None) -> str:
    """Return the shell command that adds ``extra`` of arb-audit (or one ``requirement``) here.

    ``extra`` names an optional-dependency group (``weights``, ``reference``, ``dev``);
    ``requirement`` a single package as arb-audit's metadata requires it (a default dependency found
    missing: a broken install). The command targets this interpreter, so it works unactivated.
    """
    source, editable = _source(_distribution())
    target = f"{source}[{extra}]" if extra else source
    manager = _manager()
    python = shlex.quote(sys.executable)
    if requirement is not None:
        package = shlex.quote(requirement)
        if manager == "pipx":
            return f"pipx inject {DISTRIBUTION} {package}"
        if manager == "uv-tool":
            return f"uv tool install --force {shlex.quote(source)} --with {package}"
        if manager == "uv":
            return f"uv pip install --python {python} {package}"
        return f"{python} -m pip install {package}"
    spec = shlex.quote(target)
    if manager == "pipx":
        return f"pipx install --force {'--editable ' if editable else ''}{spec}"
    if manager == "uv-tool":
        return f"uv tool install --force {'--editable ' if editable else ''}{spec}"
    flag = "-e " if editable else ""
    if manager == "uv":
        return f"uv pip install --python {python} {flag}{spec}"
    return f"{python} -m pip install {flag}{spec}"


def requirement_for(module: str) -> str:
    """Return arb-audit's own requirement for the distribution that provides ``module`` (or its name).

    The ranges are read from the installed metadata, so a hint never drifts from ``pyproject.toml``.
    """
    top = module.partition(".")[0]
    provided = importlib.metadata.packages_distributions().get(top, [top])
    names = {re.sub(r"[-_.]+", "-", name).lower() for name in provided}
    dist = _distribution()
    for line in (dist.requires or []) if dist is not None else []:
        spec = line.partition(";")[0].strip()
        name = re.split(r"[\s<>=!~\[(]", spec, maxsplit=1)[0]
        if re.sub(r"[-_.]+", "-", name).lower() in names and "extra ==" not in line:
            return spec
    return next(iter(sorted(provided)), top)


def missing(what: str, module: str, extra: str | None = None) -> str:
    """Return the one-line message for ``what`` needing ``module``, with the command that fixes it.

    With ``extra``, the module belongs to that optional group; without it, the module is one of
    arb-audit's default dependencies and the install is incomplete.
    """
    module = module.partition(".")[0]
    if extra is not None:
        return f"{what} needs {module} (the '{extra}' extra): {install_command(extra)}"
    return (
        f"{what} needs {module}, which arb-audit installs by default; this install lacks it: "
        f"{install_command(requirement=requirement_for(module))}"
    )
