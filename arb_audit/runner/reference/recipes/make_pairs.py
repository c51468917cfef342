"""Preference pairs from my own samples: a correct sample is chosen over a wrong one of the same prompt."""

import argparse
import json
import random

import torch
from common import read_jsonl

from arb_audit.runner.reference.tinylm import load_model

parser = argparse.ArgumentParser()
parser.add_argument("--data", default="data/revstr_train.jsonl")
parser.add_argument("--init", default="models/base")
parser.add_argument("--out", default="data/pairs.jsonl")
parser.add_argument("--samples", type=int, default=4)
args = parser.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
rows = random.Random(0).sample(read_jsonl(args.data), 400)
model = load_model(args.init).model
sampler = torch.Generator().manual_seed(0)
pairs = []
for _ in range(args.samples):
    answers = model.generate(
        [r["prompt"] for r in rows], max_new_tokens=6, temperature=1.0, generator=sampler
    )
    for row, answer in zip(rows, answers, strict=True):
        if answer != row["answer"]:
            pairs.append({"prompt": row["prompt"], "chosen": row["answer"], "rejected": answer})
with open(args.out, "w") as f:
    for pair in pairs:
        f.write(json.dumps(pair) + "\n")
print(f"wrote {len(pairs)} pairs to {args.out}")
