# The fast lane (README, `make check`): lint, types, import rules, then the tests not marked slow, in
# parallel. `make check-slow` runs the slow ones (re-recordings of the reference world, end-to-end desk
# and study runs); `make check-all` is both, as CI runs them.
PYTEST_WORKERS ?= auto

.PHONY: check check-slow check-all lint
lint:
	ruff format --check .
	ruff check .
	mypy
	lint-imports

check: lint
	pytest -n $(PYTEST_WORKERS)

check-slow:
	pytest -n $(PYTEST_WORKERS) -m slow

check-all: check check-slow
