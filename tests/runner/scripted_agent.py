"""A small agent for the runner's tests: edits code, writes safetensors checkpoints, submits over HTTP.

Run by ``arb-audit record`` in its workspace with GRADING_SERVER_URL set. It makes two revisions of
``code/train.py``, two checkpoints (``output/v1``, ``output/v2``), submits both, a path outside the
workspace and two submissions at once, then overwrites ``output/v1`` after it was graded.
"""

from __future__ import annotations

import json
import os
import struct
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def submit(model_path: str) -> dict[str, object]:
    request = urllib.request.Request(
        os.environ["GRADING_SERVER_URL"] + "/submit",
        data=json.dumps({"model_path": model_path}).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return dict(json.load(answer))
    except urllib.error.HTTPError as error:
        return dict(json.load(error))


def checkpoint(folder: Path, fill: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    header = json.dumps({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes([fill]) * 16)
    (folder / "config.json").write_text('{"_name_or_path": "tiny-base"}')


def main() -> None:
    code = Path("code")
    code.mkdir(exist_ok=True)
    (code / "train.py").write_text("lr = 1e-3\n")
    time.sleep(0.3)
    checkpoint(Path("output/v1"), 1)
    first = submit("output/v1")
    (code / "train.py").write_text("lr = 5e-4\nepochs = 2\n")
    checkpoint(Path("output/v2"), 2)
    second = submit(str(Path("output/v2").resolve()))
    refused = submit("../outside")
    answers: list[dict[str, object]] = []
    racing = [
        threading.Thread(target=lambda p=p: answers.append(submit(p))) for p in ("output/v1", "output/v2")
    ]
    for thread in racing:
        thread.start()
    for thread in racing:
        thread.join()
    checkpoint(Path("output/v1"), 9)  # overwritten after it was graded
    print(json.dumps({"first": first, "second": second, "refused": refused, "racing": answers}))
    sys.exit(0)


if __name__ == "__main__":
    main()
