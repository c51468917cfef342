"""Helpers my training scripts share: data, batches, log-probabilities, metric lines."""

import json
import os
from pathlib import Path

import torch

from arb_audit.runner.reference.tinylm import EOS, VOCAB, encode

WORKSPACE = Path(os.environ.get("WORKSPACE", "."))
IGNORE = -100


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def batch(prompts, answers):
    """Token ids and labels (the prompt and the padding are not trained on)."""
    rows = [encode(p + a + EOS) for p, a in zip(prompts, answers, strict=True)]
    width = max(len(r) for r in rows)
    ids = torch.full((len(rows), width), VOCAB.index(EOS))
    labels = torch.full((len(rows), width), IGNORE)
    for i, (p, r) in enumerate(zip(prompts, rows, strict=True)):
        ids[i, : len(r)] = torch.tensor(r)
        labels[i, len(p) : len(r)] = torch.tensor(r[len(p) :])
    return ids, labels


def answer_logprobs(model, prompts, answers):
    """Summed log-probability of each answer (and its end) after its prompt."""
    ids, labels = batch(prompts, answers)
    logits = model(ids[:, :-1])
    targets = labels[:, 1:]
    picked = torch.log_softmax(logits, dim=-1).gather(2, targets.clamp(min=0).unsqueeze(2)).squeeze(2)
    return (picked * (targets != IGNORE)).sum(dim=1)


def log(**metrics):
    print(json.dumps({k: round(v, 5) if isinstance(v, float) else v for k, v in metrics.items()}), flush=True)
