"""On-policy distillation: the policy-gradient rewards are a teacher's log-probabilities of the samples."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import TEACHER_WORDS, words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.walk import descendants

ON_POLICY_DISTILLATION = "on_policy_distillation"
"""Variant of the ``loss`` finding (and of the stage it turns a policy-gradient one into)."""
LOGPROB_WORDS = frozenset({"logp", "logps", "logprob", "logprobs"})
"""Words of a per-token log-probability (``teacher_log_probs`` splits to ..., log, probs, logprobs)."""
REWARD_WORDS = frozenset({"reward", "rewards", "advantage", "advantages", "adv", "advs"})
"""Words of what a policy-gradient step weights the samples' log-probabilities by."""


def _teacher_logprobs(node: cst.CSTNode) -> bool:
    """Say whether ``node`` is, or holds, a teacher's log-probabilities (``teacher_action_log_probs``)."""
    for n in (node, *descendants(node)):
        if isinstance(n, cst.Name | cst.Attribute):
            said = set(words(last_name(n)))
            if said & TEACHER_WORDS and said & LOGPROB_WORDS:
                return True
    return False


class TeacherRewards(RouteDetector):
    """The samples' rewards are a teacher's log-probabilities of them: on-policy distillation.

    The policy samples its own responses; a frozen teacher scores each token, and the reverse KL
    between student and teacher is the per-token reward a policy-gradient learner maximises
    (``rewards = -(action_log_probs - teacher_log_probs)``), or the teacher's log-probabilities are
    attached to each sample by the reward function for the learner's KL term
    (``sample.teacher_log_probs = ...`` in ``post_process_rewards``). Whatever estimator the RL
    framework runs, what is learnt is the teacher's distribution on the student's own samples: SFT by
    distillation (TAXONOMY.md), not reward-driven RL. A teacher's log-probabilities used in a loss
    are a distillation loss (see :mod:`.gradient_step`), not this.
    """

    TRIGGERS = ("teacher",)

    VALID = (
        Valid("teacher_log_probs = teacher(ids).logits.log_softmax(-1)\n"),
        Valid("rewards = scores - baseline\nteacher_name = 'qwen'\n"),
        Valid(
            "def distill_loss(student_logps, teacher_logps):\n"
            "    return (teacher_logps.exp() * (teacher_logps - student_logps)).sum()\n"
        ),
    )
    INVALID = (
        Invalid(
            "def apply_reward_kl_penalty(self, data):\n"
            "    teacher_action_log_probs = data['base_action_log_probs']\n"
            "    rewards = -(data['action_log_probs'] - teacher_action_log_probs) * data['loss_mask']\n"
            "    data['rewards'] = rewards\n    return data\n",
            "loss",
            "sft",
            ON_POLICY_DISTILLATION,
        ),
        Invalid(
            "def post_process_rewards(args, samples):\n"
            "    for sample, t_log_probs in zip(samples, extract(samples)):\n"
            "        sample.teacher_log_probs = t_log_probs\n"
            "    return [0.0] * len(samples)\n",
            "loss",
            "sft",
            ON_POLICY_DISTILLATION,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.found:
            return
        targets = [t.target for t in node.targets]
        rewarded = any(set(words(last_name(_written(t)))) & REWARD_WORDS for t in targets)
        in_reward_code = any(set(words(n)) & REWARD_WORDS for n in self.enclosing())
        if (rewarded and _teacher_logprobs(node.value)) or (
            in_reward_code and any(_teacher_logprobs(t) for t in targets)
        ):
            self.found = True
            message = (
                "the samples' rewards are a teacher's log-probabilities of them (on-policy distillation)"
            )
            self.report(
                node,
                "loss",
                message,
                kind="sft",
                variant=ON_POLICY_DISTILLATION,
                data_source="distilled",
            )


def _written(target: cst.BaseExpression) -> cst.BaseExpression:
    """Return what an assignment target names (``rewards`` of ``data["rewards"]`` is the key's value)."""
    while isinstance(target, cst.Subscript):
        target = target.value
    return target
