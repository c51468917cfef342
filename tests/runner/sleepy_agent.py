"""An agent for the runner's crash test: submits once, reports the answer, then waits to be killed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.runner.scripted_agent import checkpoint, submit

Path("agent.pid").write_text(str(os.getpid()))
checkpoint(Path("output/v1"), 3)
print("ANSWER", submit("output/v1")["submission_id"], flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 60)
