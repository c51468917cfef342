"""Redaction of API keys and tokens: applied to every transcript line before it is parsed, stored or shown.

The one definition is :mod:`arb_audit.redaction`, which the whole audit uses where run strings enter it;
the transcript readers take it from here.
"""

from __future__ import annotations

from arb_audit.redaction import MARK, redact, redact_all

__all__ = ["MARK", "redact", "redact_all"]
