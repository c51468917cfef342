"""What a user installs: one ``arb_audit`` namespace, every file the code reads at run time, honest ranges.

The wheel is built from a copy of the sources, as ``pip install .`` builds it, and its file list and
metadata are checked: every file git tracks under ``arb_audit/`` must be in it. The rooms live inside the
namespace (``arb_audit/<room>``); the top-level ``<room>`` entries are links to them, for reading the tree
as the design card lays it out. The import contracts are checked to cover every module of the spine.
"""

from __future__ import annotations

import email.parser
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from arb_audit.install_hint import install_command, missing, requirement_for

ROOT = Path(__file__).resolve().parent.parent
ROOMS = ("analyzer", "collectors", "runner", "taxonomy", "tui")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _copy_sources(to: Path) -> None:
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, to / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "arb_audit", to / "arb_audit", symlinks=True, ignore=ignore)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    source = tmp_path_factory.mktemp("source")
    _copy_sources(source)
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            ".",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    (path,) = out.glob("arb_audit-*.whl")
    return zipfile.ZipFile(path)


def _metadata(wheel: zipfile.ZipFile, name: str) -> str:
    (info,) = {n.split("/")[0] for n in wheel.namelist() if n.split("/")[0].endswith(".dist-info")}
    return wheel.read(f"{info}/{name}").decode()


def test_the_wheel_installs_one_namespace(wheel: zipfile.ZipFile) -> None:
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"arb_audit"}
    assert _metadata(wheel, "top_level.txt").split() == ["arb_audit"]


def _tracked(under: str) -> list[str]:
    """The files git tracks under ``under`` (what a clone holds), or every file there outside a checkout."""
    listed = subprocess.run(["git", "ls-files", "-s", under], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        return [p.relative_to(ROOT).as_posix() for p in (ROOT / under).rglob("*") if p.is_file()]
    # a link tracked inside the package would be listed too: its path is one the wheel cannot hold
    return [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line]


def test_the_wheel_holds_every_file_the_package_tracks(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    tracked = _tracked("arb_audit")
    assert any(path.startswith("arb_audit/analyzer/detectors/") for path in tracked)
    missing = [path for path in tracked if path not in names]
    assert missing == [], f"files the wheel lacks (the installed tool cannot read them): {missing}"
    assert "arb_audit/tui/app.tcss" in names  # the desk cannot start without its stylesheet
    assert "arb_audit/py.typed" in names
    assert any(n.startswith("arb_audit/runner/reference/recipes/") for n in names)


def test_entry_points_name_modules_in_the_wheel(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    points = [
        line.split("=", 1)[1].strip()
        for line in _metadata(wheel, "entry_points.txt").splitlines()
        if "=" in line and not line.startswith("[")
    ]
    assert "arb_audit.cli:main" in points
    assert len(points) == 4
    for point in points:
        module = point.split(":")[0]
        path = module.replace(".", "/")
        assert f"{path}.py" in names or f"{path}/__init__.py" in names, point


def test_requirements_are_ranges_and_every_used_by_feature_is_in_the_default(wheel: zipfile.ZipFile) -> None:
    meta = email.parser.Parser().parsestr(_metadata(wheel, "METADATA"))
    requires = meta.get_all("Requires-Dist") or []
    pinned = [r for r in requires if "==" in r.split(";")[0]]
    assert not pinned, "exact pins belong in constraints.txt"
    default = {r.split(";")[0].strip().split(">")[0].split("<")[0].lower() for r in requires if ";" not in r}
    # the review desk, figures and agreement are used-by features: they must not need an extra
    assert {
        "textual",
        "matplotlib",
        "scikit-learn",
        "duckdb",
        "polars",
        "libcst",
        "click",
        "pydantic",
    } <= default
    torch = [r for r in requires if r.startswith("torch")]
    assert torch and all("extra ==" in r for r in torch), "torch stays an extra"


def _spine_modules() -> set[str]:
    spine = ROOT / "arb_audit"
    found = set()
    for path in spine.iterdir():
        if path.name in ROOMS or path.name.startswith(("_", ".")) or path.name == "py.typed":
            continue
        if path.suffix == ".py" or (path / "__init__.py").is_file():
            found.add(f"arb_audit.{path.stem}")
    return found


def test_the_import_contracts_cover_the_whole_spine() -> None:
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    spine = _spine_modules()
    assert "arb_audit.cli" in spine and "arb_audit.commands" in spine
    listing_spine = [c for c in contracts if "arb_audit.store" in c.get("source_modules", [])]
    assert len(listing_spine) == 3
    for contract in listing_spine:
        listed = {
            m for m in contract["source_modules"] if not m.split(".")[1:2] or m.split(".")[1] not in ROOMS
        }
        assert listed == spine, contract["name"]


def test_the_rooms_live_inside_the_namespace() -> None:
    for room in ROOMS:
        inside = ROOT / "arb_audit" / room
        assert inside.is_dir() and not inside.is_symlink(), room
        top = ROOT / room  # the design card's layout, for reading the tree: a link, never a second copy
        assert not top.exists() or (top.is_symlink() and top.resolve() == inside.resolve()), room


def test_a_missing_extra_names_the_command_for_this_interpreter() -> None:
    command = install_command("weights")
    assert "weights]" in command
    # the command never relies on an activated venv's `pip`: it names this interpreter or its manager
    assert command.startswith((sys.executable, "'" + sys.executable, "pipx ", "uv "))
    message = missing("arb-audit demo: the reference world", "torch", extra="reference")
    assert message.startswith("arb-audit demo: the reference world needs torch (the 'reference' extra): ")


def test_a_missing_default_dependency_names_arb_audits_own_range() -> None:
    textual = requirement_for("textual.app")
    assert textual.startswith("textual") and ">=8" in textual
    assert requirement_for("sklearn.metrics").startswith("scikit-learn>=")
    message = missing("arb-audit review", "textual.widgets")
    assert "needs textual, which arb-audit installs by default" in message
    assert textual in message
