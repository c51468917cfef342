"""Running a model without gradients: inference for scoring or serving."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
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
BUILTINS = frozenset(
    {"range", "len", "print", "enumerate", "zip", "list", "dict", "tuple", "set", "isinstance", "sorted"}
)


class Inference(RouteDetector):
    """``torch.no_grad()`` or ``torch.inference_mode()`` around a model run: not trained, here.

    In a file with no training stage this is evaluation or serving (a reward-model server, a scorer);
    in a training file it is only the reference model's or the evaluation's forward pass. A block that
    only calls torch's functions and tensors' methods (``torch.cat(shards)``, ``w.clone().detach()``)
    rearranges weights: nothing is run. A context made elsewhere (``ctx = torch.inference_mode()``) is
    taken to run a model.
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
            "import torch\nwith torch.no_grad():\n    for name, p in base.named_parameters():\n"
            "        p.copy_(0.5 * sa[name] + 0.5 * sb[name])\n"
        ),
    )
    INVALID = (
        Invalid("import torch\nwith torch.no_grad():\n    scores = model(**batch).logits\n", "inference"),
        Invalid("import torch\n@torch.inference_mode()\ndef score(x):\n    return model(x)\n", "inference"),
        Invalid(
            "import torch\nwith torch.no_grad():\n    out = self.reward_model.score(texts)\n", "inference"
        ),
        Invalid(
            "import torch, contextlib\nctx = torch.no_grad() if not grad else contextlib.nullcontext()\n"
            "with ctx:\n    out = model(**batch)\n",
            "inference",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.read: set[int] = set()
        """The no-gradient calls whose block was read (a ``with`` item, a decorator)."""

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and self.names(call.func) & NO_GRAD:
                self.read.add(id(call))
                if self._runs(node.body):
                    self.report(call, "inference", "runs the model without gradients")
                    return

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            found = decorator.decorator
            called = found.func if isinstance(found, cst.Call) else found
            if self.names(called) & NO_GRAD:
                self.read.add(id(found))
                if self._runs(node.body):
                    self.report(found, "inference", "runs the model without gradients")
                    return

    def visit_Call(self, node: cst.Call) -> None:
        # a context made elsewhere (``ctx = torch.inference_mode()``, ``torch.no_grad() if x else
        # nullcontext()``): its block is not read here, the model is taken to run in it
        if id(node) not in self.read and self.names(node.func) & NO_GRAD:
            self.report(node, "inference", "runs the model without gradients")

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
