"""What a gradient step optimises: follow the loss backwards and read the form of what it is made of.

A :class:`Slice` gathers, from the expression a step differentiates, every expression it is computed
from inside one file: a name's assignments in its function (then the module), an attribute of an
object assigned in any method (``self.x = ...``), and the return values of the file's own functions and
methods that are called on the way (bounded in depth and in nodes). :func:`loss_form` then names the
stage that the collected code's form is:

- a preference form — a log-sigmoid (or sigmoid, or a hinge) over chosen/rejected quantities — with a
  reference model, a ``beta`` or log-probabilities is the DPO family; over scores of a scalar head (or a
  margin ranking loss) it is a reward model;
- log-probabilities weighted by advantages or returns, or an importance ratio, is policy gradient: GRPO
  when the advantages are normalised within groups of samples, else the PPO family; two samples'
  log-ratio difference regressed on their reward difference (REBEL), action values regressed on
  discounted rewards (Q-learning) and a value head fitted to returns (an actor-critic's critic) are the
  PPO family too;
- a KL or soft cross-entropy against a teacher's distribution is distillation training (SFT +
  DISTILLATION);
- a cross-entropy or negative log-likelihood on given targets (``labels=``) is SFT.

Identifier words are read the way a reviewer reads them: ``advantages``, ``chosen``/``rejected``,
``ref``/``reference``, ``teacher`` are the vocabulary of the method, not of one codebase.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from arb_audit.analyzer.frameworks import entry_for
from arb_audit.analyzer.names import dotted, last_name, literal_bool, literal_text
from arb_audit.analyzer.trainers import LABEL_KINDS, named_variant, route_word
from arb_audit.analyzer.walk import descendants

MAX_NODES = 6000
"""Most nodes one slice reads (a bound on the cost of a step in a very large file)."""
MAX_DEPTH = 4
"""Most nested calls into the file's own functions one slice follows."""

_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

CROSS_ENTROPY = frozenset(
    {
        "torch.nn.functional.cross_entropy",
        "torch.nn.CrossEntropyLoss",
        "torch.nn.functional.nll_loss",
        "torch.nn.NLLLoss",
        "optax.softmax_cross_entropy",
        "optax.softmax_cross_entropy_with_integer_labels",
        "keras.losses.SparseCategoricalCrossentropy",
        "keras.losses.CategoricalCrossentropy",
        "tensorflow.keras.losses.SparseCategoricalCrossentropy",
        "tensorflow.keras.losses.CategoricalCrossentropy",
    }
)
KL = frozenset({"torch.nn.functional.kl_div", "torch.nn.KLDivLoss"})
SIGMOID = frozenset(
    {
        "torch.nn.functional.logsigmoid",
        "torch.nn.LogSigmoid",
        "torch.sigmoid",
        "jax.nn.log_sigmoid",
        "mlx.nn.log_sigmoid",
        "torch.nn.BCEWithLogitsLoss",
        "torch.nn.functional.binary_cross_entropy_with_logits",
    }
)
"""The logistic link: over a difference of two scores (or log-ratios) it is a Bradley-Terry loss."""
MARGIN = frozenset({"torch.nn.functional.margin_ranking_loss", "torch.nn.MarginRankingLoss"})
REGRESSION = frozenset(
    {
        "torch.nn.functional.mse_loss",
        "torch.nn.MSELoss",
        "torch.nn.functional.smooth_l1_loss",
        "torch.nn.SmoothL1Loss",
        "torch.nn.functional.huber_loss",
        "torch.nn.HuberLoss",
        "torch.nn.functional.l1_loss",
        "torch.nn.L1Loss",
    }
)

PREFERRED_WORDS = frozenset({"chosen", "preferred", "winner", "win"})
DISPREFERRED_WORDS = frozenset({"rejected", "reject", "dispreferred", "loser", "lose"})
"""The two members of a preference pair, as people name them (``logprob_actor_reject``)."""
PREFERENCE_WORDS = (PREFERRED_WORDS | DISPREFERRED_WORDS) - {"win", "lose"}
SCORE_WORDS = frozenset({"reward", "rewards", "score", "scores"})
"""Words of a scalar scorer's outputs."""
REFERENCE_WORDS = frozenset({"ref", "reference"})
LOGPROB_WORDS = frozenset({"logp", "logps", "logprob", "logprobs", "log_probs", "logits"})
SEQUENCE_LOGPROB_WORDS = frozenset({"logp", "logps", "logprob", "logprobs", "logratios"})
"""Log-probabilities of sequences under a policy (a classifier's ``logits`` are not): what a preference
loss over a policy/reference log-ratio is made of, unlike one over a scorer's outputs."""
VALUE_WORDS = frozenset({"value", "values"})
"""A learned value baseline: with a discount (``gamma``) or returns it is a critic's advantage estimate
(PPO's GAE); a ``critic`` or a value-function (``vf``) loss term says the same."""
ADVANTAGE_WORDS = frozenset({"advantage", "advantages", "adv", "advs", "gae", "returns"})
CRITIC_OUTPUT_WORDS = VALUE_WORDS | {"vpred", "vpreds", "critic", "newvalue", "newvalues"}
"""Words of a learned value head's predictions (``values``, ``new_values``, ``vpreds``)."""
RETURN_WORDS = frozenset({"return", "returns"})
"""Words of the discounted returns a critic is regressed on (``returns``, ``mc_returns``, ``Return``)."""
CRITIC_CONTEXT = frozenset(
    {"critic", "vf", "vpred", "vpreds", "gae", "gamma", "advantage", "advantages", "adv", "old", "lam", "td"}
)
"""Words beside a value fitted to returns that say it is a critic of RL: the value's old estimate it is
clipped around, the advantages or discount the returns come from (a regression of predicted stock
returns has none)."""
TARGET_WORDS = frozenset({"target", "targets"})
"""With a value's word, a name of the returns a critic is fitted to (``value_targets``)."""
SHAPING_METHODS = frozenset(
    {
        *("squeeze", "unsqueeze", "view", "reshape", "flatten", "contiguous", "detach", "clone"),
        *("to", "float", "half", "bfloat16", "cuda", "cpu"),
    }
)
"""Methods that reshape, move or cast a tensor and leave it what it was (``values.squeeze(-1)``,
``x.grad.to(dtype)``)."""


def unshaped(node: cst.BaseExpression) -> cst.BaseExpression:
    """Return the tensor that reshaping, moving or casting calls start from (``x.grad.to(d)`` -> ``x.grad``).

    Shared by the readings that name an operand by its tensor (a critic's values, a gradient handed on).
    """
    while (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in SHAPING_METHODS
    ):
        node = node.func.value
    return node


ADVERSARIAL_WORDS = frozenset({"perturb", "perturbed", "perturbation", "adversarial", "attack", "epsilon"})
"""Words of adversarial training (inputs perturbed along a gradient), where "adv" is no advantage."""
PERTURBED_INPUTS = frozenset({"embedding", "embeddings", "embeds", "emb", "example", "examples", "noise"})
"""What "adv" qualifies in adversarial training (``context_adv_embeddings``): perturbed inputs."""


def _adversarial(said: tuple[str, ...]) -> tuple[str, ...]:
    """Return an identifier's words, with a word added for what they say together.

    "adversarial" when "adv" qualifies perturbed inputs; "logp" when "log" leads a policy's or an
    action's name (``log_a``, ``log_pi``: RL code's log-probability of the action taken).
    """
    if "adv" in said and PERTURBED_INPUTS & set(said):
        return (*said, "adversarial")
    if len(said) > 1 and said[0] == "log" and said[1] in ACTION_WORDS:
        return (*said, "logp")
    return said


ACTION_WORDS = frozenset({"a", "act", "action", "actions", "pi", "policy"})
"""Words after "log" in a name for the log-probability of the action a policy took (``log_a``)."""


RATIO_WORDS = frozenset({"ratio", "ratios", "clip", "cliprange", "importance"})
TEACHER_WORDS = frozenset({"teacher", "distill", "distillation", "kd"})
GROUP_WORDS = frozenset({"group", "grpo", "generations"})
MODEL_WORDS = frozenset({"model", "lm", "policy", "net", "gpt", "student", "engine", "actor", "llm"})
"""Words of an object whose forward pass returns its own loss (``model(**batch).loss``)."""
FORWARD_WORDS = MODEL_WORDS | {"agent"}
"""Those, and an agent's: RL libraries wrap the policy as one (``self.agent(**inputs)[0]``), and in a
loss's slice its forward pass is the model's (a reward's parameters named so are not a model's)."""
DPO_VARIANTS = ("kto", "ipo", "orpo", "simpo", "cpo", "spin", "sppo")
PG_VARIANTS = (("rloo", "rloo"), ("reinforce", "reinforce"), ("remax", "remax"))


POLICY_LOSS_WORDS = frozenset({"policy", "pg", "actor"})
ACTOR_CRITIC_WORDS = frozenset({"value", "vf", "critic"})
"""With ``loss``, words of an identifier that names a policy-gradient loss or a learned critic's."""


GROUP_RELATIVE_NAMES = frozenset({"grpo", "dapo", "gspo"})
"""Words of a class, function or loss name for the group-relative family: a clipped ratio alone is the
same form in PPO and GRPO (the group normalisation may live in another file), so the name of the code
it sits in, or of the loss, tells which."""
PG_LOSS_WORDS = frozenset({"ppo", *(v for _, v in PG_VARIANTS), *GROUP_RELATIVE_NAMES})
"""With ``loss``, words of an identifier that names a policy-gradient loss by its algorithm
(``calculate_grpo_loss``, ``ppo_loss``)."""
REWARD_WORDS = frozenset({"reward", "rewards"})
"""Words of a scalar reward (not "score": a bi-encoder's similarity scores are no rewards)."""


def names_rl_loss(identifier: str) -> bool:
    """Say whether ``identifier`` names a policy or value loss (``pg_loss``, ``calculate_grpo_loss``)."""
    said = words(identifier)
    found = set(said)
    if "loss" not in found:
        return False
    named = found & (POLICY_LOSS_WORDS | ACTOR_CRITIC_WORDS | PG_LOSS_WORDS)
    if named == {"value"} and said.index("loss") < said.index("value"):
        # ``loss_value = loss_fct(logits, labels)``: the loss's value (a number), not a critic's loss
        return False
    return bool(named)


PAIRWISE_LOSS_WORDS = frozenset(
    {"pairwise", "pair", "ranking", "rank", "bt", "bradley", "margin", "preference"}
)
"""With ``loss``, words of an identifier that names a pairwise loss of two scores (``pairwise_loss``,
``compute_ranking_loss``): a reward model's when the two are a pair's scores (see :func:`loss_form`)."""
DISTILLATION_LOSS_WORDS = frozenset({"distill", "distillation", "kd", "gkd"})
"""With ``loss``, words of an identifier that names a knowledge-distillation loss (``GKDLoss``, generalised
knowledge distillation; ``kd_loss``, ``DistillationLoss``): a student matched to a teacher's distribution.
Not "teacher": a ``teacher_loss`` is the teacher's own."""
PREFERENCE_LOSS_WORDS = frozenset({"dpo", *DPO_VARIANTS})
"""With ``loss``, words of an identifier that names a preference-family loss (``dpo_loss``). Not
``preference_loss``: a reward model's pairwise loss is called so too (OpenRLHF's)."""


SETTINGS_NAME_WORDS = frozenset({"args", "cfg", "config", "conf", "hparams", "opt", "opts", "params"})
"""Words of a settings object, whose ``.loss`` names a loss to use (``args.loss``), not one computed."""


def _reward_names(node: cst.BaseExpression) -> Iterable[str]:
    """Yield the names an expression reads: its names and attributes."""
    for n in (node, *descendants(node)):
        if type(n) is cst.Name:
            yield n.value
        elif type(n) is cst.Attribute:
            yield n.attr.value


def _reward_named(name: str) -> bool:
    """Say whether a name is a reward's (``reward_base``), not a reward model's (``reward_model``)."""
    said = set(words(name))
    return bool(REWARD_WORDS & said) and "model" not in said


def _note_named_loss(f: Features, identifier: str) -> None:
    said = words(identifier)
    found = set(said)
    # (a variant named by a prefix to its family's name: ``cmdpo_loss``, ``vlmgrpo_loss``)
    variants = {named_variant(w) for w in found} if "loss" in found else set()
    if "GRPO" in variants:
        f.named_rl_losses.add(identifier)
        f.words.add("grpo")  # (the family the form's own words are read for, as for ``grpo_loss``)
    elif names_rl_loss(identifier):
        f.named_rl_losses.add(identifier)
    elif names_the_loss(said) and (found & PREFERENCE_LOSS_WORDS or "DPO" in variants):
        # (the loss itself, ``dpo_loss_v2``; not a setting of it, ``dpo_loss_weight = 0.0``)
        f.named_preference_losses.add(identifier)
    elif "loss" in found and found & PAIRWISE_LOSS_WORDS:
        f.named_pairwise_losses.add(identifier)
    elif names_the_loss(said) and found & DISTILLATION_LOSS_WORDS:
        f.named_distillation_losses.add(identifier)
    elif {"next", "token", "loss"} <= found or {"lm", "loss"} <= found:
        # one identifier naming the language-model objective (``compute_next_token_loss``,
        # ``lm_loss``); the words spread over several names (``next_values``, ``token_rewards``,
        # ``mse_loss``; a ``CausalLM`` model beside a ``compute_loss`` of another object) say nothing
        f.named_lm_losses.add(identifier)


FORWARD_ONLY = "the loss a model's forward pass returns for its batch"
"""The weakest form: a loss only known to come out of a model's forward pass (SFT when nothing else
says what that model computes)."""
PLAIN_POLICY_GRADIENT = "log-probabilities weighted by advantages"
"""Why a policy-gradient loss is given when nothing in it shows a critic or a grouping of its advantages."""


CALLABLE_WORDS = frozenset({"fn", "func", "function", "callable", "callback"})
"""Last words of a name holding a function (``generate_fn``): what it is named for is what it does."""


LOSS_SETTING_WORDS = frozenset(
    {
        *("weight", "weights", "coef", "coeff", "coefficient", "scale", "scaling", "factor", "ratio"),
        *("alpha", "beta", "lambda", "gamma", "temperature", "margin", "threshold", "warmup"),
        *("type", "types", "name", "kind", "mode", "config", "cfg", "enabled", "enable", "flag"),
    }
)
"""Words after "loss" in the name of a setting of the loss (``dpo_loss_weight``, ``kd_loss_type``)."""


def names_the_loss(said: Sequence[str]) -> bool:
    """Say whether a name with "loss" in it names the loss, not a setting of it.

    ``dpo_loss``, ``GKDLoss``, ``kd_loss_fn``, ``dpo_loss_v2``, ``compute_dpo_loss_and_metrics`` name the
    loss; ``dpo_loss_weight``, ``kd_loss_coef``, ``dpo_loss_type`` a setting of it (the words after the
    last "loss" say which).
    """
    if "loss" not in said and "losses" not in said:
        return False
    last = max(i for i, w in enumerate(said) if w in ("loss", "losses"))
    return not LOSS_SETTING_WORDS & set(said[last + 1 :])


MAX_CACHED_IDENTIFIER = 256
"""Longest identifier whose words are cached (a hostile file's megabyte-long names are not kept)."""


def words(identifier: str) -> tuple[str, ...]:
    """Lower-case words of an identifier (``chosen_logps`` -> chosen, logps; ``refLogp`` -> ref, logp).

    Cached: every detector splits the same few thousand names of a file, and again in the next file.
    """
    found = _WORDS.get(identifier)
    if found is None:
        found = _split(identifier)
        if len(identifier) <= MAX_CACHED_IDENTIFIER:
            if len(_WORDS) >= MAX_CACHED_WORDS:
                _WORDS.clear()  # (a long-running process meets ever new names: the cache stays bounded)
            _WORDS[identifier] = found
    return found


def _split(identifier: str) -> tuple[str, ...]:
    found: list[str] = []
    for part in identifier.split("_"):
        found.extend(t.lower() for t in _TOKENS.findall(part))
    if "log" in found and "probs" in found:
        found.append("logprobs")
    return tuple(found)


MAX_CACHED_WORDS = 1 << 15
"""Most identifiers whose words are kept: a plain dict, emptied when full (an LRU cache keeps order
on every hit, and every detector asks the words of every name it meets)."""
_WORDS: dict[str, tuple[str, ...]] = {}
_T = TypeVar("_T")


def cached_by_name(answer: Callable[[str], _T]) -> Callable[[str], _T]:
    """Cache a question asked of every qualified name a detector meets, for names short enough to recur.

    A hostile file's megabyte-long names are answered without being kept.
    """
    cached = functools.lru_cache(maxsize=4096)(answer)

    @functools.wraps(answer)
    def ask(name: str) -> _T:
        return cached(name) if len(name) <= MAX_CACHED_IDENTIFIER else answer(name)

    return ask


def is_one(node: cst.BaseExpression) -> bool:
    """Say whether ``node`` is the literal 1 (``1``, ``1.0``)."""
    return (type(node) is cst.Integer and node.value == "1") or (
        type(node) is cst.Float and node.value in ("1.0", "1.")
    )


def leave_one_out(
    node: cst.BinaryOperation, bound: Callable[[str], cst.BaseExpression | None] | None = None
) -> bool:
    """Say whether an operation takes a leave-one-out baseline (RLOO's).

    The others' total, ``rewards.sum(1, keepdim=True) - rewards`` (or ``torch.sum(r, 0) - r``), or
    a difference over one fewer than the samples, ``(total - r) / (k - 1)``, or the same split over
    that count, ``r * k / (k - 1) - total / (k - 1)``: each sample's reward is
    compared with the mean of the other samples of its prompt, not with a mean over its group that
    includes itself (GRPO's). Where the total is a sum written out, or a name ``bound`` to one, it
    must be the sum of what it is taken from: ``(logits.sum(-1) - target) / (vocab - 1)`` averages
    the other classes of one prediction, and ``(w_max - 1.0) / (k - 1.0)`` is arithmetic.
    """
    left, right = node.left, node.right
    if isinstance(node.operator, cst.Subtract) and _split_over_others(left, right):
        return True
    if isinstance(node.operator, cst.Divide):
        if not (
            type(left) is cst.BinaryOperation
            and isinstance(left.operator, cst.Subtract)
            and type(right) is cst.BinaryOperation
            and isinstance(right.operator, cst.Subtract)
            and is_one(right.right)
            and type(left.right) is not cst.Integer
            and type(left.right) is not cst.Float
        ):
            return False
        total = left.left
        if type(total) is cst.Name and bound is not None:
            total = bound(total.value) or total
        if type(total) is cst.BinaryOperation:
            # ``(k * big - small) / (k - 1)`` (a large-batch noise estimate) is no baseline: a product
            # is the samples' mean times their count (``(r.mean(1) * k - r) / (k - 1)``), or each
            # sample's own times the count less their sum (``(r * k - r.sum()) / (k - 1)``)
            return isinstance(total.operator, cst.Multiply) and _count_times(total, left.right, bound)
        return type(total) is not cst.Call or _sum_of(total, left.right)
    return isinstance(node.operator, cst.Subtract) and type(left) is cst.Call and _sum_of(left, right)


TOKEN_TENSOR_WORDS = frozenset({"logits", "logit", "labels", "label", "targets", "target", "logprobs"})
"""Words of a tensor of per-token scores or targets, flattened over the vocabulary for a cross-entropy."""


def _flattens_for_tokens(viewed: cst.BaseExpression, width: cst.BaseExpression) -> bool:
    """Say whether ``viewed.view(-1, width)`` lays token positions out in rows for a cross-entropy.

    ``shift_logits.view(-1, V)``, ``logits.view(-1, logits.size(-1))``: one row per token over the
    vocabulary, not one row per prompt's group of samples.
    """
    if set(words(last_name(viewed))) & TOKEN_TENSOR_WORDS:
        return True
    if type(width) is cst.Call and type(width.func) is cst.Attribute and width.func.attr.value == "size":
        return True  # (``x.size(-1)``: the last dimension kept whole, the rest flattened)
    if (
        type(width) is cst.Subscript
        and type(width.value) is cst.Attribute
        and width.value.attr.value == "shape"
    ):
        return True
    # (the vocabulary's size by name: ``vocab_size``, ``V``)
    return last_name(width) == "V" or "vocab" in words(last_name(width))


def _split_over_others(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """Say whether ``left - right`` is ``r * k / (k - 1) - total / (k - 1)``: ``r`` minus the others' mean.

    Both terms are divided by one fewer than a count, and the first multiplies by that count.
    """
    if not (
        type(left) is cst.BinaryOperation
        and type(right) is cst.BinaryOperation
        and isinstance(left.operator, cst.Divide)
        and isinstance(right.operator, cst.Divide)
        and left.right.deep_equals(right.right)
    ):
        return False
    fewer = left.right
    scaled = left.left
    if any(type(n) is cst.BinaryOperation and isinstance(n.operator, cst.Power) for n in descendants(right)):
        return False  # (``sq_mean * n / (n - 1) - mean ** 2 * n / (n - 1)``: an unbiased variance)
    return (
        type(fewer) is cst.BinaryOperation
        and isinstance(fewer.operator, cst.Subtract)
        and is_one(fewer.right)
        and type(scaled) is cst.BinaryOperation
        and isinstance(scaled.operator, cst.Multiply)
        and (scaled.left.deep_equals(fewer.left) or scaled.right.deep_equals(fewer.left))
    )


def _count_times(
    total: cst.BinaryOperation,
    part: cst.BaseExpression,
    bound: Callable[[str], cst.BaseExpression | None] | None,
) -> bool:
    """Say whether ``total - part`` over one fewer than the count leaves one sample out.

    ``total`` is a count times the samples' mean (``r.mean(1) * k``, ``k * mean_reward``) less the
    sample, or a count times each sample less their sum (``r * k - r.sum()``, ``k * r - group_sum``);
    names are followed to what they are ``bound`` to, or read by what they are called.
    """

    def seen(node: cst.BaseExpression) -> list[cst.BaseExpression]:
        if type(node) is cst.Name and bound is not None and (value := bound(node.value)) is not None:
            return [node, value]
        return [node]

    for factor in (total.left, total.right):
        if any(type(f) is cst.Call and _sum_of(f, part, "mean") for f in seen(factor)):
            return True
        if any(type(p) is cst.Call and _sum_of(p, factor) for p in seen(part)):
            return True
        if type(factor) is cst.Name and MEAN_NAME_WORDS & set(words(factor.value)):
            return True
    return type(part) is cst.Name and bool(SUM_NAME_WORDS & set(words(part.value)))


MEAN_NAME_WORDS = frozenset({"mean", "avg", "average"})
"""Words of a name that holds the samples' mean (``mean_reward``)."""
SUM_NAME_WORDS = frozenset({"sum", "total"})
"""Words of a name that holds the samples' sum (``sum_ret``, ``group_sum``)."""


def _sum_of(total: cst.Call, part: cst.BaseExpression, reduction: str = "sum") -> bool:
    """Say whether ``total`` sums ``part`` (``part.sum(1)``, ``torch.sum(part, 0)``).

    Or reduces it by another ``reduction`` (``part.mean(1)``).
    """
    func = total.func
    if type(func) is cst.Attribute and func.attr.value == reduction:
        if func.value.deep_equals(part):
            return True
        if not (type(func.value) is cst.Name and func.value.value in ARRAY_MODULES):
            return False  # (``mask.sum(dim=1) - 1``: a tensor's own sum, its arguments axes)
    # (``sum(part)``, ``torch.sum(part, 0)``, ``np.mean(part, axis=1)``: the first argument)
    return (
        last_name(func) == reduction
        and bool(total.args)
        and total.args[0].keyword is None
        and total.args[0].value.deep_equals(part)
    )


ARRAY_MODULES = frozenset({"torch", "np", "numpy", "jnp", "jax", "tf", "mx", "math", "statistics"})
"""Modules whose reduction functions take the array first (``torch.sum(x, 0)``, ``np.mean(x)``)."""


def _unsliced(node: cst.BaseExpression) -> cst.BaseExpression:
    """``scores[i]`` -> ``scores``: what an entry is taken from."""
    while type(node) is cst.Subscript:
        node = node.value
    return node


def _same_tensor(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """Say whether two expressions are the two members of a pair.

    Different slices of one name (``x[:, 0]`` and ``x[:, 1]``) or names that differ in their last word
    only (``r_j`` and ``r_k``), each possibly reduced (``r_j.sum() - r_k.sum()``).
    """
    left, right = _reduced(left), _reduced(right)
    if type(left) is cst.Name and type(right) is cst.Name:
        a, b = words(left.value), words(right.value)
        return len(a) == len(b) >= 2 and a[:-1] == b[:-1] and a[-1] != b[-1]
    return (
        type(left) is cst.Subscript
        and type(right) is cst.Subscript
        and type(left.value) is cst.Name
        and type(right.value) is cst.Name
        and left.value.value == right.value.value
        and not left.deep_equals(right)
    )


def _value_against_returns(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """Say whether two expressions are a value head's predictions and the returns they are fitted to.

    ``values - returns``, ``mse_loss(vpreds, batch.returns)``, either way round; a record's field by its
    key (``batch["returns"]``) counts as its name.
    """
    said = [set(words(_operand_name(side))) for side in (left, right)]
    return any(
        a & CRITIC_OUTPUT_WORDS and (b & RETURN_WORDS or (b & TARGET_WORDS and b & VALUE_WORDS))
        for a, b in (said, said[::-1])
    )


def _squared(call: cst.Call) -> cst.BinaryOperation | None:
    """Return the difference a call squares, else None.

    ``(a - b).pow(2)``, ``(a - b).square()``, ``torch.square(a - b)``, ``torch.pow(a - b, 2)``.
    """
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    given = [a.value for a in call.args if a.keyword is None]
    squared: cst.BaseExpression | None = None
    name = func.attr.value
    if (name == "pow" and len(given) == 1 and _two(given[0])) or (name == "square" and not given):
        squared = func.value  # (``(a - b).pow(2)``, ``(a - b).square()``)
    elif (name == "pow" and len(given) == 2 and _two(given[1])) or (name == "square" and len(given) == 1):
        squared = given[0]  # (``torch.pow(a - b, 2)``, ``torch.square(a - b)``)
    if type(squared) is cst.BinaryOperation and isinstance(squared.operator, cst.Subtract):
        return squared
    return None


def _two(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer and node.value == "2"


def _operand_name(node: cst.BaseExpression) -> str:
    """Return the name an operand is read by: a name's, an attribute's last, a constant key's.

    A slice or a row of it (``values[:, :-1]``, ``b_returns[mb_inds]``) and a reshape or cast
    (``values.squeeze(-1)``) are read by the tensor's own name.
    """
    node = unshaped(node)
    while type(node) is cst.Subscript:
        key = entry_key(node)
        if key is not None:
            return key
        node = unshaped(node.value)
    return last_name(node)


def _outer_difference(left: cst.BaseExpression, right: cst.BaseExpression) -> bool:
    """Say whether a subtraction takes every pair of a vector's entries (``s.unsqueeze(0) - s.unsqueeze(1)``).

    Broadcast against itself along two new axes, a vector gives the matrix of all its pairwise
    differences: how a ranking loss compares each candidate with every other.
    """
    if type(left) is cst.Subscript and type(right) is cst.Subscript:
        # ``s[:, None] - s[None, :]``: the same vector, a new axis in two places
        return (
            left.value.deep_equals(right.value)
            and any(_new_axis(e) for e in left.slice)
            and any(_new_axis(e) for e in right.slice)
            and not left.deep_equals(right)
        )
    if not (type(left) is cst.Call and type(right) is cst.Call):
        return False
    if not all(
        type(n.func) is cst.Attribute and n.func.attr.value == "unsqueeze" and n.args for n in (left, right)
    ):
        return False
    assert type(left.func) is cst.Attribute and type(right.func) is cst.Attribute
    return left.func.value.deep_equals(right.func.value) and not left.args[0].deep_equals(right.args[0])


def _new_axis(element: cst.SubscriptElement) -> bool:
    """Say whether a subscript element adds an axis (``None``)."""
    return (
        type(element.slice) is cst.Index
        and type(element.slice.value) is cst.Name
        and (element.slice.value.value == "None")
    )


def _reduced(node: cst.BaseExpression) -> cst.BaseExpression:
    """``x.sum()`` / ``x.mean()`` -> ``x``."""
    while (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in ("sum", "mean", "squeeze", "float")
    ):
        node = node.func.value
    return node


def _local(resolved: set[str], func: cst.BaseExpression) -> bool:
    """Say whether a called expression is a variable of the file itself, not an imported name.

    ``model(x, y)`` on a local ``model`` resolves to ``model`` (or ``f.<locals>.model``): a forward
    pass of the file's model object, not a library function.
    """
    text = _dotted(func)
    if text is None:
        return not resolved
    return all(n == text or n.endswith(f".<locals>.{text}") for n in resolved)


def _class_built(call: cst.Call) -> str:
    """Return the name of the class a call builds an object of, through methods chained on it.

    ``Coconut(...).to(device)`` -> Coconut; ``Policy.from_pretrained(path).cuda()`` -> Policy.
    """
    while type(call.func) is cst.Attribute and type(call.func.value) is cst.Call:
        call = call.func.value
    if type(call.func) is cst.Attribute and call.func.attr.value == "from_pretrained":
        return last_name(call.func.value)
    return last_name(call.func)


def _mask_factor(node: cst.BinaryOperation) -> cst.BaseExpression | None:
    """Return the other factor of a product with a mask (``logps * mask[:, 1:]``), else None."""
    if not isinstance(node.operator, cst.Multiply):
        return None
    for factor, other in ((node.left, node.right), (node.right, node.left)):
        while isinstance(factor, cst.Subscript | cst.Call):
            factor = factor.value if isinstance(factor, cst.Subscript) else factor.func
        if "mask" in words(last_name(factor)):
            return other
    return None


def _names_a_logprob(node: cst.BaseExpression) -> bool:
    """Say whether an expression is a log-probability by its name, weighted by nothing.

    ``policy.get_log_prob(obs, act).sum(dim=1).mean()``: names, attributes, calls and subscripts only
    (the arguments of its calls aside); ``(log_probs * G).sum()`` weights it, a policy gradient's form.
    """
    pending: list[cst.CSTNode] = [node]
    while pending:
        current = pending.pop()
        if type(current) is cst.BinaryOperation:
            masked = _mask_factor(current)
            if masked is None:
                return False
            pending.append(masked)  # (``logps * action_mask``: the given tokens picked, not weighted)
            continue
        if type(current) is cst.Call:
            pending.append(current.func)
        elif isinstance(current, cst.Attribute | cst.Subscript):
            pending.append(current.value)
    for n in (node, *descendants(node)):
        name = n.value if type(n) is cst.Name else n.attr.value if type(n) is cst.Attribute else None
        if name is not None:
            found = set(words(name))
            if found & {"logp", "logps", "logprob", "logprobs", "nll"} or {"log", "prob"} <= found:
                return True
    return False


def _dotted(node: cst.BaseExpression) -> str | None:
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute:
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


@dataclass(slots=True)
class Features:
    """What the slice of one loss is made of."""

    calls: set[str] = field(default_factory=set)
    """Qualified names of what is called."""
    module: tuple[str, str, str | None, str | None] | None = None
    """A framework's loss module the loss is computed by (``loss_fn = GRPOLoss(policy); loss_fn(batch)``):
    (its qualified name, stage kind, variant, data source) from the framework table."""
    algorithm: tuple[str, str] | None = None
    """An object of an imported class named by its algorithm alone whose loss method computes the loss
    (``trainer = GRPO(model=m); loss = trainer.calculate_loss(rollouts, rewards)``): (class, stage kind)."""
    methods: set[str] = field(default_factory=set)
    """Method names called (``x.mean()`` -> ``mean``)."""
    words: set[str] = field(default_factory=set)
    """Words of the identifiers, attributes, keywords and string keys."""
    keywords: set[str] = field(default_factory=set)
    """Keyword argument names passed."""
    clip_around_one: bool = False
    """A clamp to ``[1 - eps, 1 + eps]``."""
    regrouped: bool = False
    """A tensor regrouped per prompt (``x.view(-1, G)``)."""
    exp_of_difference: bool = False
    """``exp(a - b)``: an importance ratio of log-probabilities."""
    row_normalised: bool = False
    """A mean and a std taken along a dimension and kept for broadcasting (``r.mean(1, keepdim=True)``):
    each row (a prompt's group of samples) normalised on its own."""
    pairwise_difference: bool = False
    """Two slices of one tensor subtracted (``scores[:, 0] - scores[:, 1]``, ``r[:bs] - r[bs:]``): the
    two members of a pair compared."""
    outer_differences: int = 0
    """How often every pair of one vector's entries is subtracted (``s.unsqueeze(0) - s.unsqueeze(-1)``):
    the comparisons of a ranking loss over several candidates."""
    value_regressed: bool = False
    """A value head's predictions squared against returns (``(values - returns) ** 2``): a critic fitted
    to discounted returns, the value loss of an actor-critic method."""
    value_return_pair: bool = False
    """A call handed a value head's predictions and the returns (``mse_loss(values, returns)``): a value
    loss when the call is a regression."""
    negated_logprob: bool = False
    """A log-probability negated (``-agent.get_log_prob(obs, action).mean()``): a likelihood maximised."""
    model_forward: bool = False
    """The loss comes out of a forward pass of the file's model object (its own language-model loss)."""
    named_rl_losses: set[str] = field(default_factory=set)
    """Identifiers that name a policy-gradient or value loss (``policy_loss``, ``compute_value_loss``)."""
    named_preference_losses: set[str] = field(default_factory=set)
    """Identifiers that name a preference-family loss (``dpo_loss``, ``compute_kto_loss``)."""
    named_lm_losses: set[str] = field(default_factory=set)
    """Identifiers that name a language model's next-token loss (``compute_next_token_loss``)."""
    named_pairwise_losses: set[str] = field(default_factory=set)
    """Identifiers that name a pairwise loss of two scores (``pairwise_loss``, ``ranking_loss``)."""
    named_distillation_losses: set[str] = field(default_factory=set)
    """Identifiers that name a knowledge-distillation loss (``GKDLoss``, ``compute_kd_loss``)."""
    nodes: int = 0
    """Nodes read."""
    kept: set[str] = field(default_factory=set)
    """Reductions (``mean``, ``std``) taken with ``keepdim=True``."""
    scores_exponentiated: bool = False
    """``exp`` taken of a value named for rewards (``torch.exp(reward_scores[i])``): a softmax over a
    scorer's outputs for its candidates, as a listwise (Plackett-Luce) reward-model loss is."""
    beta_exponentiated: bool = False
    """``exp(beta * x)``: a log-ratio scaled by a preference loss's temperature and exponentiated, as a
    listwise (Plackett-Luce) preference loss over several candidates does."""
    leave_one_out: bool = False
    """A leave-one-out baseline (:func:`leave_one_out`): each sample against the others of its prompt."""
    object_called: bool = False
    """The ``.loss`` read is of what a variable of the file returns when called (``outputs =
    coconut(embeds, mask)``): an object's forward pass, not a function of the file nor an imported one."""
    output_loss: bool = False
    """A forward pass's own loss is read (``outputs.loss``, ``model(**batch).loss``)."""
    reward_weighted: bool = False
    """A product of which one factor is named for rewards (not a reward model) and the other is not:
    what weights log-probabilities by rewards (``(reward - baseline) * logprob``)."""


LOSS_GETTERS = frozenset({"get", "make", "build", "create", "set", "register"})
"""First words of a method that hands back or sets up a loss rather than computing one."""
ALGORITHM_LABELS = frozenset({"GRPO", "PPO", "DPO"})
"""Routes a small library names its algorithm classes for (``GRPO``, ``PPO``, ``DPO``); their stage kinds
are :data:`arb_audit.analyzer.trainers.LABEL_KINDS`."""
PRODUCTS = frozenset({"dot", "mul", "multiply", "inner"})
"""Functions and methods that multiply two tensors element by element or sum their products."""
NON_NEGATIVE = frozenset({"exp", "softmax", "sigmoid", "clamp", "clip", "relu", "min", "abs", "square"})
"""Functions whose result, wrapped around centred rewards, is never negative (reward-weighted regression)."""
CENTRED_WORDS = frozenset({"centered", "centred", "baseline", "whitened"})
"""Words of rewards with a baseline taken off (``centered_rewards(r)``, ``reward - baseline``)."""


def one_minus_plus(args: Iterable[cst.BaseExpression]) -> bool:
    """Say whether the arguments hold both ``1 - x`` and ``1 + y`` (a clip range around 1)."""
    ops = {
        type(a.operator)
        for a in args
        if type(a) is cst.BinaryOperation
        and is_one(a.left)
        and isinstance(a.operator, cst.Subtract | cst.Add)
    }
    return ops == {cst.Subtract, cst.Add}


@dataclass(slots=True)
class Verdict:
    """The stage a loss's form names."""

    kind: str | None
    """Stage kind, or None when the form is not recognised."""
    variant: str | None
    """Variant, where the form shows it."""
    data_source: str | None
    """``distilled`` for training against a teacher."""
    why: str
    """The form, in a few words."""


MODULE_ENDINGS = ("Loss", "DAPO")
"""Last words of a framework table entry that is a loss module (TorchRL's ``GRPOLoss``, ``DAPO``)."""


def loss_form(f: Features) -> Verdict:
    """Name the stage the collected form is (see the module docstring)."""
    w = f.words
    preference = bool(f.calls & SIGMOID or "logsigmoid" in f.methods or "sigmoid" in f.methods) or (
        "relu" in f.methods or "hinge" in w
    )
    paired = bool(w & PREFERENCE_WORDS) or f.pairwise_difference or f.outer_differences > 0
    policy_logps = bool(w & SEQUENCE_LOGPROB_WORDS)
    # "adv" beside perturbed embeddings is adversarial training's (``adv_embeddings``), no advantage
    advantages = bool(w & (ADVANTAGE_WORDS - {"adv"} if w & ADVERSARIAL_WORDS else ADVANTAGE_WORDS))
    # a ratio clipped around one on advantages is a policy gradient; a preference term added to it
    # (a DPO loss mixed in by a coefficient) leaves the policy gradient the objective, asked below
    clipped_policy_gradient = advantages and f.clip_around_one
    if f.calls & MARGIN:
        return Verdict("reward_model", "pairwise", None, "a margin ranking loss between two scores")
    if (
        w & PREFERRED_WORDS & PREFERENCE_WORDS
        and w & DISPREFERRED_WORDS
        and w & REFERENCE_WORDS
        and policy_logps
        and not clipped_policy_gradient
    ):
        # (both members of a pair: one word alone may name something else, as DeepSpeed-Chat's reward
        # model returns a ``chosen_end_scores`` a PPO loop reads)
        variant = next((v for v in DPO_VARIANTS if v in w), "dpo")
        return Verdict("dpo", variant, None, "chosen/rejected log-probabilities against a reference model")
    if (
        (preference or f.beta_exponentiated)
        and w & REFERENCE_WORDS
        and policy_logps
        and not advantages
        # (a ratio clipped around one, or log-probabilities weighted by rewards, is a policy
        # gradient's: a sigmoid beside it squashes a reward model's score, no preference margin)
        and not f.clip_around_one
        and not f.reward_weighted
    ):
        variant = next((v for v in DPO_VARIANTS if v in w), "dpo")
        return Verdict("dpo", variant, None, "log-sigmoid of a difference of policy/reference log-ratios")
    if (
        # two orders compared pair by pair: the candidates' log-likelihoods against their rewards'
        f.outer_differences >= 2
        and w & SCORE_WORDS
        # (the likelihoods of given tokens: log-probabilities gathered at the targets, not a
        # scorer's softmax over its candidates, which a listwise reward model takes)
        and (w & SEQUENCE_LOGPROB_WORDS or "gather" in f.methods or "torch.gather" in f.calls)
        and not advantages
    ):
        # every candidate's length-normalised log-likelihood compared with every other's, the pairs
        # ordered by the candidates' reward scores (RRHF): a ranking form of preference optimisation
        return Verdict("dpo", "ranking", None, "candidates' log-likelihoods ranked by their reward scores")
    if preference and paired and not clipped_policy_gradient:
        # scores named rewards, compared without a reference or a beta, are a reward model's outputs
        # (``log(sigmoid(chosen_reward - reject_reward))`` has log-probabilities of its own)
        scored = bool(w & SCORE_WORDS) and not (w & REFERENCE_WORDS or "beta" in w)
        # (the sequences' scores against a reference model's, scaled by beta, are log-likelihoods
        # whatever they are called: ``policy_chosen_score - reference_chosen_score``)
        # (the policy's, or a model's, against a reference model's; a reward model's margin against a
        # frozen reference scorer names that scorer: ``ref_rm``)
        against_reference = (
            bool(w & REFERENCE_WORDS)
            and "beta" in w
            and ("policy" in w or (bool(w & {"model", "unet"}) and not w & {"rm", "scorer"}))
        )
        if (
            (policy_logps or against_reference)
            and not scored
            and (w & REFERENCE_WORDS or "beta" in w or w & PREFERENCE_WORDS)
        ):
            variant = next((v for v in DPO_VARIANTS if v in w), "dpo")
            return Verdict("dpo", variant, None, "log-sigmoid of chosen/rejected log-ratio differences")
        return Verdict("reward_model", "bradley_terry", None, "log-sigmoid of chosen minus rejected scores")
    policy_gradient = advantages or f.clip_around_one or f.exp_of_difference
    if policy_gradient and (w & LOGPROB_WORDS or w & RATIO_WORDS or f.exp_of_difference or f.clip_around_one):
        critic = bool(w & {"critic", "vf"}) or bool(w & {"gamma", "returns"} and w & VALUE_WORDS)
        grouped = f.regrouped and bool(f.methods & {"mean", "std"})
        # (a learned critic's advantages are whitened per row too: keepdim statistics alone are
        # not a group's when a value model is trained beside the policy; "returns" alone is no
        # critic there: group-relative code names its advantages returns too)
        learned_value = bool(w & {"critic", "vf", "vpred"}) or bool("gamma" in w and w & VALUE_WORDS)
        if f.leave_one_out and not learned_value:
            # (viewed per prompt and averaged too: the baseline leaves the sample out, RLOO's)
            return Verdict("ppo", "rloo", None, "advantages from a leave-one-out baseline (policy gradient)")
        if grouped or ((f.row_normalised or w & GROUP_WORDS) and not learned_value):
            return Verdict("grpo", "grpo", None, "policy gradient with advantages normalised within groups")
        variant = next((v for word, v in PG_VARIANTS if word in w), "ppo")
        why = "advantages from a value baseline" if critic else PLAIN_POLICY_GRADIENT
        return Verdict("ppo", variant, None, f"{why} (policy gradient)")
    if w & PREFERRED_WORDS and w & DISPREFERRED_WORDS and policy_logps and not w & SCORE_WORDS:
        # both members' log-probabilities handed to a loss of another file (ORPO's odds-ratio term
        # beside the chosen answers' NLL): a preference loss, whatever supervised term is added.
        # Asked after policy gradient: a chosen action's log-prob and a rejection mask are its words too
        variant = "orpo" if "odds" in w else next((v for v in DPO_VARIANTS if v in w), "dpo")
        return Verdict("dpo", variant, None, "chosen and rejected log-probabilities compared in the loss")
    if (
        policy_logps
        and w & {"reward", "rewards"}
        and w & GROUP_WORDS
        and {"mean", "std"} <= f.methods
        and not preference
        and not f.named_preference_losses
    ):
        # each group's sampled answers weighted by their rewards standardised within the group (a
        # softmax of the z-scores as the target of the group's log-likelihoods): group-relative
        # policy optimisation without a ratio, asked before the pairwise forms it shares words with
        why = "log-probabilities weighted by rewards standardised within groups"
        return Verdict("grpo", "grpo", None, why)
    if (
        f.pairwise_difference
        and policy_logps
        and w & {"reward", "rewards"}
        and not preference
        # (an IPO loss handing back its implicit rewards is named for what it is)
        and not f.named_preference_losses
    ):
        # the difference of two samples' log-ratios regressed on the difference of their rewards
        # (REBEL: ``((logr[:n] - logr[n:]) - eta * (r[:n] - r[n:])) ** 2``): policy optimisation from
        # rewards, with no sigmoid to make it a preference loss
        return Verdict(
            "ppo", "rebel", None, "two samples' log-ratio difference regressed on their reward difference"
        )
    if (
        "q" in w
        and "next" in w  # the next state's value (a question's ``q_ids`` is none)
        and w & {"reward", "rewards"}
        and w & {"gamma", "discount"}
        and f.calls & REGRESSION
    ):
        # action values regressed on a reward plus the discounted next value (``smooth_l1_loss(q_value,
        # reward + gamma * next_q)``): Q-learning, the other-RL family (DQN, ILQL)
        return Verdict(
            "ppo", "q_learning", None, "action values regressed on discounted rewards (Q-learning)"
        )
    if (f.value_regressed or (f.value_return_pair and (f.calls & REGRESSION or "mse" in w))) and (
        w & CRITIC_CONTEXT
    ):
        # a value head's predictions fitted to discounted returns, clipped around the old values or
        # not: an actor-critic's critic (PPO's value loss), trained in a step of its own
        return Verdict("ppo", "ppo", None, "a value head regressed on returns (an actor-critic's critic)")
    token_logprobs = ("log_softmax" in f.methods | {c.rsplit(".", 1)[-1] for c in f.calls}) and (
        "gather" in f.methods or "torch.gather" in f.calls
    )
    if (
        f.reward_weighted
        and (w & (SEQUENCE_LOGPROB_WORDS | {"log_probs"}) or token_logprobs)
        and not f.output_loss
        and not preference
        and not paired
        and not w & (TEACHER_WORDS | REFERENCE_WORDS)
        and not f.calls & CROSS_ENTROPY
        and "labels" not in f.keywords
    ):
        # (a log-ratio against a reference model is an implicit reward, trained as a scorer; a
        # forward pass's own loss or a cross-entropy on labels beside reward words is supervised)
        # log-probabilities of sampled answers weighted by their rewards, a baseline taken off or not
        # (``-((reward - reward_base) * logprob.sum(-1)).mean()``): REINFORCE; the baseline a
        # prompt's other samples (RLOO) or its group's statistics (GRPO) where the form shows them
        if f.leave_one_out:
            return Verdict(
                "ppo", "rloo", None, "rewards against a leave-one-out baseline weight log-probabilities"
            )
        if (f.regrouped and f.methods & {"mean", "std"}) or f.row_normalised:
            return Verdict("grpo", "grpo", None, "rewards normalised within groups weight log-probabilities")
        variant = next((v for word, v in PG_VARIANTS if word in w), "reinforce")
        return Verdict("ppo", variant, None, "log-probabilities weighted by rewards (REINFORCE)")
    if (
        f.reward_weighted
        and (f.output_loss or f.calls & CROSS_ENTROPY)
        and (w & CENTRED_WORDS or f.leave_one_out)
        # (weights made non-negative, ``exp(r - baseline)``, ``r - r.min()``: a supervised weighting)
        and not (f.methods | {c.rsplit(".", 1)[-1] for c in f.calls}) & NON_NEGATIVE
        and not preference
        and not paired
        and not w & (TEACHER_WORDS | REFERENCE_WORDS)
    ):
        # each sample's negative log-likelihood weighted by its reward less a baseline
        # (``torch.dot(torch.stack(nlls), centered_rewards(r))``): below-average samples are pushed
        # down, which no supervised weighting does (weights of filtered or reward-weighted data are
        # never negative): REINFORCE, RLOO's where the baseline leaves the sample out
        if f.leave_one_out:
            return Verdict("ppo", "rloo", None, "a leave-one-out baseline's rewards weight each sample's NLL")
        return Verdict(
            "ppo", "reinforce", None, "rewards less a baseline weight each sample's NLL (REINFORCE)"
        )
    if f.negated_logprob and not w & (SCORE_WORDS | VALUE_WORDS | ADVANTAGE_WORDS | {"baseline", "q"}):
        # the likelihood of given actions or targets maximised, nothing weighting it: behaviour cloning
        # (whatever the code calls it: RAFT's ``pg_loss = -logprobs.sum(1).mean()`` on its best samples)
        return Verdict("sft", None, None, "the negative log-likelihood of given actions or targets")
    if f.named_rl_losses:
        # the form is elsewhere (an abstract ``compute_policy_loss``), the code names what it is
        critic = any(set(words(n)) & ACTOR_CRITIC_WORDS for n in f.named_rl_losses)
        named = ", ".join(sorted(f.named_rl_losses)[:2])
        if not critic and any(
            set(said := words(n)) & GROUP_RELATIVE_NAMES or "GRPO" in map(named_variant, said)
            for n in f.named_rl_losses
        ):
            return Verdict(
                "grpo", "grpo", None, f"a loss the code calls {named} (group-relative policy gradient)"
            )
        return Verdict(
            "ppo", "ppo" if critic else None, None, f"a loss the code calls {named} (policy gradient)"
        )
    if f.named_preference_losses:
        # a preference loss of another file (``from loss import dpo_loss``), named for what it is
        losses = sorted(f.named_preference_losses)[:2]
        found = {x for n in losses for x in words(n)}
        variant = next((v for v in DPO_VARIANTS if v in found), "dpo")
        return Verdict("dpo", variant, None, f"a loss the code calls {', '.join(losses)} (preference)")
    if (
        f.named_pairwise_losses
        and w & PREFERRED_WORDS & PREFERENCE_WORDS
        and w & DISPREFERRED_WORDS
        and not w & (LOGPROB_WORDS | REFERENCE_WORDS | {"beta"})
    ):
        # a pairwise loss of another file given the outputs of a pair's two members, with no
        # log-probabilities and no reference (``pairwise_loss(chosen_scores, rejected_scores)``,
        # ``pairwise_logistic_loss(s_pos, s_neg)``): a reward model's Bradley-Terry or margin objective
        # on its scalar outputs, whatever the outputs are called
        pairwise = ", ".join(sorted(f.named_pairwise_losses)[:2])
        return Verdict("reward_model", "pairwise", None, f"{pairwise} of chosen and rejected scores")
    if w & TEACHER_WORDS and (f.calls & KL or "kl" in w or "softmax" in f.methods or w & LOGPROB_WORDS):
        return Verdict("sft", "distillation", "distilled", "divergence from a teacher's distribution")
    if f.named_distillation_losses:
        # a distillation loss of another file or library (``set_loss(GKDLoss(beta=0.5))``), named for
        # what it is: the student learns a teacher's distribution, knowledge-distillation training
        distilling = ", ".join(sorted(f.named_distillation_losses)[:2])
        # (generalised knowledge distillation keeps its name, as the GKD trainer's stage does)
        variant = "gkd" if any("gkd" in words(n) for n in f.named_distillation_losses) else "distillation"
        return Verdict("sft", variant, "distilled", f"a loss the code calls {distilling} (distillation)")
    if (
        f.scores_exponentiated
        and not w & LOGPROB_WORDS
        and not advantages
        and "log" in f.methods | {c.rsplit(".", 1)[-1] for c in f.calls}
    ):
        # -log(exp(s_i) / sum_j exp(s_j)) over a scorer's candidates, best first: a listwise ranking
        # (Plackett-Luce; Bradley-Terry for two) loss on reward scores
        return Verdict("reward_model", "ranking", None, "a log-softmax over candidates' reward scores")
    # (rewards, not "scores": a bi-encoder's in-batch similarity scores take the same zeros target)
    ranked = f.calls & ZEROS and w & {"reward", "rewards"} and not w & (LOGPROB_WORDS | {"labels"})
    if f.calls & CROSS_ENTROPY and ranked:
        # ``cross_entropy(reward, zeros(n))`` over [better, worse] scores: the first candidate of each
        # row is to score highest, a ranking (Bradley-Terry for pairs) loss on a scorer's outputs
        return Verdict("reward_model", "ranking", None, "cross-entropy of ranked candidates' scores")
    if f.algorithm is not None:
        # a small library's algorithm object computes its own loss (its form is in that library)
        named, kind = f.algorithm
        return Verdict(kind, None, None, f"computed by a {named} object, named for its algorithm")
    if f.module is not None:
        # a framework's loss module computes what the table says, where no form written out around
        # it (a policy-gradient term it only regularises) says more; words are no form
        module, kind, module_variant, source = f.module
        return Verdict(
            kind, module_variant, source, f"{module.rsplit('.', 1)[-1]}, a framework's loss module"
        )
    if (
        f.calls & CROSS_ENTROPY
        or "labels" in f.keywords
        or ("cross" in w and "entropy" in w)
        or "crossentropy" in w  # (Keras' loss by name: ``loss="sparse_categorical_crossentropy"``)
        or "xent" in w  # (its common abbreviation: ``softmax_xent``, ``xent_loss()``)
    ):
        return Verdict("sft", None, None, "cross-entropy against given labels")
    if (
        "nll" in w
        or bool(f.named_lm_losses)
        or ("labels" in w and w & {"logits", "outputs"})
        # a class named for a language-model loss, its acronyms run together (``GPTLMLoss``)
        or any(c.rsplit(".", 1)[-1].endswith(LM_LOSS_SUFFIXES) for c in f.calls)
    ):
        return Verdict("sft", None, None, "a language-model negative log-likelihood on given labels")
    if f.model_forward or (f.output_loss and f.object_called):
        # (``new_inputs, outputs = coconut(embeds, mask); outputs.loss``: an object of the file called,
        # a module's forward, whose loss is read as a model's)
        return Verdict("sft", None, None, FORWARD_ONLY)
    return Verdict(None, None, None, "a loss whose form is not recognised")


RUN_OBJECT_WORDS = frozenset({"step", "trainer", "update", "updater", "learner", "algorithm", "algo"})
"""Words of a class whose object runs a training step (and returns its own loss), not a model."""
NOT_A_MODULE_WORDS = frozenset(
    {"loss", "criterion", "objective", "fn", "fct", "func", "critic", "value", "reward", "head", "env"}
)
"""Words of a called variable that holds a loss, a function, a critic's or reward's head or an
environment, not the model trained."""
ZEROS = frozenset({"torch.zeros", "torch.zeros_like", "numpy.zeros"})
"""A target of all zeros: every row's first candidate is the right one."""
LM_LOSS_SUFFIXES = ("LMLoss", "LmLoss")
"""Endings of a loss class's name that say it is a language model's (``GPTLMLoss``, ``CausalLMLoss``)."""

STABILISERS = frozenset({"max", "amax", "logsumexp"})
"""Reductions subtracted inside ``exp`` only to keep it from overflowing (a softmax's own shift)."""
LOG_NORMALISERS = frozenset(
    {"logz", "lse", "lognorm", "lognormalizer", "lognormalizers", "lognormaliser", "logpartition"}
)
"""Names of a softmax's log-normaliser, its words joined (``log_z``, ``lse``, ``log_normalizers``):
``exp(logits - log_z)`` is the softmax itself, written out as fused cross-entropy kernels do; unless the
file makes the name a learned parameter (a GFlowNet's ``log_Z = nn.Parameter(...)``)."""


def _stabiliser(node: cst.BaseExpression, learned: Callable[[str], bool]) -> bool:
    """Say whether ``node`` is a row's maximum or log-sum-exp (``torch.max(x, dim=1)[0]``, ``x.amax(-1)``).

    ``exp(x - x.max())`` is a softmax computed safely, not an importance ratio ``exp(logp - old_logp)``.
    What only picks or detaches the maximum (``.values``, ``[0]``, ``.detach()``, ``.data``) is looked
    through. ``learned``: whether the file makes a name a learned parameter (then no normaliser).
    """
    while True:
        if type(node) is cst.Subscript or (
            type(node) is cst.Attribute and node.attr.value in ("values", "data")
        ):
            node = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "detach":
            node = node.func.value
        else:
            break
    if type(node) is cst.Name:  # the shift kept in a name (``max_sim = torch.max(...)[0]``)
        said = words(node.value)
        if STABILISERS & set(said):
            return True
        return "".join(said) in LOG_NORMALISERS and not learned(node.value)
    return type(node) is cst.Call and last_name(node.func) in STABILISERS


class Slice:
    """Collect :class:`Features` of everything a loss expression is computed from, within one file."""

    def __init__(
        self,
        assigns: dict[tuple[int, str], list[cst.BaseExpression]],
        attributes: dict[str, list[cst.BaseExpression]],
        functions: dict[str, list[tuple[int, list[cst.BaseExpression]]]],
        names_of: Callable[[cst.BaseExpression], set[str]],
        calls_on_self: dict[int, list[int]] | None = None,
        trained: tuple[set[str], set[int]] = (set(), set()),
    ) -> None:
        self.assigns = assigns
        """(function id or 0 for the module, name) -> values assigned."""
        self.attributes = attributes
        """``self.<attr>`` -> values assigned anywhere in the file."""
        self.functions = functions
        """Simple name of a function or method -> (its id, its return values)."""
        self.names_of = names_of
        """A called expression -> its qualified names, in the scope it is called in."""
        self.calls_on_self = calls_on_self or {}
        """id of a method -> ids of the methods ``self(...)`` runs in it (its own class's, not any
        ``forward`` of the file: a judge's or evaluator's is not the trained module's)."""
        self.returned = {i: returned for entries in functions.values() for i, returned in entries}
        """id of a function -> its return values."""
        self.trained, self.loss_outputs = trained
        """Names of the modules an optimiser of the file is built on, and ids of the calls whose output
        is bound to a name for a loss: such a module called for its loss is a forward pass of the model
        trained, whatever its name (``_, loss = base(x, y)``; not ``q = net(s)`` regressed on targets)."""

    def _learned(self, name: str) -> bool:
        """Say whether the file binds ``name`` (in any scope, or as an attribute) to a ``Parameter``."""
        values = [v for (_, n), found in self.assigns.items() if n == name for v in found]
        values += self.attributes.get(name, [])
        return any(type(v) is cst.Call and last_name(v.func) == "Parameter" for v in values)

    def _bound(self, scope: int, name: str) -> list[cst.BaseExpression]:
        """Return the values ``name`` is assigned in the function ``scope`` and at module level."""
        return self.assigns.get((scope, name), []) + self.assigns.get((0, name), [])

    def _rewarded(self, scope: int, node: cst.BaseExpression) -> bool:
        """Say whether a factor reads rewards: named so, or bound to them (``r = rewards.view(-1, g)``)."""
        for name in _reward_names(node):
            if _reward_named(name):
                return True
            values = self._bound(scope, name)
            if any(_reward_named(n) for v in values for n in _reward_names(v)):
                return True
        return False

    def features(self, roots: list[tuple[int, cst.BaseExpression]]) -> Features:
        """Read ``(function id, expression)`` roots and everything they come from."""
        f = Features()
        pending: list[tuple[int, cst.CSTNode, int]] = [(scope, node, 0) for scope, node in roots]
        seen_names: set[tuple[int, str]] = set()
        seen_functions: set[str] = set()
        # callees of the calls met, by id: a loss method is one called, not a setting's attribute
        called: set[int] = set()
        while pending and f.nodes < MAX_NODES:
            scope, root, depth = pending.pop()
            for node in (root, *descendants(root)):
                f.nodes += 1
                # (type identity, not isinstance: misses on libcst's ABC-based classes are slow)
                if (
                    type(node) is cst.UnaryOperation
                    and isinstance(node.operator, cst.Minus)
                    and not f.negated_logprob
                ):
                    f.negated_logprob = _names_a_logprob(node.expression)
                if type(node) is cst.Call:
                    called.add(id(node.func))  # (a call is met before its callee: ``m.compute_loss(b)``)
                if type(node) is cst.Name:
                    f.words.update(_adversarial(words(node.value)))
                    _note_named_loss(f, node.value)
                    for key in ((scope, node.value), (0, node.value)):
                        if key not in seen_names and key in self.assigns:
                            seen_names.add(key)
                            pending.extend(
                                (key[0], v, depth) for v in self.assigns[key] if not self._module(v, f)
                            )
                    self._follow(node.value, depth, pending, seen_functions)  # handed on: loss_fn=f
                elif type(node) is cst.Attribute:
                    attr = node.attr.value
                    owner = node.value
                    if attr == "loss" and type(owner) is cst.Name and not f.object_called:
                        f.object_called = self._object_output(scope, owner.value)
                    if attr == "loss" and not f.output_loss:
                        # ``outputs.loss``, ``model(**b).loss``; not ``self.loss`` nor ``args.loss``
                        f.output_loss = type(owner) is cst.Call or (
                            type(owner) is cst.Name
                            and owner.value != "self"
                            and not SETTINGS_NAME_WORDS & set(words(owner.value))
                        )
                    elif (
                        not f.output_loss
                        and type(owner) is cst.Name
                        and words(attr)[-1:] == ("loss",)
                        and not names_rl_loss(attr)
                        and MODEL_WORDS & set(owner_words := words(owner.value))
                        and not SETTINGS_NAME_WORDS & set(owner_words)
                    ):
                        # ``logits = model(X, Y); loss = raw_model.last_loss``: the loss the model's
                        # forward pass kept on itself (llama2.c's and its copies'); not a setting of the
                        # loss (``model_args.loss_scale``) nor a policy's or critic's named loss
                        f.output_loss = f.model_forward = True
                    f.words.update(_adversarial(words(attr)))
                    _note_named_loss(f, attr)
                    if (
                        type(owner) is cst.Name
                        and words(attr)[-1:] == ("loss",)
                        and id(node) in called
                        and not SETTINGS_NAME_WORDS & set(words(owner.value))
                    ):
                        for name in self._algorithm_owners(scope, owner.value):
                            # ``dpo.compute_loss(batch)`` of ``dpo = DPOMethod(...)``: the loss of the
                            # algorithm the object, or its class, is named for
                            _note_named_loss(f, f"{name}_{attr}")
                    if type(node.value) is cst.Name and node.value.value == "self":
                        key = (-1, attr)
                        if key not in seen_names and attr in self.attributes:
                            seen_names.add(key)
                            pending.extend((scope, v, depth) for v in self.attributes[attr])
                    elif attr in ADVANTAGE_WORDS and (-2, attr) not in seen_names:
                        # ``batch.advantages``: a record's field, filled where a name of that name is
                        # computed in the file (how the advantages are estimated decides the stage).
                        seen_names.add((-2, attr))
                        pending.extend((s, v, depth) for s, v in self._named(attr))
                elif type(node) is cst.BinaryOperation:
                    f.leave_one_out = f.leave_one_out or leave_one_out(node)
                    if isinstance(node.operator, cst.Multiply) and not f.reward_weighted:
                        f.reward_weighted = self._rewarded(scope, node.left) != self._rewarded(
                            scope, node.right
                        )
                    if (
                        isinstance(node.operator, cst.Power)
                        and type(node.right) is cst.Integer
                        and node.right.value == "2"
                        and type(node.left) is cst.BinaryOperation
                        and isinstance(node.left.operator, cst.Subtract)
                    ):
                        f.value_regressed = f.value_regressed or _value_against_returns(
                            node.left.left, node.left.right
                        )
                    if isinstance(node.operator, cst.Subtract) and _outer_difference(node.left, node.right):
                        f.outer_differences += 1
                    elif isinstance(node.operator, cst.Subtract) and _same_tensor(node.left, node.right):
                        f.pairwise_difference = True
                elif type(node) is cst.Subscript and type(node.value) is cst.Name:
                    # ``stats["loss_pg"]``: what was put into that entry; ``stats[k]``: into any
                    named = keyed_entry(node)
                    entries = [named] if named is not None else self._entries(node.value.value)
                    for entry in entries:
                        for slot in ((scope, entry), (0, entry)):
                            if slot not in seen_names and slot in self.assigns:
                                seen_names.add(slot)
                                pending.extend((slot[0], v, depth) for v in self.assigns[slot])
                elif type(node) is cst.SimpleString:
                    text = literal_text(node)
                    if text.isidentifier():
                        f.words.update(words(text))
                        if text in ADVANTAGE_WORDS and (-2, text) not in seen_names:
                            # ``inputs["advantages"]``: the record's field, as ``batch.advantages``
                            seen_names.add((-2, text))
                            pending.extend((s, v, depth) for s, v in self._named(text))
                elif type(node) is cst.Call:
                    given = [a.value for a in node.args if a.keyword is None][:2]
                    if len(given) < 2:
                        # (``mse_loss(input=values, target=returns)``)
                        handed = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
                        given = [handed[k] for k in ("input", "target") if k in handed]
                    if len(given) == 2 and not f.value_return_pair:
                        f.value_return_pair = _value_against_returns(*given)
                    if not f.value_regressed and (difference := _squared(node)) is not None:
                        # (``(values - returns).pow(2)``, ``torch.square(values - returns)``)
                        f.value_regressed = _value_against_returns(difference.left, difference.right)
                    self._call(node, scope, depth, f, pending, seen_functions)
                elif type(node) is cst.Arg and node.keyword is not None:
                    f.keywords.add(node.keyword.value)
                    f.words.update(words(node.keyword.value))
        f.row_normalised = f.kept >= {"mean", "std"}
        return f

    def _module(self, value: cst.BaseExpression, f: Features) -> bool:
        """Note a framework's loss module a name is bound to; say whether ``value`` builds one.

        What the module is built from (the policy it wraps, its model's class) is no part of the loss's
        form: the table says what the module computes.
        """
        if type(value) is not cst.Call:
            return False
        for qualified in self.names_of(value.func):
            entry = entry_for(qualified)
            if entry is not None and entry.kind is not None and entry.name.endswith(MODULE_ENDINGS):
                if f.module is None:
                    f.module = (qualified, entry.kind, entry.variant, entry.data_source)
                return True
        return False

    def _entries(self, container: str) -> list[str]:
        """Every entry of ``container`` given a value by a constant key (``stats["loss_pg"]``)."""
        prefix = container + "["
        return sorted({name for _, name in self.assigns if name.startswith(prefix)})

    def _algorithm_object(self, scope: int, call: cst.Call) -> tuple[str, str] | None:
        """Return (class, kind) when a loss method is called on an object of an algorithm's class.

        ``trainer = GRPO(model=m); trainer.calculate_loss(...)``, ``self.ppo = PPO(...);
        self.ppo.compute_loss(...)``: the class is imported and named by its route's acronym alone.
        """
        func = call.func
        if type(func) is not cst.Attribute:
            return None
        said = words(func.attr.value)
        if "loss" not in said or said[0] in LOSS_GETTERS or said[-1] in ("fn", "func", "function", "class"):
            return None  # (``cfg.get_loss_fn()`` hands back a function, not a loss)
        receiver = func.value
        if type(receiver) is cst.Name and SETTINGS_NAME_WORDS & set(words(receiver.value)):
            return None  # (``cfg = PPO(lr=1e-5)``: a preset of settings)
        if type(receiver) is cst.Name:
            values = self._bound(scope, receiver.value)
        elif (
            type(receiver) is cst.Attribute
            and type(receiver.value) is cst.Name
            and receiver.value.value == "self"
        ):
            values = self.attributes.get(receiver.attr.value, [])
        else:
            return None
        # (``self.ppo = ppo or PPO(model=m)``: a default built when none is handed in)
        built = [
            v
            for value in values
            for v in ((value.left, value.right) if type(value) is cst.BooleanOperation else (value,))
        ]
        for value in built:
            if type(value) is not cst.Call:
                continue
            named = last_name(value.func)
            found = route_word(named, strict=True) if named[:1].isupper() else None
            if (
                found is not None
                and found[1] == named.lower()
                and found[0] in ALGORITHM_LABELS
                and any("." in q for q in self.names_of(value.func))
            ):
                return named, LABEL_KINDS[found[0]]
        return None

    def _algorithm_owners(self, scope: int, name: str) -> list[str]:
        """Return the names, of an object and of the classes it is built from, that name an algorithm.

        ``dpo_method`` itself, or ``DPOMethod`` of ``method = DPOMethod(policy, ref)``: only an
        algorithm's own name (``dpo``, ``grpo``, ``rloo``), not a role (``actor``, ``policy``) that
        other routes' objects are called too.
        """
        built = self._bound(scope, name)
        names = [name, *(last_name(v.func) for v in built if type(v) is cst.Call)]
        return [n for n in names if set(words(n)) & (PREFERENCE_LOSS_WORDS | PG_LOSS_WORDS)]

    def _object_output(self, scope: int, name: str) -> bool:
        """Say whether ``name`` holds what an object of the file returns when called.

        ``new_inputs, outputs = coconut(embeds, mask)``: ``coconut`` a variable (not a function of the
        file, an import, a loss, a critic or a factory's product) built from a class here or handed in
        (a parameter): a module's forward pass.
        """
        for value in self._bound(scope, name):
            if type(value) is not cst.Call or type(value.func) is not cst.Name:
                continue
            called = value.func.value
            said = set(words(called))
            if (
                not called[:1].islower()
                or called in self.functions
                or said & NOT_A_MODULE_WORDS
                or not _local(self.names_of(value.func), value.func)
            ):
                continue
            built = [
                b
                for b in self._bound(scope, called)
                # (``coconut = coconut.cpu()``: the same object moved, whatever it was built from)
                if not (type(b) is cst.Call and dotted(b.func).split(".", 1)[0] == called)
            ]
            # a class's object (``coconut = Coconut(...)``), or one handed in; not a factory's product
            # (``step = make_step()``, ``partial(...)``), a lambda, nor an object of a class named for
            # a step, a trainer or a route (``DPOStep(policy, ref)``: its own loss)
            if all(
                type(b) is cst.Call
                and (cls := _class_built(b))[:1].isupper()
                and route_word(cls) is None
                and not set(words(cls)) & (NOT_A_MODULE_WORDS | RUN_OBJECT_WORDS)
                for b in built
            ):
                return True
        return False

    def _named(self, name: str) -> list[tuple[int, cst.BaseExpression]]:
        """Every value assigned to a local or module name ``name``, in any function of the file."""
        return [(scope, v) for (scope, n), values in self.assigns.items() if n == name for v in values]

    def _call(
        self,
        node: cst.Call,
        scope: int,
        depth: int,
        f: Features,
        pending: list[tuple[int, cst.CSTNode, int]],
        seen_functions: set[str],
    ) -> None:
        resolved = self.names_of(node.func)
        f.calls |= resolved
        if f.algorithm is None:
            f.algorithm = self._algorithm_object(scope, node)
        func = node.func
        name = None
        if type(func) is cst.Attribute:
            name = func.attr.value
            f.methods.add(name)
            if name in ("clamp", "clip") and one_minus_plus(a.value for a in node.args):
                f.clip_around_one = True
            if name in ("mean", "std") and any(
                a.keyword is not None and a.keyword.value == "keepdim" and literal_bool(a.value) is True
                for a in node.args
            ):
                f.kept.add(name)
            if (
                name in ("view", "reshape", "unflatten")
                and len(node.args) >= 2  # (``x.view(-1)`` flattens: no groups)
                and isinstance(first := node.args[0].value, cst.UnaryOperation)
                and is_one(first.expression)
                and not _flattens_for_tokens(func.value, node.args[1].value)
            ):
                f.regrouped = True  # x.view(-1, G): one row per prompt
        elif type(func) is cst.Name:
            name = func.value
        if not f.model_forward and _local(resolved, func):
            receiver = func.value if type(func) is cst.Attribute and name in ("forward", "__call__") else func
            chain = (
                receiver.value
                if type(receiver) is cst.Name
                else receiver.attr.value
                if type(receiver) is cst.Attribute
                else ""
            )
            if set(words(chain)) & FORWARD_WORDS or (chain in self.trained and id(node) in self.loss_outputs):
                f.model_forward = True
        if name in PRODUCTS and not f.reward_weighted:
            # ``torch.dot(losses, weights)``, ``losses.mul(weights)``: a product as ``*`` is
            factors = [a.value for a in node.args if a.keyword is None][:2]
            if type(func) is cst.Attribute and len(factors) == 1:
                factors = [func.value, factors[0]]
            if len(factors) == 2:
                f.reward_weighted = self._rewarded(scope, factors[0]) != self._rewarded(scope, factors[1])
        if name in ("clamp", "clip") and one_minus_plus(a.value for a in node.args[1:]):
            f.clip_around_one = True
        if name == "exp" and node.args:
            arg = node.args[0].value
            if type(arg) is cst.BinaryOperation and isinstance(arg.operator, cst.Multiply):
                f.beta_exponentiated = f.beta_exponentiated or "beta" in {
                    last_name(arg.left),
                    last_name(arg.right),
                }
            if isinstance(arg, cst.Name | cst.Attribute | cst.Subscript):
                # (rewards, not "scores": a bi-encoder's InfoNCE exponentiates similarity scores)
                f.scores_exponentiated = f.scores_exponentiated or bool(
                    set(words(last_name(_unsliced(arg)))) & {"reward", "rewards"}
                )
            if (
                type(arg) is cst.BinaryOperation
                and isinstance(arg.operator, cst.Subtract)
                and not _stabiliser(arg.right, self._learned)
            ):
                f.exp_of_difference = True
        if name is not None:
            f.words.update(words(name))
            self._follow(name, depth, pending, seen_functions)
        if name == "self" and depth < MAX_DEPTH:
            for method in self.calls_on_self.get(scope, ()):
                if f"#{method}" not in seen_functions:
                    seen_functions.add(f"#{method}")
                    pending.extend((method, r, depth + 1) for r in self.returned.get(method, ()))

    def _follow(
        self, name: str, depth: int, pending: list[tuple[int, cst.CSTNode, int]], seen_functions: set[str]
    ) -> None:
        """Read what the file's function or method ``name`` returns, once, within the depth bound."""
        if name in self.functions and name not in seen_functions and depth < MAX_DEPTH:
            seen_functions.add(name)
            for function_id, returns in self.functions[name]:
                pending.extend((function_id, r, depth + 1) for r in returns)


def keyed_entry(node: cst.BaseExpression) -> str | None:
    """Return ``name["key"]`` for an entry of a plain name at a constant string key, else None."""
    key = entry_key(node)
    if key is None or type(node) is not cst.Subscript or type(node.value) is not cst.Name:
        return None
    return f"{node.value.value}[{key}]"


def entry_key(node: cst.BaseExpression) -> str | None:
    """Return ``key`` for an entry of a plain name at a constant string key (``data["key"]``), else None."""
    if not (type(node) is cst.Subscript and type(node.value) is cst.Name and len(node.slice) == 1):
        return None
    index = node.slice[0].slice
    if type(index) is cst.Index and type(index.value) is cst.SimpleString:
        return literal_text(index.value)
    return None
