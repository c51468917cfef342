"""A reward function: the per-sample score a policy-gradient trainer optimises, defined in the file."""

from __future__ import annotations

import itertools

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import MODEL_WORDS, unshaped, words
from arb_audit.analyzer.names import dotted, last_name
from arb_audit.analyzer.walk import descendants, own_descendants

NOT_A_REWARD_FUNCTION = frozenset(
    {
        *("model", "models", "trainer", "config", "head", "dataset", "args", "arguments", "collator"),
        *("load", "select", "apply", "register", "build", "make", "create", "log", "print", "plot"),
        *("data", "datasets", "loader", "tokenize", "tokenise", "collate", "preprocess"),
        *("filter", "parse", "template", "postprocess", "arg"),
    }
)
"""Words of a reward-named definition that is a reward *model* or plumbing around rewards (choosing,
applying, logging them; a reward model's data tokenised and collated), not a reward function."""
STAGE_WORDS = frozenset({"stage", "stages", "phase"})
"""Words of a pipeline's stage in a reward-named definition (see :data:`RUNNING_VERBS`)."""
RUNNING_VERBS = frozenset({"run", "train", "execute", "start", "launch"})
"""A stage run or trained (``run_reward_stage``) is a pipeline's reward-model stage; a stage or a phase
alone may be what a reward credits (``reasoning_phase_reward``)."""
REGISTRY_WORDS = frozenset(
    {"reward", "rewards", "register", "registry", "registered", "function", "func", "fn"}
)
"""The words a decorator that registers a reward is made of (``@reward``, ``@register_reward``,
``@rewards.register``, ``@reward_function``); one with any other word wraps the function for something
else (``@with_reward_timeout``, ``@rewards_cache``, ``@register_reward_collator``)."""
PLUMBING_PARAMETER_WORDS = frozenset(
    {"args", "arg", "config", "cfg", "opts", "filename", "file", "path", "dir", "tokenizer", "dataset"}
)
"""Words of a parameter that hands in settings, a file or a tool, not a sample to score."""
ANALYSING_VERBS = frozenset({"detect", "diagnose", "monitor", "analyze", "analyse"})
"""First words of a reward-named definition that analyses a run's logged rewards
(``detect_reward_hacking``); later they qualify a reward (``toxicity_detect_reward``)."""
TABULATING_WORDS = frozenset(
    {
        *("distribution", "frame", "df", "table", "stats", "statistics", "hist", "histogram", "curve"),
        *("curves", "metrics"),
    }
)
"""Words after "reward" in a definition's name that say it tabulates rewards for analysis
(``reward_distribution_frame``, ``reward_stats``, ``compute_reward_accuracy_metrics``); before it they
may qualify a reward (``stats_reward``, ``table_reward``: a reward of statistics or tables)."""
JOINING_WORDS = frozenset({"and", "with", "from", "plus", "or", "by", "via", "using", "based", "on", "for"})
"""Conjunctions and prepositions in a reward's name, after which words say what else it returns or how
it is computed (``reward_with_metrics``, ``reward_from_metrics``), not what it tabulates."""
SUMMING_WORDS = frozenset({"summary", "summaries", "report"})
"""Last words of a definition's name, right after "reward", that say it sums logged rewards up for a report
(``episode_reward_summary``, ``reward_report``); followed by more words, they are what a reward is of
(``reward_summary_quality``, ``compute_reward_for_summary``)."""
HACKING = (("hack",), ("hacks",), ("hacking",))
"""The word after "reward" in a name for reward hacking (``reward_hack_check``), as a one-word slice."""
PENALTY_WORDS = frozenset({"penalty", "penalties", "guard", "bonus", "reward", "rewards", "score"})
"""Last words of a name for reward hacking that is itself a reward (``reward_hacking_penalty``)."""
RESPONSE_CONTRACT = frozenset({"solution_str"})
"""Parameter names of verl's reward-function contract (``compute_score(data_source, solution_str,
ground_truth, extra_info)``): the policy's decoded response."""
SCORE_CONTRACT = "compute_score"
"""The function a verl-style reward module defines (``verl.utils.reward_score.<task>.compute_score``,
EasyR1's reward files): the framework calls it on each response."""
TRUTH_WORDS = frozenset({"ground", "truth", "gt", "answer", "answers", "reference", "references", "gold"})
"""Words of a parameter holding the reference a response is scored against."""
RESPONSE_WORDS = frozenset({"completion", "completions", "response", "responses", "output", "solution"})
"""Words of a parameter holding the policy's response."""
OUTPUT_WORDS = frozenset({"outputs", "answer", "answers", "text", "texts", "generation", "generations"})
"""Further last words of a parameter holding what a model produced (``model_answer``, ``policy_text``)."""


def takes_samples(node: cst.FunctionDef) -> str | None:
    """Say which trainer's reward-function contract a definition follows, if any.

    ``"trl"``: ``f(completions, **kwargs)``, as TRL's GRPOTrainer calls its ``reward_funcs``;
    ``"verl"``: ``f(..., solution_str, ground_truth, ...)``, as verl calls ``compute_score``.
    """
    params = {p.name.value for p in (*node.params.posonly_params, *node.params.params)}
    # (TRL passes every argument by keyword: ``def f(*, prompts, completions, **kwargs)`` takes them too)
    keyword_only = {p.name.value for p in node.params.kwonly_params}
    if "completions" in params | keyword_only and type(node.params.star_kwarg) is cst.Param:
        return "trl"
    if RESPONSE_CONTRACT & params and "ground_truth" in params:
        return "verl"
    return None


PREPOSITIONS = frozenset({"on", "of", "for", "by", "from", "with", "in", "to", "at"})
"""Words after a participle that keep a reward the head of its name (``reward_based_on_format``)."""
TURN_WORDS = frozenset({"turn", "turns", "multiturn"})
"""Words of a reward function's name that credit an episode's turns (``compute_turn_reward``)."""
ONE_TURN_WORDS = frozenset({"single", "last", "first", "final", "format", "next"})
"""Words beside "turn" in a reward's name that speak of one turn of a chat (``last_turn_reward``)."""


EPISODE_PARAMETER_WORDS = frozenset({"turns", "multiturn", "traj", "trajectory", "trajectories"})
"""Words of a reward's required parameter holding a multi-turn episode (``combine_reward_fn(data,
trajectory)``, ``episode_reward(turns)``): an agent's trajectory, its steps to credit."""


TOOL_REPLY_MARKERS = ("<tool_response>", "<information>", "<observation>", "<obs>")
"""Tags in which a tool's or an environment's reply is put back into the trajectory between the
policy's turns (Qwen's ``<tool_response>``, Search-R1's ``<information>``)."""


def _reads_tool_replies(node: cst.FunctionDef, helpers: dict[str, cst.FunctionDef]) -> bool:
    """Say whether a reward, or a function of the file it calls, reads what a tool answered.

    (Search-R1's ``compute_score`` leaves the ``<information>`` spans to ``extract_solution``.)
    """
    if _names_tool_replies(node):
        return True
    called = {n.func.value for n in descendants(node) if type(n) is cst.Call and type(n.func) is cst.Name}
    return any(
        _names_tool_replies(helpers[c]) for c in sorted(called) if c in helpers and helpers[c] is not node
    )


def _names_tool_replies(node: cst.FunctionDef) -> bool:
    """Say whether a function reads what a tool answered between the policy's turns.

    Its code names a reply's tag (``"<tool_response>"``) or a chat message from the tool
    (``m["role"] == "tool"``): the sample it scores holds turns of the policy and replies of a tool.
    A call the model writes (``<tool_call>``) is not enough: single-turn tool-call training checks
    that against a reference without running the tool.
    """
    for child in descendants(node):
        if type(child) is cst.SimpleString:
            text = child.evaluated_value
            if isinstance(text, str) and any(m in text for m in TOOL_REPLY_MARKERS):
                return True
        elif (
            type(child) is cst.Comparison
            and any(
                type(side) is cst.SimpleString and side.evaluated_value == "tool"
                for side in (child.left, *(c.comparator for c in child.comparisons))
            )
            and "role" in cst.Module([]).code_for_node(child)
        ):
            return True  # (a comparison of anything else with "tool" reads on: the next may say it)
    return False


class RewardFunction(RouteDetector):
    """A function or callable class that scores one policy sample is a reward for RL training.

    Three conventions say so. TRL's ``GRPOTrainer``/``RLOOTrainer`` call each of their
    ``reward_funcs`` with the prompts, the completions and the dataset columns as keyword arguments
    (``def f(completions, **kwargs)``; open-r1's and agents' reward modules follow it). verl's reward
    functions take the decoded response as ``solution_str`` beside the ``ground_truth``. And a
    definition named for a reward — ``def math_reward(response, answer)``, ``class RewardMathFn``
    with ``__call__``, a reward manager — computes the reward of a sample, unless its name says it is
    a reward *model*, a trainer, a config or plumbing around rewards. A file of such definitions and
    no gradient step is a component of GRPO/PPO training; a file with a gradient step is decided by
    it. A definition known only by its name (``reward_named``) does not decide a file that runs a
    model: that is a reward model served or evaluated.
    """

    TRIGGERS = ("completions", "reward", "Reward", *RESPONSE_CONTRACT, "_score")

    VALID = (
        # a report's trade-off of score and KL, and a test of the shaping: no reward folded for training
        Valid(
            "def score_checkpoint(policy, ref, prompts, beta):\n"
            "    kl = logps(policy, prompts) - logps(ref, prompts)\n"
            "    objective = score - beta * kl\n    return objective\n"
            "def test_compute_reward(kl_coef):\n    expected = -kl_coef * kl\n"
            "    expected[:, -1] += rewards\n"
        ),
        # reward-named data steps: filtering, a template, settings handed in and no sample
        Valid(
            "def filter_reward(dataset, columns, threshold):\n"
            "    return dataset.filter(lambda r: r['reward'] > threshold)\n"
            "def _reward_template(type_name, class_prefix):\n"
            "    return TEMPLATE.format(type_name, class_prefix)\n"
        ),
        Valid("import numpy as np\ndef cal_monte_carlo_reward(args):\n    return np.mean(load(args.path))\n"),
        # a reward already computed, converted: no sample is scored
        Valid(
            "def _safe_reward(self, reward):\n    try:\n        return float(reward)\n"
            "    except (TypeError, ValueError):\n        return 0.0\n"
        ),
        # a pipeline's stage that trains the reward model
        Valid("def run_reward_stage(self, sft_checkpoint):\n    return self._train(sft_checkpoint)\n"),
        # a reader cached, a summary logged, under decorators that say rewards
        Valid("@rewards_cache\ndef read_rows(path):\n    return pd.read_parquet(path)\n"),
        Valid("@with_reward_timeout(5)\ndef fetch_page(url):\n    return requests.get(url).text\n"),
        Valid(
            "@register_reward_collator('pairs')\ndef pad_pairs(batch, tokenizer):\n    return pad(batch)\n"
        ),
        Valid("@log_rewards\ndef summarize(rows):\n    return {'mean': sum(rows) / len(rows)}\n"),
        # a reward model put in a registry of models is no reward function
        Valid("@reward_model.register('bt')\ndef build_bt_head(config):\n    return Head(config)\n"),
        # a grader of an evaluation: it returns a verdict, not a reward
        Valid("class MathGrader:\n    def grade(self, pred, answer):\n        return pred == answer\n"),
        Valid("def reward_distribution_frame(arms):\n    return load(arms)[['arm', 'score']]\n"),
        Valid("def reward_stats(rows):\n    return {'mean': mean(r['reward'] for r in rows)}\n"),
        # the accuracy of a reward model's preferences, tabulated: a metric of rewards, not a reward
        Valid(
            "def compute_reward_accuracy_metrics(chosen_rewards, rejected_rewards, gaps):\n"
            "    return {'acc': mean(c > r for c, r in zip(chosen_rewards, rejected_rewards))}\n"
        ),
        # a summary of an episode's logged rewards, for a report: no reward computed (a reward *of* a
        # summary, ``reward_summary_quality(summary, article)``, is one)
        Valid(
            "def episode_reward_summary(trace):\n    rewards = [t.get('reward', 0.0) for t in trace]\n"
            "    return {'total_reward': sum(rewards), 'step_rewards': rewards}\n"
        ),
        # a loader of reward-model preference sets returns data, not a reward
        Valid("def get_rlhf_reward_datasets(name, split):\n    return load_dataset(name, split=split)\n"),
        Valid(
            "def detect_reward_hacking(df, window=20):\n"
            "    return df['reward'].rolling(window).mean().diff() > 3 * df['reward'].std()\n"
        ),
        # a check for reward hacking (an exploit of a reward), whatever verb leads it
        Valid(
            "def evaluate_reward_hack_exploit_check(check, *, context):\n"
            "    return Result(check.id, detect(check.exploit, context))\n"
        ),
        Valid(
            "class RewardStatsCallback:\n    def score_against_list(self, pred, gt_list):\n"
            "        return 0.0\n"
        ),
        Valid("def render(completions):\n    return '\\n'.join(completions)\n"),
        Valid("def f(prompts, **kwargs):\n    pass\n"),
        Valid("def load_reward_model(path):\n    return AutoModel.from_pretrained(path)\n"),
        Valid("class RewardModel(nn.Module):\n    def __call__(self, x):\n        return self.head(x)\n"),
        Valid("class RewardConfig:\n    scale: float = 1.0\n"),
        Valid("def log_rewards(rewards):\n    print(rewards)\n"),
        Valid("def get_reward(model, query_responses):\n    return model.score(query_responses)\n"),
        Valid(
            "class RewardModelProxy:\n    def get_reward(self, queries):\n        return self.rm(queries)\n"
        ),
        Valid("rewards = compute_reward(outputs, answers)\n"),
        Valid("def f1_score(prediction, ground_truth):\n    return 0.0\n"),
        Valid("def extract_solution(solution_str):\n    return solution_str.split('=')[-1]\n"),
        Valid("def select_reward_fn(data_source):\n    return gsm8k.compute_score\n"),
        Valid("def compute_score(predictions, model):\n    return 0.0\n"),
        Valid("def compute_bleu_score(predictions, references):\n    return 0.0\n"),
        Valid("def format_turn(message):\n    return message['content']\n"),
        Valid("def reward_guided_search(s, question, paras):\n    return Tree(s, paras).run(question)\n"),
        Valid("class RewardWeightedSampler:\n    def __call__(self, pool):\n        return pool[0]\n"),
        Valid(
            "class RewardLogger:\n    def log(self, output, ground_truth):\n"
            "        print(output, ground_truth)\n"
        ),
        Valid(
            "class RewardStatsCallback:\n    def sanity_check(self, batch):\n"
            "        for out, gt in batch:\n            assert grade_answer(out, gt) == 1\n"
            "        return True\n"
        ),
        # a report of the KL penalty beside the rewards, in a function named for neither
        Valid("def log_stats(rewards, kl_penalty):\n    gap = rewards - kl_penalty\n    print(gap.mean())\n"),
        Valid(
            "class RewardModelWorker:\n    def forward_step(self, data):\n"
            "        return self.score(data['output'], data['ground_truth'])\n"
        ),
    )
    INVALID = (
        # the per-token KL penalty to the reference folded into the reward, the score added at the end
        Invalid(
            "def compute_reward(reward_at_end, kl_coeff, kl, last):\n"
            "    res = -kl_coeff * kl\n    res[:, last] += reward_at_end\n    return res\n",
            "loss",
            "ppo",
        ),
        # a method named for penalising rewards by KL, the weighted penalty bound to a name first
        Invalid(
            "class Reward:\n    def kl_penalize_reward(self, results):\n"
            "        kl = results['logprobs'] - results['ref_logprobs']\n"
            "        kl_penalty = self.kl_coef * kl\n"
            "        penalized_rewards = flattened_rewards - kl_penalty\n"
            "        results['penalized'] = penalized_rewards\n",
            "loss",
            "ppo",
        ),
        # the score read off each sample's record
        Invalid(
            "def compute_rewards(samples, logprobs, ref_logprobs, kl_coef):\n    out = []\n"
            "    for i in range(len(samples)):\n        r = -kl_coef * (logprobs[i] - ref_logprobs[i])\n"
            "        r[-1] += samples[i].score\n        out.append(r)\n    return out\n",
            "loss",
            "ppo",
        ),
        # an experience maker doing the same with its KL controller's coefficient
        Invalid(
            "class Orchestrator:\n    def make_experience(self, samples):\n"
            "        kls = logprobs - ref_logprobs\n"
            "        non_score_rewards = -self.model.kl_ctl.value * kls\n"
            "        all_rewards = non_score_rewards.clone()\n"
            "        all_rewards[:, -1] += scores.to(device)\n        self.push(all_rewards)\n",
            "loss",
            "ppo",
        ),
        # a reward asked of an LLM judge handed in (its client and model name)
        Invalid(
            "def compute_group_rewards(codes, judge_client, judge_model):\n"
            "    return [judge_score(c, judge_client, judge_model) for c in codes]\n",
            "reward_named",
        ),
        # a reward returned with its metrics is a reward
        Invalid(
            "def code_reward_and_metrics(program, tests):\n"
            "    passed = run(program, tests)\n    return passed / len(tests), {'passed': passed}\n",
            "reward_named",
        ),
        # TRL's contract taken by keyword only, under a name that does not say reward
        Invalid(
            "def rush_solution_shaped(*, prompts, completions, **kwargs):\n"
            "    return [score(c, kwargs.get('gold')) for c in completions]\n",
            "reward_function",
        ),
        # a function a registry of rewards is given, whatever its name
        Invalid(
            "from .registry import reward\n\n@reward('exact_call', default=True)\n"
            "def exact_call_match(prompts, completions, answers):\n"
            "    return [float(c.strip() == a) for c, a in zip(completions, answers)]\n",
            "reward_function",
        ),
        Invalid(
            "@rewards.register('fmt')\ndef fmt_match(prompts, completions):\n"
            "    return [float(c.startswith('<think>')) for c in completions]\n",
            "reward_function",
        ),
        Invalid(
            "@register_reward\ndef exact(prompts, outputs, answers):\n    return [1.0]\n", "reward_function"
        ),
        # a reward for a phase of the answer
        Invalid(
            "def reasoning_phase_reward(text, answer):\n    return float(answer in text)\n",
            "reward_named",
        ),
        # a penalty for reward hacking is a reward
        Invalid(
            "def reward_hacking_penalty(text, answer):\n    return -1.0 if 'assert True' in text else 0.0\n",
            "reward_named",
        ),
        # the reference handed by keyword only
        Invalid(
            "class AnswerChecker:\n    def check_score(self, response, *, ground_truth):\n"
            "        reward = float(response == ground_truth)\n        return reward\n",
            "reward_named",
        ),
        # a checker class whose method, given the reference, returns what it names a reward
        Invalid(
            "class RuleBasedVerifier:\n    def verify(self, generated_text, ground_truth):\n"
            "        reward = 1.0 if check(generated_text, ground_truth) else 0.0\n"
            "        return reward, {}\n",
            "reward_named",
        ),
        Invalid(
            "def stats_reward(response, ground_truth):\n"
            "    return float(close(parse(response), ground_truth))\n",
            "reward_named",
        ),
        Invalid(
            "def combine_reward_fn(data, trajectory):\n"
            "    return sum(step['ok'] for step in trajectory['actions'])\n",
            "interactive",
        ),
        Invalid(
            "def compute_score(solution_str, ground_truth):\n"
            "    docs = re.findall(r'<information>(.*?)</information>', solution_str)\n"
            "    return float(ground_truth in ' '.join(docs))\n",
            "interactive",
        ),
        Invalid(
            "def tool_success_reward(completions, **kwargs):\n"
            "    return [float(any(m['role'] == 'tool' and 'SUCCESS' in m['content'] for m in c))\n"
            "            for c in completions]\n",
            "interactive",
        ),
        Invalid(
            "def compute_turn_reward(tool_interact_info):\n"
            "    return sum(i['ok'] for i in tool_interact_info) / max(len(tool_interact_info), 1)\n",
            "interactive",
        ),
        Invalid(
            "def accuracy_reward(completions, solution, **kwargs):\n    return [1.0 for _ in completions]\n",
            "reward_function",
        ),
        Invalid(
            "def format_reward(prompts, completions, **kw):\n    return [0.0] * len(completions)\n",
            "reward_function",
        ),
        Invalid(
            "def compute_score(solution_str, ground_truth, format_score=0.1):\n"
            "    return 1.0 if solution_str.strip() == ground_truth else format_score\n",
            "reward_function",
        ),
        Invalid(
            "def math_reward(response, answer):\n    return float(response == answer)\n",
            "reward_named",
        ),
        # a reward of a summary, not a summary of rewards
        Invalid(
            "def compute_reward_for_summary(summary, reference):\n    return rouge(summary, reference)\n",
            "reward_named",
        ),
        # a model's word qualifying the response: the sample scored, not a model handed in
        Invalid(
            "def tool_call_reward(model_response, expected_name):\n"
            "    return 1.0 if model_response == expected_name else 0.0\n",
            "reward_named",
        ),
        # an analysing verb after the first word qualifies the reward
        Invalid(
            "def toxicity_detect_reward(response: str) -> float:\n"
            "    return -1.0 if any(w in response.lower() for w in BAD) else 0.0\n",
            "reward_named",
        ),
        Invalid(
            "def reward_based_on_format(response):\n    return float(response.endswith('</answer>'))\n",
            "reward_named",
        ),
        Invalid(
            "def compute_score(model_output: str, ground_truth: str) -> float:\n"
            "    return float(verify(model_output, ground_truth))\n",
            "reward_named",
        ),
        Invalid(
            "def compute_score(reward_inputs):\n    return [{'overall': 1.0} for r in reward_inputs]\n",
            "reward_named",
        ),
        Invalid(
            "def compute_gt_score(completions, references, tasks):\n    return [1.0 for c in completions]\n",
            "reward_named",
        ),
        Invalid(
            "class RuleReward(BaseModule):\n    def forward_step(self, data):\n"
            "        fn = self.select_score_fn(data['source'])\n"
            "        return [compute_score_fn(d['output'], ground_truth) for d, ground_truth in data]\n",
            "reward_named",
        ),
        Invalid(
            "class AtomicOpsReward:\n    def score_against_list(self, pred_sql, gt_sqls):\n"
            "        return max(jaccard(pred_sql, g) for g in gt_sqls)\n",
            "reward_named",
        ),
        Invalid(
            "class DefaultRewardShaper:\n    def score(self, parsed, report, gold=None):\n"
            "        return 1.0 if grade(parsed.answer, gold) else 0.0\n",
            "reward_named",
        ),
        Invalid(
            "class RewardMathFn(RewardFn):\n"
            "    def __call__(self, sample):\n        return RewardOutput(1.0)\n",
            "reward_named",
        ),
    )

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        before = len(self.context.findings)
        self._reward(node)
        rewarded = len(self.context.findings) > before
        training_scope = not NOT_TRAINING_SCOPES & set(words(node.name.value))
        if self.kl_written and (
            # (a penalty held by name, ``rewards - kl_penalty``, counts in training code only: an
            # evaluation reports a KL-penalised score too)
            _kl_shaped(node, folded_only=False, by_name=training_scope)
            if rewarded or (training_scope and _names_kl_reward(node.name.value))
            # (elsewhere only the per-token folding, and not in a test's or an evaluation's code:
            # ``objective = score - beta * kl`` is a report's trade-off as often)
            else training_scope and _kl_shaped(node, folded_only=True)
        ):
            # rewards = -kl_coef * kl; rewards[last] += score: the per-token KL penalty folded into
            # the reward, as RLHF's PPO does (TRL's, OpenRLHF's ``compute_reward``, trlx's experience
            # maker); group-relative methods keep the KL in the loss
            message = f"{node.name.value}() folds a per-token KL penalty into the reward (RLHF PPO)"
            self.report(node, "loss", message, kind="ppo")
        if rewarded:
            # (a parameter with a default, ``remaining_turns=None``, is support the caller may not use;
            # a parameter ``turn`` is as often a speaker's or a player's)
            required = [
                p.name.value
                for p in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
                if p.default is None
            ]
            named = set(words(node.name.value))
            said = {w for n in required for w in words(n)}
            if (named & TURN_WORDS and not named & ONE_TURN_WORDS) or said & EPISODE_PARAMETER_WORDS:
                # ``compute_turn_reward(tool_interact_info)``: a reward per turn of an episode, whose
                # samples are multi-turn (a single-turn sample has no turns to credit)
                message = f"{node.name.value}() rewards the turns of multi-turn episodes"
                self.report(node, "interactive", message, interactive=True)
            elif _reads_tool_replies(node, self.helpers):
                # a reward that reads the tool's replies in the trajectory: its samples are episodes
                # in which a tool answered the policy between turns (multi-turn tool RL)
                message = f"{node.name.value}() reads a tool's replies between the policy's turns"
                self.report(node, "interactive", message, interactive=True)

    def _reward(self, node: cst.FunctionDef) -> None:
        params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        name = node.name.value
        if takes_samples(node) == "trl":
            self.report(node, "reward_function", f"{name}(completions, **kwargs) scores samples")
        elif takes_samples(node) == "verl":
            self.report(node, "reward_function", f"{name}() scores a response (verl's reward contract)")
        elif _registered_reward(node) and _returns(node):
            # @reward("tool_call_exact"), @register_reward: put in a trainer's registry of rewards
            self.report(node, "reward_function", f"{name}() is registered as a reward")
        elif _score_contract(name, params):
            # known by name and parameters only, like a reward-named definition: an evaluation script
            # computes a score this way too, so it decides a library module, not a script
            self.report(node, "reward_named", f"{name}() scores a response against its reference")
        elif (
            _reward_named(name)
            and not self._in_model
            and (sample := [p for p in params if p not in ("self", "cls")])
            and not any(_names_a_model(p) for p in sample)
            # (``cal_monte_carlo_reward(args)``, ``rlhf_reward_…(filename, tokenizer)``: settings, files
            # and tools handed in, no sample: a data step named for the rewards it writes)
            and not all(set(words(p)) <= PLUMBING_PARAMETER_WORDS for p in sample)
            # (``_safe_reward(reward)``, ``clip_rewards(rewards)``: a reward already computed, handed in
            # to be converted or bounded, no sample to score)
            and not all(set(words(p)) & {"reward", "rewards"} for p in sample)
            and _returns(node)
        ):
            # a reward computed by a model handed in (``get_reward(model, ...)``) or by a method of a
            # reward model is that model's scorer, not a reward function
            self.report(node, "reward_named", f"{name}() computes a sample's reward")

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self._models: list[bool] = []  # per enclosing class: is it a model (``RewardModelProxy``)?
        self.helpers: dict[str, cst.FunctionDef] = {}
        """The module's functions, by name (helpers a reward calls)."""
        self.kl_written = "kl" in context.text.lower()
        """The text holds "kl" somewhere: only then can a function fold a KL penalty into rewards (the
        check walks each function's body, a cost most files need not pay)."""

    def visit_Module(self, node: cst.Module) -> None:
        self.helpers = {f.name.value: f for f in node.body if type(f) is cst.FunctionDef}

    @property
    def _in_model(self) -> bool:
        return any(self._models)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._models.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._models.append(bool(set(words(node.name.value)) & MODEL_WORDS))
        if self._in_model:
            return
        if not _reward_named(node.name.value):
            verifier = _rewarding_verifier(node)
            if verifier is not None:
                message = f"{node.name.value}.{verifier.name.value}() returns a reward against the reference"
                self.report(verifier, "reward_named", message)
            return
        call = next(
            (
                s
                for s in node.body.body
                if type(s) is cst.FunctionDef and s.name.value == "__call__" and _returns(s)
            ),
            None,
        )
        if call is not None:
            self.report(node, "reward_named", f"{node.name.value} is called to score samples")
            return
        named = words(node.name.value)
        scorer: cst.CSTNode | None = next(
            (
                c
                for s in node.body.body
                if type(s) is cst.FunctionDef and _returns(s)
                for c in descendants(s)
                if type(c) is cst.Call and _scores_against_truth(c)
            ),
            None,
        )
        scorer = scorer or next(
            (
                # AtomicOpsReward.score_against_list(pred_sql, gt_sqls): a method named for scoring,
                # given the references, that returns the score
                s
                for s in node.body.body
                if type(s) is cst.FunctionDef
                and set(words(s.name.value)) & SCORER_WORDS
                and any(set(words(p.name.value)) & TRUTH_WORDS for p in s.params.params)
                and _returns(s)
            ),
            None,
        )
        if named[0] == "test" or named[-1] not in REWARD_CLASS_HEADS:
            # ``TestRewardMath`` tests a reward, ``RewardStatsCallback`` logs one: neither computes it
            scorer = None
        if scorer is not None:
            # a framework module's reward (``class RuleReward(BaseModule)`` with ``forward_step``):
            # its methods score each output against the reference, whatever the method is called
            message = f"{node.name.value} scores outputs against their references"
            self.report(scorer, "reward_named", message)


REWARD_CLASS_HEADS = frozenset(
    {
        *("reward", "rewards", "fn", "func", "function", "scorer", "verifier", "grader", "judge", "manager"),
        *("shaper", "calculator"),
    }
)
"""Last words of a class that computes rewards (``RuleReward``, ``MathRewardFn``, ``RewardManager``,
``RewardShaper``, ``RewardCalculator``), not one that logs, tests or plots them."""
SCORER_WORDS = frozenset({"score", "scorer", "reward", "verify", "verifier", "grade", "grader", "judge"})
"""Words of a function that scores a response (``compute_score_fn``, ``grade_answer``)."""


VERIFIER_HEADS = frozenset({"verifier", "grader", "scorer", "checker"})
"""Last words of a class that checks responses (``RuleBasedVerifier``), for a reward or a metric."""


def _rewarding_verifier(node: cst.ClassDef) -> cst.FunctionDef | None:
    """Return a checker class's method that scores a response against its reference into a reward.

    ``class RuleBasedVerifier: def verify(self, generated_text, ground_truth): ...; return reward,
    info``: named for checking, given the reference, and what it returns is named a reward (a grader
    of an evaluation returns a verdict or a score).
    """
    named = words(node.name.value)
    if not named or named[-1] not in VERIFIER_HEADS or type(node.body) is not cst.IndentedBlock:
        return None
    for method_def in node.body.body:
        if (
            type(method_def) is cst.FunctionDef
            and set(words(method_def.name.value)) & SCORER_WORDS
            and any(
                set(words(p.name.value)) & TRUTH_WORDS
                for p in (*method_def.params.params, *method_def.params.kwonly_params)
            )
            and _returns_reward(method_def)
        ):
            return method_def
    return None


def _returns_reward(node: cst.FunctionDef) -> bool:
    """Say whether a function returns a value named a reward (``return reward, info``)."""
    return any(
        type(n) is cst.Name and {"reward", "rewards"} & set(words(n.value))
        for value in _returned(node)
        for n in (value, *descendants(value))
    )


def _scores_against_truth(call: cst.Call) -> bool:
    """Say whether a call scores something against a reference (``score_fn(output, ground_truth)``)."""
    if not set(words(last_name(call.func))) & SCORER_WORDS:
        return False
    given = [last_name(a.value) for a in call.args] + [a.keyword.value for a in call.args if a.keyword]
    return any(set(words(g)) & TRUTH_WORDS for g in given)


def _score_contract(name: str, params: list[str]) -> bool:
    """Say whether a function is a reward module's scorer by the contract its name and parameters keep.

    ``compute_score(model_output, ground_truth)``, ``compute_score(reward_inputs)``, and
    ``compute_<x>_score(completions, references)`` alike.
    """
    found = [set(words(p)) for p in params if p not in ("self", "cls")]
    truth = any(w & TRUTH_WORDS for w in found)
    if name == SCORE_CONTRACT:
        return truth or any("reward" in w for w in found)
    named = words(name)
    return (
        len(named) > 2
        and named[0] == "compute"
        and named[-1] == "score"
        and truth
        and any(w & RESPONSE_WORDS for w in found)
    )


def _registered_reward(node: cst.FunctionDef) -> bool:
    """Say whether a decorator registers the definition as a reward (not as a reward model).

    The decorator says rewards and nothing but registering them (:data:`REGISTRY_WORDS`).
    """
    for decorator in node.decorators:
        expr = decorator.decorator
        said = set(words(dotted(expr.func if type(expr) is cst.Call else expr).replace(".", "_")))
        if said & {"reward", "rewards"} and said <= REGISTRY_WORDS:
            return True
    return False


def _names_a_model(parameter: str) -> bool:
    """Say whether a parameter names a model handed in (``model``, ``reward_lm``), not what one produced.

    ``model_response``, ``policy_output``: a model's word qualifying a response's names the sample
    being scored, as ``response`` alone would.
    """
    said = words(parameter)
    if "judge" in said:
        # (``judge_model``, ``judge_llm``: the judge asked for the reward, an LLM-as-judge reward of
        # RL, not the policy nor a reward model whose scorer this would be)
        return False
    return bool(set(said) & MODEL_WORDS) and not (said and said[-1] in RESPONSE_WORDS | OUTPUT_WORDS)


def _reward_named(name: str) -> bool:
    """Say whether a definition's name is a reward's: says reward, and no reward model or plumbing.

    A reward that qualifies another word through a participle (``reward_guided_search``,
    ``reward_weighted_sampling``, ``RewardBasedFilter``) names that other thing, steered by rewards;
    "reward hacking" is an exploit of a reward.
    """
    named = words(name)
    found = set(named)
    if not found & {"reward", "rewards"} or found & NOT_A_REWARD_FUNCTION or named[0] in ANALYSING_VERBS:
        return False
    if found & STAGE_WORDS and found & RUNNING_VERBS:
        return False  # (``run_reward_stage``: a pipeline's reward-model stage)
    at = next(i for i, w in enumerate(named) if w in ("reward", "rewards"))
    # (what follows "reward" up to a conjunction or a preposition: ``reward_with_metrics`` is a reward
    # returned with its metrics, ``reward_accuracy_metrics`` metrics of rewards)
    qualifiers = list(itertools.takewhile(lambda w: w not in JOINING_WORDS, named[at + 1 :]))
    if (
        set(qualifiers) & TABULATING_WORDS
        or (named[-1] in SUMMING_WORDS and at == len(named) - 2)
        or (named[at + 1 : at + 2] in HACKING and named[-1] not in PENALTY_WORDS)
    ):
        # (``reward_stats``, ``episode_reward_summary``: rewards tabulated or summed up for a report;
        # ``reward_hack_check``: the exploit of a reward, not one; a penalty for it is)
        return False
    qualifier, head = named[at + 1 : at + 2], named[at + 2 : at + 3]
    # (``reward_combined`` is a reward combined, ``reward_based_on_format`` a reward based on one)
    return not (qualifier and qualifier[0].endswith("ed") and head and head[0] not in PREPOSITIONS)


KL_WORDS = frozenset({"kl", "kls", "kld", "kl_div"})
"""Words of a name holding a KL divergence (``kl``, ``per_token_kl``)."""


def _kl_shaped(node: cst.FunctionDef, folded_only: bool, by_name: bool = True) -> bool:
    """Say whether a function negates a KL term and adds a score into the same rewards.

    ``res = -kl_coeff * kl; res[idx, last] += reward_at_end`` or (unless ``folded_only``) ``rewards =
    score - beta * kl``: the reward of each token is the KL penalty, the sample's score added at its end.
    ``by_name``: a penalty held by a name says so (``rewards - kl_penalty``).
    """
    penalised = added = False
    for n in own_descendants(node.body):
        if type(n) is cst.UnaryOperation and isinstance(n.operator, cst.Minus):
            penalised = penalised or _kl_product(n.expression, by_name)
        elif (
            type(n) is cst.BinaryOperation
            and isinstance(n.operator, cst.Multiply)
            and any(
                type(f) is cst.UnaryOperation and isinstance(f.operator, cst.Minus) for f in (n.left, n.right)
            )
        ):
            penalised = penalised or _kl_product(n, by_name)  # (``-kl_coef * kl`` is ``(-kl_coef) * kl``)
        elif not folded_only and type(n) is cst.BinaryOperation and isinstance(n.operator, cst.Subtract):
            # (``score - beta * kl``: the penalty and the score in one expression)
            both = _kl_product(n.right, by_name) and _scored(n.left)
            penalised, added = penalised or both, added or both
        elif type(n) is cst.AugAssign and isinstance(n.operator, cst.AddAssign):
            added = added or _scored(n.value)
    return penalised and added


PENALTY_WORDS = frozenset({"penalty", "penalties", "pen", "penalize", "penalise", "penalized", "penalised"})
"""Words of a name holding a KL penalty already weighted (``kl_penalty = kl_coef * kl``), or of a
function that applies one (``kl_penalize_reward``)."""


def _names_kl_reward(name: str) -> bool:
    """Say whether a function is named for penalising rewards by a KL term (``kl_penalize_reward``)."""
    said = set(words(name))
    return bool(said & KL_WORDS and said & {"reward", "rewards"} and said & PENALTY_WORDS)


def _kl_product(value: cst.BaseExpression, by_name: bool = True) -> bool:
    """Say whether ``value`` is a coefficient times a KL term (``kl_coef * kl``, ``beta * kl[:, i]``).

    Or (``by_name``) a name holding that product already (``kl_penalty``).
    """
    if type(value) is cst.Name and by_name:
        said = set(words(value.value))
        return bool(said & KL_WORDS and said & PENALTY_WORDS)
    if type(value) is not cst.BinaryOperation or not isinstance(value.operator, cst.Multiply):
        return False
    return any(bool(set(words(_base_name(side))) & KL_WORDS) for side in (value.left, value.right))


def _scored(value: cst.BaseExpression) -> bool:
    """Say whether ``value`` is named for a sample's score or reward (``reward_at_end``, ``scores[i]``)."""
    return bool(set(words(_base_name(value))) & {"reward", "rewards", "score", "scores"})


def _base_name(value: cst.BaseExpression) -> str:
    """Return the name a value is read by (a subscript's tensor's, a negation's operand's, a moved one's).

    An attribute is read by its whole chain (``self.kl_ctl.value``: the KL controller's value).
    """
    while True:
        if type(value) is cst.Subscript:
            value = value.value
        elif type(value) is cst.UnaryOperation:
            value = value.expression
        elif type(value) is cst.Call and unshaped(value) is not value:
            value = unshaped(value)  # (``scores.to(device)``)
        elif type(value) is cst.Attribute:
            # (``samples[i].score``, an attribute of no plain chain: its own name)
            return dotted(value).replace(".", "_") or value.attr.value
        else:
            return last_name(value)


def _returned(node: cst.FunctionDef) -> list[cst.BaseExpression]:
    """Return what a function's own ``return`` statements give back (not those of nested functions)."""
    return [n.value for n in own_descendants(node.body) if type(n) is cst.Return and n.value is not None]


def _returns(node: cst.FunctionDef) -> bool:
    """Say whether ``node`` returns a value (a reward), not only logs or stores one."""
    return bool(_returned(node))
