"""An evaluator for the runner's tests: the score is the first weight byte of the model, times ten."""

from __future__ import annotations

import json
import sys
from pathlib import Path

path = Path(sys.argv[1]) / "model.safetensors"
if not path.is_file():
    print(json.dumps({"score": 0.0, "error": "Model not found"}))
else:
    raw = path.read_bytes()
    length = int.from_bytes(raw[:8], "little")
    print(json.dumps({"score": float(raw[8 + length] * 10)}))
