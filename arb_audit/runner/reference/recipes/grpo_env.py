"""GRPO with online multi-turn rollouts in the corridor environment."""

import argparse
import random

import torch
from common import answer_logprobs, log

from arb_audit.runner.reference.tasks import KeyRoom, keyroom_split
from arb_audit.runner.reference.tinylm import load_model, save_model

parser = argparse.ArgumentParser()
parser.add_argument("--init", required=True)
parser.add_argument("--out", required=True)
parser.add_argument("--iterations", type=int, default=20)
parser.add_argument("--group", type=int, default=8)
parser.add_argument("--prompts", type=int, default=8)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()

torch.manual_seed(args.seed)
torch.set_num_threads(1)
rng = random.Random(args.seed)
sampler = torch.Generator().manual_seed(args.seed)
layouts = keyroom_split("train")
model = load_model(args.init).model
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


def reward(env):
    # Half for taking the key, half for opening the door: most groups then have rewards that differ.
    return 0.5 * env.has_key + 0.5 * env.success


def rollout(envs):
    """Play every episode to its end with the current policy; return each one's turns."""
    observations = [env.reset() for env in envs]
    turns = [[] for _ in envs]
    while not all(env.done for env in envs):
        live = [i for i, env in enumerate(envs) if not env.done]
        model.eval()
        actions = model.generate(
            [observations[i] for i in live], max_new_tokens=1, temperature=1.0, generator=sampler
        )
        for i, action in zip(live, actions, strict=True):
            turns[i].append((observations[i], action))
            observations[i], _, _ = envs[i].step(action)
    return turns


for iteration in range(args.iterations):
    envs = [KeyRoom(layout) for layout in rng.sample(layouts, args.prompts) for _ in range(args.group)]
    turns = rollout(envs)
    rewards = torch.tensor([reward(env) for env in envs])
    grouped = rewards.view(-1, args.group)
    advantages = (
        (grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1, keepdim=True) + 1e-6)
    ).view(-1)
    prompts = [o for episode in turns for o, _ in episode]
    actions = [a for episode in turns for _, a in episode]
    weights = torch.tensor([float(advantages[i]) for i, episode in enumerate(turns) for _ in episode])
    model.train()
    loss = -(answer_logprobs(model, prompts, actions) * weights).sum() / len(envs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    success = sum(env.success for env in envs) / len(envs)
    log(
        iteration=iteration,
        loss=loss.item(),
        reward=rewards.mean().item(),
        reward_std=rewards.std().item(),
        success=success,
    )

save_model(model, args.out, name_or_path=args.init)
print(f"saved {args.out}")
