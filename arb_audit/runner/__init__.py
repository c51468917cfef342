"""Live recording of runs: workspace snapshots, grading proxy, artifact hashing (the runner issue)."""
