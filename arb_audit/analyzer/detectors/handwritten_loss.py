"""A hand-written training loop: the loss's shape names the stage."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    generates,
    method,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.inference import NO_GRAD
from arb_audit.analyzer.loss_slice import (
    DISPREFERRED_WORDS,
    GROUP_RELATIVE_NAMES,
    PREFERENCE_LOSS_WORDS,
    PREFERRED_WORDS,
    SCORE_WORDS,
    SEQUENCE_LOGPROB_WORDS,
    is_one,
    leave_one_out,
    one_minus_plus,
    words,
)
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants
from arb_audit.taxonomy.routes import POLICY_GRADIENT

CROSS_ENTROPY = frozenset(
    {"torch.nn.functional.cross_entropy", "torch.nn.CrossEntropyLoss", "torch.nn.functional.nll_loss"}
)
LOG_SIGMOID = frozenset(
    {
        *("torch.nn.functional.logsigmoid", "torch.nn.LogSigmoid", "jax.nn.log_sigmoid"),
        *("tensorflow.math.log_sigmoid", "mlx.nn.log_sigmoid"),
    }
)
LOG = frozenset({"torch.log"})
LOG_NORMALISERS = frozenset({"log_softmax", "logsigmoid", "LogSoftmax", "LogSigmoid"})
"""Calls that turn scores into log-probabilities, as a preference loss over log-ratios does."""
SIGMOID = frozenset({"torch.sigmoid", "torch.nn.functional.sigmoid"})
"""``torch.log(torch.sigmoid(x))``: the log-sigmoid written out, as older reward-model code does."""
CLAMPS = frozenset({"torch.clamp", "torch.clip"})
GROUPING = frozenset({"view", "reshape", "unflatten"})
LIBRARY_FORMS = frozenset(
    {"group_advantage", "leave_one_out", "clipped_ratio", "preference", "pairwise", "named_preference"}
    | {"handed_pairs"}
)
"""Forms that, without a backward pass here, still make the file a library of that stage's loss."""
LOSS_FORMS = frozenset(
    {"clipped_ratio", "preference", "pairwise", "named_preference", "handed_pairs", "supervised"}
)
"""Forms of a loss itself: computed without gradients, they measure. The others (group-normalised or
leave-one-out advantages, a sample-score-update loop) are statistics computed without gradients anyway."""
PRECEDENCE = (
    ("leave_one_out", "ppo", "rloo", "a leave-one-out baseline over the other samples of a prompt"),
    ("group_advantage", "grpo", "grpo", "advantages normalised within each prompt's group of samples"),
    ("clipped_ratio", "ppo", "ppo", "a probability ratio clipped to [1 - eps, 1 + eps]"),
    ("reinforce", "ppo", "reinforce", "a loop samples from the policy, scores it with a reward and updates"),
    ("preference", "dpo", "dpo", "log-sigmoid of beta times a policy/reference log-ratio margin"),
    ("pairwise", "reward_model", "bradley_terry", "log-sigmoid of chosen minus rejected rewards"),
    (
        "named_preference",
        "dpo",
        "dpo",
        "log-probabilities normalised in a function named for a preference loss",
    ),
    (
        "handed_pairs",
        "dpo",
        "dpo",
        "a loss computed from the chosen and rejected answers' log-probabilities",
    ),
    ("supervised", "sft", None, "cross-entropy against fixed labels"),
)
"""Loss forms, strongest first: policy-gradient code also computes token cross-entropies, so a
supervised term only names the stage when nothing more specific is there."""
EVALUATION_WORDS = frozenset(
    {"eval", "evaluate", "evaluation", "perplexity", "ppl", "val", "validation", "test"}
)
"""Words of a function that measures a loss rather than trains with it (``eval_loss``)."""


class HandwrittenLoss(RouteDetector):
    """Gradient updates (``loss.backward()``) on a loss whose shape is a known stage's.

    Agents often write the loop themselves. The loss names the stage: advantages normalised within a
    group of samples per prompt (``rewards.view(-1, G).mean(...)``, ``(r - mean) / (std + eps)``) is
    GRPO; a ratio clipped to ``[1 - eps, 1 + eps]`` is PPO; ``(sum - r) / (k - 1)`` is RLOO's
    leave-one-out baseline (whatever the advantages are then divided by); a loop that samples from
    the policy, calls a reward and updates, with none of those, is REINFORCE; ``logsigmoid`` of a
    difference of log-ratios is DPO; cross-entropy against labels (or ``model(..., labels=...)``) is
    SFT; ``logsigmoid(r_chosen - r_rejected)`` without a
    ``beta`` is a Bradley-Terry reward model. Without a backward pass nothing is trained, so
    the loss is reported as a component's (a library of losses another file trains with), except a
    cross-entropy, as likely an evaluation's perplexity. Sampling with ``generate`` inside the update
    loop makes the stage on-policy.
    """

    TRIGGERS = (
        "backward",
        "cross_entropy",
        "CrossEntropyLoss",
        "view",
        "reshape",
        "unflatten",
        "clamp",
        "clip",
        "logsigmoid",
        "log_sigmoid",
        "LogSigmoid",
        "sigmoid",
        "log_softmax",
        "LogSoftmax",
        # a preference loss handed both members' log-probabilities (``policy_chosen_logps``,
        # ``logps_chosen``): narrower than "chosen", which a third of files say for other things
        "chosen_log",
        "_chosen",
        "preferred_log",
        "winner_log",
    )

    VALID = (
        # the mean of the other classes of one prediction, and arithmetic over one fewer: no baseline
        Valid(
            "def margins(logits, target_logits, w_max, ka):\n"
            "    others = (logits.sum(-1) - target_logits) / (logits.shape[-1] - 1)\n"
            "    upper = (w_max - 1.0) / (ka - 1.0)\n    return others, upper\n"
        ),
        # a name bound in another function is not the log-sigmoid's argument
        Valid(
            "import torch.nn.functional as F\n"
            "def margin(a, b):\n    delta = (a - b) * 0.1\n    return delta\n"
            "def gate(delta):\n    return F.logsigmoid(delta)\n"
        ),
        Valid("import torch.nn.functional as F\nloss = F.cross_entropy(logits, labels)\nprint(loss)\n"),
        Valid("loss = model(input_ids, labels=labels).loss\nlosses.append(loss.item())\n"),
        Valid("import torch\nx = torch.clamp(y, 0, 1)\nx.backward()\n"),
        Valid(
            "import torch\nimport torch.nn.functional as F\nwith torch.no_grad():\n"
            "    for batch in loader:\n        c, r = score(batch)\n"
            "        loss = -F.logsigmoid(c - r).mean()\n        total += loss.item()\n"
        ),
        Valid(
            "import torch\nimport torch.nn.functional as F\n@torch.no_grad()\ndef evaluate(c, r):\n"
            "    return -F.logsigmoid(c - r).mean()\n"
        ),
        Valid(
            "import torch.nn.functional as F\n"
            "def perplexity(logits, labels):\n    return F.cross_entropy(logits, labels).exp()\n"
        ),
        Valid("def dpo_loss_report(losses):\n    print(losses)\n"),
        # a large-batch gradient-noise estimate: a product of count and norm, not the samples' total
        Valid("loss.backward()\ng_noise = (accum_steps * gbbig - gbsmall) / (accum_steps - 1)\n"),
        # a tensor's own sum over an axis, less one: the last position of each row, no baseline
        Valid("loss.backward()\nseq_lengths = attention_mask.sum(dim=1) - 1\n"),
        Valid("import jax\nx = a + b\ny = jax.nn.log_sigmoid(x)\n"),
        # the members' scores, not their log-probabilities: a reward model's outputs
        Valid("loss = loss_fn(chosen_rewards, rejected_rewards, chosen_logps, rejected_logps)\n"),
        Valid("stats = summarise(chosen_logps=c, rejected_logps=r)\n"),
        Valid(
            "import torch.nn.functional as F\n"
            "def eval_loss(logits, labels):\n    return F.cross_entropy(logits, labels)\n"
        ),
    )
    INVALID = (
        # a library's leave-one-out advantages, scaled by the group's spread: RLOO's, not GRPO's
        Invalid(
            "def rloo_advantages(rewards, k):\n    grouped = rewards.view(-1, k)\n"
            "    baselines = (grouped.sum(dim=1, keepdim=True) - grouped) / (k - 1)\n"
            "    return (grouped - baselines) / (grouped.std(dim=1, keepdim=True) + 1e-8)\n",
            "loss",
            "ppo",
            "rloo",
        ),
        # the same baseline with the sample's own reward split out: r * G / (G - 1) - total / (G - 1)
        Invalid(
            "def compute_advantages(rewards, G):\n    r = rewards.view(-1, G)\n"
            "    return r * G / (G - 1) - r.sum(dim=1, keepdim=True) / (G - 1)\n",
            "loss",
            "ppo",
            "rloo",
        ),
        # the samples' mean bound to a name, or numpy's, times the count, less the sample: RLOO's
        Invalid(
            "def update(rewards, logp, k):\n    g = rewards.view(-1, k)\n"
            "    m = g.mean(1, keepdim=True)\n    baseline = (m * k - g) / (k - 1)\n"
            "    loss = -(logp * (g - baseline)).mean()\n    loss.backward()\n",
            "stage",
            "ppo",
            "rloo",
        ),
        Invalid(
            "def update(s, logp, n):\n    s = s.reshape(-1, n)\n"
            "    base = (n * np.mean(s, axis=1, keepdims=True) - s) / (n - 1)\n"
            "    loss = -(logp * (s - base)).mean()\n    loss.backward()\n",
            "stage",
            "ppo",
            "rloo",
        ),
        # each sample's own reward times the count, less their sum bound before: RLOO's baseline
        Invalid(
            "def update(returns, logp, G):\n    sum_ret = returns.sum()\n"
            "    advantages = (returns * G - sum_ret) / (G - 1)\n"
            "    loss = -(logp * advantages).mean()\n    loss.backward()\n",
            "stage",
            "ppo",
            "rloo",
        ),
        # jax's log-sigmoid of a margin bound first, as a pair indexed along an axis
        Invalid(
            "import jax\nclass DpoLoss(Loss):\n    def get_values(self, policy, anchor):\n"
            "        diff = policy - anchor\n        delta = (diff[..., 0] - diff[..., 1]) * self.tau\n"
            "        return -jax.nn.log_sigmoid(delta)\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "class Model(nn.Module):\n    def forward(self, batch):\n"
            "        loss, chosen_rewards, rejected_rewards = self.loss_fn(\n"
            "            policy_chosen_logps=out['chosen'], policy_rejected_logps=out['rejected'],\n"
            "            reference_chosen_logps=ref['chosen'], reference_rejected_logps=ref['rejected'])\n"
            "        return loss\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "def forward(self, batch):\n"
            "    out['loss'] = self.loss_fn(chosen_logps=c, rejected_logps=r, ref_chosen_logps=rc)\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "losses, chosen_rewards, rejected_rewards = self.dpo(\n"
            "    policy_chosen_logps=c, policy_rejected_logps=r)\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "import torch\nclass Loss:\n    @torch.no_grad()\n    def advantages(self, rewards):\n"
            "        mean = rewards.view(-1, self.G).mean(dim=1)\n"
            "        std = rewards.view(-1, self.G).std(dim=1)\n"
            "        return (rewards - mean) / (std + 1e-4)\n"
            "    def __call__(self, logps, old_logps, adv):\n        ratio = torch.exp(logps - old_logps)\n"
            "        clipped = torch.clamp(ratio, 1 - self.eps, 1 + self.eps)\n"
            "        return -torch.min(ratio * adv, clipped * adv).mean()\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def dpo_loss(ref_logits, logits, labels, beta=0.1):\n"
            "    ratio = (logits.log_softmax(-1) - ref_logits.log_softmax(-1)).sum(1)\n"
            "    return -(labels * (beta * ratio).log_softmax(0)).sum()\n",
            "loss",
            "dpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "def compute_loss_with_mask(logits, target, mask):\n"
            "    return (F.cross_entropy(logits, target, reduction='none') * mask).sum() / mask.sum()\n",
            "loss",
            "sft",
        ),
        Invalid(
            "import torch\nclass GRPOLoss(torch.nn.Module):\n    def forward(self, logp, old_logp, adv):\n"
            "        ratio = (logp - old_logp).exp()\n"
            "        return -torch.min(ratio * adv, ratio.clamp(1 - self.eps, 1 + self.eps) * adv).mean()\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "model = load()\nfor batch in loader:\n    out = model(**batch, labels=batch['input_ids'])\n"
            "    out.loss.backward()\n    optimizer.step()\n",
            "stage",
            "sft",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "loss = -F.logsigmoid(beta * ((pi_c - pi_r) - (ref_c - ref_r))).mean()\nloss.backward()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "loss = -F.logsigmoid(rm(chosen) - rm(rejected)).mean()\nloss.backward()\n",
            "stage",
            "reward_model",
        ),
        # a cost model's pairwise loss and its safe/unsafe sign terms: a sign scales no margin
        Invalid(
            "import torch.nn.functional as F\n"
            "loss = -F.logsigmoid(higher_cost - lower_cost) - F.logsigmoid(lower_sign * lower_cost)\n"
            "loss.mean().backward()\n",
            "stage",
            "reward_model",
        ),
        Invalid(
            "import torch.nn.functional as F\n"
            "loss = -F.logsigmoid(-self.beta * logits).mean()\nloss.backward()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import torch.nn.functional as F\nloss = -F.logsigmoid(logits * 0.1).mean()\nloss.backward()\n",
            "stage",
            "dpo",
        ),
        Invalid(
            "import torch\nclass PairwiseRewardModel(torch.nn.Module):\n"
            "    def forward(self, chosen, rejected):\n"
            "        return -torch.log(torch.sigmoid(self.head(chosen) - self.head(rejected))).mean()\n",
            "loss",
            "reward_model",
        ),
        Invalid(
            "import torch\nfor step in range(n):\n    completions = policy.generate(prompts)\n"
            "    grouped = rewards.view(-1, group_size)\n"
            "    mean = grouped.mean(dim=1).repeat_interleave(group_size)\n"
            "    adv = (rewards - mean) / (grouped.std(dim=1).repeat_interleave(group_size) + 1e-4)\n"
            "    loss = -(torch.exp(logp - old_logp) * adv).mean()\n    loss.backward()\n",
            "stage",
            "grpo",
        ),
        Invalid(
            "import torch\nratio = torch.exp(logp - old_logp)\n"
            "loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - eps, 1 + eps) * adv).mean()\n"
            "accelerator.backward(loss)\n",
            "stage",
            "ppo",
            "ppo",
        ),
        # the statistics computed in the advantages' own assignment, and a normaliser beside a function
        # whose group statistics are only logged (they are read as the file's: which function's
        # advantages a step uses is the step's to say)
        Invalid(
            "def grpo_advantages(rewards, n):\n    grouped = rewards.view(-1, n)\n"
            "    advantages = (grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1) + 1e-4)\n"
            "    return advantages.view(-1)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def normalise(rewards, n):\n    grouped = rewards.view(-1, n)\n"
            "    return (grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1) + 1e-4)\n"
            "def log_stats(rewards, n):\n    std_grouped = rewards.view(-1, n).std(dim=1)\n"
            "    advantages = (rewards == 1.0).float()\n    log({'std': std_grouped.mean().item()})\n"
            "    return advantages\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def compute_grpo_advantage(scores, n):\n    scores = scores.view(-1, n)\n"
            "    mean, std = scores.mean(dim=1, keepdim=True), scores.std(dim=1, keepdim=True)\n"
            "    return (scores - mean) / (std + 1e-6)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def compute_reward(texts, answers):\n    return score(texts, answers)\n"
            "for step in range(steps):\n    texts = policy.generate(prompts, do_sample=True)\n"
            "    rewards = compute_reward(texts, answers)\n"
            "    loss = -(rewards * sequence_logprobs(policy, texts)).mean()\n    loss.backward()\n",
            "stage",
            "ppo",
            "reinforce",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.seen: dict[str, tuple[cst.CSTNode, cst.CSTNode | None]] = {}
        self.backward: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        self.loops: list[list[bool]] = []
        """Per open loop: it generates, it updates (backward), it computes rewards."""
        self.on_policy = False
        self.grouped_names: set[str] = set()
        """Code of the names assigned a tensor regrouped per prompt (``x.view(-1, G)``)."""
        self.bound: list[dict[str, cst.BaseExpression]] = [{}]
        """Per open function (the module's first): what each plain name was last assigned there, in
        the walk's order (a log-sigmoid's margin)."""
        self.named_loss: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        """A cross-entropy computed in a function named for a loss (``compute_loss_with_mask``)."""
        self.named_group_relative = False
        """The clipped ratio sits in code named for GRPO (``class GRPOLoss``, ``def dapo_loss``)."""
        self.closed: list[cst.CSTNode] = []
        """Open ``with torch.no_grad()`` blocks and ``@torch.no_grad()`` functions around the node,
        innermost last."""

    def _saw(self, form: str, node: cst.CSTNode) -> None:
        if self.closed and form in LOSS_FORMS:
            return  # a loss computed where no gradient flows is a measure (an evaluation's), not trained
        statement = self.context.statements[-1] if self.context.statements else None
        self.seen.setdefault(form, (node, statement))

    def _no_grad(self, expression: cst.BaseExpression) -> bool:
        """Say whether ``expression`` is ``torch.no_grad()`` or ``torch.inference_mode()`` (called or not)."""
        called = expression.func if type(expression) is cst.Call else expression
        return bool(self.names(called) & NO_GRAD)

    def _enter(self, node: cst.CSTNode, gradients_off: bool) -> None:
        if gradients_off:
            self.closed.append(node)

    def _leave(self, node: cst.CSTNode) -> None:
        if self.closed and self.closed[-1] is node:
            self.closed.pop()

    def visit_With(self, node: cst.With) -> None:
        self._enter(node, any(self._no_grad(item.item) for item in node.items))

    def leave_With(self, original_node: cst.With) -> None:
        self._leave(original_node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._enter(node, any(self._no_grad(d.decorator) for d in node.decorators))
        self.bound.append({})

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._leave(original_node)
        self.bound.pop()

    def visit_For(self, node: cst.For) -> None:
        self.loops.append([False, False, False])

    def visit_While(self, node: cst.While) -> None:
        self.loops.append([False, False, False])

    def _leave_loop(self, node: cst.For | cst.While) -> None:
        seen = self.loops.pop()
        generates, updates, rewards = seen
        self.on_policy = self.on_policy or (generates and updates)
        if generates and updates and rewards:
            self._saw("reinforce", node)
        if self.loops:
            self.loops[-1] = [a or b for a, b in zip(self.loops[-1], seen, strict=True)]

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop(original_node)

    def visit_Call(self, node: cst.Call) -> None:
        name = method(node)
        callee = self.names(node.func)
        if name == "backward":
            self.backward = self.backward or (
                node,
                self.context.statements[-1] if self.context.statements else None,
            )
            if self.loops:
                self.loops[-1][1] = True
        elif self.loops and generates(self, node):
            self.loops[-1][0] = True
        elif self.loops and any("reward" in part.lower() for q in callee for part in q.split(".")[-1:]):
            self.loops[-1][2] = True  # the code names its scorer so (compute_reward, reward_fn)
        args = [a.value for a in node.args]
        # model(..., labels=...) on the file's own model object (not a library function)
        labelled = keyword(node, "labels") is not None and not any(
            map(self.context.resolver.is_imported, callee)
        )
        if callee & CROSS_ENTROPY or labelled:
            self._saw("supervised", node)
            named = {w for scope in self.enclosing()[-1:] for w in words(scope)}
            if callee & CROSS_ENTROPY and "loss" in named and not named & EVALUATION_WORDS:
                # ``def compute_loss_with_mask(logits, target)``: the training loss of another file
                self.named_loss = self.named_loss or (
                    node,
                    self.context.statements[-1] if self.context.statements else None,
                )
        if (name in LOG_NORMALISERS or {c.rsplit(".", 1)[-1] for c in callee} & LOG_NORMALISERS) and any(
            "loss" in found and found & PREFERENCE_LOSS_WORDS
            for found in map(set, map(words, self.enclosing()))
        ):
            # ``def dpo_loss(...)`` normalising log-probabilities: a preference loss of its own form
            self._saw("named_preference", node)
        if callee & LOG and args and type(args[0]) is cst.Call and self.names(args[0].func) & SIGMOID:
            args = [a.value for a in args[0].args]  # log(sigmoid(x)) is logsigmoid(x)
            callee = LOG_SIGMOID
        if callee & LOG_SIGMOID:
            # (``po_delta = (d[..., 0] - d[..., 1]) * tau; log_sigmoid(po_delta)``: the margin bound first)
            args = [self._bound_value(a) for a in args]
            operators = {
                type(n.operator) for a in args for n in (a, *descendants(a)) if type(n) is cst.BinaryOperation
            }
            if any(_temperature_scaled(n) for a in args for n in _terms(a)):
                # beta * (log-ratio margin): DPO's implicit reward
                self._saw("preference", node)
            elif cst.Subtract in operators:  # r_chosen - r_rejected on a scalar head: Bradley-Terry
                self._saw("pairwise", node)
        if (callee & CLAMPS and one_minus_plus(args[1:])) or (
            name in ("clamp", "clip") and one_minus_plus(args)
        ):
            self._saw("clipped_ratio", node)
            self.named_group_relative = self.named_group_relative or any(
                GROUP_RELATIVE_NAMES & set(words(scope)) for scope in self.enclosing()
            )
        if name in ("mean", "std") and type(node.func) is cst.Attribute:
            receiver = node.func.value
            if type(receiver) is cst.Call and method(receiver) in GROUPING and len(receiver.args) >= 2:
                first = receiver.args[0].value
                if type(first) is cst.UnaryOperation and is_one(first.expression):
                    self._saw("group_advantage", node)
            elif isinstance(receiver, cst.Name | cst.Attribute) and self._grouped(receiver):
                self._saw("group_advantage", node)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if leave_one_out(node, self.bound[-1].get):
            self._saw("leave_one_out", node)

    def _grouped(self, receiver: cst.BaseExpression) -> bool:
        """Say whether a name was assigned from ``x.view(-1, G)`` (tracked by its code, per file)."""
        return cst.Module([]).code_for_node(receiver) in self.grouped_names

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            if type(node.target) is cst.Name:
                self.bound[-1][node.target.value] = node.value
            self._handed_pairs([node.target], node.value)

    def _handed_pairs(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        if (
            type(value) is cst.Call
            and len(value.args) >= 2  # (both members: most calls assigned are not, and stop here)
            and any(_target_words(t) & {"loss", "losses"} for t in targets)
            and _pair_logps(value)
        ):
            # ``loss, *_ = self.loss_fn(policy_chosen_logps=..., policy_rejected_logps=...)``: the
            # preference loss is configured elsewhere, what it is handed shows its family
            self._saw("handed_pairs", value)

    def _bound_value(self, arg: cst.BaseExpression) -> cst.BaseExpression:
        """Return what a name (or its negation) handed to a log-sigmoid was last bound to, else itself."""
        name = arg.expression if type(arg) is cst.UnaryOperation else arg
        return self.bound[-1].get(name.value, arg) if type(name) is cst.Name else arg

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if len(node.targets) == 1 and type(bound := node.targets[0].target) is cst.Name:
            self.bound[-1][bound.value] = value
        self._handed_pairs([t.target for t in node.targets], value)
        # (``x.view(-1, G)`` lays out groups; ``x.view(-1)`` flattens them)
        if type(value) is cst.Call and method(value) in GROUPING and len(value.args) >= 2:
            first = value.args[0].value
            if type(first) is cst.UnaryOperation and is_one(first.expression):
                for target in node.targets:
                    self.grouped_names.add(cst.Module([]).code_for_node(target.target))

    def leave_Module(self, original_node: cst.Module) -> None:
        for form, kind, variant, message in PRECEDENCE:
            if form not in self.seen:
                continue
            node, statement = self.seen[form]
            if form == "clipped_ratio" and self.named_group_relative:
                kind, variant, message = "grpo", "grpo", f"{message}, in code named for GRPO"
            if self.backward is not None:
                on_policy = True if kind in POLICY_GRADIENT or self.on_policy else None
                self.report(
                    node,
                    "stage",
                    message,
                    statement=statement,
                    kind=kind,
                    variant=variant,
                    on_policy=on_policy,
                )
                return
            if form in LIBRARY_FORMS or (form == "supervised" and self.named_loss is not None):
                # A library of losses that another file trains with (a cross-entropy alone is as
                # likely an evaluation's perplexity, unless the function computing it is named a loss).
                if form == "supervised" and self.named_loss is not None:
                    node, statement = self.named_loss
                    message = f"{message}, in a function named for a loss"
                self.report(node, "loss", message, statement=statement, kind=kind, variant=variant)
                return


TEMPERATURE_WORDS = frozenset({"beta", "temperature", "temp", "tau", "scale", "coef", "coeff"})
"""Words of the factor a preference loss scales its margin by (``self.beta``, ``args.scale_coeff``)."""
NOT_TEMPERATURE_WORDS = frozenset({"logit", "logits", "loss", "kl", "lr", "grad", "reward", "rewards"})
"""Words of a scale that is no preference temperature: a contrastive model's learned ``logit_scale``, a
loss's or a KL term's coefficient, a learning rate's."""


def _terms(node: cst.BaseExpression) -> list[cst.BaseExpression]:
    """Return the terms of a sum or difference, signs dropped (``-beta * m - g``: ``beta * m``, ``g``).

    Factors of a product are not terms: in ``(2 * is_safe - 1) * score`` the literal scales a sign.
    """
    while type(node) is cst.UnaryOperation:
        node = node.expression
    if type(node) is cst.BinaryOperation and isinstance(node.operator, cst.Add | cst.Subtract):
        return [*_terms(node.left), *_terms(node.right)]
    return [node]


def _temperature_scaled(node: cst.CSTNode) -> bool:
    """Say whether a term multiplies by a temperature: a literal or a factor named for one.

    DPO's implicit reward is ``beta`` times a log-ratio margin. A scalar head's score times a sign
    (a cost model's ``-logsigmoid(cost_sign * cost)``, safe or unsafe) scales by no temperature: it
    classifies the score, as a reward model's loss does.
    """
    if type(node) is not cst.BinaryOperation or not isinstance(node.operator, cst.Multiply):
        return False
    for factor in (node.left, node.right):
        while type(factor) is cst.UnaryOperation:
            factor = factor.expression
        if isinstance(factor, cst.Integer | cst.Float):
            return True
        said = set(words(last_name(factor))) if isinstance(factor, cst.Name | cst.Attribute) else set()
        if said & TEMPERATURE_WORDS and not said & NOT_TEMPERATURE_WORDS:
            return True
    return False


def _target_words(target: cst.BaseExpression) -> set[str]:
    """Words of the names an assignment binds (``loss, chosen_rewards = ...``: both)."""
    if isinstance(target, cst.Tuple | cst.List):
        return {w for element in target.elements for w in _target_words(element.value)}
    if type(target) is cst.Subscript:
        # ``out["loss"] = ...``: the key written, else the container's name
        keys = [e.slice.value for e in target.slice if type(e.slice) is cst.Index]
        named = {w for k in keys if type(k) is cst.SimpleString for w in words(literal_text(k))}
        return named or _target_words(target.value)
    if type(target) is cst.StarredElement:
        return _target_words(target.value)
    if type(target) is cst.Name:
        return set(words(target.value))
    return set(words(target.attr.value)) if type(target) is cst.Attribute else set()


def _pair_logps(call: cst.Call) -> bool:
    """Say whether a call is handed both members' sequence log-probabilities and no scorer's outputs.

    Read from keyword names and from the arguments' own names (``policy_chosen_logps=out["c"]``,
    ``loss_fn(chosen_logps, rejected_logps, ref_chosen, ref_rejected)``).
    """
    found: set[str] = set()
    for arg in call.args:
        if arg.keyword is not None:
            found.update(words(arg.keyword.value))
        value = arg.value
        if type(value) is cst.Name:
            found.update(words(value.value))
        elif type(value) is cst.Attribute:
            found.update(words(value.attr.value))
    return bool(
        found & PREFERRED_WORDS
        and found & DISPREFERRED_WORDS
        and found & SEQUENCE_LOGPROB_WORDS
        and not found & SCORE_WORDS
    )
