"""Targets masked with the ignore index: a token cross-entropy on given targets is set up here."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.trainers import route_word

IGNORE_INDEX = "100"
"""PyTorch's default ``ignore_index`` is -100: the positions of a target sequence that carry no loss."""
IGNORE_NAME = re.compile(r"(?:[A-Z0-9]+_)*IGNORE_(?:INDEX|IDX|ID|TOKEN_ID|TOKEN_INDEX|LABEL)")
"""Names projects give the ignore index in a module of constants (``IGNORE_INDEX``, ``IGNORE_IDX``,
``CROSS_ENTROPY_IGNORE_INDEX``)."""
TARGET_WORDS = frozenset({"labels", "label", "targets", "target", "ignore", "mask"})
"""Words of what -100 is written into or named as: the targets, or the ignore index itself."""
GROWING_METHODS = frozenset({"append", "extend", "insert"})
"""Methods of a list whose argument becomes part of it."""
PREFERENCE_WORDS = frozenset({"chosen", "rejected"})
"""Fields of preference pairs, whose collators mask their targets the same way for another loss."""
OTHER_ANSWERS = frozenset({"generated", "generation", "negative", "fake", "policy_output"})
"""Fields of a second answer set against the chosen one (SPIN's model generations)."""
PREFERENCE_PAIRS = "preference_pairs"
"""Variant of the ``loss`` finding: chosen/rejected targets are masked the same way, for a preference loss."""
MASKED_TARGETS = "masked_targets"
"""Variant of the ``loss`` finding: targets are masked for a token cross-entropy."""


def _minus_hundred(node: cst.BaseExpression | None) -> bool:
    return (
        type(node) is cst.UnaryOperation
        and isinstance(node.operator, cst.Minus)
        and type(node.expression) is cst.Integer
        and node.expression.value == IGNORE_INDEX
    )


def _receiver_name(receiver: cst.BaseExpression) -> str:
    """Return the name of the list a call adds to: a record's field by its key (``out["labels"]``)."""
    if type(receiver) is cst.Subscript and len(receiver.slice) == 1:
        index = receiver.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            return f"{_target_name(receiver.value)} {literal_text(index.value)}"
    return _target_name(receiver)


def _target_name(target: cst.BaseExpression) -> str:
    """Return the name an assignment writes into (``labels`` of ``labels[:n]``)."""
    if type(target) is cst.Subscript:
        return _target_name(target.value)
    if isinstance(target, cst.Tuple | cst.List):
        return " ".join(_target_name(e.value) for e in target.elements)
    return last_name(target)


class MaskedTargets(RouteDetector):
    """Targets whose prompt or padding positions are set to -100, the ignore index of cross-entropy.

    ``labels[:prompt_len] = -100``, ``IGNORE_INDEX = -100``, ``collate(batch, ignore_index=-100)``:
    supervised fine-tuning's data is shaped like this everywhere, and it is the evidence left when the
    loss itself lies in a helper of another file (``train_model_simple(model, loader, optimizer)``). It
    says what a step of no recognised loss trains, and what a data module serves; a file with
    preference pairs (``chosen``/``rejected``) masks its targets for a preference loss instead.
    """

    TRIGGERS = ("-100", "IGNORE_I", "IGNORE_TOKEN")

    VALID = (
        Valid("x = -100\n"),
        Valid("history.append(IGNORE_INDEX)\nrewards.extend([-100] * n)\n"),
        # the chosen answer set against the model's own generation (SPIN): not SFT data
        Valid(
            "real = encode(r['prompt'], r['chosen'])\n"
            "fake = encode(r['prompt'], r['generated'])\nlabels[:n] = -100\n"
        ),
        Valid("from consts import IGNORE_IDX\nprint(IGNORE_IDX)\n"),
        Valid("from consts import IGNORE_IDX\ndef pad_row(row):\n    return row + [IGNORE_IDX] * 3\n"),
        Valid("offset = scores - 100\n"),
        Valid("scores = {'reward': -100}\nclip(x, min_value=-100)\n"),
        Valid("class PPOConfig(TrainingArguments):\n    label_pad_token_id: int = -100\n"),
    )
    INVALID = (
        Invalid("labels[:n] = -100\nbatch = {'chosen': c, 'rejected': r}\n", "loss", "dpo", PREFERENCE_PAIRS),
        Invalid(
            "class SimPOConfig(TrainingArguments):\n    label_pad_token_id: int = -100\n",
            "loss",
            "dpo",
            PREFERENCE_PAIRS,
        ),
        Invalid("labels[:prompt_len] = -100\n", "loss", "sft", MASKED_TARGETS),
        # labels appended to a record's field (Hugging Face preprocessing)
        Invalid(
            "out = {'input_ids': [], 'labels': []}\nout['labels'].append([IGNORE_INDEX] * len(src) + tgt)\n",
            "loss",
            "sft",
            MASKED_TARGETS,
        ),
        # SFT on the chosen answers of a preference set
        Invalid("text = row['prompt'] + row['chosen']\nlabels[:n] = -100\n", "loss", "sft", MASKED_TARGETS),
        Invalid("IGNORE_INDEX = -100\n", "loss", "sft", MASKED_TARGETS),
        Invalid(
            "from dart_math.utils import IGNORE_IDX\nlabels[:source_len] = IGNORE_IDX\n",
            "loss",
            "sft",
            MASKED_TARGETS,
        ),
        Invalid(
            "from consts import CROSS_ENTROPY_IGNORE_INDEX\ndef _sequence_to_labels_none(seq):\n"
            "    return [CROSS_ENTROPY_IGNORE_INDEX] * len(seq)\n",
            "loss",
            "sft",
            MASKED_TARGETS,
        ),
        Invalid(
            "def collate(batch, pad_token_id=0, ignore_index=-100):\n    pass\n",
            "loss",
            "sft",
            MASKED_TARGETS,
        ),
        Invalid("targets = torch.where(mask, ids, -100)\n", "loss", "sft", MASKED_TARGETS),
        Invalid("label_pad_token_id: Optional[int] = -100\n", "loss", "sft", MASKED_TARGETS),
        Invalid(
            "example = {'input_ids': ids, 'labels': [-100] * n + ids[n:]}\n", "loss", "sft", MASKED_TARGETS
        ),
        Invalid("labels[a : b + 1] = [-100] * (b - a + 1)\n", "loss", "sft", MASKED_TARGETS),
        Invalid(
            "for s, t in pairs:\n    labels.append(torch.tensor([IGNORE_INDEX for _ in s] + t))\n",
            "loss",
            "sft",
            MASKED_TARGETS,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.found: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        self.preferences = False
        """The targets are masked in a class or function named for the preference family."""
        self.pair_members: set[str] = set()
        """Members of a preference pair the file reads (``chosen``, ``rejected``)."""
        self.around: list[str] = []
        """Names of the assignment targets, fields, keywords and parameters open around the node."""
        self.other_answer = False
        """The file reads a second answer to set against the chosen one (``r["generated"]``)."""
        self.growing: list[bool] = []
        """For each call open around the node: whether it adds to a list (and named what it adds to)."""

    # What a -100 is written into: the innermost assignment target, record field, keyword or parameter
    # around it (``labels[a:b] = [-100] * n``, ``{"labels": [-100] * n}``, ``ignore_index=-100``).
    def _enter(self, named: str) -> None:
        self.around.append(named)

    def _leave(self) -> None:
        self.around.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        named = " ".join(_target_name(t.target) for t in node.targets)
        self._preference_name(named)  # ``chosen_ids = ...``: a preference pair's data
        self._enter(named)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self._leave()

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._enter(_target_name(node.target))

    def leave_AnnAssign(self, original_node: cst.AnnAssign) -> None:
        self._leave()

    def visit_DictElement(self, node: cst.DictElement) -> None:
        # the key's source text is enough to read its words (evaluating every literal is not cheap)
        self._enter(literal_text(node.key) if type(node.key) is cst.SimpleString else "")

    def leave_DictElement(self, original_node: cst.DictElement) -> None:
        self._leave()

    def visit_Arg(self, node: cst.Arg) -> None:
        self._enter(
            node.keyword.value if node.keyword is not None else self.around[-1] if self.around else ""
        )

    def leave_Arg(self, original_node: cst.Arg) -> None:
        self._leave()

    def visit_Param(self, node: cst.Param) -> None:
        self._preference_name(node.name.value)
        self._enter(node.name.value)

    def leave_Param(self, original_node: cst.Param) -> None:
        self._leave()

    def visit_Call(self, node: cst.Call) -> None:
        # ``torch.where(mask, ids, -100)``, ``ids.masked_fill(mask, -100)``: targets built masked
        if any(_minus_hundred(a.value) for a in node.args) and last_name(node.func) in (
            "where",
            "masked_fill",
        ):
            self._found(node)
        # ``labels.append([IGNORE_INDEX] * n + target)``: what is appended is written into the list
        grows = type(node.func) is cst.Attribute and node.func.attr.value in GROWING_METHODS
        self.growing.append(grows)
        if grows:
            self._enter(_receiver_name(node.func.value))  # type: ignore[attr-defined]

    def leave_Call(self, original_node: cst.Call) -> None:
        if self.growing.pop():
            self._leave()

    def visit_Name(self, node: cst.Name) -> None:
        # ``labels[:n] = IGNORE_IDX``: the ignore index by its name (defined in another module), written
        # into targets, or returned by a function named for making them (``_sequence_to_labels``)
        if not (node.value.isupper() and IGNORE_NAME.fullmatch(node.value)):
            return
        parts = [*(self.around[-1].split() if self.around else ()), *self.enclosing()[-1:]]
        named = {w.lower() for part in parts for w in words(part)}
        if TARGET_WORDS & named - {"ignore"}:
            self._found(node)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if _minus_hundred(node) and self.around:
            named = {w.lower() for part in self.around[-1].split() for w in words(part)}
            if TARGET_WORDS & named:
                self._found(node)

    def _found(self, node: cst.CSTNode) -> None:
        # in a class or function named for another route (``SimPOConfig.label_pad_token_id``) the
        # masked targets feed that route's loss: a preference one's are its pairs' targets
        routes = {named[0] for n in self.enclosing() if (named := route_word(n, strict=True)) is not None}
        if routes - {"SFT", "DPO"}:
            return
        if "DPO" in routes:
            self.preferences = True
        if self.found is None:
            self.found = (node, self.context.statements[-1] if self.context.statements else None)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        raw = node.value
        if ("chosen" in raw or "rejected" in raw) and node.evaluated_value in PREFERENCE_WORDS:
            self.pair_members.add(str(node.evaluated_value))
        elif literal_text(node) in OTHER_ANSWERS:
            self.other_answer = True

    def _preference_name(self, name: str) -> None:
        if "chosen" in name or "rejected" in name:
            self.pair_members |= PREFERENCE_WORDS & set(words(name))

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.found is None:
            return
        node, statement = self.found
        one_member = bool(self.pair_members) and self.pair_members != PREFERENCE_WORDS
        if one_member and not self.preferences and self.other_answer:
            return  # the chosen answer against another one (SPIN's generated): not said here
        # One member read (the chosen answers of a preference set as targets) is plain SFT data.
        if self.preferences or self.pair_members == PREFERENCE_WORDS:
            # DPO's collators mask each answer's prompt the same way (a reward model's pairs need no
            # targets at all): the data of a preference loss
            message = (
                "chosen and rejected targets are masked with the ignore index (a preference loss's pairs)"
            )
            self.report(node, "loss", message, statement=statement, kind="dpo", variant=PREFERENCE_PAIRS)
            return
        message = "targets are masked with the ignore index (a token cross-entropy on given targets)"
        self.report(node, "loss", message, statement=statement, kind="sft", variant=MASKED_TARGETS)
