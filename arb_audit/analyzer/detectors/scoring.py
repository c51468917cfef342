"""Scoring outputs against references or a benchmark."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import cached_by_name, words
from arb_audit.analyzer.walk import descendants

FILTER = "filter"
"""Variant of a ``scoring`` finding whose score only decides which generated samples are kept."""
BENCHMARK_TASKS = "benchmark_tasks"
"""Variant of a ``scoring`` finding for code of a benchmark's package (``terminal_bench``, ``swebench``),
not of evaluation code: its tasks and harness may be the world an environment trains in."""

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
COMPUTING_VERBS = frozenset({"compute", "calculate", "calc"})
"""First words of a function named for computing a measure (``compute_generation_metrics``)."""
METRIC_NAMES = frozenset({"metric", "metrics", "bleu", "rouge", "accuracy", "f1", "perplexity"})
"""Last words of such a function that name a metric of outputs (not ``compute_metrics_text``)."""
DATA_MEASURE_WORDS = frozenset({"data", "dataset", "datasets", "length", "lengths", "token", "tokens"})
"""Words of such a function that measures data rather than outputs (``compute_dataset_metrics``)."""


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


METRIC_PARTS = frozenset({"metric", "metrics"})
"""Package or module names of a project's metrics (``src.metrics``, ``collabllm.metric``)."""
LOGGING_WORDS = frozenset({"log", "logger", "logging", "tracker", "observability", "wandb", "gpu"})
"""Words of a metrics module or name that records a run's numbers rather than scoring outputs."""


DATA_PREPARATION_PARTS = frozenset(
    {
        *("decontamination", "decontaminate", "contamination", "contaminated", "filter"),
        *("dedup", "deduplicate", "deduplication", "preprocess", "preprocessing"),
    }
)
"""Words of data preparation inside an evaluation package, as a module's name (lm-eval's 13-gram
decontamination) or a function's (``benchmark_data.filter_out()``): such code reads a benchmark's
questions to keep them out of training data, and scores nothing."""


HELPER_PARTS = frozenset(
    {"util", "utils", "models", "model", "config", "configs", "templates", "prompts", "parsing", "io"}
)
"""Words of a module below an evaluation package that holds its helpers, not its scoring."""
SCORING_WORDS = frozenset(
    {"score", "scores", "metric", "metrics", "accuracy", "evaluate", "eval", "grade", "judge", "pass"}
)
"""Words of a function's name that says it scores outputs."""


FLOW_STEPS = 2
"""Assignments followed from a metric to the score it yields (``scorer`` -> ``scores`` -> ``best``)."""
ORDERING = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


def _thresholds(test: cst.BaseExpression) -> list[set[str]]:
    """Names of each side of the threshold comparisons in a test (``max(scores) > 0.7``)."""
    return [
        _read(c.left) | {n for part in c.comparisons for n in _read(part.comparator)}
        for c in (test, *descendants(test))
        if type(c) is cst.Comparison and any(isinstance(p.operator, ORDERING) for p in c.comparisons)
    ]


def _bound(targets: Iterable[cst.CSTNode]) -> set[str]:
    """Names assignment or loop targets bind."""
    return {n.value for t in targets for n in (t, *descendants(t)) if type(n) is cst.Name}


def _read(node: cst.CSTNode) -> set[str]:
    """Names an expression reads."""
    return {n.value for n in (node, *descendants(node)) if type(n) is cst.Name}


def _prepares_data(qualified: str) -> bool:
    """Say whether a function comes from a data-preparation module (``lm_eval.decontamination.janitor``)."""
    return bool(DATA_PREPARATION_PARTS & set(qualified.split(".")[:-1]))


def _evaluation_module(qualified: str) -> bool:
    """Say whether a function comes from a module of evaluation code (``open_r1.utils.evaluation``).

    Helpers an evaluation package keeps beside its runners (``evals.util.math_parsing_util``,
    ``evals.models.ModelConfig``) parse answers or configure models: they score nothing.
    """
    parts = qualified.split(".")[:-1]
    if not parts or parts[0] in ("transformers", "trl", "torch", "builtins"):
        return False
    if DATA_PREPARATION_PARTS & set(words(qualified.rsplit(".", 1)[-1])):
        return False  # ``benchmark_data.filter_out()``
    last = qualified.rsplit(".", 1)[-1]
    if not last.isupper() and set(words(last)) & FILE_WORDS:
        # ``evals.convert_to_hf.list_directories_with_prefix``: files found or moved (a benchmark's
        # constant, ``POPULATE_FILE_EXTENSION``, is its harness's still)
        return False
    said = set(words(qualified.rsplit(".", 1)[-1])) | {p for part in parts for p in part.lower().split("_")}
    # a module of metrics holds measures of outputs (``dolma_refine.metrics.DocumentEditSimilarity``),
    # unless what is named measures the machine or logs (``gpu_metrics.get_gpu_memory_metrics``)
    measured = not said & (PERFORMANCE_WORDS | LOGGING_WORDS)
    found = [
        i
        for i, part in enumerate(parts)
        if EVALUATION_PARTS & set(part.split("_"))
        or part.endswith(("bench", "benchmark"))
        or (measured and METRIC_PARTS & set(part.split("_")))
    ]
    if not found:
        return False
    below = parts[found[-1] + 1 :]
    if not any(HELPER_PARTS & set(part.lower().split("_")) for part in below):
        return True
    # a helper module's function named for scoring scores (``rewardbench.utils.calculate_scores``)
    return bool(SCORING_WORDS & set(words(qualified.rsplit(".", 1)[-1])))


PLUMBING_PARTS = frozenset({"util", "utils", "loggers", "logger", "logging", "log", "io"})
"""Words of an evaluation library's module that holds its plumbing (``lm_eval.utils.eval_logger``,
``lm_eval.loggers.evaluation_tracker``): logging, hashing and serialising results, no scoring."""


def _library_plumbing(qualified: str) -> bool:
    """Say whether a name of an evaluation library is its plumbing, not a measure or a harness.

    A results tracker that writes the library's logs and hashes its settings evaluates nothing; a
    helper module's function named for scoring still scores.
    """
    parts = qualified.split(".")[1:-1]
    if not any(PLUMBING_PARTS & set(part.lower().split("_")) for part in parts):
        return False
    return not SCORING_WORDS & set(words(qualified.rsplit(".", 1)[-1]))


FILE_WORDS = frozenset(
    {"dir", "dirs", "directory", "directories", "folder", "folders", "file", "files", "path", "paths"}
)
"""Words of an evaluation package's helper named for files or directories
(``list_directories_with_prefix``, ``get_output_path``): plumbing that scores nothing."""
TASK_LOOKUP_VERBS = frozenset({"get", "load", "list", "make"})
"""First words of a function that fetches a benchmark's tasks (``get_benchmark_dict``, ``load_tasks``)."""
TASK_WORDS = frozenset({"task", "tasks", "suite", "suites", "benchmark", "benchmarks"})
"""Words of what such a function fetches."""


def _fetches_tasks(qualified: str) -> bool:
    """Say whether a function's name says it fetches a benchmark's tasks and scores nothing."""
    said = words(qualified.rsplit(".", 1)[-1])
    named = set(said)
    return (
        bool(said) and said[0] in TASK_LOOKUP_VERBS and bool(TASK_WORDS & named) and not SCORING_WORDS & named
    )


def _benchmark_package(qualified: str) -> bool:
    """Say whether a function comes from a benchmark's package (``terminal_bench.handlers``).

    Not when a part of its path is named for evaluation (``eval_agent.prompt``), nor from an
    evaluation library; a module named "benchmark" is a benchmark's package where its function only
    fetches the tasks (LIBERO's ``benchmark.get_benchmark_dict()``): it scores nothing.
    """
    parts = qualified.split(".")[:-1]
    if not parts or parts[0] in EVALUATION_LIBRARIES:
        return False
    evaluation = set().union(*(EVALUATION_PARTS & set(part.split("_")) for part in parts))
    if evaluation and not (evaluation <= {"benchmark", "benchmarks"} and _fetches_tasks(qualified)):
        return False
    return any(part.endswith(("bench", "benchmark")) for part in parts)


EVALUATOR_WORDS = frozenset({"evaluator", "evaluators"})
"""Words of an imported class or function named for running evaluations (``Evaluator``,
``build_evaluator``): a project's benchmark runner."""
PERFORMANCE_WORDS = frozenset({"speed", "latency", "throughput", "memory", "flops", "tflops", "timing"})
"""Words of what a performance benchmark measures (``build_speed_bench_fn``): a kernel's or a model's
cost, not its answers."""
TIMERS = frozenset(
    {"triton.testing.do_bench", "torch.utils.benchmark.Timer", "torch.cuda.max_memory_allocated"}
)
"""Functions that time code or measure its memory."""
TIMER_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in TIMERS)
BENCHMARK_WORDS = frozenset({"benchmark", "benchmarks"})
RUN_BENCHMARK_VERBS = frozenset({"run", "evaluate", "eval"})
"""A method named run + benchmark (``elm.run_benchmarks(config)``, ``evaluate_benchmark``) runs a
library's benchmark on a model: the method is not resolved (its object is a local), its name says so."""


class Scoring(RouteDetector):
    """Calling an evaluation harness or metric (lm-eval, lighteval, evaluate, math-verify, BLEU, ROUGE).

    Functions imported from a module of evaluation code (a package path with ``eval*`` or
    ``*benchmark*`` in it) count too: that is where projects keep their benchmark runners.
    """

    READS_INERT_CALLS = True  # (the names handed to any call: ``isinstance(t, lm_eval.Task)``)
    TRIGGERS = (
        "eval",
        "Evaluator",
        "bench",
        "math_verify",
        "sacrebleu",
        "bleu",
        "rouge",
        "bert_score",
        "accuracy_score",
        "_metric",  # (a project's ``compute_generation_metrics``)
        *(".metric import", ".metrics import", "from metrics import"),  # (a project's module of metrics)
    )

    VALID = (
        # an evaluation package's helper named for the files it finds
        Valid(
            "from evals.convert_to_hf import list_directories_with_prefix\n"
            "dirs = list_directories_with_prefix(bucket, 'ckpt')\n"
        ),
        # a run's numbers logged, the machine's measured: no outputs scored
        Valid(
            "from forge.observability.metric_actors import get_or_create_metric_logger\n"
            "from oxrl.utils.gpu_metrics import get_gpu_memory_metrics\n"
            "logger = get_or_create_metric_logger()\nlogger.log(get_gpu_memory_metrics())\n"
        ),
        # a measure of the data, computed by a helper named for something else than outputs' metrics
        Valid(
            "from utils import compute_token_lengths, calc_length_metrics\n"
            "n = compute_token_lengths(ds)\nm = calc_length_metrics(rows)\n"
        ),
        # a metric closure built for a trainer's evaluation loop, and a state class
        Valid(
            "from utils import compute_metrics_text, ComputeMetricsState\n"
            "compute_metrics = compute_metrics_text(tokenizer)\nstate = ComputeMetricsState()\n"
        ),
        Valid(
            "def evaluate(model, tokenizer):\n    data = load(tokenizer)\n    return model(data)\n"
            "evaluate(m, t)\n"
        ),
        Valid("import evaluate\n"),
        Valid(
            "from benchmark_model_configs import build_model_config_sweep\n"
            "from utils import build_speed_bench_fn, run_benchmarks\nsweep = build_model_config_sweep(m)\n"
            "run_benchmarks(bench_test_fn=build_speed_bench_fn(setup), metric_name='speed')\n"
        ),
        Valid("import torch.utils.benchmark as benchmark\ntimer = benchmark.Timer(stmt='f(x)')\n"),
        Valid("from sentence_transformers.evaluation import InformationRetrievalEvaluation\n"),
        Valid("score = 0.0\n"),
        Valid("eval_datasets = {}\nfor name in eval_datasets.items():\n    pass\n"),
        Valid("from mypy.evalexpr import evaluate_expression\nevaluate_expression(node)\n"),
        Valid("from lm_eval.decontamination.janitor import Janitor\njanitor = Janitor()\n"),
        # an evaluation library's logging and hashing helpers: a results tracker's plumbing
        Valid(
            "from lm_eval.utils import eval_logger, hash_string\n"
            "eval_logger.info('saving results')\nkey = hash_string(cfg)\n"
        ),
        Valid("import benchmark_data\nbench_filter = benchmark_data.filter_out()\n"),
        Valid(
            "from skythought.evals.util.math_parsing_util import strip_answer_string\n"
            "gt = strip_answer_string(problem['answer'])\n"
        ),
    )
    INVALID = (
        Invalid("import evaluate\nmetric = evaluate.load('rouge')\n", "scoring"),
        # a model class the evaluation harness runs, an evaluator of a project's evaluation package
        Invalid(
            "from lm_eval.models.huggingface import HFLM\nclass EvalHarnessAdaptor(HFLM):\n    pass\n",
            "scoring",
        ),
        Invalid(
            "from openenv.core.evals.base import EvalHarness\nclass InspectHarness(EvalHarness):\n"
            "    def run(self, task):\n        return task\n",
            "scoring",
        ),
        # a measure from a project's module of metrics, applied to outputs
        Invalid(
            "from .dolma_refine.metrics import DocumentEditSimilarity\n"
            "sim = DocumentEditSimilarity(segmenter)\nscore = sim.compute(gold, pred)\n",
            "scoring",
        ),
        Invalid(
            "from src.metrics import compute_generation_metrics\nm = compute_generation_metrics(p, r)\n",
            "scoring",
        ),
        Invalid(
            "from lm_eval import simple_evaluate\nsimple_evaluate(model='hf', tasks=['gsm8k'])\n", "scoring"
        ),
        Invalid(
            "from myproj.utils.evaluation import run_benchmark_jobs\nrun_benchmark_jobs(args)\n", "scoring"
        ),
        Invalid("from eval_bleu import compute_metrics\nds.map(compute_metrics, num_proc=8)\n", "scoring"),
        Invalid("from rewardbench.utils import calculate_scores\ncalculate_scores(results)\n", "scoring"),
        Invalid("from llmbox.utilization import Evaluator\nEvaluator(args).evaluate()\n", "scoring"),
        Invalid("import easydel as ed\nelm.run_benchmarks(ed.BenchmarkConfig(tasks=['gsm8k']))\n", "scoring"),
        Invalid(
            "from terminal_bench.handlers.trial_handler import TrialHandler\nh = TrialHandler(t)\n",
            "scoring",
            variant=BENCHMARK_TASKS,
        ),
        Invalid(
            "from libero.libero import benchmark\ntasks = benchmark.get_benchmark_dict()\n",
            "scoring",
            variant=BENCHMARK_TASKS,
        ),
        Invalid(
            "from rouge_score import rouge_scorer\nscorer = rouge_scorer.RougeScorer(['rougeL'])\n"
            "for inst in generated:\n    scores = [scorer.score(inst, k)['rougeL'].fmeasure for k in kept]\n"
            "    if max(scores) > 0.7:\n        continue\n    kept.append(inst)\n",
            "scoring",
            variant="filter",
        ),
    )

    # The names an assignment binds and reads matter only once a metric is found, and only to follow
    # its result: nodes are kept, and read then (most files call no metric).
    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.assigned: list[cst.Assign] = []
        """Assignments being walked (innermost last)."""
        self.flows: list[tuple[Sequence[cst.CSTNode], cst.CSTNode]] = []
        """(targets, value) of every assignment and loop of the file."""
        self.filters: list[cst.BaseExpression] = []
        """Tests that only skip a sample (``if ...: continue``, a comprehension's ``if``)."""
        self.found: list[tuple[cst.CSTNode, cst.CSTNode | None, str, set[str]]] = []
        """Metric calls, and classes built on an evaluation library's: (node, statement, what is used,
        names its result is bound to)."""
        self.timed = False
        """The file measures speed or memory (a performance benchmark: its "benchmark" scores nothing)."""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # a class built on an evaluation library's or an evaluation module's (``class
        # EvalHarnessAdaptor(HFLM)``, ``class FollowJudge(benchmark.framework.JudgeBase)``): the
        # harness runs it and scores what it returns
        for base in node.bases:
            for name in sorted(self.names(base.value)):
                if self._is_metric(name):
                    statement = self.context.statements[-1] if self.context.statements else None
                    self.found.append((node, statement, name, set()))
                    return

    def visit_Assign(self, node: cst.Assign) -> None:
        self.assigned.append(node)
        self.flows.append(([t.target for t in node.targets], node.value))

    def leave_Assign(self, original_node: cst.Assign) -> None:
        self.assigned.pop()

    def visit_For(self, node: cst.For) -> None:
        self.flows.append(([node.target], node.iter))

    def visit_If(self, node: cst.If) -> None:
        body = node.body.body if type(node.body) is cst.IndentedBlock else ()
        statements = [s for line in body if type(line) is cst.SimpleStatementLine for s in line.body]
        if statements and len(statements) == len(body) and all(type(s) is cst.Continue for s in statements):
            self.filters.append(node.test)

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self.filters.append(node.test)

    def visit_Call(self, node: cst.Call) -> None:
        callee = node.func.attr.value if type(node.func) is cst.Attribute else getattr(node.func, "value", "")
        if not self.timed and isinstance(callee, str) and ("bench" in callee or callee in TIMER_NAMES):
            called = self.names(node.func)
            self.timed = bool(called & TIMERS) or any(
                "bench" in q and PERFORMANCE_WORDS & set(words(q.rsplit(".", 1)[-1])) for q in called
            )
        if type(node.func) is cst.Attribute:
            said = words(node.func.attr.value)
            if len(said) > 1 and said[0] in RUN_BENCHMARK_VERBS and BENCHMARK_WORDS & set(said[1:]):
                statement = self.context.statements[-1] if self.context.statements else None
                self.found.append((node, statement, node.func.attr.value, set()))
                return
        # The metric may be called here or handed to something that calls it (dataset.map(metric)).
        for target in (node.func, *(arg.value for arg in node.args)):
            # (type identity, not isinstance: a miss on a union of libcst's ABC-based classes is slow)
            kind = type(target)
            named = self.names(target) if kind is cst.Name or kind is cst.Attribute else frozenset()
            # (sorted: a name bound twice, by a conditional import, is reported the same way every run)
            for name in sorted(named) if len(named) > 1 else named:
                if self._is_metric(name):
                    statement = self.context.statements[-1] if self.context.statements else None
                    bound = _bound(t.target for t in self.assigned[-1].targets) if self.assigned else set()
                    self.found.append((node, statement, name, bound))
                    return

    def leave_Module(self, original_node: cst.Module) -> None:
        for node, statement, name, bound in self.found:
            if self.timed and name.partition(".")[0] not in EVALUATION_LIBRARIES and "bench" in name:
                continue  # (a kernel's speed and memory benchmarked: nothing is evaluated)
            if self._filters_samples(bound):
                message = f"uses {name} to drop generated samples (a filter, not an evaluation)"
                self.report(node, "scoring", message, statement=statement, variant=FILTER)
            else:
                variant = BENCHMARK_TASKS if _benchmark_package(name) else None
                self.report(node, "scoring", f"uses {name}", statement=statement, variant=variant)

    def _filters_samples(self, bound: set[str]) -> bool:
        """Say whether what a metric's result flows into decides which samples are skipped.

        Self-Instruct keeps a generated instruction unless its ROUGE-L against those kept exceeds a
        threshold (``if max(rouge_scores) > 0.7: continue``): the score curates data, it measures no model.
        """
        if not bound or not self.filters:
            return False
        flows = [(_bound(targets), _read(value)) for targets, value in self.flows]
        reached = set(bound)
        for _ in range(FLOW_STEPS):
            reached |= {n for names, read in flows if read & reached for n in names}
        return any(names & reached for test in self.filters for names in _thresholds(test))

    def _is_metric(self, name: str) -> bool:
        # only what the file imports: its own ``def evaluate`` and that function's locals are no library
        return self.context.resolver.is_imported(name) and _names_a_metric(name)


@cached_by_name
def _names_a_metric(name: str) -> bool:
    """Say whether an imported qualified name is a metric (asked for every name a call reads)."""
    if _prepares_data(name):
        return False
    if name.partition(".")[0] in EVALUATION_LIBRARIES:
        return not _library_plumbing(name)
    if name in METRIC_FUNCTIONS:
        return True
    if name.count(".") and EVALUATOR_WORDS & set(words(name.rsplit(".", 1)[-1])):
        return True  # ``from llmbox.utilization import Evaluator``: a class named for evaluating
    function = name.rsplit(".", 1)[-1]
    said = words(function)
    if (
        name.count(".")
        and function.islower()
        and said[:1]
        and said[0] in COMPUTING_VERBS
        and said[-1] in METRIC_NAMES
        and not set(said) & DATA_MEASURE_WORDS
    ):
        # ``from src.metrics import compute_generation_metrics``: a project's metric, computed on
        # outputs (``compute_metrics_text(tokenizer)`` builds the closure a trainer is handed)
        return True
    return _evaluation_module(name)
