"""Every detector's own VALID and INVALID examples, turned into tests (as Fixit does for its rules)."""

from __future__ import annotations

import pytest

from arb_audit.analyzer.classify import find
from arb_audit.analyzer.detector import Invalid, RouteDetector, Valid, discover

DETECTORS = discover()
VALID = [(d, i, case) for d in DETECTORS for i, case in enumerate(d.VALID)]
INVALID = [(d, i, case) for d in DETECTORS for i, case in enumerate(d.INVALID)]


def test_every_detector_documents_itself_with_examples() -> None:
    assert len(DETECTORS) >= 10
    for detector in DETECTORS:
        assert (detector.__doc__ or "").strip(), detector.__name__
        assert detector.VALID and detector.INVALID, detector.__name__


@pytest.mark.parametrize(
    ("detector", "index", "case"), VALID, ids=[f"{d.__name__}-VALID_{i}" for d, i, _ in VALID]
)
def test_valid(detector: type[RouteDetector], index: int, case: Valid) -> None:
    findings, error = find(case.code, [detector])
    assert error is None
    assert findings == [], f"{detector.__name__} VALID_{index} reported {findings}"


@pytest.mark.parametrize(
    ("detector", "index", "case"), INVALID, ids=[f"{d.__name__}-INVALID_{i}" for d, i, _ in INVALID]
)
def test_invalid(detector: type[RouteDetector], index: int, case: Invalid) -> None:
    findings, error = find(case.code, [detector])
    assert error is None
    matching = [
        f
        for f in findings
        if f.signal == case.signal
        and (case.kind is None or f.kind == case.kind)
        and (case.variant is None or f.variant == case.variant)
        and set(case.routes) <= set(f.routes)
    ]
    assert matching, f"{detector.__name__} INVALID_{index}: expected {case}, got {findings}"
    assert all(f.line >= 1 and f.excerpt for f in matching), matching
