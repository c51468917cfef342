"""Parameter-efficient training: a LoRA adapter (QLoRA when the base is loaded in 4 bits)."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.names import literal_bool

ADAPTER_WRAPPERS = frozenset({"peft.get_peft_model", "peft.prepare_model_for_kbit_training"})
"""peft's functions that wrap a model for adapter training and hand back the model they are given."""
LORA = frozenset({"peft.LoraConfig", *ADAPTER_WRAPPERS})
"""peft's constructors of LoRA adapters."""
OPTIONAL_LORA = frozenset({"trl.get_peft_config", "trl.trainer.utils.get_peft_config"})
"""Helpers that build an adapter only when a flag asks for one (TRL's ``--use_peft``)."""


def _true(arg: cst.Arg | None) -> bool:
    return arg is not None and literal_bool(arg.value) is True


class Adapter(RouteDetector):
    """The stages of this file train a LoRA adapter (QLoRA when the base model is loaded in 4 bits).

    Seen as peft's ``LoraConfig``/``get_peft_model``, unsloth's ``get_peft_model``, or a
    ``peft_config=`` given to a trainer; ``load_in_4bit=True`` (or a 4-bit ``BitsAndBytesConfig``)
    makes it QLoRA. TRL's ``get_peft_config(model_args)`` builds one only when ``--use_peft`` is
    given: ``lora_optional``. The artifact is then an adapter to merge into its base, which weight
    forensics must know.
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
        Invalid(
            "from trl import get_peft_config\nSFTTrainer(model=m, peft_config=get_peft_config(model_args))\n",
            "adapter",
            variant="lora_optional",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.four_bit = False
        self.lora: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        self.optional = True
        """Every adapter seen so far is one that only a flag turns on."""

    def visit_Call(self, node: cst.Call) -> None:
        if _true(keyword(node, "load_in_4bit")):
            self.four_bit = True
        names = self.names(node.func)
        given = keyword(node, "peft_config")
        if (
            given is not None
            and type(given.value) is cst.Call
            and self.names(given.value.func) & OPTIONAL_LORA
        ) or names & OPTIONAL_LORA:
            evidence, optional = True, True
        else:
            evidence, optional = bool(names & LORA or method(node) == "get_peft_model" or given), False
        if evidence:
            self.optional = self.optional and optional
            if self.lora is None or not optional:
                self.lora = (node, self.context.statements[-1] if self.context.statements else None)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.lora is not None:
            node, statement = self.lora
            variant = "qlora" if self.four_bit else "lora_optional" if self.optional else "lora"
            self.report(node, "adapter", f"trains a {variant} adapter", statement=statement, variant=variant)
