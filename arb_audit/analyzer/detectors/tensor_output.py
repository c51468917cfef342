"""Tensors written to a file: weights converted or quantised, or features extracted."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.walk import descendants

TENSOR_WRITERS = frozenset(
    {
        "torch.save",
        "safetensors.torch.save_file",
        "safetensors.torch.save_model",
        "safetensors.numpy.save_file",
        "numpy.save",
        "numpy.savez",
        "numpy.savez_compressed",
    }
)
"""Functions that write tensors (not text records) to a file."""
LOGITS = "logits"
"""Variant of a ``tensor_output`` in a file that reads a model's logits: what it writes are a model's
output distributions (a teacher's soft labels for a student to be distilled on), not weights or features."""


class TensorOutput(RouteDetector):
    """``torch.save``, safetensors' ``save_file`` or ``numpy.save``: tensors leave the script as a file.

    In a file that trains nothing and runs its model without gradients, with no text generated or scored,
    this is a conversion step — quantised or converted weights, embeddings extracted for another file —
    not evaluation and not data generation (TAXONOMY.md: ``NONE_TRAINING``). Where the file reads its
    model's ``logits``, the tensors written are output distributions (:data:`LOGITS`): a teacher's
    soft labels, data for a student to be trained on.
    """

    TRIGGERS = ("save",)

    VALID = (
        Valid("import json\njson.dump(results, open('r.json', 'w'))\n"),
        Valid("model.save(path)\n"),
    )
    INVALID = (
        Invalid("import torch\ntorch.save(quantized.state_dict(), 'model.pt')\n", "tensor_output"),
        Invalid(
            "import torch\nwith torch.no_grad():\n    logits = teacher(**batch).logits\n"
            "top = torch.topk(logits, k=100)\ntorch.save({'values': top.values, 'ids': top.indices}, out)\n",
            "tensor_output",
            None,
            LOGITS,
        ),
        Invalid(
            "from safetensors.torch import save_file\nsave_file({'embeddings': e, 'labels': y}, out)\n",
            "tensor_output",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.writes: list[tuple[cst.Call, str]] = []
        """Each call writing tensors, and the function it calls."""
        self.logits = False
        """The file reads a model's ``logits``."""

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.logits = self.logits or node.attr.value == LOGITS

    def visit_Call(self, node: cst.Call) -> None:
        written = self.names(node.func) & TENSOR_WRITERS
        if written:
            self.writes.append((node, min(written)))

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, written in self.writes:
            # (weights written beside logits read, as a quantiser measuring perplexity does, are weights)
            variant = LOGITS if self.logits and not _weights(node) else None
            self.report(node, "tensor_output", f"writes tensors with {written}", variant=variant)


def _weights(node: cst.Call) -> bool:
    """Say whether a write's tensors are a model's weights (``torch.save(model.state_dict(), path)``)."""
    return any(
        type(n) is cst.Call and last_name(n.func) == "state_dict"
        for a in node.args[:1]
        for n in (a.value, *descendants(a.value))
    )
