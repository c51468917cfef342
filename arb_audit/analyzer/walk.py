"""One batched pass of every detector over a libcst module, without libcst's generic visitor machinery.

libcst's own traversal rebuilds children lists at every node and visits every whitespace token; on
real training scripts it costs more than parsing. This walker reads each node type's child fields once
(cached), skips whitespace and punctuation, dispatches ``visit_<Node>``/``leave_<Node>`` to all
detectors like ``MetadataWrapper.visit_batched`` does, keeps the current scope for name lookups, and
never enters dead code (``if False:`` bodies, ``while False:``).
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import libcst as cst

from arb_audit.analyzer.detector import FileContext, RouteDetector
from arb_audit.analyzer.names import is_dead

_SKIPPED_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "leading_lines",
        "lines_after_decorators",
        "header",
        "footer",
        "trailing_whitespace",
        "newline",
        "semicolon",
        "comma",
        "equal",
        "dot",
        "indent",
        "whitespace",
        "default_indicator",
        "colon",
        "arrow",
        "star",
        # punctuation and operators: no detector hooks them; those reading an operator read the field
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "operator",
    }
)
_LEAF_TYPES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comment,
    cst.MaybeSentinel,
)
_FIELDS: dict[type, Callable[[Any], tuple[Any, ...]]] = {}
_TEXT_LEAVES = frozenset(
    {cst.Name, cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.FormattedStringText}
)
"""Nodes holding only text: a third of a module's nodes are names, not worth a look for children."""
_STATEMENT_BASES = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
_STATEMENT: dict[type, bool] = {}


def _is_statement(node_type: type) -> bool:
    is_statement = _STATEMENT.get(node_type)
    if is_statement is None:
        is_statement = _STATEMENT[node_type] = issubclass(node_type, _STATEMENT_BASES)
    return is_statement


Hook = Callable[[Any], object]
_SCOPE_TYPES = frozenset(
    {cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp}
)
"""Nodes that open a scope of names (the resolver's, or one made as they are entered)."""


def _fields(node_type: type) -> Callable[[Any], tuple[Any, ...]]:
    """Return what reads a node's child fields, in order, as one tuple (one C call per node)."""
    read = _FIELDS.get(node_type)
    if read is None:
        names = [
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        ]
        # (attrgetter of one name answers the value, not a tuple: ``__class__`` pads it to one without
        # a Python call per node; a class is never walked, so the padding is no child)
        read = operator.attrgetter(*names, *["__class__"] * (2 - len(names)))
        _FIELDS[node_type] = read
    return read


_WALKED: dict[type, bool] = {}


def _walked(node_type: type) -> bool:
    """Say whether nodes of this type are walked (whitespace, comments and sentinels are not)."""
    walked = _WALKED.get(node_type)
    if walked is None:
        walked = _WALKED[node_type] = issubclass(node_type, cst.CSTNode) and not issubclass(
            node_type, _LEAF_TYPES
        )
    return walked


def _children(node: cst.CSTNode, walked: dict[type, bool] = _WALKED) -> list[cst.CSTNode]:
    """Children in field order; a dead ``if``/``while`` keeps only its test and ``else``.

    ``walked``: whether nodes of a type are walked, as :func:`_walked` says unless a caller says no.
    """
    # Type-keyed caches instead of isinstance: libcst's node bases are ABCs, slow to check.
    node_type = type(node)
    if (node_type is cst.If or node_type is cst.While) and is_dead(node.test):  # type: ignore[attr-defined]
        orelse = node.orelse  # type: ignore[attr-defined]
        return [node.test] + ([orelse] if orelse is not None else [])  # type: ignore[attr-defined]
    found: list[cst.CSTNode] = []
    read = _FIELDS.get(node_type) or _fields(node_type)
    for value in read(node):
        value_type = type(value)
        if value_type is tuple or value_type is list:
            for v in value:
                w = walked.get(type(v))
                if w is None:
                    w = walked[type(v)] = _walked(type(v))
                if w:
                    found.append(v)
        else:
            w = walked.get(value_type)
            if w is None:
                w = walked[value_type] = _walked(value_type)
            if w:
                found.append(value)
    return found


_HOOKS: dict[type, tuple[tuple[str, str, str], ...]] = {}


def _hooks(detector_type: type) -> tuple[tuple[str, str, str], ...]:
    """``(visit|leave, node type, method name)`` of a detector class, found once per class.

    libcst's ``get_visitors`` inspects the instance on every call, which cost more than the walk.
    """
    hooks = _HOOKS.get(detector_type)
    if hooks is None:
        # Only what the detector itself defines: libcst's base visitor has a no-op for every node type.
        own = {
            name
            for klass in detector_type.__mro__
            if issubclass(klass, RouteDetector) and klass is not RouteDetector
            for name in vars(klass)
        }
        hooks = tuple(
            (kind, node_type, name)
            for name in sorted(own)
            for kind, _, node_type in [name.partition("_")]
            if kind in ("visit", "leave") and node_type[:1].isupper() and "_" not in node_type
        )
        _HOOKS[detector_type] = hooks
    return hooks


class _Below(threading.local):
    """What :func:`descendants` found under each node of the tree being walked on this thread."""

    found: dict[int, tuple[cst.CSTNode, list[cst.CSTNode]]] | None = None
    """By ``id`` of the node, with the node (a node built and freed during the walk, not one of the
    tree's, may leave its id to another); None outside a walk."""


_BELOW = _Below()


@contextmanager
def _descendants_kept() -> Iterator[None]:
    """Keep what :func:`descendants` finds until the walk ends: detectors ask it of the same nodes.

    Several detectors read the subtree of the same assignment, loop or test; the tree is not changed
    and its nodes live as long as the walk, so their ids stand for them until then.
    """
    outer = _BELOW.found
    _BELOW.found = {}
    try:
        yield
    finally:
        _BELOW.found = outer


INERT_BUILTINS = frozenset(
    {
        *("len", "range", "isinstance", "issubclass", "str", "int", "float", "bool", "list", "tuple"),
        *("set", "frozenset", "enumerate", "hasattr", "type", "super", "any", "all", "iter", "next"),
        *("repr", "abs", "round", "reversed", "callable", "id", "hash", "ord", "chr", "format", "divmod"),
    }
)
"""Builtins whose calls only detectors that read every call's arguments need (``READS_INERT_CALLS``:
``isinstance(task, lm_eval.tasks.ConfigurableTask)`` names an evaluation library): conversions,
counts, type tests. Their arguments (and calls inside them) are still walked. Not ``open``, ``print``,
``input``, ``getattr``, ``dict``, ``zip``, ``sum``, ``map``, ``max``, ``sorted``: detectors read those
calls themselves (a file opened, a metric printed, a class loaded by name, a route table, weights
summed, a metric mapped, a best sample kept)."""


def _inert(context: FileContext) -> frozenset[str]:
    """Return the inert builtins this file does not rebind anywhere (a ``def len``, a parameter ``type``)."""
    resolver = context.resolver
    bound = set(resolver.module_scope.bindings)
    for scope in resolver.scopes.values():
        bound.update(scope.bindings)
    return INERT_BUILTINS - bound


def run(module: cst.Module, detectors: Sequence[RouteDetector], context: FileContext) -> None:
    """Walk ``module`` once, dispatching every detector's visit and leave hooks."""
    with _descendants_kept():
        _run(module, detectors, context)


def _run(module: cst.Module, detectors: Sequence[RouteDetector], context: FileContext) -> None:
    visits: dict[str, list[Hook]] = {}
    leaves: dict[str, list[Hook]] = {}
    for detector in detectors:
        for kind, hooked, name in _hooks(type(detector)):
            (visits if kind == "visit" else leaves).setdefault(hooked, []).append(getattr(detector, name))
    # Per node type, once per file: its visit hooks, its leave hooks, whether it is a statement, and
    # whether it opens a scope. A node with nothing to do on leaving gets no leave marker.
    plans: dict[type, tuple[tuple[Hook, ...], tuple[Hook, ...], bool, bool]] = {}
    # Text-only nodes no detector of this file hooks are not even put on the stack (names: a third)
    with_hooks = visits.keys() | leaves.keys()
    walked: dict[type, bool] = dict(_WALKED)
    walked.update((t, False) for t in _TEXT_LEAVES if t.__name__ not in with_hooks)
    pending: list[Any] = [module]
    outer: list[Any] = []
    statements = context.statements
    inert = _inert(context)
    # the hooks an inert call is dispatched to: only the detectors that read every call's arguments
    reading = [d for d in detectors if d.READS_INERT_CALLS]
    inert_plan = (
        tuple(getattr(d, n) for d in reading for k, t, n in _hooks(type(d)) if (k, t) == ("visit", "Call")),
        tuple(getattr(d, n) for d in reading for k, t, n in _hooks(type(d)) if (k, t) == ("leave", "Call")),
        False,
        False,
    )
    while pending:
        item = pending.pop()
        if type(item) is tuple:  # leaving (node,), or (node, plan) for a plan not its type's
            node = item[0]
            visit_hooks, leave_hooks, is_statement, is_scope = (
                item[1] if len(item) == 2 else plans[type(node)]
            )
            for hook in leave_hooks:
                try:  # noqa: SIM105 (see below)
                    hook(node)
                except (SyntaxError, ValueError):
                    pass
            if is_scope:
                context.scope = outer.pop()
            if is_statement:
                statements.pop()
            continue
        node = item
        node_type = type(node)
        plan = plans.get(node_type)
        if plan is None:
            name = node_type.__name__
            scope = node_type in _SCOPE_TYPES
            plan = plans[node_type] = (
                tuple(visits.get(name, ())),
                tuple(leaves.get(name, ())),
                _is_statement(node_type),
                scope,
            )
        if node_type is cst.Call and type(node.func) is cst.Name and node.func.value in inert:
            plan = inert_plan  # (``len(batch)``: most detectors' hooks have nothing to read in it)
        visit_hooks, leave_hooks, is_statement, is_scope = plan
        if is_statement:
            statements.append(node)
        if is_scope:
            outer.append(context.scope)
            opened = context.resolver.scopes.get(id(node)) or context.resolver.inner_scope(
                node, context.scope
            )
            context.scope = opened or context.scope
        for hook in visit_hooks:
            # A literal libcst parsed but cannot evaluate (an unknown named escape: ``evaluated_value``
            # raises) silences the hook for this node only; the file is still analysed. try/except
            # costs nothing until it catches, contextlib.suppress would build an object per call.
            try:  # noqa: SIM105
                hook(node)
            except (SyntaxError, ValueError):
                pass
        if leave_hooks or is_statement or is_scope:
            pending.append((node,) if plan is not inert_plan else (node, plan))
        if node_type not in _TEXT_LEAVES:
            children = _children(node, walked)
            children.reverse()
            pending.extend(children)


def descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Return every node under ``node`` (dead code excluded), without visiting hooks.

    During a walk the list is kept for the next caller asking of the same node: do not change it.
    """
    kept = _BELOW.found
    if kept is not None:
        entry = kept.get(id(node))
        if entry is None or entry[0] is not node:
            entry = kept[id(node)] = (node, _descendants(node))
        return entry[1]
    return _descendants(node)


def own_descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Return every node under ``node`` outside the functions and lambdas defined in it (dead code excluded).

    What a function's body does itself: a nested function's code runs where that function is called.
    """
    found: list[cst.CSTNode] = []
    pending = _children(node)
    while pending:
        current = pending.pop()
        found.append(current)
        if type(current) is not cst.FunctionDef and type(current) is not cst.Lambda:
            pending.extend(_children(current))
    return found


def _descendants(node: cst.CSTNode) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    pending = _children(node)
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(_children(current))
    return found
