"""A model asked to judge answers: an LLM-as-judge evaluation, not the generation of a dataset."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.calls import (
    asks_helper,
    generates,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words

JUDGE_WORDS = frozenset(
    {"judge", "judges", "judgment", "judgement", "judgments", "verdict", "winner", "winners"}
    | {"reviewer", "reviewers"}
)
"""Words of an identifier or a record field that holds a judge or its decision about answers
(``g1_winner``, ``judgment``, ``run_judge_pair``, ``reviewer_idx``: GPT-4 reviewing two answers)."""
PREFERENCE_FIELDS = frozenset({"chosen", "rejected"})
"""Record fields of a preference pair: a judge that fills them labels training data, it evaluates nothing."""
FIELD_HINTS = ("judg", "Judg", "verdict", "winner", "eviewer", "chosen", "rejected")
"""Text a record field must hold to be read at all."""
JUDGE_HINTS = ("judg", "verdict", "winner", "reviewer", "eval")
"""Lower-case text an identifier must hold to be split into words at all."""
EVALUATING_WORDS = frozenset({"eval", "evaluation", "evaluate", "evaluator"})
PROMPT_WORDS = frozenset({"prompt", "prompts"})
"""With an evaluating word, the words of a prompt that asks a model to evaluate answers
(``get_dialog_eval_gpt4_prompt``, ``model_A_vs_B_eval_prompt``): a judge's instruction."""
JUDGING_PROMPT = re.compile(
    r"\b(?:judge|grade|evaluate|verify|assess)\b.{0,200}?\b(?:reference|golden|gold|ground[ -]truth"
    r"|predicted|model's|candidate)\s+(?:answer|response|solution)"
    r"|\b(?:reference|golden|gold|ground[ -]truth|predicted|candidate)\s+(?:answer|response|solution)"
    r"\b.{0,200}?\b(?:is|are)\s+correct"
    r"|\b(?:check|checking|evaluate|evaluating|assess|assessing|judge|judging|rate|rating)\s+the\s+quality"
    r"\s+of\s+(?:the\s+|an?\s+|each\s+)?(?:answer|response|solution)s?\b",
    re.IGNORECASE | re.DOTALL,
)
"""An instruction asking a model to judge an answer it is given against a reference, or the quality of
answers it is given: the prompt of an LLM judge (``verify whether the Predicted Answer is correct``,
``evaluate the quality of the response provided by an AI assistant``)."""
_RATING_ZH = r"(?:打分|评分|给出得分|给出分数|给出一个分数)"
JUDGING_PROMPT_ZH = re.compile(
    rf"(?:回答|答案|回复).{{0,100}}?{_RATING_ZH}|{_RATING_ZH}.{{0,100}}?(?:回答|答案|回复)", re.DOTALL
)
"""The same instruction in Chinese: score or rate the answer or reply it is given (``请针对模型回答给出
得分``, ``请对以下回答进行评分``), as Chinese evaluation sets' GPT judges are prompted; an exam's
"scoring points" (``得分点``) are no rating."""
ANSWER_HINTS = ("nswer", "esponse", "olution", "回答", "答案", "回复")
"""Text a literal must hold to be read as a judge's instruction at all."""
REWRITING_ZH = re.compile(r"改写|重写|润色|改进|优化|修改|修正|纠正|更好的")
"""Chinese words of an instruction to rewrite, improve or correct the answer it judged."""
REWRITING = re.compile(
    r"\b(?:rewrite|rewrites|revise|revised|refine|refined|improve|improved|better answer|corrected)\b",
    re.IGNORECASE,
)
"""Words of an instruction to write a better answer after judging one (self-refine, reflection
tuning): the model writes data, it does not only judge."""
MAX_PROMPT = 20_000
"""Characters of one string literal read for a judge's instruction."""
JUDGE = "judge"
"""Variant of the ``scoring`` finding of an LLM judge."""


class LlmJudge(RouteDetector):
    """A file that generates with a model and names what it gets back a judgment, a verdict or a winner.

    MT-bench-style pairwise judges, GPT-4 graders of benchmark answers and reviewers write the model's
    replies out as files, which alone reads like data generation; what the replies *are* tells them
    apart: a judge's decision about answers is an evaluation. Only names are read (identifiers and
    record fields the code binds or writes), and only in a file that asks a model for text: a rule-based
    checker named a judge is a scorer, seen by other detectors. A judge whose decisions fill preference
    pairs (``chosen``/``rejected``) labels training data.
    """

    TRIGGERS = ("judg", "Judg", "verdict", "winner", "eviewer", "nswer", "esponse", "回答", "答案", "回复")

    VALID = (
        # asked to rewrite the answer it scored: data, not a judgment
        Valid(
            "import openai\nP = '请对以下回答进行评分，然后改写出一个更好的回答。'\n"
            "out = openai.ChatCompletion.create(messages=[P])\n"
        ),
        # an exam's scoring points, and a scored answer to be improved: data to train on
        Valid(
            "import openai\nP = '请写出详细解答和最终答案，要求覆盖所有得分点。'\n"
            "Q = '先对回答打分，然后给出优化后的回答。'\n"
            "out = openai.ChatCompletion.create(messages=[P, Q])\n"
        ),
        # a judge's phrase in an instruction to write a better answer: a rewrite
        Valid(
            "import openai\nP = 'Check the quality of the answer, then rewrite it as a better answer.'\n"
            "out = openai.ChatCompletion.create(messages=[P, content])\n"
        ),
        Valid(
            "import openai\nPROMPT = 'Solve the problem and give the final answer in a box.'\n"
            "out = openai.ChatCompletion.create(messages=[PROMPT])\n"
        ),
        Valid("judge = load_rules()\nscore = judge(answer)\n"),
        Valid(
            "out = client.chat.completions.create(messages=m)\n"
            "if args.mode == 'judgement':\n    t = get_judgment_template()\n"
        ),
        Valid(
            "async def get_judgement(pair):\n    return await client.chat.completions.create(messages=pair)\n"
            "rows.append({'chosen': a, 'rejected': b})\n"
        ),
        Valid("out = client.chat.completions.create(messages=m)\nrows.append({'output': out})\n"),
        Valid(
            "import openai\nSYSTEM = 'Rewrite the text to improve the quality of the response.'\n"
            "out = openai.ChatCompletion.create(messages=[SYSTEM, content])\n"
        ),
        Valid("eval_set = load('test')\nout = client.chat.completions.create(messages=eval_set)\n"),
        Valid("out = client.chat.completions.create(messages=m)\nrows.append({'product_review': out})\n"),
    )
    INVALID = (
        # a Chinese evaluation set's GPT judge, asked to score the model's answer
        Invalid(
            "import openai\nP = '%s 标准回答： %s 模型回答： %s。请针对模型回答给出得分，顺便给出理由：'\n"
            "out = openai.ChatCompletion.create(messages=[{'role': 'user', 'content': P % (q, a, x)}])\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "import openai\nPROMPT = 'Verify whether the Predicted Answer is correct. Reply True or False.'\n"
            "out = openai.ChatCompletion.create(messages=[PROMPT.format(q, g, p)])\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "import openai\nSYSTEM = 'You are a precise assistant for checking the quality of the answer.'\n"
            "out = openai.ChatCompletion.create(messages=[SYSTEM, content])\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "def run_judge_pair(q, a, b):\n    return client.chat.completions.create(messages=[q, a, b])\n"
            "g1_winner = run_judge_pair(q, a1, a2)\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "import openai\ndef get_eval(s, p):\n    return openai.ChatCompletion.create(messages=[s, p])\n"
            "review = get_eval(sys_prompt, prompt)\nreviewer_idx = pick(reviewers, category)\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "def get_dialog_eval_gpt4_prompt(prefix, a, b):\n    return TEMPLATE.format(prefix, a, b)\n"
            "r = api.run_inference([get_dialog_eval_gpt4_prompt(prefix, a, b)])\n"
            "rows.append({'response_A_vs_B': r})\n",
            "scoring",
            variant=JUDGE,
        ),
        Invalid(
            "r = chat_completion(system=s, prompt=p)\nrecord['gpt4_judgment'] = r\n",
            "scoring",
            variant=JUDGE,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.generates = False
        self.preferences = False
        """The file writes preference pairs (``"chosen"``/``"rejected"`` fields): a judge labelling data."""
        self.named: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        """The first judge-named identifier or field, and its statement."""

    def visit_Call(self, node: cst.Call) -> None:
        self.generates = self.generates or generates(self, node) or asks_helper(self, node)

    def _judged(self, node: cst.CSTNode, identifier: str) -> None:
        lowered = identifier.lower()
        if self.named is not None or not any(t in lowered for t in JUDGE_HINTS):
            return  # most identifiers: no need to split them into words
        said = set(words(identifier))
        if JUDGE_WORDS & said or (said & EVALUATING_WORDS and said & PROMPT_WORDS):
            self.named = (node, self.context.statements[-1] if self.context.statements else None)

    def _bound(self, target: cst.BaseExpression) -> None:
        for name in (target, *(e.value for e in getattr(target, "elements", ()))):
            if type(name) is cst.Name:
                self._judged(name, name.value)

    # What the code calls its own values: names it binds or defines, and record fields it writes. A
    # mode's value compared (``args.mode == "judgement"``) or a method called is someone else's name.
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bound(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bound(node.target)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._judged(node.name, node.name.value)

    def visit_Param(self, node: cst.Param) -> None:
        self._judged(node.name, node.name.value)

    def _prompt(self, node: cst.SimpleString | cst.FormattedStringText, text: str) -> None:
        """Note a literal that instructs a model to judge a given answer (the source text suffices)."""
        if self.named is not None or not any(hint in text for hint in ANSWER_HINTS):
            return
        head = text[:MAX_PROMPT]
        judged = JUDGING_PROMPT.search(head) and not REWRITING.search(head)
        if judged or (JUDGING_PROMPT_ZH.search(head) and not REWRITING_ZH.search(head)):
            self.named = (node, self.context.statements[-1] if self.context.statements else None)

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._prompt(node, node.value)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self._prompt(node, node.value)

    def _field(self, node: cst.BaseExpression) -> None:
        if type(node) is not cst.SimpleString or not any(t in node.value for t in FIELD_HINTS):
            return  # most fields: no need to evaluate the literal
        if isinstance(node.evaluated_value, str):
            if node.evaluated_value in PREFERENCE_FIELDS:
                self.preferences = True
            self._judged(node, node.evaluated_value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._field(node.key)

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if type(node.slice) is cst.Index:
            self._field(node.slice.value)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.generates and self.named is not None and not self.preferences:
            message = (
                "asks a model for text and names a judge, reviewer, judgment, verdict or winner, or"
                " instructs it to judge a given answer (an LLM judge)"
            )
            node, statement = self.named
            self.report(node, "scoring", message, statement=statement, variant=JUDGE)
