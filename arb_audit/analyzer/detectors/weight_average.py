"""A hand-written merge: tensors of several checkpoints combined key by key."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.walk import descendants

WEIGHT_LOADERS = frozenset({"torch.load", "safetensors.torch.load_file", "safetensors.safe_open"})
"""Functions that read a checkpoint's tensors."""


def _keyed_sources(value: cst.BaseExpression, key: str) -> set[str]:
    """Code of the containers that ``value`` indexes with the loop variable ``key`` (``a[k]``)."""
    return {
        cst.Module([]).code_for_node(n.value)
        for n in (value, *descendants(value))
        if isinstance(n, cst.Subscript)
        and len(n.slice) == 1
        and isinstance(n.slice[0].slice, cst.Index)
        and isinstance(n.slice[0].slice.value, cst.Name)
        and n.slice[0].slice.value.value == key
    }


IN_PLACE_SUMS = frozenset({"add_", "sub_"})
"""Tensor methods that add another tensor into this one in place."""
COUNTERS = frozenset({"range", "enumerate", "zip"})
"""Iterables of positions: a loop over them indexes rows of a batch, not a checkpoint's tensors."""


def _counts(iterable: cst.BaseExpression) -> bool:
    """Say whether a loop runs over positions (``range(n)``, ``enumerate(x)``), not over tensor names."""
    return (
        isinstance(iterable, cst.Call)
        and isinstance(iterable.func, cst.Name)
        and iterable.func.value in COUNTERS
    )


class WeightAverage(RouteDetector):
    """Checkpoints merged by hand: for each tensor name, a value computed from two or more state dicts.

    ``{k: (a[k] + b[k]) / 2 for k in a}``, ``merged[k] = w * a[k] + (1 - w) * b[k]`` in a loop over
    keys, in a file that reads weights (``state_dict()``, ``torch.load``, safetensors). Counters or
    metrics summed key by key, in a file that reads no weights, are not reported.
    """

    TRIGGERS = ("state_dict", "load_file", "torch.load", "safe_open")

    VALID = (
        Valid("totals = {k: a[k] + b[k] for k in a}\n"),
        Valid(
            "class Policy:\n    def state_dict(self):\n        return self.model.state_dict()\n"
            "for i in range(len(batch)):\n    old_logprobs[i] = mask(logprobs[i], masks[i])\n"
        ),
        Valid(
            "import torch\nsd = torch.load('x.pt', weights_only=True)\n"
            "sd2 = {k: v.half() for k, v in sd.items()}\n"
        ),
    )
    INVALID = (
        Invalid(
            "sd_raw = raw.state_dict()\nsd = tuned.state_dict()\n"
            "for key in sd:\n    sd[key].add_(sd_raw[key])\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "import torch\na = torch.load(p, weights_only=True)\nb = torch.load(q, weights_only=True)\n"
            "merged = {k: (a[k] + b[k]) / 2 for k in a}\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "sd_a, sd_b = model_a.state_dict(), model_b.state_dict()\nmerged = {}\n"
            "for name in sd_a:\n    merged[name] = alpha * sd_a[name] + (1 - alpha) * sd_b[name]\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "import torch\nsd = torch.load(base)\ndelta = torch.load(d)\n"
            "for name, p in sd.items():\n    sd[name] += delta[name]\ntorch.save(sd, out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.reads_weights = False
        self.combined: tuple[cst.CSTNode, cst.CSTNode | None] | None = None

    def _combined(self, node: cst.CSTNode) -> None:
        if self.combined is None:
            self.combined = (node, self.context.statements[-1] if self.context.statements else None)

    def visit_Call(self, node: cst.Call) -> None:
        if method(node) in ("state_dict", "load_state_dict") or self.names(node.func) & WEIGHT_LOADERS:
            self.reads_weights = True

    def visit_DictComp(self, node: cst.DictComp) -> None:
        target = node.for_in.target
        if (
            isinstance(target, cst.Name)
            and not _counts(node.for_in.iter)
            and len(_keyed_sources(node.value, target.value)) >= 2
        ):
            self._combined(node)

    def visit_For(self, node: cst.For) -> None:
        if _counts(node.iter):
            return  # for i in range(batch): rows of tensors indexed by position, not tensors by name
        target: cst.BaseExpression = node.target
        if isinstance(target, cst.Tuple) and target.elements:
            target = target.elements[0].value  # for name, tensor in sd.items()
        if not isinstance(target, cst.Name):
            return
        key = target.value
        for statement in descendants(node.body):
            if (
                (
                    isinstance(statement, cst.Assign)
                    and any(_keyed_sources(t.target, key) for t in statement.targets)
                    and len(_keyed_sources(statement.value, key)) >= 2
                )
                or (
                    # base[k] += delta[k]: one checkpoint's tensors added to another's
                    isinstance(statement, cst.AugAssign)
                    and isinstance(statement.operator, cst.AddAssign | cst.SubtractAssign)
                    and len(_keyed_sources(statement.target, key) | _keyed_sources(statement.value, key)) >= 2
                )
                or (
                    # base[k].add_(delta[k]): the same, in place
                    isinstance(statement, cst.Call)
                    and method(statement) in IN_PLACE_SUMS
                    and isinstance(statement.func, cst.Attribute)
                    and len(
                        _keyed_sources(statement.func.value, key)
                        | {s for a in statement.args for s in _keyed_sources(a.value, key)}
                    )
                    >= 2
                )
            ):
                self._combined(statement)
                return

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.reads_weights and self.combined is not None:
            node, statement = self.combined
            self.report(
                node,
                "stage",
                "combines checkpoints' tensors key by key",
                statement=statement,
                kind="merge",
                variant="weight_average",
            )
