"""The reference world's grader: score a model folder on a task's held-out split.

``python -m arb_audit.runner.reference.evaluate --task revstr|keyroom MODEL_DIR`` prints one JSON line,
``{"score": S}`` (percent of held-out problems or episodes solved, greedy decoding with the folder's own
chat template and ``max_new_tokens``) or ``{"error": ...}`` naming the file that made the folder unusable;
it is the evaluator command ``arb-audit record --evaluator`` runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from arb_audit.runner.reference.tasks import (
    KeyRoom,
    keyroom_split,
    revstr_prompt,
    revstr_reward,
    revstr_split,
)
from arb_audit.runner.reference.tinylm import LoadedModel, ModelFolderError, load_model

TASKS = ("revstr", "keyroom")


def revstr_score(loaded: LoadedModel) -> float:
    """Percent of held-out words reversed exactly."""
    words = revstr_split("test")
    prompts = [loaded.chat_template.replace("{prompt}", revstr_prompt(w)) for w in words]
    answers = loaded.model.generate(prompts, loaded.max_new_tokens)
    return 100.0 * sum(revstr_reward(w, a) for w, a in zip(words, answers, strict=True)) / len(words)


def keyroom_score(loaded: LoadedModel) -> float:
    """Percent of held-out episodes the greedy policy opens the door in."""
    envs = [KeyRoom(layout) for layout in keyroom_split("test")]
    observations = [env.reset() for env in envs]
    while not all(env.done for env in envs):
        live = [i for i, env in enumerate(envs) if not env.done]
        prompts = [loaded.chat_template.replace("{prompt}", observations[i]) for i in live]
        for i, action in zip(live, loaded.model.generate(prompts, loaded.max_new_tokens), strict=True):
            observations[i] = envs[i].step(action)[0]
    return 100.0 * sum(env.success for env in envs) / len(envs)


def score(model_dir: Path, task: str) -> float:
    """Score the model in ``model_dir`` on ``task``'s held-out split; ModelFolderError if unusable."""
    torch.manual_seed(0)
    loaded = load_model(model_dir)
    return round(revstr_score(loaded) if task == "revstr" else keyroom_score(loaded), 2)


def main(argv: list[str] | None = None) -> int:
    """Print the score (or the reason there is none) as one JSON line; exit 0 either way."""
    parser = argparse.ArgumentParser(
        prog="python -m arb_audit.runner.reference.evaluate", description=__doc__
    )
    parser.add_argument("--task", choices=TASKS, required=True)
    parser.add_argument("model_dir", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        result: dict[str, object] = {"score": score(args.model_dir, args.task)}
    except ModelFolderError as exc:
        result = {"error": str(exc)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
