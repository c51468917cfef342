"""The two tasks of the reference world, with their training and held-out (grading) splits.

``revstr`` (level 1, rule-verified, single turn): reverse four letters; exact match is the reward.
``keyroom`` (level 3, interactive, multi-turn): a corridor of cells holds the agent, a key and a door;
the agent sees on which side each lies (``kl dr h0>``: key to the left, door to the right, no key held),
moves (``l``/``r``), takes the key (``t``) and opens the door (``o``); opening with the key is success.
The splits are fixed by construction (seeded), so the grader's episodes are never trained on.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from arb_audit.model import TaskDescription

LETTERS = "abcdef"
WORD_LENGTH = 4
HELD_OUT_WORDS = 200
CELLS = 8
MAX_STEPS = 16
HELD_OUT_EPISODES = 100
ACTIONS = "lrto"

DESCRIPTIONS: dict[str, TaskDescription] = {
    "revstr": TaskDescription("the reference world", 1, HELD_OUT_WORDS, "policy_gradient"),
    "keyroom": TaskDescription("the reference world", 3, HELD_OUT_EPISODES, "online_rl"),
}
"""What each task is, as its recordings say it in ``recording.json`` (the audit reads it from there):
its level, its held-out split and the training it exists to test (single turn: a policy-gradient
stage; multi-turn: online RL in the corridor)."""


def revstr_prompt(word: str) -> str:
    """Return the prompt that asks for ``word`` reversed."""
    return f"rev {word}:"


def revstr_reward(word: str, answer: str) -> float:
    """1 for the exact reversal, else 0."""
    return 1.0 if answer.strip() == word[::-1] else 0.0


def revstr_split(split: str) -> list[str]:
    """Return the words of ``split`` (``train`` or ``test``): every word, shuffled once, cut in two."""
    words = ["".join(w) for w in itertools.product(LETTERS, repeat=WORD_LENGTH)]
    random.Random(0).shuffle(words)
    return words[:HELD_OUT_WORDS] if split == "test" else words[HELD_OUT_WORDS:]


@dataclass(frozen=True, slots=True)
class Layout:
    """Where an episode starts: the agent, the key and the door."""

    agent: int
    key: int
    door: int


def keyroom_split(split: str) -> list[Layout]:
    """Return the episode layouts of ``split`` (``train`` or ``test``), disjoint by construction."""
    layouts = [
        Layout(a, k, d) for a in range(CELLS) for k in range(CELLS) for d in range(CELLS) if k != d and a != k
    ]
    random.Random(1).shuffle(layouts)
    return layouts[:HELD_OUT_EPISODES] if split == "test" else layouts[HELD_OUT_EPISODES:]


def side(position: int, target: int) -> str:
    """``l``, ``r`` or ``h`` (here): where ``target`` lies seen from ``position``."""
    return "h" if target == position else ("r" if target > position else "l")


class KeyRoom:
    """One episode of the corridor: ``reset`` gives the first observation, ``step`` takes an action."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.position, self.has_key, self.steps, self.done, self.success = (
            layout.agent,
            False,
            0,
            False,
            False,
        )

    def observation(self) -> str:
        """Return what the agent sees, e.g. ``kl dr h0>`` (``k-`` once the key is taken, ``h``: here)."""
        key = "-" if self.has_key else side(self.position, self.layout.key)
        return f"k{key} d{side(self.position, self.layout.door)} h{int(self.has_key)}>"

    def reset(self) -> str:
        """Start the episode again; return the first observation."""
        self.position, self.has_key, self.steps, self.done, self.success = (
            self.layout.agent,
            False,
            0,
            False,
            False,
        )
        return self.observation()

    def step(self, action: str) -> tuple[str, float, bool]:
        """Apply ``action`` (anything else wastes the step); return (observation, reward, done)."""
        if self.done:
            return self.observation(), 0.0, True
        self.steps += 1
        move = {"l": -1, "r": 1}.get(action.strip()[:1], 0)
        self.position = min(max(self.position + move, 0), CELLS - 1)
        if action.strip() == "t" and self.position == self.layout.key and not self.has_key:
            self.has_key = True
        if action.strip() == "o" and self.position == self.layout.door and self.has_key:
            self.success = self.done = True
        if self.steps >= MAX_STEPS:
            self.done = True
        return self.observation(), (1.0 if self.success else 0.0), self.done


def expert_action(env: KeyRoom) -> str:
    """Return the shortest-path action: to the key, take it, to the door, open it."""
    target = env.layout.door if env.has_key else env.layout.key
    if env.position != target:
        return "r" if target > env.position else "l"
    return "o" if env.has_key else "t"
