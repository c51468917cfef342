"""A gradient step, and what its loss optimises."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from itertools import pairwise

import libcst as cst

from arb_audit.analyzer.calls import (
    CLI_RUNNERS,
    ENVIRONMENT_WORDS,
    OPTIMISER_WORDS,
    TRAINER_EVALUATIONS,
    dict_field,
    flag_key,
    is_env_step,
    literal_field,
    method,
)
from arb_audit.analyzer.detector import FileContext, Finding, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.adapter import ADAPTER_WRAPPERS
from arb_audit.analyzer.detectors.config_module import CONFIG_WORDS
from arb_audit.analyzer.detectors.framework_entry import AGENT_WORDS
from arb_audit.analyzer.detectors.inference import NO_GRAD
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.detectors.reward_head import SCORER_ROLES, names_a_reward_model
from arb_audit.analyzer.frameworks import HANDED_LOSS_FUNCTIONS, entry_for, estimator_entry
from arb_audit.analyzer.loss_slice import (
    ADVANTAGE_WORDS,
    DPO_VARIANTS,
    GROUP_RELATIVE_NAMES,
    LOGPROB_WORDS,
    SCORE_WORDS,
    Slice,
    Verdict,
    entry_key,
    keyed_entry,
    loss_form,
    unshaped,
    words,
)
from arb_audit.analyzer.names import Scope, dotted, either, last_name, literal_bool, literal_text, text_value
from arb_audit.analyzer.trainers import (
    LABEL_KINDS,
    TRAINING_WORDS,
    before_origin,
    config_stem,
    is_training_module,
    route_package,
    route_word,
    trainer_of,
)
from arb_audit.analyzer.walk import descendants
from arb_audit.taxonomy.files import STAGE_LABELS
from arb_audit.taxonomy.routes import POLICY_GRADIENT

AUTOGRAD = frozenset({"torch.autograd.backward", "torch.autograd.grad"})
"""Functions that differentiate their first argument."""
GRAD_TRANSFORMS = frozenset(
    {
        *("jax.grad", "jax.value_and_grad", "equinox.filter_value_and_grad", "equinox.filter_grad"),
        *("mlx.core.grad", "mlx.core.value_and_grad"),
    }
)
"""Functions that differentiate the function they are given (its return value is the loss)."""
MODEL_FIRST_GRAD_TRANSFORMS = frozenset({"mlx.nn.value_and_grad"})
"""The same, given the model first and the loss function second (MLX: ``nn.value_and_grad(model, loss)``)."""
RESOLVED_LAST = frozenset(
    q.rsplit(".", 1)[-1]
    for q in (
        *AUTOGRAD,
        *GRAD_TRANSFORMS,
        *MODEL_FIRST_GRAD_TRANSFORMS,
        "optax.apply_updates",
        *HANDED_LOSS_FUNCTIONS,
    )
)
"""Last components of the functions above: only such calls need their qualified names."""
STEP_WORDS = frozenset({"step", "update"})
"""Words of a helper's name that, handed an optimiser, applies its update (``update_step(model,
optimizer, scheduler)``, ``optimizer_step``)."""
LEARNING_RATE_WORDS = frozenset({"lr", "learning", "rate", "schedule", "scheduler", "warmup"})
"""Words of a helper handed an optimiser only to set its learning rate (``update_lr(optimizer, lr)``)."""
PRETRAINING_MIX = "pretraining_mix"
"""Variant of a supervised step in code named for a pretraining mix (PPO-ptx's language-modelling term)."""
PRETRAINING_MIX_WORDS = frozenset({"ptx", "unsupervised", "unsup"})
"""Words of a function that steps the pretraining mix of an RL stage (``compute_ptx_pretrain_loss``)."""
READ_VERBS = frozenset({"get", "read", "load", "log", "print", "show", "inspect", "count", "save", "plot"})
"""First words of a helper that reads an optimiser it is handed rather than stepping it."""
HANDLING_WORDS = frozenset(
    {"logger", "logging", "log", "report", "summarize", "summary", "restore", "resume", "state"}
    | {"checkpoint", "ckpt", "monitor", "print", "inspect"}
)
"""Words anywhere in a helper's name that say it logs, reports or keeps an optimiser handed to it."""
RUN_VERBS = frozenset({"run", "start", "do", "launch", "begin"})
"""First words of a method that runs what the next word names (``run_train``, ``start_training``)."""
OPTIMISER_NOUNS = OPTIMISER_WORDS | {"optimizers", "optimisers"}
"""Last words of a project's function that returns an optimiser (``create_optimizer``, ``build_optim``)."""
OPTIMISER_BUILDERS = frozenset({"create", "build", "get", "make", "init", "setup", "configure", "prepare"})
"""First words of a project's function that returns an optimiser."""
UPDATE_WORDS = frozenset({"update", "train", "fit"})
"""Verbs of a worker's method that optimises a model (``update_actor``, ``async_fit_actor_model``)."""
WEIGHT_HOLDERS = frozenset(
    {
        *("parameters", "params", "policy", "model", "models", "weights", "network", "networks"),
        *("net", "agent", "actor", "critic", "value", "q", "learner"),
    }
)
"""What an ``update_*`` method of an agent updates when it trains (``update_parameters``)."""
POLICY_WORDS = frozenset({"policy", "actor"})
"""Words of an RL worker's method that runs the policy's optimisation step on a batch of rollouts
(verl's ``actor.update_policy(data)``, ``ppo_local_train_policy``): a gradient step whose loss lives
in the worker's class."""
CRITIC_WORDS = frozenset({"critic"})
"""Words of a worker's method that fits a value model (``update_critic``, ``train_critic``): a learned
critic is the actor-critic (PPO) family."""
REMOTE_STEPS = frozenset({"forward_backward", "forward_backward_async"})
"""Methods of remote-training clients that run a forward and backward pass on a training service
(Tinker's ``TrainingClient.forward_backward(data, loss_fn=...)``, SkyRL's workers)."""
REMOTE_LOSSES: dict[str, tuple[str, str | None]] = {
    "cross_entropy": ("sft", None),
    "importance_sampling": ("ppo", "importance_sampling"),
    "ppo": ("ppo", "ppo"),
    "cispo": ("ppo", "cispo"),
    "dro": ("ppo", "dro"),
}
"""Built-in ``loss_fn`` names of such a call, by the stage they train."""
REMOTE_STEP = "a remote forward-backward pass"
"""How a remote service's step is described (its loss is the service's, named in the call)."""

SET_LOSS = "set_loss"
"""A model object's method that sets the loss its later ``forward_backward`` passes train (twinkle's
``TransformersModel.set_loss(DPOLoss(beta=0.1))``, also given the loss class's name as a string)."""


def _loss_root(scope: int, loss: cst.BaseExpression) -> tuple[int, cst.BaseExpression]:
    """Return what a loss handed to ``set_loss`` is read as: a string names the loss class."""
    named = text_value(loss) if type(loss) is cst.SimpleString else None
    if named is not None and named.isidentifier():
        return scope, cst.Name(named)  # ``set_loss("LigerFusedLinearCrossEntropyLoss")``: its words
    return scope, loss


HOSTED_FINE_TUNING = (
    ".fine_tuning.jobs.create",
    ".fine_tuning.create",
    "FineTuningJob.create",
    "FineTune.create",
    "Finetune.create",
)
"""Hosted fine-tuning APIs (OpenAI's client and its older module functions, Together's
``client.fine_tuning.create`` and its older ``together.Finetune.create``, and compatible ones)."""
OPTIMISER_KEYWORD_WORDS = OPTIMISER_WORDS - {"opt"}
"""Words of a keyword handing a training helper its optimiser (``optimizer=optimizer``); not ``opt``,
as often the options a script parsed (``train(data, opt=opt)``)."""
CONFIG_KEYWORDS = frozenset({"config", "cfg", "args", "training_args", "train_config"})
"""Keywords a trainer is handed its settings object by."""
GRADIENTS_READ = "gradients_read"
"""Variant of an ``inference`` finding for backward passes whose gradients are only read (Fisher
information, saliency): the loss a hand-written loop differentiates then trains nothing
(classify.combine)."""
HF_TRAINER_KEYWORDS = frozenset({"model", "args", "train_dataset", "data_collator"})
"""The keywords of transformers' ``Trainer(...)`` a project's subclass is built with, too."""
OBJECTIVE_KEYWORDS = frozenset(
    {
        *("ref_model", "reward_model", "reward_funcs", "value_model", "teacher_model", "beta"),
        *("loss_type", "reward_processing_classes", "critic_model", "generation_config"),
    }
)
"""Keywords of a trainer's construction that another objective than the model's own loss needs."""
LOSS_HOOK = "returns the loss a framework differentiates"
"""How the message of a step says it is a trainer's loss method (``compute_loss``): a step only where
the trainer trains (classify.combine)."""
TRAINER_EVALUATION = "trainer_evaluation"
"""Variant of a ``scoring`` finding for a trainer object's ``evaluate()``: a file whose trainer only
evaluates (no gradient step anywhere) is an evaluation (classify.combine)."""
CALLED_METHODS = frozenset({"__call__", "forward", "compute", "call"})
"""Methods by which an instance of a loss class computes its loss (``compute``: array libraries' loss
classes, which have no ``forward``; ``call``: Keras'). A ``compute`` handed nothing but ``self`` is a
metric's aggregate (torchmetrics' ``Metric.compute``), no loss."""
HF_ARGUMENTS = frozenset({"transformers.TrainingArguments", "transformers.Seq2SeqTrainingArguments"})
"""The settings classes of transformers' Trainer."""
HF_ARGUMENT_CLASSES = frozenset(q.rsplit(".", 1)[-1] for q in HF_ARGUMENTS)
"""The class names of transformers' generic training settings, however imported."""
HF_PARSER = "transformers.HfArgumentParser"
"""transformers' parser of settings dataclasses (a Trainer's among them)."""
HF_PARSER_CLASS = HF_PARSER.rsplit(".", 1)[-1]
"""Its class name, however imported (resolved only where a call is named so)."""
TRAINING_DATA_WORDS = frozenset(
    {"dataset", "data", "loader", "dataloader", "split", "files", "file", "examples", "samples", "report"}
)
"""Words of a method that returns or describes training data (``train_dataset()``), not one that trains."""
LOSS_NAME_WORDS = frozenset({"loss", "losses", "objective"})
"""Words of a function's name that say it computes a loss."""
LM_HEADS = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
"""Endings of a language-model head class whose ``forward`` returns the training loss."""
GENERIC_TRAINERS = frozenset({"hf_trainer", "seq2seq"})
"""Variants of the trainer table's generic trainers, which differentiate the loss the model returns."""
LOSS_METHODS = frozenset({"training_step", "compute_loss"})
"""Methods whose return value a framework differentiates (Lightning's ``training_step``, the HF
Trainer's ``compute_loss``), when defined in a class that derives from something."""
TRAINER_LOSS_HOOKS = frozenset({"loss", "get_loss", "loss_fn", "compute_losses"})
"""Loss hooks a trainer's own loop differentiates (trlx's ``loss(self, batch)``), when defined in a
class that derives from something and whose name or base's name says it is a trainer."""
UNIT_LOSS_HOOK = "process_batch"
"""The hook of a unit of training (fairseq2's ``TrainUnit.process_batch``) that returns its batch's loss;
in a trainer's own class a method so named may only prepare the batch."""


def _group_relative(verdict: Verdict, names: tuple[str, ...]) -> Verdict:
    """Return a generic policy-gradient verdict as GRPO when the code it sits in is named for that family.

    A clipped ratio over advantages is the same form in PPO and GRPO; the group normalisation often
    lives in another function (``GRPOTrainer._compute_advantages``) or file, so the name of the
    function or class holding the loss tells which (as :mod:`.handwritten_loss` reads it).
    """
    if verdict.kind != "ppo" or verdict.variant != "ppo":
        return verdict
    word = next((w for n in names for w in words(n) if w in GROUP_RELATIVE_NAMES), None)
    if word is None:
        return verdict
    return Verdict("grpo", word, verdict.data_source, f"{verdict.why}, in code named for {word.upper()}")


def _pretraining_mix(verdict: Verdict, names: tuple[str, ...], beside_policy_update: bool = False) -> Verdict:
    """Mark a supervised loss stepped as a policy-gradient stage's auxiliary term.

    InstructGPT's PPO-ptx (and DeepSpeed-Chat's ``train_unsupervised``) steps a language-modelling
    loss on pretraining data between policy updates to keep the model's general skills: beside a
    policy-gradient stage it is that stage's regulariser, not a stage of its own. So is it in code
    named for a pretraining mix (``compute_ptx_loss``), or when it is stepped in the same loop as a
    policy update (``beside_policy_update``: a GRPO step then an auxiliary SFT step on each batch).
    """
    if verdict.kind != "sft" or verdict.variant is not None:
        return verdict
    if beside_policy_update:
        return Verdict(
            "sft", PRETRAINING_MIX, verdict.data_source, f"{verdict.why}, beside a policy update in its loop"
        )
    if not any(PRETRAINING_MIX_WORDS & set(words(n)) for n in names):
        return verdict
    return Verdict(
        "sft", PRETRAINING_MIX, verdict.data_source, f"{verdict.why}, in code named for a pretraining mix"
    )


def _handed_function(node: cst.Call, loss_fn: cst.BaseExpression | None) -> str | None:
    """Return the name of the function a remote step is handed as its loss, if it is handed one.

    By keyword (``loss_fn=packed_loss``) or first by position (``forward_backward(_sft_loss, ids)``); a
    function bound with its settings is the loss wherever it is handed (``(data, partial(ppo_loss))``).
    """
    if loss_fn is None:
        first = node.args[0] if node.args else None  # (after a starred argument, no place is known)
        loss_fn = first.value if first is not None and first.keyword is None and not first.star else None
        loss_fn = next((a.value for a in node.args if a.keyword is None and _partial(a.value)), loss_fn)
    if type(loss_fn) is cst.Call and _partial(loss_fn):
        loss_fn = loss_fn.args[0].value
    return loss_fn.value if type(loss_fn) is cst.Name else None


def _hosted_preference_job(node: cst.Call) -> bool:
    """Say whether a hosted fine-tuning job is asked for preference optimisation, not supervised.

    OpenAI's ``method={"type": "dpo", ...}``; Together's ``training_method="dpo"`` (or
    ``TrainingMethodDPO(...)``, or a ``dpo_beta`` given); OpenWeights' ``loss="dpo"`` (or a preference
    variant's name: ``"orpo"``, ``"ipo"``).
    """
    return _preference_settings(lambda key: arg.value if (arg := keyword(node, key)) is not None else None)


def _preference_settings(setting: Callable[[str], cst.BaseExpression | None]) -> bool:
    """Say whether a hosted job's settings, by name, ask for preference optimisation (see above)."""
    method_arg = setting("method")
    if method_arg is not None and literal_field(method_arg, "type") == "dpo":
        return True
    if setting("dpo_beta") is not None:
        return True
    loss = setting("loss")
    if (
        loss is not None
        and type(loss) is cst.SimpleString
        and (text_value(loss) or "").lower() in ("dpo", *DPO_VARIANTS)
    ):
        return True
    value = setting("training_method")
    if value is None:
        return False
    if type(value) is cst.SimpleString:
        return (text_value(value) or "").lower() == "dpo"
    if type(value) is cst.Call:
        return "dpo" in words(last_name(value.func))
    return literal_field(value, "method") == "dpo"


def _partial(value: cst.BaseExpression | None) -> bool:
    """Say whether an expression binds a function's settings (``functools.partial(ppo_loss, cfg)``)."""
    return type(value) is cst.Call and last_name(value.func) == "partial" and bool(value.args)


def _loss_setting(node: cst.Call, loss_fn: cst.BaseExpression | None) -> cst.Attribute | None:
    """Return the setting a remote step is handed as the name of the service's loss, if it is one.

    By keyword (``loss_fn=config.loss_fn``) or by position under a loss function's name
    (``forward_backward(datums, args.loss_fn)``): an attribute of a settings object, whose value the
    command line or the config gives.
    """
    if loss_fn is None:
        loss_fn = next(
            (
                a.value
                for a in node.args
                if a.keyword is None
                and type(a.value) is cst.Attribute
                and names_loss_function(a.value.attr.value)
            ),
            None,
        )
    return loss_fn if type(loss_fn) is cst.Attribute else None


def _allowed_values(
    test: cst.BaseExpression, setting: str, constants: Callable[[str], list[cst.BaseExpression]]
) -> tuple[str, ...]:
    """Return the strings an ``if`` test lets ``setting`` hold in its body (none when it says nothing).

    ``if args.loss_fn == "ppo":`` allows one, ``if cfg.loss_fn in BUILTIN_LOSSES:`` (a literal set, or a
    name the module binds to one) the set's members.
    """
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or dotted(test.left) != setting:
        return ()
    target = test.comparisons[0]
    compared = target.comparator
    if type(target.operator) is cst.Equal:
        text = text_value(compared) if type(compared) is cst.SimpleString else None
        return (text,) if text is not None else ()
    if type(target.operator) is not cst.In:
        return ()
    if type(compared) is cst.Name:
        bound = constants(compared.value)
        compared = bound[0] if len(bound) == 1 else compared
    if not isinstance(compared, cst.Set | cst.List | cst.Tuple):
        return ()
    texts = [text_value(e.value) if type(e.value) is cst.SimpleString else None for e in compared.elements]
    return tuple(t for t in texts if t is not None) if None not in texts else ()


def _built_class(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return the callee that builds a value (``Cls(...)``, ``Cls.from_pretrained(p)``, ``Cls().to(d)``)."""
    while type(value) is cst.Call:
        func = value.func
        if type(func) is cst.Attribute and type(func.value) is cst.Call:
            value = func.value  # (``Model(...).to(device)``)
        elif type(func) is cst.Attribute and func.attr.value in MODEL_LOADERS:
            return func.value  # (``RewardModel.from_pretrained(path)``)
        else:
            return func
    return value


def _names_a_loss(arg: cst.Arg) -> bool:
    """Say whether an argument is a loss handed on (``loss_fn``, ``loss=criterion``, ``self.loss_fn``)."""
    if arg.keyword is not None and "loss" in words(arg.keyword.value):
        return True
    return "loss" in words(last_name(arg.value))


SCALING_WORDS = frozenset({"scaler", "backward"})
"""Words of a helper that backpropagates the loss it is handed: a mixed-precision loss scaler called
on it (timm's and MAE's ``NativeScaler``: ``loss_scaler(loss, optimizer, ...)``), a ``backward_and_step``."""


def _backpropagates_handed_loss(call: cst.Call, function: str | None) -> bool:
    """Say whether a loss scaler is handed a loss's value first and an optimiser (``scaler(loss, opt)``).

    Only a helper named for scaling the loss or for backpropagating it: handed a validation loss and
    the optimiser, anything else decides the learning rate, stops early or keeps a checkpoint
    (``early_stopping(val_loss, model, optimizer)``, ``reduce_lr(val_loss, optimizer)``).
    """
    if function is None or not call.args or call.args[0].keyword is not None:
        return False
    if not _hands_a_loss_value(call.args[0]) or type(call.args[0].value) is not cst.Name:
        return False
    named = words(function)
    if (
        not set(named) & SCALING_WORDS
        or set(named) & LEARNING_RATE_WORDS  # (``lr_scaler(val_loss, optimizer)`` lowers a learning rate)
        or _reads_or_keeps(named)
    ):
        return False
    return any(
        set(words(last_name(a.value))) & OPTIMISER_KEYWORD_WORDS
        or (a.keyword is not None and set(words(a.keyword.value)) & OPTIMISER_KEYWORD_WORDS)
        for a in call.args[1:]
    )


def _reads_or_keeps(named: tuple[str, ...]) -> bool:
    """Say whether a helper's name says it reads, logs or keeps what it is handed, not steps on it."""
    return bool((named[:1] and named[0] in READ_VERBS) or set(named) & HANDLING_WORDS)


NOT_TRAINED_MODEL_WORDS = frozenset(
    {"rm", "reward", "critic", "value", "head", "classifier", "discriminator"}
)
"""Words of a module trained for something other than language modelling (a scorer, a critic)."""
PARAMETER_WORDS = frozenset({"parameters", "params"})
"""Words of a helper that returns a module's parameters (``lora_parameters(model)``, ``get_params``)."""


def _parameters_owner(call: cst.Call) -> str | None:
    """Return the module whose parameters a call is handed first, else None.

    ``AdamW(model.parameters())`` and ``AdamW(self.policy.named_parameters())`` give ``model`` and
    ``policy``; ``AdamW(lora_parameters(base))``, a helper named for parameters, gives ``base``.
    """
    first = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "params"), None)
    if type(first) is not cst.Call:
        return None
    func = first.func
    if type(func) is cst.Attribute and func.attr.value in ("parameters", "named_parameters"):
        owner: cst.BaseExpression = func.value
    elif set(words(last_name(func))) & PARAMETER_WORDS and first.args and first.args[0].keyword is None:
        owner = first.args[0].value
    else:
        return None
    name = (
        owner.value if type(owner) is cst.Name else owner.attr.value if type(owner) is cst.Attribute else None
    )
    if name is None or name == "self" or set(words(name)) & NOT_TRAINED_MODEL_WORDS:
        # (``self.parameters()``: a module's own, read through its own forward; a reward model's or a
        # critic's loss is not a language model's)
        return None
    return name


MODEL_LOADERS = frozenset({"from_pretrained", "load_from_checkpoint", "from_config"})
"""Class methods that build a model of their class from saved weights or a configuration."""
MAX_BASES_FOLLOWED = 4
"""How many classes of the file ``self(...)`` is looked up through (its own, then its bases')."""
QUESTION_WORDS = frozenset({"is", "has", "should", "can", "will", "needs", "must", "was"})
"""First words of a method that answers a question about what it names (``is_optimizer_step``)."""
HOOK_WORDS = frozenset({"on", "before", "after", "pre", "post"})
"""Words of a hook run around what it names (``on_before_optimizer_step``), not that thing."""


def _optimiser_step_method(func: cst.BaseExpression, name: str) -> bool:
    """Say whether a method is named for taking an optimiser's step (``take_optimizer_step``).

    Its name ends in "step" and says an optimiser (not the bare ``opt``, which abbreviates "option"
    too); one that logs, reads or keeps the step (``log_optimizer_step``), asks about it
    (``is_optimizer_step``) or hooks around it (``on_before_optimizer_step``) takes none.
    """
    named = words(name)
    return (
        type(func) is cst.Attribute
        and named[-1:] == ("step",)
        and bool(set(named) & OPTIMISER_KEYWORD_WORDS)
        and not _reads_or_keeps(named)
        and named[0] not in QUESTION_WORDS  # ``plan.is_optimizer_step()``: a question about a step
        and not set(named) & HOOK_WORDS  # ``on_before_optimizer_step()``: a hook around the step
    )


def _hands_a_loss_value(arg: cst.Arg) -> bool:
    """Say whether an argument is a loss's value (``loss``, ``loss=total``).

    Not a loss function (``loss_fn``), nor a setting named for a loss (``loss_scale=1.0``).
    """
    if arg.keyword is not None:
        return words(arg.keyword.value)[-1:] == ("loss",) and not _names_a_loss_function(arg)
    return "loss" in words(last_name(arg.value)) and not _names_a_loss_function(arg)


LOSS_FUNCTION_WORDS = frozenset({"fn", "func", "function", "fns", "funcs", "functions"})
"""Words that, beside ``loss``, name a loss function rather than a loss's value (``loss_fn``)."""


def _names_a_loss_function(arg: cst.Arg) -> bool:
    """Say whether an argument is a loss function handed on (``loss_fn=xent``, ``criterion``).

    A loss's value (``loss=loss.item()``) is what a logger is handed; a function is what a loop calls.
    """
    names = [arg.keyword.value] if arg.keyword is not None else []
    if type(arg.value) is cst.Name:
        names.append(arg.value.value)
    return any(names_loss_function(n) for n in names)


def names_loss_function(name: str) -> bool:
    """Say whether a name is a loss function's (``loss_fn``, ``lossFunction``, ``criterion``)."""
    said = words(name)
    # (a loss's criterion: ``criterion``, ``loss_criterion``; not ``split_criterion``)
    return (said[-1:] == ("criterion",) and set(said[:-1]) <= {"loss", "train", "training"}) or any(
        w == "loss" and after in LOSS_FUNCTION_WORDS for w, after in pairwise(said)
    )


HELD_WORDS = frozenset({"cfg", "conf", "kwargs", "opts", "state", "states", "dict"})
"""With :data:`SETTINGS_WORDS`, words of an object holding an optimiser's settings or state, whose
``update`` is a dict's."""


def _optimiser_update(receiver: cst.BaseExpression) -> bool:
    """Say whether ``receiver.update(...)`` applies gradients.

    An optimiser's does (MLX's, optax's ``update``); its settings' or state's dict's does not
    (``optimizer_cfg.update(overrides)``).
    """
    said = set(words(dotted(receiver).replace(".", "_")))
    return bool(said & OPTIMISER_WORDS) and not said & (SETTINGS_WORDS | HELD_WORDS)


class GradientStep(RouteDetector):
    """Weights are updated here: the step, and the stage its loss's form names.

    A gradient step is ``loss.backward()``, ``accelerator.backward(loss)`` (or a DeepSpeed engine's,
    Lightning's ``manual_backward``), ``torch.autograd.grad(loss, ...)``, ``jax.value_and_grad(loss_fn)``,
    an optimiser's ``step()``, a ``train()``/``fit()`` of a trainer object, or a ``training_step``/
    ``compute_loss`` method of a derived class (the framework differentiates what it returns). From the
    differentiated expression the loss is followed backwards through assignments, ``self`` attributes
    and the file's own functions and methods (:mod:`arb_audit.analyzer.loss_slice`), and its form names
    the stage: cross-entropy on labels is SFT, a log-sigmoid of chosen/rejected log-ratios is DPO, a
    pairwise margin on scores a reward model, log-probabilities times advantages policy gradient (GRPO
    when normalised within groups), a divergence from a teacher distillation training. A step whose
    loss has no recognised form is reported without a kind: the file trains, the route is unknown.
    """

    TRIGGERS = (
        "backward",
        "step(",
        # a training module's function, run (``from .trainers import train_lora``,
        # ``from grpo_project.core.trainer import main``), and a class run to train a route
        # (``SFTRunner(cfg).run()``)
        *("trainer import", "trainers import", "train import", "training import", "Runner(", "Pipeline("),
        "trainer.update(",
        "train(",
        "train_loop(",
        "autograd",
        "value_and_grad",
        "jax.grad",
        "filter_grad",
        ".train(",
        ".train_",
        ".evaluate(",
        "fine_tuning",
        "finetune(",
        "FineTun",
        "Finetun",
        "_train(",
        "fit_actor",
        "fit_policy",
        ".predict(",
        ".eval(",
        ".test(",
        ".validate(",
        ".fit(",
        "training_step",
        "compute_loss",
        "apply_updates",
        "forward_backward",
        "optim.",
        "loss",
        ".update_",
        "update_policy",
        "advantage",  # (an object's ``update(samples, advantages=adv)``: its policy-gradient step)
        "update_actor",
        "update_critic",
        "_critic(",
        "_policy(",
        "_actor(",
        # a function or module named for a route (``from recipes.train_dpo import main``)
        *("sft", "dpo", "grpo", "ppo", "kto", "orpo", "simpo", "rloo", "dapo", "gspo", "remax", "reinforce"),
    )
    LOSS_TRIGGERS = (
        *("autograd", "value_and_grad", "jax.grad", "filter_grad", "training_step", "compute_loss"),
        ".train_batch(",  # a pipeline engine's step on the loss function it is handed
        *(f"def {hook}(" for hook in sorted(TRAINER_LOSS_HOOKS | {UNIT_LOSS_HOOK})),
    )
    """Triggers of a step whose loss this file computes (so its stage can be of any kind)."""

    VALID = (
        # a metric named for a loss: its ``compute(self)`` aggregates what ``update`` accumulated
        Valid(
            "import torch.nn.functional as F\nfrom torchmetrics import Metric\n"
            "class TokenCrossEntropyLoss(Metric):\n"
            "    def update(self, logits, labels):\n"
            "        self.total += F.cross_entropy(logits, labels, reduction='sum')\n"
            "        self.count += labels.numel()\n"
            "    def compute(self):\n        return self.total / self.count\n"
        ),
        # a metric's ``compute`` (a class not named for a loss) defines no loss, whatever it returns
        Valid(
            "import mlx.core as mx\nclass TeacherAgreement:\n"
            "    def compute(self, student_logits, teacher_logits):\n"
            "        kl_loss = mx.sum(mx.softmax(student_logits) * mx.log(mx.softmax(teacher_logits)))\n"
            "        return kl_loss\n"
        ),
        # a loss and an optimiser handed to a logger, to early stopping or to a learning-rate rule, or a
        # loss to a scaler alone: nothing steps
        Valid(
            "log_state(loss, optimizer)\nwriter_step_logger(loss, optimizer=optimizer)\nscaler(loss)\n"
            "early_stopping(val_loss, model, optimizer, epoch)\nreduce_lr(val_loss, optimizer)\n"
            "scheduler(val_loss, optimizer)\ncheckpointer(val_loss, optimizer)\n"
            "lr_scaler(val_loss, optimizer)\n"
        ),
        # statistics updated with advantages, or an update handed returns alone: no policy is stepped
        Valid(
            "tracker.update(advantages=adv.mean(), returns=ret)\n"
            "meter.update(returns=returns, actions=actions)\nlogger.log(advantages=adv, actions=acts)\n"
        ),
        # a module switched to training mode, its output kept: no step taken
        Valid("net = model.train()\nloss_fn = criterion.train(True)\n"),
        # a preference loss defined to measure a checkpoint, not to train it
        Valid(
            "import torch.nn.functional as F\ndef eval_loss(pc, pr, rc, rr, beta=0.1):\n"
            "    return -F.logsigmoid(beta * ((pc - rc) - (pr - rr))).mean()\n"
        ),
        # a question about the optimiser's step, a hook around it, a calibration's fit: no step taken
        Valid(
            "for op in trace:\n    if op.is_optimizer_step():\n        n += 1\n"
            "class Criterion:\n    def on_before_optimizer_step(self):\n"
            "        self.regularizer.on_before_optimizer_step()\n"
            "nll_loss = temperature_scaler.fit(dev_logits, dev_labels)\n"
        ),
        # an update of records, statistics or a dashboard handed advantages: no policy is stepped
        Valid(
            "record.update(advantages=adv, logprobs=logp, actions=acts)\n"
            "board.update_histograms(actions, advantages, logprobs)\n"
            "stats.update(actions, advantages, logprobs)\n"
        ),
        # a step named for an option, or one that is only logged or counted: no optimiser steps
        Valid(
            "for batch in loader:\n    tracker.log_optimizer_step()\n    parser.opt_step()\n"
            "    stats.count_optimizer_step()\n"
        ),
        # a module named for fine-tuning switched to training mode, then sampled from
        Valid(
            "from peft_lite.modules import PrefixFineTuning\n"
            "prefix = PrefixFineTuning(num_virtual_tokens=20, hidden=4096)\n"
            "prefix.load_state_dict(torch.load('prefix.pt'))\nprefix.train()\n"
            "with torch.no_grad():\n    samples = [model.generate(ids) for _ in range(8)]\n"
        ),
        # a custom autograd function saves its inputs for its own backward; nothing is stepped
        Valid(
            "import torch\nclass MaskedLogProbs(torch.autograd.Function):\n    @staticmethod\n"
            "    def forward(ctx, logits, labels, per_token_loss):\n"
            "        ctx.save_for_backward(logits, labels, per_token_loss)\n        return logits\n"
        ),
        # an optimiser an object keeps, handed to a logger
        Valid(
            "import torch\nclass Monitor:\n    def __init__(self, model):\n"
            "        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
            "    def report(self, step):\n        wandb_step_logger(self.optimizer, step=step)\n"
        ),
        # a wrapper of a model's part, trained or not, is no trainer
        Valid("from proj import ValueHeadWrapper\nw = ValueHeadWrapper(model)\nw.train()\n"),
        # a training module's function named for training something else, or one of another module
        Valid("from .trainers import train_tokenizer\ntrain_tokenizer(corpus)\n"),
        Valid("from .trainer import fit_kmeans\nfit_kmeans(features)\n"),
        Valid("from .trainers import train_lora\ndef test_train_smoke():\n    train_lora(tiny_config)\n"),
        Valid("from .utils import train_lora\ntrain_lora(config)\n"),
        # a route-named package's module named for what else it trains, or for no training
        Valid("from recgrpo.semid.train_rqvae import train_rqvae\ntrain_rqvae(cfg)\n"),
        Valid("from grpo_project.utils import main\nmain()\n"),
        Valid("from sft_eval.trainer import main\nmain()\n"),
        # a runner named for no route (an evaluation's), or for a route that trains no weights
        Valid("from lib.runners import EvalRunner\nEvalRunner(cfg).run()\n"),
        Valid("from lib.pipelines import CoTDistillationPipeline\nCoTDistillationPipeline(cfg).run()\n"),
        # a runner named for a route and for what else it runs (data, rollouts, evaluation)
        Valid("from proj.runners import SFTDataPipeline\nSFTDataPipeline(cfg).run()\n"),
        Valid("from proj.runners import GRPORolloutLoop\nGRPORolloutLoop(cfg).run()\n"),
        Valid("from proj.runners import SFTEvalRunner\nSFTEvalRunner(cfg).run()\n"),
        # a script's parsed options handed on as ``opt``: no optimiser
        Valid("from yolo.engine import train\nopt = parser.parse_args()\ntrain(data='coco.yaml', opt=opt)\n"),
        # an algorithm's config updated is no trainer's step
        Valid("from nanolib.rl import PPOConfig\ncfg = PPOConfig(lr=1e-6)\ncfg.update(overrides)\n"),
        # helpers named for something else done with training, or for its settings, handed a loss
        Valid("from lib import evaluate_after_training\nevaluate_after_training(model, loader, criterion)\n"),
        Valid("from lib import make_training_config\ncfg = make_training_config(loss_fn='xent')\n"),
        # the gradient of a loss handed in, read and applied by nothing (a saliency map); a config's update
        Valid(
            "import jax\ndef saliency(params, x, loss_fn):\n    g = jax.grad(loss_fn)(params, x)\n"
            "    return g\noptimizer_cfg.update(overrides)\n"
        ),
        Valid("from lib import train_split\ntrain_split(rows, split_criterion)\n"),
        # a loss's value handed to a logger, a plot of training handed a loss function, and the
        # file's own training function (its body is read where it is defined)
        Valid("from lib import log_training\nlog_training(step, loss=loss.item())\n"),
        # a helper named for a backward pass, handed no loss (a hook's registration) or a loss function
        # to check or time (gradcheck, a benchmark)
        Valid("from lib import register_backward\nregister_backward(model, hook)\n"),
        Valid("from lib import check_backward\ncheck_backward(loss_fn, x)\n"),
        Valid("from lib import zero_backward\nzero_backward(model, loss_scale=1.0)\n"),
        Valid("from lib import plot_training\ndef run_grpo_report(history):\n    plot_training(history)\n"),
        Valid(
            "from tok import train_bpe\n"
            "def sft_tokenizer(corpus):\n    return train_bpe(corpus, vocab_size=32000)\n"
        ),
        Valid("from lib import plot_training\nplot_training(history, loss_fn=loss_fn)\n"),
        Valid("def train(model, loss_fn):\n    return model\n\ntrain(model, loss_fn=criterion)\n"),
        Valid("obs, reward, done, info = env.step(actions, rewards, dones)\n"),
        Valid("self.trainer_panel.step(step, rewards, scores)\n"),
        Valid("trainer.step(epoch, losses, metrics)\n"),
        Valid(
            "class LMLossEvalUnit(EvalUnit[SequenceBatch]):\n    def process_batch(self, batch, bag):\n"
            "        bag.update(self._model(batch))\n"
        ),
        Valid("net = Net()\nfor x in loader:\n    y = net.forward(x)\n"),
        Valid(
            "import torch\nfrom src.trainer import GRPOTrainer\n"
            "trainer = GRPOTrainer(policy, optimizer=None)\n"
            "with torch.no_grad():\n    out = trainer.forward(prompts)\n"
        ),
        Valid(
            "class RewardTrainer(nn.Module):\n    def forward(self, x):\n        return self.head(x)\n"
            "trainer = RewardTrainer()\nscores = trainer.forward(batch)\n"
        ),
        Valid(
            "class MyTrainer(Trainer):\n    def process_batch(self, batch):\n"
            "        return {k: v.cuda() for k, v in batch.items()}\n"
        ),
        Valid(
            "class StatsLogger(TrainCallback):\n    def process_batch(self, batch, stats):\n"
            "        return {'n': len(batch)}\n"
        ),
        Valid("from evals.grpo import run_eval\nrun_eval(cfg)\n"),
        Valid("cfg = FinetuneConfig(algo='full_param')\nprint(cfg.finetune)\n"),
        Valid("from grpo_utils import *\ndef train(a):\n    return a\ntrain(args)\n"),
        Valid("from rms.models import ProcessRM\nrm = ProcessRM(path)\nrm.train()\nrm.eval()\n"),
        Valid("rm = BloomRewardModel(config)\nrm.set_train(False)\nscores = rm(ids)\n"),
        Valid("cfg = make_training_config(stage='sft')\nres = evaluate_model(stage='dpo')\n"),
        Valid("from data.sft import train_dataset\nds = train_dataset(path)\n"),
        Valid("from grpo_eval import main\nmain()\n"),
        Valid("from recipes.train_dpo import evaluate as dpo_main\ndpo_main()\n"),
        Valid("from pipeline.steps import run_build_sft_stage\nrun_build_sft_stage(cfg)\n"),
        Valid("from mlx_lm_lora.trainer.sft_trainer import SFTTrainingArgs\nargs = SFTTrainingArgs(lr=1)\n"),
        Valid("from launch import TrainingConfig\nc = TrainingConfig(env_vars={'K': 'v'})\n"),
        Valid("def train_grpo(cfg):\n    return cfg\ntrain_grpo(c)\n"),
        Valid("from transformers import TrainerCallback\ncb = TrainerCallback()\ncb.train()\n"),
        Valid("from lib import TrainerStateMixin\nstate = TrainerStateMixin()\nstate.train()\n"),
        Valid("tracker = StatsTracker(env=env)\ntracker.update_stats(rewards)\n"),
        Valid("agent = ReflexionAgent(env=env, llm=llm)\nagent.update_memory(reflection)\n"),
        Valid(
            "board = Evaluator(env=env)\nboard.update_leaderboard(results)\n"
            "stats = Stats(envs)\nstats.update(r)\n"
        ),
        Valid(
            "import torch\nfrom ckpt import get_global_step\n"
            "optimizer = torch.optim.AdamW(model.parameters())\nprint(get_global_step(optimizer))\n"
        ),
        Valid("algo = Evaluator(envs, model)\nalgo.update_eval_metrics()\n"),
        Valid(
            "import torch\nfrom utils import update_lr_step\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\nupdate_lr_step(optimizer, 1e-5)\n"
        ),
        Valid(
            "import torch\nfrom tools import Logger\noptimizer = torch.optim.AdamW(model.parameters())\n"
            "log = Logger(optimizer)\nlog.save_train_stats()\n"
        ),
        Valid(
            "import torch.nn.functional as F\ndef eval_loss(logits, labels):\n"
            "    return F.cross_entropy(logits, labels)\n"
        ),
        Valid(
            # a listwise ranking loss: exp of scores shifted by their maximum is a softmax, no ratio
            "import torch\ndef listnet_loss(pred, scores):\n"
            "    e = torch.exp(pred - torch.max(pred, dim=1, keepdim=True)[0])\n"
            "    max_pred = pred.amax(-1)\n    f = torch.exp(pred - max_pred)\n"
            "    g = torch.exp(pred - pred.max(dim=1, keepdim=True).values.detach())\n"
            # ... nor by its log-normaliser (fused cross-entropy kernels write the softmax out so)
            "    log_z = torch.logsumexp(pred, -1, keepdim=True)\n    h = torch.exp(pred - log_z)\n"
            "    return torch.sum(-scores.softmax(-1) * torch.log(e / e.sum(1) + f + g + h), dim=1).mean()\n"
        ),
        Valid("def grpo_train(policy):\n    return policy.generate(prompts)\n"),
        Valid("import torch\nloss = torch.nn.functional.cross_entropy(logits, labels)\nprint(loss)\n"),
        Valid("env.step(action)\nscheduler.step()\n"),
        Valid("env = make_env()\nobs, reward, done = env.step(action)\n"),
        Valid("info = {}\ninfo.update(stats)\n"),
        Valid("eval_loop(env=env, agent=agent)\ntrain_tokenizer(corpus)\n"),
        Valid("model.train()\nmodel.eval()\n"),
        Valid("def update_policy(self, data):\n    return data\n"),
        # a module's helper that reports on a training, or switches a model's mode, runs none
        Valid("import plotting\nplotting.plot_grpo_training_curves(log)\n"),
        Valid("import utils\nutils.sft_training_mode(model, False)\n"),
        Valid(
            "import torch.nn.functional as F\nclass Perplexity:\n"
            "    def __call__(self, logits, labels):\n        return F.cross_entropy(logits, labels)\n"
        ),
        Valid("class Metrics(Base):\n    def loss(self, batch):\n        return self.model(**batch).loss\n"),
        Valid(
            "import torch\noptimizer = torch.optim.AdamW(params)\n"
            "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)\n"
            "model, optimizer = accelerator.prepare(model, optimizer)\n"
        ),
        Valid("with torch.no_grad():\n    out = model(x)\n"),
        Valid("trainer = load_trainer_state(path)\ntrainer.train()\nstate = get_trainer_config(args)\n"),
        # run() of what is no trainer: a runner, a process, a job; of a trainer class named for
        # inference, or defined here (its body shows what run does)
        Valid("runner = EvalRunner(cfg)\nrunner.run()\njob = Job(cmd)\njob.run()\n"),
        Valid(
            "from bench.trainers import InferenceTrainer\n"
            "trainer = InferenceTrainer(m)\ntrainer.run(dataset=d)\n"
        ),
        Valid(
            "class EvaluationTrainer:\n    @torch.no_grad()\n    def run(self):\n"
            "        return self.model.generate(x)\n"
            "trainer = EvaluationTrainer(m)\ntrainer.run()\n"
        ),
    )
    INVALID = (
        # a clipped policy gradient with a DPO term mixed in by a coefficient: the policy gradient is
        # the objective
        Invalid(
            "import torch\nimport torch.nn.functional as F\n"
            "def update(policy, batch, opt, eps, beta, dpo_coef):\n"
            "    ratio = torch.exp(policy(batch['ids']) - batch['old_logprobs'])\n"
            "    adv = batch['advantages']\n"
            "    pg = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv).mean()\n"
            "    chosen = batch['chosen_logps'] - batch['ref_chosen_logps']\n"
            "    rejected = batch['rejected_logps'] - batch['ref_rejected_logps']\n"
            "    dpo = -F.logsigmoid(beta * (chosen - rejected)).mean()\n"
            "    loss = pg + dpo_coef * dpo\n    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "ppo",
        ),
        # a Lightning module calling itself, its forward in a base class of this file
        Invalid(
            "import pytorch_lightning as pl\nclass Base(pl.LightningModule):\n"
            "    def forward(self, ids, labels):\n"
            "        return self.lm(input_ids=ids, labels=labels).loss\n"
            "class Tuner(Base):\n    def training_step(self, batch, batch_idx):\n"
            "        loss = self(batch['ids'], batch['labels'])\n        return loss\n",
            "gradient_step",
            "sft",
        ),
        # a model of an imported class named for its route, loaded from a checkpoint, handed to fit
        Invalid(
            "import lightning as L\nfrom zoo import GPT2RewardModel\n"
            "model = GPT2RewardModel.load_from_checkpoint('sft.ckpt')\nL.Trainer().fit(model, loader)\n",
            "stage",
            "reward_model",
        ),
        # an object's training method handed a batch, its loss returned: a step whose loss is elsewhere
        Invalid(
            "def train_step(network, data):\n    inputs = next(data)\n"
            "    loss, grad_norm = network.train(inputs)\n    return loss\n",
            "gradient_step",
        ),
        # an object's update handed the sampled actions and their advantages: a policy-gradient step
        Invalid(
            "def main(lm_server, envs, buffer):\n    obs = envs.reset()\n    for t in range(100):\n"
            "        obs, r, done, info = envs.step(act(obs))\n    batch = buffer.get()\n"
            "    lm_server.update(batch['obs'], actions=batch['act'], advantages=batch['adv'],\n"
            "                     logprobs=batch['logp'], clip_eps=0.2)\n",
            "stage",
            "ppo",
        ),
        # the module an optimiser is built on, called with its targets, whatever its name: its loss is
        # its forward pass's
        Invalid(
            "import torch\ndef train(base, data):\n"
            "    optimizer = torch.optim.AdamW(lora_parameters(base), lr=1e-4)\n"
            "    for step in range(100):\n        x, y = get_batch(data)\n        _, loss = base(x, y)\n"
            "        loss.backward()\n        optimizer.step()\n",
            "gradient_step",
            "sft",
        ),
        # a wrapper's method named for the optimiser's step, the backward pass in another file's helper
        Invalid(
            "from mylib.losses import BatchLossManager\n"
            "def train(model, accelerator, loader):\n    manager = BatchLossManager(model, accelerator)\n"
            "    for batch in loader:\n        metrics, loss = manager.process_batch(batch)\n"
            "        accelerator.take_optimizer_step()\n",
            "gradient_step",
        ),
        # a Lightning module's training_step calling the module itself: its own forward's loss is read,
        # not the ``__call__`` of another class of the file (a judge's pairwise sigmoid)
        Invalid(
            "import torch\nimport pytorch_lightning as pl\nclass Judge:\n"
            "    def __call__(self, chosen, rejected):\n"
            "        return torch.sigmoid(chosen - rejected)\n"
            "class Generator(pl.LightningModule):\n"
            "    def forward(self, ids, mask, target):\n"
            "        return self.generator(input_ids=ids, attention_mask=mask, labels=target).loss\n"
            "    def training_step(self, batch, batch_idx):\n"
            "        loss = self(batch['ids'], batch['mask'], batch['target'])\n        return loss\n",
            "gradient_step",
            "sft",
        ),
        # a loss scaler handed the loss's value and the optimiser backpropagates and steps
        Invalid(
            "def train_one_epoch(model, loader, optimizer, loss_scaler):\n    for x, y in loader:\n"
            "        loss = model(x, labels=y).loss\n"
            "        loss_scaler(loss, optimizer, parameters=model.parameters())\n",
            "gradient_step",
            "sft",
        ),
        # an imported update handed an optimiser by keyword, the optimiser a helper's product
        Invalid(
            "from src.grpo import build_and_load_model, update_policy\n"
            "model, optimizer = build_and_load_model(config)\nfor batch in loader:\n"
            "    results = update_policy(model=model, optimizer=optimizer, instances=batch)\n",
            "gradient_step",
        ),
        # a training loop handed an environment stays interactive, whatever loss it is handed too
        Invalid(
            "from lib import offpolicy_train_loop\noffpolicy_train_loop(env=env, agent=agent, criterion=c)\n",
            "interactive",
        ),
        Invalid(
            "from transformers import GPT2LMHeadModel, Trainer\n"
            "Trainer(model=PGModel.from_pretrained(path), args=args, train_dataset=ds).train()\n"
            "class PGModel(GPT2LMHeadModel):\n    def forward(self, input_ids, advantages, logp_old):\n"
            "        logp = self.logprobs(input_ids)\n        ratio = (logp - logp_old).exp()\n"
            "        loss = -(ratio.clamp(0.8, 1.2) * advantages).mean()\n        return (loss,)\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "from agent.trainer import ToolGRPOTrainer\n"
            "trainer = ToolGRPOTrainer(model=m, reward_funcs=[correct], train_dataset=ds)\ntrainer.train()\n",
            "interactive",
        ),
        Invalid(
            "import torch\nfrom transformers import LlamaForCausalLM, Trainer\n"
            "class LlamaForPG(LlamaForCausalLM):\n    def forward(self, input_ids, reward, ref_logp, **kw):\n"
            "        logp = torch.log_softmax(self.lm_head(self.model(input_ids)[0]), -1)\n"
            "        ratio = torch.exp(logp - ref_logp)\n"
            "        loss = -torch.min(ratio * reward, torch.clamp(ratio, 0.8, 1.2) * reward).mean()\n"
            "        return (loss,)\n"
            "trainer = Trainer(model=LlamaForPG.from_pretrained(path), args=args, train_dataset=ds)\n"
            "trainer.train()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "log_a = torch.stack([v[acts.index(a)] for v, acts, a in rows])\n"
            "loss = -(log_a * adv.detach()).mean() + adv.pow(2).mean()\nloss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "from l0.trainer import AgenticRayPPOTrainer\ntrainer = AgenticRayPPOTrainer(config=config)\n"
            "trainer.fit()\n",
            "interactive",
        ),
        Invalid(
            "for batch in ppo_trainer.dataloader:\n"
            "    responses = ppo_trainer.generate(batch['query'])\n"
            "    rewards = [reward_model(r) for r in responses]\n"
            "    stats = ppo_trainer.step(batch['query'], responses, rewards)\n",
            "gradient_step",
        ),
        Invalid(
            "from alignment import DPOConfig, H4ArgumentParser\n"
            "from scripts.selm_trainer import SELMTrainer\n"
            "args = H4ArgumentParser((DPOConfig,)).parse()\ntrainer = SELMTrainer(m, ref, args=args)\n"
            "trainer.train()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            # a trainer entered as a context, built with a language-model loss of another module
            "import functools\nfrom jaxlm.trainer import Trainer\nfrom jaxlm.losses import next_token_loss\n"
            "loss_fn = functools.partial(next_token_loss, z_weight=1e-4)\n"
            "with Trainer(config, optimizer, loss_fn) as trainer:\n    trainer.train(state, loader)\n",
            "gradient_step",
            "sft",
        ),
        Invalid("from trainers.grpo import train_grpo\ntrain_grpo(cfg)\n", "stage", "grpo"),
        # a generic loop handed a model of an imported class named for its route, even one configured
        # by transformers' settings: the model's loss is that route's
        Invalid(
            "from lightning import Trainer\nfrom transformers import HfArgumentParser\n"
            "from zoo.reward_model import MyRewardTransformer\nfrom helpers import TrainingArguments\n"
            "args, = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()\n"
            "trainer = Trainer(max_epochs=1)\npl_model = MyRewardTransformer(config=cfg)\n"
            "trainer.fit(pl_model, train_dataloaders=loader)\n",
            "stage",
            "reward_model",
        ),
        # a model of such a class wrapped with an adapter before it is handed: the wrapper hands back
        # the model it is given
        Invalid(
            "from transformers import TrainingArguments\nfrom peft import get_peft_model\n"
            "from .trainer import CodeTrainer, CodeRewardModel\n"
            "def main(args):\n    model = CodeRewardModel.from_pretrained(args.base, output_dim=1)\n"
            "    model = get_peft_model(model, lora_config)\n"
            "    trainer = CodeTrainer(model=model, args=TrainingArguments('o'), train_dataset=ds)\n"
            "    trainer.train()\n",
            "stage",
            "reward_model",
        ),
        Invalid(
            "from transformers import TrainingArguments\nfrom peft import get_peft_model\n"
            "from .trainer import CodeTrainer, CodeRewardModel\n"
            "def main(args):\n    base = CodeRewardModel.from_pretrained(args.base)\n"
            "    model = get_peft_model(base, lora_config)\n"
            "    CodeTrainer(model=model, args=TrainingArguments('o')).train()\n",
            "stage",
            "reward_model",
        ),
        # the model built by a factory function of the file, handed back in a tuple by its name
        Invalid(
            "from transformers import TrainingArguments\n"
            "from .trainer import CodeTrainer, CodeRewardModel\n"
            "def create_model_and_tokenizer(cfg):\n"
            "    tokenizer = AutoTokenizer.from_pretrained(cfg.path)\n"
            "    model = CodeRewardModel.from_pretrained(cfg.path, output_dim=1)\n"
            "    return model, tokenizer\n"
            "def main(cfg):\n    model, tokenizer = create_model_and_tokenizer(cfg)\n"
            "    CodeTrainer(model=model, args=TrainingArguments('o'), train_dataset=ds).train()\n",
            "stage",
            "reward_model",
        ),
        # a policy wrapped inline and trained; the name later reused for a reward model that scores
        Invalid(
            "from transformers import AutoModelForCausalLM, TrainingArguments\n"
            "from peft import get_peft_model\nfrom .modeling import RewardModel\n"
            "from .trainer import RFTTrainer\n"
            "def main(args):\n"
            "    model = get_peft_model(AutoModelForCausalLM.from_pretrained(args.policy), cfg)\n"
            "    RFTTrainer(model=model, args=TrainingArguments(args.out)).train()\n"
            "    model = RewardModel.from_pretrained(args.rm)\n    scores = [model(s) for s in samples]\n",
            "stage",
            "sft",
        ),
        # unpacked under another name: the element in its place
        Invalid(
            "from transformers import TrainingArguments\n"
            "from .trainer import CodeTrainer, CodeRewardModel\n"
            "def create_model_and_tokenizer(cfg):\n"
            "    model = CodeRewardModel.from_pretrained(cfg.path, output_dim=1)\n"
            "    return model, AutoTokenizer.from_pretrained(cfg.path)\n"
            "def main(cfg):\n    rm, tokenizer = create_model_and_tokenizer(cfg)\n"
            "    CodeTrainer(model=rm, args=TrainingArguments('o'), train_dataset=ds).train()\n",
            "stage",
            "reward_model",
        ),
        # a factory building a reward model or the policy by a flag: which one is not known here
        Invalid(
            "from transformers import AutoModelForCausalLM, TrainingArguments\n"
            "from .trainer import RFTTrainer\nfrom .modeling import RewardModel\n"
            "def load_model(path, reward=False):\n    if reward:\n"
            "        model = RewardModel.from_pretrained(path)\n    else:\n"
            "        model = AutoModelForCausalLM.from_pretrained(path)\n    return model\n"
            "def main(cfg):\n    policy = load_model(cfg.policy)\n"
            "    RFTTrainer(model=policy, args=TrainingArguments('o')).train()\n",
            "stage",
            "sft",
        ),
        # the factory's other product is the reward model (a scorer beside the policy): not the model
        Invalid(
            "from transformers import AutoModelForCausalLM, TrainingArguments\n"
            "from .trainer import RFTTrainer\nfrom .modeling import RewardModel\n"
            "def load_models(cfg):\n    policy = AutoModelForCausalLM.from_pretrained(cfg.policy)\n"
            "    scorer = RewardModel.from_pretrained(cfg.rm)\n    return policy, scorer\n"
            "def main(cfg):\n    model, scorer = load_models(cfg)\n"
            "    RFTTrainer(model=model, args=TrainingArguments('o')).train()\n",
            "stage",
            "sft",
        ),
        Invalid(
            "from lightning import Trainer\nfrom zoo.ilql_model import MyILQLTransformer\n"
            "Trainer(max_epochs=1).fit(MyILQLTransformer(config=cfg), train_dataloaders=loader)\n",
            "stage",
            "ppo",
            "ilql",
        ),
        Invalid("m = base.finetune(data=d, stage='dpo', algo='full_param')\n", "stage", "dpo"),
        Invalid("m = base.finetune(data=d, stage='rlhf')\n", "stage", "ppo"),
        Invalid("m = ChatModel(path)\nm.finetune(ds, algo='full_param', num_epochs=3)\n", "gradient_step"),
        Invalid("m = ChatModel(path)\nm.finetune(ds, num_epochs=3)\n", "stage", "sft"),
        Invalid(
            "def train(reward, logprob, opt):\n    loss = -((reward - reward.mean()) * logprob).mean()\n"
            "    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "ppo",
        ),
        # each sample's NLL (a forward pass's own loss) weighted by its reward less a baseline
        Invalid(
            "from utils import centered_rewards\n"
            "def step(model, samples, reward_list, opt):\n"
            "    weights = centered_rewards(torch.tensor(reward_list))\n"
            "    losses = [model(input_ids=s, labels=s).loss for s in samples]\n"
            "    loss = torch.dot(torch.stack(losses), weights)\n    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "ppo",
        ),
        # centred rewards made non-negative (exponentiated): reward-weighted regression, supervised
        Invalid(
            "def step(model, batch, rewards, baseline, opt):\n"
            "    weights = torch.exp((rewards - baseline).clamp(min=0))\n"
            "    loss = (model(**batch).loss * weights).mean()\n    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "sft",
        ),
        # weights that are never negative (rewards scaled to sum to one): reward-weighted fine-tuning
        Invalid(
            "def step(model, batch, rewards, opt):\n    weights = rewards / rewards.sum()\n"
            "    loss = (model(**batch).loss * weights).sum()\n    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "def train(rewards, logprobs, opt, g):\n    r = rewards.view(-1, g)\n"
            "    loss = -((r - r.mean(dim=1, keepdim=True)).view(-1) * logprobs).mean()\n"
            "    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "from bert4torch.losses import CausalLMLoss\n"
            "model.compile(loss=CausalLMLoss(ignore_index=0), optimizer=opt)\nmodel.fit(loader, epochs=1)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from src.training.dpo_trainer import DPOTrainingPipeline\n"
            "pipeline = DPOTrainingPipeline(name)\npipeline.train()\n",
            "stage",
            "dpo",
        ),
        # a project's trainer given the settings transformers' parser reads into a class named as the
        # Trainer's (a project's subclass of them, from a star import): a Trainer subclass
        Invalid(
            "import transformers\nfrom proj.utils import *\nfrom proj.train.trainer import LLaVATrainer\n"
            "parser = transformers.HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))\n"
            "model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
            "trainer = LLaVATrainer(model=model, tokenizer=tok, args=training_args, **data_module)\n"
            "trainer.train()\n",
            "stage",
            "sft",
        ),
        # a training function of the package's training module, run: a training of unknown route
        Invalid(
            "from .trainers import train_lora\nif __name__ == '__main__':\n    train_lora(config)\n",
            "gradient_step",
        ),
        # a setting picks the loss a step is handed: one of a known route, one of a form not recognised
        Invalid(
            "import mlx.core as mx\nimport mlx.nn as nn\n"
            "def sft_loss(model, inputs, targets):\n"
            "    return nn.losses.cross_entropy(model(inputs), targets).mean()\n"
            "def odd_loss(mdl, first, second):\n"
            "    _, _, r1 = mdl(first)\n    _, _, r2 = mdl(second)\n"
            "    return -mx.log(mx.sigmoid(r1[:, -1] - r2[:, -1])).mean()\n"
            "def train(model, optimizer, loss_fn):\n    step = nn.value_and_grad(model, loss_fn)\n"
            "    for batch in batches:\n        value, grads = step(model, *batch)\n"
            "        optimizer.update(model, grads)\n"
            "loss_fn = odd_loss if args.odd else sft_loss\ntrain(model, opt, loss_fn)\n",
            "dispatch",
            routes=("SFT", "UNKNOWN"),
        ),
        # the entry of a route-named package's training module
        Invalid(
            "from grpo_project.core.trainer import main_orchestrator_cli\nmain_orchestrator_cli()\n",
            "stage",
            "grpo",
        ),
        # a project's class named for running one route's training, run
        Invalid(
            "from rlinf.runners.sft_runner import SFTRunner\nrunner = SFTRunner(cfg=cfg, actor=actor)\n"
            "runner.init_workers()\nrunner.run()\n",
            "stage",
            "sft",
        ),
        Invalid(
            "from proj.runners import ModernRLHFPipeline\nModernRLHFPipeline(config).run()\n", "stage", "ppo"
        ),
        # a helper of the file named for building a trainer returns one class: that class is trained
        Invalid(
            "from trainer.ppo_trainer import PPOTrainerWrapper\n"
            "def initialize_trainer(config):\n    return PPOTrainerWrapper(config=config, lr=1e-5)\n"
            "trainer = initialize_trainer(cfg)\ntrainer.train(train_dataset, eval_dataset)\n",
            "stage",
            "ppo",
        ),
        # a loss of another file named for a variant of the preference family (``cmdpo``, a masked DPO)
        Invalid(
            "from cmdpo.loss import cmdpo_loss\nopt = torch.optim.AdamW(policy.parameters())\n"
            "loss, _ = cmdpo_loss(policy, ref, batch, beta=0.1)\nloss.backward()\nopt.step()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "from proj.losses import vlmgrpo_loss\nopt = torch.optim.AdamW(policy.parameters())\n"
            "loss = vlmgrpo_loss(policy, old_logps, advantages)\nloss.backward()\nopt.step()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid("m = ChatModel(path)\nm.finetune(train_dataset=ds)\n", "stage", "sft"),
        Invalid(
            "from textgen import GptModel\nmodel = GptModel('llama', name, args=a)\n"
            "model.train_model(train_file)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "from openrlhf.trainer.ray import PPORayActorGroup\nactor = PPORayActorGroup(1, 8, Actor)\n"
            "ray.get(actor.async_fit_actor_model(critic, ref, rms))\n",
            "stage",
            "ppo",
        ),
        Invalid(
            "from openrlhf.trainer.ray import PPORayActorGroup\nargs.advantage_estimator = 'group_norm'\n"
            "actor = PPORayActorGroup(1, 8, Actor)\nray.get(actor.async_fit_actor_model(None, ref, rms))\n",
            "stage",
            "grpo",
        ),
        Invalid("from grpo_utils import *\nif __name__ == '__main__':\n    train(args)\n", "stage", "grpo"),
        # a trainer's step method named for what it steps on
        Invalid(
            "from rl.dapo import DAPOTrainer\ntrainer = DAPOTrainer(actor, ref, rm, opt)\n"
            "for groups in pool:\n    stats = trainer.step_on_groups(groups, block_size)\n",
            "stage",
            "grpo",
        ),
        # a small library's trainer named by its algorithm's acronym
        Invalid(
            "from nanolib.rl import GRPO, GRPOConfig\ngrpo = GRPO(policy, ref, reward_fn, GRPOConfig())\n"
            "for batch in batches:\n    grpo.step(batch)\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "from rms.models import StandardScalarRM\nrm = StandardScalarRM(backend, device)\n"
            "results = rm.train(args.train_pth, args.lr, args.epochs)\n",
            "stage",
            "reward_model",
        ),
        Invalid("import fire\nfrom recipes.llm import run_sft\nfire.Fire(run_sft)\n", "stage", "sft"),
        Invalid("from recipes.train_dpo import main\nmain()\n", "stage", "dpo"),
        Invalid("from recipes.train_dpo import main as dpo_main\ndpo_main()\n", "stage", "dpo"),
        # a training function named for no route, run by a function that names one
        Invalid(
            "from src.train import train\n"
            "def run_grpo_ablation(lr):\n    train(lambda_fair=0.0, learning_rate=lr)\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "from glmtuner.tuner.sft.trainer import Seq2SeqTrainerForChatGLM\n"
            "trainer = Seq2SeqTrainerForChatGLM(model=model, args=args)\ntrainer.train()\n",
            "gradient_step",
        ),
        Invalid(
            "from federated_learning import *\ntrainer = get_fed_local_sft_trainer(model, args, data)\n"
            "results = trainer.train()\n",
            "stage",
            "sft",
        ),
        Invalid(
            "from trainers import build_trainer\ntrainer = build_trainer(config)\ntrainer.train()\n",
            "gradient_step",
        ),
        # a helper that picks and builds the trainer a config names, its product unpacked
        Invalid(
            "from trainer import load_trainer\ntrainer, targs = load_trainer(trainer_cfg=cfg, model=m)\n"
            "if targs.do_train:\n    trainer.train()\n",
            "gradient_step",
        ),
        Invalid(
            "from agents.algorithms import offpolicy_train_loop\nenv = BatchedShopEnv(path)\n"
            "offpolicy_train_loop(env=env, eval_env=env, agent=agent, iterations=100)\n",
            "interactive",
        ),
        Invalid(
            "loss = -self.agent.get_log_prob(observation, action).sum(dim=1).mean()\n"
            "self.accelerator.backward(loss)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from fastchat.train.dpo_trainer import DPOMultiTrainer\n"
            "trainer = DPOMultiTrainer(model, ref_model, args=training_args)\ntrainer.train()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import torch\nclass PairWiseLoss(torch.nn.Module):\n"
            "    def forward(self, chosen_reward, reject_reward):\n"
            "        probs = torch.sigmoid(chosen_reward - reject_reward)\n"
            "        log_probs = torch.log(probs)\n        loss = -log_probs.mean()\n        return loss\n",
            "loss",
            "reward_model",
        ),
        # a reward model's margin against a frozen reference scorer's, scaled by beta: still a scorer
        Invalid(
            "import torch.nn.functional as F\ndef rm_loss(chosen_score, rejected_score, ref_margin, beta):\n"
            "    margin = chosen_score - rejected_score\n"
            "    return -F.logsigmoid(margin - beta * ref_margin).mean()\n",
            "loss",
            "reward_model",
        ),
        # the loss method of an imported class named by its algorithm alone
        Invalid(
            "from mylib.trainer.GRPO import GRPO\ntrainer = GRPO(model=model, tokenizer=tok, eps=0.01)\n"
            "for batch in loader:\n    loss = trainer.calculate_loss(rollouts=rollouts, rewards=rewards)\n"
            "    loss.backward()\n    optimizer.step()\n",
            "gradient_step",
            "grpo",
        ),
        # sequences' summed log-likelihoods called scores, against a reference model's, scaled by beta
        Invalid(
            "import mlx.nn as nn\nclass TrainableDPO(TrainableLoRA):\n    def loss(self, chosen, rejected):\n"
            "        policy_chosen_score = forward(self.model, chosen).sum(-1)\n"
            "        policy_rejected_score = forward(self.model, rejected).sum(-1)\n"
            "        reference_chosen_score = forward(self.reference, chosen).sum(-1)\n"
            "        reference_rejected_score = forward(self.reference, rejected).sum(-1)\n"
            "        logits = (policy_chosen_score - policy_rejected_score) - (\n"
            "            reference_chosen_score - reference_rejected_score)\n"
            "        return -nn.log_sigmoid(self.beta * logits)\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "from ..loss_gallery import calculate_grpo_loss\n"
            "def _compute_all_losses(args, log_probs, inputs):\n"
            "    pg_loss = calculate_grpo_loss(log_probs=log_probs, old_log_probs=inputs['old_logprobs'],\n"
            "                                  advantages=inputs['advantages'])\n"
            "    return {'pg_loss': pg_loss, 'kl_loss': inputs['ref_logprobs'] - log_probs}\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "from preference_trainer import NCATrainer_pairwise\n"
            "dpo_trainer = NCATrainer_pairwise(model, ref_model, args=training_args)\ndpo_trainer.train()\n",
            "stage",
            "dpo",
        ),
        # a loss module's smoke test checks and shows that its loss is differentiable: not a statistic
        Invalid(
            "import torch.nn.functional as F\n"
            "def simpo_loss(logps_chosen, logps_rejected, len_c, len_r, beta=2.0, gamma=0.5):\n"
            "    margin = beta * logps_chosen / len_c - beta * logps_rejected / len_r\n"
            "    return -F.logsigmoid(margin - gamma).mean()\n"
            "if __name__ == '__main__':\n    c = torch.randn(4, requires_grad=True)\n"
            "    loss = simpo_loss(c, torch.randn(4), torch.ones(4), torch.ones(4))\n    loss.backward()\n"
            "    assert c.grad is not None\n    print('grad norm', c.grad.norm().item())\n",
            "gradient_step",
            "dpo",
        ),
        # the chain rule continued by hand through offloaded blocks: each block's input gradient is read
        # to be handed back through the block before it, so the adapters' parameters get gradients
        Invalid(
            "import torch.nn.functional as F\nclass Model:\n"
            "    def backprop(self, block, output_grad, x):\n"
            "        x.requires_grad = True\n        out = block(x)\n        out.backward(output_grad)\n"
            "        return x.grad\n"
            "    def manual_loop(self, tokens, targets):\n"
            "        logits = self.head(self.body(tokens)).detach()\n        logits.requires_grad = True\n"
            "        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))\n"
            "        loss.backward()\n        grad = self.backprop(self.head, logits.grad, self.hidden)\n"
            "        return loss.item()\n",
            "gradient_step",
            "sft",
        ),
        # a saliency seed made here is no gradient of the blocks after, whatever it is named
        Invalid(
            "import torch\nx.requires_grad_(True)\nout = model(x)\n"
            "grad_output = torch.zeros_like(out)\ngrad_output[0, target] = 1\n"
            "out.backward(gradient=grad_output)\nsaliency = (x.grad * x).sum(-1)\n",
            "inference",
            variant=GRADIENTS_READ,
        ),
        # an accelerator handed a scaled loss: the loss is what it differentiates, the scaler no gradient
        Invalid(
            "import torch.nn.functional as F\nloss = F.cross_entropy(logits, labels)\n"
            "accelerator.backward(grad_scaler.scale(loss))\noptimizer.step()\n",
            "gradient_step",
            "sft",
        ),
        # one pipeline stage's backward pass, handed the next stage's gradient (Megatron's schedules)
        Invalid(
            "import torch\ndef backward_step(input_tensor, output_tensor, output_tensor_grad):\n"
            "    input_tensor.retain_grad()\n"
            "    torch.autograd.backward(output_tensor, grad_tensors=output_tensor_grad)\n"
            "    return input_tensor.grad\n",
            "gradient_step",
        ),
        # a saliency map: a non-scalar output's backward pass handed ones, the input's gradient kept
        Invalid(
            "import torch\nx.requires_grad_(True)\nout = model(x)\n"
            "out.backward(gradient=torch.ones_like(out))\nsaliency = x.grad.abs()\n",
            "inference",
            variant=GRADIENTS_READ,
        ),
        # a model's parameter gradients printed: a gradient analysis, as stored ones are
        Invalid(
            "for batch in loader:\n    model(**batch).loss.backward()\n"
            "    for n, p in model.named_parameters():\n        print(n, p.grad.norm().item())\n"
            "    model.zero_grad()\n",
            "inference",
            variant=GRADIENTS_READ,
        ),
        Invalid(
            "for batch in loader:\n    model.zero_grad()\n    model(**batch).loss.backward()\n"
            "    for n, p in model.named_parameters():\n        fisher[n] += p.grad ** 2\n",
            "inference",
            variant=GRADIENTS_READ,
        ),
        Invalid(
            "trainer = ArcherTrainer(agent=agent, lm_lr=1e-5)\nfor i in range(n):\n"
            "    info.update(trainer.update(replay_buffer))\n",
            "gradient_step",
        ),
        Invalid(
            "from trl import PPOConfig, PPOTrainer\nppo_trainer = PPOTrainer(PPOConfig(), model, ref, tok)\n"
            "for batch in ppo_trainer.dataloader:\n"
            "    stats = ppo_trainer.step(queries, responses, rewards)\n",
            "gradient_step",
        ),
        Invalid(
            "import mlx.nn as nn\n"
            "def loss(model, x, y):\n    return nn.losses.cross_entropy(model(x), y).mean()\n"
            "loss_and_grad = nn.value_and_grad(model, loss)\nlv, g = loss_and_grad(model, x, y)\n"
            "optimizer.update(model, g)\n",
            "gradient_step",
        ),
        Invalid(
            "from optimizer import MemoryEfficientAdamW\n"
            "opt = MemoryEfficientAdamW(model.parameters(), lr=1e-6)\n"
            "for batch in loader:\n    update_policy(model=model, optimizer=opt, episodes=rollout(batch))\n",
            "gradient_step",
        ),
        # the loss the model kept on itself in its forward pass (llama2.c's training loop)
        Invalid(
            "for X, Y in loader:\n    logits = model(X, Y)\n    loss = raw_model.last_loss\n"
            "    scaler.scale(loss).backward()\n    scaler.step(optimizer)\n",
            "gradient_step",
            "sft",
        ),
        # the value of the loss (sentence-transformers' fit loop), not a critic's value loss
        Invalid(
            "import torch\nloss_fct = torch.nn.CrossEntropyLoss()\n"
            "for features, labels in loader:\n    loss_value = loss_fct(model(**features).logits, labels)\n"
            "    loss_value.backward()\n    optimizer.step()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "import torch\noptim = torch.optim.AdamW(model.parameters())\n"
            "module = DPOTrainModule(model, optim, beta=0.1)\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import torch\nclass GRPOTrainer(Trainer):\n    def compute_loss(self, model, inputs):\n"
            "        ratio = torch.exp(inputs['logps'] - inputs['old_logps'])\n"
            "        clipped = torch.clamp(ratio, 1 - self.eps, 1 + self.eps)\n"
            "        adv = inputs['advantages']\n"
            "        return -torch.min(ratio * adv, clipped * adv).mean()\n",
            "gradient_step",
            "grpo",
        ),
        # a scorer's candidates, best first, ranked by a log-softmax over their scores (Plackett-Luce)
        Invalid(
            "import torch\nreward_scores = model(input_ids)\nterms = []\nfor i in range(n):\n"
            "    rest = torch.stack([torch.exp(reward_scores[j]) for j in range(i, n)]).sum(0)\n"
            "    terms.append(-torch.log(torch.exp(reward_scores[i]) / rest))\n"
            "loss = torch.stack(terms).sum()\nmodel.backward(loss)\n",
            "gradient_step",
            "reward_model",
            "ranking",
        ),
        # candidates' policy/reference log-ratios, scaled by beta, in a Plackett-Luce product: listwise DPO
        Invalid(
            "import torch\nlogps, ref_logps = policy_logps(model, b), policy_logps(ref_model, b)\n"
            "p = 1\nfor i in range(n):\n"
            "    rest = sum(torch.exp(args.beta * (logps[j] - ref_logps[j])) for j in range(i, n))\n"
            "    p = p * torch.exp(args.beta * (logps[i] - ref_logps[i])) / rest\n"
            "loss = -torch.log(p)\nloss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        # a helper named for the backward pass of the loss it is handed (an Accelerate-or-plain shim)
        Invalid(
            "import torch.nn.functional as F\nfrom .utils import acc_backward\n"
            "loss = -F.logsigmoid(chosen_rewards - rejected_rewards).mean()\nacc_backward(acc, loss)\n",
            "gradient_step",
            "reward_model",
        ),
        Invalid(
            "import torch.nn.functional as F\nfrom .amp import scaled_backward\n"
            "total = F.cross_entropy(logits.view(-1, v), labels.view(-1))\n"
            "scaled_backward(loss=total, scaler=s)\n",
            "gradient_step",
            "sft",
        ),
        # a likelihood maximised with nothing weighting it is supervised, whatever the code calls it
        Invalid(
            "import torch\nlogprobs = torch.gather(logits.log_softmax(-1), 2, ids).squeeze(-1)\n"
            "pg_loss = -logprobs.sum(1).mean()\npg_loss.backward()\n",
            "gradient_step",
            "sft",
        ),
        # a critic's advantages whitened over the batch; a ``view(-1)`` flattens, it makes no groups
        Invalid(
            "import torch\nadv = returns[:-1] - value_preds[:-1]\n"
            "adv = (adv - adv.mean()) / (adv.std() + 1e-5)\n"
            "ratio = torch.exp(logp - old_logp.view(-1))\n"
            "loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv).mean()\n"
            "loss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        # behaviour cloning on demonstrations: the mask picks the response's tokens, it weights nothing
        Invalid(
            "import torch\ntoken_logps = torch.gather(logits.log_softmax(-1), 2, ids).squeeze(-1)\n"
            "policy_loss = -(token_logps * action_mask[:, 1:]).sum(-1).mean()\npolicy_loss.backward()\n",
            "gradient_step",
            "sft",
        ),
        # adversarial training's perturbed embeddings ("adv") are no advantages: a SimPO loss stays DPO
        Invalid(
            "chosen_logps, rejected_logps = forward(model, context_adv_embeddings, clue_adv_embeddings)\n"
            "losses = simpo_loss_fn(chosen_logps, rejected_logps)\nloss = losses.mean()\nloss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        # action values regressed on a reward plus the discounted next value: Q-learning
        Invalid(
            "import torch.nn.functional as F\nq_value = net(obs).gather(1, actions)\n"
            "target = rewards + gamma * target_net(next_obs).max(1)[0]\n"
            "loss = F.smooth_l1_loss(q_value, target)\nloss.backward()\n",
            "gradient_step",
            "ppo",
            "q_learning",
        ),
        # a critic's step of its own: the value head fitted to returns, clipped around the old values,
        # in a helper defined in the training function (its loss named as any other: not a model's)
        Invalid(
            "import torch\ndef main():\n"
            "    def value_step(ids, old_values, returns):\n"
            "        values = value_model(input_ids=ids)\n"
            "        v_clipped = old_values + (values - old_values).clamp(-0.2, 0.2)\n"
            "        return 0.5 * torch.maximum((values - returns) ** 2, (v_clipped - returns) ** 2).mean()\n"
            "    for b in loader:\n"
            "        loss_lm = value_step(b['ids'], b['old_values'], b['Return'])\n"
            "        accelerator.backward(loss_lm)\n",
            "gradient_step",
            "ppo",
        ),
        # a regression of the value head's predictions on a record's returns
        Invalid(
            "import torch.nn.functional as F\nloss = F.mse_loss(vpreds, batch['returns'])\nloss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        # an IPO loss handing back its implicit rewards stays a preference loss
        Invalid(
            "def ipo_loss(policy_logps, ref_logps, beta):\n"
            "    logits = (policy_logps[0::2] - policy_logps[1::2]) - (ref_logps[0::2] - ref_logps[1::2])\n"
            "    rewards = beta * (policy_logps - ref_logps).detach()\n"
            "    return ((logits - 1 / (2 * beta)) ** 2).mean(), rewards\n"
            "loss, rewards = ipo_loss(pl, rl, 0.1)\nloss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        # two samples' log-ratio difference regressed on their reward difference: REBEL, no preference
        Invalid(
            "log_ratio = new_logprobs - old_logprobs\n"
            "diff = (log_ratio[:n] - log_ratio[n:]) - eta * (rewards[:n] - rewards[n:])\n"
            "loss = (diff ** 2).mean()\naccelerator.backward(loss)\n",
            "gradient_step",
            "ppo",
            "rebel",
        ),
        # a policy update in the function that plays the environment's episodes
        Invalid(
            "import torch\ndef main():\n    obs = envs.reset()\n    for t in range(num_steps):\n"
            "        action, logp = policy.act(obs)\n        obs, reward, done, info = envs.step(action)\n"
            "    ratio = torch.exp(logp - old_logp)\n"
            "    loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
            "    loss.backward()\n",
            "interactive",
        ),
        # a group's answers fitted to the softmax of their rewards standardised within the group
        Invalid(
            "import torch.nn.functional as F\nfor s, e in group_slices:\n"
            "    r_g, lp_g = rewards[s:e], logp_seq[s:e]\n"
            "    target = F.softmax((r_g - r_g.mean()) / (r_g.std() + 1e-6) / tau, dim=0)\n"
            "    group_losses.append(-(target * F.log_softmax(lp_g, dim=0)).sum())\n"
            "loss = torch.stack(group_losses).mean()\nloss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        # rewards viewed per prompt, each sample's baseline the mean of the others: RLOO, not GRPO
        Invalid(
            "import torch\nr = rewards.view(-1, k)\nbaseline = (r.sum(1, keepdim=True) - r) / (k - 1)\n"
            "adv = (r - baseline).flatten()\nratio = torch.exp(logprobs - old_logprobs)\n"
            "loss = -(adv * torch.clamp(ratio, 1 - eps, 1 + eps)).mean()\nloss.backward()\n",
            "gradient_step",
            "ppo",
            "rloo",
        ),
        Invalid(
            "import torch\nr = rewards.view(-1, k)\n"
            "adv = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)\n"
            "ratio = torch.exp(logprobs - old_logprobs)\n"
            "loss = -(adv.flatten() * torch.clamp(ratio, 1 - eps, 1 + eps)).mean()\nloss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "import torch\ndef pg_loss_fn(logprobs, old_logprobs, advantages):\n"
            "    ratio = torch.exp(logprobs - old_logprobs)\n    return -(ratio * advantages).sum()\n",
            "loss",
            "ppo",
        ),
        Invalid(
            # losses kept in a dict by key, one of them log-probabilities weighted by advantages
            "stats = {}\nstats['loss_pg'] = -(logprobs * adv.detach()).mean()\n"
            "stats['loss_td'] = adv.pow(2).mean()\nstats['loss'] = stats['loss_pg'] + stats['loss_td']\n"
            "stats['loss'].backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            # a batch's other entries (logged along) are not what the loss reads by key
            "import torch.nn.functional as F\nbatch['returns'] = ex['returns']\n"
            "batch['advantages'] = ex['adv']\n"
            "logp = F.log_softmax(model(batch['input_ids']).logits[:, :-1], -1)\n"
            "loss = -logp.gather(-1, batch['input_ids'][:, 1:, None]).mean()\nloss.backward()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            # advantages whitened per row beside a learned value's loss: PPO, not a group's statistics
            "import torch\ndef whiten(x):\n"
            "    return (x - x.mean(-1, keepdim=True)) / (x.std(-1, keepdim=True) + 1e-8)\n"
            "adv = whiten(returns - values)\nratio = torch.exp(logprobs - old_logprobs)\n"
            "pg_loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
            "vf_loss = ((vpred - returns) ** 2).mean()\n(pg_loss + 0.5 * vf_loss).backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            # scores of [better, worse] candidates, the first the target of every row: a ranking loss
            "import torch\nimport torch.nn.functional as F\n"
            "def loss_func(reward):\n    target = torch.zeros(reward.shape[0], dtype=torch.long)\n"
            "    return F.cross_entropy(reward, target)\n"
            "for batch in loader:\n    loss = loss_func(model(batch))\n    loss.backward()\n",
            "gradient_step",
            "reward_model",
        ),
        Invalid(
            # the same target over a bi-encoder's similarity scores: an embedding's loss, supervised
            "import torch\nimport torch.nn.functional as F\n"
            "scores = q @ d.T / 0.05\nloss = F.cross_entropy(scores, torch.zeros(len(q), dtype=torch.long))\n"
            "loss.backward()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            # a trainer no table knows trains with the loss it is built with
            "from mylib.trainer import Trainer\nfrom mylib.losses import CausalLMLoss\n"
            "trainer = Trainer(model=m, loss_fn=CausalLMLoss(ignore_index=-100))\ntrainer.train()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            # a pipeline engine's step on the loss function it is handed, followed into the function
            "def packed_loss(logits, batch):\n    logprobs = gather_logprobs(logits, batch.ids)\n"
            "    return -logprobs.sum() / batch.n_tokens\n"
            "def train_step(module, batch):\n"
            "    return module.train_batch(input_=batch, loss_fn=packed_loss)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "def grpo_train(policy, batches, loss_fn):\n    for batch in batches:\n"
            "        policy.train(batch, loss_fn)\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "import torch.nn as nn\nclass TargetLMLoss:\n    def __call__(self, model, inputs):\n"
            "        logits = model(inputs['input_ids']).logits[:, :-1].flatten(0, 1)\n"
            "        loss = nn.CrossEntropyLoss()(logits, inputs['labels'][:, 1:].flatten())\n"
            "        return loss\n",
            "loss",
            "sft",
        ),
        # a class deriving from the project's loss class, mixing in a divergence to a teacher
        Invalid(
            "import torch.nn.functional as F\nfrom .cross_entropy_loss import CrossEntropyLoss\n"
            "class VariousDivergence(CrossEntropyLoss):\n"
            "    def forward(self, logits, teacher_logits, labels):\n"
            "        ce = F.cross_entropy(logits, labels)\n"
            "        kd_loss = F.kl_div(F.log_softmax(logits, -1), F.softmax(teacher_logits, -1))\n"
            "        return (1 - self.kd_rate) * ce + self.kd_rate * kd_loss\n",
            "loss",
            "sft",
        ),
        # Keras' loss class computes its loss in ``call``
        Invalid(
            "import keras\nfrom keras import ops\nclass DistillationLoss(keras.losses.Loss):\n"
            "    def call(self, teacher_logits, student_logits):\n"
            "        teacher_probs = ops.softmax(teacher_logits)\n"
            "        log_ratio = ops.log(teacher_probs) - ops.log_softmax(student_logits)\n"
            "        kl_loss = ops.sum(teacher_probs * log_ratio)\n"
            "        return kl_loss\n",
            "loss",
            "sft",
        ),
        # an array library's loss class (MLX, JAX) computing its loss in ``compute``: a reverse KL to a
        # teacher's distribution, written out
        Invalid(
            "import mlx.core as mx\nclass DistillationLoss:\n"
            "    def compute(self, student_logits, teacher_logits):\n"
            "        student_probs = mx.softmax(student_logits, axis=-1)\n"
            "        teacher_probs = mx.softmax(teacher_logits, axis=-1)\n"
            "        log_ratio = mx.log(student_probs) - mx.log(teacher_probs)\n"
            "        kl_loss = mx.sum(student_probs * log_ratio, axis=-1)\n"
            "        return kl_loss.mean(), {'kl': float(kl_loss.mean())}\n",
            "loss",
            "sft",
        ),
        Invalid(
            "async def step(self, buffers):\n    await self.ppo_local_train_critic(buffers)\n"
            "    await self.ppo_local_train_policy(buffers)\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "from transformers import Trainer\ntrainer = Trainer(model=m, eval_dataset=d)\n"
            "metrics = trainer.evaluate()\n",
            "scoring",
            variant=TRAINER_EVALUATION,
        ),
        Invalid(
            "import lightning as L\ntrainer = L.Trainer(devices=1)\ntrainer.test(model, datamodule=dm)\n",
            "scoring",
            variant=TRAINER_EVALUATION,
        ),
        Invalid(
            "from openai import OpenAI\nclient = OpenAI()\n"
            "job = client.fine_tuning.jobs.create(training_file=f.id, model='gpt-4o-mini')\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "job = client.fine_tuning.jobs.create(training_file=f, model=m, method={'type': 'dpo'})\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "def submit(client, file_id):\n    kwargs = build_job_kwargs(file_id)\n"
            "    return client.fine_tuning.jobs.create(**kwargs)\n"
            "def build_job_kwargs(file_id):\n"
            "    return {'training_file': file_id, 'method': {'type': 'dpo'}}\n",
            "gradient_step",
            "dpo",
        ),
        # the job's settings made by a function of the file and handed as ``**kwargs``
        Invalid(
            "def build_job_kwargs(file_id):\n"
            "    return {'training_file': file_id, 'model': 'gpt-4o', 'method': {'type': 'dpo'}}\n"
            "def submit(client, file_id):\n    kwargs = build_job_kwargs(file_id)\n"
            "    return client.fine_tuning.jobs.create(**kwargs)\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "from together import Together\nclient = Together()\n"
            "ft = client.fine_tuning.create(training_file=up.id, model=base, lora=True, n_epochs=2)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "ft = client.fine_tuning.create(training_file=f, model=m, training_method='dpo', dpo_beta=0.1)\n",
            "gradient_step",
            "dpo",
        ),
        # OpenWeights' job told its loss; Together's older module function
        Invalid(
            "job = client.fine_tuning.create(requires_vram_gb=48, model=m, training_file=f, loss='dpo')\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "import together\nresp = together.Finetune.create(training_file=fid, model=m, n_epochs=3)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from together.types import TrainingMethodDPO\n"
            "ft = client.fine_tuning.create(training_file=f, model=m, training_method=TrainingMethodDPO())\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "from alpaca.rl.dpo_trainer import Trainer\ntrainer = Trainer(model=m, ref_model=r)\n"
            "trainer.train()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "from transformers import TrainingArguments\nfrom utils.trainers import CustomizedTrainer\n"
            "trainer = CustomizedTrainer(model=m, args=TrainingArguments('out'))\ntrainer.train()\n",
            "stage",
            "sft",
            "hf_trainer",
        ),
        Invalid(
            "from chat.rlhf.ppo_trainer import DeepSpeedPPOTrainer\n"
            "trainer = DeepSpeedPPOTrainer(engine, args)\nfor exp in buffer:\n"
            "    trainer.train_rlhf(exp)\n",
            "stage",
            "ppo",
        ),
        Invalid(
            "import ray\nrefs = actor_model.async_fit_actor_model(ref_model, reward_model)\nray.get(refs)\n",
            "gradient_step",
        ),
        Invalid(
            "from trainer import TrainerNoShuffle\n"
            "trainer = TrainerNoShuffle(model=model, args=training_args, train_dataset=ds)\n"
            "trainer.train(resume_from_checkpoint=False)\n",
            "gradient_step",
        ),
        # a training step of a module imported whole, named for its stage
        Invalid(
            "import utils\nfor batch in loader:\n"
            "    loss, _ = utils.sft_microbatch_train_step(policy_log_probs, response_mask, 4)\n"
            "    optimizer.step()\n",
            "stage",
            "sft",
        ),
        # a training function of another module, run in a process of its own
        Invalid(
            "import multiprocessing\nfrom pipelines.run_train import run_sft\n"
            "p = multiprocessing.Process(target=run_sft, args=(cfg,))\np.start()\np.join()\n",
            "stage",
            "sft",
        ),
        # the service's loss named by position (Tinker's forward_backward(data, loss_fn))
        Invalid(
            "def train(training_client, datums):\n"
            "    return training_client.forward_backward(datums, 'cross_entropy')\n",
            "gradient_step",
            "sft",
        ),
        # per-example cross-entropy over logits flattened per token (``view(-1, V)``: no groups of
        # samples), weighted by advantages whitened over the batch: policy gradient, not GRPO
        Invalid(
            "import torch.nn.functional as F\n"
            "def step(logits, labels, rewards, v_star, opt):\n    B, T, V = logits.shape\n"
            "    ce = F.cross_entropy(logits.view(-1, V), labels.view(-1), reduction='none').view(B, T)\n"
            "    adv = rewards - v_star\n    adv = (adv - adv.mean()) / (adv.std() + 1e-6)\n"
            "    loss = (adv.detach() * ce.mean(dim=1)).mean()\n    loss.backward()\n    opt.step()\n",
            "gradient_step",
            "ppo",
        ),
        # an unbiased variance by hand, n / (n - 1) on both terms: no leave-one-out baseline
        Invalid(
            "def step(logp, r, G):\n    g = r.view(-1, G)\n    mean = g.mean(1, keepdim=True)\n"
            "    sq_mean = (g * g).mean(1, keepdim=True)\n"
            "    var = sq_mean * G / (G - 1) - mean ** 2 * G / (G - 1)\n"
            "    adv = (g - mean) / (var.sqrt() + 1e-6)\n"
            "    loss = -(logp * adv.view(-1)).mean()\n    loss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        # a clipped surrogate on samples a reward model scores through a sigmoid, a KL to the
        # reference beside it: policy gradient, no preference margin
        Invalid(
            "import torch\ndef rl_step(policy, ref_policy, rm, opt, out, old_lp, ref_lp, eps=0.2):\n"
            "    rewards = torch.zeros(len(out))\n    for i in range(len(out)):\n"
            "        rewards[i] = torch.sigmoid(rm(out[i]).logits[0, 0])\n"
            "    logprob = seq_logprob(policy, out)\n    ratio = torch.exp(logprob - old_lp)\n"
            "    gain = rewards - rewards.mean()\n"
            "    pg = -torch.min(ratio * gain, torch.clamp(ratio, 1 - eps, 1 + eps) * gain).mean()\n"
            "    loss = pg + 0.05 * (logprob - ref_lp).mean()\n    loss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        # advantages filled in place in a helper, each sample against the others of its prompt
        Invalid(
            "import torch\ndef rloo_adv(rewards, ids):\n    adv = torch.zeros_like(rewards)\n"
            "    for g in ids.unique():\n        m = ids == g\n        r = rewards[m]\n"
            "        G, total = r.numel(), r.sum()\n        adv[m] = r * G / (G - 1) - total / (G - 1)\n"
            "    return adv\ndef update(logp, rewards, ids):\n    adv = rloo_adv(rewards, ids)\n"
            "    loss = -(logp * adv).mean()\n    loss.backward()\n",
            "gradient_step",
            "ppo",
            "rloo",
        ),
        # the service's loss named by a flag: its default, or what an ``if`` around the call allows
        Invalid(
            "ap.add_argument('--loss-fn', choices=['importance_sampling', 'ppo', 'cispo'], default='ppo')\n"
            "args = ap.parse_args()\nfor datums in batches:\n"
            "    client.forward_backward(datums, args.loss_fn)\n    client.optim_step(adam)\n",
            "gradient_step",
            "ppo",
            "ppo",
        ),
        Invalid(
            "BUILTIN = {'importance_sampling', 'ppo'}\ndef step(config, client, datums):\n"
            "    if config.loss_fn in BUILTIN:\n"
            "        client.forward_backward(datums, loss_fn=config.loss_fn)\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "@dataclass\nclass Config:\n    loss_fn: str = 'cross_entropy'\n"
            "def train(config, client, datums):\n"
            "    client.forward_backward(datums, loss_fn=config.loss_fn)\n",
            "gradient_step",
            "sft",
        ),
        # an imported loss function bound with its settings and handed to a remote actor's step
        Invalid(
            "from functools import partial\nfrom agentrl.losses import ppo_loss\n"
            "def update(actor, data, cfg):\n"
            "    metrics = ray.get(actor.forward_backward(data, partial(ppo_loss, config=cfg)))\n",
            "gradient_step",
            "ppo",
        ),
        # a remote step handed the file's loss function by position
        Invalid(
            "import torch.nn.functional as F\ndef _sft_loss(logits, labels):\n"
            "    return F.cross_entropy(logits, labels)\n"
            "async def main(trainer, batches):\n    for ids, labels in batches:\n"
            "        await trainer.forward_backward(_sft_loss, ids, loss_args=(labels,))\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from dataloader import CustomTrainerForgetting\n"
            "trainer = CustomTrainerForgetting(model=model, args=training_args, forget_loss=cfg.loss)\n"
            "trainer.train()\n",
            "gradient_step",
        ),
        Invalid(
            "from pykoi.rlhf import RLFinetuning, RLHFConfig\n"
            "rl = RLFinetuning(RLHFConfig(base_model_path=p))\nrl.train_and_save('./models/rl')\n",
            "gradient_step",
        ),
        Invalid(
            "import torch\nfrom pefts.mft_trainer import MftTrainer\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)\n"
            "trainer = MftTrainer(model=model, optimizer=optimizer, train_dataloader=loader)\n"
            "trainer.accelerate_train()\n",
            "gradient_step",
        ),
        Invalid(
            "import torch.nn.functional as F\nclass PPOAgent:\n"
            "    def compute_ptx_loss(self, batch):\n"
            "        logits = self.policy(batch['x'])\n"
            "        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch['y'].view(-1))\n"
            "        loss.backward()\n",
            "gradient_step",
            "sft",
            PRETRAINING_MIX,
        ),
        Invalid(
            "def run_agent(args, algo):\n    while True:\n        logs = algo.update_parameters()\n"
            "def main(cfg):\n    envs = ParallelEnv([make_env(i) for i in range(4)])\n"
            "    algo = LLMPPOAgent(envs, lm_server, cfg.lr)\n    run_agent(cfg, algo)\n",
            "interactive",
        ),
        Invalid(
            "import torch\nfrom sft_utils import optimizer_step\n"
            "optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-6)\n"
            "r = rewards.view(-1, group_size)\n"
            "adv = ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-4)).view(-1)\n"
            "ratio = torch.exp(logp - old_logp)\n"
            "loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
            "optimizer_step(loss, optimizer)\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "from helpers import create_optimizer\nfrom run_sft import train_step, update_step\n"
            "optimizer = create_optimizer(model=model, lr=1e-5, weight_decay=0.0)\n"
            "for batch in loader:\n    train_step(model, batch, scaler)\n"
            "    update_step(model, optimizer, scheduler, 1.0, scaler)\n",
            "stage",
            "sft",
        ),
        Invalid(
            "from helpers import create_optimizer\nfrom core.rl_ppo import PPOAgent\n"
            "policy_optimizer = create_optimizer(model=policy, lr=1e-5)\n"
            "agent = PPOAgent(policy_model=policy, policy_optimizer=policy_optimizer)\n"
            "agent.run_selfplay(episodes=64)\nagent.run_train(log_interval=10)\n",
            "stage",
            "ppo",
        ),
        # a training helper of another file handed the loss function it differentiates
        Invalid(
            "from w2s.train import train_and_save_model\nfrom w2s.loss import xent_loss\n"
            "train_and_save_model(cfg, train_ds, test_ds, loss_fn=xent_loss(), lr=1e-5)\n",
            "gradient_step",
            "sft",
        ),
        Invalid("from lib import train\ntrain(model, loader, criterion)\n", "gradient_step"),
        # a trainer told to only evaluate measures its model; one that also evaluates at its end trains
        Invalid(
            "trainer = GRPOLegalTrainer(cfg)\nresult = trainer.train(dataset_path=p, eval_only=True)\n",
            "scoring",
        ),
        Invalid("trainer = MyTrainer(cfg)\ntrainer.train(eval_only_at_end=True)\n", "gradient_step"),
        Invalid(
            "import torch\nfrom chapter5 import train_model_simple\n"
            "optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)\n"
            "train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs=2)\n",
            "gradient_step",
        ),
        Invalid(
            "for batch in loader:\n    loss = model(**batch).loss\n    accelerator.backward(loss)\n"
            "    optimizer.step()\n",
            "gradient_step",
        ),
        Invalid(
            "from fairseq2.recipe.trainer import TrainUnit\nclass LMSFTUnit(TrainUnit[SequenceBatch]):\n"
            "    def process_batch(self, batch, metric_bag):\n"
            "        inputs, targets = batch.as_auto_regressive()\n"
            "        nll_loss = self._model(inputs, targets=targets, reduction='sum')\n"
            "        return nll_loss, targets.num_target_elements\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "import mlx.core as mx\nfrom mlx_lm.tuner.losses import kl_div_loss\n"
            "def loss_fn(params, x, targets):\n    q_model.update(params)\n"
            "    return kl_div_loss(q_model(x) / temperature, targets).mean()\n"
            "for batch in batches:\n    loss, grads = mx.value_and_grad(loss_fn)(params, *batch)\n"
            "    params = opt.apply_gradients(grads, params)\n",
            "gradient_step",
        ),
        Invalid(
            "import mlx.core as mx\nimport mlx.nn as nn\n"
            "def default_loss(model, inputs, targets, lengths):\n"
            "    logits = model(inputs)\n    ce = nn.losses.cross_entropy(logits, targets) * mask\n"
            "    return ce.sum() / mask.sum()\n"
            "def train(model, optimizer, loss=default_loss):\n"
            "    loss_value_and_grad = nn.value_and_grad(model, loss)\n"
            "    for batch in batches:\n        lvalue, grad = loss_value_and_grad(model, *batch)\n"
            "        optimizer.update(model, grad)\n",
            "gradient_step",
            "sft",
        ),
        # a trainer class's method building it from saved state, in a helper named for building it
        Invalid(
            "from src.trainer import DPOTrainer\ndef initialize_trainer_from_sft_checkpoint():\n"
            "    return DPOTrainer.init_from_sft_checkpoint(torch.load(path), data)\n"
            "def main():\n    trainer = initialize_trainer_from_sft_checkpoint()\n    trainer.train(100)\n",
            "gradient_step",
        ),
        # a pairwise loss of another file on a pair's scores: a reward model's
        Invalid(
            "from models.reward_model import pairwise_loss\nfor batch in loader:\n"
            "    chosen_scores = reward_model(batch['chosen'])\n"
            "    rejected_scores = reward_model(batch['rejected'])\n"
            "    loss = pairwise_loss(chosen_scores, rejected_scores)\n    accelerator.backward(loss)\n",
            "gradient_step",
            "reward_model",
        ),
        # however the pair's two outputs are named (``s_pos``, ``s_neg``): no log-probabilities, no
        # reference, so a scorer's
        Invalid(
            "from losses.pairwise import pairwise_logistic_loss\nfor batch in loader:\n"
            "    s_pos = model(batch['chosen_input_ids'])\n"
            "    s_neg = model(batch['rejected_input_ids'])\n"
            "    loss = pairwise_logistic_loss(s_pos, s_neg)\n    loss.backward()\n",
            "gradient_step",
            "reward_model",
        ),
        # the same name on a pair's log-probabilities against a reference: a preference loss
        Invalid(
            "from losses import preference_loss\nfor batch in loader:\n"
            "    loss = preference_loss(policy_chosen_logps, policy_rejected_logps,\n"
            "                           reference_chosen_logps, reference_rejected_logps, beta=0.1)\n"
            "    loss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        # a loss handed in by the file's caller: the step trains the function handed
        Invalid(
            "import mlx.core as mx\nimport mlx.nn as nn\n"
            "def lm_loss(model, x, y):\n    return nn.losses.cross_entropy(model(x), y).mean()\n"
            "def train(model, optimizer, loss_fn):\n"
            "    loss_and_grad = nn.value_and_grad(model, loss_fn)\n"
            "    for x, y in batches:\n        lv, g = loss_and_grad(model, x, y)\n"
            "        optimizer.update(model, g)\n"
            "train(m, opt, lm_loss)\n",
            "gradient_step",
            "sft",
        ),
        # losses of two routes handed by a flag's choice: the route is chosen at run time
        Invalid(
            "import mlx.core as mx\nimport mlx.nn as nn\n"
            "def lm_loss(model, x, y):\n    return nn.losses.cross_entropy(model(x), y).mean()\n"
            "def rm_loss(model, chosen, rejected):\n"
            "    return -mx.log(mx.sigmoid(model(chosen) - model(rejected))).mean()\n"
            "def train(model, optimizer, loss_fn):\n"
            "    loss_and_grad = nn.value_and_grad(model, loss_fn)\n"
            "    for a, b in batches:\n        lv, g = loss_and_grad(model, a, b)\n"
            "        optimizer.update(model, g)\n"
            "fn = rm_loss if args.reward_model else lm_loss\ntrain(m, opt, fn)\n",
            "dispatch",
            routes=("REWARD_MODEL", "SFT"),
        ),
        # a loss handed in with no default: a step whose loss this file does not show
        Invalid(
            "import mlx.nn as nn\n"
            "def train(model, optimizer, loss_fn):\n"
            "    loss_value_and_grad = nn.value_and_grad(model, loss_fn)\n"
            "    for batch in batches:\n        (lvalue, toks), grad = loss_value_and_grad(model, *batch)\n"
            "        optimizer.update(model, grad)\n",
            "gradient_step",
        ),
        Invalid(
            "from src.ppo.trainer import ParallelGRPOTrainerForCausalLM\n"
            "trainer = ParallelGRPOTrainerForCausalLM(policy, optimizer)\n"
            "for data in loader:\n    outputs = trainer.forward(data)\n",
            "gradient_step",
        ),
        # a setting's attribute named for a loss, on an object named for an algorithm, is no loss
        Invalid(
            "for batch in loader:\n    loss = model(**batch).loss * dpo_args.weight_loss\n"
            "    loss.backward()\n    optimizer.step()\n",
            "gradient_step",
            "sft",
        ),
        # the loss method of an object built from a class of another file named for its algorithm
        Invalid(
            "from src.methods.dpo import DPOMethod\nmethod = DPOMethod(policy, ref_model, beta=0.1)\n"
            "for batch in loader:\n    loss, metrics = method.compute_loss(batch)\n    loss.backward()\n"
            "    optimizer.step()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "from torchrl.objectives.llm import GRPOLoss\nfrom transformers import AutoModelForCausalLM\n"
            "model = AutoModelForCausalLM.from_pretrained(p)\nloss_fn = GRPOLoss(Wrapper(model))\n"
            "for batch in rb:\n    loss = loss_fn(batch)\n"
            "    (loss.loss_objective + loss.loss_entropy).backward()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "class BC(Base):\n    def compute_loss(self, inputs):\n        output = self.agent(**inputs)\n"
            "        return output[0].mean()\n    def step(self, batch):\n"
            "        self.accelerator.backward(self.compute_loss(batch))\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "for batch in loader:\n    out = model(input_ids=batch['input_ids'], labels=batch['labels'])\n"
            "    loss = out.loss\n    engine.backward(loss)\n    engine.step()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "import torch\nclass MyTrainer(Trainer):\n"
            "    def _prepare(self, rewards):\n"
            "        mean = rewards.view(-1, self.num_generations).mean(dim=1)\n"
            "        std = rewards.view(-1, self.num_generations).std(dim=1)\n"
            "        advantages = (rewards - mean) / (std + 1e-4)\n"
            "        return {'completion_ids': ids, 'advantages': advantages}\n"
            "    def compute_loss(self, model, inputs):\n"
            "        ratio = torch.exp(inputs['logps'] - inputs['old_logps'])\n"
            "        return -(ratio * inputs['advantages'].unsqueeze(1)).mean()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "import torch\nfor batch in loader:\n    chosen_logprobs = logprobs_of(model, batch['actions'])\n"
            "    ratio = torch.exp(chosen_logprobs - batch['old_logprobs'])\n"
            "    clipped = torch.clamp(ratio, 0.8, 1.2)\n"
            "    adv = batch['advantages']\n"
            "    loss = -(torch.min(ratio * adv, clipped * adv) * batch['reject_mask']).mean()\n"
            "    loss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "from losses import OddsRatioLoss\nodds_ratio = OddsRatioLoss()\n"
            "nll = model(input_ids=chosen_ids, labels=labels).loss\n"
            "chosen_logps = logps_of(model, chosen_ids)\nreject_logps = logps_of(model, reject_ids)\n"
            "loss = nll - lam * odds_ratio(chosen_logps, reject_logps)\nloss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "for batch in loader:\n    loss = model(**batch).loss / accumulation\n"
            "    booster.backward(loss=loss, optimizer=optimizer)\n    optimizer.step()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "def dpo_loss(pc, pr, rc, rr, beta):\n"
            "    return -F.logsigmoid(beta * ((pc - pr) - (rc - rr))).mean()\n"
            "loss = dpo_loss(policy_chosen_logps, policy_rejected_logps, ref_chosen, ref_rejected, 0.1)\n"
            "loss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "r_chosen = rm(chosen_ids)\nr_rejected = rm(rejected_ids)\n"
            "loss = -F.logsigmoid(r_chosen - r_rejected).mean()\nloss.backward()\n",
            "gradient_step",
            "reward_model",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "def rank_loss(scores, rw_scores):\n"
            "    diff = scores.unsqueeze(0) - scores.unsqueeze(-1)\n"
            "    rw_diff = rw_scores.unsqueeze(0) - rw_scores.unsqueeze(-1)\n"
            "    return -diff[(rw_diff > 0) & (diff < 0)].sum()\n"
            "logits = F.log_softmax(model(input_ids=ids).logits, dim=-1)\n"
            "token_logps = torch.gather(logits, -1, labels.unsqueeze(-1)).squeeze(-1)\n"
            "scores = token_logps.sum(-1) / lengths\n"
            "loss = rank_loss(scores, rewards) - token_logps[best].mean()\nloss.backward()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "scores = rm(ids)\n"
            "loss = -F.logsigmoid(scores.unsqueeze(1) - scores.unsqueeze(0))[order].mean()\n"
            "loss.backward()\n",
            "gradient_step",
            "reward_model",
        ),
        Invalid(
            "import torch\n"
            "def group_advantages(r, g):\n    r = r.view(-1, g)\n"
            "    return ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-6)).flatten()\n"
            "class Loss:\n    def forward(self, logp, old_logp, adv):\n"
            "        ratio = torch.exp(logp - old_logp)\n"
            "        return -torch.min(ratio * adv, ratio.clamp(1 - 0.2, 1 + 0.2) * adv).mean()\n"
            "advantages = group_advantages(rewards, 8)\n"
            "loss = objective(log_probs, old_log_probs, advantages)\nloss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "import torch\nratio = torch.exp(logp - old_logp)\n"
            "loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv).mean()\n"
            "accelerator.backward(loss)\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "import torch\nadv = rewards.view(-1, G).mean(dim=1)\n"
            "ratio = torch.exp(logp - old_logp)\nloss = -(ratio * adv).mean()\nloss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "t = teacher(x).logits\ns = student(x).logits\n"
            "loss = F.kl_div(F.log_softmax(s, -1), F.softmax(t, -1))\nloss.backward()\n",
            "gradient_step",
            "sft",
            "distillation",
        ),
        Invalid(
            "import torch\nloss_fn = torch.nn.BCEWithLogitsLoss()\npred = head(x)\n"
            "loss = loss_fn(pred[:, 0] - pred[:, 1], torch.ones_like(pred[:, 0]))\nloss.backward()\n",
            "gradient_step",
            "reward_model",
        ),
        Invalid(
            "import torch\nadvs = []\nfor t in reversed(range(n)):\n"
            "    last = r[:, t] + gamma * values[:, t + 1] - values[:, t] + gamma * lam * last\n"
            "    advs.append(last)\nadvantages = torch.stack(advs[::-1], 1)\n"
            "ratio = torch.exp(logp - old_logp)\n"
            "loss = -(ratio * advantages).mean()\nloss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "def rollout(rewards):\n"
            "    advantages = (rewards - rewards.mean(1, keepdim=True))"
            " / (rewards.std(1, keepdim=True) + 1e-4)\n"
            "    return Batch(advantages=advantages)\n"
            "def update(batch):\n    loss = loss_fn(logprobs, batch.advantages)\n    loss.backward()\n",
            "gradient_step",
            "grpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "def loss(pi_real, pi_gen, ref_real, ref_gen, beta):\n"
            "    pi_logratios = pi_real - pi_gen\n    ref_logratios = ref_real - ref_gen\n"
            "    return -F.logsigmoid(beta * (pi_logratios - ref_logratios)).mean()\n"
            "loss(a, b, c, d, 0.1).backward()\n",
            "gradient_step",
            "dpo",
        ),
        Invalid(
            "model = GPT(conf)\nfor it in range(n):\n    logits, loss = model(X, Y)\n    loss.backward()\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from somelib import MyTrainer\ntrainer = MyTrainer(model, data)\ntrainer.train()\n",
            "gradient_step",
        ),
        # an imported class making a model trainable for a route, built by its factory and trained
        Invalid(
            "import sillm\nmodel = sillm.load(path)\nmodel = sillm.TrainableDPO.from_model(model, beta=0.1)\n"
            "model.train(dataset_training, dataset_validation, batch_size=4)\n",
            "gradient_step",
        ),
        # a trainer kept on the object by one method and run by another
        Invalid(
            "from training.grpo_trainer import GameGRPOTrainer\nclass Pipeline:\n"
            "    def __init__(self, cfg):\n        self.trainer = GameGRPOTrainer(cfg)\n"
            "    def go(self):\n        self.trainer.train()\n",
            "gradient_step",
        ),
        # a project's trainer class run by its ``run`` method: the class's name says the stage
        Invalid(
            "from training.grpo_trainer import GameGRPOTrainer\n"
            "trainer = GameGRPOTrainer(model_config, grpo_config)\ntrainer.run(game='tictactoe')\n",
            "gradient_step",
        ),
        Invalid(
            "client = service.create_lora_training_client(base_model=m)\n"
            "client.forward_backward(batch, loss_fn='cross_entropy')\nclient.optim_step(adam)\n",
            "gradient_step",
            "sft",
        ),
        Invalid("out = self.policy.forward_backward(batch)\nself.policy.optim_step()\n", "gradient_step"),
        # the loss set on the model object before its remote steps (twinkle's set_loss)
        Invalid(
            "from twinkle.loss import DPOLoss\npolicy.set_loss(DPOLoss(beta=0.1))\n"
            "for batch in loader:\n    policy.forward_backward(inputs=batch, ref_outputs=ref)\n"
            "    policy.clip_grad_and_step()\n",
            "gradient_step",
            "dpo",
        ),
        # a preference loss of another file, named for its family whatever follows "loss"
        Invalid(
            "from .losses import dpo_loss_v2\nfor batch in loader:\n"
            "    loss = dpo_loss_v2(pc, pr, rc, rr, beta=0.1)\n    loss.backward()\n    optimizer.step()\n",
            "gradient_step",
            "dpo",
        ),
        # a distillation loss of the library, named for what it is: the student learns the teacher's
        # distribution
        Invalid(
            "from twinkle.loss import GKDLoss\nstudent.set_loss(GKDLoss(beta=0.5, temperature=1.0))\n"
            "student.forward_backward(inputs=batch, **teacher_output)\nstudent.clip_grad_and_step()\n",
            "gradient_step",
            "sft",
            "gkd",
        ),
        # a project's class named for fine-tuning a route, its ``train`` run on data; a wrapper of a
        # trainer named for one
        Invalid(
            "from safe.methods.dpo import DPOFineTuning\nft = DPOFineTuning(model_adapter=m)\n"
            "model = ft.train(dataset_processor=d, config=cfg)\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "from .trainer import ORPOTrainerWrapper\nw = ORPOTrainerWrapper(model=m, train_dataset=ds)\n"
            "w.train()\n",
            "stage",
            "dpo",
            "orpo",
        ),
        Invalid(
            "from .trainer import ORPOTrainerWrapper as W\nw = W(model=m, train_dataset=ds)\nw.train()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "from safe.methods.lora import LoRAFineTuning\nft = LoRAFineTuning(model_adapter=m)\n"
            "model = ft.train(dataset_processor=d, config=cfg)\n",
            "stage",
            "sft",
        ),
        # a helper named for a GRPO step, handed the optimiser an object keeps
        Invalid(
            "import torch\nclass Session:\n    def __init__(self, model):\n"
            "        self.model = model\n"
            "        self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)\n"
            "    def _run_step(self, groups):\n"
            "        return grpo_step(self.model, self.tokenizer, groups, self.optimizer, beta=0.1)\n",
            "gradient_step",
        ),
        # an RL library's agent named for its algorithm, imported under another name
        Invalid(
            "from openrl.runners.common import PPOAgent as Agent\nagent = Agent(net, use_wandb=True)\n"
            "agent.train(total_time_steps=100000)\n",
            "gradient_step",
        ),
        # an optimiser whose update runs inside the backward pass it is handed the loss for (LOMO)
        Invalid(
            "for batch in loader:\n    outs = model(input_ids=batch['input_ids'])\n"
            "    loss = F.cross_entropy(outs.logits.view(-1, v), batch['labels'].view(-1))\n"
            "    optimizer.fused_backward(loss, lr)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "model.set_loss('LigerFusedLinearCrossEntropyLoss')\nmodel.forward_backward(inputs=batch)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "from twinkle.loss import DPOLoss\nmodel.set_loss(loss=DPOLoss())\n"
            "model.forward_backward(batch)\n",
            "gradient_step",
            "dpo",
        ),
        # a loss function handed to the step itself, whatever loss was set before
        Invalid(
            "import torch.nn.functional as F\nfrom twinkle.loss import DPOLoss\n"
            "def _sft_loss(logits, labels):\n    return F.cross_entropy(logits, labels)\n"
            "trainer.set_loss(DPOLoss())\ntrainer.forward_backward(_sft_loss, ids)\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "loss_fn = ClippedPGLossFn(cfg)\nresults = policy.train(train_data, loss_fn)\n", "gradient_step"
        ),
        Invalid(
            "class Worker:\n    def update_actor(self, data):\n"
            "        return self.actor.update_policy(data=data)\n"
            "    def update_critic(self, data):\n        return self.critic.update_critic(data=data)\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "for batch in loader:\n    policy_loss, stats = self.compute_policy_loss(batch)\n"
            "    policy_loss.backward()\n    value_loss = self.compute_value_loss(batch)\n"
            "    value_loss.backward()\n",
            "gradient_step",
            "ppo",
        ),
        Invalid(
            "class NLLTrainer(AccelerateRLTrainer):\n    def loss(self, batch):\n"
            "        loss = self.model(input_ids=batch.input_ids, labels=batch.labels).loss\n"
            "        return loss, {'loss': loss.item()}\n",
            "gradient_step",
            "sft",
        ),
        Invalid(
            "import pytorch_lightning as pl\nimport torch.nn.functional as F\n"
            "class M(pl.LightningModule):\n    def training_step(self, batch, i):\n"
            "        return F.cross_entropy(self(batch['x']), batch['y'])\n",
            "gradient_step",
            "sft",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.functions: list[int] = [0]
        """Ids of the functions being walked (0: the module)."""
        self.no_grad = 0
        """How many ``with torch.no_grad()`` blocks are open around the node walked."""
        self.defaults: dict[str, str] = {}
        """Parameters whose default is a name (``loss=default_loss``) -> that name."""
        self.name_calls: dict[str, list[tuple[int, cst.Call]]] = {}
        """Calls of a plain name, by the name: (the function they are made in, the call)."""
        self.alternatives: list[list[int]] = []
        """Indexes in ``steps`` of one step's alternative losses, handed by its callers' choice."""
        self.holders: dict[int, list[str]] = {}
        """Classes of the objects that hold this file's optimiser, by the step that trains them."""
        self.ran: dict[int, list[str]] = {}
        """Per step that runs another module's training: the function's name and its module's."""
        self.estimators: list[str] = []
        """Advantage estimators the file sets by name (``args.advantage_estimator = "group_norm"``)."""
        self.scorers: dict[int, str] = {}
        """Steps training an object built from a class named for a reward model: that class's name."""
        self.rewarded: dict[int, str] = {}
        self.advantaged: set[int] = set()
        """ids of those steps handed the advantages themselves (``learner.update(c, advantages=a)``)."""
        """Steps of a trainer handed samples and their rewards, by node: the trainer named."""
        self.function_names: list[str] = []
        self.classes: list[bool] = []
        """Per open class: whether it derives from something."""
        self.class_names: list[str] = []
        self.opened: list[tuple[bool, int]] = []
        """The open classes and functions, innermost last: (whether a class, its id)."""
        self.method_of: dict[int, int] = {}
        """id of a method (or of a function nested in one) -> id of the class its ``self`` is of."""
        self.class_methods: dict[int, dict[str, int]] = {}
        """id of a class -> its own methods' names -> their ids."""
        self.class_ids: dict[str, int] = {}
        """Name of a class this file defines -> its id (the first defined under that name)."""
        self.class_bases: dict[int, list[str]] = {}
        """id of a class -> the plain names of its bases."""
        self.defined: dict[int, cst.FunctionDef] = {}
        """id of a function -> its definition (where a loss it returns is reported)."""
        self.trained_modules: set[str] = set()
        """Names of the modules whose parameters an optimiser of the file is built on (``base`` of
        ``AdamW(lora_parameters(base))``, ``policy`` of ``Adam(self.policy.parameters())``)."""
        self.loss_outputs: set[int] = set()
        """ids of the calls whose output is bound to a name for a loss (``_, loss = base(x, y)``)."""
        self.stepping: set[tuple[str, ...]] = set()
        """Functions (outside classes) seen so far taking a gradient step in their own body, each by
        the names of the functions around it and its own."""
        self.later_loops: list[tuple[cst.Call, cst.CSTNode | None, str, list[tuple[str, ...]]]] = []
        """Calls handing an environment to a function of this file not yet read (defined further down):
        (call, statement, name called, the functions the name may be, innermost first), decided once
        the file is read."""
        self.handing_environment: set[tuple[str, ...]] = set()
        """Functions (likewise) that hand an environment to a function of another file
        (``collect_trajectories(env, model, max_turns=10)``): their samples are that function's."""
        self.where: dict[int, tuple[str, ...]] = {}
        """id of a step's call -> the functions and classes it is in, innermost first."""
        self.env_calls: dict[tuple[int, str], dict[str, set[tuple[int, ...]]]] = {}
        """(id of a function, an environment's name) -> ``reset``/``step`` -> the loops around its calls
        (at most :data:`MAX_ENV_PLACES` places of each)."""
        self.played: set[int] = set()
        """ids of the steps taken after their function played an environment's episodes."""
        self.loops: list[int] = []
        """ids of the open ``for``/``while`` loops, innermost last."""
        self.branches: list[tuple[int, bool]] = []
        """The open ``if`` statements' ids, each with whether the walk is in its ``else``."""
        self.guards: list[cst.If] = []
        """The open ``if`` statements themselves, in the order of :attr:`branches`."""
        self.flag_defaults: dict[str, list[str]] = {}
        """String defaults of command-line flags, by the setting each stores (``--loss-fn``: ``loss_fn``)."""
        self.hf_parsed = False
        """Whether transformers' HfArgumentParser is handed a class named TrainingArguments."""
        self.named_losses: list[
            tuple[cst.Call, cst.CSTNode | None, str, tuple[str, ...], tuple[str, ...]]
        ] = []
        """Remote steps handed a setting naming the service's loss (``loss_fn=args.loss_fn``): the call,
        its statement, the setting, the names an ``if`` around the call lets it hold and those the
        ``else`` of an ``if`` around it rules out."""
        self.loop_of: dict[int, tuple[tuple[int, ...], frozenset[tuple[int, bool]]]] = {}
        """id of a step's call -> the loops it is taken in and the ``if`` branches it sits in."""
        self.assigns: dict[tuple[int, str], list[cst.BaseExpression]] = {}
        self.attributes: dict[str, list[cst.BaseExpression]] = {}
        self.hosted_jobs: list[tuple[Finding, cst.Call, int]] = []
        """Hosted fine-tuning jobs read as supervised at the call, with the function they are in:
        settings handed as ``**kwargs`` may ask for preference optimisation (read at the end)."""
        self.returns: dict[str, list[tuple[int, list[cst.BaseExpression]]]] = {}
        self.unpacked: dict[tuple[int, str], int] = {}
        """The place a name takes in a tuple it is unpacked from, by the value unpacked and the name
        (``rm, tok = create_model(cfg)``: ``rm`` is the first of what ``create_model`` returns)."""
        self.scopes_of: dict[int, Scope] = {}
        """id of a called expression -> the scope it is called in."""
        self.steps: list[
            tuple[cst.CSTNode, cst.CSTNode | None, list[tuple[int, cst.BaseExpression]], str]
        ] = []
        """(node, statement, roots of its loss, what the step is)."""
        self.updates = False
        """Something applies gradients: an optimiser's or engine's step, an update, a trainer's train()."""
        self.reads_grad = False
        """Parameters' ``.grad`` are read (gradients used as statistics, e.g. Fisher information)."""
        self.parameters: dict[int, frozenset[str]] = {}
        """Each function's parameters, by its id (a gradient handed in comes from the next block)."""
        self.chains_backward = False
        """A tensor's backward pass is handed an upstream gradient (``out.backward(out_grad)``): the chain
        rule continued by hand, block by block, so the ``.grad`` read is passed on, not kept."""
        self.asserting = 0
        """Depth of ``assert`` statements around the node visited: a gradient checked there
        (``assert x.grad is not None``) tests that the loss is differentiable, it is no statistic."""
        self.printing = 0
        """Depth of ``print`` calls around the node visited: the gradient of a tensor the file made
        differentiable itself shown there (``print(x.grad.norm())`` of ``x.requires_grad_(True)``) is a
        smoke test's; a model parameter's gradients printed are a gradient analysis."""
        self.trainer_classes: list[bool] = []
        """Per open class: it derives from something and its or its base's name says trainer."""
        self.unit_classes: list[bool] = []
        """For each class around the node visited, whether it derives from a unit of training."""
        self.head_classes: list[bool] = []
        """Per open class: it derives from an imported language-model head class (``LlamaForCausalLM``)."""
        self.forward_losses: list[tuple[int, cst.BaseExpression]] = []
        """The losses the ``forward`` of such a class computes (a generic trainer differentiates them)."""
        self.chained: list[tuple[cst.Call, int, list[tuple[int, cst.BaseExpression]]]] = []
        """Trainers built and run in one expression (``Trainer(...).train()``): the construction, its
        scope and the roots of the step's loss, filled once the file is read."""
        self.fine_tuned: set[int] = set()
        """ids of an object's fine-tuning runs given data (``model.finetune(ds)``): supervised unless
        a name says otherwise."""
        self.compiled: dict[str, tuple[int, cst.BaseExpression]] = {}
        """Names of models compiled with a loss, Keras-style (``model.compile(loss=CausalLMLoss())``),
        and that loss with the scope it is written in: their ``fit()`` trains on it."""
        self.deferred: list[tuple[cst.CSTNode, cst.CSTNode | None, int, str, str]] = []
        """Steps named after the walk: (node, statement, scope, name, how) for ``jax.grad(f)``-like
        calls and ``trainer.train()`` on a name."""
        self.trainer_of_step: dict[int, cst.Call] = {}
        """id of a trainer's ``train()`` call -> the call that constructs that trainer."""
        self.set_losses: dict[str, tuple[int, cst.BaseExpression]] = {}
        """The loss an object was told to train with (``model.set_loss(DPOLoss(beta=0.1))``), by the
        object's dotted name: (scope, the loss handed)."""
        self.trainer_scope: dict[int, int] = {}
        """id of such a ``train()`` call -> the function it is in (where the trainer's class is bound)."""

    def _statement(self) -> cst.CSTNode | None:
        return self.context.statements[-1] if self.context.statements else None

    # -- collecting ----------------------------------------------------------------------------

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.opened.append((True, id(node)))
        self.class_ids.setdefault(node.name.value, id(node))
        self.class_bases[id(node)] = [b.value.value for b in node.bases if type(b.value) is cst.Name]
        self.classes.append(bool(node.bases))
        self.class_names.append(node.name.value)
        names = [node.name.value, *(_tail(b.value) for b in node.bases)]
        self.trainer_classes.append(bool(node.bases) and any("trainer" in words(n) for n in names))
        # (fairseq2's ``TrainUnit``, a ``TrainModule``: what the trainer's loop runs per batch; a
        # ``TrainCallback`` only watches it)
        self.unit_classes.append(any(_training_unit(_tail(b.value)) for b in node.bases))
        self.head_classes.append(
            any(
                _tail(b.value).endswith(LM_HEADS) and any("." in q for q in self.names(b.value))
                for b in node.bases
            )
        )

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.opened.pop()
        self.classes.pop()
        self.class_names.pop()
        self.trainer_classes.pop()
        self.unit_classes.pop()
        self.head_classes.pop()

    def visit_Param(self, node: cst.Param) -> None:
        if type(node.default) is cst.Name:
            self.defaults[node.name.value] = node.default.value

    def visit_With(self, node: cst.With) -> None:
        self.no_grad += self._gradients_off(node)
        for item in node.items:
            if item.asname is not None and type(item.item) is cst.Call:
                # ``with Trainer(config, optimizer, loss_fn) as trainer:``: the name holds what the call
                # built (a context manager's ``__enter__`` answers itself, as trainers' and engines' do)
                self._bind(item.asname.name, item.item)

    def leave_With(self, original_node: cst.With) -> None:
        self.no_grad -= self._gradients_off(original_node)

    def _gradients_off(self, node: cst.With) -> bool:
        """Say whether a ``with`` switches gradients off (``torch.no_grad()``, ``inference_mode()``)."""
        return any(
            type(item.item) is cst.Call and self.names(item.item.func) & NO_GRAD for item in node.items
        )

    def _handed_on(self, upstream: cst.BaseExpression) -> bool:
        """Say whether a backward pass is handed a gradient that came from the blocks after it.

        A tensor's ``.grad`` (``out.backward(x.grad)``), a name bound to one in this function, or a
        parameter of this function named for a gradient (``def backprop(block, output_grad)``: the
        next block's, handed in). A seed made here (``grad_output = torch.zeros_like(o)``, a one-hot
        of a saliency map, a kernel test's ``randn_like``) is none: its name alone says nothing.
        """
        if _reads_grad(upstream):
            return True
        if type(upstream) is not cst.Name or not self.functions:
            return False
        bound = self.assigns.get((self.functions[-1], upstream.value))
        if bound:
            return any(_reads_grad(d) for v in bound for d in (v, *descendants(v)))
        return upstream.value in self.parameters.get(self.functions[-1], ()) and bool(
            set(words(upstream.value)) & GRADIENT_WORDS
        )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.opened:
            is_class, outer = self.opened[-1]
            if is_class:
                self.method_of[id(node)] = outer
                self.class_methods.setdefault(outer, {})[node.name.value] = id(node)
            elif outer in self.method_of:
                self.method_of[id(node)] = self.method_of[outer]  # (a closure's ``self`` is its method's)
        self.opened.append((False, id(node)))
        self.functions.append(id(node))
        params = node.params
        self.parameters[id(node)] = frozenset(
            p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)
        )
        self.function_names.append(node.name.value)
        self.returns.setdefault(node.name.value, []).append((id(node), []))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.opened.pop()
        name = self.function_names.pop()
        function_id = self.functions.pop()
        self.defined[function_id] = original_node
        self.where.setdefault(
            id(original_node), (name, *reversed(self.function_names), *reversed(self.class_names))
        )
        hook = (name in TRAINER_LOSS_HOOKS and bool(self.trainer_classes) and self.trainer_classes[-1]) or (
            name == UNIT_LOSS_HOOK and bool(self.unit_classes) and self.unit_classes[-1]
        )
        if name == "forward" and self.head_classes and self.head_classes[-1]:
            # class LlamaForRLMEC(LlamaForCausalLM): def forward(...): loss = loss_pg + lamb * loss_ce:
            # the loss a generic trainer (transformers' Trainer) differentiates for this model
            self.forward_losses.extend((function_id, v) for v in self.assigns.get((function_id, "loss"), []))
        if (name in LOSS_METHODS and self.classes and self.classes[-1]) or hook:
            returned = next(r for i, r in self.returns[name] if i == function_id)
            if returned:
                self.steps.append(
                    (
                        original_node,
                        original_node,
                        [(function_id, r) for r in returned],
                        f"{name} {LOSS_HOOK}",
                    )
                )

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None and self.function_names:
            entries = self.returns[self.function_names[-1]]
            entries[-1][1].append(node.value)

    def _preference_kwargs(self, node: cst.Call, scope: int) -> bool:
        """Say whether settings handed as ``**kwargs`` ask a hosted job for preference optimisation.

        ``job = client.fine_tuning.jobs.create(**kwargs)`` where ``kwargs`` is a dict literal, or what a
        function of this file returns (``kwargs = build_job_kwargs(file_id)``).
        """
        for arg in node.args:
            if arg.star != "**" or type(arg.value) is not cst.Name:
                continue
            for value in self._bound(scope, arg.value.value):
                made = value.func.value if type(value) is cst.Call and type(value.func) is cst.Name else None
                built = (
                    [r for _, returned in self.returns.get(made, []) for r in returned] if made else [value]
                )
                if any(_preference_settings(partial(dict_field, d)) for d in built if type(d) is cst.Dict):
                    return True
        return False

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if type(target) is cst.Name:
            self.assigns.setdefault((self.functions[-1], target.value), []).append(value)
            if type(value) is cst.Subscript:
                value = value.value  # ``loss = model(x, y)[1]``
            if type(value) is cst.Call and words(target.value)[-1:] == ("loss",):
                self.loss_outputs.add(id(value))
        elif isinstance(target, cst.Tuple | cst.List):
            for at, element in enumerate(target.elements):
                if type(element.value) is cst.Name:
                    self.unpacked[(id(value), element.value.value)] = at
                self._bind(element.value, value)
        elif type(target) is cst.StarredElement:
            self._bind(target.value, value)
        elif (key := keyed_entry(target)) is not None:
            # ``stats["loss_pg"] = -(logp * adv).mean()``: that entry holds it (read by its key, or by
            # any key that is not a constant: ``sum(stats[k] for k in stats)``)
            self.assigns.setdefault((self.functions[-1], key), []).append(value)
        elif type(target) is cst.Subscript and type(target.value) is cst.Name:
            # ``advantages[mask] = r - baseline``: a tensor filled in place holds what it is filled with
            self.assigns.setdefault((self.functions[-1], target.value.value), []).append(value)
        elif (
            type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self"
        ):
            self.attributes.setdefault(target.attr.value, []).append(value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)
            self._estimator(last_name(target.target), node.value)

    def _estimator(self, setting: str, value: cst.BaseExpression) -> None:
        """Note an advantage estimator set by name (``advantage_estimator="group_norm"``)."""
        if (
            "estimator" in setting  # (a substring first: most keywords of most calls are not)
            and "estimator" in words(setting)
            and type(value) is cst.SimpleString
            and isinstance(text := value.evaluated_value, str)
        ):
            self.estimators.append(text)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, node.value)

    # -- steps ---------------------------------------------------------------------------------

    def visit_Assert(self, node: cst.Assert) -> None:
        self.asserting += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self.asserting -= 1

    def leave_Call(self, original_node: cst.Call) -> None:
        if type(original_node.func) is cst.Name and original_node.func.value == "print":
            self.printing -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value != "grad" or self.asserting:
            return
        if self.printing and type(node.value) is cst.Name and self._made_differentiable(node.value.value):
            return
        self.reads_grad = True

    def _made_differentiable(self, name: str) -> bool:
        """Say whether a name holds a tensor this file made a leaf needing gradients.

        ``x = t.detach().requires_grad_(True)``, ``torch.randn(4, requires_grad=True)``: a tensor made
        up to test a loss with, not a model's parameter.
        """
        for value in self._bound(self.functions[-1], name):
            for n in (value, *descendants(value)):
                if type(n) is cst.Call and (
                    method(n) == "requires_grad_"
                    or any(a.keyword is not None and a.keyword.value == "requires_grad" for a in n.args)
                ):
                    return True
        return False

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Name and node.func.value == "print":
            self.printing += 1  # (left in leave_Call, whatever the rest of this hook returns early on)
        for arg in node.args:
            if arg.keyword is not None:
                self._estimator(arg.keyword.value, arg.value)
        before = (len(self.steps), len(self.deferred))
        self._call(node)
        if (called := method(node)) == "add_argument" and (key := flag_key(node)) is not None:
            default = keyword(node, "default")
            if default is not None and type(default.value) is cst.SimpleString:
                text = text_value(default.value)
                if text is not None:
                    self.flag_defaults.setdefault(key, []).append(text)
        if called in ("reset", "step"):
            self._note_environment(node, called)
        if not self.hf_parsed and last_name(node.func) == HF_PARSER_CLASS:
            self.hf_parsed = self._parses_hf_arguments(node)
        if (module := _parameters_owner(node)) is not None and self._builds_optimiser(node):
            self.trained_modules.add(module)
        if (len(self.steps), len(self.deferred)) != before:
            if self._played_episodes():
                self.played.add(id(node))
            # innermost first: the functions around the step, then the classes
            self.where[id(node)] = (*reversed(self.function_names), *reversed(self.class_names))
            if len(self.steps) != before[0] and self.function_names and not self.class_names:
                self.stepping.add(tuple(self.function_names))
            if self.loops:
                self.loop_of[id(node)] = (tuple(self.loops), frozenset(self.branches))

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(id(node))

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(id(node))

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.pop()

    def visit_If(self, node: cst.If) -> None:
        self.branches.append((id(node), False))
        self.guards.append(node)

    def leave_If(self, original_node: cst.If) -> None:
        self.branches.pop()
        self.guards.pop()

    def _allowed(self, setting: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Return what the ``if`` tests around the walk say of ``setting``.

        The strings the innermost ``if`` testing it lets it hold, and those the tests whose ``else`` the
        walk is in rule out.
        """
        excluded: list[str] = []
        for guard, (_, in_else) in zip(reversed(self.guards), reversed(self.branches), strict=True):
            named = _allowed_values(guard.test, setting, lambda n: self.assigns.get((0, n), []))
            if in_else:
                excluded.extend(named)
            elif named:
                return named, tuple(excluded)
        return (), tuple(excluded)

    def visit_Else(self, node: cst.Else) -> None:
        # (an ``elif`` is an ``If`` in its parent's ``orelse``, so it is marked by its own visit)
        if self.branches:
            self.branches[-1] = (self.branches[-1][0], True)

    def _same_iteration(self, one: int, other: int) -> bool:
        """Say whether two steps are taken in one iteration of a loop around both.

        They share a loop and sit in no two exclusive branches of one ``if`` (``if stage == "sft":``
        then ``else:`` runs one of them per iteration).
        """
        if one not in self.loop_of or other not in self.loop_of:
            return False
        (loops, branches), (other_loops, other_branches) = self.loop_of[one], self.loop_of[other]
        if not set(loops) & set(other_loops):
            return False
        taken = dict(branches)
        return not any(taken.get(i, in_else) != in_else for i, in_else in other_branches)

    def _call(self, node: cst.Call) -> None:
        self.scopes_of[id(node.func)] = self.context.scope  # resolved only if a loss slice reads it
        if (
            self.function_names
            and not self.class_names
            and any(_names_environment(a) for a in node.args)
            and not self._defined_here(node.func)
        ):
            self.handing_environment.add(tuple(self.function_names))
        name = method(node)
        if name is not None and (
            name == "step"
            or name.endswith(("_step", "_update", "apply_updates"))
            or (name == "update" and type(node.func) is cst.Attribute and _optimiser_update(node.func.value))
        ):
            # optimizer.step(), scaler.step(opt), engine.step(), optimizer_step(); MLX's and optax's
            # ``optimizer.update(model, grads)``
            self.updates = True
        func = node.func
        last = name if name is not None else func.value if type(func) is cst.Name else None
        names = self.names(func) if last in RESOLVED_LAST else set()
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        scope = self.functions[-1]
        if type(func) is cst.Name:
            self.name_calls.setdefault(func.value, []).append((scope, node))
        if names and (loss_function := _handed_loss_function(node, names, positional)) is not None:
            # pretrain(datasets, model_provider, model_type, forward_step): the framework's loop steps
            # on the loss the file's forward_step returns
            self.deferred.append((node, self._statement(), scope, loss_function, "grad"))
            return
        if self._hands_on_optimiser(node, last, scope):
            # train_model(model, loader, optimizer, ...): the helper steps the optimiser it is given,
            # on the loss it is given if it is given one (``optimizer_step(loss, optimizer)``)
            handed = [(scope, a.value) for a in node.args if _names_a_loss(a)]
            self.steps.append((node, self._statement(), handed[:1], f"{last}() given an optimiser"))
            return
        if self._trains_given_optimiser(node, name, scope):
            self.steps.append((node, self._statement(), [], f"{name}() of an object given an optimiser"))
            return
        if _backpropagates_handed_loss(node, last):
            # ``loss_scaler(loss, optimizer, parameters=model.parameters())`` (timm's and MAE's
            # NativeScaler): handed the loss's value and the optimiser, it backpropagates and steps
            handed = [(scope, node.args[0].value)]
            self.steps.append((node, self._statement(), handed, f"{last}() given the loss and an optimiser"))
            return
        if (trainer := _rewarded_step(node, name)) is not None:
            # ppo_trainer.step(queries, responses, rewards): TRL's classic PPOTrainer update, and that of
            # the trainers shaped on it, on samples and the scores they got (the trainer is made elsewhere)
            self.rewarded[id(node)] = trainer
            self.ran[id(node)] = [trainer]
            how = f"{trainer}.step() given samples and their rewards"
            self.steps.append((node, self._statement(), [], how))
            return
        if (updater := _advantaged_update(node, name)) is not None:
            # lm_server.update(obs, actions=a, advantages=adv, logprobs=logp): an object's own
            # policy-gradient update on the samples and advantages this file hands it
            self.rewarded[id(node)] = updater
            self.advantaged.add(id(node))
            how = f"{updater}.{name}() given sampled actions and their advantages"
            self.steps.append((node, self._statement(), [], how))
            return
        if (
            last is not None
            and trains_in_environment(node, last)
            and not any(entry_for(q) for q in self.names(node.func))
            and not self._steps_here(node.func)  # (a loop of this file: its own rollouts decide)
        ):
            # offpolicy_train_loop(env=env, agent=agent): a training loop of another file, on the
            # episodes of the environment it is handed (a framework's entry is the table's to say:
            # its environment may only verify single answers)
            if self._defined_here(node.func):
                # a function of this file defined further down: its own body, once read, may decide
                self.later_loops.append((node, self._statement(), last, self._callees(last)))
                return
            self._environment_loop(node, self._statement(), last)
            return
        staged = _staged_run(node, last)
        if staged is not None:
            # model.finetune(data, stage="dpo"), trainer.train(algorithm="grpo"): a training run of a
            # wrapper whose stage the literal it is handed names (the wrapper's code is elsewhere)
            self.ran[id(node)] = [staged]
            self.steps.append((node, self._statement(), [], f"{last}() told to run {staged}"))
            return
        if self._hands_on_loss_function(node, last):
            # train_and_save_model(cfg, train_ds, test_ds, loss_fn=loss_fn): a training helper of
            # another file, handed the loss function it differentiates (its optimiser its own)
            handed = [(scope, a.value) for a in node.args if _names_a_loss_function(a)]
            self.steps.append((node, self._statement(), handed[:1], f"{last}() given a loss function"))
            return
        library_run = name in MODEL_TRAINING_METHODS and self._library_model(func, scope)
        if (name in FINE_TUNE_METHODS or library_run) and type(node.func) is cst.Attribute and node.args:
            # chat_model.finetune(dataset, num_epochs=3), simpletransformers' and textgen's
            # GptModel(...).train_model(df): an object's fine-tuning run, given its data (its loss is
            # the object's library's, not read here)
            self.steps.append((node, self._statement(), [], f"{name}() given data"))
            self.fine_tuned.add(id(node))
            return
        run = positional[0] if positional and self.names(func) & CLI_RUNNERS else func
        if last_name(func) in PROCESS_CLASSES and (process_target := keyword(node, "target")) is not None:
            run = process_target.value  # Process(target=run_sft, args=(cfg,)): the function the process runs
        called = (
            run.value
            if type(run) is cst.Name
            else run.attr.value
            if type(run) is cst.Attribute and self._module_function(run)
            else None
        )
        if (
            called is not None
            and isinstance(run, cst.Name | cst.Attribute)
            and _runs_imported_training(
                called,
                ran := self._run_names(run) if type(run) is cst.Name else self.names(run),
                self.enclosing()[-1:],
            )
            and not any(entry_for(q) for q in ran)  # (the framework table's to say)
        ):
            # from trainers.grpo import train_grpo; train_grpo(cfg) (or fire.Fire(train_grpo), or
            # utils.sft_microbatch_train_step(logps, mask)): a training step of another module, whose
            # stage only its name (or its module's) says here; in a workspace the module's code decides
            modules = [q.rsplit(".", 1)[0].rsplit(".", 1)[-1] for q in sorted(ran) if "." in q]
            # (then the package a training module's entry runs the route of: ``grpo_project``)
            entries = [q.rpartition(".") for q in sorted(ran)]
            packages = [
                p for m, _, f in entries if (p := route_package(m, f, NOT_RUNNING_TRAINING_WORDS)) is not None
            ]
            self.ran[id(node)] = [called, *modules, *packages]
            self.steps.append((node, self._statement(), [], f"{called}() of another module"))
            return
        if _names_an_update(name) and isinstance(holder := getattr(node.func, "value", None), cst.Name):
            # algo.update_parameters(): decided once the file is read, by what ``algo`` was built with
            self.deferred.append((node, self._statement(), scope, holder.value, "environment"))
        if name in ("append", "extend") and positional and type(node.func) is cst.Attribute:
            self._bind(node.func.value, positional[0])  # a list filled in a loop holds what is appended
        if name == "backward" and type(node.func) is cst.Attribute:
            receiver = node.func.value
            if "torch.autograd.backward" in names:
                # torch.autograd.backward(output_tensor, grad_tensors=output_tensor_grad): a pipeline
                # schedule's backward pass of one stage, handed the next stage's gradient
                gradient_arg = keyword(node, "grad_tensors")
                upstream = (
                    positional[1] if len(positional) > 1 else gradient_arg.value if gradient_arg else None
                )
            else:
                gradient_arg = keyword(node, "gradient")
                upstream = positional[0] if positional else gradient_arg.value if gradient_arg else None
            if upstream is not None and not _backward_receiver(node.func) and self._handed_on(upstream):
                # out.backward(out_grad): the gradient of what comes after ``out``, handed back through
                # it (offloaded or pipelined blocks, checkpointing by hand); the loss whose gradient it
                # is lies in the step that made it, so nothing here is sliced (and the first such pass
                # stands for the rest: a schedule of thousands of blocks is one piece of evidence)
                if not self.chains_backward:
                    self.steps.append((node, self._statement(), [], CHAINED_BACKWARD))
                self.chains_backward = True
                return
            if positional:
                root = positional[0]  # accelerator.backward(loss), engine.backward(loss)
            elif (loss_keyword := keyword(node, "loss")) is not None:
                root = loss_keyword.value  # booster.backward(loss=loss, optimizer=optimizer) (ColossalAI)
            elif type(receiver) is cst.Call and method(receiver) == "scale" and receiver.args:
                root = receiver.args[0].value  # scaler.scale(loss).backward()
            else:
                root = receiver
            self.steps.append((node, self._statement(), [(scope, root)], "a backward pass"))
        elif name == "manual_backward" and positional:
            self.steps.append((node, self._statement(), [(scope, positional[0])], "a backward pass"))
        elif (
            words(last_name(node.func))[-1:] == ("backward",)
            and "forward" not in words(last_name(node.func))  # (a remote forward-backward: read below)
            and (type(node.func) is cst.Name or _backward_receiver(node.func))
            and (handed_loss := [a.value for a in node.args if _hands_a_loss_value(a)])
        ):
            # acc_backward(self.acc, loss), scaled_backward(loss, scaler): a helper named for the
            # backward pass of the loss it is handed (Accelerate-or-plain shims, AMP wrappers), or a
            # method (LOMO's ``optimizer.fused_backward(loss, lr)``, its update fused into the pass)
            self.steps.append((node, self._statement(), [(scope, handed_loss[0])], "a backward pass"))
        elif names & AUTOGRAD and positional:
            self.steps.append((node, self._statement(), [(scope, positional[0])], "autograd on the loss"))
        elif names & (GRAD_TRANSFORMS | MODEL_FIRST_GRAD_TRANSFORMS) and positional:
            target = positional[-1] if names & MODEL_FIRST_GRAD_TRANSFORMS else positional[0]
            if type(target) is cst.Lambda:
                self.steps.append((node, self._statement(), [(scope, target.body)], "a gradient transform"))
            elif isinstance(target, cst.Name | cst.Attribute):
                last = target.value if isinstance(target, cst.Name) else target.attr.value
                self.deferred.append((node, self._statement(), scope, last, "grad"))
        elif name == "step" and not positional and type(node.func) is cst.Attribute:
            receiver_words = set(words(dotted(node.func.value).replace(".", "_")))
            if receiver_words & OPTIMISER_WORDS:
                self.steps.append((node, self._statement(), [], "an optimiser step"))
        elif name is not None and not positional and _optimiser_step_method(node.func, name):
            # accelerator.take_optimizer_step(), self._optimizer_step(): a wrapper's method that applies
            # the optimiser's update to the gradients a backward pass (maybe another file's) left
            self.steps.append((node, self._statement(), [], "an optimiser step"))
        elif (
            name is not None
            and (name in ("step", "update", "forward") or name.startswith("step_"))
            and isinstance(holder := getattr(node.func, "value", None), cst.Name)
            and not (name == "forward" and self.no_grad)
        ):
            # ppo_trainer.step(queries, responses, rewards), trainer.update(replay_buffer),
            # trainer.step_on_groups(groups): a trainer's own optimisation step on a batch (TRL's
            # PPOTrainer before 0.12), once the name holds one; a trainer's ``forward(batch)`` steps too
            # (a model's forward is no trainer's)
            self.deferred.append((node, self._statement(), scope, holder.value, "trainer"))
        elif (
            name == "compile"
            and type(node.func) is cst.Attribute
            and type(node.func.value) is cst.Name
            and (loss := keyword(node, "loss")) is not None
            and keyword(node, "optimizer") is not None
        ):
            self.compiled[node.func.value.value] = (scope, loss.value)
        elif (
            name in TRAINER_RUNS
            and type(node.func) is cst.Attribute
            and not (positional and literal_bool(positional[0]) is False)  # ``model.train(False)``: eval mode
            and not _evaluates_only(node)
        ):
            receiver = node.func.value
            # (a runner handed a loss may only measure it: ``run`` trains only as a trainer's method)
            given = [a.value for a in node.args if _names_a_loss(a)] if name != "run" else []
            if name == "fit" and not given and type(receiver) is cst.Name and receiver.value in self.compiled:
                # model.compile(loss=CausalLMLoss(), optimizer=opt); model.fit(loader): Keras and its
                # torch ports (torch4keras, bert4torch) train on the loss the model was compiled with
                self.steps.append(
                    (node, self._statement(), [self.compiled[receiver.value]], "fit() of a compiled model")
                )
            elif given:
                # policy.train(data, loss_fn), engine.train_batch(input_=x, loss_fn=sft_loss) (pipeline
                # engines): a worker trains with the loss it is handed
                self.steps.append((node, self._statement(), [(scope, given[0])], f"{name}() given a loss"))
            elif (
                type(receiver) is cst.Call
                and self._constructs_trainer(receiver)
                and self._trainer_runs(node, receiver)
            ):
                self.trainer_of_step[id(node)] = receiver
                roots: list[tuple[int, cst.BaseExpression]] = []
                self.chained.append((receiver, scope, roots))  # (a model's forward may come below)
                self.steps.append((node, self._statement(), roots, f"{name}() of a trainer"))
            elif id(node) in self.loss_outputs and positional and name in ("train", "train_batch"):
                # ``loss, grad_norm = network.train(batch)``: an object's training step on the batch it
                # is handed, returning its loss (a mode switch, ``model.train()``, returns the model)
                self.steps.append((node, self._statement(), [], f"{name}() of an object, returning its loss"))
            elif type(receiver) is cst.Name:
                self.deferred.append((node, self._statement(), scope, receiver.value, "trainer"))
            elif (
                type(receiver) is cst.Attribute
                and type(receiver.value) is cst.Name
                and receiver.value.value == "self"
            ):
                # self.trainer = GameGRPOTrainer(cfg) in one method, self.trainer.train() in another
                self.deferred.append((node, self._statement(), scope, SELF + receiver.attr.value, "trainer"))
        elif (
            (name in TRAINER_EVALUATIONS or (name in TRAINER_RUNS and _evaluates_only(node)))
            and type(node.func) is cst.Attribute
            and type(node.func.value) is cst.Name
        ):
            # trainer.evaluate(), trainer.train(data, eval_only=True): a trainer built to measure a
            # model, if the name holds a trainer
            self.deferred.append((node, self._statement(), scope, node.func.value.value, "evaluates"))
        elif (
            name is not None
            and (name.startswith("train_") or name.endswith("_train"))
            and not set(words(name)) & (NOT_TRAINING_SCOPES | {"predict"} | TRAINING_DATA_WORDS)
            and type(node.func) is cst.Attribute
            and type(node.func.value) is cst.Name
        ):
            # trainer.train_rlhf(experience), trainer.accelerate_train(): a trainer's own training
            # method, once the name is a trainer
            self.deferred.append((node, self._statement(), scope, node.func.value.value, "trainer"))
        elif updates_model(name, POLICY_WORDS) and type(node.func) is cst.Attribute:
            self.steps.append((node, self._statement(), [], f"{name}(): a worker's policy update"))
            if isinstance(receiver := node.func.value, cst.Name):
                # actor = PPORayActorGroup(...); actor.async_fit_actor_model(...): the worker group's
                # class is named for what its workers train (its loss lives in its own module)
                built = [last_name(v.func) for v in self._bound(scope, receiver.value) if type(v) is cst.Call]
                self.holders[id(node)] = [b for b in built if b]
        elif updates_model(name, CRITIC_WORDS) and type(node.func) is cst.Attribute:
            message = f"{name}(): a learned value model, the actor-critic (PPO) family"
            self.report(node, "gradient_step", message, kind="ppo", variant="ppo", on_policy=True)
        elif name == "apply_updates" or "optax.apply_updates" in names:
            self.steps.append((node, self._statement(), [], "an optimiser update"))
        elif name == "create" and dotted(node.func).endswith(HOSTED_FINE_TUNING):
            # client.fine_tuning.jobs.create(training_file=..., method={"type": "dpo"}): the provider
            # trains the weights; supervised unless the method says preference optimisation
            kind = "dpo" if _hosted_preference_job(node) else "sft"
            message = "a hosted fine-tuning job (the provider takes the gradient steps)"
            job = self.report(node, "gradient_step", message, kind=kind, variant="hosted")
            if kind == "sft":
                # (settings handed as ``**kwargs`` are read once the file's functions are all seen)
                self.hosted_jobs.append((job, node, self.functions[-1]))
        elif name == SET_LOSS and (trained := dotted(getattr(node.func, "value", None))):
            set_to = keyword(node, "loss")
            loss_set = positional[0] if positional else set_to.value if set_to is not None else None
            if loss_set is not None:
                self.set_losses[trained] = (self.functions[-1], loss_set)
        elif name in REMOTE_STEPS:
            loss = keyword(node, "loss_fn")
            value = loss.value if loss is not None else None
            if value is None:
                # Tinker's ``forward_backward(datums, "cross_entropy")``: the service's loss by position
                value = next(
                    (a.value for a in node.args if a.keyword is None and type(a.value) is cst.SimpleString),
                    None,
                )
            named = value.evaluated_value if type(value) is cst.SimpleString else None
            if isinstance(named, str) and named in REMOTE_LOSSES:
                kind, variant = REMOTE_LOSSES[named]
                self.report(
                    node,
                    "gradient_step",
                    f"{REMOTE_STEP} with the service's {named} loss",
                    kind=kind,
                    variant=variant,
                    on_policy=True if kind == "ppo" else None,
                )
            elif (setting := _loss_setting(node, value)) is not None:
                # ``forward_backward(datums, loss_fn=args.loss_fn)``: the loss the setting names, read
                # once the flags are seen (its default), or what an ``if`` around the call allows
                key = dotted(setting)
                self.named_losses.append((node, self._statement(), key, *self._allowed(key)))
            elif (loss_function := _handed_function(node, value)) is not None:
                # ``trainer.forward_backward(_sft_loss, ids, loss_args=...)``: a loss function of the
                # file handed to the remote step, read once all is seen (else the step stays unknown)
                self.deferred.append((node, self._statement(), self.functions[-1], loss_function, "remote"))
            elif value is None and (set_loss := self._set_loss(node)) is not None:
                # ``model.set_loss(DPOLoss(...)); model.forward_backward(inputs=batch)``: the loss the
                # object was told to train with before
                self.steps.append((node, self._statement(), *set_loss))
            else:
                self.steps.append((node, self._statement(), [], REMOTE_STEP))

    def _loss_library(self, functions: dict[str, list[tuple[int, list[cst.BaseExpression]]]]) -> None:
        """Report the losses a file defines for another file to train with (``def default_loss_fn``).

        Without a step here, a function named for a loss whose return value has a policy-gradient,
        preference or distillation form is that stage's loss, a component of the file that steps. A
        plain cross-entropy is left alone: a perplexity evaluation computes one too.
        """
        resolver = self.context.resolver
        module = resolver.module_scope

        def names_of(func: cst.BaseExpression) -> set[str]:
            return resolver.qualified_names(func, self.scopes_of.get(id(func), module))

        slicer = self._slicer(functions, names_of)
        for name, entries in functions.items():
            if name in CALLED_METHODS:
                self._loss_classes(slicer, entries)
                continue
            if not LOSS_NAME_WORDS & set(words(name)) or NOT_TRAINING_SCOPES & set(words(name)):
                continue  # (``def eval_loss``: a measurement, whatever its form)
            roots = [(i, r) for i, returned in entries for r in returned]
            if not roots:
                continue
            verdict = loss_form(slicer.features(roots))
            if verdict.kind is None or (verdict.kind == "sft" and verdict.data_source != "distilled"):
                continue
            definition = next((self.defined[i] for i, _ in entries if i in self.defined), None)
            verdict = _group_relative(verdict, self.where.get(id(definition), (name,)))
            self._report_loss(definition or roots[0][1], name, verdict, None)

    def _loss_classes(self, slicer: Slice, entries: list[tuple[int, list[cst.BaseExpression]]]) -> None:
        """Report a loss class's ``__call__``/``forward`` (``class TargetLMLoss(Loss)``) as its stage's loss.

        A class deriving from one named for a loss (``class VariousDivergence(CrossEntropyLoss)``) is one.

        A class named for a loss is defined to be trained with, so even a plain cross-entropy on the
        targets it masks is a supervised loss here (a perplexity evaluation does not define one).
        """
        for function_id, returned in entries:
            definition = self.defined.get(function_id)
            where = self.where.get(id(definition), ()) if definition is not None else ()
            owner = where[1] if len(where) > 1 else ""
            # the class or one it derives from named for a loss (``class KD(CrossEntropyLoss)``)
            lineage = (
                {q.rsplit(".", 1)[-1] for q in self.context.resolver.ancestry(owner)} if owner else set()
            )
            if (
                not returned
                or definition is None
                or not any(LOSS_NAME_WORDS & set(words(n)) for n in lineage)
                or (definition.name.value == "compute" and len(definition.params.params) < 2)
            ):
                continue
            verdict = loss_form(slicer.features([(function_id, r) for r in returned]))
            if verdict.kind is None:
                continue
            # the class's signature may recur (a base class's), so it is located by its own statement
            self._report_loss(definition, owner, _group_relative(verdict, where), definition)
            return

    def _report_loss(
        self, node: cst.CSTNode, name: str, verdict: Verdict, statement: cst.CSTNode | None
    ) -> None:
        """Record the loss that ``name`` defines for another file to train with."""
        self.report(
            node,
            "loss",
            f"defines {name}: {verdict.why}",
            statement=statement,
            kind=verdict.kind,
            variant=verdict.variant,
            data_source=verdict.data_source,
        )

    def _report_named(
        self, node: cst.CSTNode, statement: cst.CSTNode | None, named: tuple[str, str], where: str
    ) -> None:
        """Record the stage a name says (``route_word``'s label and word) for the step at ``node``."""
        label, word = named
        kind = LABEL_KINDS[label]
        chosen = {(e.kind, e.variant) for v in self.estimators if (e := estimator_entry(v)) is not None}
        if kind in POLICY_GRADIENT and len(chosen) == 1 and (set_kind := next(iter(chosen)))[0]:
            # a PPO-named worker set to estimate advantages by group normalisation trains GRPO: the
            # setting the file fixes says more than the class's name
            estimator = ", ".join(sorted(set(self.estimators)))
            message = f"{where}, its advantage estimator set to {estimator}"
            self._name_stage(node, statement, str(set_kind[0]), set_kind[1], message)
            return
        self._name_stage(node, statement, kind, word if word != kind else None, f"{where}, named for {label}")

    def _name_stage(
        self, node: cst.CSTNode, statement: cst.CSTNode | None, kind: str, variant: str | None, message: str
    ) -> None:
        """Record a step's stage that names decide (its loss is in a file not read here)."""
        self.context.findings.append(
            Finding(
                "NamedStep",
                "stage",
                kind=kind,
                variant=variant,
                on_policy=True if kind in POLICY_GRADIENT else None,
                message=message,
                node=node,
                statement=statement,
            )
        )

    def _named(self, node: cst.CSTNode, statement: cst.CSTNode | None) -> bool:
        """Name the stage of a step whose loss is not classified by the code it sits in (``def grpo_train``).

        Return whether a name did.

        The name is the only evidence left, so the stage is decided by name (TAXONOMY.md: a name never
        decides against a loss, and here there is none to go against).
        """
        # the helper or module class handed the optimiser (``DPOTrainModule(model, optim=...)``), the
        # class of the object that holds it (``PPOAgent(policy_optimizer=opt).run_train()``), the
        # project module the helper comes from (``from run_sft import update_step``), then the
        # functions and classes the step sits in
        callee = [last_name(node.func)] if type(node) is cst.Call else []
        for name, where in (
            *((c, "the training run is named") for c in self.ran.get(id(node), [])),
            *((c, "the optimiser is handed to") for c in callee),
            *((c, "the update is made by a") for c in self.holders.get(id(node), [])),
            *((m, "the helper stepping it comes from") for m in self._helper_modules(node)),
            *((f, "the gradient step is in") for f in self.where.get(id(node), ())),
        ):
            named = route_word(name, strict=True)
            if named is not None and named[0] in LABEL_KINDS:
                self._report_named(node, statement, named, f"{where} {name}")
                return True
        # (an object's or a module's ``finetune``: ``autocrit.finetune(accelerator, model, ...)`` handed
        # an optimiser too; a bare helper ``finetune(policy, rollouts, opt)`` is anyone's)
        fine_tuning = id(node) in self.fine_tuned or (
            type(node) is cst.Call and type(node.func) is cst.Attribute and callee[0] in FINE_TUNE_METHODS
        )
        if fine_tuning and id(node) not in self.ran and _supervised_fine_tuning(node):
            # model.finetune(dataset) told no stage, in nothing named for one: a wrapper fine-tunes on
            # the data it is given, supervised unless a stage is named (ProgressGym's, xTuring's, DSPy's)
            message = f"{callee[0]}() given data and no stage: supervised fine-tuning"
            self._name_stage(node, statement, "sft", None, message)
            return True
        return False

    def _helper_modules(self, node: cst.CSTNode) -> list[str]:
        """Last parts of the modules a called helper comes from (``run_sft`` of ``run_sft.update_step``)."""
        if not (type(node) is cst.Call and type(node.func) is cst.Name):
            return []  # (a method's qualified name ends in its class, not its module)
        scope = self.scopes_of.get(id(node.func))
        known = self.context.resolver.qualified_names(node.func, scope) if scope is not None else set()
        return [q.split(".")[-2] for q in sorted(known) if q.count(".") >= 1]

    def _handed_loss(self, made: cst.Call, scope: int) -> list[tuple[int, cst.BaseExpression]]:
        """Return the loss a trainer no table knows is built with (``Trainer(m, loss_fn=GPTLMLoss())``).

        A library's trainer of a kind the table has no entry for trains with the loss it is handed,
        so that loss's form is the stage's. Known trainers are the tables' to say (their loss
        settings are strings: ``loss_type="sigmoid"``), and a literal names no form.
        """
        cls = self._trainer_class(made, scope)
        func_scope = self.scopes_of.get(id(made.func))
        known = (
            self.context.resolver.qualified_names(cls, func_scope)
            if cls is not None and func_scope is not None
            else set()
        )
        tables = [t for q in known if (t := trainer_of(q)) is not None]
        generic = bool(tables) and all(t.variant in GENERIC_TRAINERS for t in tables)
        if not generic and (tables or any(entry_for(q) is not None for q in known)):
            return []
        # (a generic trainer, ``transformers.Trainer(compute_loss_func=f)``, differentiates the loss
        # it is handed instead of its model's)
        return [
            (scope, a.value)
            for a in made.args
            if _names_a_loss(a) and isinstance(a.value, cst.Call | cst.Name | cst.Attribute)
        ]

    def _factory_product(self, factory: cst.BaseExpression) -> cst.BaseExpression | None:
        """Return the one trainer class a trainer factory of this file builds, if it returns one.

        ``def initialize_trainer(cfg): return PPOTrainerWrapper(...)``: its callers train that class
        (a class named with "trainer", a trainer's wrapper too: what a trainer factory returns is the
        trainer). A factory returning several classes (one per setting) names none of them.
        """
        if type(factory) is not cst.Name or factory.value not in self.returns:
            return None
        built = [
            value.func
            for function, returned in self.returns[factory.value]
            # (the module's function: a method or a nested function of that name is another's)
            if self.where.get(function) == (factory.value,)
            for value in returned
            if type(value) is cst.Call
            and _tail(value.func)[:1].isupper()
            and "trainer" in words(_tail(value.func))
        ]
        return built[0] if built and len({dotted(b) for b in built}) == 1 else None

    def _agent_named(self, node: cst.CSTNode, statement: cst.CSTNode | None, class_name: str) -> None:
        """Report a project's policy-gradient trainer named for training an agent as interactive.

        ``AgenticRayPPOTrainer(...).fit()``, ``ToolGRPOTrainer(reward_funcs=...)``: its rollouts are its
        episodes of tool calls or turns.
        """
        if AGENT_WORDS & set(words(class_name)) and not _names_algorithm_class(class_name):
            # (an RL library's ``PPOAgent`` is the learner the algorithm is, named as RL names it)
            message = f"the gradient step trains a {class_name}, named for training an agent"
            self.report(node, "interactive", message, statement=statement, interactive=True)

    def _model_loss(self, made: cst.Call, scope: int) -> list[tuple[int, cst.BaseExpression]]:
        """Return the loss a generic trainer differentiates when the file writes its model's ``forward``.

        transformers' ``Trainer`` trains the loss its model's forward pass returns; a model class of this
        file deriving from a language-model head (``class LlamaForRLMEC(LlamaForCausalLM)``) says in
        its ``forward`` what that loss is. Trainers of a route (TRL's) compute their own.
        """
        if not self.forward_losses:
            return []
        func_scope = self.scopes_of.get(id(made.func))
        known = (
            self.context.resolver.qualified_names(made.func, func_scope) if func_scope is not None else set()
        )
        generic = any((t := trainer_of(q)) is not None and t.variant in GENERIC_TRAINERS for q in known)
        return list(self.forward_losses) if generic else []

    def _named_trainer(self, node: cst.CSTNode, statement: cst.CSTNode | None) -> bool:
        """Name the stage of a trainer's ``train()`` by the trainer's class when no library knows it.

        A project's own trainer (``from dschat.rlhf.ppo_trainer import DeepSpeedPPOTrainer``, or a
        class called just ``Trainer`` from a module ``dpo_trainer``) is named for what it trains; its
        loss is in a file not read here, so the name is the evidence, as for a step's function.
        Trainers a library is known for are left to the trainer table (they are reported already).
        """
        made = self.trainer_of_step.get(id(node))
        cls = self._trainer_class(made, self.trainer_scope.get(id(node))) if made is not None else None
        if made is None or cls is None:
            return False
        if keyword(made, "reward_funcs") is not None and names_trainer_class(last_name(made.func)):
            # built to GRPOTrainer's contract: TrainerConstruction reports that stage
            self._agent_named(node, statement, last_name(made.func))
            return True
        scope = self.scopes_of.get(id(made.func))
        if (product := self._factory_product(cls)) is not None:
            # ``trainer = initialize_trainer(cfg)``, the file's function returning ``PPOTrainerWrapper(...)``:
            # the class it builds is the trainer trained, named where it is built
            cls, scope = product, self.scopes_of.get(id(product))
        known = self.context.resolver.qualified_names(cls, scope) if scope is not None else set()
        qualified = sorted(known) or [dotted(cls)]
        for name in qualified:
            table = trainer_of(name)
            if (
                table is not None
                and table.variant in GENERIC_TRAINERS
                and not any(map(_names_a_loss, made.args))
            ):
                # ``transformers.Trainer(model=m, ...)`` handed no loss trains its model's own: the
                # function it runs in (``def dpo():``) names nothing against that
                return True
            if table is not None or entry_for(name) is not None:
                return False  # the trainer table or the framework table says what it trains
            *module, class_name = name.split(".")
            named = route_word(class_name) if class_name != "Trainer" else None
            if named is None and module:
                # a module of one trainer is named for it (``dpo_trainer``); any other name, strictly
                named = route_word(module[-1], strict="trainer" not in words(module[-1]))
            if named is not None and named[0] in LABEL_KINDS:
                self._report_named(node, statement, named, f"the gradient step trains a {name}")
                if named[0] in ("GRPO", "PPO"):
                    self._agent_named(node, statement, class_name)
                return True
        for model_class in self._imported_model_handed(node, made):
            # ``trainer.fit(MyRewardTransformer(...))``: a loop no table knows (Lightning's) trains
            # the loss of the model it is handed, whose class, imported, is named for its route
            said = (
                ("REWARD_MODEL", "reward")
                if names_a_reward_model(model_class)
                else route_word(model_class, True)
            )
            if said is not None and said[0] in LABEL_KINDS:
                self._report_named(node, statement, said, f"the gradient step trains a {model_class}")
                return True
            if model_class[:1].isupper():
                break  # the model's class, named for no route (a helper's product says no class)
        receiver = node.func.value if type(node) is cst.Call and type(node.func) is cst.Attribute else None
        if type(receiver) is cst.Name:
            # the code names the trainer object for what it trains (``dpo_trainer = NCATrainer(...)``)
            named = route_word(receiver.value, strict=True)
            if named is not None and named[0] in LABEL_KINDS:
                message = f"the gradient step trains a {qualified[0]}, held as {receiver.value}"
                self._report_named(node, statement, named, message)
                return True
        if (configured := self._route_config()) is not None and not self._own_config(
            made, self.trainer_scope.get(id(node), 0)
        ):
            # a project's trainer built beside one route's imported config class
            # (``H4ArgumentParser((ModelArguments, DataArguments, DPOConfig))``) trains that route:
            # it is that library trainer's subclass or twin, taking its settings
            label, config = configured
            message = f"the gradient step trains a {qualified[0]} configured by {config}"
            self._report_named(node, statement, (label, LABEL_KINDS[label]), message)
            return True
        if self._hf_arguments():
            # a project's trainer built beside transformers' TrainingArguments is a Trainer subclass:
            # it trains the loss its model's forward pass returns, like the generic Trainer
            message = (
                f"the gradient step trains a {qualified[0]} configured by transformers' TrainingArguments"
            )
            self._name_stage(node, statement, "sft", "hf_trainer", f"{message}: a Trainer subclass")
            return True
        if any(_names_fine_tuning(q.rsplit(".", 1)[-1]) for q in qualified):
            # ``LoRAFineTuning(model_adapter=m).train(data)``: a class named for fine-tuning and for no
            # stage fine-tunes on the data it is given, supervised, as ``model.finetune(data)`` does
            message = f"the gradient step trains a {qualified[0]}, named for fine-tuning and no stage"
            self._name_stage(node, statement, "sft", None, f"{message}: supervised fine-tuning")
            return True
        given = {a.keyword.value for a in made.args if a.keyword is not None}
        if given >= HF_TRAINER_KEYWORDS and not given & OBJECTIVE_KEYWORDS:
            # built as transformers' Trainer is (model, args, train_dataset, data_collator) and handed
            # nothing another objective needs: a Trainer subclass training its model's forward loss
            message = f"the gradient step trains a {qualified[0]} built with transformers' Trainer arguments"
            self._name_stage(node, statement, "sft", "hf_trainer", f"{message}: a Trainer subclass")
            return True
        return False

    def _own_config(self, made: cst.Call, scope: int) -> bool:
        """Say whether a trainer is handed a config object of another class than a route's own.

        ``MTRLVRTrainer(model, config=RLVRConfig(...))`` beside ``TrlParser((..., SFTConfig))``: the
        imported route's config holds the run's common settings (output folder, learning rate); the
        trainer takes its own.
        """
        for arg in made.args:
            if arg.keyword is None or arg.keyword.value not in CONFIG_KEYWORDS:
                continue
            values = [arg.value] if type(arg.value) is cst.Call else []
            if type(arg.value) is cst.Name:
                values = [v for v in self._bound(scope, arg.value.value) if type(v) is cst.Call]
            for value in values:
                # a class of the project's own, named for its method (``RLVRConfig``); not a bare
                # ``Config`` nor a library's generic settings (``TrainingArguments``)
                built = last_name(value.func)
                stem = config_stem(built)
                if stem and route_word(stem) is None and built not in HF_ARGUMENT_CLASSES:
                    return True
        return False

    def _route_config(self) -> tuple[str, str] | None:
        """Return the route of the imported config classes the file uses, if one (and which).

        ``trl.DPOConfig`` (or alignment-handbook's) configures DPO; a file using config classes of two
        routes names neither.
        """
        found: dict[str, str] = {}
        for q in sorted(self._module_names()):
            stem = config_stem(q.rsplit(".", 1)[-1])
            if "." not in q or stem is None:
                continue  # (an imported class: the library's, or a project's own for that route)
            named = route_word(stem)
            if (
                named is not None
                and named[0] == "REWARD_MODEL"
                and q.split(".", 1)[0] != "trl"
                and not REWARD_MODEL_CONFIG_WORDS & set(words(stem))
            ):
                continue  # (a project's ``RouterRewardConfig(reward_metric="em")``: an RL run's reward)
            if named is not None and named[0] in LABEL_KINDS:
                found.setdefault(named[0], q)
        return next(iter(found.items())) if len(found) == 1 else None

    def _hf_arguments(self) -> bool:
        """Say whether the file takes transformers' ``TrainingArguments`` (a HF Trainer's settings).

        Also a project's class of that name parsed by transformers' argument parser
        (``HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))``, the class from a
        star import or the project's own module): LLaVA-style projects extend the Trainer's settings
        under the same name.
        """
        return self.hf_parsed or bool(self._module_names() & HF_ARGUMENTS)

    def _parses_hf_arguments(self, call: cst.Call) -> bool:
        """Say whether a call is transformers' ``HfArgumentParser`` handed a ``TrainingArguments`` class."""
        if HF_PARSER not in self.names(call.func):
            return False
        handed = [a.value for a in call.args[:1]]
        if handed and isinstance(handed[0], cst.Tuple | cst.List):
            handed = [e.value for e in handed[0].elements]
        return any(last_name(h) in HF_ARGUMENT_CLASSES for h in handed)

    def _module_names(self) -> set[str]:
        """Qualified names the module binds, and the bases of its classes.

        A base counts as used: LLaVA's ``class TrainingArguments(transformers.TrainingArguments)``
        extends them.
        """
        resolver = self.context.resolver
        used = {q for names in resolver.module_scope.bindings.values() for q in names}
        return used | {q for bases in resolver.class_bases.values() for q in bases}

    def _hands_on_optimiser(self, node: cst.Call, function: str | None, scope: int) -> bool:
        """Say whether a training helper (``train_model_simple``) is handed an optimiser built here."""
        if function is None or not any(
            type(a.value) is cst.Name or _self_attribute(a.value) for a in node.args
        ):
            return False  # (the optimiser is handed by name: most calls are answered here)
        named = words(function)
        if _reads_or_keeps(named):
            # get_global_step(optimizer), log_step(optimizer), wandb_step_logger(self.optimizer),
            # restore_training_state(ckpt, model, optimizer): it reads or keeps it, it does not step
            return False
        said = set(named)
        if not (
            said & TRAINING_WORDS
            or updates_model(function, POLICY_WORDS)
            or (said & STEP_WORDS and not said & LEARNING_RATE_WORDS)
        ):
            return False  # train_model(...), fit(...), update_policy(...), update_step(...): it steps it
        return self._given_optimiser(node, scope)

    def _hands_on_loss_function(self, node: cst.Call, function: str | None) -> bool:
        """Say whether a helper named for training (``train_and_save_model``) is handed a loss function.

        A framework's entry is the table's to say, and the file's own function is read where it is
        defined.
        """
        said = words(function) if function is not None else ()
        if not said:
            return False
        # named for training first (``train_and_save_model``), or for running it
        # (``run_supervised_train_loop``); not ``evaluate_after_training``, ``make_training_config``
        if not (said[0] in TRAINING_WORDS or (said[0] in RUN_VERBS and TRAINING_WORDS & set(said[1:]))):
            return False
        if (function is not None and function[:1].isupper()) or set(said) & (
            SETTINGS_WORDS | TRAINING_DATA_WORDS | REPORTING_WORDS
        ):
            return False  # (``TrainingConfig(loss_fn=...)``, ``train_data(...)``: settings or data)
        if not any(_names_a_loss_function(a) for a in node.args):
            return False
        return not any(entry_for(q) for q in self.names(node.func)) and not self._defined_here(node.func)

    def _later_loops(self) -> None:
        """Decide the calls handing an environment to a function of this file defined further down.

        One that takes its own step (its trainer's ``train()`` too, resolved once the file is read)
        and hands the environment to no other file's function trains on its own rollouts, as one
        defined before its call does; any other trains on the environment's episodes.
        """
        stepped = set(self.stepping) | {
            tuple(reversed(self.where[id(step)])) for step, *_ in self.steps if id(step) in self.where
        }
        for call, statement, name, candidates in self.later_loops:
            if not self._own_rollouts(candidates, stepped):
                self._environment_loop(call, statement, name)

    def _environment_loop(self, node: cst.Call, statement: cst.CSTNode | None, name: str) -> None:
        """Record a training loop handed an environment whose body is not read here, as a step."""
        self.steps.append((node, statement, [], f"{name}() given an environment"))
        message = f"{name}() trains on the episodes of the environment it is handed"
        self.report(node, "interactive", message, statement=statement, interactive=True)

    def _steps_here(self, func: cst.BaseExpression) -> bool:
        """Say whether a called name is a function of this file seen taking a gradient step itself.

        Its loss and the samples it trains on are then read here; one whose step is not seen (an
        agent's own update, a remote pass), that comes later in the file, or that hands the
        environment on to another file's function (whose episodes it trains on) is known by its call.
        """
        if not self._defined_here(func):
            return False
        name: str = func.value  # type: ignore[attr-defined]
        return self._own_rollouts(self._callees(name), self.stepping)

    def _callees(self, name: str) -> list[tuple[str, ...]]:
        """Return the functions a name called from here may be, innermost first.

        A local one of the innermost function around that has one, else the module's.
        """
        around = self.function_names
        return [(*around[:k], name) for k in range(len(around), -1, -1)]

    def _own_rollouts(self, callees: list[tuple[str, ...]], stepped: set[tuple[str, ...]]) -> bool:
        """Say whether the function called takes its own step and hands the environment on to no one."""
        seen = next((c for c in callees if c in stepped or c in self.handing_environment), None)
        return seen is not None and seen in stepped and seen not in self.handing_environment

    def _imported_model_handed(self, node: cst.CSTNode, made: cst.Call) -> list[str]:
        """Return the imported classes (or builders) of the model a trainer's run is handed, in order.

        ``trainer.fit(pl_model)`` or ``Trainer(model=model)``, the name bound here to an object of an
        imported class (``pl_model = MyRewardTransformer(...)``); a class of this file is read instead.
        Every binding, in order: a helper's product (``model = load_checkpoint(model)``) may be
        followed by the class.
        """
        handed = [k.value for k in (keyword(made, "model"),) if k is not None]
        if type(node) is cst.Call:
            handed += [a.value for a in node.args if a.keyword is None][:1]
            handed += [k.value for k in (keyword(node, "model"),) if k is not None]
        scope = self.trainer_scope.get(id(node), 0)
        found: list[str] = []
        for value in handed:
            built = self._bound_or_handed(scope, value.value) if type(value) is cst.Name else [(scope, value)]
            if type(value) is cst.Name:
                built += [p for _, b in built for p in self._model_factory_product(b, value.value)]
            for where, bound in built:
                call = self._unwrapped(bound, where, value)
                if type(call) is not cst.Call:
                    continue
                cls = _built_class(call)  # (``Model(...).to(device)``, ``RewardModel.from_pretrained(p)``)
                if type(cls) is cst.Name and not self._defined_here(cls):
                    found.append(cls.value)
        return found

    def _model_factory_product(
        self, value: cst.BaseExpression, name: str
    ) -> list[tuple[int, cst.BaseExpression]]:
        """Return ``(function, value)`` of what a model factory of this file returns as ``name``.

        ``model, tok, cfg = create_model_and_tokenizer(...)`` where the module's function ends in
        ``return model, tokenizer, peft_config``: what it binds to ``model`` there (one call followed,
        the name's own bindings in that function; a tuple's element is found by the name it returns).
        """
        if type(value) is not cst.Call or type(value.func) is not cst.Name:
            return []
        factory = value.func.value
        if not self._defined_here(value.func):
            return []
        at = self.unpacked.get((id(value), name))
        products: list[tuple[int, cst.BaseExpression]] = []
        for function, returned in self.returns.get(factory, []):
            if self.where.get(function) != (factory,):
                continue  # (a method or a nested function of that name is another's)
            for result in returned:
                elements = [e.value for e in result.elements] if isinstance(result, cst.Tuple) else [result]
                if len(elements) > 1:
                    # the element in the unpacked name's place, else the one returned under its name
                    elements = (
                        elements[at : at + 1]
                        if at is not None and at < len(elements)
                        else [e for e in elements if type(e) is cst.Name and e.value == name]
                    )
                for element in elements:
                    if type(element) is cst.Name:
                        products += [(function, v) for v in self.assigns.get((function, element.value), [])]
                    elif type(element) is cst.Call:
                        products.append((function, element))
        classes = {c for c in (last_name(_built_class(v)) for _, v in products) if c[:1].isupper()}
        # a factory returning models of several classes (``RewardModel`` or a causal LM, by a flag)
        # builds whichever its caller asks for: not known here
        return products if len(classes) <= 1 else []

    def _unwrapped(
        self, value: cst.BaseExpression, scope: int, name: cst.BaseExpression
    ) -> cst.BaseExpression | None:
        """Return the model a peft wrapper is handed (``get_peft_model(base, cfg)`` -> what ``base`` is).

        Written inside it, or bound to another name first (one binding followed); a wrapper handed
        the name it is bound to again (``model = get_peft_model(model, cfg)``) refers back to that
        name's other bindings, read on their own: None. Any other value is returned as it is.
        """
        while (
            type(value) is cst.Call
            and value.args
            and self.names(value.func) & ADAPTER_WRAPPERS
            and value.args[0].keyword is None
        ):
            value = value.args[0].value
            if type(value) is cst.Name:
                if type(name) is cst.Name and value.value == name.value:
                    return None
                bound = self._bound(scope, value.value)
                return bound[-1] if len(bound) == 1 else None
        return value

    def _defined_here(self, func: cst.BaseExpression) -> bool:
        """Say whether a called name is bound by this file, not imported (its body is read here)."""
        return type(func) is cst.Name and not any(
            q in self.context.resolver.imported for q in self.names(func)
        )

    def _given_optimiser(self, call: cst.Call, scope: int) -> bool:
        """Say whether a call is handed, by name, an optimiser built in this file.

        Or handed as one by keyword (``optimizer=optimizer``), however it was built: a helper's
        product (``model, optimizer = build_and_load_model(cfg)``) is an optimiser still.
        """
        handed: list[tuple[cst.Arg, str, list[cst.BaseExpression]]] = []
        for arg in call.args:
            value = arg.value
            if type(value) is cst.Attribute and _self_attribute(value):
                # (``self.optimizer``: what the attribute was set to, ``self.optimizer = AdamW(...)``)
                handed.append((arg, value.attr.value, self.attributes.get(value.attr.value, [])))
            elif type(value) is cst.Name:
                handed.append((arg, value.value, self._bound(scope, value.value)))
        return any(
            (
                arg.keyword is not None
                and set(words(arg.keyword.value)) & OPTIMISER_KEYWORD_WORDS
                and set(words(name)) & OPTIMISER_KEYWORD_WORDS
            )
            or any(type(v) is cst.Call and self._builds_optimiser(v) for v in values)
            for arg, name, values in handed
        )

    def _built_with_environment(self, scope: int, name: str) -> str | None:
        """Return the class ``name`` was built by, when it was built here and handed an environment.

        ``algo = LLMPPOAgent(envs, lm_server)``: a class of no table's, not named a trainer, given an
        environment by keyword or by name.
        """
        for where, value in self._bound_or_handed(scope, name):
            if (
                type(value) is cst.Call
                and last_name(value.func)[:1].isupper()
                and not self._constructs_trainer(value, where)
                and any(_names_environment(a) for a in value.args)
            ):
                return last_name(value.func)
        return None

    def _trains_given_optimiser(self, node: cst.Call, name: str | None, scope: int) -> bool:
        """Say whether ``agent.run_train()`` trains an object that was built with this file's optimiser.

        ``PPOAgent(policy_optimizer=opt, ...)`` then ``agent.run_train()``: the object steps the
        optimiser it holds (a project's own trainer, named for its algorithm rather than "trainer").
        """
        said = words(name) if name is not None else ()
        if not said or type(node.func) is not cst.Attribute:
            return False
        if set(said) & NOT_TRAINING_SCOPES or not (
            said[0] in TRAINING_WORDS
            or (len(said) > 1 and said[0] in RUN_VERBS and said[1] in TRAINING_WORDS)
        ):
            return (
                False  # ``train_epoch()``, ``run_train()``; not ``save_train_stats()``, ``run_train_eval()``
            )
        receiver = node.func.value
        if type(receiver) is not cst.Name:
            return False
        holders = [
            v
            for v in self._bound(scope, receiver.value)
            if type(v) is cst.Call
            and not self._constructs_trainer(v, scope)  # (a trainer's train() is decided as a trainer's)
            and not (type(v.func) is cst.Name and self._bound(scope, v.func.value))  # a class picked
            and self._given_optimiser(v, scope)
        ]
        if holders:
            self.holders[id(node)] = [last_name(v.func) for v in holders]
        return bool(holders)

    def _builds_optimiser(self, call: cst.Call) -> bool:
        """Say whether a call constructs an optimiser (``torch.optim.AdamW(...)``, ``bnb.optim.Lion``).

        A project's own optimiser class is known by what it is given: the model's parameters
        (``MemoryEfficientAdamW(model.parameters(), lr=...)``).
        """
        if any("optim" in q.split(".")[:-1] and "lr_scheduler" not in q for q in self.names(call.func)):
            return True
        said = words(last_name(call.func))
        if len(said) > 1 and said[-1] in OPTIMISER_NOUNS and said[0] in OPTIMISER_BUILDERS:
            return (
                True  # the project's factory: ``create_optimizer(model, lr=...)``, ``build_optimizer(cfg)``
            )
        first = call.args[0].value if call.args and call.args[0].keyword is None else None
        return type(first) is cst.Call and method(first) in ("parameters", "named_parameters")

    def _bound_or_handed(self, scope: int, name: str) -> list[tuple[int, cst.BaseExpression]]:
        """Return ``(function, value)`` of what ``name`` holds in ``scope``, else in other functions.

        Other functions count only when nothing is bound to the name in ``scope``: a helper's
        parameter (``def run_agent(args, algo): algo.update_parameters()``) holds what another function
        builds under that name and hands in.
        """
        if name.startswith(SELF):
            # an attribute of the object: what any method assigns to it (read at module scope)
            return [(0, v) for v in self.attributes.get(name[len(SELF) :], [])]
        here = self._bound(scope, name)
        if here:
            return [(scope, v) for v in here]
        return [(s, v) for (s, n), bound in self.assigns.items() if n == name and s != scope for v in bound]

    def _library_model(self, func: cst.BaseExpression, scope: int) -> bool:
        """Say whether a method's receiver is built from an imported class named a model (``GptModel``)."""
        receiver = func.value if type(func) is cst.Attribute else None
        if type(receiver) is not cst.Name:
            return False
        return any(
            type(value) is cst.Call
            and last_name(value.func).endswith("Model")
            and not names_a_reward_model(last_name(value.func))  # (``RewardModel(cfg)``: a scorer)
            and any(self.context.resolver.is_imported(q) for q in self.names(value.func))
            for value in self._bound(scope, receiver.value)
        )

    def _named_loss(
        self,
        call: cst.Call,
        statement: cst.CSTNode | None,
        setting: str,
        allowed: tuple[str, ...],
        excluded: tuple[str, ...] = (),
    ) -> None:
        """Report a remote step whose loss a setting names, as the stage of the losses it may name.

        The names an ``if`` around the call allows, else the flag's default (``--loss-fn``, default
        ``"ppo"``), else a string the module or a config class binds to the setting's name
        (``loss_fn: str = "importance_sampling"``), less those the ``else`` of an ``if`` around the
        call rules out. Only when every such name is a built-in loss of one stage is the stage known;
        otherwise the step's loss is not in the file.
        """
        field = setting.rsplit(".", 1)[-1]
        names = allowed or tuple(self.flag_defaults.get(field, ()))
        if not names:
            names = tuple(
                text
                for v in self.assigns.get((0, field), [])
                if type(v) is cst.SimpleString and (text := text_value(v))
            )
        # (in the ``else`` of ``if args.loss_fn == "cross_entropy":`` the default is ruled out)
        names = tuple(n for n in names if n not in excluded)
        kinds = {REMOTE_LOSSES[n][0] for n in names if n in REMOTE_LOSSES}
        if not names or len(kinds) != 1 or not set(names) <= set(REMOTE_LOSSES):
            self.steps.append((call, statement, [], REMOTE_STEP))
            return
        kind = kinds.pop()
        how = "allowed where it is called" if allowed else "by default"
        self.report(
            call,
            "gradient_step",
            f"{REMOTE_STEP} with the service's {'/'.join(dict.fromkeys(names))} loss ({setting}, {how})",
            statement=statement,
            kind=kind,
            variant=REMOTE_LOSSES[names[0]][1] if len(set(names)) == 1 else None,
            on_policy=True if kind == "ppo" else None,
        )

    def _bound(self, scope: int, name: str) -> list[cst.BaseExpression]:
        """Return the values ``name`` is assigned in the function ``scope`` and at module level."""
        return self.assigns.get((scope, name), []) + self.assigns.get((0, name), [])

    def _set_loss(self, call: cst.Call) -> tuple[list[tuple[int, cst.BaseExpression]], str] | None:
        """Return the loss set on a remote step's object before (``model.set_loss(X)``) and its message."""
        trained = dotted(getattr(call.func, "value", None))
        if trained not in self.set_losses:
            return None
        return [_loss_root(*self.set_losses[trained])], f"{REMOTE_STEP} with the loss set on {trained}"

    def _module_function(self, func: cst.Attribute) -> bool:
        """Say whether ``func`` is a function of a module imported whole (``utils.train_step``)."""
        receiver = func.value
        return type(receiver) is cst.Name and any(
            q in self.context.resolver.imported for q in self.names(receiver)
        )

    def _run_names(self, run: cst.Name) -> frozenset[str]:
        """Qualified names of a called name; an unbound one may come from a module imported with ``*``.

        ``from grpo_utils import *; train(args)``: ``train`` is not bound here, so it is one of the
        star-imported modules' names (which one, only they know).
        """
        names = self.names(run)
        if names:
            return names
        return frozenset(f"{module}.{run.value}" for module in self.context.resolver.star_modules)

    def _scorer(self, scope: int, name: str) -> str | None:
        """Return the class a name is built from when that class is named for a reward model."""
        for _, value in self._bound_or_handed(scope, name):
            if type(value) is cst.Call and names_a_reward_model(built := _tail(value.func)):
                return built
        return None

    def _note_environment(self, node: cst.Call, called: str) -> None:
        """Note ``envs.reset()`` or ``envs.step(action)`` on an object named for an environment."""
        if type(node.func) is not cst.Attribute or (called == "step" and not is_env_step(node)):
            return
        receiver = dotted(node.func.value)
        if receiver and set(words(receiver.replace(".", "_"))) & ENVIRONMENT_WORDS:
            places = self.env_calls.setdefault((self.functions[-1], receiver), {}).setdefault(called, set())
            if len(places) < MAX_ENV_PLACES:
                places.add(tuple(self.loops))

    def _played_episodes(self) -> bool:
        """Say whether the function walked has so far reset an environment and stepped it repeatedly.

        ``obs = envs.reset()``, then ``envs.step(action)`` in a loop the reset is not in: episodes of
        several steps, whose samples an update taken after them trains on. One step per reset (a
        sandbox answering each sample once, for its reward) plays no episode; an episode played after
        the update (a demo) is not what it trained on; an evaluation's function trains nothing.
        """
        function = self.functions[-1]
        if self.function_names and set(words(self.function_names[-1])) & NOT_TRAINING_SCOPES:
            return False
        for (where, _), calls in self.env_calls.items():
            if where == function and any(
                set(stepped) - set(reset)
                for reset in calls.get("reset", ())
                for stepped in calls.get("step", ())
            ):
                return True
        return False

    def _handed_functions(
        self, scope: int, parameter: str, functions: dict[str, list[tuple[int, list[cst.BaseExpression]]]]
    ) -> list[str]:
        """Return the file's functions its calls hand a function's parameter (sorted, each once).

        ``def train(model, loss_fn, opt)`` called ``train(model, lm_loss, opt)``, or with a name the
        caller bound to one of them (``loss_function = reward_loss if args.rm else loss``).
        """
        definition = self.defined.get(scope)
        if definition is None:
            return []
        params = [p.name.value for p in definition.params.params]
        if parameter not in params:
            return []
        index = params.index(parameter)
        found: set[str] = set()
        for where, call in self.name_calls.get(definition.name.value, []):
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            given = [a.value for a in call.args if a.keyword is not None and a.keyword.value == parameter]
            value = given[0] if given else positional[index] if index < len(positional) else None
            if type(value) is not cst.Name:
                continue
            candidates: list[cst.BaseExpression] = [value]
            if value.value not in functions:
                for bound in self._bound(where, value.value):
                    candidates.extend(either(bound))
            found |= {c.value for c in candidates if type(c) is cst.Name and c.value in functions}
        return sorted(found)

    def _trainer_runs(self, node: cst.Call, made: cst.Call) -> bool:
        """Say whether a trainer object's method call runs its training.

        ``train()``, ``fit()`` do; ``run()`` only on a class of another file (one of this file shows
        what its ``run`` does in its body) not named for evaluating or predicting
        (``InferenceTrainer(...).run(dataset=d)``). A class known to train only by its name
        (``LoRAFineTuning``, an RL library's ``PPOAgent``) trains when its run is handed something
        (data, steps): a bare ``prefix.train()`` switches a module to training mode.
        """
        if method(node) != "run":
            named_only = [n for n in (last_name(made.func), *self.names(made.func)) if _trained_by_name(n)]
            return bool(node.args) or not named_only
        named = set(words(last_name(made.func)))
        return not named & NOT_RUNNING_TRAINING_WORDS and any("." in q for q in self.names(made.func))

    def _constructs_trainer(self, call: cst.Call, scope: int | None = None) -> bool:
        return self._trainer_class(call, scope) is not None

    def _algorithm_trainer(self, call: cst.Call) -> bool:
        """Say whether a call builds an imported trainer named by its algorithm alone (``GRPO(policy, ...)``).

        Not one handed an environment (Stable-Baselines3's ``PPO("MlpPolicy", env)`` learns from it,
        read as such elsewhere), nor a class of this file (its own body says what its methods do).
        """
        imported = [q for q in self.names(call.func) if "." in q]
        # (by the name it is called, or the class it is imported as: ``PPOAgent as Agent``)
        named = [_tail(call.func), *(q.rsplit(".", 1)[-1] for q in imported)]
        return (
            any(map(_names_algorithm_class, named))
            and bool(imported)
            and not any(_names_environment(a) for a in call.args)
        )

    def _trainer_class(self, call: cst.Call, scope: int | None = None) -> cst.BaseExpression | None:
        """Return the trainer class a call constructs: its callee, or the class a name holds.

        ``ppo_trainer = Unsupervised if mixed else PPOTrainer; trainer = ppo_trainer(engine)`` makes a
        trainer too (the first class named a trainer is the one that names it).
        """
        func = call.func
        tail = _tail(func)
        if (
            names_trainer_class(tail)
            # (imported under another name: ``from .trainer import ORPOTrainerWrapper as W``)
            or any(names_trainer_class(q.rsplit(".", 1)[-1]) for q in self.names(func) if "." in q)
            or self._algorithm_trainer(call)
            or _names_trainer_factory(last_name(func))
        ):
            return func
        if (
            type(func) is cst.Attribute
            and "from" in words(func.attr.value)
            and names_trainer_class(_tail(func.value))
        ):
            # ``DPOTrainer.from_checkpoint(ckpt, data)``, ``.init_from_sft_checkpoint(...)``: a class
            # method building the trainer from saved state
            return func.value
        built = func.value if type(func) is cst.Attribute and func.attr.value in CLASS_FACTORIES else func
        if _names_trainable(last_name(built)) and any("." in q for q in self.names(built)):
            # ``model = sillm.TrainableDPO.from_model(model, beta=0.1)``: an imported class that makes a
            # model trainable for a route, its ``train(data)`` running that route's training
            return built
        if type(func) is cst.Name:
            where = self.functions[-1] if scope is None else scope
            for value in self._bound(where, func.value):
                for choice in either(value):
                    if isinstance(choice, cst.Name | cst.Attribute) and names_trainer_class(_tail(choice)):
                        return choice
        return None

    # -- deciding ------------------------------------------------------------------------------

    def _slicer(
        self,
        functions: dict[str, list[tuple[int, list[cst.BaseExpression]]]],
        names_of: Callable[[cst.BaseExpression], set[str]],
    ) -> Slice:
        """Return the slicer of this file's losses, with what the whole file says of its modules."""
        trained = (self.trained_modules, self.loss_outputs)
        return Slice(self.assigns, self.attributes, functions, names_of, self._calls_on_self(), trained)

    def _calls_on_self(self) -> dict[int, list[int]]:
        """Map each method's id to what ``self(...)`` runs in it.

        That is its class's own ``__call__``, else a torch module's ``forward`` (``loss = self(batch)``
        in a Lightning ``training_step``).
        """
        called: dict[int, list[int]] = {}
        for function_id, class_id in self.method_of.items():
            classes = [class_id]
            while classes and len(classes) <= MAX_BASES_FOLLOWED:
                # its own class's, else an in-file base's (``class Generator(BaseLM)``)
                methods = self.class_methods.get(classes[-1], {})
                own = methods.get("__call__", methods.get("forward"))
                if own is not None:
                    called[function_id] = [own]
                    break
                base = next((b for b in self.class_bases.get(classes[-1], ()) if b in self.class_ids), None)
                if base is None or self.class_ids[base] in classes:
                    break
                classes.append(self.class_ids[base])
        return called

    def leave_Module(self, original_node: cst.Module) -> None:
        for job, call, scope in self.hosted_jobs:
            if self._preference_kwargs(call, scope):
                job.kind = "dpo"
        for construction, where, found in self.chained:
            # Trainer(model=m, ...).train(): the loss of the file's model class, read once all is seen
            found.extend(self._model_loss(construction, where))
        functions = {n: [(i, r) for i, r in entries] for n, entries in self.returns.items()}
        for call, statement, setting, allowed, excluded in self.named_losses:
            self._named_loss(call, statement, setting, allowed, excluded)
        for node, statement, scope, name, how in self.deferred:
            if how == "grad" and name not in functions and self.defaults.get(name) in functions:
                # ``def train(model, loss=default_loss): nn.value_and_grad(model, loss)``: the loss a
                # caller may pass, by default the file's own function
                name = self.defaults[name]
            if how == "grad" and name in functions:
                roots = [(i, r) for i, returned in functions[name] for r in returned]
                self.steps.append((node, statement, roots, f"gradient of {name}"))
            elif how == "grad" and self.updates and name not in self.defaults:
                # ``def train(model, loss_fn, optimizer): nn.value_and_grad(model, loss_fn)`` then
                # ``optimizer.update(model, grads)``: a step on a loss handed in, the file's functions
                # its callers hand (``train(model, lm_loss, opt)``), else one whose kind this function
                # does not show (the file's other evidence may)
                handed = self._handed_functions(scope, name, functions)
                if len(handed) > 1:
                    self.alternatives.append(list(range(len(self.steps), len(self.steps) + len(handed))))
                for function in handed:
                    # (one step per loss handed: each caller's choice trains its own objective)
                    roots = [(i, r) for i, returned in functions[function] for r in returned]
                    self.steps.append(
                        (node, statement, roots, f"gradient of {function}, handed in as {name}")
                    )
                if not handed:
                    self.steps.append((node, statement, [], f"gradient of {name}, a loss handed in"))
            elif how == "remote":
                # the file's function's return value, else a loss object the name was bound to
                # (``loss_fn = GRPOLoss(**cfg)``), whose class may say the stage; a name bound to
                # anything else is the data (SkyRL's ``forward_backward(batch)``)
                roots = [(i, r) for i, returned in functions.get(name, []) for r in returned]
                bound = self._bound(scope, name)
                if not roots and any(
                    type(v) is cst.Call and "loss" in words(last_name(v.func)) for v in bound
                ):
                    roots = [(scope, cst.Name(name))]
                elif not roots and not bound and "loss" in words(name):
                    # a loss function the file imports (``partial(ppo_loss, config=cfg)``): the step
                    # trains what a call of it computes, which its name may say
                    roots = [(scope, cst.Call(func=cst.Name(name)))]
                how_named = f"{REMOTE_STEP} on {name}" if roots else REMOTE_STEP
                set_loss = self._set_loss(node) if not roots and type(node) is cst.Call else None
                if set_loss is not None:
                    # the data handed first (``policy.forward_backward(batch)``): the loss set before
                    roots, how_named = set_loss
                self.steps.append((node, statement, roots, how_named))
            elif how == "evaluates":
                if any(
                    type(v) is cst.Call and self._constructs_trainer(v, scope)
                    for v in self._bound(scope, name)
                ):
                    called = method(node) if type(node) is cst.Call else "evaluate"
                    message = f"{called}() of a trainer object: it measures a model"
                    self.report(node, "scoring", message, statement=statement, variant=TRAINER_EVALUATION)
            elif how == "environment":
                if (built := self._built_with_environment(scope, name)) is not None and isinstance(
                    node, cst.Call
                ):
                    # an agent handed the environments trains on the episodes it collects from them
                    called = method(node)
                    self.steps.append((node, statement, [], f"{called}() of a {built} given an environment"))
                    message = f"{called}() trains a {built} on the episodes of the environment it was given"
                    self.report(node, "interactive", message, statement=statement, interactive=True)
            elif how == "trainer":
                made_in, made = scope, []
                for where, value in self._bound_or_handed(scope, name):
                    if type(value) is cst.Call and self._constructs_trainer(value, where):
                        made_in, made = where, [value]
                        break
                own_forward = (
                    type(node) is cst.Call
                    and method(node) == "forward"
                    and bool(made)
                    and not any("." in q for q in self.names(made[0].func))
                )
                if own_forward:
                    pass  # a trainer class of this file: what its ``forward`` does is read in its body
                elif made and type(node) is cst.Call and not self._trainer_runs(node, made[0]):
                    pass  # ``EvaluationTrainer(...).run()``: a run of no training
                elif made:
                    self.trainer_of_step[id(node)] = made[0]
                    self.trainer_scope[id(node)] = made_in
                    called = method(node) if type(node) is cst.Call else None
                    roots = self._handed_loss(made[0], made_in) or self._model_loss(made[0], made_in)
                    self.steps.append((node, statement, roots, f"{called or 'train'}() of a trainer object"))
                elif (
                    type(node) is cst.Call
                    and node.args
                    and literal_bool(node.args[0].value) is None  # (``set_train(False)``: a mode)
                    and (scorer := self._scorer(scope, name))
                ):
                    # rm = StandardScalarRM(...); rm.train(args): a reward model's own training method,
                    # told what to train on (a bare ``train()`` only switches a module's mode)
                    self.scorers[id(node)] = scorer
                    self.steps.append((node, statement, [], f"{method(node)}() of a {scorer}"))
        self._later_loops()
        if not self.steps:
            self._loss_library(functions)
            return
        if (
            self.reads_grad
            and not self.chains_backward
            and not self.updates
            and all(how == "a backward pass" for *_, how in self.steps)
        ):
            # gradients computed only to be read (Fisher weights, saliency): nothing is trained
            node, statement, *_ = self.steps[0]
            message = "gradients are computed only to be read (no optimiser applies them)"
            self.report(node, "inference", message, statement=statement, variant=GRADIENTS_READ)
            return
        resolver = self.context.resolver

        def names_of(func: cst.BaseExpression) -> set[str]:
            scope = self.scopes_of.get(id(func))
            return resolver.qualified_names(func, scope) if scope is not None else set()

        slicer = self._slicer(functions, names_of)
        # (per step: one call may step on each of several losses its callers hand it)
        forms = [loss_form(slicer.features(roots)) if roots else None for _, _, roots, _ in self.steps]
        verdicts = {
            id(step[0]): form for step, form in zip(self.steps, forms, strict=True) if form is not None
        }
        # the policy updates: a supervised step taken in the same iteration of a loop is their auxiliary
        policy_steps = [i for i, v in verdicts.items() if v.kind in POLICY_GRADIENT]
        for (node, statement, roots, how), form in zip(self.steps, forms, strict=True):
            if not roots:
                self.report(
                    node, "gradient_step", f"{how}; its loss is not in this file", statement=statement
                )
                named_from = len(self.context.findings)
                if id(node) in self.scorers:
                    message = f"the object trained is a {self.scorers[id(node)]}, named for a reward model"
                    self._name_stage(node, statement, "reward_model", None, message)
                elif (
                    not self._named_trainer(node, statement)
                    and not self._named(node, statement)
                    and id(node) in self.rewarded
                ):
                    # (handed the advantages themselves, the family is theirs: the file's estimate decides)
                    how = (
                        ADVANTAGES_HANDED if id(node) in self.advantaged else "is stepped on rewarded samples"
                    )
                    message = f"{self.rewarded[id(node)]} {how}: a policy gradient"
                    self._name_stage(node, statement, "ppo", None, message)
                named = self.context.findings[named_from:]
                if id(node) in self.played and any(f.kind in POLICY_GRADIENT for f in named):
                    # ``ppo.update(rollouts)`` after the episodes its function played: the trainer's
                    # name says policy gradient, the episodes say online
                    self.report(node, "interactive", PLAYED_EPISODES, statement=statement, interactive=True)
                continue
            assert form is not None  # (a step with roots has its form)
            verdict = _pretraining_mix(
                _group_relative(form, self.where.get(id(node), ())),
                self.where.get(id(node), ()),
                any(self._same_iteration(id(node), i) for i in policy_steps),
            )
            if verdict.kind is None and not self._named_trainer(node, statement):
                self._named(node, statement)
            if verdict.kind in POLICY_GRADIENT and id(node) in self.played:
                self.report(node, "interactive", PLAYED_EPISODES, statement=statement, interactive=True)
            self.report(
                node,
                "gradient_step",
                f"{how}: {verdict.why}",
                statement=statement,
                kind=verdict.kind,
                variant=verdict.variant,
                data_source=verdict.data_source,
                on_policy=True if verdict.kind in POLICY_GRADIENT else None,
            )
        self._alternatives(forms)

    def _alternatives(self, forms: list[Verdict | None]) -> None:
        """Report a step whose callers hand it losses of different stages: the route is chosen at run time.

        ``loss_function = reward_loss if args.reward_model else loss; train(model, loss_function)``:
        one step on either loss, whichever the flag picks. A loss whose form is not recognised beside
        one of a known stage counts as another route (UNKNOWN among the routes): a placeholder loss
        picked for a dry run reads so too.
        """
        for indexes in self.alternatives:
            found = {form.kind for i in indexes if (form := forms[i]) is not None and form.kind is not None}
            unknown = any((form := forms[i]) is None or form.kind is None for i in indexes)
            if len(found) > 1 or (found and unknown):
                # (a loss of a form not recognised beside one that is: another route, not known which)
                node, statement, _, _ = self.steps[indexes[0]]
                routes = tuple(sorted({STAGE_LABELS[k] for k in found} | ({"UNKNOWN"} if unknown else set())))
                message = "its callers hand the step losses of different forms: the one run is chosen then"
                self.report(node, "dispatch", message, statement=statement, routes=routes)


def _names_an_update(name: str | None) -> bool:
    """Say whether a method's name says it trains its object's weights (``update_parameters``, ``train``).

    ``train*``/``fit*``/``learn*``, or ``update_`` followed by what holds weights; not a bare
    ``update()`` nor one that keeps records or state (``update_memory``, ``update_stats``), nor one
    that measures (``train_eval``).
    """
    said = words(name) if name is not None else ()
    if not said or set(said) & NOT_TRAINING_SCOPES:
        return False
    if said[0] in ("train", "fit", "learn"):
        return True
    return said[0] == "update" and len(said) > 1 and said[1] in WEIGHT_HOLDERS


PROCESS_ENVIRONMENT_WORDS = frozenset({"vars", "var", "variables", "variable"})
"""Words that make an environment a process's variables (``env_vars={...}``), not a world to act in."""


def _names_environment(arg: cst.Arg) -> bool:
    """Say whether an argument is an environment by its keyword or its name (``env=e``, ``envs``)."""
    name = arg.keyword.value if arg.keyword is not None else getattr(arg.value, "value", None)
    if not isinstance(name, str) or (arg.keyword is None and type(arg.value) is not cst.Name):
        return False
    said = set(words(name))
    return bool(said & ENVIRONMENT_WORDS) and not said & PROCESS_ENVIRONMENT_WORDS


PROCESS_CLASSES = frozenset({"Process", "Thread"})
"""multiprocessing's and threading's classes that run the function handed as ``target=``."""
SETTINGS_WORDS = frozenset({"config", "configs", "args", "arguments", "settings", "params", "options"})
"""Words of a class or function that holds or builds settings (``SFTTrainingArgs``, ``TrainingConfig``)."""
BUILDER_WORDS = frozenset({"build", "make", "prepare", "create", "generate", "load", "save", "convert"})
"""Words of a function that builds, loads or converts something (``run_build_sft_stage``'s data)."""
REPORTING_WORDS = frozenset(
    {
        "plot",
        "plots",
        "curve",
        "curves",
        "log",
        "logs",
        "check",
        "checks",
        "mode",
        "report",
        "summary",
        "show",
    }
)
"""Words of a function that reports on a training or switches a model's mode (``plot_grpo_training_curves``,
``sft_training_mode(model, False)``), not one that runs it."""
RUN_WORDS = frozenset({*TRAINING_WORDS, "run", "main"})
"""Words of an imported function that runs a whole training (``train_grpo``, ``run_sft``, a
``train_dpo`` module's ``main``), once a route is named by it or by its module."""


NOT_RUNNING_TRAINING_WORDS = (
    NOT_TRAINING_SCOPES | {"predict"} | TRAINING_DATA_WORDS | SETTINGS_WORDS | BUILDER_WORDS | REPORTING_WORDS
)
"""Words of a function or module that evaluates, predicts, loads data, holds settings, builds or
reports: it runs no training, whatever route it names (``run_eval_grpo``, ``train_dataset``)."""


EVALUATION_ONLY_WORDS = frozenset({"eval", "evaluate", "evaluation", "validate", "validation", "test"})
"""Words of a switch that, with ``only``, makes a trainer's run measure instead of train (``eval_only``)."""


def _evaluates_only(node: cst.Call) -> bool:
    """Say whether a run is told to only evaluate (``trainer.train(data, eval_only=True)``)."""
    for arg in node.args:
        if arg.keyword is None or literal_bool(arg.value) is not True:
            continue
        said = set(words(arg.keyword.value))
        if "only" in said and said & EVALUATION_ONLY_WORDS and said <= EVALUATION_ONLY_WORDS | {"only"}:
            return True  # (not ``eval_only_at_end=True``: a training that also evaluates at its end)
    return False


TRAINING_ALONE_WORDS = TRAINING_WORDS | {"run", "do", "start", "main", "model", "loop"}
"""Words of a function named for training and nothing else (``train``, ``run_training``, ``train_model``),
not for training some other thing (``train_tokenizer``, ``train_bpe``, ``fit_kmeans``)."""


def _runs_imported_training(callee: str, qualified: frozenset[str], around: tuple[str, ...] = ()) -> bool:
    """Say whether a call runs a training of another module.

    The function is imported (its qualified name has a module), named for running or training
    (``train_grpo``, ``run_sft``, ``main``), and it or the module it comes from names a route
    (``from recipes.train_dpo import main``), or the package of a training module does
    (``from grpo_project.core.trainer import main``). Evaluation, inference and data helpers
    (``run_eval_grpo``, ``train_dataset``) do not count. A function named for training alone
    (``from src.train import train``) counts where the function it is called in (``around``) names the
    route: ``def run_grpo_ablation(): train(lambda_fair=0.0, ...)`` runs that route's training. A
    training module's function named for training (``from .trainers import train_lora``) counts too,
    its route unknown.
    """
    skipped = NOT_RUNNING_TRAINING_WORDS
    if callee[:1].isupper():
        return False  # (a class is built, not run: ``SFTTrainingArgs(...)``)
    outer = [set(words(f)) for f in around]
    for q in qualified:
        module, _, imported = q.rpartition(".")
        if not module:
            continue
        # the name as imported and as bound here (``from recipes.train_dpo import main as dpo_main``)
        names = (callee, imported, module.rsplit(".", 1)[-1])
        said = [set(words(n)) for n in names]
        if not (said[0] | said[1]) & RUN_WORDS or any(w & skipped for w in said):
            continue
        for name in names:
            found = route_word(name, strict=True)
            if found is not None and found[0] in LABEL_KINDS:
                return True
        if route_package(module, imported, skipped) is not None:
            return True  # (``from grpo_project.core.trainer import main``: the package's route)
        alone = next((w for w in said[:2] if w & TRAINING_WORDS and w <= TRAINING_ALONE_WORDS), None)
        if alone is not None and not any(w & skipped for w in outer):
            for name in around:
                found = route_word(name, strict=True)
                if found is not None and found[0] in LABEL_KINDS:
                    return True
        if (
            is_training_module(names[2])
            and words(imported)[:1] in (("train",), ("finetune",))
            and not any(w & NOT_MODEL_WORDS for w in said)
            and not any(w & skipped for w in outer)
        ):
            # ``from .trainers import train_lora``: a training function of the package's training
            # module, run (not ``fit_kmeans``: fitting names no model's training); what route it
            # trains is not said here (an unknown stage, not no training)
            return True
    return False


REWARD_MODEL_CONFIG_WORDS = frozenset(
    {"model", "rm", "prm", "orm", "process", "pairwise", "preference", "ranking"}
)
"""Words of a project's reward config that say a reward model is trained (``ProcessRewardConfig``)."""
SELF = "self."
"""Prefix of a deferred name that is an attribute of the object (``self.trainer``), not a local."""
TRAINER_RUNS = frozenset({"train", "fit", "train_batch", "run"})
"""Methods that run a training, on a trainer object (``trainer.run(game=g)``: a project's trainer class
whose entry is named for running); on other objects only where they are handed a loss."""
FINE_TUNE_METHODS = frozenset({"finetune", "fine_tune"})
"""Methods that fine-tune the object they are called on, given data (``model.finetune(ds)``)."""
MODEL_TRAINING_METHODS = frozenset({"train_model"})
"""Methods that fine-tune an imported model class's object, given data (simpletransformers' and
textgen's ``GptModel(...).train_model(df)``); elsewhere the name is anyone's helper."""
DATA_KEYWORD_WORDS = frozenset({"data", "dataset", "datasets", "trainset", "train", "samples", "examples"})
"""Words of a keyword that hands a fine-tuning call its data (``train_dataset=``, ``data=``)."""


SETTINGS_ARGUMENT_WORDS = SETTINGS_WORDS | CONFIG_WORDS | {"conf", "hparams", "yaml", "checkpoint", "ckpt"}
"""Words of a value handed by position that is settings or a checkpoint, not data (``finetune(cfg)``)."""
SETTINGS_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".toml")
"""Endings of a settings file's path handed by position (``finetune("configs/run.yaml")``)."""
HOW_TO_TRAIN_WORDS = LOSS_NAME_WORDS | {"method", "algorithm", "algo", "mode", "task"}
"""Words of a keyword that tells a fine-tuning call how to train (``finetune(pairs, loss="ranking")``)."""
SCORER_OBJECT_WORDS = SCORER_ROLES | {"verifier", "prm", "orm"}
"""Words of an object named for a scorer: its fine-tuning trains a scorer, not a policy on targets."""


def _handed_loss_function(
    node: cst.Call, names: Iterable[str], positional: list[cst.BaseExpression]
) -> str | None:
    """Return the function of the file a framework's loop is handed to compute its loss, if it is one."""
    for qualified in sorted(names):
        entry = entry_for(qualified)
        if entry is None or entry.name not in HANDED_LOSS_FUNCTIONS:
            continue
        name, position = HANDED_LOSS_FUNCTIONS[entry.name]
        arg = keyword(node, name)
        value = arg.value if arg is not None else positional[position] if len(positional) > position else None
        return value.value if type(value) is cst.Name else None
    return None


def _settings_value(value: cst.BaseExpression) -> bool:
    """Say whether a value handed by position is settings: named so, built so, or a settings file's path."""
    if type(value) is cst.SimpleString:
        return literal_text(value).endswith(SETTINGS_FILE_SUFFIXES)
    named = last_name(value.func) if type(value) is cst.Call else last_name(value)
    return bool(SETTINGS_ARGUMENT_WORDS & set(words(named)))


def _given_data(node: cst.CSTNode) -> bool:
    """Say whether a call is handed data: by position, by a keyword named for data, or unpacked.

    ``trainer.finetune(finetune_checkpoint=ckpt, resume_training=True)``, ``finetune(cfg)`` and
    ``finetune(load_config("sft.yaml"))`` are handed a checkpoint and settings only: what it trains on,
    and how, is its config's. What ``*args`` or ``**kwargs`` hold is not known: it may be data.
    """
    return type(node) is cst.Call and any(
        arg.star != ""
        or (arg.keyword is None and not _settings_value(arg.value))
        or (arg.keyword is not None and DATA_KEYWORD_WORDS & set(words(arg.keyword.value)))
        for arg in node.args
    )


def _supervised_fine_tuning(node: cst.CSTNode) -> bool:
    """Say whether a ``finetune`` call is a supervised one: handed data, told no objective, not a scorer's.

    ``rm.finetune(pairs, loss="pairwise_ranking")`` trains a scorer by a ranking loss: not SFT.
    """
    if not (type(node) is cst.Call and _given_data(node)):
        return False
    if any(
        arg.keyword is not None and HOW_TO_TRAIN_WORDS & set(words(arg.keyword.value)) for arg in node.args
    ):
        return False
    receiver = node.func.value if type(node.func) is cst.Attribute else None
    return receiver is None or not SCORER_OBJECT_WORDS & set(words(last_name(receiver)))


STAGE_KEYWORDS = frozenset({"stage", "algorithm", "algo", "training_type", "trainer_type", "rl_type"})
"""Keywords by which a wrapper's training method is told which stage to run (``finetune(stage="dpo")``)."""
STAGE_ALIASES = {"rlhf": "ppo"}
"""Stage values that are no route word: RLHF's policy stage is PPO (LLaMA-Factory's and others' ``rlhf``)."""


REWARDED_STEP_ARGUMENTS = 3
"""Samples handed to a trainer's step with their rewards: queries, responses, scores."""


def _rewarded_step(node: cst.Call, name: str | None) -> str | None:
    """Return the trainer whose ``step`` a call takes on samples and their rewards, if it is one.

    ``ppo_trainer.step(query_tensors, response_tensors, rewards)``: an object whose name ends in trainer,
    stepped with at least three arguments, one of them named for rewards or scores.
    """
    if name != "step" or type(node.func) is not cst.Attribute or len(node.args) < REWARDED_STEP_ARGUMENTS:
        return None
    trainer = last_name(node.func.value)
    if trainer is None or words(trainer)[-1:] != ("trainer",):
        return None  # (named for a trainer, not for what shows one: ``trainer_panel``, ``trainer_tracker``)
    for arg in node.args:
        named = (n for n in (arg.value, *descendants(arg.value)) if type(n) is cst.Name)
        said = {w for n in named for w in words(n.value)}
        if arg.keyword is not None:
            said.update(words(arg.keyword.value))
        if said & SCORE_WORDS:
            return trainer
    return None


ADVANTAGES_HANDED = "is stepped on the advantages it is handed"
"""How a named policy-gradient step is taken on the file's own advantages: their estimate's family is
the step's (``classify`` reads it)."""
RECORD_WORDS = frozenset(
    {
        *("stats", "statistics", "metrics", "metric", "tracker", "logger", "meter", "board", "dashboard"),
        *("record", "records", "history", "summary", "writer", "info", "dict", "cache", "results"),
    }
)
"""Words of an object that keeps what it is updated with (statistics, a record), training nothing."""
UPDATED_ADVANTAGE_WORDS = ADVANTAGE_WORDS - {"returns"}
"""Words of an update's argument that hands it advantages (returns alone are any run's statistic)."""
SAMPLED_ACTION_WORDS = LOGPROB_WORDS | {"action", "actions", "act", "acts"}
"""Words of an update's argument that hands it the actions sampled or their log-probabilities."""


def _advantaged_update(node: cst.Call, name: str | None) -> str | None:
    """Return the object whose update a call runs on sampled actions and their advantages, if one does.

    ``lm_server.update(obs, actions=acts, advantages=adv, logprobs=logp)`` (lamorel's remote updater),
    ``agent.learn(states, actions, advantages)``: a policy-gradient step whose loss is the object's
    code, on samples this file collected. An argument says what it is by its keyword, else its name.
    """
    if (
        type(node.func) is not cst.Attribute
        or name not in ("update", "learn")
        or not any(a.keyword is None for a in node.args)  # (``record.update(advantages=a)``: a dict's)
        or set(words(last_name(node.func.value) or "")) & RECORD_WORDS
    ):
        return None
    said = [
        set(
            words(
                arg.keyword.value
                if arg.keyword is not None
                else last_name(arg.value) or entry_key(arg.value) or ""
            )
        )
        for arg in node.args
    ]
    if any(w & UPDATED_ADVANTAGE_WORDS for w in said) and any(w & SAMPLED_ACTION_WORDS for w in said):
        return last_name(node.func.value) or name
    return None


def _staged_run(node: cst.Call, callee: str | None) -> str | None:
    """Return the stage a training call is told to run by a literal keyword (``finetune(stage="dpo")``).

    The call is named for training (``finetune``, ``train``, ``run_training``); the keyword is a
    stage or algorithm setting whose string value is a route's name. Not a value naming something
    else (``algo="full_param"``).
    """
    said = set(words(callee)) if callee else set()
    if not said & TRAINING_WORDS or said & (NOT_TRAINING_SCOPES | SETTINGS_WORDS):
        return None
    for arg in node.args:
        if arg.keyword is None or arg.keyword.value not in STAGE_KEYWORDS:
            continue
        value = arg.value.evaluated_value if type(arg.value) is cst.SimpleString else None
        if not isinstance(value, str):
            continue
        value = STAGE_ALIASES.get(value.lower(), value)
        found = route_word(value, strict=True)
        if found is not None and found[0] in LABEL_KINDS:
            return value
    return None


def trains_in_environment(node: cst.Call, callee: str) -> bool:
    """Say whether a call hands an environment to a function named for training (``train_loop(env=e)``)."""
    named = set(words(callee))
    if not named & TRAINING_WORDS or named & (NOT_TRAINING_SCOPES | SETTINGS_WORDS):
        return False  # (``TrainingConfig(env_name=...)`` holds settings: it trains nothing)
    return any(_names_environment(a) for a in node.args)


def updates_model(name: str | None, models: frozenset[str]) -> bool:
    """Say whether a method trains one of ``models`` (``update_actor``, ``ppo_local_train_critic``)."""
    if name is None:
        return False
    found = set(words(name))
    if found & UPDATE_WORDS == {"fit"}:
        # ``async_fit_actor_model``; ``fit_actor_bundles`` packs Ray actors onto devices
        return bool(found & models) and words(name)[-1] in (*models, "model")
    return bool(found & UPDATE_WORDS and found & models)


TRAINER_FACTORY_VERBS = frozenset(
    {"get", "build", "create", "make", "init", "initialize", "initialise", "setup", "new", "construct"}
    | {"load", "prepare", "instantiate"}
)
"""First words of a helper that returns a trainer it builds (``load_trainer(cfg)`` picks and builds one;
``load_trainer_state`` reads a state, its last word not a trainer's)."""
_TRAINER_CLASS = re.compile(r"[A-Z]\w*Trainer_\w+")


TRAINER_PART_WORDS = frozenset(
    {
        *("callback", "callbacks", "state", "control", "config", "cfg", "args", "arguments", "output"),
        *("utils", "mixin", "plugin", "hook", "hooks", "handler", "logger", "factory", "builder"),
        *("options", "params", "spec", "registry", "type", "class", "base", "interface", "memory"),
        # what reports on or serves a trainer (``RLTrainerStats``, ``SFTTrainerProgressBar``)
        *("stats", "statistics", "metrics", "progress", "bar", "evaluator", "scheduler"),
        *("head", "module", "wrapper", "model"),
    }
)
"""Words of a class's name that make it a part of a trainer (``TrainerCallback``, ``TrainerState``),
not one: such a class's ``train`` is not a training run."""
FINE_TUNER_WORDS = frozenset({"finetuning", "finetuner"})
"""Last words of a class named for fine-tuning a model (pykoi's ``SupervisedFinetuning``); not a
``Tuner``, which searches settings (Ray Tune's, a threshold's, a prompt's)."""


BACKWARD_RECEIVER_WORDS = OPTIMISER_WORDS | {"accelerator", "scaler", "engine", "booster", "fabric"}
"""Words of an object whose method named for a backward pass, handed the loss, takes the step (LOMO's
``optimizer.fused_backward(loss, lr)``; not a custom autograd function's ``ctx.save_for_backward``, nor
a profiler's ``profile_backward``)."""


GRADIENT_WORDS = frozenset({"grad", "grads", "gradient", "gradients"})
"""Words of a name that holds a gradient (``output_grad``, ``grad_output``, ``dy_grads``)."""
CHAINED_BACKWARD = "a backward pass handed the gradient of the blocks after it"
"""How a step that continues the chain rule by hand is described; its loss is in another step."""


def _reads_grad(value: cst.CSTNode) -> bool:
    """Say whether ``value`` is a tensor's ``.grad`` (moved, cast or reshaped: ``x.grad.to(d)``)."""
    if isinstance(value, cst.BaseExpression):
        value = unshaped(value)
    return type(value) is cst.Attribute and value.attr.value == "grad"


def _backward_receiver(func: cst.BaseExpression) -> bool:
    """Say whether a method named for a backward pass is an optimiser's, an accelerator's or a scaler's."""
    receiver = func.value if type(func) is cst.Attribute else None
    return receiver is not None and bool(
        set(words(dotted(receiver).replace(".", "_"))) & BACKWARD_RECEIVER_WORDS
    )


def _trained_by_name(name: str) -> bool:
    """Say whether a class is known to train only by its name.

    One named for fine-tuning, an RL library's agent named for its algorithm, or a wrapper of either
    (``FineTuningWrapper``).
    """
    base = _unwrapped(name.rsplit(".", 1)[-1])
    return _names_fine_tuning(base) or (words(base)[-1:] == ("agent",) and _names_algorithm_class(base))


def _unwrapped(name: str) -> str:
    """Return the class a wrapper's name wraps (``ORPOTrainerWrapper`` -> ``ORPOTrainer``), else the name."""
    return name[: -len("Wrapper")] if name.endswith("Wrapper") and name != "Wrapper" else name


def _self_attribute(value: cst.BaseExpression) -> bool:
    """Say whether an expression is an attribute of ``self`` (``self.optimizer``)."""
    return type(value) is cst.Attribute and type(value.value) is cst.Name and value.value.value == "self"


def _class_words(name: str) -> tuple[str, ...]:
    """Return a class name's words, "fine" and "tuning" (or "tuner") one word (``DPOFineTuning``)."""
    said = words(name)
    if said[-2:] in (("fine", "tuning"), ("fine", "tuner")):
        return (*said[:-2], said[-2] + said[-1])
    return said


def _names_fine_tuning(name: str) -> bool:
    """Say whether a class is named for fine-tuning a model (``FullFineTuning``, ``Finetuner``).

    A model or data ``ForFinetuning`` is what is fine-tuned, not what fine-tunes.
    """
    said = _class_words(name)
    return name[:1].isupper() and bool(said) and said[-1] in FINE_TUNER_WORDS and "for" not in said


def names_trainer_class(name: str) -> bool:
    """Say whether a class's name says it is a trainer (``PPOTrainer``, ``NCATrainer_pairwise``).

    Also one specialised for a model (``Seq2SeqTrainerForChatGLM``). A variable holding a class
    (``TrainerClass = getattr(trainers, name)``) is not named as one, nor are a trainer's parts
    (``TrainerCallback``, ``TrainerState``).
    """
    if name.endswith("Trainer") or _TRAINER_CLASS.fullmatch(name) is not None:
        return True
    if (wrapped := _unwrapped(name)) != name:
        # a wrapper of a class is read as that class (``ORPOTrainerWrapper``: a trainer; a
        # ``ValueHeadWrapper``: a model's part)
        return names_trainer_class(wrapped)
    said = _class_words(name)
    if name[:1].isupper() and len(said) > 1 and "trainer" in said and not TRAINER_PART_WORDS & set(said):
        # ``TrainerNoShuffle``, ``TrainerWithPacking``, ``CustomTrainerForgetting``: a trainer told
        # apart by its behaviour
        return True
    if _names_fine_tuning(name):
        # ``SupervisedFinetuning(config)``, ``RewardFinetuner(cfg)``: a class run to fine-tune
        return True
    if (
        name[:1].isupper()
        and len(said) >= 2
        and said[-2] in ("training", "train")
        and said[-1] in TRAINING_RUNNER_WORDS
        and not (NOT_MODEL_WORDS | TRAINER_PART_WORDS | NOT_TRAINING_SCOPES) & set(said)
    ):
        return True  # ``DPOTrainingPipeline(cfg)``, ``TrainingRunner``: a class run to train
    if (
        name[:1].isupper()
        and len(said) >= 2
        and said[-1] in TRAINING_RUNNER_WORDS
        and (named := route_word(name, strict=True)) is not None
        and named[0] in LABEL_KINDS
        and named[1] in said
        and set(said[said.index(named[1]) + 1 : -1]) <= TRAINING_WORDS
    ):
        # ``SFTRunner(cfg)``, ``ModernRLHFPipeline(config)``, ``DPOTrainingLoop``: a class run to train
        # a route; words between the route and the runner say it runs something else
        # (``SFTDataPipeline``, ``GRPORolloutLoop``)
        return True
    return name[:1].isupper() and "trainer" in said[:-1] and said[said.index("trainer") + 1] == "for"


PLAYED_EPISODES = "the policy update takes the episodes of an environment its function resets and steps"
"""Why an update after its function played an environment's episodes is online."""
MAX_ENV_PLACES = 16
"""Loop contexts of an environment's resets (or steps) kept per function (a hostile file calls it often)."""


def _names_algorithm_class(name: str) -> bool:
    """Say whether a class is named by its algorithm alone (``GRPO(policy, ref, reward_fn, cfg)``, ``SimPO``).

    Small libraries call the object that trains by the route's acronym; its ``step(batch)`` or
    ``train()`` is a trainer's. A route word within a longer name (``GRPOConfig``) is not the class.
    """
    found = route_word(name, strict=True) if name[:1].isupper() else None
    # (or with "agent" after it, as an RL library names its learner: OpenRL's
    # ``PPOAgent(net).train(total_time_steps=n)``)
    return found is not None and (found[1] == name.lower() or tuple(words(name)) == (found[1], "agent"))


TRAINING_RUNNER_WORDS = frozenset({"pipeline", "runner", "loop", "session"})
"""Words after "training" in a class's name that say it runs the training (``DPOTrainingPipeline``)."""
NOT_MODEL_WORDS = frozenset(
    {"tokenizer", "tokeniser", "vocab", "vocabulary", "bpe", "sentencepiece", "index", "data"}
)
"""Words of such a class that trains something other than a model's weights
(``TokenizerTrainingPipeline``)."""


TRAINING_UNIT_WORDS = frozenset({"unit", "module"})
"""Last words of a base class, after ``Train``, whose subclasses compute the loss of one batch."""


def _training_unit(name: str) -> bool:
    """Say whether a base class is a unit of training (fairseq2's ``TrainUnit``, a ``TrainModule``)."""
    said = words(name)
    return len(said) == 2 and said[0] == "train" and said[1] in TRAINING_UNIT_WORDS


def _names_trainer_factory(name: str) -> bool:
    """Say whether a function's name says it builds a trainer (``get_fed_local_sft_trainer``).

    Projects that pick a trainer class by a setting hide the construction in such a helper; what it
    returns is then trained with ``trainer.train()``.
    """
    found = before_origin(words(name))
    return (
        name[:1].islower() and len(found) > 1 and found[-1] == "trainer" and found[0] in TRAINER_FACTORY_VERBS
    )


CLASS_FACTORIES = frozenset({"from_model", "from_pretrained", "from_config"})
"""Class methods that build an object of the class they are called on."""


def _names_trainable(name: str) -> bool:
    """Say whether a class is named for making a model trainable (``TrainableDPO``, ``TrainableLoRA``)."""
    return name[:1].isupper() and words(name)[:1] == ("trainable",)


def _tail(node: cst.BaseExpression) -> str:
    """Return the last name of a base class expression (``trainers.BaseTrainer`` -> ``BaseTrainer``)."""
    while isinstance(node, cst.Call | cst.Subscript):
        node = node.func if isinstance(node, cst.Call) else node.value
    return last_name(node)
