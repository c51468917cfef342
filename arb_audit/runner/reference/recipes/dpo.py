"""DPO on preference pairs, against a frozen copy of the starting model."""

import argparse
import random

import torch
from common import answer_logprobs, log, read_jsonl
from torch.nn import functional as F

from arb_audit.runner.reference.tinylm import load_model, save_model

parser = argparse.ArgumentParser()
parser.add_argument("--pairs", default="data/pairs.jsonl")
parser.add_argument("--init", default="models/base")
parser.add_argument("--out", required=True)
parser.add_argument("--steps", type=int, default=100)
parser.add_argument("--beta", type=float, default=0.1)
parser.add_argument("--alpha", type=float, default=0.2)
args = parser.parse_args()

torch.manual_seed(0)
torch.set_num_threads(1)
rng = random.Random(0)
pairs = read_jsonl(args.pairs)
policy = load_model(args.init).model
reference = load_model(args.init).model
optimizer = torch.optim.AdamW(policy.parameters(), lr=5e-4)

for step in range(args.steps):
    chosen = rng.sample(pairs, min(32, len(pairs)))
    prompts = [p["prompt"] for p in chosen]
    with torch.no_grad():
        ref_chosen = answer_logprobs(reference, prompts, [p["chosen"] for p in chosen])
        ref_rejected = answer_logprobs(reference, prompts, [p["rejected"] for p in chosen])
    policy.train()
    pi_chosen = answer_logprobs(policy, prompts, [p["chosen"] for p in chosen])
    pi_rejected = answer_logprobs(policy, prompts, [p["rejected"] for p in chosen])
    margin = (pi_chosen - ref_chosen) - (pi_rejected - ref_rejected)
    # The chosen answers' own likelihood is kept up too (RPO): plain DPO pushes both answers down here.
    loss = -F.logsigmoid(args.beta * margin).mean() - args.alpha * pi_chosen.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 25 == 0 or step == args.steps - 1:
        log(step=step, loss=loss.item(), margin=margin.mean().item())

save_model(policy, args.out, name_or_path=args.init)
print(f"saved {args.out}")
