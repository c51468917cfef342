"""The algorithm variant a trainer's config selects: ``loss_type``, sequence-level ratios, clip-higher."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.trainers import TRAINING_LIBRARIES

CONFIGS = {"GRPOConfig": "grpo", "DPOConfig": "dpo", "RLOOConfig": "ppo", "AsyncGRPOConfig": "grpo"}
"""Config classes whose arguments pick a variant, by the stage kind they configure."""
LOSS_TYPES = {
    "grpo": {"dr_grpo": "dr_grpo", "dapo": "dapo", "bnpo": "bnpo", "grpo": "grpo", "cispo": "cispo"},
    "dpo": {
        "ipo": "ipo",
        "hinge": "hinge",
        "robust": "robust",
        "sppo_hard": "sppo",
        "nca_pair": "nca",
        "apo_zero": "apo",
    },
}
"""``loss_type`` values that name a variant (others, like DPO's default ``sigmoid``, do not)."""


def _literal(arg: cst.Arg | None) -> str | None:
    if arg is not None and type(arg.value) is cst.SimpleString:
        value = arg.value.evaluated_value
        return value if isinstance(value, str) else None
    return None


class TrainerConfig(RouteDetector):
    """A trainer config's literal arguments name the variant of its stage.

    TRL's ``GRPOConfig(loss_type="dr_grpo")`` is Dr. GRPO, ``loss_type="dapo"`` or an ``epsilon_high``
    (clip-higher) is DAPO, ``importance_sampling_level="sequence"`` is GSPO; ``DPOConfig(loss_type=
    "ipo")`` is IPO. Only literals count: a value read from the command line is the launcher's choice.
    """

    TRIGGERS = ("Config",)

    VALID = (
        Valid("from trl import GRPOConfig\nargs = GRPOConfig(output_dir='o', loss_type=cli.loss)\n"),
        Valid("from trl import DPOConfig\nDPOConfig(loss_type='sigmoid')\n"),
        Valid("class GRPOConfig:\n    pass\nGRPOConfig(loss_type='dapo')\n"),
    )
    INVALID = (
        Invalid(
            "from trl import GRPOConfig\nGRPOConfig(loss_type='dr_grpo')\n", "variant", "grpo", "dr_grpo"
        ),
        Invalid("from trl import GRPOConfig\nGRPOConfig(epsilon_high=0.28)\n", "variant", "grpo", "dapo"),
        Invalid(
            "import trl\ntrl.GRPOConfig(importance_sampling_level='sequence')\n", "variant", "grpo", "gspo"
        ),
        Invalid("from trl import DPOConfig\nDPOConfig(beta=0.1, loss_type='ipo')\n", "variant", "dpo", "ipo"),
    )

    def visit_Call(self, node: cst.Call) -> None:
        # sorted: a name bound to two configs (a conditional import) decides the same way every run
        for name in sorted(self.names(node.func)):
            root, _, rest = name.partition(".")
            kind = CONFIGS.get(name.rsplit(".", 1)[-1])
            if kind is None or root not in TRAINING_LIBRARIES or not rest:
                continue
            variant = LOSS_TYPES.get(kind, {}).get(_literal(keyword(node, "loss_type")) or "")
            if kind == "grpo" and _literal(keyword(node, "importance_sampling_level")) == "sequence":
                variant = "gspo"
            elif kind == "grpo" and variant is None and keyword(node, "epsilon_high") is not None:
                variant = "dapo"
            if variant is not None:
                self.report(node, "variant", f"{name} selects {variant}", kind=kind, variant=variant)
            return
