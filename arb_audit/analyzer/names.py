"""Qualified names with libcst's ``QualifiedNameProvider`` semantics, at a fraction of its cost.

The stock provider builds full scope metadata for every node (about 70x ``ast.parse`` per file here).
Route detectors only ask "which imported thing does this name or attribute chain denote?", so this
resolver collects, in one walk over *statements* only, what each scope binds:

- ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c`` to ``a.b``;
  ``from a.b import X as Y`` binds ``Y`` to ``a.b.X``; ``from . import x`` binds ``x`` to ``.x``;
- ``def``/``class`` bind their local qualified name (``f.<locals>.g``), as the provider does;
- assignments, loop and ``with``/``except`` targets and parameters bind a local name, shadowing;
- a scope binds a name to the *set* of everything it is bound to anywhere in that scope (a
  ``try``/``except ImportError`` pair of imports gives both), as Python's scoping does;
- names are looked up function scopes outward, a class scope only from its own body, then the
  module, then builtins (``builtins.len``);
- dead code (``if False:``, ``if 0:``, ``while False:``) binds nothing.

``x.attr`` resolves to each name of ``x`` plus ``.attr``; as with the stock provider, a call or a
subscript in a chain is looked through (``F.logsigmoid(x).mean`` is ``torch.nn.functional.logsigmoid.mean``,
``TABLE[key]`` is ``TABLE``), and anything else has no name. (Where the stock provider answers
``builtins.None`` for an attribute of an unnamed expression, such as ``"".join`` — it looks up the
string ``"None"`` — this answers nothing.)
"""

from __future__ import annotations

import builtins
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

BUILTINS = frozenset(dir(builtins))
STANDARD_MODULES = frozenset(m for m in sys.stdlib_module_names if not m.startswith("_"))
"""The standard library's top-level modules (``json``, ``os``, ``re``): a name of one that nothing in a
file binds, used where the file imports another module's names with ``*``, is that module, which the
other module imported (``from utils import *`` then ``json.dumps(row)``)."""


@dataclass(slots=True)
class Scope:
    """What one module, class or function body binds."""

    kind: str
    """``module``, ``class`` or ``function``."""
    prefix: str
    """Qualified-name prefix of what it defines (``""``, ``Cls.``, ``f.<locals>.``)."""
    parent: Scope | None
    """The enclosing scope."""
    bindings: dict[str, set[str]] = field(default_factory=dict)
    """Name -> every qualified name it is bound to in this scope."""

    def bind(self, name: str, qualified: str) -> None:
        """Record that ``name`` is bound to ``qualified`` somewhere in this scope."""
        self.bindings.setdefault(name, set()).add(qualified)


def is_dead(test: cst.BaseExpression) -> bool:
    """Say whether an ``if``/``while`` test is a constant false (``False``, ``0``, ``None``)."""
    if type(test) is cst.Name:
        return test.value in ("False", "None")
    return type(test) is cst.Integer and test.value == "0"


def literal_bool(node: cst.BaseExpression) -> bool | None:
    """Return the value of a ``True`` or ``False`` written as such, else None."""
    if type(node) is cst.Name and node.value in ("True", "False"):
        return node.value == "True"
    return None


def dotted(node: cst.BaseExpression | None) -> str:
    """Return ``a.b.c`` for a Name/Attribute chain (an import's module), else ``""``."""
    # ``type(...) is`` in these helpers, which every detector asks of every call: libcst's classes are
    # ABCs, and ``isinstance`` against one that does not match costs ten times as much
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else ""
    return ""


def literal_text(node: cst.SimpleString) -> str:
    """Return a string literal's text between its quotes and after its prefix, escapes left as written.

    Enough to read words and short keys, and several times cheaper than libcst's ``evaluated_value``
    (:func:`ast.literal_eval`). The prefix goes first: stripping quotes and prefix letters together
    would also eat a word's last letters (``'sub'``).
    """
    return node.value.lstrip("rRbBuUfF").strip("'\"")


def text_value(node: cst.SimpleString) -> str | None:
    """Return a string literal's text as :func:`literal_text` reads it, or None for a bytes literal.

    For reading words, keys and flags where libcst's ``evaluated_value`` (an ``ast.literal_eval`` each
    time it is read) would cost more than the escapes it resolves are worth.
    """
    return None if "b" in node.prefix.lower() else literal_text(node)


def either(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Return the values an expression may take: both branches of ``a if test else b``, else itself."""
    return [value.body, value.orelse] if type(value) is cst.IfExp else [value]


def last_name(node: cst.BaseExpression) -> str:
    """Return a name's or an attribute's last component (``self.records`` -> ``records``), else ""."""
    if type(node) is cst.Name:
        return node.value
    return node.attr.value if type(node) is cst.Attribute else ""


def _targets(node: cst.BaseExpression) -> Iterator[str]:
    """Names bound by an assignment target (tuples and lists unpacked, attributes skipped)."""
    if type(node) is cst.Name:
        yield node.value
    elif isinstance(node, cst.Tuple | cst.List):
        for element in node.elements:
            yield from _targets(element.value)
    elif type(node) is cst.StarredElement:
        yield from _targets(node.value)


def _bind_parameters(params: cst.Parameters, scope: Scope) -> None:
    """Bind a function's or lambda's parameters in its own scope."""
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        scope.bind(param.name.value, scope.prefix + param.name.value)
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            scope.bind(star.name.value, scope.prefix + star.name.value)


class NameResolver:
    """Bindings of every scope of one module, and lookups against them."""

    def __init__(self, module: cst.Module) -> None:
        self.module_scope = Scope("module", "", None)
        """The module's own scope."""
        self.scopes: dict[int, Scope] = {}
        """The scope that each ``FunctionDef``/``ClassDef`` node (by id) opens."""
        self.class_bases: dict[str, set[str]] = {}
        """Local qualified name of each class -> the qualified names of its bases."""
        self.imported: set[str] = set()
        """Every qualified name some import binds."""
        self.imported_as: dict[str, set[str]] = {}
        """Each name an import binds, in any scope -> the qualified names bound to it."""
        self.star_modules: list[str] = []
        """Modules whose names ``from module import *`` binds here (which names, only the module knows)."""
        self._imported_names: dict[str, bool] = {}
        """Answers of :meth:`is_imported` so far (detectors ask it of every callee)."""
        self._classes: list[tuple[cst.ClassDef, Scope]] = []
        self._body(module.body, self.module_scope)
        for node, scope in self._classes:
            qualified = scope.prefix + node.name.value
            self.class_bases[qualified] = {
                name for base in node.bases for name in self.qualified_names(base.value, scope)
            }

    # -- collecting -------------------------------------------------------------------------------

    def _body(self, statements: Sequence[cst.CSTNode], scope: Scope) -> None:
        for statement in statements:
            self._statement(statement, scope)

    def _block(self, block: cst.BaseSuite | None, scope: Scope) -> None:
        if block is not None:
            self._body(block.body, scope)

    def _statement(self, node: cst.CSTNode, scope: Scope) -> None:
        # (type identity, not isinstance: libcst's bases are ABCs, slow to miss on every statement)
        if type(node) is cst.SimpleStatementLine or type(node) is cst.SimpleStatementSuite:
            for small in node.body:
                self._small(small, scope)
        elif type(node) is cst.FunctionDef:
            scope.bind(node.name.value, scope.prefix + node.name.value)
            inner = Scope("function", f"{scope.prefix}{node.name.value}.<locals>.", scope)
            self.scopes[id(node)] = inner
            _bind_parameters(node.params, inner)
            self._block(node.body, inner)
        elif type(node) is cst.ClassDef:
            scope.bind(node.name.value, scope.prefix + node.name.value)
            inner = Scope("class", f"{scope.prefix}{node.name.value}.", scope)
            self.scopes[id(node)] = inner
            self._classes.append((node, scope))
            self._block(node.body, inner)
        elif type(node) is cst.If:
            if not is_dead(node.test):
                self._block(node.body, scope)
            if node.orelse is not None:
                self._statement(node.orelse, scope)
        elif type(node) is cst.Else or type(node) is cst.Finally:
            self._block(node.body, scope)
        elif type(node) is cst.While:
            if not is_dead(node.test):
                self._block(node.body, scope)
            if node.orelse is not None:
                self._block(node.orelse.body, scope)
        elif type(node) is cst.For:
            for name in _targets(node.target):
                scope.bind(name, scope.prefix + name)
            self._block(node.body, scope)
            if node.orelse is not None:
                self._block(node.orelse.body, scope)
        elif type(node) is cst.With:
            for item in node.items:
                if item.asname is not None:
                    for name in _targets(item.asname.name):
                        scope.bind(name, scope.prefix + name)
            self._block(node.body, scope)
        elif type(node) is cst.Try or type(node) is cst.TryStar:
            self._block(node.body, scope)
            for handler in node.handlers:
                if handler.name is not None:
                    for name in _targets(handler.name.name):
                        scope.bind(name, scope.prefix + name)
                self._block(handler.body, scope)
            for tail in (node.orelse, node.finalbody):
                if tail is not None:
                    self._block(tail.body, scope)
        elif type(node) is cst.Match:
            for case in node.cases:
                self._block(case.body, scope)

    def _small(self, node: cst.BaseSmallStatement, scope: Scope) -> None:
        if type(node) is cst.Import:
            for alias in node.names:
                full = dotted(alias.name)
                if alias.asname is not None:
                    for name in _targets(alias.asname.name):
                        scope.bind(name, full)
                        self.imported.add(full)
                        self.imported_as.setdefault(name, set()).add(full)
                else:
                    head = full.split(".", 1)[0]
                    scope.bind(head, head)
                    self.imported.add(head)
        elif type(node) is cst.ImportFrom:
            module = "." * len(node.relative) + dotted(node.module)
            if isinstance(node.names, cst.ImportStar):
                self.star_modules.append(module)
                return
            for alias in node.names:
                name = dotted(alias.name)
                full = f"{module}.{name}" if module and not module.endswith(".") else module + name
                bound = name
                if alias.asname is not None:
                    bound = next(_targets(alias.asname.name), name)
                scope.bind(bound, full)
                self.imported.add(full)
                self.imported_as.setdefault(bound, set()).add(full)
        elif type(node) is cst.Assign:
            for target in node.targets:
                for name in _targets(target.target):
                    scope.bind(name, scope.prefix + name)
        elif type(node) is cst.AnnAssign or type(node) is cst.AugAssign:
            for name in _targets(node.target):
                scope.bind(name, scope.prefix + name)

    # -- looking up -------------------------------------------------------------------------------

    def inner_scope(self, node: cst.CSTNode, scope: Scope) -> Scope | None:
        """Return the scope a comprehension or lambda opens inside ``scope`` (None for other nodes).

        They bind their loop targets or parameters, named as the stock provider names them
        (``<comprehension>.x``; a lambda's parameter ``<locals>.x``).
        """
        if isinstance(node, cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp):
            inner = Scope("function", f"{scope.prefix}<comprehension>.", scope)
            comp_for: cst.CompFor | None = node.for_in
            while comp_for is not None:
                for name in _targets(comp_for.target):
                    inner.bind(name, inner.prefix + name)
                comp_for = comp_for.inner_for_in
            return inner
        if type(node) is cst.Lambda:
            inner = Scope("function", f"{scope.prefix}<locals>.", scope)
            _bind_parameters(node.params, inner)
            return inner
        return None

    def lookup(self, name: str, scope: Scope) -> set[str]:
        """Return every qualified name ``name`` denotes when used in ``scope`` (empty if unbound).

        Unbound, a builtin is itself, and so is a standard module's name beside a ``*`` import
        (:data:`STANDARD_MODULES`).
        """
        current: Scope | None = scope
        first = True
        while current is not None:
            if (current.kind != "class" or first) and name in current.bindings:
                return current.bindings[name]
            first = False
            current = current.parent
        if name in BUILTINS:
            return {f"builtins.{name}"}
        return {name} if self.star_modules and name in STANDARD_MODULES else set()

    def qualified_names(self, node: cst.CSTNode, scope: Scope) -> set[str]:
        """Return the qualified names of a Name or Attribute chain used in ``scope``."""
        if type(node) is cst.Name:  # (not isinstance: see dotted)
            return self.lookup(node.value, scope)
        if type(node) is cst.Attribute:
            return {f"{base}.{node.attr.value}" for base in self.qualified_names(node.value, scope)}
        if type(node) is cst.Call:
            return self.qualified_names(node.func, scope)
        if type(node) is cst.Subscript:
            key = node.slice[0].slice if len(node.slice) == 1 else None
            if type(key) is cst.Index and type(key.value) is cst.SimpleString:
                text = text_value(key.value)  # (None for a bytes key)
                if text is not None and text in self.imported_as:
                    # ``stack["GRPOTrainer"]`` of ``return {"GRPOTrainer": GRPOTrainer, ...}``: what an
                    # import bound under that name, held in a table by it (imports made lazily)
                    return set(self.imported_as[text])
            return self.qualified_names(node.value, scope)
        return set()

    def is_imported(self, qualified: str) -> bool:
        """Say whether ``qualified`` is an imported name or an attribute of one."""
        known = self._imported_names.get(qualified)
        if known is None:
            parts = qualified.split(".")
            known = any(".".join(parts[:i]) in self.imported for i in range(1, len(parts) + 1))
            self._imported_names[qualified] = known
        return known

    def ancestry(self, qualified: str) -> set[str]:
        """Return every qualified name a local class derives from, here, transitively (itself included)."""
        if qualified not in self.class_bases:
            return {qualified}  # (most names asked about: no class of this file)
        seen: set[str] = set()
        pending = [qualified]
        while pending:
            current = pending.pop()
            if current not in seen:
                seen.add(current)
                pending.extend(self.class_bases.get(current, ()))
        return seen


def decorator_callee(decorator: cst.Decorator) -> cst.BaseExpression:
    """Return what a decorator names (``torch.no_grad`` of ``@torch.no_grad()`` and of ``@torch.no_grad``)."""
    found = decorator.decorator
    return found.func if type(found) is cst.Call else found
