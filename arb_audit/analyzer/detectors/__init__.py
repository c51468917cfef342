"""Route detectors: one class per module, found by walking this package (see :mod:`..detector`)."""
