"""One colour per route label, shared by the figures and the reviewer's desk.

A route looks the same in a paper and on a terminal. The colours are Okabe–Ito's, distinguishable
with every common colour-vision deficiency.
"""

from __future__ import annotations

ROUTE_COLOURS: dict[str, str] = {
    "SFT": "#56B4E9",
    "DPO": "#CC79A7",
    "GRPO": "#D55E00",
    "PPO": "#E69F00",
    "ONLINE_RL": "#009E73",
    "COMPOSITE": "#0072B2",
    "MERGE": "#F0E442",
    "NO_TRAINING": "#999999",
    "UNKNOWN": "#000000",
}
"""The colour of each route label (every label of ``arb_audit.taxonomy.routes.ROUTE_LABELS``)."""
UNLABELLED = "#999999"
"""A submission whose artifact has no route (an error, or nothing known of how it was made)."""
