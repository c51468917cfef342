# The one test command (README, .ci/run): lint, types, import rules, then the tests.
.PHONY: check
check:
	ruff format --check .
	ruff check .
	mypy
	lint-imports
	pytest
