"""arb-audit: evidence-backed audits of agentic post-training benchmark runs.

The spine of the project: the command line (``cli``), the run store (``store``), the typed records every
room exchanges (``model``) and the Evidence pointer (``evidence``). It imports no room at import time.
"""

__version__ = "0.1.0"
