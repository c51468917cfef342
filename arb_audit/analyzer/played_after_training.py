"""Episodes played once the training is done: an evaluation, not the samples a stage trains on.

TAXONOMY.md scopes online RL to the environment or tool loop that produces what a stage trains on:
"evaluation, demo and data-generation loops elsewhere in the file do not qualify it". A loop in a
function named for evaluating is left out by the detectors themselves; this reads the order of the
code instead. A script that trains (``for step ...: loss.backward()``) and then, in a later statement
of the same block, plays an environment's episodes with the model it trained and takes no step there
has evaluated that model: nothing the loop plays comes back to an update. The block is any run of
statements (a module, a function's body, an ``if __name__`` branch); a statement trains when a
gradient step is inside it or it calls a function of the file inside which one is. Statements are told
apart by their nodes, so no position is computed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

import libcst as cst

from arb_audit.analyzer.detector import Finding
from arb_audit.analyzer.detectors.environment import DEFINED
from arb_audit.analyzer.names import last_name

AFTER_TRAINING = "played after the training it follows, to evaluate (no update takes its episodes)"
"""Message a finding of episodes played after the training in its block is given; its signal becomes
``inference``: the model runs, no weights change with what it plays."""

_Place = tuple[Sequence[cst.CSTNode], int, "cst.CSTNode | None"]
"""Where a statement is: its block, its index there, the compound statement around the block."""

_CLAUSES = (cst.Else, cst.Finally, cst.ExceptHandler, cst.ExceptStarHandler, cst.If, cst.MatchCase)
"""Parts of a compound statement that hold a block of their own (``cst.If`` there is an ``elif``)."""
_DEFINITIONS = (cst.FunctionDef, cst.ClassDef)
"""Statements that run nothing where they stand (their bodies run where they are called)."""


def _blocks(node: cst.CSTNode) -> Iterator[Sequence[cst.CSTNode]]:
    """Yield the statement blocks directly inside a compound statement (body, else, handlers, elifs)."""
    for child in node.children:
        if isinstance(child, cst.IndentedBlock | cst.SimpleStatementSuite):
            yield child.body
        elif isinstance(child, _CLAUSES):
            yield from _blocks(child)


def _places(module: cst.Module) -> dict[int, _Place]:
    """Map each statement (small statements too, by their line) to its place, by node id."""
    places: dict[int, _Place] = {}
    pending: list[tuple[Sequence[cst.CSTNode], cst.CSTNode | None]] = [(module.body, None)]
    while pending:
        block, around = pending.pop()
        for index, statement in enumerate(block):
            places[id(statement)] = (block, index, around)
            if isinstance(statement, cst.SimpleStatementLine):
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


def _calls(node: cst.CSTNode) -> Iterator[str]:
    """Yield the last names of the callees of the calls inside a node (not inside its definitions)."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, cst.Call) and (name := last_name(current.func)):
            yield name
        pending.extend(c for c in current.children if not isinstance(c, _DEFINITIONS))


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
    stepping: set[int] = set()
    """Statements with a gradient step inside them, out to the function around it."""
    training_functions: set[str] = set()
    """Names of the file's functions (methods too) a gradient step is in, or that call one of them."""
    for step in steps:
        if (place := places.get(id(step.statement))) is None:
            continue
        for block, index, around in _outward(place, places):
            stepping.add(id(block[index]))
            if isinstance(around, cst.FunctionDef):
                training_functions.add(around.name.value)
    defined = {id(b[i]): b[i] for b, i, _ in places.values() if isinstance(b[i], cst.FunctionDef)}
    grown = True
    while grown:  # (a function calling a training function trains, as far as the calls go)
        grown = False
        for function in defined.values():
            assert isinstance(function, cst.FunctionDef)
            name = function.name.value
            if name not in training_functions and any(c in training_functions for c in _calls(function.body)):
                training_functions.add(name)
                grown = True

    def trains(statement: cst.CSTNode) -> bool:
        if isinstance(statement, _DEFINITIONS):
            return False
        return id(statement) in stepping or any(name in training_functions for name in _calls(statement))

    for found in played:
        assert found.statement is not None
        start = places.get(id(found.statement))
        if start is None or isinstance(start[0][start[1]], _DEFINITIONS):
            continue
        for block, index, _ in _outward(start, places):
            if trains(block[index]):
                break  # the episodes are played where the training is: they may feed it
            if any(trains(s) for s in block[:index]) and not any(trains(s) for s in block[index + 1 :]):
                at = findings.index(found)
                findings[at] = replace(
                    found, signal="inference", message=f"{found.message}: {AFTER_TRAINING}"
                )
                break
