"""Episodes played after the training in their block evaluate the trained model: no online RL of theirs."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from arb_audit.analyzer.batch import classify_path
from arb_audit.analyzer.played_after_training import AFTER_TRAINING

HEADER = """\
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from env import TextGame
model = AutoModelForCausalLM.from_pretrained("gpt2")
tok = AutoTokenizer.from_pretrained("gpt2")
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
env = TextGame()
"""

SINGLE_TURN_STEP = """\
    ids = tok(["What is 6*7?"] * 8, return_tensors="pt").input_ids
    out = model.generate(ids, do_sample=True)
    r = torch.tensor([float("42" in t) for t in tok.batch_decode(out)])
    adv = (r - r.mean()) / (r.std() + 1e-6)
    logp = torch.log_softmax(model(out).logits, -1).gather(-1, out[..., None]).squeeze(-1).sum(-1)
    loss = -(adv * logp).mean()
    loss.backward(); opt.step(); opt.zero_grad()
"""

EPISODE = """\
    obs = env.reset(); done = False
    while not done:
        out = model.generate(tok(obs, return_tensors="pt").input_ids)
        obs, r, done, info = env.step(tok.decode(out[0]))
"""

EPISODE_STEP = """\
    obs = env.reset(); done = False; logps = []; rewards = []
    while not done:
        out = model.generate(tok(obs, return_tensors="pt").input_ids, do_sample=True)
        obs, r, done, info = env.step(tok.decode(out[0]))
        logps.append(torch.log_softmax(model(out).logits, -1).sum()); rewards.append(r)
    adv = torch.tensor(rewards) - torch.tensor(rewards).mean()
    loss = -(torch.stack(logps) * adv).sum()
    loss.backward(); opt.step(); opt.zero_grad()
"""


def _indent(code: str, by: str) -> str:
    return textwrap.indent(code, by)


CASES = {
    # trained single-turn at module level, then the trained model plays a few games: an evaluation
    "module_after": (
        HEADER + "for it in range(100):\n" + SINGLE_TURN_STEP + "for ep in range(5):\n" + EPISODE,
        False,
    ),
    # the same in functions: main() trains by a call, then plays
    "main_after": (
        HEADER
        + "def train():\n    for it in range(100):\n"
        + _indent(SINGLE_TURN_STEP, "    ")
        + "\ndef main():\n    train()\n    for ep in range(5):\n"
        + _indent(EPISODE, "    ")
        + "\nif __name__ == '__main__':\n    main()\n",
        False,
    ),
    # the episodes are played inside the training loop: they are what it trains on
    "inside": (HEADER + "for it in range(100):\n" + EPISODE_STEP, True),
    # a rollout function the training loop calls, called once more after it to show a game
    "helper_called_by_training": (
        HEADER
        + "def rollout():\n"
        + EPISODE.replace("    obs = env.reset()", "    obs = env.reset()")
        + "    return obs\n"
        + "for it in range(100):\n    rollout()\n"
        + EPISODE_STEP
        + "for ep in range(3):\n    print(rollout())\n",
        True,
    ),
    # in a loop, the update comes first in the text and trains on what the episodes after it filled
    "loop_carried_buffer": (
        HEADER
        + "buffer = []\nfor it in range(100):\n    if buffer:\n"
        + "        rets = torch.tensor([ret for _, ret in buffer])\n        adv = rets - rets.mean()\n"
        + "        loss = -(torch.stack([lp for lp, _ in buffer]) * adv).mean()\n"
        + "        loss.backward(); opt.step(); opt.zero_grad(); buffer = []\n"
        + "    for ep in range(8):\n"
        + _indent(EPISODE, "    ")
        + "        buffer.append((torch.log_softmax(model(out).logits, -1).sum(), r))\n",
        True,
    ),
    # a dict's update() is no call of the file's update method, which steps
    "container_update": (
        HEADER
        + "class Agent:\n    def update(self, episodes):\n"
        + "        loss = -torch.stack([lp * ret for lp, ret in episodes]).mean()\n"
        + "        loss.backward(); opt.step(); opt.zero_grad()\n"
        + "    def collect(self, n):\n        stats = {}\n"
        + "        stats.update(episodes=0)\n        episodes = []\n"
        + "        for ep in range(n):\n"
        + _indent(EPISODE, "        ")
        + "            episodes.append((torch.log_softmax(model(out).logits, -1).sum(), r))\n"
        + "        return episodes\n"
        + "agent = Agent()\nfor it in range(100):\n    agent.update(agent.collect(8))\n",
        True,
    ),
    # the episodes are handed on by a name rebound after them, read by the update at the loop's top
    "loop_carried_name": (
        HEADER
        + "episode = None\nfor it in range(100):\n    if episode is not None:\n        lps, rets = episode\n"
        + "        adv = torch.tensor(rets) - torch.tensor(rets).mean()\n"
        + "        loss = -(torch.stack(lps) * adv).mean()\n"
        + "        loss.backward(); opt.step(); opt.zero_grad()\n"
        + "    lps, rets = [], []\n    for ep in range(4):\n"
        + _indent(EPISODE, "    ")
        + "        lps.append(torch.log_softmax(model(out).logits, -1).sum()); rets.append(r)\n"
        + "    episode = (lps, rets)\n",
        True,
    ),
    # a supervised warm-up, then an object of the file's class updated on the episodes it plays
    "own_object_update": (
        HEADER
        + "class Agent:\n    def update(self, episodes):\n"
        + "        rets = torch.tensor([ret for _, ret in episodes])\n        adv = rets - rets.mean()\n"
        + "        loss = -(torch.stack([lp for lp, _ in episodes]) * adv).mean()\n"
        + "        loss.backward(); opt.step(); opt.zero_grad()\n"
        + "for batch in demos:\n    loss = model(**batch, labels=batch['input_ids']).loss\n"
        + "    loss.backward(); opt.step(); opt.zero_grad()\n"
        + "agent = Agent()\nfor it in range(100):\n    episodes = []\n    for ep in range(8):\n"
        + _indent(EPISODE, "    ")
        + "        episodes.append((torch.log_softmax(model(out).logits, -1).sum(), r))\n"
        + "    agent.update(episodes)\n",
        None,
    ),
    # in a loop, an update through a method of the file comes first: it may read what the episodes keep
    "update_by_call_first": (
        HEADER
        + "class Agent:\n    def __init__(self):\n        self.trajectory = []\n"
        + "    def learn(self):\n        rets = torch.tensor([ret for _, ret in self.trajectory])\n"
        + "        loss = -(torch.stack([lp for lp, _ in self.trajectory]) * (rets - rets.mean())).mean()\n"
        + "        loss.backward(); opt.step(); opt.zero_grad(); self.trajectory = []\n"
        + "    def record(self, lp, r):\n        self.trajectory.append((lp, r))\n"
        + "agent = Agent()\nfor it in range(100):\n    agent.learn()\n"
        + EPISODE
        + "    agent.record(torch.log_softmax(model(out).logits, -1).sum(), r)\n",
        None,
    ),
    # episodes collected before training, then trained on: they feed the update
    "collected_before": (
        HEADER
        + "trajectories = []\nfor ep in range(50):\n"
        + EPISODE
        + "        trajectories.append((out, r))\n"
        + "for out, r in trajectories:\n"
        + "    logp = torch.log_softmax(model(out).logits, -1).sum()\n"
        + "    adv = r - 0.5\n    loss = -(logp * adv)\n    loss.backward(); opt.step(); opt.zero_grad()\n",
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_episodes_after_the_training_do_not_make_it_online(tmp_path: Path, name: str) -> None:
    code, online = CASES[name]
    path = tmp_path / f"{name}.py"
    path.write_text(code)
    result = classify_path(path)
    after = [f for f in result.findings if AFTER_TRAINING in f.message]
    if online is False:
        assert result.primary != "ONLINE_RL" and result.role == "training"
        assert after and all(f.signal == "inference" for f in after)
    else:
        assert not after
        if online:
            assert result.primary == "ONLINE_RL"
