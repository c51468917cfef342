"""Parameter-efficient training: a LoRA adapter (QLoRA when the base is loaded in 4 bits)."""

from __future__ import annotations

import libcst as cst

from analyzer.calls import method
from analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword

LORA = frozenset(
    {"peft.LoraConfig", "peft.get_peft_model", "peft.prepare_model_for_kbit_training", "trl.get_peft_config"}
)
"""peft's and TRL's constructors of LoRA adapters."""


def _true(arg: cst.Arg | None) -> bool:
    return arg is not None and isinstance(arg.value, cst.Name) and arg.value.value == "True"


class Adapter(RouteDetector):
    """The stages of this file train a LoRA adapter (QLoRA when the base model is loaded in 4 bits).

    Seen as peft's ``LoraConfig``/``get_peft_model``, unsloth's ``get_peft_model``, or a
    ``peft_config=`` given to a trainer; ``load_in_4bit=True`` (or a 4-bit ``BitsAndBytesConfig``)
    makes it QLoRA. The artifact is then an adapter to merge into its base, which weight forensics
    must know.
    """

    TRIGGERS = ("peft", "lora", "Lora")

    VALID = (Valid("import peft\n"), Valid("model = load(path, load_in_4bit=True)\n"))
    INVALID = (
        Invalid("from peft import LoraConfig\nconfig = LoraConfig(r=16)\n", "adapter", variant="lora"),
        Invalid(
            "from unsloth import FastLanguageModel\n"
            "model, tok = FastLanguageModel.from_pretrained('m', load_in_4bit=True)\n"
            "model = FastLanguageModel.get_peft_model(model, r=16)\n",
            "adapter",
            variant="qlora",
        ),
        Invalid("SFTTrainer(model=m, peft_config=lora)\n", "adapter", variant="lora"),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.four_bit = False
        self.lora: tuple[cst.CSTNode, cst.CSTNode | None] | None = None

    def visit_Call(self, node: cst.Call) -> None:
        if _true(keyword(node, "load_in_4bit")):
            self.four_bit = True
        if self.lora is None and (
            self.names(node.func) & LORA or method(node) == "get_peft_model" or keyword(node, "peft_config")
        ):
            self.lora = (node, self.context.statements[-1] if self.context.statements else None)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.lora is not None:
            node, statement = self.lora
            variant = "qlora" if self.four_bit else "lora"
            self.report(node, "adapter", f"trains a {variant} adapter", statement=statement, variant=variant)
