"""A reward model trained with a generic trainer: a sequence-classification head with one output."""

from __future__ import annotations

from itertools import pairwise

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.inference import NO_GRAD
from arb_audit.analyzer.detectors.masked_targets import PREFERENCE_WORDS
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import decorator_callee, last_name, literal_text

SCALAR_HEADS = frozenset(
    {
        "transformers.AutoModelForSequenceClassification.from_pretrained",
        "transformers.AutoModelForSequenceClassification",
    }
)
"""Constructors of a classification head over a language model."""
SCORER_WORDS = frozenset({"reward", "critic", "value"})
"""Words of a model class or factory that make a scalar scorer (with ``model``: ``RewardModel``)."""
TRAINED_BY = frozenset({"backward", "parameters", "named_parameters", "train"})
WEIGHT_ACCESS = frozenset({"parameters", "named_parameters"})
"""Of :data:`TRAINED_BY`, the methods that only reach a model's weights (to optimise or to freeze)."""
"""Methods whose call on a model says the file trains it (``rm.backward(loss)``, ``rm.parameters()``)."""
LOSS_FUNCTIONS = frozenset(
    f"torch.nn.{name}"
    for name in (
        *("functional.mse_loss", "functional.cross_entropy", "functional.binary_cross_entropy"),
        *("functional.binary_cross_entropy_with_logits", "functional.logsigmoid"),
        *("MSELoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"),
    )
)
"""Losses a scorer's own code computes on its predictions (pointwise, binned or pairwise)."""
MODEL_PARAMETER_WORDS = frozenset({"model", "policy", "actor", "critic", "ref", "reference", "rm"})
"""Words of a parameter that holds a model."""


def _innermost(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return the first call of a chain (``Head.from_pretrained(p, num_labels=1)`` of ``....to(d)``)."""
    while (
        type(value) is cst.Call and type(value.func) is cst.Attribute and type(value.func.value) is cst.Call
    ):
        value = value.func.value
    return value


SCORER_ROLES = frozenset({"reward", "rm", "judge", "scorer", "value", "critic"})
"""Words of a keyword that hands a model on as another trainer's scorer (``reward_model=``)."""
SCORER_CLASS = "scorer_class"
"""Variant of a ``loss`` finding for a reward model's class defined in the file (a scalar head): what a
stage trains, known from the model rather than from a loss (the weakest evidence, like masked data)."""
STEPPED = "stepped"
"""Variant of a ``reward_head`` finding where the gradient step itself is the reward model's (its own
class takes it, or an optimiser named for it is stepped): whatever the loss, the scorer is trained."""
ACTOR_CRITIC = "value_head"
"""Variant of a ``loss`` finding for a language model with a value head defined in the file
(``CausalLMWithValueHead``): PPO's actor and critic in one model (group-relative methods have no
critic), known from the model rather than from a loss, as :data:`SCORER_CLASS` is."""
BUILD_VERBS = frozenset({"create", "build", "make", "init", "new"})
"""Verbs of a factory that builds a fresh model (``create_critic_model``), not one loading a trained one."""


SEQUENCE_SCORER_ENDING = "ForSequenceClassification"
"""How transformers names a language model with a head scoring the whole sequence (``LlamaFor...``)."""
SEQUENTIAL_STACKS = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
"""Containers whose output is their last layer's."""
VALUE_MODEL_ENDINGS = frozenset({("value", "model"), ("value", "network"), ("value", "net")})
"""Last two words of a class named for a value model (``ValueModel``, ``TokenValueNetwork``)."""


def names_a_value_model(name: str) -> bool:
    """Say whether a class is named for PPO's value model: with a value head, a critic, a value model.

    ``AutoModelForCausalLMWithValueHead``, ``Critic``, ``LoRACritic``, ``ValueModel``; not
    ``ValueHead`` (the head alone) nor ``CriticConfig``.
    """
    said = words(name)
    return (
        {"with", "value"} <= set(said) or said[-1:] == ("critic",) or tuple(said[-2:]) in VALUE_MODEL_ENDINGS
    )


class RewardHead(RouteDetector):
    """A fresh scalar scorer built in the file: a reward model, when the file's training is generic.

    ``AutoModelForSequenceClassification(..., num_labels=1)``, a model class named for a reward or a
    critic constructed (``RewardModel(config)``) or a factory building one (``create_critic_model``).
    Trained with HF's generic ``Trainer`` or with the loss its own forward pass returns, such a model
    makes the stage a reward model rather than supervised fine-tuning. In a PPO file the same model is
    the frozen reward or the value model, which this does not change (only a generic stage is refined);
    a trained scorer loaded (``RewardModel.from_pretrained``, ``load_reward_model``) is not one built.

    A class named for a model *with* a value head (``AutoModelForCausalLMWithValueHead``,
    ``CodeT5HeadWithValueModel``) that ends in a one-output layer is PPO's actor-critic: a file defining
    one and no reward model is a component of the PPO family.
    """

    TRIGGERS = (
        *("SequenceClassification", "RewardModel", "reward_model", "CriticModel", "critic_model"),
        *("PRM", "reward_optim", "rm_optim", "ranker", "Ranker", "Linear"),
    )

    VALID = (
        # a stand-in module's dummy weight (a test double handed to the trainer), over no hidden state
        Valid(
            "import torch\nclass MockModel(torch.nn.Module):\n    def __init__(self):\n"
            "        self.dummy = torch.nn.Linear(1, 1)\n"
            "model = MockModel()\ntrainer = RLTrainer(model=model, config=cfg)\n"
        ),
        # a classifier of labelled texts, not of a pair's members
        Valid(
            "from transformers import AutoModelForSequenceClassification, Trainer\n"
            "model = AutoModelForSequenceClassification.from_pretrained('m', num_labels=2)\n"
            "Trainer(model=model, args=args, train_dataset=rows['text']).train()\n"
        ),
        Valid(
            "import torch.nn.functional as F\n"
            "def raft_epoch(policy, reward_model: RewardModel, loader, optimizer):\n"
            "    loss = F.cross_entropy(policy(loader.best).logits, loader.labels)\n    loss.backward()\n"
        ),
        Valid(
            "import torch\nimport torch.nn.functional as F\n@torch.no_grad()\n"
            "def evaluate(model: RewardModel, batch):\n"
            "    return F.binary_cross_entropy_with_logits(model(batch.x), batch.y)\n"
        ),
        Valid(
            "import torch.nn.functional as F\n"
            "def value_loss(policy: PolicyModel, reward_model: RewardModel, batch):\n"
            "    return F.mse_loss(policy(batch), reward_model(batch))\n"
        ),
        Valid(
            "from transformers import AutoModelForSequenceClassification\n"
            "AutoModelForSequenceClassification.from_pretrained('m', num_labels=3)\n"
        ),
        Valid("rm = RewardModel.from_pretrained(path)\n"),
        Valid("scorer = load_reward_model(path)\n"),
        Valid(
            "from transformers import AutoModelForSequenceClassification as Head\n"
            "rm = Head.from_pretrained(path, num_labels=1)\n"
            "RLOOTrainer(policy=p, reward_model=rm, args=a).train()\n"
        ),
        Valid(
            "from transformers import AutoModelForSequenceClassification as Head\n"
            "rm = Head.from_pretrained(path, num_labels=1).to('cuda')\n"
            "for p in rm.parameters():\n    p.requires_grad = False\n"
            "SFTTrainer(model=policy, reward_model=rm).train()\n"
        ),
        Valid("class RewardModel(nn.Module):\n    pass\n"),
        # a sequence classifier named for no reward
        Valid("class SpamClassifier(BertForSequenceClassification):\n    pass\n"),
        Valid(
            "import torch.nn.functional as F\nclass Policy(nn.Module):\n    def forward(self, x, y):\n"
            "        return F.cross_entropy(self.net(x), y)\n"
        ),
        Valid("reward_model = make_reward_model()\nscores = reward_model(**batch)\nloss.backward()\n"),
        Valid("model = create_model(GPT2LMHeadModel, path)\nmodel.backward(loss)\n"),
        Valid(
            "from transformers import AutoModelForSequenceClassification as Head\n"
            "base = Head.from_pretrained(path, num_labels=1)\n"
            "PeftModel.from_pretrained(base, adapter).merge_and_unload().save_pretrained(out)\n"
        ),
        Valid(
            "import torch.nn as nn\nclass Gate(nn.Module):\n    def __init__(self, d):\n"
            "        self.proj = nn.Linear(d, 8)\ngate = Gate(16)\nopt = AdamW(gate.parameters())\n"
        ),
    )
    INVALID = (
        Invalid(
            "import torch.nn as nn\nclass LlamaRewardModel(LlamaPreTrainedModel):\n"
            "    def __init__(self, config):\n        self.model = LlamaModel(config)\n"
            "        self.reward_head = nn.Linear(config.hidden_size, 1, bias=False)\n",
            "loss",
            "reward_model",
            SCORER_CLASS,
        ),
        Invalid(
            "from transformers import AutoModelForSequenceClassification as Head\n"
            "rm = Head.from_pretrained('base', num_labels=1)\n",
            "reward_head",
        ),
        Invalid(
            "import torch.nn as nn\nclass CausalLMWithValueHead(nn.Module):\n    def __init__(self, lm):\n"
            "        self.lm = lm\n        self.v_head = nn.Linear(lm.config.hidden_size, 1)\n"
            "    def forward(self, ids):\n        h = self.lm(ids, output_hidden_states=True)\n"
            "        return h.logits, self.v_head(h.hidden_states[-1]).squeeze(-1)\n",
            "loss",
            "ppo",
            ACTOR_CRITIC,
        ),
        # a value model or a critic alone: PPO's, not a reward model
        Invalid(
            "import torch.nn as nn\nclass ValueModel(nn.Module):\n    def __init__(self, h):\n"
            "        self.body = Backbone(h)\n        self.v_head = nn.Linear(h, 1)\n",
            "loss",
            "ppo",
            ACTOR_CRITIC,
        ),
        Invalid(
            "import torch.nn as nn\nclass Critic(nn.Module):\n    def __init__(self, base):\n"
            "        self.base = base\n        self.value_layer = nn.Sequential(\n"
            "            nn.Linear(base.config.hidden_size, 64), nn.ReLU(), nn.Linear(64, 1))\n",
            "loss",
            "ppo",
            ACTOR_CRITIC,
        ),
        Invalid(
            # the head its own class of the file (TRL's layout)
            "import torch.nn as nn\nclass ValueHead(nn.Module):\n    def __init__(self, config):\n"
            "        self.summary = nn.Linear(config.hidden_size, 1)\n"
            "class AutoModelForCausalLMWithValueHead(PreTrainedModelWrapper):\n"
            "    def __init__(self, pretrained_model):\n"
            "        self.v_head = ValueHead(pretrained_model.config)\n",
            "loss",
            "ppo",
            ACTOR_CRITIC,
        ),
        Invalid(
            "rm = create_critic_model(args.model, tokenizer, zero_stage=3)\n"
            "rm, *_ = deepspeed.initialize(model=rm, optimizer=opt)\nrm.backward(loss)\n",
            "reward_head",
        ),
        Invalid(
            "model = reward_model.RewardModel(config=config)\nTrainer(model=model, args=args).train()\n",
            "reward_head",
        ),
        # a class named for a reward model that inherits a sequence-classification head
        Invalid(
            "from transformers import Qwen2ForSequenceClassification\n"
            "class CodeRewardModel(Qwen2ForSequenceClassification):\n    def __init__(self, config):\n"
            "        config.num_labels = 1\n        Qwen2ForSequenceClassification.__init__(self, config)\n",
            "loss",
            "reward_model",
            SCORER_CLASS,
        ),
        Invalid(
            "import torch.nn.functional as F\nclass RewardModel(nn.Module):\n"
            "    def forward(self, x, labels=None):\n        pred = self.to_pred(self.palm(x))\n"
            "        return F.mse_loss(pred, labels)\n",
            "loss",
            "reward_model",
        ),
        Invalid(
            "model = create_custom_model(RewardModel, args.model, tokenizer)\n"
            "for batch in loader:\n    loss = model(**batch)['loss']\n    model.backward(loss)\n",
            "reward_head",
        ),
        Invalid(
            "from transformers import Trainer\nmodel = build_ranker('pairranker', backbone)\n"
            "Trainer(model=model, args=args).train()\n",
            "reward_head",
        ),
        Invalid(
            "loss.backward()\nself.reward_optimizer.step()\n",
            "reward_head",
        ),
        Invalid(
            "import torch.nn as nn\nclass Mistral_VM(nn.Module):\n    def __init__(self, base, vocab_size):\n"
            "        self.base = base\n        self.LN = nn.Linear(vocab_size, 1)\n"
            "VM = Mistral_VM(base, 32000)\noptimizer = AdamW(VM.parameters(), lr=1e-5)\n",
            "reward_head",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "def forward_with_loss(model: RewardModel, input_ids, labels):\n"
            "    return F.binary_cross_entropy_with_logits(model(input_ids), labels)\n",
            "loss",
            "reward_model",
        ),
        # a two-label classifier trained on records' chosen and rejected answers: a pointwise scorer
        Invalid(
            "from transformers import AutoModelForSequenceClassification, Trainer\n"
            "texts = [ex['prompt'] + ex['chosen'] for ex in rows]\n"
            "texts += [ex['prompt'] + ex['rejected'] for ex in rows]\n"
            "model = AutoModelForSequenceClassification.from_pretrained('m', num_labels=2)\n"
            "Trainer(model=model, args=args, train_dataset=encode(texts)).train()\n",
            "reward_head",
        ),
        Invalid(
            "class DataParallelPRIMERewardModel:\n    def update_rm(self, batch):\n"
            "        loss = compute_ce_loss_rm(self.rm(batch), batch['acc'])\n        loss.backward()\n",
            "reward_head",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.classes: list[str] = []
        """Names of the classes open around the node, innermost last."""
        self.functions: list[bool] = []
        """Per open function: whether its one model parameter is typed as a reward model
        (``def forward_with_loss(model: RewardModel, ...)``)."""
        self.reported_class = False
        self.built: dict[str, cst.Call] = {}
        """Names bound to a reward or critic model built here -> the call that builds it."""
        self.trained: set[str] = set()
        """Names the file trains: given as ``model=``, stepped, or whose parameters are optimised."""
        self.weighed: set[str] = set()
        """Names whose weights are iterated (``rm.parameters()``): optimised, or only frozen."""
        self.heads: dict[str, cst.Call] = {}
        """Names bound to a one-output classification head -> the call that loads or builds it."""
        self.scorers: set[str] = set()
        """Names handed on as another trainer's scorer (``reward_model=rm``, ``judge=rm``)."""
        self.handed: set[str] = set()
        """Names given positionally to a ``from_pretrained`` (``PeftModel.from_pretrained(head, path)``)."""
        self.scalar_classes: set[str] = set()
        """Classes of the file that end in a one-output linear layer (a value or reward head)."""
        self.defined_scorer: tuple[str, cst.CSTNode] | None = None
        """The first class named for a reward model that builds a one-output head, and that head."""
        self.actor_critic: tuple[str, cst.CSTNode] | None = None
        """The first class named for a value model (``...WithValueHead``, ``Critic``), and its node."""
        self.classifiers: dict[str, cst.Call] = {}
        """Names bound to a classification head of several outputs (``num_labels=2``) -> its call."""
        self.pair_members: set[str] = set()
        """Members of a preference pair the file reads from its records (``ex["chosen"]``)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if type(node.value) is not cst.Call:
            return
        head = _innermost(node.value)
        if self.classes and type(head) is cst.Call and self._one_output_layer(head):
            # ``self.v_head = nn.Linear(hidden, 1)`` in a model class of the file: the class scores
            # each sequence with one number (a value or reward model built here)
            self.scalar_classes.add(self.classes[-1])
            if names_a_reward_model(self.classes[-1]) and self.defined_scorer is None:
                self.defined_scorer = (self.classes[-1], node)
        targets = [t.target.value for t in node.targets if type(t.target) is cst.Name]
        if targets and last_name(node.value.func) in self.scalar_classes:
            for target in targets:
                self.heads[target] = node.value
        if _builds_scorer(node.value.func) or _factory_of_scorer(node.value):
            for target in targets:
                self.built[target] = node.value
        if targets and type(head) is cst.Call and self._scalar_head(head):
            for target in targets:
                self.heads[target] = head
        elif targets and type(head) is cst.Call and self._classification_head(head):
            for target in targets:
                self.classifiers[target] = head

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if len(node.slice) == 1 and type(index := node.slice[0].slice) is cst.Index:
            key = literal_text(index.value) if type(index.value) is cst.SimpleString else None
            if key in PREFERENCE_WORDS:
                self.pair_members.add(key)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.defined_scorer is not None and not self.reported_class and not self.heads:
            # ``class LlamaRewardModel(LlamaPreTrainedModel)`` with ``self.reward_head = nn.Linear(h,
            # 1)``: the file defines the scorer a reward-model stage trains (its loss may be elsewhere);
            # a file that builds and uses it is decided by that use (a trained one loaded to score
            # or to export)
            name, head = self.defined_scorer
            message = f"{name} is a reward model: a language model with a one-output head"
            self.report(head, "loss", message, statement=head, kind="reward_model", variant=SCORER_CLASS)
        elif (
            self.actor_critic is not None
            and self.defined_scorer is None
            and not self.reported_class
            # its head: a one-output layer of its own, or a value head class of the file it builds
            and any(c == self.actor_critic[0] or "value" in words(c) for c in self.scalar_classes)
        ):
            name, head = self.actor_critic
            message = (
                f"{name} is PPO's actor-critic: a language model with a value head"
                if "with" in words(name)
                else f"{name} is a value model, PPO's critic: a model with a one-output value head"
            )
            self.report(head, "loss", message, statement=head, kind="ppo", variant=ACTOR_CRITIC)
        reported = {id(f.node) for f in self.context.findings if f.signal == "reward_head"}
        for name, call in self.heads.items():
            if (name in self.trained or name not in self.scorers | self.handed) and id(call) not in reported:
                # (``for p in rm.parameters(): p.requires_grad = False`` freezes a scorer handed on; a
                # head given to another call, ``PeftModel.from_pretrained(head, adapter)`` to merge an
                # adapter into it, is that call's and not trained here)
                # (a head handed to a policy-gradient or online-preference trainer as its reward
                # model scores that trainer's samples: it is not what the file trains)
                message = "a classification head with one output scores sequences"
                self.report(call, "reward_head", message)
                reported.add(id(call))
        if self.pair_members == PREFERENCE_WORDS:
            for name, call in self.classifiers.items():
                if name in self.trained and id(call) not in reported:
                    # a classifier trained on records' chosen and rejected answers, each labelled by
                    # its side of the pair: a pointwise reward model, whatever its count of outputs
                    message = "a classification head trained on preference pairs' chosen and rejected answers"
                    self.report(call, "reward_head", message)
                    reported.add(id(call))
        for name, call in self.built.items():
            if name in self.trained | self.weighed:
                message = f"trains {name}, a model built as a scalar scorer (reward or critic)"
                self.report(call, "reward_head", message, statement=call)
                return

    def _one_output_layer(self, node: cst.Call) -> bool:
        """Say whether ``node`` builds a linear layer with one output (``nn.Linear(hidden, 1)``).

        Or a stack of layers whose last is one (``nn.Sequential(nn.Linear(h, 64), nn.ReLU(),
        nn.Linear(64, 1))``).
        """
        if self.names(node.func) & SEQUENTIAL_STACKS and node.args:
            last = node.args[-1].value
            return not node.args[-1].star and type(last) is cst.Call and self._one_output_layer(last)
        if not self.names(node.func) & LINEAR_LAYERS:
            return False
        out = keyword(node, "out_features")
        value = out.value if out is not None else node.args[1].value if len(node.args) > 1 else None
        given = keyword(node, "in_features")
        source = given.value if given is not None else node.args[0].value if node.args else None
        if type(source) is cst.Integer and source.value == "1":
            return False  # ``nn.Linear(1, 1)``: a stand-in module's dummy weight, over no hidden state
        return type(value) is cst.Integer and value.value == "1"

    def _classification_head(self, node: cst.Call) -> bool:
        """Say whether ``node`` loads or builds a classification head of a given count of outputs."""
        return keyword(node, "num_labels") is not None and bool(self.names(node.func) & SCALAR_HEADS)

    def _scalar_head(self, node: cst.Call) -> bool:
        """Say whether ``node`` loads or builds a classification head with one output."""
        labels = keyword(node, "num_labels")
        return (
            labels is not None
            and type(labels.value) is cst.Integer
            and labels.value.value == "1"
            and self._classification_head(node)
        )

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)
        if (
            self.defined_scorer is None
            and names_a_reward_model(node.name.value)
            and any(last_name(b.value).endswith(SEQUENCE_SCORER_ENDING) for b in node.bases)
        ):
            # ``class CodeRewardModel(Qwen2ForSequenceClassification)``: a language model's sequence
            # classification head (one score, as a reward model's is) the class builds by inheriting it
            self.defined_scorer = (node.name.value, node)
        if self.actor_critic is None and names_a_value_model(node.name.value):
            self.actor_critic = (node.name.value, node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [*node.params.posonly_params, *node.params.params]
        typed = [
            last_name(p.annotation.annotation)
            for p in params
            if p.annotation is not None and isinstance(p.annotation.annotation, cst.Name | cst.Attribute)
        ]
        models = [t for t in typed if "model" in words(t) or names_a_reward_model(t)]
        # the reward model must be the function's only model: one handed beside a policy or a
        # reference scores that policy's samples (online DPO, best-of-n SFT, a PPO rollout)
        named = [p for p in params if set(words(p.name.value)) & MODEL_PARAMETER_WORDS]
        no_grad = any(self.names(decorator_callee(d)) & NO_GRAD for d in node.decorators)
        self.functions.append(
            len(models) == 1 and names_a_reward_model(models[0]) and len(named) <= 1 and not no_grad
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def _in_reward_model(self, node: cst.Call) -> None:
        """Report a reward model's code that computes a loss or takes a step: it trains the scorer.

        That code is a reward model's class, or a function handed no model but a reward model.
        """
        in_class = any(names_a_reward_model(c) for c in self.classes)
        if self.reported_class or not (in_class or any(self.functions)):
            return
        statement = self.context.statements[-1] if self.context.statements else None
        if self.names(node.func) & LOSS_FUNCTIONS:
            self.reported_class = True
            message = "a reward model's class computes a loss on its own predictions"
            self.report(node, "loss", message, statement=statement, kind="reward_model", variant="pointwise")
            self.report(node, "reward_head", message, statement=statement)
        elif method(node) == "backward":
            self.reported_class = True
            message = "a reward model's class takes the gradient step: what it trains is the scorer"
            self.report(node, "reward_head", message, statement=statement, variant=STEPPED)

    def visit_Call(self, node: cst.Call) -> None:
        self._in_reward_model(node)
        if method(node) == "step" and type(node.func) is cst.Attribute:
            # the optimiser is named for what it optimises (``self.reward_optimizer.step()``)
            optimiser = set(words(last_name(node.func.value)))
            if optimiser & {"optimizer", "optimiser", "optim", "opt"} and optimiser & {"reward", "rm", "prm"}:
                self.report(
                    node, "reward_head", "steps an optimiser named for a reward model", variant=STEPPED
                )
        model = keyword(node, "model")
        if model is not None and type(model.value) is cst.Name:
            self.trained.add(model.value.value)
        func = node.func
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.attr.value in TRAINED_BY:
            if func.attr.value in WEIGHT_ACCESS:
                self.weighed.add(func.value.value)
            else:
                self.trained.add(func.value.value)
        if method(node) == "from_pretrained":
            # ``PeftModel.from_pretrained(head, adapter)``: trained weights loaded onto the head (to
            # merge or serve them); a head wrapped for training (``get_peft_model(head, cfg)``) is not
            self.handed |= {
                a.value.value for a in node.args if a.keyword is None and type(a.value) is cst.Name
            }
        for arg in node.args:
            if (
                arg.keyword is not None
                and arg.keyword.value != "model"
                and type(arg.value) is cst.Name
                and set(words(arg.keyword.value)) & SCORER_ROLES
            ):
                self.scorers.add(arg.value.value)
        parent = self.context.statements[-1] if self.context.statements else None
        bound = type(parent) is cst.Assign and _innermost(parent.value) is node
        if not bound and self._scalar_head(node):
            self.report(node, "reward_head", "a classification head with one output scores sequences")


LINEAR_LAYERS = frozenset({"torch.nn.Linear", "torch.nn.modules.linear.Linear"})
"""A fully connected layer: with one output, a scalar head."""


def names_a_reward_model(name: str) -> bool:
    """Say whether a class is named for a reward model (``RewardModel``, ``ProcessRM``).

    A transformer named for rewards is one too (``RewardTransformer``).
    """
    said = words(name)
    found = set(said)
    return (
        ("reward" in found and bool(found & {"model", "net", "rm"}))
        # (a reward transformer, not a reward-conditioned one: Decision Transformer's policy)
        or ("reward", "transformer") in set(pairwise(said))
        or said[-1:] == ("rm",)  # ``ProcessRM``, ``LlamaRM``
        or bool(found & {"prm", "orm"})
        or bool(found & RANKER_WORDS)
    )


RANKER_WORDS = frozenset({"ranker", "reranker"})
"""Words of a model that ranks candidate responses (PairRM's ``PairRanker``): a preference scorer."""


def _factory_of_scorer(call: cst.Call) -> bool:
    """Say whether a generic factory is handed a scorer's class (``create_model(RewardModel, ...)``)."""
    found = words(last_name(call.func))
    return (
        bool(found)
        and found[0] in BUILD_VERBS
        and any(
            isinstance(arg.value, (cst.Name, cst.Attribute)) and _builds_scorer(arg.value) and not arg.keyword
            for arg in call.args
        )
    )


def _builds_scorer(func: cst.BaseExpression) -> bool:
    """Say whether a call's name constructs or builds a reward, critic or ranker model (not one loaded)."""
    name = last_name(func)
    found = words(name)
    if not (("model" in found and SCORER_WORDS & set(found)) or RANKER_WORDS & set(found)):
        return False
    return name[:1].isupper() or found[0] in BUILD_VERBS
