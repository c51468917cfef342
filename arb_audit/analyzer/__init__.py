"""Route analysis: detectors, lineage, failures and the assembled audit."""
