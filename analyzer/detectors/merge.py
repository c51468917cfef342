"""A merge: mergekit, or a LoRA adapter folded into its base model."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid

FOLD_METHODS = frozenset({"merge_and_unload", "save_pretrained_merged", "push_to_hub_merged"})
"""peft's and unsloth's methods that fold a LoRA adapter into the base weights."""


class Merge(RouteDetector):
    """Combining weights without training: mergekit's merges, or folding a LoRA adapter into its base.

    mergekit is recognised by qualified name (``mergekit.merge.run_merge``, merge methods, MoE
    builders). ``merge_and_unload()`` (peft) and unsloth's ``save_pretrained_merged`` fold an adapter:
    a merge on its own, but only the end of a stage when the file also trains (variant ``lora_fold``).
    """

    TRIGGERS = ("merge",)

    VALID = (
        Valid("import mergekit\n"),
        Valid("if False:\n    model.save_pretrained_merged('out', tok)\n"),
        Valid("merged = {**a, **b}\n"),
    )
    INVALID = (
        Invalid(
            "from mergekit.merge import run_merge\nrun_merge(config, 'out', options)\n", "stage", "merge"
        ),
        Invalid(
            "model = PeftModel.from_pretrained(base, path)\nmodel = model.merge_and_unload()\n",
            "stage",
            "merge",
            "lora_fold",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if method(node) in FOLD_METHODS:
            self.report(
                node, "stage", "folds a LoRA adapter into its base", kind="merge", variant="lora_fold"
            )
            return
        for name in self.names(node.func):
            root, _, rest = name.partition(".")
            if root == "mergekit" and any(word in rest for word in ("merge", "moe", "evo")):
                self.report(node, "stage", f"calls {name}", kind="merge", variant="mergekit")
                return
