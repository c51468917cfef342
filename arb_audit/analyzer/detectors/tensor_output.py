"""Tensors written to a file: weights converted or quantised, or features extracted."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid

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


class TensorOutput(RouteDetector):
    """``torch.save``, safetensors' ``save_file`` or ``numpy.save``: tensors leave the script as a file.

    In a file that trains nothing and runs its model without gradients, with no text generated or scored,
    this is a conversion step — quantised or converted weights, embeddings extracted for another file —
    not evaluation and not data generation (TAXONOMY.md: ``NONE_TRAINING``).
    """

    TRIGGERS = ("save",)

    VALID = (
        Valid("import json\njson.dump(results, open('r.json', 'w'))\n"),
        Valid("model.save(path)\n"),
    )
    INVALID = (
        Invalid("import torch\ntorch.save(quantized.state_dict(), 'model.pt')\n", "tensor_output"),
        Invalid(
            "from safetensors.torch import save_file\nsave_file({'embeddings': e, 'labels': y}, out)\n",
            "tensor_output",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        written = self.names(node.func) & TENSOR_WRITERS
        if written:
            self.report(node, "tensor_output", f"writes tensors with {min(written)}")
