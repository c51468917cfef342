"""Whether a file runs something when executed: a script, as opposed to a library module of definitions."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.inference import Inference
from arb_audit.analyzer.detectors.loaded_model_run import LoadedModelRun
from arb_audit.analyzer.names import last_name

PLUMBING_WORDS = (
    *("register", "set", "filter", "basic", "disable", "enable", "add", "install", "patch", "warn"),
    *("seed", "manual_seed", "load_dotenv", "download", "makedirs", "mkdir"),
)
"""Beginnings of a module-level call that configures the importing program (``logging.basicConfig``,
``warnings.filterwarnings``, ``registry.register(...)``): libraries make them too."""


ARGUMENT_PARSES = frozenset({"parse_args", "parse_known_args", "parse_args_into_dataclasses"})
"""Methods reading the command line (argparse's, Hugging Face's ``HfArgumentParser``)."""


class EntryPoint(RouteDetector):
    """A file that runs when executed — ``if __name__ == "__main__":``, or a loop or call at module level.

    Its absence is what matters: a module of definitions only is a library that other code calls. A
    reward or verifier defined there is a component of the RL training that imports it, even when the
    reward asks a model (an LLM judge as the reward); the same definitions in a script that runs them
    over a dataset evaluate; a script that plays episodes runs them (an evaluation or data generation),
    it is no component of a training; a module that only runs a model forward is a helper, a script
    doing so evaluates. Read only in files that define rewards or scores, that run a model without
    gradients or load one with ``from_pretrained``, or that have a ``__main__`` guard or a ``main``
    function.
    """

    TRIGGERS = (
        *("reward", "Reward", "score", "__main__", "def main(", "parse_"),
        *Inference.TRIGGERS,
        *LoadedModelRun.TRIGGERS,
    )

    VALID = (
        Valid("import logging\nlogger = logging.getLogger(__name__)\ndef reward(x):\n    return 1.0\n"),
        Valid("import warnings\nwarnings.filterwarnings('ignore')\ndef score(x):\n    return 0\n"),
        Valid("REWARDS = {}\nregister_reward('math', math_reward)\n"),
        Valid("def get_args():\n    return parser.parse_args()\n"),
        Valid(
            "import sys, torch\nsys.path.append('..')\ntorch.manual_seed(0)\nload_dotenv()\n"
            "@torch.no_grad()\ndef sample(m, x):\n    return m(x)\n"
        ),
    )
    INVALID = (
        Invalid(
            "@torch.no_grad()\ndef evaluate(m):\n    return m(x)\nresults.append(evaluate(model))\n",
            "entry_point",
        ),
        Invalid("def reward(x):\n    return 1.0\nif __name__ == '__main__':\n    main()\n", "entry_point"),
        Invalid("scores = [score(x) for x in data]\nprint(sum(scores))\n", "entry_point"),
        Invalid("for row in rows:\n    row['reward'] = reward(row)\n", "entry_point"),
        Invalid("parser = ArgumentParser()\nargs = parser.parse_args()\n", "entry_point"),
        Invalid("(model_args,) = HfArgumentParser(Args).parse_args_into_dataclasses()\n", "entry_point"),
        Invalid(
            "def main(prompt: str, max_new_tokens: int = 50):\n    print(generate(prompt))\n", "entry_point"
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        for statement in node.body:
            if _runs(statement):
                self.report(statement, "entry_point", "runs when executed: a script", statement=statement)
                return


def _runs(statement: cst.BaseStatement) -> bool:
    """Say whether a module-level statement does work when the file is run (not only defines).

    A module-level ``def main`` counts: a command-line tool calls it (``CLI(main)``, a console script).
    """
    if type(statement) is cst.FunctionDef:
        return statement.name.value == "main"
    if type(statement) is cst.If:
        return _is_main_guard(statement.test)
    if isinstance(statement, cst.For | cst.While | cst.With):
        return True
    if type(statement) is cst.SimpleStatementLine:
        for small in statement.body:
            if (
                isinstance(small, cst.Assign | cst.AnnAssign)
                and type(small.value) is cst.Call
                and last_name(small.value.func) in ARGUMENT_PARSES
            ):
                return True  # args = parser.parse_args(): a module reading its command line is run
            if type(small) is cst.Expr and isinstance(small.value, cst.Call | cst.Await):
                call = small.value.expression if type(small.value) is cst.Await else small.value
                if type(call) is cst.Call and not _plumbing(call):
                    return True
    return False


def _is_main_guard(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if type(test) is not cst.Comparison:
        return False
    sides = [test.left, *(c.comparator for c in test.comparisons)]
    names = {s.value for s in sides if type(s) is cst.Name}
    strings = {s.evaluated_value for s in sides if type(s) is cst.SimpleString}
    return "__name__" in names and "__main__" in strings


def _plumbing(call: cst.Call) -> bool:
    name = last_name(call.func).lower()
    if name in ("append", "insert"):
        # ``sys.path.append("..")`` is plumbing; ``results.append(evaluate(model))`` does the work
        return not any(type(a.value) is cst.Call for a in call.args)
    return name.startswith(tuple(PLUMBING_WORDS))
