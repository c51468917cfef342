"""Build the reference world: the briefly pre-trained base model and a workspace an agent starts in.

The base is pre-trained, seeded, on text that teaches the formats but not the tasks: copying words
(``cp abcd:abcd``) and corridor observations followed by random actions. So it answers in the right
shape and scores low; the agents' training is what has to raise the score.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import torch

from arb_audit.runner.reference.tasks import (
    ACTIONS,
    LETTERS,
    WORD_LENGTH,
    KeyRoom,
    expert_action,
    keyroom_split,
    revstr_prompt,
    revstr_split,
)
from arb_audit.runner.reference.tinylm import TinyConfig, TinyLM, save_model, sequence_loss

BASE_NAME = "arb-audit/tiny-base"
"""The base model's id, written as its ``_name_or_path``."""
PRETRAIN_STEPS = 300
DEMO_EPISODES = 12
"""Demonstration episodes given with the ``keyroom`` task. They are the first training layouts whose
door lies to the right of the key, so they never show walking left with the key in hand, and the
demonstrator slips (a random action) one step in four, as recorded human play does."""
DEMO_SLIP = 0.25


def _pretraining_batch(rng: random.Random, size: int) -> tuple[list[str], list[str]]:
    """Half word copies, half corridor observations with a random action."""
    prompts, answers = [], []
    for i in range(size):
        if i % 2:
            word = "".join(rng.choice(LETTERS) for _ in range(WORD_LENGTH))
            prompts.append(f"cp {word}:")
            answers.append(word)
        else:
            key, door = rng.choice("lrh-"), rng.choice("lrh")
            prompts.append(f"k{key} d{door} h{int(key == '-')}>")
            answers.append(rng.choice(ACTIONS))
    return prompts, answers


def pretrain_base(steps: int = PRETRAIN_STEPS, seed: int = 0) -> TinyLM:
    """Pre-train a fresh tiny model on format-only text (seeded, single-threaded, deterministic)."""
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model = TinyLM(TinyConfig())
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(steps):
        prompts, answers = _pretraining_batch(rng, 64)
        loss = -sequence_loss(model, prompts, answers).mean()
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    return model.eval()


def demonstrations(episodes: int = DEMO_EPISODES) -> list[dict[str, str]]:
    """Demonstrated (observation, action) pairs (see :data:`DEMO_EPISODES`)."""
    rng = random.Random(2)
    rows = []
    for layout in [t for t in keyroom_split("train") if t.door > t.key][:episodes]:
        env = KeyRoom(layout)
        observation = env.reset()
        while not env.done:
            action = rng.choice(ACTIONS) if rng.random() < DEMO_SLIP else expert_action(env)
            rows.append({"prompt": observation, "answer": action})
            observation = env.step(action)[0]
    return rows


def write_workspace(workspace: Path, base: Path) -> None:
    """Lay out a fresh workspace: the base model under ``models/base`` and the tasks' training data."""
    (workspace / "code").mkdir(parents=True, exist_ok=True)
    (workspace / "output").mkdir(exist_ok=True)
    data = workspace / "data"
    data.mkdir(exist_ok=True)
    with (data / "revstr_train.jsonl").open("w") as out:
        for word in revstr_split("train"):
            out.write(json.dumps({"prompt": revstr_prompt(word), "answer": word[::-1]}) + "\n")
    with (data / "keyroom_demos.jsonl").open("w") as out:
        for row in demonstrations():
            out.write(json.dumps(row) + "\n")
    models = workspace / "models" / "base"
    models.mkdir(parents=True, exist_ok=True)
    for item in sorted(base.iterdir()):
        (models / item.name).write_bytes(item.read_bytes())


def build_base(folder: Path) -> Path:
    """Write the pre-trained base model folder (once; an existing complete folder is reused)."""
    if not (folder / "model.safetensors").is_file():
        torch.set_num_threads(1)
        save_model(pretrain_base(), folder, BASE_NAME)
    return folder
