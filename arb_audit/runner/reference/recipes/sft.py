"""Supervised fine-tuning on prompt/answer pairs."""

import argparse
import random

import torch
from common import IGNORE, batch, log, read_jsonl
from torch.nn import functional as F

from arb_audit.runner.reference.tinylm import load_model, save_model

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--init", default="models/base")
parser.add_argument("--out", required=True)
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(args.seed)
torch.set_num_threads(1)
rng = random.Random(args.seed)
rows = read_jsonl(args.data)
model = load_model(args.init).model
model.train()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

for step in range(args.steps):
    chosen = rng.sample(rows, min(32, len(rows)))
    ids, labels = batch([r["prompt"] for r in chosen], [r["answer"] for r in chosen])
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1), ignore_index=IGNORE
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 0 or step == args.steps - 1:
        log(step=step, loss=loss.item())

save_model(model, args.out, name_or_path=args.init)
print(f"saved {args.out}")
