"""An agent for the disk-full test: submits, fills its disk until writes fail, submits, frees it, submits."""

from __future__ import annotations

import errno
import json
from pathlib import Path

from tests.runner.scripted_agent import checkpoint, submit

Path("code").mkdir(exist_ok=True)
Path("code/train.py").write_text("lr = 1\n")
checkpoint(Path("output/v1"), 2)
answers = [submit("output/v1")]
filler, chunk = Path("filler.bin"), b"\0" * 65536
try:
    with filler.open("wb") as handle:
        while True:
            handle.write(chunk)
            handle.flush()
except OSError as exc:
    assert exc.errno == errno.ENOSPC, exc
# Nothing fits now. The path is long (40 KB of "/.") so that its ledger row cannot fit in the slack
# of pages the store's files already hold.
answers.append(submit("output/v1" + "/." * 20_000))
filler.unlink()
Path("code/train.py").write_text("lr = 0.5\n")
answers.append(submit("output/v1"))
print("ANSWERS", json.dumps(answers), flush=True)
