"""Running a model without gradients: inference for scoring or serving."""

from __future__ import annotations

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
    }
)
"""Methods of tensors, modules' weights, containers and strings: what a no-gradient block calls when it
only moves, rearranges or combines weights (resharding, copying, averaging), not when it runs a model."""
WEB_APPS = frozenset({"fastapi.FastAPI", "flask.Flask", "uvicorn.run"})
"""A web application built or run: the file answers HTTP requests."""
BUILTINS = frozenset(
    {"range", "len", "print", "enumerate", "zip", "list", "dict", "tuple", "set", "isinstance", "sorted"}
)


class Inference(RouteDetector):
    """``torch.no_grad()`` or ``torch.inference_mode()`` around a model run: not trained, here.

    In a file with no training stage this is evaluation or serving (a reward-model server, a scorer);
    in a training file it is only the reference model's or the evaluation's forward pass. A block that
    only calls torch's functions and tensors' methods (``torch.cat(shards)``, ``w.clone().detach()``)
    rearranges weights: nothing is run. A context chosen by a condition or kept in a name (``ctx =
    torch.inference_mode()``, then ``with ctx:``) is read the same way; one only made and returned (a
    ``maybe_no_grad()`` helper) runs nothing here. In a file that builds a web application (a
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

    def visit_Call(self, node: cst.Call) -> None:
        self.serves = self.serves or bool(self.names(node.func) & WEB_APPS)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.serves:
            # (what runs at module level runs once, before any request: an evaluation it serves)
            for finding in self.in_functions:
                finding.variant = SERVED

    def _report(self, node: cst.CSTNode, in_function: bool = False) -> None:
        finding = self.report(node, "inference", "runs the model without gradients")
        if in_function or self.enclosing():
            self.in_functions.append(finding)

    def _no_grad(self, expression: cst.BaseExpression) -> bool:
        """Say whether an expression is, or may be, a no-gradient context (a conditional choosing one)."""
        if isinstance(expression, cst.Name):
            return expression.value in self.contexts
        nodes = (expression, *descendants(expression)) if isinstance(expression, cst.IfExp) else (expression,)
        return any(isinstance(n, cst.Call) and self.names(n.func) & NO_GRAD for n in nodes)

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call | cst.IfExp) and self._no_grad(node.value):
            self.contexts.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if self._no_grad(item.item) and self._runs(node.body):
                self._report(item.item)
                return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            if self.names(decorator_callee(decorator)) & NO_GRAD and self._runs(node.body):
                self._report(decorator.decorator, in_function=True)  # (a decorated function runs when called)
                return

    def _runs(self, body: cst.CSTNode) -> bool:
        """Say whether a block calls anything but torch's functions, tensor methods and builtins."""
        for node in descendants(body):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            if isinstance(func, cst.Attribute):
                if func.attr.value in TENSOR_METHODS:
                    continue
                if any(q.startswith("torch.") for q in self.names(func)):
                    continue
                return True
            if isinstance(func, cst.Name) and (
                func.value in BUILTINS or any(q.startswith("torch.") for q in self.names(func))
            ):
                continue
            return True
        return False
