"""Advantages estimated from rewards: the policy-gradient part that orchestrators keep apart from the loss."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.config_module import written_turns
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.trainers import route_word
from arb_audit.analyzer.walk import descendants
from arb_audit.taxonomy.routes import POLICY_GRADIENT

ADVANTAGE_NAMES = frozenset({"advantage", "advantages", "adv", "advs", "advantages_"})
"""Words of a name that holds advantages."""
CENTRES = frozenset({"mean", "average", "avg"})
"""Reductions that centre a set of rewards on itself."""
REGROUPINGS = frozenset({"view", "reshape", "unflatten", "view_as", "reshape_as"})
"""Methods that lay a tensor's values out in groups without changing them (``rewards.view(-1, n)``)."""
SPREADS = frozenset({"repeat_interleave", "repeat", "expand", "expand_as", "unsqueeze", "tile"})
"""Methods that spread one value per group back over the group's samples."""
DISCOUNT_WORDS = frozenset({"gamma", "discount"})
"""Words of the discount factor of a temporal-difference residual."""
VALUE_WORDS = frozenset({"value", "values", "nextvalues", "vpred", "vpreds", "v", "vals"})
"""Words of a name holding a learned value estimate."""
NORMALISED_WORDS = frozenset({"normalized", "normalised", "norm", "centered", "centred", "whitened"})
"""Words that, beside "rewards", name rewards normalised for use as advantages (``normalized_rewards``)."""
RETURN_ESTIMATE_WORDS = frozenset(
    {*("advantage", "advantages", "adv", "advs", "return", "returns", "rtg", "discount", "discounted")}
)
"""Words of a function that estimates returns or advantages (``estimate_advantages``, ``discount``)."""
ESTIMATING_VERBS = frozenset({"compute", "estimate", "calc", "calculate", "get", "make", "build"})
"""First words of a function that computes advantages (``compute_grpo_outcome_advantage``), not one that
checks or reports them (``detect_ppo_advantage_explosion``)."""
TEST_WORDS = frozenset({"test", "tests", "testcase"})
"""Words of a test case's base class (``unittest.TestCase``)."""
NAMED_ESTIMATOR = "named_estimator"
"""Variant of a ``loss`` finding: advantages from an estimator of another file, named for its family."""
GROUP_SIZES = frozenset(
    {
        *("num_return_sequences", "num_generations", "n_generations", "generations_per_prompt", "group_size"),
        *("samples_per_prompt", "num_samples_per_prompt", "n_samples_per_prompt", "responses_per_prompt"),
        *("rollout_n", "n_rollouts", "num_rollouts", "rollouts_per_prompt", "best_of", "G"),
    }
)
"""Names (and keywords) of how many samples a prompt is given (``num_return_sequences``, a group's size)."""
GROUP_NAMES = frozenset({"group", "groups", "grouped", "grpo"})
"""Words of a name that says its values come in groups of one prompt's samples (``group_rewards``)."""
DIVIDERS = frozenset({"safe_div", "div", "divide", "true_divide"})
"""Functions that divide their first argument by their second (``safe_div(r - r.mean(), std)``)."""
CLIPS = frozenset({"max", "min", "clamp", "clip"})
"""Functions bounding a value (``max(-c, min(c, a))``, ``torch.clamp(adv, -c, c)``): what they bound is
still the advantage."""


class AdvantageEstimate(RouteDetector):
    """An assignment of advantages computed from rewards, in a file whose loss is elsewhere.

    Distributed RL frameworks (an orchestrator scoring rollouts, a trainer taking the gradient step in
    another process) put the advantage estimate in a module of its own. Its form names the family:
    rewards centred on their own mean (``rewards - rewards.mean()``, optionally over their std) compare
    the samples of one prompt's group with each other — group-relative, GRPO; rewards minus a separate
    baseline (a running average, a value estimate) are the other policy-gradient estimators — PPO
    family — and so are temporal-difference residuals of a learned value estimate
    (``delta = r + gamma * next_value - value``, generalised advantage estimation). Reported as a
    ``loss``-form finding: on its own (no gradient step in the file) the file is a component serving
    that route; with a gradient step, the step's own loss decides.
    """

    TRIGGERS = ("adv", "reward", "gamma")
    VALID = (
        # a table's columns of reward differences: a value stored under a key is not read as advantages
        Valid("for r in rows:\n    r['advantage'] = r['reward_dpo'] - r['reward_sft']\n"),
        Valid("df['advantage'] = df['reward'] - df['reward'].mean()\ndf.to_csv('out.csv')\n"),
        # a name bounded in place (bound to its own clamp): nothing centred, and no endless reading
        Valid("advantages = estimate(batch)\nadvantages = torch.clamp(advantages, -5.0, 5.0)\n"),
        Valid("adv = load('adv.json')\n"),
        Valid("advantages = []\n"),
        Valid("review_score = rewrite + gamma * vals - offset\n"),
        # a check of advantages named for a family, and a stub: no estimate
        Valid(
            "def detect_ppo_advantage_explosion(df):\n    return df['advantage'].abs().max() > 10\n"
            "def compute_grpo_advantages(rewards):\n    raise NotImplementedError\n"
        ),
        # discounted returns in an estimator deriving from a group one: compared within groups (GiGPO)
        Valid(
            "class StepEstimator(GRPOEstimator):\n    def returns(self, steps):\n        running = 0.0\n"
            "        for s in reversed(steps):\n            running = s.reward + self.gamma * running\n"
            "        advantages = centre_in_groups(running)\n        return advantages\n"
        ),
        # discounted step returns normalised within groups by the file's functions (GiGPO's)
        Valid(
            "def compute_step_discounted_returns(rewards, gamma):\n    running = 0.0\n"
            "    for r in reversed(rewards):\n        running = r + gamma * running\n"
            "    advantages = running\n    return advantages\n"
            "def step_norm_reward(returns, index):\n    return normalise_in_groups(returns, index)\n"
        ),
        # an evaluation script's returns and their spread, outside any estimator
        Valid(
            "for ep in range(50):\n    ret = 0.0\n    for rew in reversed(rewards):\n"
            "        ret = rew + gamma * ret\n    all_returns.append(ret)\n"
            "advantages = np.array(all_returns) - np.mean(all_returns)\n"
        ),
        # discounted returns computed and only reported: no advantages are filled
        Valid("for r in reversed(rewards):\n    ret = r + gamma * ret\nprint('return', ret)\n"),
        Valid(
            "with torch.no_grad():\n    td_error = rewards + gamma * next_values - values\n"
            "print('mean TD error', td_error.abs().mean())\n"
        ),
        Valid("x = rewards - rewards.mean()\n"),
        # a helper of no family's name
        Valid("from .util import compute_advantages\nadvantages = compute_advantages(rewards, n)\n"),
        Valid("row = dict(prompt=p, advantage=None)\n"),
        Valid("stats = df.groupby('model')['latency'].agg(['mean', 'std'])\n"),
        Valid("by_task = df.groupby('task')['reward'].mean()\n"),
        Valid(
            "def report(df):\n    stats = df.groupby('prompt_id')['reward'].agg(['mean', 'std'])\n"
            "    print(stats)\n"
        ),
        Valid("normalized_rewards = rewards / 10\n"),
        # a position's gain, a term of the reward it feeds: no estimate from rewards
        Valid(
            "def reward(game, move):\n    solver_advantage = (next_score - current_score) / 100.0\n"
            "    reward = w * solver_advantage + v * win_pct\n    return reward\n"
        ),
        # returned from a function not named for advantages: a statistic, whatever it feeds
        Valid("def spread(rewards):\n    return rewards - rewards.mean()\n"),
        Valid(
            "class TestGRPO:\n    def reference_advantages(self, r):\n"
            "        return (r - r.mean()) / (r.std() + 1e-6)\n"
        ),
        Valid(
            "class AdvantageTests(unittest.TestCase):\n"
            "    def reference(self, rewards):\n        return rewards - rewards.mean()\n"
        ),
    )
    INVALID = (
        # an estimator defined here, named for its family, its centring done through keyed tables
        Invalid(
            "def compute_grpo_outcome_advantage(token_level_rewards, eos_mask, index, eps=1e-6):\n"
            "    scores = token_level_rewards.sum(dim=-1)\n    id2mean, id2std = {}, {}\n"
            "    for i in range(len(scores)):\n"
            "        scores[i] = (scores[i] - id2mean[index[i]]) / (id2std[index[i]] + eps)\n"
            "    return scores, scores\n",
            "loss",
            "grpo",
            "named_estimator",
        ),
        # discounted returns of the rewards, whitened, as the advantages: REINFORCE(++), no value
        Invalid(
            "def estimate_advantages(rewards, gamma, masks):\n    returns = torch.zeros_like(rewards)\n"
            "    running = torch.zeros(rewards.shape[0])\n"
            "    for t in reversed(range(rewards.shape[1])):\n"
            "        running = rewards[:, t] + gamma * running\n        returns[:, t] = running\n"
            "    advantages = whiten(returns, mask=masks)\n    return advantages, returns\n",
            "loss",
            "ppo",
            "reinforce",
        ),
        Invalid(
            "def update_advantages(df):\n"
            "    grouped = df.groupby('group_id')['reward'].agg(['mean', 'std', 'count']).reset_index()\n"
            "    df = df.merge(grouped, on='group_id')\n"
            "    df['advantages'] = (df['reward'] - df['mean']) / (df['std'] + 1e-6)\n",
            "loss",
            "grpo",
            "grpo",
        ),
        # a prompt's samples drawn several times, their rewards centred on their mean
        Invalid(
            "outs = policy.generate(prompts, num_return_sequences=group_size)\n"
            "advantages = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        # one sample per prompt: the batch's mean is a baseline the prompts share (REINFORCE)
        Invalid(
            "out = model.generate(ids, do_sample=True)\nadvantages = rewards - rewards.mean()\n",
            "loss",
            "ppo",
            "reinforce",
        ),
        # a module that samples nothing cannot say how its callers sample: a group's, as GRPO's are
        Invalid("advantages = rewards - rewards.mean()\n", "loss", "grpo"),
        Invalid("prompts = [question] * k\nadvantages = rewards - rewards.mean()\n", "loss", "grpo"),
        Invalid(
            "for q in questions:\n    outs = [model.generate(q) for _ in range(1)]\n"
            "    for _ in range(num_samples):\n        outs.append(model.generate(q, do_sample=True))\n"
            "    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "qs = [q for _ in range(4)]\nout = model.generate(**tok(qs))\nadv = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        Invalid("out = model.generate(ids.expand(K, -1))\nadv = rewards - rewards.mean()\n", "loss", "grpo"),
        Invalid(
            "for ex in data:\n    outs = [model.generate(ids, do_sample=True) for _ in range(K)]\n"
            "    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-8)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "for ex in data:\n    for i in range(K):\n"
            "        outs.append(model.generate(ids, do_sample=True))\n"
            "    advantages = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "expanded = [q for q in batch for _ in range(K)]\nouts = llm.generate(expanded)\n"
            "advantages = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "batch = np.repeat(batch, K)\nouts = llm.generate(batch)\n"
            "advantages = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "ids = enc['input_ids'].repeat(K, 1)\nout = model.generate(ids, do_sample=True)\n"
            "adv = (rewards - rewards.mean(0)) / (rewards.std(0) + 1e-8)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "dist.init_process_group('nccl')\nout = model.generate(ids, do_sample=True)\n"
            "adv = rewards - rewards.mean()\n",
            "loss",
            "ppo",
            "reinforce",
        ),
        # a group of parameters, a single return sequence, a word in a comment: still one sample each
        Invalid(
            "# no group: one sample per prompt\nout = model.generate(ids, num_return_sequences=1)\n"
            "print(opt.param_groups[0]['lr'])\nadvantages = rewards - rewards.mean()\n",
            "loss",
            "ppo",
            "reinforce",
        ),
        Invalid(
            "for prompt in prompts:\n    samples = sample(policy, prompt, num_samples=16)\n"
            "    advantages = rewards - rewards.mean()\n",
            "loss",
            "grpo",
        ),
        # each item of the group's rewards, against their mean and spread
        Invalid(
            "outs = policy.generate(prompts, num_return_sequences=group_size)\n"
            "mean_reward = sum(rewards) / len(rewards)\nstd_reward = torch.std(torch.tensor(rewards))\n"
            "advantages = [(r - mean_reward) / (std_reward + eps) for r in rewards]\n",
            "loss",
            "grpo",
        ),
        # each group's advantages appended to a list of them
        Invalid(
            "import statistics\ndef advantages(scored):\n    adv = []\n    for group in scored:\n"
            "        rewards = [s['reward'] for s in group]\n        mu = statistics.fmean(rewards)\n"
            "        sd = statistics.pstdev(rewards) or 1.0\n"
            "        adv.append([(r - mu) / sd for r in rewards])\n    return adv\n",
            "loss",
            "grpo",
        ),
        # each sample's advantage bounded, against the mean and spread of its task's rewards
        Invalid(
            "from statistics import mean, pstdev\ndef advantages(by_task, clip):\n"
            "    for group in by_task.values():\n        rs = [g.reward for g in group]\n"
            "        m, sd = mean(rs), pstdev(rs)\n        for g in group:\n"
            "            a = (g.reward - m) / (sd + 0.25)\n"
            "            g.advantage = max(-clip, min(clip, a))\n",
            "loss",
            "grpo",
        ),
        # the group's mean written in place, as a comprehension handed to it
        Invalid(
            "from statistics import mean\nfor group in groups:\n"
            "    m = mean([g.reward for g in group])\n    for g in group:\n"
            "        advantage = g.reward - m\n",
            "loss",
            "grpo",
        ),
        # the rewards converted under another name
        Invalid(
            "outs = llm.generate(prompts, SamplingParams(n=8))\n"
            "def compute(rewards):\n    values = [float(r) for r in rewards]\n"
            "    mean = sum(values) / len(values)\n"
            "    std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))\n"
            "    advantages = [(v - mean) / (std + 1e-4) for v in values]\n    return advantages\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "mean_reward = sum(rewards_G) / len(rewards_G)\n"
            "advantages_G = [reward - mean_reward for reward in rewards_G]\n",
            "loss",
            "grpo",
        ),
        # each sample built with its advantage, its reward against the group's mean (numpy's too)
        Invalid(
            "import numpy as np\nouts = policy.generate(prompts.repeat_interleave(4, dim=0))\n"
            "mu = np.mean(rewards)\n"
            "samples = [Sample(tokens=t, advantage=reward - mu) for t, reward in zip(outs, rewards)]\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "outs = [sample(prompt) for _ in range(group_size)]\nmean_reward = sum(rewards) / len(rewards)\n"
            "samples = [Sample(tokens=t, advantage=reward - mean_reward)\n"
            "           for t, reward in zip(outs, rewards)]\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "adv = (scores - scores.mean(dim=-1, keepdim=True))"
            " / (scores.std(dim=-1, keepdim=True) + 1e-6)\n",
            "loss",
            "grpo",
        ),
        Invalid("advantage = reward - self.baseline[agent]\n", "loss", "ppo"),
        Invalid(
            "base = sum(t.reward for t in group) / len(history)\nadvantage = t.reward - base\n", "loss", "ppo"
        ),
        Invalid("advantages = rewards - mean_grouped_rewards\n", "loss", "grpo"),
        # an estimator of another file, named for its family (what it unpacks among the rest)
        Invalid(
            "from .advantages import group_advantages\n"
            "response_advantage = group_advantages(r, group_size)\n",
            "loss",
            "grpo",
            NAMED_ESTIMATOR,
        ),
        Invalid(
            "from verl.trainer.ppo import core_algos\n"
            "advantages, returns = core_algos.compute_gae_advantage_return(\n"
            "    rewards, values, mask, gamma, lam)\n",
            "loss",
            "ppo",
            NAMED_ESTIMATOR,
        ),
        Invalid(
            "reward_mean = sum(t.reward for t in group) / len(group)\n"
            "advantage = (trajectory.reward - reward_mean) / (reward_std + 1e-6)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            # a mean over one sequence's tokens, not over a group of samples
            "reward_mean = (reward * mask).sum(dim=1) / mask.sum(dim=1)\nadv = reward - reward_mean\n",
            "loss",
            "ppo",
        ),
        Invalid(
            "G = 16\nadv = zeros_like(rewards) if m <= 0 else (rewards - rewards.mean()) / m\n",
            "loss",
            "grpo",
        ),
        Invalid("assign_advantages(trace, trace.reward - baseline)\n", "loss", "ppo"),
        Invalid("n_rollouts = 8\nmu = rewards.mean()\nadvantages = rewards - mu\n", "loss", "grpo"),
        Invalid("mu = baseline.mean()\nadvantages = rewards - mu\n", "loss", "ppo"),
        Invalid(
            "group_rewards = torch.tensor(rewards)\n"
            "normalized_rewards = safe_div(group_rewards - group_rewards.mean(), group_rewards.std())\n",
            "loss",
            "grpo",
        ),
        Invalid(
            # an estimator's method, named for what it returns by its class's base
            "class GroupEstimator(AdvantageEstimator):\n"
            "    def compute(self, rewards, group):\n"
            "        mean = rewards.mean()\n"
            "        return (rewards - mean) / (rewards.std() + 1e-8)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def compute_monte_carlo_advantages(self, rewards):\n"
            "    values = rewards.view(-1, self.n).mean(dim=1)\n"
            "    values = values.repeat_interleave(self.n, dim=0)\n    advantages = rewards - values\n"
            "    return advantages\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def compute_advantages(rewards, baseline):\n    return rewards - baseline.mean()\n",
            "loss",
            "ppo",
        ),
        # groups laid out along the first dimension, each one's mean spread back over its samples
        Invalid(
            "def compute_group_advantages(rewards, group_size):\n"
            "    mean = rewards.view(group_size, -1).mean(dim=0).repeat(group_size)\n"
            "    std = rewards.view(group_size, -1).std(dim=0).repeat(group_size)\n"
            "    return (rewards - mean) / (std + 1e-4)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "adv = rewards - rewards.view(G, -1).mean(dim=0).repeat(G)\n",
            "loss",
            "grpo",
        ),
        Invalid(
            "def compute_advantages(rewards, values, n):\n"
            "    mean = values.view(n, -1).mean(dim=0).repeat(n)\n    return rewards - mean\n",
            "loss",
            "ppo",
        ),
        Invalid(
            "for t in reversed(range(n)):\n"
            "    delta = rewards[:, t] + gamma * nextvalues - values[:, t]\n"
            "    lastgaelam = delta + gamma * lam * lastgaelam\n    advantages.append(lastgaelam)\n",
            "loss",
            "ppo",
        ),
        Invalid(
            "rews = np.append(self.rew_buf[path], last_val)\nvals = np.append(self.val_buf[path], last_val)\n"
            "deltas = rews[:-1] + self.gamma * vals[1:] - vals[:-1]\n"
            "self.adv_buf[path] = discount_cumsum(deltas, self.gamma * self.lam)\n",
            "loss",
            "ppo",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.bound: dict[str, cst.BaseExpression] = {}
        """The value last assigned to each plain name (``mu = rewards.mean()``), to read a baseline by."""
        self.class_bases: list[frozenset[str]] = []
        """Words of the bases of each class around the node visited, innermost last."""
        self.grouped = False
        """Rewards' statistics per group were reported (once per file)."""
        self.residuals: list[cst.BaseExpression] = []
        """Temporal-difference residuals computed (``r + gamma * v_next - v``), reported only where
        the file also fills advantages: alone they may be a critic's error measured or logged."""
        self.discounted: list[tuple[cst.BaseExpression, cst.CSTNode | None]] = []
        """Discounted returns accumulated from rewards (``ret = r + gamma * ret``), likewise reported only
        where the file fills advantages."""
        self.fills_advantages = False
        """Advantages are filled: an assignment's target (``self.adv_buf[s] = ...``) or a list appended
        to (``advantages.append(gae)``) is named for them."""
        self.reward_reads: dict[int, set[str]] = {}
        """Names read into reward-named assignments, by the id of the function body they are in."""
        self.named_words: set[str] = set()
        """Words of the names of the file's functions and classes, and of the classes' bases."""
        self.found_before: list[int] = []
        """How many findings the file had when each function around the node visited began."""
        self.defs: list[cst.FunctionDef] = []
        """The functions around the node visited, innermost last."""
        self.batch_centred: list[tuple[cst.BaseExpression, cst.CSTNode | None]] = []
        """Advantages centred on the mean of all the rewards (no groups laid out), with their statement:
        judged at the end of the file, by whether it samples a prompt several times."""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_bases.append(frozenset(w for base in node.bases for w in _words(base.value)))
        self.named_words.update(words(node.name.value), self.class_bases[-1])

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_bases.pop()

    def visit_Return(self, node: cst.Return) -> None:
        # what a function named for advantages returns is its advantages (``def compute_advantages``,
        # an estimator class's ``compute`` whose base says what it estimates)
        around = self.enclosing()
        if (
            node.value is None
            or not around
            or any(TEST_WORDS & bases for bases in self.class_bases)
            or any(words(name)[:1] == ("test",) for name in around)
        ):
            return  # (a test case's reference computation is no estimator: ``class TestGRPO``)
        if any(ADVANTAGE_NAMES & set(words(name)) for name in around) or any(
            ADVANTAGE_NAMES & b for b in self.class_bases
        ):
            self._judge(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if type(t.target) is cst.Name:
                value = node.value
                if (
                    type(value) is cst.Call
                    and type(value.func) is cst.Attribute
                    and value.func.attr.value in SPREADS
                    and type(value.func.value) is cst.Name
                    and value.func.value.value == t.target.value
                    and t.target.value in self.bound
                ):
                    continue  # ``values = values.repeat_interleave(n)``: still the baseline bound before
                self.bound[t.target.value] = value
            elif (
                type(t.target) is cst.Tuple
                and type(node.value) is cst.Tuple
                and len(t.target.elements) == len(node.value.elements)
            ):
                # ``m, sd = mean(rs), pstdev(rs)``: each name bound to its own value
                for e, v in zip(t.target.elements, node.value.elements, strict=True):
                    if type(e.value) is cst.Name:
                        self.bound[e.value.value] = v.value
        filled = [t.target.value if type(t.target) is cst.Subscript else t.target for t in node.targets]
        self.fills_advantages = self.fills_advantages or any(_advantage_target(t) for t in filled)
        if any(
            _advantage_target(target) or _normalised_rewards(target)
            for t in node.targets
            # (``advantages, returns = compute_gae(...)``: one of what it unpacks)
            for target in (
                [e.value for e in t.target.elements] if type(t.target) is cst.Tuple else [t.target]
            )
        ):
            if not any(
                type(t.target) is cst.Name
                and _advantage_target(t.target)
                and self._feeds_reward(t.target.value)
                for t in node.targets
            ):
                self._judge(node.value)
        elif _td_residual(node.value):
            self.residuals.append(node.value)
        elif (
            self.defs
            and RETURN_ESTIMATE_WORDS & set(words(self.defs[-1].name.value))
            and any(_discounted_return(t.target, node.value) for t in node.targets)
        ):
            # (in a function estimating returns or advantages: a script's evaluation measures them)
            statement = self.context.statements[-1] if self.context.statements else None
            self.discounted.append((node.value, statement))

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.batch_centred:
            grouped = not _one_sample_per_prompt(original_node)
            for value, statement in self.batch_centred:
                if grouped:
                    message = "advantages are rewards centred on their own group's mean"
                    self.report(value, "loss", message, statement=statement, kind="grpo", variant="grpo")
                else:
                    # the file samples one of each prompt: the batch's mean is a baseline shared by prompts
                    # (REINFORCE with a mean baseline), not a group's (TAXONOMY.md: GRPO compares the
                    # samples of one prompt)
                    message = (
                        "advantages are rewards centred on the batch's mean, and nothing samples a prompt"
                        " more than once: a shared baseline (REINFORCE)"
                    )
                    self.report(value, "loss", message, statement=statement, kind="ppo", variant="reinforce")
        if self.fills_advantages:
            for residual in self.residuals[:1]:
                message = "advantages from temporal-difference residuals of a learned value (GAE)"
                self.report(residual, "loss", message, kind="ppo", variant="ppo")
            named_groups = self.named_words & (GROUP_NAMES | NORMALISED_WORDS)
            for discounted, statement in self.discounted[:1] if not (self.residuals or named_groups) else []:
                # returns accumulated from rewards alone, no learned value subtracted (REINFORCE, and
                # REINFORCE++ whitening them across the batch): the other policy-gradient family; not
                # where the file's functions or classes normalise within groups (GiGPO's step returns)
                message = (
                    "advantages from discounted returns of the rewards, with no learned value (REINFORCE)"
                )
                self.report(discounted, "loss", message, statement=statement, kind="ppo", variant="reinforce")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _advantage_target(node.target):
            self._judge(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if _group_statistics(node) and not self.grouped and self._estimates_advantages():
            # ``df.groupby("group_id")["reward"].agg(["mean", "std"])``: each sample's reward is then
            # compared with its own group's (a table's rows grouped by prompt)
            self.grouped = True
            message = "rewards' mean and std are taken per group of samples (groupby)"
            self.report(node, "loss", message, kind="grpo", variant="grpo")
        # handed straight to a function that stores advantages (``assign_advantages(t, r - baseline)``)
        func = node.func.attr if type(node.func) is cst.Attribute else node.func
        if (
            type(node.func) is cst.Attribute
            and node.func.attr.value in ("append", "extend", "insert")
            and _advantage_target(node.func.value)
        ):
            self.fills_advantages = True
            for arg in node.args[-1:]:
                # ``adv.append([(r - mu) / sd for r in rewards])``: a group's advantages, one list each
                self._judge(arg.value)
        if type(func) is cst.Name and ADVANTAGE_NAMES & set(words(func.value)):
            for arg in node.args:
                self._judge(arg.value)
        for arg in node.args:
            if arg.keyword is not None and _advantage_target(arg.keyword):
                # a sample built with its advantage (``Sample(tokens=t, advantage=r - mean_reward)``)
                self._judge(arg.value)

    def _estimates_advantages(self) -> bool:
        """Say whether the function around the node assigns advantages (the statistics feed them).

        A group's reward statistics printed, plotted or used to filter prompts by pass rate are a
        report or a data filter, not a baseline.
        """
        if not self.defs:
            return False
        if ADVANTAGE_NAMES & set(words(self.defs[-1].name.value)):
            return True  # ``def compute_group_advantages(batch)``: what it returns
        for n in descendants(self.defs[-1].body):
            if isinstance(n, cst.Assign | cst.AugAssign | cst.AnnAssign):
                targets = [t.target for t in n.targets] if isinstance(n, cst.Assign) else [n.target]
                for t in targets:
                    key = t.slice[0].slice if type(t) is cst.Subscript and len(t.slice) == 1 else None
                    if _advantage_target(t) or (
                        type(key) is cst.Index
                        and type(key.value) is cst.SimpleString
                        and isinstance(text := key.value.evaluated_value, str)
                        and ADVANTAGE_NAMES & set(words(text))
                    ):
                        return True
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.defs.append(node)
        self.named_words.update(words(node.name.value))
        self.found_before.append(len(self.context.findings))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.defs.pop()
        before = self.found_before.pop()
        name = original_node.name.value
        said = words(name)
        if (
            ADVANTAGE_NAMES & set(said)
            and said[0] in ESTIMATING_VERBS
            and (named := route_word(name, strict=True)) is not None
            and (kind := named[0].lower()) in POLICY_GRADIENT
            and not any(f.detector == type(self).__name__ for f in self.context.findings[before:])
            and any(type(n) is cst.Return and n.value is not None for n in descendants(original_node.body))
        ):
            # ``def compute_grpo_outcome_advantage(...)``: an estimator this file defines, its family in
            # its name, whose body no reading here decides (rewards centred through keyed tables)
            message = f"defines {name}(), an advantage estimator named for its family"
            self.report(original_node, "loss", message, kind=kind, variant=NAMED_ESTIMATOR)

    def _feeds_reward(self, name: str) -> bool:
        """Say whether ``name`` is read into a reward in the function around it.

        ``solver_advantage = next_score - current_score; reward = w * solver_advantage``: a game
        position's gain, a term of the reward, not an estimate computed from rewards. The names read
        into rewards are gathered once per function (a file may assign advantages thousands of times).
        """
        if not self.defs:
            return False
        body = self.defs[-1].body
        read = self.reward_reads.get(id(body))
        if read is None:
            read = self.reward_reads[id(body)] = {
                v.value
                for n in descendants(body)
                if type(n) is cst.Assign
                and any(
                    type(t.target) is cst.Name and REWARD_WORDS & set(words(t.target.value))
                    for t in n.targets
                )
                for v in descendants(n.value)
                if type(v) is cst.Name
            }
        return name in read

    def _judge(self, value: cst.BaseExpression) -> None:
        centred = _centred(value, self.bound)
        if centred is None:
            if (named := _named_estimator(value)) is not None:
                # ``adv = group_advantages(rewards, group_size)``, ``compute_gae(...)``: an estimator of
                # another file, named for its family
                kind, name = named
                message = f"advantages from {name}(), an estimator named for its family"
                self.report(value, "loss", message, kind=kind, variant=NAMED_ESTIMATOR)
            return
        if centred and not _grouped(value) and not any(GROUP_NAMES & set(words(n)) for n in self.enclosing()):
            # centred on the mean of all of them: a group's only where a prompt's samples are several
            statement = self.context.statements[-1] if self.context.statements else None
            self.batch_centred.append((value, statement))
        elif centred:
            self.report(
                value,
                "loss",
                "advantages are rewards centred on their own group's mean",
                kind="grpo",
                variant="grpo",
            )
        else:
            self.report(
                value, "loss", "advantages are rewards minus a separate baseline", kind="ppo", variant="ppo"
            )


def _grouped(value: cst.BaseExpression) -> bool:
    """Say whether an advantage's expression lays its rewards out in groups, or names them a group's.

    ``rewards.view(-1, n).mean(dim=1)``, a reduction along an axis, ``group_rewards - group_mean``.
    """
    for node in (value, *descendants(value)):
        if type(node) is cst.Call and (
            method(node) in REGROUPINGS | SPREADS
            or any(a.keyword is not None and a.keyword.value in ("dim", "axis") for a in node.args)
            # ``rewards.mean(0)``: a statistic along an axis given in order
            or (method(node) in CENTRES | {"std"} and any(a.keyword is None for a in node.args))
        ):
            return True
        if type(node) is cst.Name and (
            GROUP_NAMES & set(words(node.value)) or node.value.split("_")[-1] == "G"
        ):
            return True
    return False


SAMPLE_COUNTS = frozenset({"num_samples", "n_samples", "num_completions", "n_completions", "n", "k", "count"})
"""Keywords of a sampler's count of samples: a group's size when the sampler is handed one prompt."""
PROMPT_WORDS = frozenset(
    {"prompt", "prompts", "question", "questions", "query", "queries", "problem", "problems", "ids", "inputs"}
)
"""Words of a name holding prompts (their token ids too): repeated, or multiplied, they give groups."""
SAMPLER_WORDS = frozenset(
    {"generate", "sample", "sampling", "completion", "completions", "rollout", "rollouts"}
)
"""Words of a call drawing samples from a model."""
SAMPLES_WORDS = frozenset({"samples", "generations", "group", "rollouts", "completions", "responses"})
"""Words of a count of samples (``range(num_samples)``)."""
NOT_SAMPLE_GROUPS = frozenset({"param", "params", "process", "argument", "by", "mutually", "exclusive"})
"""Words beside "group" in a name of another kind of group (``param_groups``, ``init_process_group``,
``add_argument_group``, ``group_by_length``)."""
CONSTANTS = (cst.Integer, cst.Float, cst.SimpleString)
ARRAY_MODULES = frozenset({"np", "numpy", "torch", "jnp", "tf", "mx"})
"""Modules whose ``repeat``/``tile`` repeat what they are given (``np.repeat(batch, K)``)."""


def _one_sample_per_prompt(module: cst.Module) -> bool:
    """Say whether the file draws samples itself, one of each prompt (read only when asked).

    A file that draws none (a loss or advantage module) cannot say how its callers sample: no.
    """
    found = descendants(module)
    samples = any(type(n) is cst.Call and _sampler(n) for n in found)
    return samples and not _several_samples_per_prompt(found)


def _several_samples_per_prompt(found: list[cst.CSTNode]) -> bool:
    """Say whether the code (a module's nodes) draws several samples of one prompt.

    A group's size named (``num_generations=8``, ``G``, a name of a group), a sampler handed the prompt
    of a loop over prompts and a count (``sample(policy, q, count=8)``), prompts or their ids repeated
    (``ids.repeat_interleave(k, 0)``, ``ids.expand(k, -1)``, ``[question] * k``, ``prompts * k``,
    ``[q for _ in range(4)]``), or a loop drawing samples a number of times (``for _ in
    range(num_samples): model.generate(...)``).
    Comments and strings do not count; a literal count of one does not.
    """
    loop_targets: set[str] = set()
    keywords = {id(a.keyword) for n in found if type(n) is cst.Call for a in n.args if a.keyword is not None}
    for node in found:
        kind = type(node)
        if isinstance(node, cst.Name):
            if id(node) in keywords:
                continue  # (a keyword's count is read with its value, in the call)
            named = set(words(node.value))
            if node.value in GROUP_SIZES or (
                named & {"group", "groups", "grpo"} and not named & NOT_SAMPLE_GROUPS
            ):
                return True
        elif kind is cst.Call:
            assert isinstance(node, cst.Call)
            if _samples_several(node, loop_targets):
                return True
        elif kind is cst.BinaryOperation:
            assert isinstance(node, cst.BinaryOperation)
            if isinstance(node.operator, cst.Multiply) and (_prompts(node.left) or _prompts(node.right)):
                return True
        elif kind is cst.ListComp or kind is cst.GeneratorExp:
            assert isinstance(node, cst.ListComp | cst.GeneratorExp)
            if _repeats(node):
                return True
        elif kind is cst.For:
            assert isinstance(node, cst.For)
            for target in (node.target, *descendants(node.target)):
                if type(target) is cst.Name:
                    loop_targets.add(target.value)
            if _draws_repeatedly(node) or _draws_in_inner_loop(node):
                return True
        elif kind is cst.While:
            assert isinstance(node, cst.While)
            if _draws_in_inner_loop(node):
                return True
    return False


def _samples_several(call: cst.Call, loop_targets: set[str]) -> bool:
    """Say whether a call asks several samples of one prompt, or repeats prompts to sample them."""
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword is None or (type(arg.value) is cst.Integer and written_turns(arg.value) <= 1):
            continue
        if keyword in GROUP_SIZES:
            return True
        if keyword == "n" and any(
            type(n) is cst.Name and SAMPLER_WORDS & set(words(n.value))
            for n in (call.func, *descendants(call.func))
        ):
            return True  # ``SamplingParams(n=8)``, ``client.completions.create(..., n=4)``
        if keyword in SAMPLE_COUNTS and any(
            type(a.value) is cst.Name and a.value.value in loop_targets
            for a in call.args
            if a.keyword is None
        ):
            return True
    func = call.func
    if type(func) is cst.Name:  # einops' or numpy's: ``repeat(state, "n -> b n", b=k)``, ``np.tile``
        return func.value in ("repeat", "repeat_interleave", "tile")
    return type(func) is cst.Attribute and (
        func.attr.value == "repeat_interleave"
        or (
            func.attr.value in ("repeat", "expand", "tile")
            and (_prompts(func.value) or (type(func.value) is cst.Name and func.value.value in ARRAY_MODULES))
        )
    )


def _prompts(value: cst.BaseExpression) -> bool:
    """Say whether an expression holds prompts: a name, an item (``enc["input_ids"]``) or a list of them."""
    if type(value) is cst.Subscript:
        keys = [e.slice.value for e in value.slice if type(e.slice) is cst.Index]
        return _prompts(value.value) or any(
            type(k) is cst.SimpleString and PROMPT_WORDS & set(words(str(k.evaluated_value))) for k in keys
        )
    if type(value) is cst.Name:
        return bool(PROMPT_WORDS & set(words(value.value)))
    if type(value) is cst.Attribute:
        return bool(PROMPT_WORDS & set(words(value.attr.value)))
    if type(value) is cst.List:
        return bool(value.elements) and all(
            not isinstance(e.value, CONSTANTS) and not (type(e.value) is cst.Name and e.value.value == "None")
            for e in value.elements
        )
    return False


def _over_range(iterated: cst.BaseExpression) -> bool:
    """Say whether a loop iterates ``range(...)``."""
    return type(iterated) is cst.Call and type(iterated.func) is cst.Name and iterated.func.value == "range"


def _samples(node: cst.CSTNode) -> bool:
    """Say whether a call under ``node`` (or ``node`` itself) draws a sample from a model.

    Not a distribution's ``.sample()`` of one token (given nothing): a decoding step, not a completion.
    """
    return any(type(n) is cst.Call and _sampler(n) for n in (node, *descendants(node)))


def _sampler(call: cst.Call) -> bool:
    """Say whether a call draws a completion from a model (``generate``, ``sample(policy, q)``)."""
    named = set(words(last_name(call.func)))
    return bool(named & (SAMPLER_WORDS - {"sample"}) or ("sample" in named and call.args))


def _repeats(comprehension: cst.ListComp | cst.GeneratorExp) -> bool:
    """Say whether a comprehension repeats its element over a count.

    ``[q for _ in range(4)]``, ``[q for q in batch for _ in range(k)]`` (the count's variable unused in
    the element), ``[model.generate(ids) for _ in range(k)]`` (a sample drawn each time).
    """
    element = comprehension.elt
    used = {n.value for n in (element, *descendants(element)) if type(n) is cst.Name}
    loop: cst.CompFor | None = comprehension.for_in
    while loop is not None:
        if _over_range(loop.iter) and type(loop.target) is cst.Name:
            if _samples(element):
                return True
            if loop.target.value not in used and not isinstance(element, CONSTANTS) and used - {"None"}:
                return True
        loop = loop.inner_for_in
    return False


def _draws_repeatedly(loop: cst.For) -> bool:
    """Say whether a loop over a count draws a sample each time, several of one prompt.

    ``for _ in range(k): generate(...)``, a count named for samples (``range(num_samples)``), or any
    such loop inside another loop (``for ex in data: ... for i in range(K): model.generate(...)``).
    """
    iterated = loop.iter
    if not _over_range(iterated):
        return False
    assert isinstance(iterated, cst.Call)
    counted = [
        n.value for a in iterated.args for n in (a.value, *descendants(a.value)) if type(n) is cst.Name
    ]
    unnamed = type(loop.target) is cst.Name and loop.target.value == "_"
    return (unnamed or any(SAMPLES_WORDS & set(words(n)) for n in counted)) and _samples(loop.body)


def _draws_in_inner_loop(loop: cst.For | cst.While) -> bool:
    """Say whether a loop holds a loop over a count that draws samples (one prompt, K samples)."""
    return any(
        type(n) is cst.For and _over_range(n.iter) and _samples(n.body) for n in descendants(loop.body)
    )


REWARD_WORDS = frozenset({"reward", "rewards"})
"""Words of a name that holds a reward (what a position's gain may be a term of)."""
GROUP_KEY_WORDS = frozenset({"group", "prompt", "uid", "question", "query", "problem"})
"""Words of the column rollouts are grouped by: one group per prompt."""


def _group_statistics(node: cst.Call) -> bool:
    """Say whether ``node`` aggregates rewards by group (``df.groupby("group_id")["reward"].agg(["mean"])``).

    The grouping key names a prompt's group and the aggregation, or the selected column, a reward;
    a mean is among the statistics (``.agg(["mean", "std"])``, ``.transform("mean")``, ``.mean()``).
    """
    called = method(node)
    if called not in ("agg", "aggregate", "transform", "mean"):
        return False
    statistics = {
        t
        for a in node.args
        for n in (a.value, *descendants(a.value))
        if type(n) is cst.SimpleString
        if isinstance(t := n.evaluated_value, str)
    }
    if called != "mean" and "mean" not in statistics:
        return False
    assert type(node.func) is cst.Attribute
    chain = node.func.value
    column = ""
    if type(chain) is cst.Subscript and len(chain.slice) == 1:
        index = chain.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            column = str(index.value.evaluated_value)
        chain = chain.value
    if not (type(chain) is cst.Call and method(chain) == "groupby" and chain.args):
        return False
    key = chain.args[0].value
    said = (
        set(words(key.evaluated_value))
        if type(key) is cst.SimpleString and isinstance(key.evaluated_value, str)
        else set(words(last_name(key)))
    )
    rewarded = "reward" in words(column) or any("reward" in words(t) for t in statistics if t.isidentifier())
    return bool(said & GROUP_KEY_WORDS) and rewarded


def _advantage_target(target: cst.BaseExpression) -> bool:
    name = (
        target.value
        if type(target) is cst.Name
        else target.attr.value
        if type(target) is cst.Attribute
        else None
    )
    return name is not None and bool(ADVANTAGE_NAMES & set(words(name)))


def _named_estimator(value: cst.BaseExpression) -> tuple[str, str] | None:
    """Return the family (``grpo``/``ppo``) an advantage estimator called is named for, and its name.

    ``compute_grpo_outcome_advantage(...)``, ``group_advantages(rewards, n)``: group-relative;
    ``compute_gae(...)``: generalised advantage estimation, the PPO family's.
    """
    if type(value) is not cst.Call:
        return None
    name = last_name(value.func)
    said = set(words(name))
    named = route_word(name, strict=True)
    if named is not None and named[0] in ("GRPO", "PPO"):
        return named[0].lower(), name
    if "group" in said and said & (ADVANTAGE_NAMES | {"normalize", "normalise", "normalized"}):
        return "grpo", name
    return None


def _normalised_rewards(target: cst.BaseExpression) -> bool:
    """Say whether an assignment's target names rewards normalised for use as advantages."""
    name = _words(target)
    return any("reward" in w for w in name) and bool(NORMALISED_WORDS & set(name))


def _centred(
    value: cst.BaseExpression, bound: dict[str, cst.BaseExpression] | None = None, follow: bool = True
) -> bool | None:
    """Read ``r - c`` (possibly divided by a spread).

    True when ``c`` reduces ``r`` itself (directly, or through a name ``bound`` to that reduction),
    False for another baseline, None when the value is not a difference of rewards. Of a conditional
    expression, the branch that is such a difference. ``follow``: whether a bounded name may still be
    followed to its binding (once on a path, so that chains of bounds cost what their text does).
    """
    if type(value) is cst.IfExp:
        found = [
            c
            for c in (_centred(value.body, bound, follow), _centred(value.orelse, bound, follow))
            if c is not None
        ]
        return found[0] if found else None
    if type(value) is cst.Call and _callee(value) in CLIPS:
        # ``max(-clip, min(clip, a))``: the advantage bounded; ``a`` a name bound to it, followed once
        # (``adv = torch.clamp(adv, -c, c)`` binds the name to its own bound)
        found = []
        for argument in value.args:
            taken, further = argument.value, follow
            if follow and type(taken) is cst.Name and bound is not None and taken.value in bound:
                taken, further = bound[taken.value], False
            if (c := _centred(taken, bound, further)) is not None:
                found.append(c)
        return found[0] if found else None
    items: cst.BaseExpression | None = None
    if isinstance(value, cst.ListComp | cst.GeneratorExp):
        # one advantage per sample: ``[reward - mean_reward for reward in rewards_G]``; the item is
        # what it is drawn from (``[(r - mean) / std for r in rewards]``)
        if type(value.for_in.target) is cst.Name:
            items = value.for_in.target
            drawn_from = value.for_in.iter
        value = value.elt
    while True:
        if type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Divide):
            value = value.left
        elif type(value) is cst.Call and _callee(value) in DIVIDERS and value.args:
            value = value.args[0].value
        else:
            break
    if not (type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Subtract)):
        return None
    left, right = value.left, value.right
    if not _rewards_named(drawn_from if items is not None and left.deep_equals(items) else left, bound):
        return None
    if type(right) is cst.Name and bound is not None and right.value in bound:
        right = bound[right.value]
        if _list_mean(right) or _mean_of_rewards(right, bound):
            # ``mean_reward = sum(rewards_G) / len(rewards_G)``, ``mu = np.mean(rewards)``: one
            # sample's reward each against the mean of its group's
            return True
    while type(right) is cst.Call and type(right.func) is cst.Attribute and right.func.attr.value in SPREADS:
        # ``rewards.view(n, -1).mean(dim=0).repeat(n)``: each group's mean, spread back
        right = right.func.value
    if (
        type(right) is cst.Call
        and type(right.func) is cst.Attribute
        and right.func.attr.value in CENTRES
        and _regrouped(right.func.value).deep_equals(left)
    ):
        return True  # ``rewards - rewards.mean()``, ``rewards - rewards.view(-1, n).mean(dim=1)``
    # a name, not bound here, for the mean of the rewards' groups (``rewards - mean_grouped_rewards``)
    return bool(type(right) is cst.Name and CENTRES & set(words(right.value)))


CONVERSIONS = frozenset({"tensor", "array", "asarray", "as_tensor", "list", "float", "FloatTensor"})
"""Calls that give their argument's values another type (``torch.tensor(rewards)``, ``float(r)``)."""


RETURN_WORDS = frozenset({"scores", "score", "returns"})
"""Words, besides those containing "reward", of a name holding what samples scored."""


def _named_for_rewards(value: cst.BaseExpression) -> bool:
    """Say whether an expression's words name rewards (``rewards_G``, ``scores``, ``batch.returns``)."""
    return any("reward" in w or w in RETURN_WORDS for w in _words(value))


def _rewards_named(value: cst.BaseExpression, bound: dict[str, cst.BaseExpression] | None) -> bool:
    """Say whether a value is named for rewards, or is a name bound to rewards converted.

    ``values = [float(r) for r in rewards]`` and ``scores_t = torch.tensor(rewards)`` hold the rewards
    under another name: one binding is followed.
    """
    if _named_for_rewards(value):
        return True
    source = value
    if type(value) is cst.Name and bound is not None and value.value in bound:
        source = bound[value.value]
    elif not isinstance(value, cst.ListComp | cst.GeneratorExp):
        return False
    if isinstance(source, cst.ListComp | cst.GeneratorExp):
        # what the items are drawn from, or what each item is (``[g.reward for g in group]``), written
        # in place (``mean([...])``) or bound to a name
        return _named_for_rewards(source.for_in.iter) or _named_for_rewards(source.elt)
    if type(source) is cst.Call and last_name(source.func) in CONVERSIONS and source.args:
        source = source.args[0].value
    else:
        return False
    return _named_for_rewards(source)


def _regrouped(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return what ``value`` lays out in groups (``rewards`` of ``rewards.view(-1, n)``), else ``value``."""
    while (
        type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in REGROUPINGS
    ):
        value = value.func.value
    return value


def _mean_of_rewards(value: cst.BaseExpression, bound: dict[str, cst.BaseExpression] | None = None) -> bool:
    """Say whether a value is the mean of rewards (of a name ``bound`` to rewards converted, too).

    ``np.mean(rewards)``, ``statistics.mean(rs)``, ``rewards.mean()``, ``torch.tensor(rewards).mean()``.
    """
    if type(value) is not cst.Call:
        return False
    if type(value.func) is cst.Attribute and value.func.attr.value in CENTRES and not value.args:
        taken = value.func.value
        if type(taken) is cst.Call and taken.args and last_name(taken.func) in CONVERSIONS:
            taken = taken.args[0].value  # (``torch.tensor(rewards).mean()``)
    elif last_name(value.func) in CENTRES | {"fmean"} and value.args:
        taken = value.args[0].value
    else:
        return False
    return _rewards_named(taken, bound)


def _list_mean(value: cst.BaseExpression) -> bool:
    """``sum(xs) / len(xs)``: the mean of a list (of one reward per sample, in a loop over groups).

    Also ``sum(t.reward for t in group) / len(group)``: the sum of a field over the items counted.
    """
    if not (type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Divide)):
        return False
    total, count = value.left, value.right
    if not (
        type(total) is cst.Call
        and type(count) is cst.Call
        and _callee(total) == "sum"
        and _callee(count) == "len"
        and len(total.args) == 1
        and len(count.args) == 1
    ):
        return False
    summed, counted = total.args[0].value, count.args[0].value
    if isinstance(summed, cst.GeneratorExp | cst.ListComp) and summed.for_in.inner_for_in is None:
        summed = summed.for_in.iter
    return summed.deep_equals(counted)


def _td_residual(value: cst.BaseExpression) -> bool:
    """``r + gamma * v_next - v``: a reward plus a discounted value, minus a value."""
    if not (type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Subtract)):
        return False
    if not VALUE_WORDS & set(_words(value.right)):
        return False
    left = value.left
    if not (type(left) is cst.BinaryOperation and isinstance(left.operator, cst.Add)):
        return False
    terms = [left.left, left.right]
    # (``rews``, ``rew_buf``: Spinning Up's buffers abbreviate rewards and values)
    rewarded = any(any("reward" in w or w in ("rew", "rews") for w in _words(t)) for t in terms)
    discounted = any(
        type(t) is cst.BinaryOperation
        and isinstance(t.operator, cst.Multiply)
        and any(DISCOUNT_WORDS & set(_words(side)) for side in (t.left, t.right))
        for t in terms
    )
    return rewarded and discounted


def _discounted_return(target: cst.BaseExpression, value: cst.BaseExpression) -> bool:
    """``ret = r + gamma * ret``: a reward plus the discounted return accumulated so far (Monte Carlo).

    Also masked at episode ends (``r + gamma * ret * (1 - done)``) and kept per step
    (``returns[t] = rewards[t] + gamma * returns[t + 1] * masks[t + 1]``).
    """
    while type(target) is cst.Subscript:
        target = target.value
    if type(target) is not cst.Name or not (
        type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Add)
    ):
        return False
    terms = [value.left, value.right]
    rewarded = any(any("reward" in w or w in ("r", "rew", "rews") for w in _words(t)) for t in terms)
    accumulated = any(
        type(t) is cst.BinaryOperation
        and isinstance(t.operator, cst.Multiply)
        and any(type(n) is cst.Name and DISCOUNT_WORDS & set(words(n.value)) for n in descendants(t))
        and any(type(n) is cst.Name and n.value == target.value for n in descendants(t))
        for t in terms
    )
    return rewarded and accumulated


def _callee(call: cst.Call) -> str | None:
    func = call.func
    return func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None


def _words(node: cst.BaseExpression) -> tuple[str, ...]:
    if type(node) is cst.Name:
        return words(node.value)
    if type(node) is cst.Attribute:
        return words(node.attr.value)
    if type(node) is cst.Subscript:
        return _words(node.value)
    return ()
