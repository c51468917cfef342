"""A routine named for evaluating, called: the weakest sign that a script evaluates."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name

EVALUATION_CALL = "evaluation_call"
"""Variant of a ``scoring`` finding for a call of a routine named for evaluating. It decides only a
script that shows nothing else (no model run, no training, no reward, nothing generated): its name is
all there is to say what the script is for."""
EVALUATING_WORDS = frozenset({"evaluate", "evaluation", "eval"})
"""First words of a routine that evaluates (``evaluate_vllm``, ``eval_model``, ``EvaluationPipeline``)."""
NOT_EVALUATING_WORDS = frozenset(
    {
        *("mode", "logger", "log", "config", "configs", "args", "arguments", "dataset", "datasets", "data"),
        *("loader", "dataloader", "split", "splits", "set", "steps", "step", "interval", "every", "freq"),
        *("frequency", "strategy", "batch", "batches", "size", "prompt", "prompts", "template", "path"),
        *("dir", "file", "only", "tokenizer", "tokenizers"),
    }
)
"""Words of a name that begins with "eval" but names a setting, a prompt or a part of a training loop
(``eval_mode(model)``, ``eval_dataloader(...)``, ``evaluation_strategy``, ``EVAL_PROMPT()``), or what
it evaluates is no model (``eval_tokenizer()``): not a routine that evaluates a model."""
IDENTIFIER_WORDS = frozenset({"key", "keys", "index", "indices", "name", "names"})
"""Last words of a name beginning with "eval" that returns what identifies evaluation items
(``eval_instance_keys(path)``: the keys of held-out items), not an evaluation; not "ids", which
also stands for in-distribution (``evaluate_id_and_ood``)."""
NOT_EVALUATED_WORDS = frozenset(
    {
        *("constraint", "constraints", "expr", "expression", "expressions", "condition", "conditions"),
        *("rule", "rules", "formula", "predicate", "equation", "node", "ast", "polynomial", "sympy"),
        *("atom", "atoms", "term", "terms", "operand", "operands", "symbol", "symbols", "literal"),
    }
)
"""Words of an object whose ``evaluate()`` computes a value, not a model's quality
(``constraint.evaluate(arrangement)``, ``expr.evaluate(env)``), or of what a routine named so
computes (``eval_atom(name, x)``)."""


class EvaluationCall(RouteDetector):
    """A call of a routine named for evaluating: ``evaluator.evaluate()``, ``eval_model(args)``.

    ``evaluate(...)``, ``evaluate_vllm(llm, reward_fn, data)``, ``EvaluationPipeline(config)`` too.
    Evaluation scripts often hand all their work to such a routine — defined in a helper module the
    file imports, or in the file itself, in a form nothing else here recognises (answers compared
    with ``==`` and counted). Its name is weak evidence: it decides a script only where the file
    shows nothing else; a file that trains, generates data or defines a reward is decided by that.
    Python's ``eval``, MLX's ``mx.eval`` and a model's ``eval()`` mode switch evaluate no model.
    """

    TRIGGERS = ("eval", "Eval")

    VALID = (
        Valid("model.eval()\n"),
        Valid("x = eval(text)\n"),
        Valid("import mlx.core as mx\nmx.eval(model.parameters())\n"),
        Valid("value = ast.literal_eval(text)\n"),
        Valid("value = eval_atom(node.name, query)\nresult = evaluate_expression(tree, env)\n"),
        Valid("with eval_mode(model):\n    pass\n"),
        Valid("loader = eval_dataloader(ds, batch_size=8)\n"),
        Valid("args = TrainingArguments(evaluation_strategy='steps')\n"),
        Valid("def evaluate(model, rows):\n    return [model(r) for r in rows]\n"),
        Valid("ok = all(constraint.evaluate(arrangement) for constraint in constraints)\n"),
        Valid("prompt = EVAL_PROMPT_TEMPLATE(code=code)\n"),
        Valid("value_prompt = EVAL_prompt_sa()\n"),
        Valid("eval_tokenizer(save_dir)\n"),
        Valid("excluded = eval_instance_keys(args.exclude_eval)\n"),
    )
    INVALID = (
        Invalid(
            "from utils import evaluate_vllm\nrewards = evaluate_vllm(llm, reward_fn, data, params)\n",
            "scoring",
            variant=EVALUATION_CALL,
        ),
        Invalid("evaluator = build(cfg)\nevaluator.evaluate()\n", "scoring", variant=EVALUATION_CALL),
        Invalid("eval_json(cfg)\n", "scoring", variant=EVALUATION_CALL),
        Invalid("result = model.evaluate(dataset)\n", "scoring", variant=EVALUATION_CALL),
        Invalid("EvaluationPipeline(config).run()\n", "scoring", variant=EVALUATION_CALL),
        Invalid("scores = evaluate_id_and_ood(ckpts, task='mmlu')\n", "scoring", variant=EVALUATION_CALL),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        if self.found:
            return  # (one call says it; the first is reported)
        func = node.func
        name = (
            func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        )
        said = words(name)
        if not said or said[0] not in EVALUATING_WORDS or set(said) & NOT_EVALUATING_WORDS:
            return
        if said[-1] in IDENTIFIER_WORDS:
            return  # (``eval_instance_keys(path)``: the keys of evaluation items, nothing evaluated)
        if said == ("eval",) or name.isupper():
            return  # (Python's eval, MLX's mx.eval, torch's model.eval(), a constant's template: no model)
        if type(func) is cst.Attribute and NOT_EVALUATED_WORDS & set(words(last_name(func.value))):
            return
        if NOT_EVALUATED_WORDS & set(said[1:]):
            return  # (``eval_atom(name, x)``, ``evaluate_expression(e)``: a value computed, no model)
        self.found = True
        self.report(
            node, "scoring", f"calls {name}(), a routine named for evaluating", variant=EVALUATION_CALL
        )
