"""The batched walk: what detectors read of a subtree while it runs is what they read outside it."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer import walk
from arb_audit.analyzer.detector import FileContext, RouteDetector
from arb_audit.analyzer.names import NameResolver


class _Reads(RouteDetector):
    """Reads the subtree of every assignment and call, twice, as several detectors do."""

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.read: list[tuple[cst.CSTNode, list[cst.CSTNode], list[cst.CSTNode]]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        self.read.append((node, walk.descendants(node), walk.descendants(node)))

    def visit_Call(self, node: cst.Call) -> None:
        self.read.append((node, walk.descendants(node), walk.descendants(node)))


CODE = """\
loss = model(**batch).loss
if False:
    optimizer.step(loss)
while x:
    y = [f(a) for a in g(b)]
"""


def test_subtrees_read_during_a_walk_are_those_read_outside_it() -> None:
    module = cst.parse_module(CODE)
    context = FileContext(NameResolver(module))
    reader = _Reads(context)
    walk.run(module, [reader], context)
    assert len(reader.read) == 5  # the assignments and calls walked (not the dead ``if``'s)
    for node, first, again in reader.read:
        assert again is first  # kept for the next reader
        outside = walk.descendants(node)
        assert outside is not first and outside == first  # after the walk: found afresh, the same
