"""The reference tasks: fixed disjoint splits, the environment's rules, and the grader's verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arb_audit.runner.reference.evaluate import main
from arb_audit.runner.reference.tasks import (
    ACTIONS,
    DESCRIPTIONS,
    MAX_STEPS,
    KeyRoom,
    Layout,
    expert_action,
    keyroom_split,
    revstr_reward,
    revstr_split,
)


def test_splits_are_disjoint_and_sized_as_the_recordings_describe_them() -> None:
    train, test = set(revstr_split("train")), set(revstr_split("test"))
    assert not train & test and len(test) == DESCRIPTIONS["revstr"].n_eval
    rooms_train, rooms_test = keyroom_split("train"), keyroom_split("test")
    assert not set(rooms_train) & set(rooms_test) and len(rooms_test) == DESCRIPTIONS["keyroom"].n_eval
    assert revstr_split("test") == revstr_split("test")  # fixed by construction


def test_the_expert_opens_every_door() -> None:
    for layout in keyroom_split("train") + keyroom_split("test"):
        env = KeyRoom(layout)
        env.reset()
        while not env.done:
            env.step(expert_action(env))
        assert env.success, layout


def test_observations_say_where_things_lie() -> None:
    env = KeyRoom(Layout(agent=2, key=4, door=0))
    assert env.reset() == "kr dl h0>"
    env.step("r")
    env.step("r")
    assert env.step("t")[0] == "k- dl h1>"


@given(st.lists(st.text(max_size=3), max_size=40))
def test_any_actions_end_the_episode_within_its_budget(actions: list[str]) -> None:
    env = KeyRoom(Layout(agent=0, key=3, door=5))
    env.reset()
    for action in actions:
        observation, reward, _ = env.step(action)
        assert observation.endswith(">") and reward in (0.0, 1.0)
    assert env.steps <= MAX_STEPS and (env.done or len(actions) < MAX_STEPS)


def test_reward_is_exact_match() -> None:
    assert revstr_reward("abcd", "dcba") == 1.0 and revstr_reward("abcd", "dcb") == 0.0
    assert set(ACTIONS) == {"l", "r", "t", "o"}


def test_the_grader_names_an_unusable_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--task", "revstr", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert "config.json" in result["error"]
