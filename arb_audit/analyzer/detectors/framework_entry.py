"""A training framework's public entry point: the table of frameworks says what it runs."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid
from arb_audit.analyzer.frameworks import IMPORT_WORDS, Entry, entry_for


class FrameworkEntry(RouteDetector):
    """Calling, constructing or subclassing a name of :data:`arb_audit.analyzer.frameworks.FRAMEWORKS`.

    The table maps each framework's trainer classes, train functions and pipelines to the stage they
    run, or to the routes a config key selects (a launcher), or to evaluation. Names resolve to
    qualified names, so an import alias or a function-local import is followed; a name only imported,
    or mentioned in a string, is not evidence. The framework examples themselves are tested from the
    table (tests/analyzer/test_frameworks.py).
    """

    TRIGGERS = IMPORT_WORDS

    VALID = (
        Valid("from nemo_rl.algorithms.grpo import grpo_train\nprint('grpo_train')\n"),
        Valid("def sft_train(x):\n    return x\nsft_train(1)\n"),
    )
    INVALID = (
        Invalid("from nemo_rl.algorithms.sft import sft_train as run\nrun(cfg)\n", "stage", "sft"),
        Invalid(
            "def main():\n    from swift.pipelines import rlhf_main\n    rlhf_main()\n",
            "dispatch",
            routes=("DPO", "GRPO"),
        ),
        Invalid("from lm_eval import simple_evaluate\nsimple_evaluate(model=m)\n", "scoring"),
    )

    def _entry(self, node: cst.BaseExpression) -> tuple[str, Entry] | None:
        for name in sorted(self.names(node)):
            entry = entry_for(name)
            if entry is not None:
                return name, entry
        return None

    def _report(self, node: cst.CSTNode, name: str, entry: Entry, how: str) -> None:
        if entry.routes:
            self.report(
                node,
                "dispatch",
                f"{how} {name}: the route is picked by {entry.key}",
                routes=entry.routes,
                default=entry.default,
            )
        elif entry.kind is not None:
            on_policy = (
                True if entry.kind in ("grpo", "ppo") or entry.data_source == "self_generated" else None
            )
            self.report(
                node,
                "stage",
                f"{how} {name} (framework table)",
                kind=entry.kind,
                variant=entry.variant,
                on_policy=on_policy,
                data_source=entry.data_source,
            )
            if entry.interactive:
                self.report(node, "interactive", f"{name} trains on multi-turn environment episodes")
        elif entry.role == "eval":
            self.report(node, "scoring", f"{how} {name}, an evaluation entry point (framework table)")

    def visit_Call(self, node: cst.Call) -> None:
        found = self._entry(node.func)
        if found is not None:
            self._report(node, *found, "calls")

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for base in node.bases:
            found = self._entry(base.value)
            if found is not None:
                self._report(node, *found, "subclasses")
                return
