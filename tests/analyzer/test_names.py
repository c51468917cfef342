"""The light resolver gives libcst's QualifiedNameProvider answers, on every detector example and more."""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider

from arb_audit.analyzer.detector import FileContext, RouteDetector, discover
from arb_audit.analyzer.names import NameResolver, literal_bool, literal_text
from arb_audit.analyzer.walk import run

EXTRA = [
    "import trl\nfrom trl import GRPOTrainer as G\nG(); trl.SFTTrainer(); trl.trainer.DPOTrainer()\n",
    "def main():\n    from trl import DPOTrainer\n    DPOTrainer()\nDPOTrainer()\n",
    "from trl.trainer.grpo_trainer import GRPOTrainer\nGRPOTrainer()\n",
    "try:\n    from trl import GRPOTrainer\nexcept ImportError:\n"
    "    from trl.trainer import GRPOTrainer\nGRPOTrainer()\n",
    "import torch.nn.functional as F\nclass L:\n"
    "    def f(self, x):\n        return F.logsigmoid(x), self.g(x), len(x)\n",
    "from . import utils\nfrom .. import pkg\nfrom .a.b import c as d\nutils.run(); pkg.x(); d()\n",
    "x = 1\ndef f(x):\n    return x()\nclass C:\n    x = 2\n    def m(self):\n        return x()\n",
    "def outer():\n    import vllm\n    def inner():\n        return vllm.LLM()\n    return inner\n",
    "import a.b.c\na.b.c.d(); a.x()\nfor i in range(3):\n    i()\nwith open('f') as h:\n    h.read()\n",
    "import torch\nfs = [f for f in funcs]\n[g() for g in fs]\n{k: v.item() for k, v in d.items()}\n"
    "def f(xs):\n"
    "    return [torch.tensor(x).sum() for x in xs], (lambda y: y())(f), list(h(1) for h in xs)\n",
]


class _Recorder(RouteDetector):
    """Records the resolver's names of every call's callee (test helper, not a detector)."""

    READS_INERT_CALLS = True  # (``len(x)`` too: every callee is compared)

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.seen: dict[int, frozenset[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not _keyed_by_import(node.func, self.context.resolver):
            self.seen[id(node.func)] = self.names(node.func)


def _keyed_by_import(func: cst.BaseExpression, resolver: NameResolver) -> bool:
    """Say whether a callee is a table's entry taken by the name an import bound (``stack["GRPOTrainer"]``).

    The stock provider names the table; ours names what the import bound under that key (a lazily
    imported class kept in a table by its own name): a deliberate difference. Other keys are compared.
    """
    return type(func) is cst.Subscript and any(
        type(e.slice) is cst.Index
        and type(e.slice.value) is cst.SimpleString
        and e.slice.value.evaluated_value in resolver.imported_as
        for e in func.slice
    )


class _Stock(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self, resolver: NameResolver) -> None:
        super().__init__()
        self.resolver = resolver
        self.seen: dict[int, set[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        if not _keyed_by_import(node.func, self.resolver):
            names = self.get_metadata(QualifiedNameProvider, node.func, set())
            self.seen[id(node.func)] = {n.name for n in names}


def _examples() -> list[str]:
    valid = [case.code for d in discover() for case in d.VALID]
    return valid + [case.code for d in discover() for case in d.INVALID] + EXTRA


@pytest.mark.parametrize("code", _examples())
def test_same_answers_as_the_stock_provider(code: str) -> None:
    module = cst.parse_module(code)
    resolver = NameResolver(module)
    stock = _Stock(resolver)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(stock)
    context = FileContext(resolver)
    recorder = _Recorder(context)
    run(module, [recorder], context)
    # The stock provider's answer for `"".join` and `(a * b).mean` is `builtins.None`: a bug (it looks
    # up the string "None"), not semantics; ours is no name.
    expected = {k: set() if v == {"builtins.None"} else v for k, v in stock.seen.items()}
    dead = "if False" in code or "if 0" in code or "while False" in code
    assert {k: v for k, v in expected.items() if k in recorder.seen} == recorder.seen
    assert dead or set(expected) == set(recorder.seen)  # calls in dead code are not walked


def test_a_literal_text_keeps_its_last_letters_and_drops_its_prefix() -> None:
    texts = [literal_text(cst.ensure_type(cst.parse_expression(c), cst.SimpleString)) for c in CODES]
    assert texts == ["sub", "advantages", "a\\nb", "grub", "test"]


CODES = ("'sub'", 'rb"advantages"', "'a\\nb'", 'u"grub"', "'''test'''")


def test_a_boolean_is_read_only_where_it_is_written_as_one() -> None:
    assert literal_bool(cst.parse_expression("True")) is True
    assert literal_bool(cst.parse_expression("False")) is False
    for text in ("1", "x", "'True'", "None", "not False"):
        assert literal_bool(cst.parse_expression(text)) is None, text


def test_a_table_entry_taken_by_an_imported_name_is_what_the_import_bound() -> None:
    code = (
        "def stack():\n    from trl import GRPOTrainer\n    return {'GRPOTrainer': GRPOTrainer}\n"
        "s = stack()\ns['GRPOTrainer'](model=m)\ns['Other'](x)\n"
    )
    module = cst.parse_module(code)
    resolver = NameResolver(module)
    found = []
    for line in module.body[-2:]:
        assert isinstance(line, cst.SimpleStatementLine) and isinstance(line.body[0], cst.Expr)
        call = line.body[0].value
        assert isinstance(call, cst.Call)
        found.append(resolver.qualified_names(call.func, resolver.module_scope))
    assert found == [{"trl.GRPOTrainer"}, {"s"}]


def test_standard_module_beside_a_star_import() -> None:
    """``from utils import *`` then ``json.dumps(row)``: the unbound standard module is itself; a name
    bound in the file, a third-party package's or no star import at all resolves as before."""

    def callees(source: str) -> list[set[str]]:
        module = cst.parse_module(source)
        resolver = NameResolver(module)
        found = []
        for statement in module.body:
            for small in getattr(statement, "body", ()):
                value = getattr(small, "value", None)
                if isinstance(value, cst.Call):
                    found.append(resolver.qualified_names(value.func, resolver.module_scope))
        return found

    assert callees("from utils import *\njson.dumps(r)\nnp.save(p, a)\n") == [{"json.dumps"}, set()]
    assert callees("json.dumps(r)\n") == [set()]
    assert callees("from utils import *\nfrom mine import json\njson.dumps(r)\n") == [{"mine.json.dumps"}]
