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


class _Calls(RouteDetector):
    """Records the callee of every call it is shown."""

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.called: list[str] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.called.append(cst.Module([]).code_for_node(node.func))


class _AllCalls(_Calls):
    READS_INERT_CALLS = True


def _calls(code: str) -> tuple[list[str], list[str]]:
    module = cst.parse_module(code)
    context = FileContext(NameResolver(module))
    some, every = _Calls(context), _AllCalls(context)
    walk.run(module, [some, every], context)
    return some.called, every.called


def test_calls_of_conversion_builtins_reach_only_detectors_that_read_them() -> None:
    code = "n = len(batch)\nif isinstance(t, Task):\n    out = model.generate(str(p))\n"
    some, every = _calls(code)
    assert some == ["model.generate"]  # (the call inside ``str(...)`` is still walked)
    assert every == ["len", "isinstance", "model.generate", "str"]
    # a file that binds the name itself calls its own function
    rebound = "def len(x):\n    return train(x)\n" + code
    assert _calls(rebound)[0] == ["train", "len", "model.generate"]


class _Leaves(_Calls):
    """Records the callee of every call it leaves."""

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.left: list[str] = []

    def leave_Call(self, original_node: cst.Call) -> None:
        self.left.append(cst.Module([]).code_for_node(original_node.func))


class _AllLeaves(_Leaves):
    READS_INERT_CALLS = True


def test_a_call_is_left_by_the_detectors_that_visited_it() -> None:
    module = cst.parse_module("n = len(f(x))\n")
    context = FileContext(NameResolver(module))
    some, every = _Leaves(context), _AllLeaves(context)
    walk.run(module, [some, every], context)
    assert (some.called, some.left) == (["f"], ["f"])
    assert (every.called, every.left) == (["len", "f"], ["f", "len"])


def test_a_function_s_own_nodes_leave_out_the_functions_and_lambdas_defined_in_it() -> None:
    module = cst.parse_module(
        "def score(x):\n    def inner():\n        return 1\n    key = lambda y: y\n    return x + 2\n"
    )
    function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    own = walk.own_descendants(function.body)
    returns = [n for n in own if type(n) is cst.Return]
    assert [type(r.value) for r in returns] == [cst.BinaryOperation]
    assert not any(type(n) is cst.Integer and n.value == "1" for n in own)
    assert any(type(n) is cst.Lambda for n in own) and not any(
        type(n) is cst.Name and n.value == "y" for n in own
    )
    every = walk.descendants(function.body)
    assert sum(type(n) is cst.Return for n in every) == 2
