"""Episodes played once the training is done: an evaluation, not the samples a stage trains on.

TAXONOMY.md scopes online RL to the environment or tool loop that produces what a stage trains on:
"evaluation, demo and data-generation loops elsewhere in the file do not qualify it". A loop in a
function named for evaluating is left out by the detectors themselves; this reads the order of the
code instead. A script that trains (``for step ...: loss.backward()``) and then, in a later statement
of the same block, plays an environment's episodes with the model it trained and takes no step there
has evaluated that model: nothing the loop plays comes back to an update. The block is any run of
statements (a module, a function's body, an ``if __name__`` branch); a statement trains when a
gradient step is inside it or it calls a function of the file inside which one is. In a block that may
run again (a loop's body, a function's called from a loop), an update earlier in the text may come
later in time: there the episodes count as after the training only when the update is written out in
the block (not a call of the file's, which may read anything) and reads nothing they, or the
statements after them, fill or bind (a buffer).
Statements are told apart by their nodes, so no position is computed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import libcst as cst

from arb_audit.analyzer.detector import Finding
from arb_audit.analyzer.detectors.environment import DEFINED
from arb_audit.analyzer.walk import descendants

AFTER_TRAINING = "played after the training it follows, to evaluate (no update takes its episodes)"
"""Message a finding of episodes played after the training in its block is given; its signal becomes
``inference``: the model runs, no weights change with what it plays."""

_Place = tuple[Sequence[cst.CSTNode], int, "cst.CSTNode | None"]
"""Where a statement is: its block, its index there, the compound statement around the block."""

_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
"""Statements that run nothing where they stand (their bodies run where they are called)."""


def _suite(suite: cst.BaseSuite | None) -> Sequence[cst.CSTNode]:
    return suite.body if suite is not None else ()


def _blocks(node: cst.CSTNode) -> Iterator[Sequence[cst.CSTNode]]:
    """Yield the statement blocks directly inside a compound statement (body, else, handlers, elifs).

    Read from the fields themselves: libcst's ``children`` rebuilds its list through a visitor.
    """
    body = getattr(node, "body", None)
    if isinstance(body, cst.BaseSuite):
        yield body.body
    if type(node) is cst.Match:
        for case in node.cases:
            yield _suite(case.body)
    for handler in getattr(node, "handlers", ()):
        yield _suite(handler.body)
    orelse = getattr(node, "orelse", None)
    while type(orelse) is cst.If:  # elif: its own body, then its own else
        yield _suite(orelse.body)
        orelse = orelse.orelse
    if type(orelse) is cst.Else:
        yield _suite(orelse.body)
    finalbody = getattr(node, "finalbody", None)
    if type(finalbody) is cst.Finally:
        yield _suite(finalbody.body)


def _places(module: cst.Module) -> dict[int, _Place]:
    """Map each statement (small statements too, by their line) to its place, by node id."""
    places: dict[int, _Place] = {}
    pending: list[tuple[Sequence[cst.CSTNode], cst.CSTNode | None]] = [(module.body, None)]
    while pending:
        block, around = pending.pop()
        for index, statement in enumerate(block):
            places[id(statement)] = (block, index, around)
            if type(statement) is cst.SimpleStatementLine:
                for small in statement.body:
                    places[id(small)] = (block, index, around)
            else:
                pending.extend((inner, statement) for inner in _blocks(statement))
    return places


def _outward(place: _Place, places: dict[int, _Place]) -> Iterator[_Place]:
    """Yield the place of a statement, then of each compound statement around it, to its function's body."""
    while True:
        yield place
        around = place[2]
        if around is None or isinstance(around, _DEFINITIONS) or id(around) not in places:
            return
        place = places[id(around)]


OTHER_OBJECTS_METHODS = frozenset(
    {
        *(
            "update",
            "append",
            "extend",
            "add",
            "insert",
            "pop",
            "remove",
            "clear",
            "copy",
            "get",
            "setdefault",
        ),
        *("items", "keys", "values", "train", "eval", "to", "cuda", "cpu", "run", "start", "close", "reset"),
    }
)
"""Methods of a file's class that a call on another object, spelled the same, is more likely to mean: a
container's (``stats.update(...)``), a module's mode (``model.train()``), a process's."""
OWN_RECEIVERS = frozenset({"self", "cls"})


def _called(node: cst.CSTNode, own: frozenset[str] = OWN_RECEIVERS) -> frozenset[str]:
    """Return the names of the functions and methods the calls inside a node may reach in the file.

    ``f(...)`` and ``self.f(...)`` name them, and so does a call on an object built from a class of the
    file (``own``: ``agent = Agent(...)``); ``x.update(...)`` on another object names a method of the
    file only when it is no method other objects have under that name (a dict's, a module's mode).
    """
    called = set()
    for n in descendants(node):
        if type(n) is not cst.Call:
            continue
        func = n.func
        if type(func) is cst.Name:
            called.add(func.value)
        elif type(func) is cst.Attribute and (
            func.attr.value not in OTHER_OBJECTS_METHODS
            or (type(func.value) is cst.Name and func.value.value in own)
        ):
            called.add(func.attr.value)
    return frozenset(called)


def _bound(node: cst.CSTNode) -> set[str]:
    """Return the names a statement binds (assignment and loop targets, ``+=``)."""
    bound: set[str] = set()
    for n in (node, *descendants(node)):
        targets: list[cst.BaseExpression] = []
        if type(n) is cst.Assign:
            targets = [t.target for t in n.targets]
        elif type(n) is cst.AugAssign or type(n) is cst.AnnAssign or type(n) is cst.For:
            targets = [n.target]
        for target in targets:
            bound.update(t.value for t in (target, *descendants(target)) if type(t) is cst.Name)
    return bound


def _filled(node: cst.CSTNode) -> set[str]:
    """Return the stores a statement fills.

    Receivers of ``append``/``extend``..., items assigned (``buffer[i] = ...``), accumulators (``total +=
    r``); a name merely rebound (``r = ...``) is no store.
    """
    filled: set[str] = set()
    for n in (node, *descendants(node)):
        targets: list[cst.BaseExpression] = []
        if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in FILLING:
            targets = [n.func.value]
        elif type(n) is cst.AugAssign:
            targets = [n.target]
        elif type(n) is cst.Assign:
            targets = [t.target.value for t in n.targets if type(t.target) is cst.Subscript]
        for target in targets:
            if type(target) is cst.Name:
                filled.add(target.value)
            elif type(target) is cst.Attribute:
                filled.add(target.attr.value)
    return filled


def _read(node: cst.CSTNode) -> set[str]:
    """Return the names and attributes a statement spells, less those it only binds (``wins = 0``)."""
    bound = {
        id(t.target)
        for n in (node, *descendants(node))
        if type(n) is cst.Assign
        for t in n.targets
        if type(t.target) is cst.Name
    }
    return {
        t.value if type(t) is cst.Name else t.attr.value  # type: ignore[union-attr]
        for t in descendants(node)
        if (type(t) is cst.Name and id(t) not in bound) or type(t) is cst.Attribute
    }


FILLING = frozenset({"append", "extend", "add", "insert", "put", "push", "update", "store", "add_trajectory"})
"""Methods that fill the object they are called on (a buffer the episodes are kept in)."""


class _Training:
    """Which statements of a file train: a gradient step is inside, or a call to a function that has one.

    The functions are read only when a statement is asked of that no step is inside.
    """

    def __init__(self, places: dict[int, _Place], steps: list[Finding]) -> None:
        self.places = places
        self.stepping: set[int] = set()
        """Statements with a gradient step inside them, out to the function around it."""
        self.stepped: set[str] = set()
        """Names of the functions (methods too) a gradient step is in."""
        for step in steps:
            if (place := places.get(id(step.statement))) is None:
                continue
            for block, index, around in _outward(place, places):
                self.stepping.add(id(block[index]))
                if type(around) is cst.FunctionDef:
                    self.stepped.add(around.name.value)
        self._functions: set[str] | None = None
        self._trains: dict[int, bool] = {}
        classes = {
            statement.name.value
            for block, index, _ in places.values()
            if isinstance(statement := block[index], cst.ClassDef)
        }
        self.own = OWN_RECEIVERS | {
            t.target.value
            for block, index, _ in places.values()
            for statement in (block[index],)
            if type(statement) is cst.SimpleStatementLine
            for small in statement.body
            if type(small) is cst.Assign
            and type(small.value) is cst.Call
            and type(small.value.func) is cst.Name
            and small.value.func.value in classes
            for t in small.targets
            if type(t.target) is cst.Name
        }
        """``self``, ``cls`` and names bound to an object of a class of the file (``agent = Agent()``)."""
        self._blocks: dict[int, _Block] = {}
        self._in_loops: frozenset[str] | None = None
        """Names of the functions called inside a loop of the file (their bodies run again)."""

    def functions(self) -> set[str]:
        """Return the names of the file's functions that train, directly or through the calls they make."""
        if self._functions is None:
            defined = [
                block[index]
                for block, index, _ in self.places.values()
                if type(block[index]) is cst.FunctionDef
            ]
            callers: dict[str, set[str]] = {}
            """Each name called, with the functions calling it."""
            for function in defined:
                assert isinstance(function, cst.FunctionDef)
                for name in _called(function.body, self.own):
                    callers.setdefault(name, set()).add(function.name.value)
            # a function calling a training function trains, as far as the calls go (each name once)
            training = set(self.stepped)
            pending = list(training)
            while pending:
                for caller in callers.get(pending.pop(), ()):
                    if caller not in training:
                        training.add(caller)
                        pending.append(caller)
            self._functions = training
        return self._functions

    def trains(self, statement: cst.CSTNode) -> bool:
        """Say whether running ``statement`` takes a gradient step (a definition runs nothing)."""
        if isinstance(statement, _DEFINITIONS):
            return False
        known = self._trains.get(id(statement))
        if known is None:
            known = id(statement) in self.stepping or bool(_called(statement, self.own) & self.functions())
            self._trains[id(statement)] = known
        return known

    def repeated(self, around: cst.CSTNode | None) -> bool:
        """Say whether a block may run again: a loop's body, or a function's called from inside a loop."""
        if isinstance(around, cst.For | cst.While):
            return True
        if not isinstance(around, cst.FunctionDef):
            return False
        if self._in_loops is None:
            loops = {
                id(statement): statement
                for block, index, _ in self.places.values()
                if isinstance(statement := block[index], cst.For | cst.While)
            }
            self._in_loops = frozenset().union(*(_called(loop.body, self.own) for loop in loops.values()))
        return around.name.value in self._in_loops

    def block(self, statements: Sequence[cst.CSTNode]) -> _Block:
        """Return what is known of a block's statements, worked out once for every finding in it."""
        known = self._blocks.get(id(statements))
        if known is None:
            known = self._blocks[id(statements)] = _Block(statements, self)
        return known


class _Block:
    """A block's statements: which train, and, before and from each, what they read and bind."""

    def __init__(self, statements: Sequence[cst.CSTNode], training: _Training) -> None:
        trains = [training.trains(s) for s in statements]
        by_call = [
            t and not isinstance(s, _DEFINITIONS) and id(s) not in training.stepping
            for s, t in zip(statements, trains, strict=True)
        ]
        self.trained_by_call_before = [any(by_call[:i]) for i in range(len(by_call))]
        """Whether a statement before each one trains only through a call of the file's functions."""
        self.trained_before = [any(trains[:i]) for i in range(len(trains))]
        """Whether a statement before each one trains."""
        self.trained_after = [any(trains[i + 1 :]) for i in range(len(trains))]
        """Whether a statement after each one trains."""
        self.statements = statements
        self._read_before: list[tuple[set[str], set[str]]] | None = None
        self._bound_from: list[set[str]] | None = None

    def read_before(self, index: int) -> tuple[set[str], set[str]]:
        """Return what the statements before ``index`` read: all of it, and what comes from outside them."""
        if self._read_before is None:
            seen: set[str] = set()
            outside: set[str] = set()
            self._read_before = []
            for statement in self.statements:
                self._read_before.append((set(seen), set(outside)))
                read = _read(statement)
                seen |= read
                outside |= read - _bound(statement)
        return self._read_before[index]

    def bound_from(self, index: int) -> set[str]:
        """Return what the statements from ``index`` on bind or fill."""
        if self._bound_from is None:
            later: set[str] = set()
            self._bound_from = []
            for statement in reversed(self.statements):
                later |= _bound(statement) | _filled(statement)
                self._bound_from.append(set(later))
            self._bound_from.reverse()
        return self._bound_from[index]


def mark_played_after_training(module: cst.Module, findings: list[Finding]) -> None:
    """Turn the episodes played after the training in their block into model runs (see the module)."""
    played = [
        f
        for f in findings
        if f.path is None
        and f.statement is not None
        and (f.signal == "interactive" or (f.signal == "environment" and f.variant != DEFINED))
    ]
    steps = [
        f for f in findings if f.signal == "gradient_step" and f.path is None and f.statement is not None
    ]
    if not played or not steps:
        return
    places = _places(module)
    training = _Training(places, steps)
    at = {id(f): i for i, f in enumerate(findings)}
    for found in played:
        start = places.get(id(found.statement))
        if start is None or isinstance(start[0][start[1]], _DEFINITIONS):
            continue
        for statements, index, around in _outward(start, places):
            if training.trains(statements[index]):
                break  # the episodes are played where the training is: they may feed it
            block = training.block(statements)
            if not block.trained_before[index] or block.trained_after[index]:
                continue
            if training.repeated(around):
                # in a loop, or a function called from one, an update before it in the text may come
                # after it in time: it may read what the episodes fill (a buffer), or what they or the
                # statements after them bind; an update through a call of the file's may read anything
                if block.trained_by_call_before[index]:
                    break
                read, from_outside = block.read_before(index)
                if _filled(statements[index]) & read or block.bound_from(index) & from_outside:
                    break
            findings[at[id(found)]] = replace(
                found, signal="inference", message=f"{found.message}: {AFTER_TRAINING}"
            )
            break
