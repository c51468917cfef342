"""No untyped mapping crosses a boundary between rooms (issue 18: one typed record, read the same way).

A room is ``analyzer``, ``collectors``, ``runner``, ``taxonomy``, ``tui`` or the spine (the package's
own modules). Every function or public method one room imports from another is read with :mod:`ast`
(nothing is imported): its parameters and return may not be ``dict[str, Any]``, ``Mapping[str, Any]``
or their ``object`` twins. Serialisers are the exception by their nature: ``to_json``/``from_json``
and ``parse_*`` turn a typed record into JSON or JSON read from a file into a typed record.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import arb_audit

PACKAGE = Path(arb_audit.__file__).parent
ROOMS = frozenset({"analyzer", "collectors", "runner", "taxonomy", "tui"})
UNTYPED = re.compile(r"\b(dict|Mapping|MutableMapping)\[str, (Any|object)\]")
SERIALISERS = re.compile(r"^(to_json|from_json|parse_\w+)$")


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ROOMS else "spine"


def _modules() -> dict[str, ast.Module]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """A module's functions by name, and its classes' public methods as ``Class.method``."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef) and not sub.name.startswith("_"):
                    found[f"{node.name}.{sub.name}"] = sub
    return found


def _signature(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    return ast.unparse(function.args) + " -> " + (ast.unparse(function.returns) if function.returns else "")


def _crossings() -> list[str]:
    modules = _modules()
    functions = {name: _functions(tree) for name, tree in modules.items()}
    untyped = []
    for importer, tree in modules.items():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.module in functions):
                continue
            if _room(node.module) == _room(importer):
                continue
            for alias in node.names:
                for qualname, function in functions[node.module].items():
                    if qualname != alias.name and not qualname.startswith(alias.name + "."):
                        continue
                    if SERIALISERS.match(function.name):
                        continue
                    if UNTYPED.search(_signature(function)):
                        untyped.append(f"{importer} imports {node.module}.{qualname}")
    return sorted(set(untyped))


def test_no_untyped_mapping_crosses_a_room_boundary() -> None:
    assert _crossings() == []


def test_the_check_sees_an_untyped_crossing() -> None:
    """The pattern catches the shapes it is for, so the test above can fail."""
    assert UNTYPED.search("key: str, row: dict[str, Any] -> None")
    assert UNTYPED.search("self -> Mapping[str, object]")
    assert not UNTYPED.search("rows: list[StudyRow] -> dict[str, str]")
    tree = ast.parse(
        "def f(x: dict[str, Any]) -> int: ...\nclass C:\n    def to_json(self) -> dict[str, Any]: ..."
    )
    functions = _functions(tree)
    assert UNTYPED.search(_signature(functions["f"]))
    assert SERIALISERS.match(functions["C.to_json"].name)
