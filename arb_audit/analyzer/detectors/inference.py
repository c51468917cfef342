"""Running a model without gradients: inference for scoring or serving."""

from __future__ import annotations

import builtins
import sys

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Finding, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.generation import SERVED
from arb_audit.analyzer.names import decorator_callee
from arb_audit.analyzer.walk import descendants

NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
"""Contexts and decorators that switch gradients off."""


TENSOR_METHODS = frozenset(
    {
        *("clone", "detach", "cpu", "cuda", "to", "item", "float", "half", "bfloat16", "double", "int"),
        *("long", "view", "reshape", "contiguous", "copy_", "add_", "mul_", "sub_", "div_", "zero_"),
        *("fill_", "clamp_", "t", "transpose", "permute", "size", "numel", "numpy", "tolist", "append"),
        *("extend", "items", "keys", "values", "get", "update", "format", "join", "split", "replace"),
        *("sum", "mean", "norm", "abs", "max", "min", "chunk", "squeeze", "unsqueeze", "flatten"),
        *("data_ptr", "dim", "type", "startswith", "endswith", "lower", "strip", "parameters"),
        *("named_parameters", "state_dict", "quantile", "requires_grad_", "lerp_", "addcmul_"),
        *("topk", "sort", "sign", "abs_", "masked_fill", "masked_fill_", "where", "kthvalue"),
        *("pow", "square", "sqrt", "exp", "log", "std", "var", "softmax", "log_softmax", "clamp", "clip"),
        *("narrow", "repeat", "expand", "split", "cumsum", "prod", "argmax", "argmin", "all", "any"),
        *("eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "nan_to_num", "round", "copy", "setdefault"),
    }
)
"""Methods of tensors, modules' weights, containers and strings: what a no-gradient block calls when it
only moves, rearranges or combines weights (resharding, copying, averaging), not when it runs a model."""
MODEL_PART_METHODS = frozenset(
    {
        *("get_input_embeddings", "get_output_embeddings", "resize_token_embeddings", "get_submodule"),
        *("get_parameter", "modules", "named_modules", "children", "named_children", "buffers"),
        *("named_buffers", "convert_tokens_to_ids", "convert_ids_to_tokens"),
    }
)
"""Methods that reach a model's parts or a tokenizer's vocabulary without running either: a no-gradient
block calling them sets weights by hand (a new token's embedding row), it runs no model."""
WEB_APPS = frozenset({"fastapi.FastAPI", "flask.Flask", "uvicorn.run"})
"""A web application built or run: the file answers HTTP requests."""
BUILTINS = frozenset(name for name in dir(builtins) if not name.startswith("_"))
"""Python's builtins (``len``, ``hasattr``, ``ValueError``): calling one runs no model."""
STANDARD_LIBRARY = frozenset({"torch", *sys.stdlib_module_names})
"""Top-level modules whose functions run no model: torch's own (tensors rearranged) and Python's."""
MAX_HELPER_DEPTH = 4
"""How deep calls through the file's own functions are followed to see whether a block runs a model."""


class Inference(RouteDetector):
    """``torch.no_grad()`` or ``torch.inference_mode()`` around a model run: not trained, here.

    In a file with no training stage this is evaluation or serving (a reward-model server, a scorer);
    in a training file it is only the reference model's or the evaluation's forward pass. A block that
    only calls torch's functions, Python's (builtins, the standard library: ``warnings.warn``) and
    tensors' methods (``torch.cat(shards)``, ``w.clone().detach()``) rearranges weights: nothing is
    run. A function of the file the block calls is judged by its own body (a ``safe_copy(src, dst)``
    helper that checks shapes runs no model). A context chosen by a condition or kept in a name (``ctx
    = torch.inference_mode()``, then ``with ctx:``) is read the same way; one only made and returned
    (a ``maybe_no_grad()`` helper) runs nothing here. In a file that builds a web application (a
    retrieval or embedding server) the model runs to answer requests: served, like generation there.
    """

    TRIGGERS = ("no_grad", "inference_mode")

    VALID = (
        Valid("import torch\nx = torch.zeros(3)\n"),
        Valid("no_grad = True\n"),
        Valid(
            "import torch\nwith torch.no_grad():\n    merged = torch.cat(tensors, 0)\n"
            "    for r in range(n):\n        out[r][key] = merged[r].clone().detach()\n"
        ),
        Valid(
            "import torch, contextlib\ndef maybe_no_grad(enabled):\n"
            "    return torch.no_grad() if enabled else contextlib.nullcontext()\n"
        ),
        Valid(
            "import torch\nwith torch.no_grad():\n    for name, p in base.named_parameters():\n"
            "        p.copy_(0.5 * sa[name] + 0.5 * sb[name])\n"
        ),
        Valid(
            "import torch\n@torch.no_grad()\ndef convert(hf, mg):\n"
            "    if hasattr(hf, 'bias'):\n        safe_copy(hf.bias, mg.bias)\n"
            "def safe_copy(src, dst):\n    assert src.shape == dst.shape\n    dst.copy_(src)\n"
        ),
        # a new token's embedding row set by hand: weight surgery, no model run
        Valid(
            "import torch\nmodel.resize_token_embeddings(len(tok))\nwith torch.no_grad():\n"
            "    emb = model.get_input_embeddings().weight\n"
            "    emb[tok.convert_tokens_to_ids('<answer>')] = emb[old_ids].mean(dim=0)\n"
        ),
    )
    INVALID = (
        Invalid("import torch\nwith torch.no_grad():\n    scores = model(**batch).logits\n", "inference"),
        Invalid("import torch\n@torch.inference_mode()\ndef score(x):\n    return model(x)\n", "inference"),
        Invalid(
            "import torch\nfrom fastapi import FastAPI\napp = FastAPI()\n@torch.no_grad()\n"
            "def encode(q):\n    return encoder(q)\n",
            "inference",
            variant=SERVED,
        ),
        Invalid(
            "import torch\nfrom flask import Flask\nwith torch.no_grad():\n    scores = model(test_set)\n"
            "app = Flask(__name__)\n",
            "inference",
        ),
        Invalid(
            "import torch\nwith torch.no_grad():\n    out = self.reward_model.score(texts)\n", "inference"
        ),
        Invalid(
            "import torch\nwith torch.no_grad():\n    scores = [score(t) for t in texts]\n"
            "def score(text):\n    return rm(**tok(text)).logits\n",
            "inference",
        ),
        Invalid(
            "import torch, contextlib\nctx = torch.no_grad() if not grad else contextlib.nullcontext()\n"
            "with ctx:\n    out = model(**batch)\n",
            "inference",
        ),
        Invalid(
            "import torch, contextlib\n"
            "with (torch.no_grad() if not grad else contextlib.nullcontext()):\n    out = model(**batch)\n",
            "inference",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.contexts: set[str] = set()
        """Names bound to a no-gradient context (``ctx = torch.no_grad() if eval else nullcontext()``)."""
        self.serves = False
        """Whether the file builds or runs a web application."""
        self.in_functions: list[Finding] = []
        """Findings inside functions: what a web application's handlers may run per request."""
        self.bodies: dict[str, cst.BaseSuite] = {}
        """The body of each function the file defines, by name."""
        self.pending: list[tuple[cst.CSTNode, cst.CSTNode | None, bool, set[str]]] = []
        """No-gradient blocks that call only functions that may be the file's own: (the context or
        decorator, its statement, whether it is in a function, the names called), decided at the end,
        when every function's body has been seen."""

    def visit_Call(self, node: cst.Call) -> None:
        self.serves = self.serves or bool(self.names(node.func) & WEB_APPS)

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, statement, in_function, called in self.pending:
            if self._helpers_run(called, MAX_HELPER_DEPTH, set()):
                self._report(node, in_function, statement)
        if self.serves:
            # (what runs at module level runs once, before any request: an evaluation it serves)
            for finding in self.in_functions:
                finding.variant = SERVED

    def _report(
        self, node: cst.CSTNode, in_function: bool = False, statement: cst.CSTNode | None = None
    ) -> None:
        finding = self.report(node, "inference", "runs the model without gradients", statement=statement)
        if in_function or self.enclosing():
            self.in_functions.append(finding)

    def _no_grad(self, expression: cst.BaseExpression) -> bool:
        """Say whether an expression is, or may be, a no-gradient context (a conditional choosing one)."""
        if type(expression) is cst.Name:
            return expression.value in self.contexts
        nodes = (expression, *descendants(expression)) if type(expression) is cst.IfExp else (expression,)
        return any(type(n) is cst.Call and self.names(n.func) & NO_GRAD for n in nodes)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call | cst.IfExp) and self._no_grad(node.value):
            self.contexts.update(t.target.value for t in node.targets if type(t.target) is cst.Name)

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if self._no_grad(item.item):
                self._decide(item.item, node.body)
                return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.bodies[node.name.value] = node.body
        for decorator in node.decorators:
            if self.names(decorator_callee(decorator)) & NO_GRAD:
                self._decide(decorator.decorator, node.body, in_function=True)  # (it runs when called)
                return

    def _decide(self, node: cst.CSTNode, body: cst.CSTNode, in_function: bool = False) -> None:
        """Report a no-gradient block that runs a model.

        One that calls only what may be the file's own functions waits for the end of the file.
        """
        called = self._called(body)
        if called is None:
            self._report(node, in_function)
        elif called:
            statement = self.context.statements[-1] if self.context.statements else None
            self.pending.append((node, statement, in_function or bool(self.enclosing()), called))

    def _helpers_run(self, called: set[str], depth: int, seen: set[str]) -> bool:
        """Say whether any of the functions called runs a model: one the file does not define may."""
        for name in called - seen:
            seen.add(name)
            body = self.bodies.get(name)
            if body is None or depth == 0:
                return True
            inner = self._called(body)
            if inner is None or self._helpers_run(inner, depth - 1, seen):
                return True
        return False

    def _called(self, body: cst.CSTNode) -> set[str] | None:
        """Return the plain names a block calls besides torch's and Python's functions and tensor methods.

        Each may be the file's own function; None when it calls anything else (a model).
        """
        called: set[str] = set()
        for node in descendants(body):
            if type(node) is not cst.Call:
                continue
            func = node.func
            if type(func) is cst.Attribute:
                if func.attr.value in TENSOR_METHODS or func.attr.value in MODEL_PART_METHODS:
                    continue
                if any(_library(q) for q in self.names(func)):
                    continue
                return None
            if type(func) is not cst.Name:
                return None
            qualified = self.names(func)
            if func.value in BUILTINS or any(_library(q) for q in qualified):
                continue
            if any("." in q for q in qualified):
                return None  # imported: not the file's own
            called.add(func.value)
        return called


def _library(qualified: str) -> bool:
    """Say whether a qualified name is torch's or the standard library's (``warnings.warn``): no model."""
    return qualified.split(".", 1)[0] in STANDARD_LIBRARY
