"""A file in its workspace: an entry script gets the route of the workspace code it calls.

Agents and projects split a pipeline over files: ``train.py`` does ``from trainer import MyTrainer``
or ``from .losses import grpo_loss`` and calls it. Classified alone, the entry script shows no stage.
Here the workspace's own modules it imports *and uses* (calls, subclasses, hands on) are followed —
read with :mod:`ast` only, never imported — and their training stages become the entry script's,
with evidence pointing into the other file. Bounded: :data:`MAX_DEPTH` modules deep, files over
:data:`MAX_TEXT` characters are not read for imports, and each file's imports are read once.

A file that shows a training stage of its own, or that is a launcher, keeps its own verdict: what the
file itself does decides over what it imports (TAXONOMY.md's unit is the file). A file whose step's loss
is elsewhere (an honest ``UNKNOWN``) takes the stages of the workspace code it uses. A launcher without a
default of its own gets the one the workspace's config gives it (:mod:`.workspace_config`).
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING

from arb_audit.analyzer.classify import DATA_SHAPES, GENERIC_VARIANTS, Classification, Stage, combine
from arb_audit.analyzer.detector import Finding
from arb_audit.analyzer.detectors.gradient_step import TRAINER_EVALUATION
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.workspace_config import with_config_default
from arb_audit.regular_files import read_regular
from arb_audit.taxonomy.routes import POLICY_GRADIENT

if TYPE_CHECKING:
    from arb_audit.store import RunStore

MAX_DEPTH = 3
"""Imports followed from an entry script: its modules, theirs, and theirs."""
PARSED_KEPT = 8
"""Syntax trees kept for reuse (a module's imports, definitions and re-exports are read in turn)."""
PARSED_KEPT_TEXT = 256_000
"""Largest file (characters) whose tree is kept."""
MAX_TEXT = 2_000_000
"""Files larger than this are not read for imports (their own classification stands)."""
KEEPS_OWN = frozenset({"training", "launcher"})
"""Roles of a file whose own verdict is not replaced by what it imports."""


def keeps_own(result: Classification) -> bool:
    """Say whether a file's own verdict stands over the workspace code it uses.

    A file that trains or launches keeps its verdict, unless its training is an honest ``UNKNOWN``, its
    launch names no route, or it only names its stage: a step whose loss is not in the file
    (``GRPOTrainer(...).train()`` of a workspace class) is what the used module's code says it is,
    which outranks the class's name.
    """
    if result.role not in KEEPS_OWN or result.primary == "UNKNOWN":
        return False
    if result.role == "launcher":
        # (a trainer class looked up by a setting names no route of its own: the module it is looked
        # up in has them)
        return bool(result.possible_routes)
    return any(stage.decided_by != "name" for stage in result.stages)


@dataclass(frozen=True, slots=True)
class Use:
    """A workspace module an importing file uses."""

    module: str
    """The module's path in the workspace (posix, relative)."""
    name: str
    """The name used, as the importing file spells it."""
    line: int
    """1-based line of the first use."""
    excerpt: str
    """That line, trimmed."""
    symbol: str | None = None
    """The name taken from the module (``from pkg import setup_logging``, ``vf.GRPOTrainer``), if one."""
    picked: bool = False
    """The module is used through ``getattr(module, setting)``: one of its classes, chosen by name."""


def module_index(paths: list[str]) -> dict[str, str]:
    """Return dotted module name -> path for the Python files of a workspace (``pkg/__init__.py`` -> pkg).

    A package under a ``src`` folder is also indexed by its import name, for the files of the project
    that holds that folder only: ``proj/src/pkg/a.py`` under ``"proj:pkg.a"`` (:func:`_lookup`). A
    library cloned into the workspace (``peft/src/peft``) is no package of the scripts beside it.
    """
    index: dict[str, str] = {}
    for path in paths:
        if not path.endswith(".py"):
            continue
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        # a folder need not be importable by name (``examples/2048/``): a script there imports its
        # siblings by their own names, looked up from the script's folder
        if parts and parts[-1].isidentifier():
            index.setdefault(".".join(parts), path)
    for path in paths:
        parts = path[:-3].split("/") if path.endswith(".py") else []
        if parts and parts[-1] == "__init__":
            parts = parts[:-1]
        if "src" in parts[:-1] and parts[-1].isidentifier():
            # the src layout (``src/pkg/mod.py``, installed as ``pkg``): its project's scripts import
            # ``pkg.mod``; kept under the project's folder (``"proj:pkg.mod"``), looked up last
            at = len(parts) - 1 - parts[::-1].index("src")
            index.setdefault(f"{'/'.join(parts[:at])}:{'.'.join(parts[at + 1 :])}", path)
    return index


def _parsed(text: str) -> ast.Module | None:
    """Return a workspace file's syntax tree, or None when it is too large or does not parse.

    A used module is read for its imports, its definitions and (a package's ``__init__``) its
    re-exports one after another: the trees of the last few small files are kept so that each is
    parsed once (the trees are only read, never changed). A large file's tree is not kept: memory
    stays bounded whatever a workspace holds.
    """
    return _parsed_kept(text) if len(text) <= PARSED_KEPT_TEXT else _parse(text)


@lru_cache(maxsize=PARSED_KEPT)
def _parsed_kept(text: str) -> ast.Module | None:
    return _parse(text)


def _parse(text: str) -> ast.Module | None:
    if len(text) > MAX_TEXT:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def bindings(path: str, text: str, index: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    """Return local name -> (workspace module path, name taken from it or None) for ``path``'s imports.

    An absolute import is looked up from the workspace root and from the importing file's folder
    (scripts are run from where they sit); a relative import from the file's package.
    """
    tree = _parsed(text)
    if tree is None:
        return {}
    return _bindings(path, tree, index)


def _bindings(path: str, tree: ast.AST, index: Mapping[str, str]) -> dict[str, tuple[str, str | None]]:
    folder = posixpath.dirname(path)
    bound: dict[str, tuple[str, str | None]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base(node.module or "", node.level, folder)
            for alias in node.names:
                if alias.name == "*":
                    continue
                # ``from pkg import mod`` binds a module; ``from mod import name`` a name in it
                target = _lookup(f"{base}.{alias.name}" if base else alias.name, folder, index)
                symbol = None
                if target is None and base:
                    target, symbol = _lookup(base, folder, index), alias.name
                if target is not None and target != path:
                    bound[alias.asname or alias.name] = (target, symbol)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                target = _lookup(alias.name, folder, index)
                if target is not None and target != path:
                    bound[alias.asname or alias.name.split(".")[0]] = (target, None)
    return bound


def uses(path: str, text: str, index: Mapping[str, str]) -> list[Use]:
    """Return the workspace modules ``path`` imports and uses, first use first (see :func:`bindings`)."""
    tree = _parsed(text)
    if tree is None:
        return []
    bound = _bindings(path, tree, index)
    if not bound:
        return []
    lines = text.splitlines()
    found: dict[tuple[str, str | None], Use] = {}

    def note(local: str, symbol: str | None, node: ast.AST) -> None:
        module, taken = bound[local]
        key = (module, taken or symbol)
        if key not in found:
            line = getattr(node, "lineno", 0)
            excerpt = lines[line - 1].strip()[:200] if 0 < line <= len(lines) else ""
            picked = (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
            )
            found[key] = Use(module, local, line, excerpt, taken or symbol, picked)

    if posixpath.basename(path) == "__init__.py":
        # a package's __init__ re-exports what it imports (``from .trainers import GRPOTrainer``): its
        # users reach that code through it
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    local = alias.asname or alias.name.split(".")[0]
                    if local in bound:
                        note(local, None, node)
    for node in ast.walk(tree):
        used = _used_name(node)
        if used is not None and used[0] in bound:
            note(used[0], used[1], node)
    return sorted(found.values(), key=lambda u: u.line)


def _base(module: str, level: int, folder: str) -> str:
    """Return the dotted module a ``from ... import`` names, relative ones resolved against ``folder``."""
    if level == 0:
        return module
    parts = [p for p in folder.split("/") if p]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, *([module] if module else [])])


def _lookup(dotted: str, folder: str, index: Mapping[str, str]) -> str | None:
    """Return the workspace file a module name imported from ``folder`` is (None: not the workspace's).

    From the root, then from the importing file's folder, then from a ``src`` folder of a project the
    file is in (the nearest first).
    """
    if dotted in index:
        return index[dotted]
    parts = folder.split("/") if folder else []
    if parts and (local := index.get(".".join([*parts, dotted]))) is not None:
        return local
    for at in range(len(parts), -1, -1):
        if (found := index.get(f"{'/'.join(parts[:at])}:{dotted}")) is not None:
            return found
    return None


def _used_name(node: ast.AST) -> tuple[str, str | None] | None:
    """Return the imported name a call, a base class or a handed-on argument uses, if any.

    With it the first attribute taken from it (``vf.GRPOTrainer(...)`` -> ``("vf", "GRPOTrainer")``).
    """
    target: ast.expr | None = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr":
        # ``getattr(trainers, config.trainer)``: a class picked by name from a module
        first = node.args[0] if node.args else None
        return (first.id, None) if isinstance(first, ast.Name) else None
    if isinstance(node, ast.Call):
        target = node.func
    elif isinstance(node, ast.ClassDef) and node.bases:
        target = node.bases[0]
    elif isinstance(node, ast.keyword):
        target = node.value
    attribute = None
    while isinstance(target, ast.Attribute):
        attribute, target = target.attr, target.value
    return (target.id, attribute) if isinstance(target, ast.Name) else None


def reexport(
    module: str, symbol: str, imports_of: Callable[[str], Mapping[str, tuple[str, str | None]]]
) -> str | None:
    """Return the module a package's ``__init__`` takes ``symbol`` from, following re-exports.

    ``from pkg import setup_logging`` uses the module that defines ``setup_logging``, not every module
    ``pkg/__init__.py`` imports; ``module`` itself when it is no ``__init__``; None when the
    ``__init__`` defines the name itself. ``imports_of`` gives a module's :func:`bindings`.
    """
    for _ in range(MAX_DEPTH + 1):
        if posixpath.basename(module) != "__init__.py":
            return module
        found = imports_of(module).get(symbol)
        if found is None:
            return None
        module, symbol = found[0], found[1] or symbol
    return module


RUN_ATTRIBUTE_WORDS = frozenset({"train", "training", "fit", "learn", "finetune", "tune", "run", "step"})
"""Words of a method whose call runs a class built on outside code (``trainer.train()``, ``fit``,
``learner.run()``, ``ppo_trainer.step(...)``): that code then calls the class's own methods. (Not
``update``: a dict's, read in most files, a checkpoint converter's too.)"""
IMPLICIT_METHODS = frozenset(
    {
        "__init__",
        "__post_init__",
        "__new__",
        "__call__",
        "forward",
        "__enter__",
        "__exit__",
        "__iter__",
        "__next__",
    }
)
"""Methods a class's user runs without naming them: building it, calling it (``forward`` through
``nn.Module.__call__``), a ``with`` or ``for`` over it."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A top-level binding of a module (a class, a function, an assigned name)."""

    span: tuple[int, int]
    """First and last line of its code (a function's decorators included)."""
    reads: frozenset[str]
    """The names its code reads: the module's other definitions among them are what it calls or uses.
    A class's: those of its bases and statements other than methods."""
    attributes: frozenset[str] = frozenset()
    """The attribute names its code reads (``self.compute_loss``, ``engine.backward``): the methods it
    calls. A class's: those of its statements other than methods."""
    methods: Mapping[str, Definition] = field(default_factory=dict)
    """A class's methods by name, each with its own lines, reads and attributes."""
    outside: tuple[tuple[int, int], ...] = ()
    """A class's lines outside its methods (header, decorators, class attributes)."""
    bases: tuple[str | None, ...] = ()
    """A class's bases: each one's name when it is a plain name (``Base``), else None (``nn.Module``)."""


@dataclass(frozen=True, slots=True)
class Definitions:
    """What a module defines at its top level, and which of its code runs when it is imported."""

    named: dict[str, Definition]
    """Each top-level class, function and assigned name -> its definition."""
    on_import: tuple[tuple[int, int], ...]
    """Lines of the top-level statements an import runs (not definitions, imports or the
    ``if __name__ == "__main__":`` block)."""
    imported: Definition = Definition((0, 0), frozenset())
    """What those statements read and call: what an import of the module runs whatever is taken from it."""
    extends_outside: frozenset[str] = frozenset()
    """Its classes with a base from elsewhere, themselves or through their bases in the module."""

    def reached(
        self, symbol: str, called: frozenset[str] | None = None, on_import: bool = True
    ) -> list[tuple[int, int]] | None:
        """Return the lines a user of ``symbol`` runs, or None when the module does not define it.

        Its code, the module's definitions it uses (transitively) and what the import runs. None for
        a name not bound at the top level (a re-export, a name bound inside a ``try``): what a user of
        it runs is not known. ``called``: the attribute names the user reads (``trainer.evaluate``);
        then of each class reached only the methods run: those called by the user or by the code
        reached (``self.training_step``), and those run implicitly (:data:`IMPLICIT_METHODS`). None:
        every method of a class reached runs. ``on_import``: with what the import runs (False: the
        definition's own code and what it uses only).
        """
        if symbol not in self.named:
            return None
        seen: set[str] = set()  # the definitions reached
        runs: dict[str, set[str]] = {}  # a class reached -> those of its methods that run
        attributes: set[str] = set()  # the attribute names read by the user and by what runs
        waiting: dict[str, list[str]] = {}  # a method name -> the classes reached whose one has not run
        todo: list[Definition] = []  # code that runs, not read yet

        # (a worklist: each definition, method and attribute name is taken once, so that a hostile
        # module of long method chains or a deep hierarchy costs time linear in its size)
        def run(owner: str, method: str) -> None:
            if method not in runs[owner]:
                runs[owner].add(method)
                todo.append(self.named[owner].methods[method])

        def read(attribute: str) -> None:
            if attribute not in attributes:
                attributes.add(attribute)
                for owner in waiting.pop(attribute, ()):
                    run(owner, attribute)

        # a subclass of code outside the module (``Trainer``, a LightningModule) has its methods called
        # by that code (``compute_loss``, ``training_step``) once the user runs it: trains, fits, steps
        runs_outside_code = called is None or any(RUN_ATTRIBUTE_WORDS & set(words(a)) for a in called)

        def reach(name: str) -> None:
            seen.add(name)
            runs[name] = set()
            definition = self.named[name]
            todo.append(definition)
            # every method runs when the user's calls are not known, and in a subclass of code
            # outside the module that the user runs (loading one from a checkpoint to convert its
            # weights runs none of its training)
            every = called is None or (name in self.extends_outside and runs_outside_code)
            for method in definition.methods:
                if every or method in IMPLICIT_METHODS or method in attributes:
                    run(name, method)
                else:
                    waiting.setdefault(method, []).append(name)

        for attribute in called or ():
            read(attribute)
        todo.append(
            replace(self.imported, reads=self.imported.reads | {symbol})
            if on_import
            else Definition((0, 0), frozenset({symbol}))
        )
        while todo:
            piece = todo.pop()
            for attribute in piece.attributes:
                read(attribute)
            for name in piece.reads & self.named.keys() - seen:
                reach(name)
        spans: list[tuple[int, int]] = []
        for name in sorted(seen):
            definition = self.named[name]
            if len(runs[name]) == len(definition.methods):
                spans.append(definition.span)
            else:
                spans += [*definition.outside, *(definition.methods[m].span for m in sorted(runs[name]))]
        return [*spans, *self.on_import] if on_import else spans


def definitions(text: str) -> Definitions:
    """Return the top-level definitions of a module's ``text`` and the lines its import runs."""
    tree = _parsed(text)
    named: dict[str, Definition] = {}
    on_import: list[tuple[int, int]] = []
    imported: list[ast.AST] = []
    for node in tree.body if tree is not None else ():
        span = (node.lineno, node.end_lineno or node.lineno)
        if isinstance(node, ast.ClassDef):
            named[node.name] = _class(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            named[node.name] = _function(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    named[target.id] = replace(_statements([node.value]), span=span)
            on_import.append(span)  # (the value is computed when the module is imported)
            imported.append(node.value)
        elif not isinstance(node, ast.Import | ast.ImportFrom) and not _main_guard(node):
            on_import.append(span)
            imported.append(node)
    return Definitions(named, tuple(on_import), _statements(imported), _extending_outside(named))


def _extending_outside(named: Mapping[str, Definition]) -> frozenset[str]:
    """Return the module's classes with a base from elsewhere, themselves or through their bases.

    ``nn.Module``, an imported ``Trainer``: from those bases down to every subclass, each class taken
    once (a hierarchy of many bases per class costs time linear in the module).
    """
    subclasses: dict[str, list[str]] = {}
    found: list[str] = []
    for name, definition in named.items():
        for base in definition.bases:
            if base == "object":
                continue
            if base is None or base not in named:
                found.append(name)
            else:
                subclasses.setdefault(base, []).append(name)
    extending: set[str] = set()
    while found:
        name = found.pop()
        if name not in extending:
            extending.add(name)
            found += subclasses.get(name, ())
    return frozenset(extending)


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Definition:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    return replace(_statements([node]), span=(first, node.end_lineno or node.lineno))


def _class(node: ast.ClassDef) -> Definition:
    """Read a class: its methods apart, each with its own lines; the rest of it as the class's own."""
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    methods = {
        item.name: _function(item)
        for item in node.body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    rest = [item for item in node.body if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]
    outside = [(first, node.body[0].lineno - 1 if node.body[0].lineno > first else first)]
    outside += [(item.lineno, item.end_lineno or item.lineno) for item in rest]
    own = _statements([*node.bases, *node.keywords, *node.decorator_list, *rest])
    bases = tuple(base.id if isinstance(base, ast.Name) else None for base in node.bases)
    span = (first, node.end_lineno or node.lineno)
    return replace(own, span=span, methods=methods, outside=tuple(outside), bases=bases)


def _statements(nodes: Sequence[ast.AST]) -> Definition:
    """Return what some statements read and call, as one definition (its lines are not used)."""
    reads: set[str] = set()
    attributes: set[str] = set()  # (``self.step``, ``engine.backward``)
    for node in nodes:
        for n in ast.walk(node):  # (once: the names read and the attributes read)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                reads.add(n.id)
            elif isinstance(n, ast.Attribute):
                attributes.add(n.attr)
    return Definition((0, 0), frozenset(reads), frozenset(attributes))


@dataclass(frozen=True, slots=True)
class Calls:
    """What a file's code does with the names it takes: which methods it calls, which names it hands on."""

    attributes: frozenset[str]
    """The attribute names it reads (``trainer.evaluate``): the methods it calls."""
    handed: frozenset[str]
    """Names it reads other than to call them, subclass them or read their attributes
    (``registry.add(value=Experiment)``): whoever gets them calls what it likes."""

    def of(self, name: str) -> frozenset[str] | None:
        """Return the methods called of what ``name`` is, or None when the file hands it on."""
        return None if name in self.handed else self.attributes


def calls_of(text: str) -> Calls | None:
    """Return the methods a file's code calls and the names it hands on; None if it does not parse."""
    tree = _parsed(text)
    if tree is None:
        return None
    used: set[int] = set()  # names called, subclassed or whose attributes are read
    attributes: set[str] = set()
    loaded: list[ast.Name] = []
    built: list[tuple[list[ast.expr], str]] = []  # ``x = Name(...)``: (targets, the name called)
    returned: set[str] = set()  # ``return Name(...)``: what it builds goes to the caller
    switches: set[int] = set()  # ``module.train(False)``: a mode switch, which runs nothing
    for n in ast.walk(tree):
        if isinstance(n, ast.Call):
            used.add(id(n.func))
            if _mode_switch(n):
                switches.add(id(n.func))
        elif isinstance(n, ast.Attribute):
            used.add(id(n.value))
            if id(n) not in switches:
                attributes.add(n.attr)
        elif isinstance(n, ast.ClassDef):
            used.update(id(base) for base in n.bases)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            loaded.append(n)
        made = (
            n.value.func if isinstance(n, ast.Assign | ast.Return) and isinstance(n.value, ast.Call) else None
        )
        if isinstance(made, ast.Name):
            if isinstance(n, ast.Assign):
                built.append((n.targets, made.id))
            else:
                returned.add(made.id)
    handed = {n.id for n in loaded if id(n) not in used} | returned
    # what it builds and hands on is handed on too (``trainer = ChatTrainer(...)``;
    # ``fire.Fire(component=trainer)``: the command line picks the method)
    handed |= {
        name for targets, name in built if any(isinstance(t, ast.Name) and t.id in handed for t in targets)
    }
    return Calls(frozenset(attributes), frozenset(handed))


def _mode_switch(call: ast.Call) -> bool:
    """Say whether a call is torch's mode switch ``module.train(False)`` (``mode=False``): evaluation mode."""
    given = [*call.args, *(k.value for k in call.keywords if k.arg == "mode")]
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "train"
        and len(given) == 1
        and isinstance(given[0], ast.Constant)
        and given[0].value is False
    )


def _in_spans(finding: Finding, spans: list[tuple[int, int]]) -> bool:
    """Say whether a finding of a module's own code (not one it took from another file) lies in ``spans``."""
    return finding.path is None and any(a <= finding.line <= b for a, b in spans)


def _main_guard(node: ast.stmt) -> bool:
    """Say whether a top-level statement is ``if __name__ == "__main__":`` (run as a script only)."""
    test = node.test if isinstance(node, ast.If) else None
    return (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
        and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in test.comparators)
    )


def _of_definition(
    sub: Classification, definitions: Definitions, symbol: str, called: frozenset[str] | None = None
) -> Classification | None:
    """Return ``sub`` with only the stages that the definition a user takes from it runs; None if none.

    A module holding a DPO and a GRPO train module: ``module.DPOTrainModule(...)`` uses the DPO one.
    When no stage's own evidence lies inside the definition, those of the module's definitions it
    uses stand (``main`` calling ``train`` beside it); when it uses none of them it is a helper of the
    module (``from train import load_model`` in an evaluation script): the module's training is not
    what its user runs. Of a class only the methods its user calls run (``called``: the attribute
    names the user reads; see :meth:`Definitions.reached`): an evaluation calling a trainer's
    ``generate`` runs none of its ``train``. A trainer taken from a library of trainers for several
    routes (a launcher by itself) trains its own route, unless the definition is the code that
    compares the setting choosing among two or more of those routes (``main`` calling
    ``run_stage(cfg)``): then its user is a launcher of them.
    """
    reached = definitions.reached(symbol, called)
    if reached is None:
        return sub
    first, last = definitions.named[symbol].span

    def shown_in(spans: list[tuple[int, int]]) -> list[Stage]:
        return [stage for stage in sub.stages if any(_in_spans(f, spans) for f in stage.evidence)]

    inside = shown_in([(a, b) for a, b in reached if first <= a and b <= last]) or shown_in(reached)
    if not inside:
        return None
    if sub.role == "launcher":
        # (the definition's own code and what it calls, not what the import runs: a table of the
        # module's stages built at import time chooses nothing for ``from train import load_model``)
        called_code = definitions.reached(symbol, called, on_import=False) or []
        dispatching = [
            f for f in sub.findings if f.signal == "dispatch" and f.routes and _in_spans(f, called_code)
        ]
        # the routes the setting chooses among, of those the definition's code shows (a warm-up
        # stage run before the choice is no choice)
        chosen = {stage.label for stage in inside} & {r for f in dispatching for r in f.routes}
        if len(chosen) >= 2:
            # the definition taken is the one that compares the setting (``main`` calling
            # ``run_stage(cfg)``): its user runs whichever of those routes the setting picks, by
            # default the one its comparisons name as such
            defaults = {f.default for f in dispatching if f.default in chosen}
            default = defaults.pop() if len(defaults) == 1 else None
            return replace(sub, stages=inside, possible_routes=sorted(chosen), default_route=default)
        # one trainer taken from a library of trainers for several routes: that trainer's route
        label = inside[-1].label
        return replace(sub, stages=inside, role="training", primary=label, labels=[label], possible_routes=[])
    return replace(sub, stages=inside)


def in_workspace(
    labels: Mapping[str, Classification],
    text_of: Callable[[str], str | None],
    only: set[str] | None = None,
    read: dict[str, list[Use]] | None = None,
) -> dict[str, Classification]:
    """Return each file's classification in its workspace (``labels``: path -> the file alone).

    ``text_of`` reads a workspace file's text (None when it cannot); ``only``: resolve just these
    paths (default: every file); ``read``: the imports of files the caller has read already (path ->
    :func:`uses`), so that no file is parsed for them twice. Files whose verdict does not change
    are returned as they were.
    """
    index = module_index(sorted(labels))
    memo: dict[str, Classification] = {}
    read = {} if read is None else read  # each file's imports, read once (a caller may have read some)
    names: dict[str, dict[str, tuple[str, str | None]]] = {}  # a package __init__'s imports, read once
    defined: dict[str, Definitions] = {}  # a used module's top-level definitions
    calls_read: dict[str, Calls | None] = {}  # what a user file calls of the names it takes

    def resolve(path: str, depth: int, seen: frozenset[str]) -> Classification:
        if path in memo:
            return memo[path]
        own = labels[path]
        if keeps_own(own) or depth >= MAX_DEPTH or not path.endswith(".py"):
            return own
        if path not in read:
            text = text_of(path)
            read[path] = uses(path, text, index) if text is not None else []
        adopted: list[tuple[Use, Classification]] = []
        # a generic trainer (``transformers.Trainer``) trains whatever loss the model it is given has
        generic = bool(own.stages) and all(stage.variant in GENERIC_VARIANTS for stage in own.stages)
        evaluated = _built_to_evaluate(own)
        # an honest UNKNOWN: a step taken here whose loss lies in code the file calls
        stepped_elsewhere = own.role == "training" and own.primary == "UNKNOWN"
        for use in read[path]:
            if use.line in evaluated:
                continue  # a trainer built there only to evaluate (``RewardTrainer(...).evaluate()``)
            module = reexported(use.module, use.symbol) if use.symbol else use.module
            if module is None:  # a name the package's __init__ defines itself: its own code
                module, sub = use.module, labels.get(use.module)
            elif module in seen or module not in labels:
                continue
            else:
                sub = resolve(module, depth + 1, seen | {path})
            if sub is None:
                continue
            use = replace(use, module=module)
            calls = calls_in(path) if use.symbol else None
            called = calls.of(use.name) if calls is not None else None
            if use.symbol and sub.stages:
                taken = _of_definition(sub, definitions_of(module), use.symbol, called)
                if taken is None:
                    continue  # a helper of the module, which runs none of its stages
                sub = taken
            if use.picked and sub.role == "training" and len(choices := _stage_labels(sub)) >= 2:
                # getattr(trainers, config.trainer) from a module of trainers of several routes
                adopted.append((use, replace(sub, role="launcher", possible_routes=choices)))
            elif sub.role == "training" and sub.stages and sub.primary != "UNKNOWN":
                adopted.append((use, sub))
            elif sub.role == "launcher" and len(sub.possible_routes) >= 2 and (not own.stages or use.symbol):
                # a class picked from a module whose code chooses the route by a setting
                # (``getattr(trainers, config.trainer)``), or the entry that chooses it, run after a
                # stage of the file's own (``SFTTrainer(...).train(); main()``): the route is that
                # setting's choice
                adopted.append((use, sub))
            elif generic and sub.role == "component" and (given := _given_loss(sub)) is not None:
                adopted.append((use, given))
            elif (
                stepped_elsewhere
                and use.symbol
                and sub.role == "component"
                and (reached := definitions_of(module).reached(use.symbol, called, on_import=False))
                is not None
                and (given := _given_loss(sub, reached)) is not None
            ):
                # a step whose loss is elsewhere (``trainer = setup_trainer(cfg, model, data)``;
                # ``trainer.train()``) takes the loss the workspace code it calls builds for it (the
                # collator that masks the prompt's targets, a pairwise loss)
                adopted.append((use, given))
        result = _adopt(own, adopted, drop_generic=generic) if adopted else own
        if depth == 0 or not adopted:
            memo[path] = result
        return result

    def imports_of(module: str) -> dict[str, tuple[str, str | None]]:
        if module not in names:
            text = text_of(module)
            names[module] = bindings(module, text, index) if text is not None else {}
        return names[module]

    def reexported(module: str, symbol: str) -> str | None:
        return reexport(module, symbol, imports_of)

    def calls_in(path: str) -> Calls | None:
        if path not in calls_read:
            text = text_of(path)
            calls_read[path] = calls_of(text) if text is not None else None
        return calls_read[path]

    def definitions_of(module: str) -> Definitions:
        if module not in defined:
            text = text_of(module)
            defined[module] = definitions(text) if text is not None else Definitions({}, ())
        return defined[module]

    def rollouts(path: str, result: Classification) -> Classification:
        """Return ``result`` interactive when its policy gradient trains on a workspace rollout's episodes.

        ``model.train(groups)`` of rollouts that ``rollout.py`` plays as multi-turn episodes: the
        environment loop that produces the samples is in the module the script calls.
        """
        pg = [s for s in result.stages if s.kind in POLICY_GRADIENT]
        if not pg or any(s.interactive for s in pg) or not path.endswith(".py"):
            return result
        if path not in read:
            text = text_of(path)
            read[path] = uses(path, text, index) if text is not None else []
        for use in read[path]:
            module = (reexported(use.module, use.symbol) if use.symbol else None) or use.module
            sub = labels.get(module)
            if sub is not None and sub.role == "component" and sub.primary == "ONLINE_RL":
                found = _interactive(use, f"uses {use.name} from {module}, which plays multi-turn episodes")
                combined = Classification(result.path, error=result.error)
                combine(combined, [*result.findings, found])
                return combined
        return result

    def shown(path: str) -> Classification:
        result = resolve(path, 0, frozenset())
        # a package's __init__ only passes its modules on to their users; it runs nothing itself
        return labels[path] if posixpath.basename(path) == "__init__.py" else rollouts(path, result)

    wanted = [path for path in labels if only is None or path in only]
    return {path: with_config_default(shown(path), path, labels.keys(), text_of) for path in wanted}


def _interactive(use: Use, message: str) -> Finding:
    """Return the evidence, at a use, that the file's policy gradient trains on multi-turn episodes."""
    return Finding(
        "WorkspaceImport",
        "interactive",
        interactive=True,
        message=message,
        line=use.line,
        excerpt=use.excerpt,
    )


def _stage_labels(result: Classification) -> list[str]:
    """Return the distinct training labels of a file's stages, in order."""
    other = ("EVAL_ONLY", "DISTILLATION", "CONFIG_DEPENDENT", "UNKNOWN", "NONE_TRAINING")
    return list(dict.fromkeys(label for label in result.labels if label not in other))


def _given_loss(
    component: Classification, spans: list[tuple[int, int]] | None = None
) -> Classification | None:
    """Return a component's loss as a stage (a model whose forward computes a pairwise loss), if any.

    ``spans``: the lines its user runs (the definition it takes); a loss elsewhere is not given.
    """
    losses = [
        f
        for f in component.findings
        if f.signal == "loss" and f.kind is not None and (spans is None or _in_spans(f, spans))
    ]
    if not losses:
        return None
    # (targets masked for a loss say what a loss elsewhere trains on, less than a loss itself)
    stages = [
        Stage(f.kind or "", f.variant, evidence=[f], decided_by="data", confidence="low")
        if f.variant in DATA_SHAPES
        else Stage(f.kind or "", f.variant, evidence=[f], decided_by="loss", confidence="medium")
        for f in losses[:1]
    ]
    return replace(component, role="training", stages=stages)


def _adopt(
    own: Classification, adopted: list[tuple[Use, Classification]], drop_generic: bool = False
) -> Classification:
    """Return ``own`` with the stages of the workspace code it uses, and the evidence for them.

    ``drop_generic``: the file's only stages are a generic trainer's default, which the loss of the
    workspace code it trains replaces.
    """
    # a stage the file names of its own stays beside what it calls
    findings = [
        f
        for f in own.findings
        if not (drop_generic and f.signal == "stage" and f.variant in GENERIC_VARIANTS)
    ]
    # a generic trainer (``transformers.Trainer``) taken beside a route's own training is that route's
    # base class (``GaudiDPOTrainer`` calls ``GaudiTrainer.__init__``): it trains the route's loss
    specific = any(
        _specific(stage) for stage in (*own.stages, *(s for _, sub in adopted for s in sub.stages))
    )
    decided: dict[tuple[str, str | None], Stage] = {}
    for use, sub in adopted:
        if sub.role == "launcher":
            key = next((f.key for f in sub.findings if f.signal == "dispatch" and f.key), None)
            findings.append(
                Finding(
                    "WorkspaceImport",
                    "dispatch",
                    routes=tuple(sub.possible_routes),
                    default=sub.default_route,
                    key=key,
                    message=f"uses {use.name} from {use.module}, whose route a setting chooses",
                    line=use.line,
                    excerpt=use.excerpt,
                )
            )
            continue
        for stage in sub.stages:
            if specific and stage.variant in GENERIC_VARIANTS:
                continue
            decided.setdefault((stage.kind, stage.variant), stage)
            message = f"uses {use.name} from {use.module}, whose code runs {stage.kind}"
            findings.append(
                Finding(
                    "WorkspaceImport",
                    "stage",
                    kind=stage.kind,
                    variant=stage.variant,
                    on_policy=stage.on_policy,
                    data_source=stage.data_source,
                    message=message,
                    line=use.line,
                    excerpt=use.excerpt,
                )
            )
            findings += [replace(f, path=f.path or use.module) for f in stage.evidence]
            if stage.interactive:
                findings.append(_interactive(use, f"{use.module} trains on multi-turn rollouts"))
    result = Classification(own.path, error=own.error)
    combine(result, sorted(findings, key=lambda f: (f.path is not None, f.line, f.col)))
    for stage in result.stages:
        source = decided.get((stage.kind, stage.variant))
        if source is not None:
            stage.decided_by, stage.confidence = source.decided_by, source.confidence
    return result


def _built_to_evaluate(own: Classification) -> set[int]:
    """Return the lines where a file that takes no gradient step builds a trainer only to evaluate."""
    if any(f.signal == "gradient_step" for f in own.findings):
        return set()
    # (TrainerConstruction's ``RewardTrainer(...).evaluate(ds)``, or a trainer's evaluation loop)
    return {
        f.line
        for f in own.findings
        if f.signal == "scoring" and (f.detector == "TrainerConstruction" or f.variant == TRAINER_EVALUATION)
    }


def _specific(stage: Stage) -> bool:
    """Say whether a stage trains a route of its own: not a generic trainer's, a merge or an unknown."""
    return stage.kind not in ("merge", "unknown") and stage.variant not in GENERIC_VARIANTS


def classify_workspaces(
    paths: Sequence[Path], jobs: int = 0, cache: RunStore | None = None
) -> Iterator[Classification]:
    """Classify every file under ``paths`` (as :func:`~.batch.classify_many`), each folder as a workspace.

    A file given on its own is classified alone; the files under a folder given are classified in
    that folder's workspace (:func:`in_workspace`).
    """
    from arb_audit.analyzer.batch import classify_many

    for path in paths:
        results = list(classify_many([path], jobs, cache))
        if not path.is_dir():
            yield from results
            continue
        relative = {Path(r.path).relative_to(path).as_posix(): r for r in results}
        resolved = in_workspace(relative, partial(text_in, path))
        yield from (resolved[name] for name in relative)


def text_in(root: Path, name: str) -> str | None:
    """Return the text of the file ``name`` of the workspace at ``root``, or None when unreadable or large.

    :func:`in_workspace`'s ``text_of`` for a folder.
    """
    return _read(root / name)


def _read(path: Path) -> str | None:
    """Return a workspace file's text for reading its imports (None when unreadable or too large)."""
    try:
        raw = read_regular(path, MAX_TEXT, follow_symlinks=True)  # a FIFO is refused, not waited on
    except OSError:
        return None
    return None if len(raw) > MAX_TEXT else raw.decode("utf-8", "replace")
