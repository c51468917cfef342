"""An agent for the runner's robustness test: floods stdout, submits, then deletes its own workspace."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.runner.scripted_agent import checkpoint, submit

Path("code").mkdir(exist_ok=True)
Path("code/train.py").write_text("lr = 1\n")
checkpoint(Path("output/v1"), 2)
for _ in range(20_000):
    sys.stdout.write("x" * 200 + "\n")  # 4 MB of chatter
print("ANSWER", submit("output/v1")["score"], flush=True)
for child in Path(".").iterdir():
    if child.is_dir():
        shutil.rmtree(child)
    else:
        child.unlink()
print("deleted my workspace", flush=True)
