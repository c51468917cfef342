"""A hand-written merge: tensors of several checkpoints combined key by key."""

from __future__ import annotations

import re
from typing import NamedTuple

import libcst as cst

from arb_audit.analyzer.calls import method, uncast
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.walk import descendants

WEIGHT_LOADERS = frozenset(
    {
        *("torch.load", "safetensors.torch.load_file", "safetensors.safe_open", "peft.load_peft_weights"),
        *("safetensors.numpy.load_file", "safetensors.flax.load_file"),
    }
)
"""Functions that read a checkpoint's tensors."""


METADATA_ATTRIBUTES = frozenset(
    {"dtype", "device", "shape", "ndim", "layout", "device_mesh", "placements", "requires_grad", "is_meta"}
)
"""Attributes of a tensor that describe it rather than hold its values: reading one combines nothing."""


REDUCING_METHODS = frozenset(
    {*("item", "norm", "max", "min", "amax", "amin", "mean", "sum", "std", "var", "prod", "all", "any")}
)
"""Tensor methods that, called without a dimension, reduce a tensor to one number."""
DIMENSION_KEYWORDS = frozenset({"dim", "axis", "keepdim", "keepdims"})
"""Keywords of a reduction along a dimension (``stack.mean(dim=0)`` averages tensors, keeping them)."""
COMPARISONS = frozenset(
    {*("allclose", "isclose", "equal", "array_equal", "dist", "cosine_similarity", "mse_loss", "l1_loss")}
)
"""Functions that measure tensors against each other (``torch.allclose(a, b)``,
``F.cosine_similarity(x, y, dim=0)``): what they return is a number or a verdict, no weights."""
ARRAY_MODULES = frozenset({"torch", "np", "numpy", "jnp", "mx", "linalg", "LA"})
"""Modules (as written) whose reductions are called as functions: ``torch.max(x)``, ``np.mean(d)``,
``torch.linalg.norm(d)`` reduce their first argument."""


def _reduces(node: cst.CSTNode) -> cst.CSTNode | None:
    """Return what a call reduces to a number or compares (``(a - b).norm()`` -> ``a - b``), else None.

    ``t.abs().max()``, ``d.item()``, ``float(d)``, ``torch.max(d)``, ``torch.linalg.norm(d)``,
    ``torch.allclose(a, b)``: the checkpoints read in them are measured, not combined (a conversion
    checked key by key, a drift report). Along a dimension (``stack.mean(0)``, ``x.sum(dim=0)``,
    ``torch.max(a, b)``, ``w.norm(2, -1)``) tensors stay tensors: a TIES or an average over a stacked
    axis merges.
    """
    if type(node) is not cst.Call:
        return None
    callee = last_name(node.func)
    if callee in COMPARISONS:
        return node
    if any(a.keyword is not None and a.keyword.value in DIMENSION_KEYWORDS for a in node.args):
        return None
    positional = [a for a in node.args if a.keyword is None]
    name = method(node)
    if name in REDUCING_METHODS and type(node.func) is cst.Attribute:
        # (``norm``'s first argument is its order, ``p``; a second one is a dimension; called on a
        # module, the reduced tensor comes first)
        receiver = node.func.value
        function = last_name(receiver) in ARRAY_MODULES and type(receiver) in (cst.Name, cst.Attribute)
        limit = (2 if name == "norm" else 1) + function
        if name == "item" or len(positional) < limit:
            return node if function else receiver
        return None
    if callee == "float" and type(node.func) is cst.Name and len(positional) == 1:
        return node
    return None


def _described_only(value: cst.CSTNode) -> set[int]:
    """Return the ids of the nodes in ``value`` that hold no tensor values.

    Read only for a tensor's description (``meta[k].dtype``), or reduced to a number or a verdict
    (:func:`_reduces`): ``(w2 - w).norm() / w.norm()`` measures two checkpoints, it writes neither.
    """
    found: set[int] = set()
    for n in (value, *descendants(value)):
        if type(n) is cst.Attribute and n.attr.value in METADATA_ATTRIBUTES:
            found.update(id(d) for d in (n.value, *descendants(n.value)))
        elif (reduced := _reduces(n)) is not None:
            found.update(id(d) for d in (reduced, *descendants(reduced)))
    return found


def _keyed_sources(value: cst.CSTNode, key: str, held: dict[str, set[str]] | None = None) -> set[str]:
    """Code of the containers that ``value`` indexes with the loop variable ``key``.

    ``a[k]`` and ``a.get(k, default)`` both read ``a`` at the key; ``a[k].dtype`` reads no values
    (``full[k].to(meta[k].dtype)`` casts one checkpoint's tensor, combining nothing). ``held``: the
    loop's locals standing for containers read at the key (:func:`_held_at_key`), read through too.
    """
    found: set[str] = set()
    described = _described_only(value)
    for n in (value, *descendants(value)):
        if id(n) in described:
            continue
        if held and type(n) is cst.Name:
            found.update(held.get(n.value, ()))
        elif (
            type(n) is cst.Subscript
            and len(n.slice) == 1
            and type(n.slice[0].slice) is cst.Index
            and type(n.slice[0].slice.value) is cst.Name
            and n.slice[0].slice.value.value == key
        ):
            found.add(_code(n.value))
        elif (
            type(n) is cst.Call
            and method(n) == "get"
            and type(n.func) is cst.Attribute
            and n.args
            and type(n.args[0].value) is cst.Name
            and n.args[0].value.value == key
        ):
            found.add(_code(n.func.value))
    return found


WEIGHT_WORDS = frozenset(
    {
        *("model", "models", "weights", "checkpoint", "checkpoints", "ckpt", "ckpts", "lora", "adapter"),
        *("params", "parameters", "tv", "tvs"),  # task vectors (``tv_merging(tv_flat_checks)``)
    }
)
"""What a call must name (in its own name or its keywords) besides merging, to combine weights."""
CHECKPOINTS_WORDS = WEIGHT_WORDS | {"sd", "sds", "state", "dict", "dicts", "loras", "adapters", "experts"}
"""Words of a collection of checkpoints a generator runs over (``for sd in state_dicts``); results,
metrics or batches averaged key by key are no weights."""


TENSOR_SOURCE_WORDS = CHECKPOINTS_WORDS | {
    *("weight", "param", "tensor", "tensors", "base", "delta", "deltas", "merged", "ft", "finetuned"),
    *("pretrained", "tuned", "vector", "vectors", "expert", "theta"),
}
"""Words of a container whose entries are a model's tensors (``base_sd``, ``ft``, ``task_vector``)."""
MERGING_WORDS = frozenset(
    {
        *("merge", "merging", "interpolate", "interpolation", "lerp", "slerp", "blend", "average"),
        *("averaging", "avg", "soup", "ties", "dare", "arithmetic"),
    }
)
"""Words of a function or class named for combining models (``def merge(a, b, alpha)``, ``lerp``,
``ties``, ``class ModelSoup``): the mappings combined in it are checkpoints, whatever they are called."""
WEIGHT_READS = frozenset({"state_dict", "named_parameters", "parameters", "get_tensor"})
"""Methods whose result holds a model's or a checkpoint's tensors."""


def _holds_tensors(codes: set[str], weights: set[str]) -> bool:
    """Say whether one of the mappings a combination reads (or walks) holds a model's tensors.

    Bound to weights read (``delta = torch.load(p)``, ``deepcopy(m.state_dict())``), read from a model
    (``m.state_dict()``), or named for them (``base_sd``, ``task_vector``): a game's ``wallets[i] +=
    share - contribs[i]`` or a metric's ``per_sum[c] / per_n[c]`` combines numbers, not checkpoints.
    Judged by names alone, scope-blind: a helper's parameters count by what they are called, or by the
    helper's own name (:data:`MERGING_WORDS`).
    """
    return any(_weights(code) or code in weights or TENSOR_SOURCE_WORDS & set(words(code)) for code in codes)


def _over_several(value: cst.BaseExpression, key: str, weights: set[str]) -> bool:
    """Say whether ``value`` reduces one tensor per checkpoint at the key.

    ``sum(w[j] * sd[k] for j, sd in enumerate(sds))``: a generator whose loop variable is the mapping
    read at the key, or what the mapping is read from (``m.state_dict()[k] for m in models``).
    """
    for n in (value, *descendants(value)):
        if type(n) is cst.GeneratorExp or type(n) is cst.ListComp:
            target = n.for_in.target
            bound = (
                {target.value}
                if type(target) is cst.Name
                else {e.value.value for e in getattr(target, "elements", ()) if type(e.value) is cst.Name}
            )
            # (the mapping itself, or read from it: ``m.state_dict()[k] for m in models``), over a
            # collection named for checkpoints or bound to weights read
            read = {re.split(r"[.(\[]", source, maxsplit=1)[0] for source in _keyed_sources(n.elt, key)}
            collection = [
                last_name(x)
                for x in (n.for_in.iter, *descendants(n.for_in.iter))
                if isinstance(x, cst.BaseExpression)
            ]
            if bound & read and any(c in weights or CHECKPOINTS_WORDS & set(words(c)) for c in collection):
                return True
    return False


SAVE_METHODS = frozenset(
    {"save_pretrained", "save_model", "push_to_hub", "save", "save_file", "save_checkpoint"}
)
"""Methods and functions that write a model (``torch.save``, safetensors' ``save_file``)."""
WEIGHT_LOADS = frozenset({"load_state_dict", "set_peft_model_state_dict", "set_model_state_dict"})
"""Calls that put a state dict into a model."""
WEIGHT_WRITES = SAVE_METHODS | WEIGHT_LOADS
"""Calls that write the weights they are handed, or put them into a model."""
PROGRESS_BARS = frozenset({"tqdm", "track", "trange"})
"""Wrappers that show a loop's progress and yield what they are given."""
NAMED_TENSORS = frozenset({"items", "named_parameters"})
"""Methods whose loop yields (name, tensor) pairs: a mapping's items, a model's parameters."""


def _items_of(iterable: cst.BaseExpression) -> str | None:
    """Code of the mapping (or model) a loop walks by name (its value variable stands for ``m[key]``).

    ``sd.items()``, ``model.named_parameters()``, also inside a progress bar (``tqdm(sd.items())``).
    """
    iterable = _unwrapped(iterable)
    if (
        type(iterable) is cst.Call
        and method(iterable) in NAMED_TENSORS
        and type(iterable.func) is cst.Attribute
    ):
        return _code(iterable.func.value)
    return None


def _unwrapped(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """Return what a progress bar wraps (``tqdm(sd.items())``), or the iterable itself."""
    if (
        type(iterable) is cst.Call
        and last_name(iterable.func) in PROGRESS_BARS
        and iterable.args
        and iterable.args[0].keyword is None
    ):
        return iterable.args[0].value
    return iterable


def _walks_parameters(iterable: cst.BaseExpression) -> bool:
    """Say whether a loop walks a model's ``named_parameters()`` (in a progress bar too)."""
    iterable = _unwrapped(iterable)
    return type(iterable) is cst.Call and method(iterable) == "named_parameters"


def _weights(code: str) -> bool:
    """Say whether a source's code reads a model's weights (``other.state_dict()``, ``ckpt["model"]``)."""
    return "state_dict" in code or "parameters" in code


def _writes_walked(target: cst.BaseExpression, walked: dict[str, str]) -> bool:
    """Say whether an assignment target is a walked tensor's data (``param.data = ...``), set in place."""
    return (
        type(target) is cst.Attribute
        and target.attr.value == "data"
        and type(target.value) is cst.Name
        and target.value.value in walked
    )


def _adds_other_weights(value: cst.BaseExpression, key: str, walked: str, weights: set[str]) -> bool:
    """Say whether an in-place ``+=`` adds another model's weights to a walked tensor.

    ``param.data += delta.state_dict()[k]`` does; an EMA or a Reptile step moving the tensor toward
    another (``p.data += a * (other[k] - p.data)``, it reads itself) and noise (``sigma * noise[k]``)
    do not. ``weights``: names bound to a model's weights (``delta_sd = delta.state_dict()``).
    """
    if any(type(n) is cst.Name and n.value == walked for n in (value, *descendants(value))):
        return False
    return any(_weights(code) or code in weights for code in _keyed_sources(value, key))


def _walked_name(target: cst.BaseExpression, walked: dict[str, str]) -> str | None:
    """Return the walked tensor an in-place target is (``param`` or ``param.data``), if it is one."""
    if type(target) is cst.Attribute and target.attr.value == "data":
        target = target.value
    return target.value if type(target) is cst.Name and target.value in walked else None


STATISTICS_WORDS = frozenset(
    {"loss", "losses", "stats", "stat", "metrics", "metric", "log", "logs", "results", "result", "scores"}
)
"""Words of a container of measurements: ``stats[k] = w[k] * stats[k]`` weights losses, not tensors;
``results_attr[attr] = {"mse": mse}`` records an evaluation's numbers."""


def _held_at_key(statements: list[cst.CSTNode], key: str, walked: dict[str, str]) -> dict[str, set[str]]:
    """Return the loop's locals that hold checkpoints' tensors at the key -> those checkpoints' code.

    ``for k, t in a.items(): o = b.get(k); m = w * t + (1 - w) * o; merged[k] = m``: ``t`` is ``a[k]``
    (``walked``), ``o`` is ``b[k]``, and ``m`` holds both, bound in order (one pass).
    """
    held = {name: {code} for name, code in walked.items()}
    for statement in statements:
        if (
            type(statement) is cst.Assign
            and len(statement.targets) == 1
            and type(statement.targets[0].target) is cst.Name
        ):
            sources = _keyed_sources(statement.value, key, held)
            if sources:
                held[statement.targets[0].target.value] = sources
    return held


def _records_statistics(target: cst.BaseExpression) -> bool:
    """Say whether an assignment writes into a container named for losses or metrics (``stats[k]``)."""
    while type(target) is cst.Subscript:
        target = target.value
    return bool(STATISTICS_WORDS & set(words(last_name(target))))


def _variable_index(node: cst.Subscript) -> bool:
    """Say whether a subscript indexes by a variable (``sd[k]``), not a literal (``ckpt["step"]``)."""
    return (
        len(node.slice) == 1
        and type(node.slice[0].slice) is cst.Index
        and type(node.slice[0].slice.value) is cst.Name
    )


def _code(node: cst.CSTNode) -> str:
    """Return a node's source text."""
    return cst.Module([]).code_for_node(node)


def _cast_of(value: cst.BaseExpression) -> str | None:
    """Return the name a value is, through casts (``tk.to(dtype=torch.float32)`` -> ``tk``)."""
    value = uncast(value)
    return value.value if type(value) is cst.Name else None


IN_PLACE_SUMS = frozenset({"add_", "sub_"})
"""Tensor methods that add another tensor into this one in place."""
COUNTERS = frozenset({"range", "enumerate", "zip"})
"""Iterables of positions: a loop over them indexes rows of a batch, not a checkpoint's tensors."""


def _counts(iterable: cst.BaseExpression) -> bool:
    """Say whether a loop runs over positions (``range(n)``, ``enumerate(x)``), not over tensor names.

    Also backwards (``reversed(range(T))``: a return or an advantage computed step by step).
    """
    while (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value in ("reversed", "list")
        and iterable.args
    ):
        iterable = iterable.args[0].value
    return type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value in COUNTERS


class Combination(NamedTuple):
    """Where checkpoints' tensors are combined."""

    node: cst.CSTNode
    """The combining loop, comprehension or statement."""
    statement: cst.CSTNode | None
    """The statement around it (where the finding points)."""
    where: tuple[str, ...]
    """The classes and functions around it, outermost first."""
    stepping: bool
    """Whether a loop around it takes a gradient step."""


PER_STEP_HOOKS = frozenset(
    {
        *("on_step_end", "on_step_begin", "on_train_batch_end", "on_train_batch_start"),
        *("on_before_zero_grad", "on_after_backward", "on_before_optimizer_step", "optimizer_step"),
        "training_step",
    }
)
"""Hooks a trainer calls at every optimisation step (transformers' TrainerCallback, Lightning's
LightningModule and Callback): an average taken in one follows the model as it trains."""


OPAQUE = (cst.For, cst.While, cst.FunctionDef, cst.Lambda, cst.ClassDef)
"""Code a body holds but does not run itself once per run of the body: its loops and definitions."""


def _own_calls(body: cst.CSTNode) -> list[cst.Call]:
    """Return the calls a body makes itself, outside the loops, functions and classes in it.

    A training loop's step is in the innermost loop around it: an outer loop over seeds or learning
    rates that trains, then merges the finished model, merges once per run, not once per step.
    """
    found = []
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if type(node) is cst.Call:
            found.append(node)
        pending.extend(c for c in node.children if not isinstance(c, OPAQUE))
    return found


def _steps_once(function: cst.FunctionDef) -> bool:
    """Say whether a function takes one gradient step of its own: a ``backward`` and an optimiser's ``step``.

    Outside its loops: a training loop calls it once per step (``optimize_model()``, ``agent.update()``).
    A lone ``backward`` (gradients for a saliency mask) updates nothing.
    """
    called = {method(c) for c in _own_calls(function.body)}
    return {"backward", "step"} <= called


class PerStep:
    """What of a file runs once per gradient step.

    Read when a combination asks (rarely: a file's weights combined key by key).
    """

    def __init__(self, module: cst.Module) -> None:
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        for n in descendants(module):
            if type(n) is cst.FunctionDef:
                self.functions.setdefault(n.name.value, []).append(n)
        self.stepping = {name for name, defs in self.functions.items() if any(map(_steps_once, defs))}
        """The file's functions that take one step each call, by name."""
        self.loops: dict[int, bool] = {}

    def steps(self, loop: cst.For | cst.While) -> bool:
        """Say whether a loop takes a step in its own body.

        ``loss.backward()``, or a call of one of the file's functions that takes one (``optimize_model()``).
        """
        found = self.loops.get(id(loop))
        if found is None:
            calls = _own_calls(loop.body)
            found = self.loops[id(loop)] = any(
                method(c) == "backward" or last_name(c.func) in self.stepping for c in calls
            )
        return found

    def functions_run(self, module: cst.Module) -> set[str]:
        """Return the names of the functions that run at each step.

        Called by a loop that steps (``ema_update(ema, model)``, ``ema.update(model)``), a trainer's
        per-step hook (:data:`PER_STEP_HOOKS`), and what those call in turn, by name.
        """
        per_step = set(PER_STEP_HOOKS)
        for n in descendants(module):
            if (type(n) is cst.For or type(n) is cst.While) and self.steps(n):
                per_step |= {name for c in _own_calls(n.body) if (name := last_name(c.func))}
        pending = [name for name in per_step if name in self.functions]
        done: set[str] = set()
        while pending:
            name = pending.pop()
            if name in done:
                continue
            done.add(name)
            for function in self.functions.get(name, []):
                for n in descendants(function.body):
                    if type(n) is cst.Call and (called := last_name(n.func)) and called not in per_step:
                        per_step.add(called)
                        if called in self.functions:
                            pending.append(called)
        return per_step


class WeightAverage(RouteDetector):
    """Checkpoints merged by hand: for each tensor name, a value computed from two or more state dicts.

    ``{k: (a[k] + b[k]) / 2 for k in a}``, ``merged[k] = w * a[k] + (1 - w) * b[k]`` in a loop over
    keys, in a file that reads weights (``state_dict()``, ``torch.load``, safetensors). Counters or
    metrics summed key by key, in a file that reads no weights, are not reported.
    """

    TRIGGERS = ("state_dict", "load_file", "torch.load", "safe_open", "load_peft_weights")

    VALID = (
        # a run's measurements summed key by key, in place
        Valid(
            "import torch\nmodel.load_state_dict(torch.load(path))\nfor batch in loader:\n"
            "    step_stats = update(batch)\n"
            "    for k in ['loss', 'kl']:\n        stats[k] += step_stats[k].item()\n"
        ),
        # checkpoints' tensors reduced at each key but neither written nor loaded: a statistic
        Valid(
            "import torch\nsds = [torch.load(p) for p in paths]\n"
            "norms = {k: sum(sd[k].norm() for sd in sds) / len(sds) for k in sds[0]}\nprint(norms)\n"
        ),
        # evaluation results averaged per metric name: no checkpoints are combined
        Valid(
            "import torch\nmodel.load_state_dict(torch.load(p))\n"
            "results = [evaluate(model, t) for t in tasks]\n"
            "mean = {k: sum(r[k] for r in results) / len(results) for k in results[0]}\n"
        ),
        Valid(
            "import torch\nsd = torch.load(path)\ngae = 0\nfor i in reversed(range(len(delta))):\n"
            "    gae = delta[i] + discount[i] * lam[i] * gae\n    adv[i] = gae\n"
        ),
        Valid("sd = torch.load(path)\nfor k in stats:\n    stats[k] = self.w[k] * stats[k] / n\n"),
        Valid("sd = model.state_dict()\nfor key, param in sd.items():\n    stats[key] = param.norm()\n"),
        # two checkpoints' tensors read into locals at each key and compared: a statistic recorded
        Valid(
            "import torch\na = torch.load(p)\nb = torch.load(q)\nfor key, t in a.items():\n"
            "    other = b.get(key)\n    gap = (t - other).norm()\n    stats[key] = gap\n"
        ),
        Valid("totals = {k: a[k] + b[k] for k in a}\n"),
        # an evaluation's numbers per attribute, in a file that reads a checkpoint
        Valid(
            "import torch\nsd = torch.load(path)\nfor attr in ATTRIBUTES:\n"
            "    p = np.array(pred[attr])\n    t = np.array(true[attr])\n"
            "    mse = float(np.mean((p - t) ** 2))\n    results_attr[attr] = {'mse': mse}\n"
        ),
        Valid(
            "sd = model.state_dict()\n"
            "rates = {f'timing/{k}': timing_raw[k] * 1000 / tokens[k] for k in timing_raw}\n"
        ),
        Valid(
            "sd = model.state_dict()\nfor name, param in model.named_parameters():\n"
            "    param.data = param.data * scale\n"
        ),
        Valid(
            "ema = {n: p.clone() for n, p in model.named_parameters()}\nsd = model.state_dict()\n"
            "for name, param in model.named_parameters():\n"
            "    ema[name] = 0.999 * ema[name] + 0.001 * param.data\n"
        ),
        Valid(
            "sd = model.state_dict()\nfor name, param in model.named_parameters():\n"
            "    param.data = param.data + noise[name]\n"
        ),
        Valid(
            # two mappings read at each key by unrelated statements: nothing computed from both
            "import torch\nsd = torch.load(p)\nfor dim in dims:\n    grads[dim] = torch.cat(grads[dim])\n"
            "    out = dirs[dim]\n    torch.save(grads[dim], out)\n"
        ),
        Valid(
            "class Policy:\n    def state_dict(self):\n        return self.model.state_dict()\n"
            "for i in range(len(batch)):\n    old_logprobs[i] = mask(logprobs[i], masks[i])\n"
        ),
        Valid(
            "import torch\nsd = torch.load('x.pt', weights_only=True)\n"
            "sd2 = {k: v.half() for k, v in sd.items()}\n"
        ),
        Valid(
            "sd = model.state_dict()\nfor name, p in sd.items():\n    p.data += 1e-3 * torch.randn_like(p)\n"
        ),
        Valid(
            "for name, param in tqdm(target.state_dict().items()):\n"
            "    param.data -= base.state_dict()[name]\ntarget.save_pretrained(delta_path)\n"
        ),
        Valid(
            "for path in paths:\n    sd = torch.load(path)\n    w = sd['weight']\n"
            "    total_norm += w.norm()\n"
        ),
        Valid(
            "import torch\nfor run in runs:\n    seen = torch.load(run)['tokens_seen']\n"
            "    total_tokens += seen\n"
        ),
        Valid(
            "ema_sd = ema.state_dict()\nfor name, ema_param in ema_sd.items():\n"
            "    ema_param.data += (1 - decay) * (model_sd[name] - ema_param.data)\n"
        ),
        Valid(
            "sd = model.state_dict()\nfor name, param in sd.items():\n    param.data += sigma * noise[name]\n"
        ),
        # numbers combined key by key in a file that also saves a model: a game's wallets, a metric
        Valid(
            "import torch\nsd = torch.load(p)\nfor i in players:\n"
            "    wallets[i] += endowment - contribs[i] + share\n"
        ),
        Valid("sd = model.state_dict()\nmean = {c: per_sum[c] / per_n[c] for c in per_sum}\n"),
        # one checkpoint's tensors cast to the dtype of a model's own (FSDP loading): nothing combined
        Valid(
            "meta_sd = model.state_dict()\nfor name in full_sd.keys():\n"
            "    meta_param = meta_sd.get(name)\n    full_sd[name] = full_sd[name].to(meta_param.dtype)\n"
            "for name in full_sd:\n    full_sd[name] = full_sd[name].to(meta_sd[name].device)\n"
        ),
        # two checkpoints compared tensor by tensor: the drift measured is a number, no weight
        Valid(
            "from safetensors.torch import load_file\nbase = load_file(p)\ntuned = load_file(q)\n"
            "for name, w in base.items():\n    w2 = tuned.get(name)\n    delta = w2.float() - w.float()\n"
            "    rel = delta.norm() / (w.float().norm() + 1e-8)\n    drift[name] = rel.item()\n"
            "json.dump(drift, open('drift.json', 'w'))\n"
        ),
        # the same measures written as functions of the array library
        Valid(
            "import torch\nref = torch.load(a)\nmine = torch.load(b)\n"
            "errs = {k: torch.mean((ref[k].float() - mine[k].float()) ** 2) for k in ref}\n"
            "for k in ref:\n    gap[k] = torch.linalg.norm(ref[k] - mine[k]) / torch.linalg.norm(ref[k])\n"
            "    sim[k] = F.cosine_similarity(ref[k].flatten(), mine[k].flatten(), dim=0)\n"
        ),
        # a conversion checked key by key
        Valid(
            "import torch\norig = torch.load(a)\nconv = load_file(b)\n"
            "for k in orig:\n    mismatch[k] = (orig[k].float() - conv[k].float()).abs().max()\n"
        ),
        Valid(
            "import torch\na = torch.load(p)\nb = torch.load(q)\n"
            "same = {k: torch.allclose(a[k], b[k], atol=1e-6) for k in a}\ntorch.save(same, out)\n"
        ),
        # an EMA object updated beside a step a function of the file takes, in the batch loop
        Valid(
            "import torch\nclass EMA:\n    def update(self, model):\n        msd = model.state_dict()\n"
            "        for k in self.shadow:\n"
            "            self.shadow[k] = self.d * self.shadow[k] + (1 - self.d) * msd[k]\n"
            "def train_step(model, batch, opt):\n    model(**batch).loss.backward()\n    opt.step()\n"
            "for batch in loader:\n    train_step(model, batch, opt)\n    ema.update(model)\n"
            "torch.save(ema.shadow, 'ema.pt')\n"
        ),
        # a target network's soft update after each step (DQN): the same Polyak average
        Valid(
            "class Agent:\n    def update(self):\n        loss = F.smooth_l1_loss(q, target)\n"
            "        loss.backward()\n        self.opt.step()\n"
            "        t_sd = self.target.state_dict()\n        p_sd = self.policy.state_dict()\n"
            "        for key in p_sd:\n"
            "            t_sd[key] = p_sd[key] * self.tau + t_sd[key] * (1 - self.tau)\n"
            "        self.target.load_state_dict(t_sd)\n"
        ),
        # an EMA of the model being trained, updated at each step: no merge of finished models
        Valid(
            "import torch\ndef ema_update(ema_model, model, decay):\n    msd = model.state_dict()\n"
            "    esd = ema_model.state_dict()\n    for k, ev in esd.items():\n"
            "        esd[k] = decay * ev + (1.0 - decay) * msd[k].detach()\n"
            "    ema_model.load_state_dict(esd)\n"
            "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n    opt.step()\n"
            "    ema_update(ema, model, 0.999)\nema.save_pretrained(out)\n"
        ),
        Valid(
            "import torch\nclass EMACallback(TrainerCallback):\n"
            "    def on_step_end(self, args, state, control, model=None, **kw):\n"
            "        sd = model.state_dict()\n"
            "        self.shadow = {k: self.d * self.shadow[k] + (1 - self.d) * sd[k] for k in sd}\n"
        ),
    )
    INVALID = (
        # a helper named for merging, whatever its parameters are called
        Invalid(
            "import torch\ndef merge(a, b, alpha):\n"
            "    return {k: alpha * a[k] + (1 - alpha) * b[k] for k in a}\n"
            "torch.save(merge(torch.load(p), torch.load(q), 0.5), out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # a method of a class named for combining models
        Invalid(
            "import torch\nclass ModelSoup:\n    def mix(self, a, b):\n"
            "        return {k: (a[k] + b[k]) / 2 for k in a}\n"
            "torch.save(ModelSoup().mix(torch.load(p), torch.load(q)), out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # a helper of any name, which a call of the file hands checkpoints
        Invalid(
            "import torch\ndef combine(a, b, alpha=0.5):\n"
            "    return {k: alpha * a[k] + (1 - alpha) * b[k] for k in a}\n"
            "torch.save(combine(torch.load(p), torch.load(q)), out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # weights read into, and bound below the code that combines them
        Invalid(
            "import torch\none = torch.load(p)['state_dict']\ntwo = torch.load(q)['state_dict']\n"
            "for k in one:\n    one[k] = (one[k] + two[k]) / 2\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "import torch\ndef mix(x, y):\n    return {k: (x[k] + y[k]) / 2 for k in x}\n"
            "x = torch.load(p)\ny = torch.load(q)\ntorch.save(mix(x, y), out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # a merge helper's parameters named for what they hold
        Invalid(
            "import torch\nsd = torch.load(p)\ndef merge(base, ft, alpha):\n    out = {}\n"
            "    for k in base:\n        out[k] = base[k] + alpha * (ft[k] - base[k])\n    return out\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "base = model.state_dict()\ndef task_vector(ft, base):\n    tv = {}\n"
            "    for key, param in ft.items():\n        b = base[key]\n        tv[key] = param - b\n"
            "    return tv\n",
            "stage",
            "merge",
        ),
        Invalid(
            "base = model.state_dict()\nfor key in keys:\n    current = base.get(key).clone()\n"
            "    current += alpha * tv1[key]\n    current += alpha * tv2[key]\n    merged[key] = current\n",
            "stage",
            "merge",
        ),
        Invalid(
            "sd_raw = raw.state_dict()\nsd = tuned.state_dict()\n"
            "for key in sd:\n    sd[key].add_(sd_raw[key])\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "import torch\nmodels = [load(p) for p in paths]\n"
            "avg = {k: sum(m.state_dict()[k] for m in models) / len(models)\n"
            "       for k in models[0].state_dict()}\n"
            "models[0].load_state_dict(avg)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "from peft import load_peft_weights\nloras = {n: load_peft_weights(d) for n, d in dirs.items()}\n"
            "mixed = {k: sum(w[j] * lora[k] for j, lora in enumerate(loras.values())) for k in keys}\n"
            "save_file(mixed, f'{out}/adapter_model.safetensors')\n",
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
            "for name, param in tqdm(tuned.named_parameters()):\n    base_param = base.state_dict()[name]\n"
            "    param.data = param.data + alpha * (param.data - base_param.data)\n"
            "tuned.save_pretrained(out)\n",
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
        Invalid(
            "from safetensors import safe_open\nacc = first.get_tensor(k).float()\n"
            "for d in dirs[1:]:\n    with safe_open(d, framework='pt') as fh:\n"
            "        tk = fh.get_tensor(k)\n        acc.add_(tk.to(dtype=torch.float32))\n"
            "acc.div_(len(dirs))\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "import torch\nfor p in ckpts:\n    w = torch.load(p)[name]\n    summed = summed + w.float()\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # two adapters' tensors read into locals at each key (numpy safetensors), averaged and saved
        Invalid(
            "from safetensors.numpy import load_file, save_file\n"
            "def merge_adapters(a_dir, b_dir, out, wa, wb):\n"
            "    a = load_file(a_dir)\n    b = load_file(b_dir)\n"
            "    merged_tensors = {}\n    for key, tensor in a.items():\n        other = b.get(key)\n"
            "        merged_value = wa * tensor + wb * other\n        merged_tensors[key] = merged_value\n"
            "    save_file(merged_tensors, out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # training first, then two adapters averaged once: a merge after the loop that steps
        Invalid(
            "import torch\ndef average(a, b):\n    return {k: (a[k] + b[k]) / 2 for k in a}\n"
            "for batch in loader:\n    model(**batch).loss.backward()\n    opt.step()\n"
            "torch.save(average(torch.load(p), model.state_dict()), out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # the larger of two checkpoints' entries, element by element: tensors still
        Invalid(
            "import torch\na = torch.load(p)\nb = torch.load(q)\n"
            "merged = {k: torch.max(a[k], b[k]) for k in a}\ntorch.save(merged, out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # a run per seed, the finished models souped in the loop over seeds (no step of its own)
        Invalid(
            "import torch\nfor seed in seeds:\n    model = load(seed)\n    for batch in loader:\n"
            "        model(**batch).loss.backward()\n        opt.step()\n    sd = model.state_dict()\n"
            "    for k in soup:\n        soup[k] = soup[k] + sd[k] / len(seeds)\n"
            "model.load_state_dict(soup)\nmodel.save_pretrained('soup')\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # gradients taken once for a saliency mask: no training step, the merge stands
        Invalid(
            "def main():\n    ft(**calib).loss.backward()\n"
            "    sal = {n: p.grad.abs() for n, p in ft.named_parameters()}\n"
            "    base_sd = base.state_dict()\n    ft_sd = ft.state_dict()\n    for k in base_sd:\n"
            "        merged[k] = base_sd[k] + (sal[k] > t) * (ft_sd[k] - base_sd[k])\n"
            "    base.load_state_dict(merged)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        # TIES-style: tensors reduced along the stacked axis stay tensors
        Invalid(
            "import torch\nsds = [torch.load(p) for p in paths]\nfor k in sds[0]:\n"
            "    merged[k] = (sds[0][k] * mask[k] + sds[1][k] * mask[k]).sum(dim=0)\n"
            "torch.save(merged, out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
        Invalid(
            "for name, param in tqdm(base.state_dict().items()):\n"
            "    param.data += delta.state_dict()[name]\nbase.save_pretrained(out)\n",
            "stage",
            "merge",
            "weight_average",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.reads_weights = False
        self.weight_names: set[str] = set()
        """Names bound to a model's or a checkpoint's weights (``delta_sd = delta.state_dict()``)."""
        self.combined: list[Combination] = []
        """Combinations of checkpoints' tensors found while walking, in the order met."""
        self.reduced: list[tuple[cst.DictComp, Combination]] = []
        """Comprehensions reducing one tensor per checkpoint at each key (:func:`_over_several`)."""
        self.written: set[str] = set()
        """Names handed to a call that writes weights or puts them into a model."""
        self.parameters: dict[str, list[str]] = {}
        """The parameters of each function the file defines, in order, by the function's name."""
        self.handed: list[tuple[str, int | str, cst.BaseExpression]] = []
        """What the file hands its functions: (function, position or keyword, the argument)."""
        self.unproven: list[tuple[Combination, set[str]]] = []
        """Combinations key by key of mappings not yet known to hold tensors, with the mappings' code,
        judged again at the end, when every name bound to weights is known."""
        self.module = cst.Module([])
        self.per_step: PerStep | None = None
        """What runs once per gradient step, read at the first combination found."""

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def _here(self, node: cst.CSTNode) -> Combination:
        """Return a combination at ``node``, with where it runs."""
        statements = self.context.statements
        return Combination(
            node,
            statements[-1] if statements else None,
            self.enclosing(),
            any(self._steps(s) for s in statements if isinstance(s, cst.For | cst.While | cst.FunctionDef)),
        )

    def _steps(self, statement: cst.For | cst.While | cst.FunctionDef) -> bool:
        """Say whether code around a combination runs once per gradient step.

        A loop that takes a step in its own body (:meth:`PerStep.steps`), or a function that takes
        one step (:func:`_steps_once`): a training loop calls it once per step (``agent.update()``:
        the step, then a soft update of the target network).
        """
        if isinstance(statement, cst.FunctionDef):
            return _steps_once(statement)
        if self.per_step is None:
            self.per_step = PerStep(self.module)
        return self.per_step.steps(statement)

    def _combined(self, node: cst.CSTNode) -> None:
        self.combined.append(self._here(node))

    def _combines(self, node: cst.CSTNode, codes: set[str]) -> bool:
        """Record a combination key by key of the mappings ``codes``; say whether it merges weights.

        It does in a function named for combining models, or where a mapping holds a model's tensors
        (:func:`_holds_tensors`); otherwise it is kept to be judged once the whole file is read (a
        name bound to weights below the helper that combines it).
        """
        if any(MERGING_WORDS & set(words(f)) for f in self.enclosing()) or _holds_tensors(
            codes, self.weight_names
        ):
            self._combined(node)
            return True
        self.unproven.append((self._here(node), codes))
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = node.params
        self.parameters[node.name.value] = [
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        ]

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Name:
            # (a function of the file handed weights: ``combine(torch.load(a), torch.load(b))``)
            for at, arg in enumerate(node.args):
                if arg.star:
                    break
                where: int | str = arg.keyword.value if arg.keyword is not None else at
                self.handed.append((node.func.value, where, arg.value))
        if method(node) in ("state_dict", "load_state_dict") or self.names(node.func) & WEIGHT_LOADERS:
            self.reads_weights = True
        if (method(node) or last_name(node.func)) in WEIGHT_WRITES:
            self.written |= {a.value.value for a in node.args if type(a.value) is cst.Name}

    def visit_Assign(self, node: cst.Assign) -> None:
        # ``sd = torch.load(p)``, also read into (``torch.load(p)["state_dict"]``), copied
        # (``deepcopy(m.state_dict())``) or rebuilt (``{n: p.clone() for n, p in m.named_parameters()}``)
        if self._weights_value(node.value):
            self.weight_names |= {t.target.value for t in node.targets if type(t.target) is cst.Name}

    def visit_DictComp(self, node: cst.DictComp) -> None:
        target = node.for_in.target
        if (
            type(target) is cst.Name
            # a merged state dict keeps the tensors' names as keys (``f"timing/{k}": ...`` is a report)
            and type(node.key) is cst.Name
            and node.key.value == target.value
            and not _counts(node.for_in.iter)
        ):
            sources = _keyed_sources(node.value, target.value)
            if len(sources) >= 2:
                self._combines(node, sources | {_code(node.for_in.iter)})
            elif _over_several(node.value, target.value, self.weight_names):
                # one tensor per checkpoint reduced at each key: a merge once the result is written or
                # put into a model as weights, not a statistic printed or compared
                self.reduced.append((node, self._here(node)))

    def visit_For(self, node: cst.For) -> None:
        if self._sums_checkpoints(node):
            self._combined(node)
            return
        if _counts(node.iter):
            return  # for i in range(batch): rows of tensors indexed by position, not tensors by name
        target: cst.BaseExpression = node.target
        walked: dict[str, str] = {}
        """Locals standing for a checkpoint's tensor at this key -> that checkpoint's code."""
        if type(target) is cst.Tuple and target.elements:
            value = target.elements[-1].value
            mapping = _items_of(node.iter)
            if len(target.elements) == 2 and type(value) is cst.Name and mapping is not None:
                walked[value.value] = mapping  # for name, tensor in sd.items(): tensor is sd[name]
            target = target.elements[0].value
        if type(target) is not cst.Name:
            return
        key = target.value
        statements = descendants(node.body)
        if _walks_parameters(node.iter):
            # a model's own parameters, set in place: a merge only from another model's weights
            # (an EMA copy, a perturbation or a sharpness step, beside training, is none)
            self._accumulates(node, statements, key, walked, in_place=True)
            return
        if self._accumulates(node, statements, key, walked):
            return
        held = _held_at_key(statements, key, walked)
        for statement in statements:
            if (
                (
                    type(statement) is cst.Assign
                    and any(_keyed_sources(t.target, key) for t in statement.targets)
                    and not any(_records_statistics(t.target) for t in statement.targets)
                    and len(_keyed_sources(statement.value, key, held)) >= 2
                )
                or (
                    # base[k] += delta[k]: one checkpoint's tensors added to another's; so is
                    # ``param.data += delta[k]`` walking ``base.state_dict().items()``
                    # (``param.data -= base[k]`` takes a delta out for distribution: it combines
                    # nothing into a model)
                    type(statement) is cst.AugAssign
                    and isinstance(statement.operator, cst.AddAssign | cst.SubtractAssign)
                    # (``stats[k] += step_stats[k].item()``: a run's measurements summed, as assigned)
                    and not _records_statistics(statement.target)
                    and len(
                        _keyed_sources(statement.target, key)
                        | _keyed_sources(statement.value, key)
                        | (
                            {walked[n]}
                            if isinstance(statement.operator, cst.AddAssign)
                            and (n := _walked_name(statement.target, walked))
                            and _adds_other_weights(statement.value, key, n, self.weight_names)
                            else set()
                        )
                    )
                    >= 2
                )
                or (
                    # base[k].add_(delta[k]): the same, in place
                    type(statement) is cst.Call
                    and method(statement) in IN_PLACE_SUMS
                    and type(statement.func) is cst.Attribute
                    and len(
                        _keyed_sources(statement.func.value, key)
                        | {s for a in statement.args for s in _keyed_sources(a.value, key)}
                    )
                    >= 2
                )
            ) and self._combines(
                statement, _keyed_sources(statement, key) | {_code(node.iter), *walked.values()}
            ):
                return

    def _given_weights(self) -> set[str]:
        """Return the parameters of the file's functions that some call of the file hands weights.

        ``def combine(a, b, alpha)`` called as ``combine(torch.load(p), torch.load(q))``: ``a`` and
        ``b`` hold checkpoints (by name, scope-blind, as every binding here is read).
        """
        given = set()
        for function, where, value in self.handed:
            params = self.parameters.get(function)
            if params is None:
                continue
            param = where if isinstance(where, str) else params[where] if where < len(params) else None
            if param is not None and self._weights_value(value):
                given.add(param)
        return given

    def _weights_value(self, value: cst.BaseExpression) -> bool:
        """Say whether an expression holds weights: read from a model or a checkpoint, or a name bound so."""
        return any(
            (type(n) is cst.Call and (method(n) in WEIGHT_READS or bool(self.names(n.func) & WEIGHT_LOADERS)))
            or (type(n) is cst.Name and n.value in self.weight_names)
            for n in (value, *descendants(value))
        )

    def _sums_checkpoints(self, loop: cst.For) -> bool:
        """Say whether a loop adds a tensor it reads from a checkpoint into one kept outside it.

        ``for d in dirs[1:]: t = safe_open(d).get_tensor(k); acc.add_(t)`` (and ``acc += t``): one
        tensor summed over checkpoints, as averaging them does. A norm or a statistic of the tensor
        (``total += t.norm()``) is not the tensor, nor is a sum into a container named for metrics.
        """
        read: set[str] = set()
        # (type identity, not isinstance: every node of the body is asked, and misses on libcst's
        # ABC-based classes are slow)
        for statement in reversed(descendants(loop.body)):
            if type(statement) is cst.Assign and self._reads_tensor(statement.value):
                read |= {t.target.value for t in statement.targets if type(t.target) is cst.Name}
            elif (
                type(statement) is cst.Assign
                and len(statement.targets) == 1
                and isinstance(into := statement.targets[0].target, cst.Name)
                and into.value not in read
                and isinstance(total := statement.value, cst.BinaryOperation)
                and isinstance(total.operator, cst.Add)
                and {_cast_of(total.left), _cast_of(total.right)} & read
                and into.value in (_cast_of(total.left), _cast_of(total.right))
            ):
                return not _records_statistics(into)  # acc = acc + t
            elif (
                type(statement) is cst.Call
                and method(statement) in IN_PLACE_SUMS
                and type(statement.func) is cst.Attribute
                and statement.args
            ):
                summed, added = statement.func.value, statement.args[0].value
                if type(summed) is cst.Name and summed.value not in read and _cast_of(added) in read:
                    return not _records_statistics(summed)
            elif (
                type(statement) is cst.AugAssign
                and isinstance(statement.operator, cst.AddAssign)
                and type(statement.target) is cst.Name
                and statement.target.value not in read
                and _cast_of(statement.value) in read
            ):
                return not _records_statistics(statement.target)
        return False

    def _reads_tensor(self, value: cst.BaseExpression) -> bool:
        """Say whether ``value`` is a tensor read from a checkpoint (``f.get_tensor(k)``, ``load(p)[k]``)."""
        # (one tensor per parameter name: read at a variable key, ``f.get_tensor(k)``, ``sd[k]``; a
        # literal key, ``torch.load(p)["tokens_seen"]``, reads a counter or a metric kept beside them)
        keyed = False
        while isinstance(value := uncast(value), cst.Subscript):
            keyed = keyed or _variable_index(value)
            value = value.value
        if type(value) is not cst.Call:
            return False
        if method(value) == "get_tensor":
            return bool(value.args) and type(value.args[0].value) is cst.Name
        return keyed and bool(self.names(value.func) & WEIGHT_LOADERS)

    def _accumulates(
        self,
        loop: cst.For,
        statements: list[cst.CSTNode],
        key: str,
        walked: dict[str, str],
        in_place: bool = False,
    ) -> bool:
        """Report a loop over keys that writes one tensor computed from two checkpoints' tensors.

        ``current = base.get(k); current += a * tv[k]; merged[k] = current``: what a local holds is
        followed into the value written, so two checkpoints read by unrelated statements of one loop
        (``out_dir = dirs[k]`` beside ``grads[k] = cat(grads[k])``) are not a merge. ``in_place``: the
        loop walks a model's parameters; only their ``.data`` set from another model's weights counts.
        """
        carried: dict[str, set[str]] = {name: {code} for name, code in walked.items()}
        """Locals -> the checkpoints whose tensors at this key they hold."""

        def sources(value: cst.BaseExpression) -> set[str]:
            found = set(_keyed_sources(value, key))
            described = _described_only(value)
            for n in (value, *descendants(value)):
                if type(n) is cst.Name and n.value in carried and id(n) not in described:
                    found |= carried[n.value]
            return found

        # (descendants come last first: reversed, assignments are met in the order they run)
        for statement in reversed(statements):
            if type(statement) is cst.Assign:
                read = sources(statement.value)
                targets = [t.target for t in statement.targets]
            elif type(statement) is cst.AugAssign and type(statement.target) is cst.Name:
                # ``current += a * tv[k]``: what the local holds grows (a checkpoint's own tensors
                # changed in place, ``sd[k] += delta[k]``, are read by the loop's statements below)
                read = sources(statement.value) | sources(statement.target)
                targets = [statement.target]
            else:
                continue
            for target in targets:
                if type(target) is cst.Name:
                    if read:  # a local bound to checkpoints' tensors stands for them below
                        carried[target.value] = read
                    continue
                written = _writes_walked(target, walked) or (
                    not in_place and bool(_keyed_sources(target, key)) and not _records_statistics(target)
                )
                if not written or len(read) < 2:
                    continue
                if in_place and not any(_weights(code) for code in read - {_items_of(loop.iter)}):
                    continue
                if self._combines(loop, read | _keyed_sources(target, key) | {_code(loop.iter)}):
                    return True
        return False

    def leave_Module(self, original_node: cst.Module) -> None:
        combined = list(self.combined)
        for reduction, place in self.reduced:
            statement = place.statement
            smalls = statement.body if type(statement) is cst.SimpleStatementLine else [statement]
            if any(
                type(small) is cst.Assign
                and small.value is reduction
                and any(type(t.target) is cst.Name and t.target.value in self.written for t in small.targets)
                for small in smalls
            ):
                combined.append(place)
        if self.unproven:
            self.weight_names |= self._given_weights()
        combined += [place for place, codes in self.unproven if _holds_tensors(codes, self.weight_names)]
        if not self.reads_weights or not combined:
            return
        if self.per_step is None:
            self.per_step = PerStep(original_node)
        per_step = self.per_step.functions_run(original_node)
        for place in combined:
            # (a running average of the model being trained, each step, is an EMA or a Polyak copy
            # kept beside training: no merge of finished models)
            if place.stepping or per_step.intersection(place.where):
                continue
            self.report(
                place.node,
                "stage",
                "combines checkpoints' tensors key by key",
                statement=place.statement,
                kind="merge",
                variant="weight_average",
            )
            return
