"""A benchmark metric computed by hand: accuracy, pass@k, win rate over a model's outputs."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.reward_function import TRUTH_WORDS
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

METRIC = "metric"
"""Variant of a ``scoring`` finding for a metric the file computes itself (no evaluation library)."""
PERPLEXITY = "perplexity"
"""Variant of a ``scoring`` finding for a model's perplexity on text: a metric of the model, except where
the file writes data, which the perplexity then ranks or filters (data selection, classify.combine)."""
METRICS = frozenset({METRIC, PERPLEXITY})
"""The variants of a metric the file computes itself."""
SCORER = "scorer"
"""Variant of a ``scoring`` finding for a function scoring predictions against references: it makes a
file an evaluation only where the file shows nothing else (no model run, data written, loss, reward or
step); it is no metric reported (a reward's or a data filter's helpers are written so too)."""
METRIC_WORDS = frozenset(
    {
        *("acc", "accuracy", "accuracies", "pass", "passes", "win", "wins", "winrate", "elo", "maj"),
        *("majority", "exact", "em", "f1", "metric", "metrics", "iou", "miou", "auc", "mrr", "ndcg"),
    }
)
"""Words of a variable that holds a benchmark metric of a model's outputs."""
AT_K = re.compile(r"\b(?:pass|maj|rm|best|mean|avg|cons)@\{?\w+", re.IGNORECASE)
"""A metric over k samples as people print it (``pass@5``, ``maj@{k}``)."""
AVERAGES = frozenset({"mean", "average", "nanmean", "fmean"})
RATIO_WORDS = frozenset({"ratio", "percent", "percentage", "fraction", "div", "divide"})
"""Words of a helper that divides one count by another (``ratio(hits, total)``, ``safe_div(a, b)``)."""
METRIC_CLASSES = frozenset(
    {"datasets.Metric", "evaluate.Metric", "evaluate.EvaluationModule", "datasets.metric.Metric"}
)
"""Base classes of a metric implemented for Hugging Face's ``datasets``/``evaluate`` loaders."""
CORRECT_WORDS = frozenset({"correct", "corrects", "right", "hit", "hits", "solved", "passed"})
"""Words of a count of answers that were right (``num_correct``, ``solved``)."""
METRIC_VERBS = frozenset({"compute", "calc", "calculate", "eval", "evaluate", "get"})
NAMED_METRICS = frozenset({"rouge", "bleu", "f1", "exact", "em", "accuracy", "meteor", "chrf", "bertscore"})
"""A call named verb + metric (``compute_rouge``, ``calc_f1``, ``compute_exact_match``) computes it."""
LOSS_WORDS = frozenset({"loss", "losses", "nll", "xent", "ce"})
SCALAR_READS = frozenset({"item", "mean", "detach", "cpu", "float"})
"""Methods reading a tensor's value as it is (``loss.item()``): its exponential is still the loss's."""
"""Words of a value holding a model's token loss, whose exponential is its perplexity."""


PREDICTION_PARAMS = frozenset({"predictions", "preds", "prediction", "pred"})
REFERENCE_PARAMS = frozenset({"references", "refs", "reference", "ref", "targets", "labels", "answers"})


PREDICTION_WORDS = PREDICTION_PARAMS | {"predicted"}
"""Words of a parameter holding a model's predicted answers."""
REFERENCE_WORDS = TRUTH_WORDS | {"ref", "refs", "golden"}
"""Words of a parameter holding the right answers (a reward's references, ``ground_truth`` too)."""
NOT_SCORER_WORDS = frozenset({"loss", "losses", "reward", "rewards", "grad", "backward", "train", "training"})
"""Words of a function given predictions and references that trains on them rather than scoring them."""
DATA_VERBS = frozenset(
    {
        *("combine", "merge", "load", "save", "write", "read", "format", "convert", "preprocess", "prepare"),
        *("build", "make", "create", "collate", "tokenize", "encode", "print", "log", "plot", "show"),
    }
)
"""First words of a function given predictions and references that shapes, stores or shows them."""


def _scores_predictions(node: cst.ClassDef) -> bool:
    """Say whether a class has a method taking predictions and references (a metric's contract)."""
    body = node.body.body if type(node.body) is cst.IndentedBlock else ()
    for method_def in body:
        if type(method_def) is cst.FunctionDef:
            params = {p.name.value for p in method_def.params.params}
            if params & PREDICTION_PARAMS and params & REFERENCE_PARAMS:
                return True
    return False


class MetricReport(RouteDetector):
    """A metric of model outputs computed by hand: a ratio or mean bound to a metric's name, or printed.

    Evaluation scripts often score saved predictions without a library — ``acc = right / total``,
    ``results["accuracy"] = np.mean(correct)``, ``print(f"pass@5: {passes / total}")``. A file that
    trains is still decided by its training; this only says what a file without training does.
    """

    TRIGGERS = (
        *("accuracy", "acc =", "acc=", "_acc", "acc_", "pass@", "maj@", "rm@", "best@", "mean@", "avg@"),
        *("passes", "pass_", "win_", "winrate", "wins", "elo", "maj_", "majority", "exact_", "f1", "metric"),
        *("rouge", "bleu", "Metric", "correct", "solved", "ratio", "percent", "fraction"),
        "pred",  # (a scorer's parameters: ``def math_equal(prediction, reference)``)
        "exp(",  # (a perplexity: ``torch.exp(loss)``)
        *("IoU", "iou", "AUC", "auc", "MRR", "mrr", "NDCG", "ndcg"),
    )

    VALID = (
        # given predictions and references to train on, to store or to shape them
        Valid("def compute_loss(pred, answer):\n    return (pred - answer) ** 2\n"),
        Valid("def combine_judge_samples(preds, gt):\n    return list(zip(preds, gt))\n"),
        Valid("acc = []\n"),
        Valid("accelerator = Accelerator()\n"),
        Valid("password = os.environ['PW'] / 'x'\n"),
        Valid("usd = (in_hit / 1e6) * price['input_hit'] + (out / 1_000_000) * price['output']\n"),
        Valid("print(f'step {i}: loss {loss / n}')\n"),
        Valid("wins = count_wins(table)\n"),
        Valid("match = re.match(pattern, text)\n"),
        Valid("print('loss', sum(losses) / len(losses))\n"),
        Valid("print(f'epoch {e} train acc: {hits / n}')\n"),
        Valid("print(f'mIoU of {name}: {value}')\n"),
        Valid("correction = base / scale\n"),
        Valid("midpoint = (left + right) / 2.0\n"),
        Valid("metrics['train/percent_correct'] = sum(correct) / len(correct)\n"),
        Valid("logs = {'train/accuracy': acc_sum / n}\nstats = {'accuracy': None, 'loss': total / n}\n"),
        Valid("config = get_accelerator_config()\nx = compute_loss(batch)\n"),
        # an exponential of anything else: a ratio of probabilities, a schedule
        Valid("ratio = torch.exp(logp - old_logp)\nlr = math.exp(-step / tau)\n"),
        Valid(
            "class RunningMetric(BaseMetric):\n    def update(self, value):\n        self.total += value\n"
        ),
    )
    INVALID = (
        Invalid("task_acc = right_count / count * 100\nprint(task_acc)\n", "scoring", variant=METRIC),
        Invalid("acc = num_correct / 500\n", "scoring", variant=METRIC),
        Invalid("results['accuracy'] = np.mean(correct)\n", "scoring", variant=METRIC),
        Invalid(
            "stats = {'total': len(scores), 'accuracy': sum(scores) / len(scores) if scores else 0}\n",
            "scoring",
            variant=METRIC,
        ),
        Invalid("print(f'pass@5: {passes / total}')\n", "scoring", variant=METRIC),
        Invalid("miou = sum(ious) / len(ious)\n", "scoring", variant=METRIC),
        Invalid("print(f'mIoU: {sum(merged) / len(merged)}')\n", "scoring", variant=METRIC),
        Invalid("win_rate = wins / len(pairs)\n", "scoring", variant=METRIC),
        Invalid("def evaluate(rows):\n    return num_correct * 1.0 / total\n", "scoring", variant=METRIC),
        Invalid("exact_match = df['match'].mean() * 100\n", "scoring", variant=METRIC),
        Invalid("report = {'execution_accuracy': ratio(executed_right, total)}\n", "scoring", variant=METRIC),
        Invalid("print('Zero-shot Acc', np.mean(acc_res))\n", "scoring", variant=METRIC),
        Invalid("metric_dict[f'test_score/{source}'] = np.mean(rewards)\n", "scoring", variant=METRIC),
        Invalid("scores = compute_rouge(predictions, references)\n", "scoring", variant=METRIC),
        # a model's perplexity: the exponential of its token loss
        Invalid(
            "with torch.no_grad():\n    outputs = model(ids, labels=ids)\nppl = torch.exp(outputs.loss)\n",
            "scoring",
            variant=PERPLEXITY,
        ),
        Invalid("print(math.exp(mean_nll))\n", "scoring", variant=PERPLEXITY),
        Invalid("ppl = math.exp(out.loss.item())\n", "scoring", variant=PERPLEXITY),
        Invalid("perplexity = loss.exp()\n", "scoring", variant=PERPLEXITY),
        # a scorer of predictions against the right answers
        Invalid(
            "def math_equal(prediction, reference):\n    return prediction == reference\n",
            "scoring",
            variant=SCORER,
        ),
        Invalid(
            "from .metric import Metric\nclass GPTEval(Metric):\n"
            "    def __call__(self, predictions, references):\n        return {'score': 1.0}\n",
            "scoring",
            variant=METRIC,
        ),
        Invalid(
            "import datasets\nclass LongMetrics(datasets.Metric):\n    def _compute(self, p, r):\n"
            "        return {}\n",
            "scoring",
            variant=METRIC,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.rated = False
        self.perplexity = False
        """A perplexity is reported already (once is enough)."""

    def visit_Assign(self, node: cst.Assign) -> None:
        names = [_name(t.target) for t in node.targets]
        if any(METRIC_WORDS & set(words(n)) for n in names if n) and _aggregate(node.value):
            self.report(node, "scoring", f"computes {names[0]} from the outputs", variant=METRIC)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        # {"accuracy": sum(scores) / len(scores)}: a summary's entry is a metric bound to its key
        key = literal_text(node.key) if type(node.key) is cst.SimpleString else None
        if (
            key is not None
            and METRIC_WORDS & set(words(key))
            and not key.lower().startswith("train")
            and _aggregate(node.value)
        ):
            self.report(node, "scoring", f"computes {key} from the outputs", variant=METRIC)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # class LEvalMetrics(datasets.Metric): a metric implemented for Hugging Face's loaders; class
        # GPTEval(Metric) of an evaluation library, scoring predictions against references
        if any(self.names(base.value) & METRIC_CLASSES for base in node.bases) or (
            any(last_name(base.value).endswith("Metric") for base in node.bases) and _scores_predictions(node)
        ):
            self.report(node, "scoring", f"{node.name.value} implements a benchmark metric", variant=METRIC)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # def math_equal(prediction, reference), def f1_score(prediction, ground_truth): a scorer of
        # predictions against the right answers (a loss or a reward given them serves training)
        found = words(node.name.value)
        if set(found) & NOT_SCORER_WORDS or (found[:1] and found[0] in DATA_VERBS):
            return
        params = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
        given = [set(words(p.name.value)) for p in params]
        if any(w & PREDICTION_WORDS for w in given) and any(w & REFERENCE_WORDS for w in given):
            message = f"{node.name.value} scores predictions against references"
            self.report(node, "scoring", message, variant=SCORER)

    def visit_Call(self, node: cst.Call) -> None:
        name = node.func.attr.value if type(node.func) is cst.Attribute else getattr(node.func, "value", "")
        if name == "exp" and not self.perplexity:
            # torch.exp(outputs.loss), math.exp(mean_nll), loss.exp(): a model's perplexity on text
            taken = node.args[0].value if node.args else getattr(node.func, "value", None)
            while (
                type(taken) is cst.Call
                and type(taken.func) is cst.Attribute
                and taken.func.attr.value in SCALAR_READS
            ):
                taken = taken.func.value  # (``math.exp(out.loss.item())``)
            if isinstance(taken, cst.Name | cst.Attribute) and set(words(last_name(taken))) & LOSS_WORDS:
                self.perplexity = True
                self.report(
                    node, "scoring", "computes a perplexity from the model's loss", variant=PERPLEXITY
                )
                return
        said = words(name) if isinstance(name, str) else []
        if said and said[0] in METRIC_VERBS and set(said[1:]) & NAMED_METRICS:
            # compute_rouge(preds, refs), calc_f1(...): a named metric over outputs
            self.report(node, "scoring", f"computes a named metric ({name})", variant=METRIC)
            return
        # print("Zero-shot Acc", np.mean(acc_res)): an average of a metric's values, printed
        if not (type(node.func) is cst.Name and node.func.value == "print"):
            return
        for arg in node.args:
            if _aggregate(arg.value) and any(
                METRIC_WORDS & set(words(n.value))
                for n in (arg.value, *descendants(arg.value))
                if type(n) is cst.Name
            ):
                self.report(node, "scoring", "prints an average of a metric's values", variant=METRIC)
                return

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        # num_correct * 1.0 / total, solved / len(problems): the rate of right answers, however bound
        if self.rated or not isinstance(node.operator, cst.Divide) or _unit_scale(node.right):
            return
        counted = [n.value for n in (node.left, *descendants(node.left)) if type(n) is cst.Name]
        statement = self.context.statements[-1] if self.context.statements else None
        said = {w for n in counted for w in words(n)}
        # (left + right) / 2 halves an interval: "right" is a side there, not a right answer
        if said & CORRECT_WORDS and "left" not in said and not _training_log(statement):
            self.rated = True
            self.report(
                node, "scoring", "divides a count of right answers", statement=statement, variant=METRIC
            )

    def visit_FormattedString(self, node: cst.FormattedString) -> None:
        text = "".join(p.value for p in node.parts if type(p) is cst.FormattedStringText)
        found = AT_K.search(text)
        values = [p.expression for p in node.parts if type(p) is cst.FormattedStringExpression]
        if found is not None and any(_aggregate(v) for v in values):
            self.report(node, "scoring", f"reports {found.group(0)}", variant=METRIC)
            return
        # f"mIoU: {sum(ious) / len(ious)}": a rate labelled with a metric's name, printed or kept
        labelled = [w for w in _text_words(text) if w in METRIC_WORDS]
        if labelled and not _training_text(text) and any(_aggregate(v) for v in values):
            self.report(node, "scoring", f"reports {labelled[0]}", variant=METRIC)


UNIT_SCALE = 1_000_000
"""Literal divisors from this size up convert a unit (``tokens / 1e6`` for a price per million), not
count the samples of a rate (a benchmark of 10,000 items is divided by 10000)."""


def _unit_scale(divisor: cst.BaseExpression) -> bool:
    """Say whether a divisor is a unit's scale (``1e6``, ``1_000_000``), not a number of samples."""
    if type(divisor) is cst.Float or type(divisor) is cst.Integer:
        try:
            return float(divisor.value.replace("_", "")) >= UNIT_SCALE
        except ValueError:  # (hex, octal or binary literals: no scale anyone writes)
            return False
    return False


def _text_words(text: str) -> list[str]:
    """Lower-case words of free text (``"mIoU: "`` -> miou), not split at capitals as names are."""
    return re.findall(r"[a-z0-9]+", text.lower())


def _training_text(text: str) -> bool:
    """Say whether a report's text is of training (``f"train acc: {a / n}"``), not of an evaluation."""
    return bool({"train", "training", "epoch", "step", "loss"} & set(_text_words(text)))


def _training_log(statement: cst.CSTNode | None) -> bool:
    """Say whether a statement logs a training metric (``metrics["train/percent_correct"] = ...``)."""
    smalls = statement.body if type(statement) is cst.SimpleStatementLine else [statement]
    for small in smalls:
        if type(small) is cst.Assign:
            keys = [_name(t.target) for t in small.targets if type(t.target) is cst.Subscript]
            if any(k is not None and k.lower().startswith("train") for k in keys):
                return True
    return False


def _name(target: cst.BaseExpression) -> str | None:
    """Return the name an assignment binds: a variable, an attribute or a string subscript key."""
    if type(target) is cst.Name:
        return target.value
    if type(target) is cst.Attribute:
        return target.attr.value
    if type(target) is cst.Subscript and len(target.slice) == 1:
        index = target.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            key = index.value.evaluated_value
            return key if isinstance(key, str) else None
        # a computed key (metric_dict[f"test_score/{source}"]): the table's own name says what it holds
        return _name(target.value)
    return None


def _aggregate(value: cst.BaseExpression) -> bool:
    """Say whether an expression averages or divides (a rate over samples)."""
    for node in (value, *descendants(value)):
        if type(node) is cst.BinaryOperation and isinstance(node.operator, cst.Divide):
            return True
        if type(node) is cst.Call and (
            method(node) in AVERAGES
            or (type(node.func) is cst.Name and node.func.value in AVERAGES)
            or (len(node.args) == 2 and RATIO_WORDS & set(words(last_name(node.func))))
        ):
            return True
    return False
