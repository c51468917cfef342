"""``python -m arb_audit`` is ``arb-audit``."""

from arb_audit.cli import main

main()
