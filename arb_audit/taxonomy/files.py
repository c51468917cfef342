"""What one source file does: the file-level labels and roles of TAXONOMY.md.

``arb-audit classify`` and the development corpus speak this vocabulary. A file lists every stage it
implements (``labels``); its ``primary`` label is the last stage it runs; its ``role`` says what it is
besides training.
"""

from __future__ import annotations

from arb_audit.taxonomy.routes import KIND_LABELS, Definition

FILE_LABELS: tuple[Definition, ...] = (
    Definition("SFT", "supervised loss on fixed targets (knowledge-distillation training included)"),
    Definition("DPO", "the preference family: dpo, ipo, kto, orpo, cpo, simpo, online dpo, xpo, nash-md"),
    Definition("GRPO", "group-relative policy gradient, single-turn"),
    Definition("PPO", "other policy gradient or RL: ppo, rloo, reinforce++, remax"),
    Definition("ONLINE_RL", "policy gradient on multi-turn environment or tool rollouts"),
    Definition("REWARD_MODEL", "trains a scorer (outcome or process reward model)"),
    Definition("DISTILLATION", "generates training data with a model or an API; no weight update here"),
    Definition("MERGE", "combines model weights (merging, folding a LoRA adapter into its base)"),
    Definition("EVAL_ONLY", "generates and scores; updates no weights"),
    Definition("NONE_TRAINING", "none of the above (data processing, weight surgery, a stub)"),
    Definition("CONFIG_DEPENDENT", "a launcher: the route is picked by a flag, config key or dispatch table"),
    Definition("UNKNOWN", "takes a gradient step whose loss could not be classified: trains, route unknown"),
)
"""Every file-level label, in the order of TAXONOMY.md."""

FILE_ROLES: tuple[Definition, ...] = (
    Definition("training", "runs at least one training stage"),
    Definition("eval", "generates and scores, updates no weights"),
    Definition("data_generation", "generates data with a model, no weight update"),
    Definition("launcher", "the route is picked by a CLI flag, YAML, Hydra config or dispatch table"),
    Definition("component", "an environment, reward function or plugin used by another file"),
    Definition("none", "none of the above"),
)
"""Every role a file can have."""

STAGE_LABELS: dict[str, str] = {**KIND_LABELS, "reward_model": "REWARD_MODEL", "unknown": "UNKNOWN"}
"""The file label of each training stage kind (an interactive policy-gradient stage is ONLINE_RL): a
kind's route label (:data:`arb_audit.taxonomy.routes.KIND_LABELS`), and the two file labels that are no
route of their own."""
