"""On-policy distillation: the policy-gradient rewards are a teacher's log-probabilities of the samples."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import SEQUENCE_LOGPROB_WORDS, TEACHER_WORDS, words
from arb_audit.analyzer.names import dotted, last_name
from arb_audit.analyzer.walk import descendants

ON_POLICY_DISTILLATION = "on_policy_distillation"
"""Variant of the ``loss`` finding (and of the stage it turns a policy-gradient one into)."""
LOGPROB_WORDS = SEQUENCE_LOGPROB_WORDS - {"logratios"}
"""Words of a per-token log-probability (``teacher_log_probs`` splits to ..., log, probs, logprobs)."""
REWARD_WORDS = frozenset({"reward", "rewards", "advantage", "advantages", "adv", "advs"})
"""Words of what a policy-gradient step weights the samples' log-probabilities by."""


TASK_REWARD_WORDS = frozenset({"reward", "rewards", "score", "scores", "correct", "accuracy", "acc"})
"""Words of a task's own reward, added to (or instead of) the gap to a teacher."""


def _logprob_named(node: cst.CSTNode) -> bool:
    """Say whether a name, attribute or key is named for log-probabilities (``data["action_log_probs"]``)."""
    if isinstance(node, cst.Name | cst.Attribute):
        return bool(set(words(last_name(node))) & LOGPROB_WORDS)
    if type(node) is cst.SimpleString:
        text = node.evaluated_value
        return isinstance(text, str) and text.isidentifier() and bool(set(words(text)) & LOGPROB_WORDS)
    return False


def _says_teacher_logprobs(node: cst.CSTNode) -> bool:
    """Say whether a name or attribute is named for a teacher's log-probabilities (``teacher_logps``)."""
    said = set(words(last_name(node))) if isinstance(node, cst.Name | cst.Attribute) else set()
    return bool(said & TEACHER_WORDS and said & LOGPROB_WORDS)


def _asks_teacher_logprobs(node: cst.BaseExpression) -> bool:
    """Say whether a call asks a teacher for log-probabilities (``teacher_client.compute_logprobs(x)``)."""
    return (
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and bool(set(words(node.func.attr.value)) & LOGPROB_WORDS)
        and bool(set(words(dotted(node.func.value).replace(".", "_"))) & TEACHER_WORDS)
    )


class TeacherRewards(RouteDetector):
    """The samples' rewards are a teacher's log-probabilities of them: on-policy distillation.

    The policy samples its own responses; a frozen teacher scores each token, and the reverse KL
    between student and teacher is the per-token reward a policy-gradient learner maximises
    (``rewards = -(action_log_probs - teacher_log_probs)``, also through a name holding the gap:
    ``reverse_kl = logp - teacher_logp; advantages = -reverse_kl``), or the teacher's log-probabilities
    are attached to each sample by the reward function for the learner's KL term
    (``sample.teacher_log_probs = ...`` in ``post_process_rewards``). A teacher's probability used as a
    reward (an LLM judge's "yes"), only logged, or a KL penalty toward a teacher beside a task reward
    (``rewards = task_rewards - beta * kl``) is not this: the reward is the student-teacher gap alone.
    Whatever estimator the RL framework runs, what is learnt is the teacher's distribution on the
    student's own samples: SFT by distillation (TAXONOMY.md), not reward-driven RL. A teacher's
    log-probabilities used in a loss are a distillation loss (see :mod:`.gradient_step`), not this.
    """

    TRIGGERS = ("teacher",)

    VALID = (
        Valid("teacher_log_probs = teacher(ids).logits.log_softmax(-1)\n"),
        Valid("rewards = scores - baseline\nteacher_name = 'qwen'\n"),
        Valid(
            "def distill_loss(student_logps, teacher_logps):\n"
            "    return (teacher_logps.exp() * (teacher_logps - student_logps)).sum()\n"
        ),
        Valid(
            "teacher_logprobs = F.log_softmax(teacher(**judge_in).logits[:, -1], dim=-1)\n"
            "rewards = teacher_logprobs[:, YES].exp()\n"
        ),
        Valid(
            "teacher_logp = token_logprobs(teacher, seqs)\nkl = ((old_logp - teacher_logp) * mask).sum(-1)\n"
            "rewards = task_rewards - beta * kl\nr = rewards.view(-1, G)\n"
            "advantages = (r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-6)\n"
        ),
        Valid(
            "def log_reward_stats(rewards, seqs):\n    teacher_logps = token_logprobs(teacher, seqs)\n"
            "    wandb.log({'teacher_nll': -teacher_logps.mean()})\n"
        ),
    )
    INVALID = (
        Invalid(
            "t_lp = teacher_client.compute_logprobs(seqs)\nadvantages = -(sampled_logprobs - t_lp) * mask\n",
            "loss",
            "sft",
            ON_POLICY_DISTILLATION,
        ),
        Invalid(
            "teacher_logprobs = token_logprobs(teacher, seqs)\n"
            "reverse_kl = sampled_logprobs - teacher_logprobs\nadvantages = -kl_coef * reverse_kl\n",
            "loss",
            "sft",
            ON_POLICY_DISTILLATION,
        ),
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
        self.teacher: set[str] = set()
        """Local names holding a teacher's log-probabilities (``t_lp = teacher.compute_logprobs(x)``)."""
        self.gaps: set[str] = set()
        """Local names holding the student's minus the teacher's log-probabilities (``reverse_kl``)."""

    def _teacher_side(self, node: cst.BaseExpression) -> bool:
        return any(
            _says_teacher_logprobs(n)
            or _asks_teacher_logprobs(n)
            or (type(n) is cst.Name and n.value in self.teacher)
            for n in (node, *descendants(node))
            if isinstance(n, cst.BaseExpression)
        )

    def _gap(self, value: cst.BaseExpression) -> bool:
        """Say whether ``value`` is, or holds, the student's log-probabilities minus the teacher's."""
        for n in (value, *descendants(value)):
            if type(n) is cst.Name and n.value in self.gaps:
                return True
            if type(n) is cst.BinaryOperation and isinstance(n.operator, cst.Subtract):
                sides = (n.left, n.right)
                teacher = [self._teacher_side(x) for x in sides]
                student = [any(_logprob_named(m) for m in (x, *descendants(x))) for x in sides]
                if (teacher[0] and student[1] and not teacher[1]) or (
                    teacher[1] and student[0] and not teacher[0]
                ):
                    return True
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.found:
            return
        targets = [t.target for t in node.targets]
        names = [t.value for t in targets if type(t) is cst.Name]
        rewarded = any(set(words(last_name(_written(t)))) & REWARD_WORDS for t in targets)
        # a task reward beside the gap (``task_rewards - beta * kl``) drives the learning: a KL
        # penalty toward a teacher, not distillation (and what holds such a sum is no gap)
        tasked = any(
            type(n) is cst.Name and n.value not in self.gaps and set(words(n.value)) & TASK_REWARD_WORDS
            for n in descendants(node.value)
        )
        gap = self._gap(node.value) and not tasked
        if gap:
            self.gaps.update(names)
        elif self._teacher_side(node.value):
            self.teacher.update(names)
        stored = any(type(t) is cst.Attribute and _says_teacher_logprobs(t) for t in targets)
        in_reward_code = any(set(words(n)) & REWARD_WORDS for n in self.enclosing())
        if (rewarded and gap) or (stored and in_reward_code):
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
    while type(target) is cst.Subscript:
        target = target.value
    return target
