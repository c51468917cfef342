"""Running a model without gradients: inference for scoring or serving."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid

NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"})
"""Contexts and decorators that switch gradients off."""


class Inference(RouteDetector):
    """``torch.no_grad()`` or ``torch.inference_mode()``: the model is run, not trained, here.

    In a file with no training stage this is evaluation or serving (a reward-model server, a scorer);
    in a training file it is only the reference model's or the evaluation's forward pass.
    """

    TRIGGERS = ("no_grad", "inference_mode")

    VALID = (Valid("import torch\nx = torch.zeros(3)\n"), Valid("no_grad = True\n"))
    INVALID = (
        Invalid("import torch\nwith torch.no_grad():\n    scores = model(**batch).logits\n", "inference"),
        Invalid("import torch\n@torch.inference_mode()\ndef score(x):\n    return model(x)\n", "inference"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if self.names(node.func) & NO_GRAD:
            self.report(node, "inference", "runs the model without gradients")
