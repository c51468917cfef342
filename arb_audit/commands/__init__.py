"""One module per command of the arb-audit CLI."""
