"""arb-audit: evidence-backed audits of agentic post-training benchmark runs.

As a library::

    import arb_audit
    report = arb_audit.audit("path/to/run")      # an AuditReport (arb_audit.schema)
    report.route.chain_text, report.failure.mode, report.quadrant.cell
    report.to_json_text()                         # what `arb-audit RUN --json` prints

The spine of the project: the command line (``cli``), the audit pipeline (``pipeline``), the run store
(``store``), the typed records every room exchanges (``model``, ``schema``) and the Evidence pointer
(``evidence``). Names are loaded on first use (PEP 562), so ``import arb_audit`` and ``arb-audit --help``
import no room and nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from arb_audit.api import NoRunFound, audit, audit_results_tree, classify, load_study
    from arb_audit.schema import SCHEMA_VERSION, AuditReport, AuditTree

_LAZY = {
    "audit": "arb_audit.api",
    "audit_results_tree": "arb_audit.api",
    "classify": "arb_audit.api",
    "load_study": "arb_audit.api",
    "NoRunFound": "arb_audit.api",
    "AuditReport": "arb_audit.schema",
    "AuditTree": "arb_audit.schema",
    "SCHEMA_VERSION": "arb_audit.schema",
}

__all__ = [
    "SCHEMA_VERSION",
    "AuditReport",
    "AuditTree",
    "NoRunFound",
    "__version__",
    "audit",
    "audit_results_tree",
    "classify",
    "load_study",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'arb_audit' has no attribute {name!r}")
