"""A rollout's loss mask that keeps the model's tokens and drops tokens inserted between its turns."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import dotted
from arb_audit.analyzer.walk import descendants

INSERTED_TOKENS = "inserted_tokens"
"""Variant of an ``interactive`` finding: a mask marks the tokens inserted between the model's turns."""
MASK_WORDS = frozenset({"mask", "masks"})
"""Words of a per-token mask (``response_mask``, ``result_masks``, ``loss_mask``)."""


class InsertedTokenMask(RouteDetector):
    """Trajectories built for training that interleave the model's tokens with inserted ones.

    An agent loop that trains (verl's tool agent loop, a rollout with tools) grows a per-token mask
    beside the sequence: ones for what the model generated (``mask += [1] * len(generated)``), zeros
    for what the loop inserted — a tool's result, an environment's observation, an interaction's reply
    (``mask.extend([0] * len(tool_ids))``) — so that the loss skips them. Both kinds appended to one mask,
    in a file that generates, is the shape of multi-turn rollouts made to be trained on (TAXONOMY.md:
    online RL); an evaluation loop keeps no loss mask. Zeros appended before any one mask a prompt,
    zeros of a padding's length pad, a mask built in one expression (``[0] * len(prompt) + [1] * n``)
    is no growing one, and a dataset's masks of human turns are built where nothing generates: none
    of these is reported.
    """

    TRIGGERS = ("mask",)

    VALID = (
        Valid("mask = [0] * len(prompt) + [1] * len(answer)\nout = model.generate(x)\n"),
        Valid(
            "out = llm.generate(prompts)\nresponse_mask.extend([0] * len(prompt))\n"
            "response_mask.extend([1] * len(out))\n"
        ),
        Valid(
            "out = llm.generate(prompts)\nloss_mask += [1] * len(out)\n"
            "loss_mask += [0] * (max_len - len(out))\n"
        ),
        Valid(
            "for turn in conversation:\n    ids += tok(turn.text)\n"
            "    target_mask += [1] * n if turn.role == 'assistant' else [0] * n\n"
        ),
        Valid(
            "for turn in turns:\n    target_mask += [0] * len(human_ids)\n"
            "    target_mask += [1] * len(assistant_ids)\n"
        ),
        Valid("out = model.generate(x)\nloss_mask += [1] * len(out)\n"),
    )
    INVALID = (
        Invalid(
            "out = llm.generate(prompt_ids)\nstate.response_mask += [1] * len(out)\n"
            "tool_ids = tok(run_tool(out))\nstate.response_mask += [0] * len(tool_ids)\n",
            "interactive",
            variant=INSERTED_TOKENS,
        ),
        Invalid(
            "outputs = engine.generate(batch)\nresult_masks[i].extend([1] * len(tokens))\n"
            "result_masks[i].extend([0] * len(result_tokens))\n",
            "interactive",
            variant=INSERTED_TOKENS,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.generates = False
        """A generate method is called in the file."""
        self.grown: dict[str, dict[int, tuple[cst.CSTNode, cst.CSTNode | None]]] = {}
        """Per mask (its dotted name, indices dropped): the node (and statement) that appended ones, zeros."""

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is not cst.Attribute:
            return
        called = func.attr.value
        if called == "extend" and len(node.args) == 1:
            self._grown(node, func.value, node.args[0].value)
        elif "generate" in called:
            # a model's or an engine's generate method (``engine.generate``, ``async_generate``): a
            # name test only, as the masks are what decides here
            self.generates = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, cst.AddAssign):
            self._grown(node, node.target, node.value)

    def _grown(self, node: cst.CSTNode, mask: cst.BaseExpression, value: cst.BaseExpression) -> None:
        """Note a mask grown by a run of ones or zeros (``[1] * n``), zeros only after ones.

        Zeros before any one mask a prompt; zeros of a padding's length (``[0] * (max_len - n)``) pad
        the sequence: neither is a turn inserted after the model's.
        """
        while type(mask) is cst.Subscript:
            mask = mask.value  # result_masks[i]: the masks of all the rollouts
        name = dotted(mask)
        if not name or not MASK_WORDS & set(words(name.rsplit(".", 1)[-1])):
            return
        flag = _run_of(value)
        grown = self.grown.get(name, {})
        if flag is None or (flag == 0 and (1 not in grown or _pads(value))):
            return
        statement = self.context.statements[-1] if self.context.statements else None
        self.grown.setdefault(name, {}).setdefault(flag, (node, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.generates:
            return
        for name, flags in self.grown.items():
            if flags.keys() == {0, 1}:
                node, statement = flags[0]
                message = f"{name} keeps the model's tokens and drops those inserted between its turns"
                self.report(
                    node, "interactive", message, statement, variant=INSERTED_TOKENS, interactive=True
                )
                return


def _pads(value: cst.BaseExpression) -> bool:
    """Say whether a run's length is a padding's (a difference, or a name that says pad)."""
    for n in descendants(value):
        if type(n) is cst.BinaryOperation and isinstance(n.operator, cst.Subtract):
            return True
        if type(n) is cst.Name and ("pad" in n.value.lower() or "max" in n.value.lower()):
            return True
    return False


def _run_of(value: cst.BaseExpression) -> int | None:
    """Return 1 or 0 for ``[1] * n`` (or ``n * [1]``), None for anything else."""
    if type(value) is not cst.BinaryOperation or not isinstance(value.operator, cst.Multiply):
        return None
    for side in (value.left, value.right):
        if type(side) is cst.List and len(side.elements) == 1:
            element = side.elements[0].value
            if type(element) is cst.Integer and element.value in ("0", "1"):
                return int(element.value)
    return None
