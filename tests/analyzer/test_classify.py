"""Whole files through the classifier: stages in order, roles, launchers, and the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from arb_audit.analyzer import batch, launchers
from arb_audit.analyzer.batch import classify_many, classify_path
from arb_audit.analyzer.launchers import classify_launcher, command_routes
from arb_audit.analyzer.source import SourceFile, read_source
from arb_audit.cli import main
from arb_audit.store import RunStore
from arb_audit.taxonomy.files import FILE_LABELS, FILE_ROLES

SFT_THEN_GRPO = '''
"""Prime the format with SFT, then GRPO with reward functions (as unsloth's notebooks do)."""
from unsloth import FastLanguageModel
from trl import GRPOConfig, GRPOTrainer, SFTConfig, SFTTrainer

model, tokenizer = FastLanguageModel.from_pretrained("base")
model = FastLanguageModel.get_peft_model(model, r=16)


def format_reward(completions, **kwargs):
    return [1.0 if "<answer>" in c else 0.0 for c in completions]


SFTTrainer(model=model, args=SFTConfig(output_dir="sft"), train_dataset=primer).train()
trainer = GRPOTrainer(model=model, reward_funcs=[format_reward], args=GRPOConfig(num_generations=8))
trainer.train()
if False:
    model.save_pretrained_merged("merged", tokenizer)
'''

MULTI_TURN_ROLLOUT = """
import torch
from trl import GRPOConfig, GRPOTrainer
from my_envs import KeyRoomEnv


def rollout_func(prompts, trainer):
    env = KeyRoomEnv()
    episodes = []
    for prompt in prompts:
        observation = env.reset()
        for turn in range(8):
            action = trainer.model.generate(observation)
            observation, reward, done = env.step(action)
            if done:
                break
        episodes.append(reward)
    return episodes


GRPOTrainer(model="base", reward_funcs=[lambda completions, **kw: [0.0]], rollout_func=rollout_func).train()
"""

HAND_WRITTEN_DPO = """
import torch
import torch.nn.functional as F

for batch in loader:
    policy_chosen, policy_rejected = logps(policy, batch)
    with torch.no_grad():
        ref_chosen, ref_rejected = logps(reference, batch)
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    loss = -F.logsigmoid(0.1 * margin).mean()
    loss.backward()
    optimizer.step()
"""

EVAL_SCRIPT = """
from vllm import LLM, SamplingParams
from math_verify import parse, verify

llm = LLM(model="output/v3")
outputs = llm.generate(prompts, SamplingParams(temperature=0))
accuracy = sum(verify(parse(o.outputs[0].text), gold) for o, gold in zip(outputs, answers)) / len(answers)
print(accuracy)
"""

DATA_GENERATION = """
import json
from openai import OpenAI

client = OpenAI()
with open("traces.jsonl", "w") as out:
    for question in questions:
        messages = [{"role": "user", "content": question}]
        answer = client.chat.completions.create(model="teacher", messages=messages)
        out.write(json.dumps({"prompt": question, "completion": answer.choices[0].message.content}) + "\\n")
"""

DISPATCH = """
import argparse
from trl import DPOTrainer, GRPOTrainer, SFTTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--method", choices=["sft", "dpo", "grpo"], default="sft")
args = parser.parse_args()
if args.method == "sft":
    SFTTrainer(model=m).train()
elif args.method == "dpo":
    DPOTrainer(model=m).train()
else:
    GRPOTrainer(model=m, reward_funcs=[r]).train()
"""


def write(tmp_path: Path, name: str, code: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code))
    return path


def test_a_composite_notebook_script_lists_both_stages_in_order(tmp_path: Path) -> None:
    result = classify_path(write(tmp_path, "train.py", SFT_THEN_GRPO))
    assert (result.primary, result.labels, result.role) == ("GRPO", ["GRPO", "SFT"], "training")
    assert [s.kind for s in result.stages] == ["sft", "grpo"]
    grpo = result.stages[1]
    assert grpo.on_policy is True and grpo.interactive is False
    line = next(f.line for f in grpo.evidence if f.detector == "TrainerConstruction")
    assert SFT_THEN_GRPO.splitlines()[line - 1].startswith("trainer = GRPOTrainer(")
    assert not any(s.kind == "merge" for s in result.stages)  # the fold sits under `if False:`


AGENT_GRPO = """
import torch

agent = ToolAgent(model=policy, tools=TOOLS, max_steps=MAX_STEPS)
for batch in loader:
    runs = [agent.run(question=q) for q in batch for _ in range(4)]
    rewards = torch.tensor([score(r) for r in runs]).view(-1, 4)
    adv = ((rewards - rewards.mean(1, keepdim=True)) / (rewards.std(1, keepdim=True) + 1e-6)).flatten()
    loss = -(adv * torch.stack([r.logp for r in runs])).mean()
    loss.backward()
    optimizer.step()
"""

EPISODE_ROLLOUT = """
async def art_rollout(model, task_id):
    env = TauBenchEnv(client=model.openai_client(), max_turns=15)
    episode = await env.run_episode(task_id=task_id)
    trajectory = art.Trajectory(messages_and_choices=episode.messages)
    trajectory.reward = episode.reward
    return trajectory
"""


def test_policy_gradient_on_the_runs_of_an_agent_with_tools_is_online_rl(tmp_path: Path) -> None:
    """An agent given tools and a step limit plays several turns; its runs are what the loss trains on."""
    result = classify_path(write(tmp_path, "train.py", AGENT_GRPO))
    assert result.primary == "ONLINE_RL" and result.stages[0].interactive is True
    single = AGENT_GRPO.replace("tools=TOOLS, max_steps=MAX_STEPS", "max_steps=1")
    assert classify_path(write(tmp_path, "single.py", single)).primary == "GRPO"


def test_a_rollout_function_playing_one_episode_is_online_rl_s_component(tmp_path: Path) -> None:
    """``art_rollout`` plays one multi-turn episode of an environment for a trainer to train on."""
    result = classify_path(write(tmp_path, "rollout.py", EPISODE_ROLLOUT))
    assert (result.primary, result.role) == ("ONLINE_RL", "component")
    solve = EPISODE_ROLLOUT.replace("art_rollout", "solve_task")
    assert classify_path(write(tmp_path, "solve.py", solve)).primary != "ONLINE_RL"


TOOL_EPISODE = """\
import json


def run_episode(client, env, task):
    messages = [{"role": "user", "content": env.reset(task)}]
    while True:
        reply = client.chat.completions.create(messages=messages, tools=TOOLS)
        if not reply.tool_calls:
            break
        observation, done = env.dispatch(reply.tool_calls[0])
        messages.append({"role": "tool", "content": observation})
        if done:
            break
    return messages
"""


def test_episodes_written_out_by_code_that_defines_no_rl_are_collected_not_trained_on(
    tmp_path: Path,
) -> None:
    """A tool loop returning its episodes serves a trainer; one whose episodes the file writes is data."""
    result = classify_path(write(tmp_path, "rollout.py", TOOL_EPISODE))
    assert (result.primary, result.role) == ("ONLINE_RL", "component")
    collected = TOOL_EPISODE + (
        "\n\ndef collect(teacher_client, env, tasks, path):\n"
        "    with open(path, 'w') as f:\n"
        "        for task in tasks:\n"
        "            f.write(json.dumps({'messages': run_episode(teacher_client, env, task)}) + '\\n')\n"
    )
    result = classify_path(write(tmp_path, "teacher_rollout.py", collected))
    assert result.primary == "DISTILLATION"


PLAYED_EPISODES = """\
import alfworld


def run_trial(agent, env):
    obs = env.reset()
    for _ in range(49):
        action = agent.act(obs)
        obs, reward, done, info = env.step(action)
        if done:
            return reward
    return 0


if __name__ == "__main__":
    env = alfworld.make_env(split="eval_out_of_distribution")
    wins = sum(run_trial(agent, env) for _ in range(134))
    print("success rate", wins / 134)
"""


def test_a_script_playing_an_environment_it_does_not_define_evaluates(tmp_path: Path) -> None:
    """Episodes played by a script that trains nothing and defines no environment measure a policy."""
    result = classify_path(write(tmp_path, "trial.py", PLAYED_EPISODES))
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")
    defined = PLAYED_EPISODES.replace(
        "import alfworld\n",
        "class HouseEnv:\n    def reset(self):\n        return ''\n"
        "    def step(self, action):\n        return '', 0.0, False, {}\n",
    )
    assert classify_path(write(tmp_path, "house.py", defined)).primary == "ONLINE_RL"


GRPO_LOSSES_WITH_A_BASELINE = """\
import torch


def leave_one_out_baselines(rewards, k):
    return (rewards.sum() - rewards) / (k - 1)


def grpo_policy_loss(logp, old_logp, advantages, eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - eps, 1 + eps)
    return -torch.min(ratio * advantages, clipped * advantages).mean()


def token_grpo_policy_loss(logp, old_logp, advantages, eps=0.2):
    ratio = torch.exp(logp - old_logp)
    clipped = torch.clamp(ratio, 1 - eps, 1 + eps)
    return -torch.min(ratio * advantages, clipped * advantages).sum()
"""


def test_a_loss_module_takes_the_route_most_of_its_losses_take(tmp_path: Path) -> None:
    """Two GRPO losses beside a leave-one-out baseline offered as an option: the module is GRPO's."""
    result = classify_path(write(tmp_path, "losses.py", GRPO_LOSSES_WITH_A_BASELINE))
    assert (result.primary, result.role) == ("GRPO", "component")
    assert result.labels[:2] == ["GRPO", "PPO"]


def test_a_rollout_function_that_steps_an_environment_is_online_rl(tmp_path: Path) -> None:
    result = classify_path(write(tmp_path, "train.py", MULTI_TURN_ROLLOUT))
    assert result.primary == "ONLINE_RL" and result.labels == ["ONLINE_RL", "GRPO"]
    assert result.stages[0].interactive is True
    assert any(
        f.detector == "MultiTurnLoop" and f.excerpt.startswith("for turn in range(8)")
        for f in result.findings
    )


def test_hand_written_losses_name_their_stage(tmp_path: Path) -> None:
    result = classify_path(write(tmp_path, "dpo.py", HAND_WRITTEN_DPO))
    assert (result.primary, result.stages[0].kind) == ("DPO", "dpo")
    assert result.stages[0].evidence[0].excerpt.startswith("loss = -F.logsigmoid")


TRAINED_BY_ANY_NAME = """
import torch
import torch.nn.functional as F
def train(base, network, rm, data):
    lm_opt = torch.optim.AdamW(lora_parameters(base), lr=1e-4)
    q_opt = torch.optim.Adam(network.parameters(), lr=1e-3)
    rm_opt = torch.optim.Adam(rm.parameters(), lr=1e-5)
    for batch in data:
        _, lm_loss = base(batch.x, batch.y)
        lm_loss.backward()
        lm_opt.step()
        q = network(batch.state)
        td_loss = F.smooth_l1_loss(q, batch.target)
        td_loss.backward()
        q_opt.step()
        _, rm_loss = rm(batch.chosen, batch.rejected)
        rm_loss.backward()
        rm_opt.step()
"""


def test_the_module_an_optimiser_trains_returns_its_loss_whatever_its_name(tmp_path: Path) -> None:
    # ``base`` returns its own loss for its targets: a language model's. ``network``'s output is
    # regressed on targets, and ``rm`` is a reward model's: losses whose form is not read
    result = classify_path(write(tmp_path, "train.py", TRAINED_BY_ANY_NAME))
    kinds = {f.excerpt.split(".")[0].strip(): f.kind for f in result.findings if f.signal == "gradient_step"}
    assert (kinds["lm_loss"], kinds["td_loss"], kinds["rm_loss"]) == ("sft", None, None), kinds


REMOTE_GROUP_UPDATE = """
import torch
from learner_client import RemoteLearner

def train(cfg, load_prompts, check_answer):
    learner = RemoteLearner(cfg.url)
    for prompts in load_prompts("train.jsonl"):
        completions, logprobs = learner.generate(prompts, n=cfg.group_size)
        rewards = torch.tensor([[check_answer(p, c) for c in g] for p, g in zip(prompts, completions)])
        advantages = (rewards - rewards.mean(dim=1, keepdim=True)) / (rewards.std(dim=1, keepdim=True) + 1e-4)
        learner.update(completions, logprobs=logprobs, advantages=advantages.flatten())
"""


def test_an_update_handed_the_file_s_advantages_takes_their_family(tmp_path: Path) -> None:
    result = classify_path(write(tmp_path, "train.py", REMOTE_GROUP_UPDATE))
    assert (result.primary, result.role) == ("GRPO", "training")


def test_a_reward_conditioned_policy_is_no_reward_model(tmp_path: Path) -> None:
    # (a Decision Transformer conditioned on returns; a transformer named a reward transformer is one)
    source = (
        "import lightning as L\nfrom dt import RewardConditionedTransformer\n"
        "L.Trainer().fit(RewardConditionedTransformer(cfg), loader)\n"
    )
    assert classify_path(write(tmp_path, "train.py", source)).primary != "REWARD_MODEL"


def test_files_that_train_nothing_get_a_role(tmp_path: Path) -> None:
    evaluation = classify_path(write(tmp_path, "eval.py", EVAL_SCRIPT))
    generation = classify_path(write(tmp_path, "gen.py", DATA_GENERATION))
    nothing = classify_path(write(tmp_path, "util.py", "def add(a, b):\n    return a + b\n"))
    assert (evaluation.primary, evaluation.role) == ("EVAL_ONLY", "eval")
    assert (generation.primary, generation.role) == ("DISTILLATION", "data_generation")
    assert (nothing.primary, nothing.role, nothing.findings) == ("NONE_TRAINING", "none", [])


def test_a_route_chosen_by_a_flag_is_config_dependent(tmp_path: Path) -> None:
    result = classify_path(write(tmp_path, "run.py", DISPATCH))
    assert (result.primary, result.role) == ("CONFIG_DEPENDENT", "launcher")
    assert result.possible_routes == ["DPO", "GRPO", "SFT"] and result.default_route == "SFT"


EVALUATION_OF_A_STAGE = """
import argparse
from peft import PeftModel
from transformers import AutoModelForCausalLM

parser = argparse.ArgumentParser()
parser.add_argument("--stage", choices=["dpo", "grpo"], required=True)
args = parser.parse_args()
base = AutoModelForCausalLM.from_pretrained("base")
model = PeftModel.from_pretrained(base, f"outputs/{args.stage}")
right = 0
for question, answer in items:
    out = model.generate(**tok(question, return_tensors="pt"), max_new_tokens=8, do_sample=False)
    right += tok.decode(out[0]).strip() == answer
print("accuracy", right / len(items))
"""


def test_a_flag_naming_routes_in_an_evaluation_picks_the_model_evaluated(tmp_path: Path) -> None:
    # ``--stage dpo|grpo`` picks which trained adapter is scored: the file evaluates, it runs no route
    result = classify_path(write(tmp_path, "eval_stage.py", EVALUATION_OF_A_STAGE))
    assert (result.primary, result.role, result.possible_routes) == ("EVAL_ONLY", "eval", [])
    # the same option in a file that trains behind it stays a launcher
    launcher = classify_path(write(tmp_path, "run.py", DISPATCH + "\nprint(model.generate(x))\n"))
    assert (launcher.primary, launcher.role) == ("CONFIG_DEPENDENT", "launcher")
    # or that hands it on to the training script it starts, or runs a trainer it looks up by it
    launched = EVALUATION_OF_A_STAGE.replace(
        "right = 0\n",
        "import subprocess\nsubprocess.run(['accelerate', 'launch', 'train.py', args.stage])\nright = 0\n",
    )
    assert classify_path(write(tmp_path, "launch.py", launched)).primary == "CONFIG_DEPENDENT"
    looked_up = EVALUATION_OF_A_STAGE.replace(
        "right = 0\n", "getattr(trl, args.stage.upper() + 'Trainer')(model=base).train()\nright = 0\n"
    )
    assert classify_path(write(tmp_path, "lookup.py", looked_up)).primary == "CONFIG_DEPENDENT"
    # subcommands named for routes that only evaluate a model each
    subcommands = (
        "import click\nfrom transformers import pipeline\n@click.group()\ndef cli():\n    pass\n"
        "@cli.command(name='sft')\ndef eval_sft():\n    print(pipeline('text-generation', 'out/sft')('Hi'))\n"
        "@cli.command(name='dpo')\ndef eval_dpo():\n    print(pipeline('text-generation', 'out/dpo')('Hi'))\n"
    )
    assert classify_path(write(tmp_path, "evals.py", subcommands)).primary == "EVAL_ONLY"


ADVANTAGES_BY_SETTING = """
import torch

def learn(args, logps, old_logps, rewards, values, optimizer):
    ratio = torch.exp(logps - old_logps)
    if args.critic_type == "ppo":
        gae = rewards - values
        clipped = -torch.min(ratio * gae, torch.clamp(ratio, 0.8, 1.2) * gae).mean()
        clipped.backward()
    elif args.critic_type == "grpo":
        grouped = rewards.view(-1, args.group)
        advantages = (grouped - grouped.mean(dim=1, keepdim=True)) / (grouped.std(dim=1, keepdim=True) + 1e-6)
        loss = -(ratio * advantages.view(-1)).mean()
        loss.backward()
    optimizer.step()
"""


def test_a_setting_compared_with_two_routes_chooses_only_where_the_file_trains_both(tmp_path: Path) -> None:
    both = classify_path(write(tmp_path, "learner.py", ADVANTAGES_BY_SETTING))
    assert both.primary == "CONFIG_DEPENDENT" and both.possible_routes == ["GRPO", "PPO"]
    # the same setting beside one route's training only (a template's mode): not a choice of route
    ppo = (
        "        gae = rewards - values\n"
        "        clipped = -torch.min(ratio * gae, torch.clamp(ratio, 0.8, 1.2) * gae).mean()\n"
        "        clipped.backward()\n"
    )
    assert ppo in ADVANTAGES_BY_SETTING
    one = ADVANTAGES_BY_SETTING.replace(ppo, "        raise NotImplementedError\n")
    single = classify_path(write(tmp_path, "grpo.py", one))
    assert single.primary == "GRPO"


def test_launchers_in_yaml_and_shell(tmp_path: Path) -> None:
    llamafactory = write(
        tmp_path, "qwen_dpo.yaml", "model_name_or_path: Qwen/Qwen3-0.6B\nstage: dpo\ndo_train: true\n"
    )
    axolotl = write(tmp_path, "axolotl.yml", "base_model: m\ndatasets:\n  - path: d\n")
    shell = write(
        tmp_path,
        "run.sh",
        "#!/bin/bash\ntrl sft --model_name_or_path m --output_dir sft\n"
        "python -m verl.trainer.main_ppo \\\n  algorithm.adv_estimator=grpo \\\n"
        "  actor_rollout_ref.rollout.multi_turn.enable=true\n",
    )
    verl = write(
        tmp_path,
        "verl.sh",
        "adv_estimator=grpo\nexport LOSS=gspo\n"
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=${adv_estimator} \\\n"
        "  actor_rollout_ref.actor.policy_loss.loss_mode=$LOSS\n",
    )
    assert classify_path(verl).labels == ["GRPO"]
    arrays = write(
        tmp_path,
        "arrays.sh",
        "est=rloo\nALGO=(\n  algorithm.adv_estimator=$est\n  algorithm.use_kl_in_reward=False\n)\n"
        'python3 -m verl.trainer.main_ppo "${ALGO[@]}" trainer.total_epochs=1\n',
    )
    assert classify_path(arrays).labels == ["PPO"] and "rloo" in classify_path(arrays).findings[0].message
    (tmp_path / "scripts").mkdir()
    write(tmp_path, "train_loop.py", MULTI_TURN_ROLLOUT)
    launch = write(
        tmp_path,
        "scripts/launch.sh",
        "accelerate launch --num_processes 8 train_loop.py --lr 1e-6\npython ../../outside.py\n",
    )
    assert classify_path(launch).labels == ["ONLINE_RL"]
    assert classify_path(launch).findings[0].message == "runs train_loop.py (ONLINE_RL)"
    doubling = write(tmp_path, "bomb.sh", "A=x\n" + "A=$A$A\n" * 64 + "echo $A\n")
    assert classify_path(doubling).primary == "NONE_TRAINING"
    assert classify_path(llamafactory).labels == ["DPO"]
    assert classify_path(axolotl).primary == "SFT"
    recipe = write(tmp_path, "sft.yaml", "model_name_or_path: m\nlearning_rate: 4.0e-05\npacking: false\n")
    assert classify_path(recipe).labels == ["SFT"]
    result = classify_path(shell)
    assert (result.primary, result.role) == ("ONLINE_RL", "launcher")
    assert result.possible_routes == ["SFT", "ONLINE_RL", "GRPO"]  # the estimator overrides main_ppo's PPO
    bad = classify_path(write(tmp_path, "bad.yaml", "stage: [unclosed\n"))
    assert (bad.error or "").startswith("not valid YAML")


def test_a_yaml_launcher_holding_itself_or_shared_anchors_ends(tmp_path: Path) -> None:
    """A mapping that holds itself through an alias, or aliases nested twenty deep, is read in bounds."""
    looped = write(tmp_path, "loop.yaml", "run: &a {stage: dpo, again: *a}\n")
    assert classify_path(looped).labels == ["DPO"]
    laughs = "a: &a {x: 1, y: 2}\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} {{p: *{chr(97 + i)}, q: *{chr(97 + i)}}}\n" for i in range(20)
    )
    assert classify_path(write(tmp_path, "laughs.yaml", laughs + "stage: sft\n")).labels == ["SFT"]


def test_classify_command_prints_json_lines_and_a_table(tmp_path: Path) -> None:
    write(tmp_path, "train.py", SFT_THEN_GRPO)
    write(tmp_path, "eval.py", EVAL_SCRIPT)
    (tmp_path / "notes.txt").write_text("not code")
    result = CliRunner().invoke(main, ["classify", "--json", "-j", "1", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [(Path(r["path"]).name, r["primary"]) for r in lines] == [
        ("eval.py", "EVAL_ONLY"),
        ("train.py", "GRPO"),
    ]
    stage = lines[1]["stages"][1]
    assert stage["kind"] == "grpo" and stage["evidence"][0]["detector"] == "TrainerConstruction"
    assert set(lines[1]) >= {
        "path",
        "labels",
        "primary",
        "role",
        "stages",
        "possible_routes",
        "default_route",
        "error",
    }
    table = CliRunner().invoke(main, ["classify", "-v", "-j", "1", str(tmp_path / "train.py")])
    assert table.exit_code == 0 and "GRPO" in table.output and "TrainerConstruction" in table.output
    missing = CliRunner().invoke(main, ["classify", str(tmp_path / "absent.py")])
    assert missing.exit_code == 0 and "absent.py" in missing.output
    assert CliRunner().invoke(main, ["classify", str(tmp_path / "notes.txt")]).exit_code == 0


def test_results_are_cached_by_content_and_analyzer_version(tmp_path: Path) -> None:
    train = write(tmp_path, "train.py", SFT_THEN_GRPO)
    copy = write(tmp_path, "copy.py", SFT_THEN_GRPO)
    first = CliRunner().invoke(main, ["classify", "--json", "-j", "1", str(train)])
    store = Path(os.environ["XDG_CACHE_HOME"]) / "arb-audit" / "classify.duckdb"
    with RunStore.open(store, read_only=True) as cache:
        assert cache.con.execute("SELECT count(*) FROM classifications").fetchone() == (1,)
    again = CliRunner().invoke(main, ["classify", "--json", "-j", "1", str(copy)])
    assert json.loads(again.output) == {**json.loads(first.output), "path": str(copy)}  # from the cache
    uncached = CliRunner().invoke(main, ["classify", "--json", "--no-cache", str(copy)])
    assert json.loads(uncached.output) == json.loads(again.output)
    copy.write_text(SFT_THEN_GRPO.replace("GRPOTrainer", "DPOTrainer"))
    changed = CliRunner().invoke(main, ["classify", "--json", "-j", "1", str(copy)])
    assert json.loads(changed.output)["primary"] == "DPO"
    with RunStore.open(store, read_only=True) as cache:
        assert cache.con.execute("SELECT count(*) FROM classifications").fetchone() == (2,)


AGENT_SCRIPTS = {
    "hf_trainer_sft": (
        "from transformers import AutoModelForCausalLM, DataCollatorForLanguageModeling, Trainer\n"
        "model = AutoModelForCausalLM.from_pretrained(base)\n"
        "collator = DataCollatorForLanguageModeling(tok, mlm=False)\n"
        "Trainer(model=model, train_dataset=ds, data_collator=collator).train()\n",
        ["SFT"],
    ),
    "custom_grpo_loop": (
        "import torch\n\ndef reward_fn(text, answer):\n    return float(answer in text)\n\n"
        "for step in range(100):\n"
        "    outs = policy.generate(prompts, do_sample=True, num_return_sequences=8)\n"
        "    rewards = torch.tensor([reward_fn(o, a) for o, a in zip(outs, answers)])\n"
        "    rewards = rewards.view(-1, 8)\n"
        "    mean, std = rewards.mean(dim=1, keepdim=True), rewards.std(dim=1, keepdim=True)\n"
        "    adv = (rewards - mean) / (std + 1e-6)\n"
        "    loss = -(adv.flatten() * logprobs(policy, outs)).mean()\n"
        "    loss.backward()\n    optimizer.step()\n",
        ["GRPO"],
    ),
    "classic_trl_ppo": (
        "from trl import PPOConfig, PPOTrainer\n"
        "ppo_trainer = PPOTrainer(PPOConfig(), model, ref_model, tok)\n"
        "for batch in ppo_trainer.dataloader:\n"
        "    responses = ppo_trainer.generate(batch['query'])\n"
        "    stats = ppo_trainer.step(batch['query'], responses, scores)\n",
        ["PPO"],
    ),
    "reward_model_with_trainer": (
        "from transformers import AutoModelForSequenceClassification, Trainer\n"
        "rm = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)\n"
        "Trainer(model=rm, train_dataset=pairs).train()\n",
        ["REWARD_MODEL"],
    ),
    "env_rl_loop": (
        "import textworld\n\ndef compute_reward(done, won):\n    return 1.0 if won else 0.0\n\n"
        "for episode in range(1000):\n    obs = env.reset()\n    for turn in range(20):\n"
        "        action = agent.generate(obs)\n"
        "        obs, score, done, info = env.step(action)\n"
        "    reward = compute_reward(done, info['won'])\n"
        "    loss = reinforce_loss(reward)\n    loss.backward()\n",
        ["ONLINE_RL", "PPO"],
    ),
}


@pytest.mark.parametrize("name", sorted(AGENT_SCRIPTS))
def test_pipelines_as_agents_write_them(tmp_path: Path, name: str) -> None:
    code, labels = AGENT_SCRIPTS[name]
    assert classify_path(write(tmp_path, f"{name}.py", code)).labels == labels


@settings(max_examples=300, deadline=None)
@given(text=st.text(max_size=400), yaml=st.booleans())
def test_launcher_parsing_never_raises(text: str, yaml: bool) -> None:
    source = SourceFile("x.yaml", "yaml", text, None) if yaml else SourceFile("x.sh", "shell", text, None)
    result = classify_launcher(source)
    assert result.primary in {d.name for d in FILE_LABELS} and result.role in {d.name for d in FILE_ROLES}


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "A=$A$A",
                "ARGS=(",
                ")",
                "x=${A:-grpo}",
                "python -m verl.trainer.main_ppo algorithm.adv_estimator=$x",
                'trl sft "${ARGS[@]}"',
                "--advantage_estimator group_norm \\",
                "  echo 'unclosed",
            ]
        ),
        max_size=40,
    )
)
def test_shell_launchers_of_any_shape_are_read_in_bounded_time(lines: list[str]) -> None:
    result = classify_launcher(SourceFile("run.sh", "shell", "\n".join(lines), None))
    assert set(result.possible_routes) <= {"SFT", "PPO", "GRPO"}


def test_evidence_lines_hold_when_the_same_code_recurs(tmp_path: Path) -> None:
    code = (
        "from trl import SFTTrainer\n# SFTTrainer(model=m).train() in a comment\n"
        "def a():\n    SFTTrainer(model=m).train()\n\ndef b():\n    SFTTrainer(model=m).train()\n"
        "x = SFTTrainer(model=unique)\n"
    )
    result = classify_path(write(tmp_path, "twice.py", code))
    assert [(f.line, f.col) for f in result.stages[0].evidence] == [(4, 4), (7, 4), (8, 4)]


def _stages(tmp_path: Path, code: str) -> list[tuple[str, str, str]]:
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(code))
    return [(s.kind, s.decided_by, s.confidence) for s in classify_path(path).stages]


def test_stage_says_what_decided_it(tmp_path: Path) -> None:
    """The loss a gradient step optimises decides firmly; a trainer's name alone less so."""
    loop = """
        import torch.nn.functional as F
        for batch in loader:
            logits = model(batch["input_ids"]).logits
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch["labels"].view(-1))
            loss.backward()
            optimizer.step()
    """
    assert _stages(tmp_path, loop) == [("sft", "loss", "high")]
    named = """
        from trl import DPOTrainer
        trainer = DPOTrainer(model=m, ref_model=r, train_dataset=d)
        trainer.train()
    """
    assert _stages(tmp_path, named) == [("dpo", "name", "medium")]
    only_named = """
        from trl import DPOTrainer
        trainer = DPOTrainer(model=m, ref_model=r, train_dataset=d)
    """
    assert _stages(tmp_path, only_named) == [("dpo", "name", "low")]


def test_stage_basis_in_json(tmp_path: Path) -> None:
    """``classify --json`` carries decided_by and confidence per stage."""
    path = tmp_path / "t.py"
    path.write_text("from trl import SFTTrainer\nSFTTrainer(model=m, train_dataset=d).train()\n")
    out = CliRunner().invoke(main, ["classify", "--json", "--no-cache", str(path)])
    stage = json.loads(out.output.splitlines()[0])["stages"][0]
    assert (stage["decided_by"], stage["confidence"]) == ("name", "medium")


def test_workers_forked_from_a_large_process_still_classify(tmp_path: Path) -> None:
    """A worker's memory bound is on top of what it maps already: forked from a process holding more
    than the bound (the demo after loading torch), it must still load libcst and classify."""
    import mmap

    from arb_audit.analyzer.batch import WORKER_MEMORY_BYTES, classify_many

    path = tmp_path / "t.py"
    path.write_text("from trl import SFTTrainer\nSFTTrainer(model=m, train_dataset=d).train()\n")
    reserved = mmap.mmap(-1, WORKER_MEMORY_BYTES + 2**30, prot=mmap.PROT_READ)  # address space, no memory
    try:
        [result] = list(classify_many([path], jobs=1))
    finally:
        reserved.close()
    assert result.error is None and result.primary == "SFT"


def test_a_loss_known_only_from_a_model_forward_does_not_outrank_the_trainer_named(tmp_path: Path) -> None:
    # trlx's ILQL trainer: the loss comes out of the model and a method loss, neither of a known form;
    # the trainer the framework table knows says what it trains
    code = textwrap.dedent(
        """
        from trlx.trainer.accelerate_ilql_trainer import AccelerateILQLTrainer

        class MyILQL(AccelerateILQLTrainer):
            def loss(self, batch):
                logits, qs, target_qs, vs = self.model(input_ids=batch.input_ids)
                return self.ilql.loss((logits, (qs, target_qs, vs)), batch)
        """
    )
    result = classify_path(write(tmp_path, "ilql.py", code))
    assert [(s.kind, s.variant) for s in result.stages] == [("ppo", "ilql")]
    # alone, the same forward-only loss is a supervised one
    alone = classify_path(write(tmp_path, "alone.py", code.replace("AccelerateILQLTrainer", "BaseTrainer")))
    assert [s.kind for s in alone.stages] == ["sft"]


def test_a_policy_model_s_own_language_model_loss_stays_supervised(tmp_path: Path) -> None:
    # "policy" names the model, not the loss: only an identifier that names a policy or value loss
    # (policy_loss, compute_value_loss) says policy gradient when the form is elsewhere
    code = (
        "for batch in loader:\n    loss = policy(**batch).loss\n    loss.backward()\n    optimizer.step()\n"
    )
    result = classify_path(write(tmp_path, "sft.py", code))
    assert [s.kind for s in result.stages] == ["sft"]


def test_a_user_turn_the_code_writes_is_the_world_s_answer_one_a_person_types_is_a_demo(
    tmp_path: Path,
) -> None:
    game = textwrap.dedent(
        """
        async def rollout(client, game, messages):
            while not game.over:
                reply = await client.chat.completions.create(model="policy", messages=messages)
                apply_move(game, reply.choices[0].message.content)
                messages.append({"role": "user", "content": render_board(game)})
        """
    )
    demo = textwrap.dedent(
        """
        while True:
            reply = model.generate(tokenizer.apply_chat_template(messages, return_tensors="pt"))
            messages.append({"role": "user", "content": input("> ")})
        """
    )
    assert classify_path(write(tmp_path, "rollout.py", game)).primary == "ONLINE_RL"
    assert classify_path(write(tmp_path, "chat.py", demo)).primary != "ONLINE_RL"


def test_advantages_handed_on_through_a_generator_take_the_file_s_group_relative_estimate(
    tmp_path: Path,
) -> None:
    # the loss slice cannot follow advantages yielded by a rollout generator; the file's only estimate
    # centres each prompt's sampled rewards on their own mean, so the step is GRPO (Dr. GRPO-like)
    code = textwrap.dedent(
        """
        import torch

        def batches(policy, prompts):
            for prompt in prompts:
                samples, rewards = sample(policy, prompt, num_samples=16)
                mu = rewards.mean()
                advantages = rewards - mu
                yield samples, advantages

        for samples, advantages in batches(policy, prompts):
            logp = policy.log_probs(samples)
            loss = -(logp * advantages).mean()
            loss.backward()
            optimizer.step()
        """
    )
    result = classify_path(write(tmp_path, "rl.py", code))
    assert [s.kind for s in result.stages] == ["grpo"]
    # a separate baseline beside it leaves the plain policy gradient (PPO family)
    mixed = code.replace(
        "yield samples", "baseline = running.mean()\n        adv = rewards - baseline\n        yield samples"
    )
    result = classify_path(write(tmp_path, "mixed.py", mixed))
    assert [s.kind for s in result.stages] == ["ppo"]


def test_a_shell_launcher_follows_scripts_it_runs_through_environment_settings_and_other_scripts(
    tmp_path: Path,
) -> None:
    (tmp_path / "scripts").mkdir()
    write(tmp_path, "train_loop.py", MULTI_TURN_ROLLOUT)
    inner = write(
        tmp_path,
        "scripts/pipeline.sh",
        "ACCELERATE_LOG_LEVEL=info accelerate launch --config_file z3.yaml train_loop.py cfg.yaml\n",
    )
    assert classify_path(inner).labels == ["ONLINE_RL"]
    outer = write(
        tmp_path,
        "iterate.sh",
        "for i in 1 2 3; do\n  bash scripts/generate.sh --iter $i\n"
        "  bash scripts/pipeline.sh --iter $i\ndone\n",
    )
    result = classify_path(outer)
    assert (result.primary, result.role) == ("ONLINE_RL", "launcher")
    assert result.findings[0].message == "runs pipeline.sh (ONLINE_RL)"
    # scripts that run each other are followed a bounded number of times
    write(tmp_path, "scripts/a.sh", "bash scripts/b.sh\n")
    loop = write(tmp_path, "scripts/b.sh", "bash scripts/a.sh\n")
    assert classify_path(loop).primary == "NONE_TRAINING"


def test_a_project_trainer_fed_masked_preference_pairs_compares_them(tmp_path: Path) -> None:
    # LLaVA-style DPO: a Trainer subclass of another file, handed chosen/rejected pairs whose prompt
    # positions are masked; transformers' own Trainer on the same data trains one target's loss
    code = (
        "from transformers import TrainingArguments\nfrom llava.train.llava_trainer import LLaVATrainer\n"
        "def collate(rows):\n    chosen_labels = pad([r['chosen'] for r in rows], -100)\n"
        "    rejected_labels = pad([r['rejected'] for r in rows], -100)\n"
        "    return dict(chosen_labels=chosen_labels, rejected_labels=rejected_labels)\n"
        "def train():\n    args = TrainingArguments('out')\n"
        "    trainer = LLaVATrainer(model=model, args=args, train_dataset=data)\n    trainer.train()\n"
    )
    result = classify_path(write(tmp_path, "train_dpo.py", code))
    assert (result.primary, result.stages[0].decided_by) == ("DPO", "data")
    plain = code.replace(
        "from llava.train.llava_trainer import LLaVATrainer", "from transformers import Trainer"
    )
    assert (
        classify_path(write(tmp_path, "plain.py", plain.replace("LLaVATrainer(", "Trainer("))).primary
        == "SFT"
    )


def test_an_estimator_named_for_its_family_serves_it_unless_a_script_only_looks(tmp_path: Path) -> None:
    # a library module building advantages with another file's group estimator serves GRPO; a script
    # calling it to compare reward shapings, stepping nothing, trains nothing
    library = (
        "from .advantages import group_advantages\n"
        "def build(rewards, group_size):\n    adv = group_advantages(rewards, group_size)\n    return adv\n"
    )
    assert classify_path(write(tmp_path, "scalar.py", library)).primary == "GRPO"
    script = (
        "from rl.rewards import compute_grpo_rewards\n"
        "if __name__ == '__main__':\n"
        "    advantages, details = compute_grpo_rewards(['a', 'b'], shaping='graduated')\n"
        "    print(advantages)\n"
    )
    assert classify_path(write(tmp_path, "compare.py", script)).primary == "NONE_TRAINING"


def test_a_supervised_loss_in_code_named_for_a_process_reward_model_trains_a_step_scorer(
    tmp_path: Path,
) -> None:
    # Math-Shepherd style: the causal LM's cross-entropy at the step tags only
    code = (
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "step_tag_id = tokenizer.encode(f' {step_tag}')[-1]\n"
        "model = AutoModelForCausalLM.from_pretrained(path)\n"
        "trainer = Trainer(model=model, args=TrainingArguments('out'), train_dataset=data)\n"
        "trainer.train()\n"
    )
    result = classify_path(write(tmp_path, "finetune.py", code))
    assert (result.primary, result.stages[0].variant) == ("REWARD_MODEL", "process")
    # a step of no known loss beside a PRM's name may train a policy against it: still unknown
    unknown = "prm = load_prm(path)\nloss = objective(policy, prm)\nloss.backward()\noptimizer.step()\n"
    assert classify_path(write(tmp_path, "policy.py", unknown)).primary == "UNKNOWN"
    # what else a file is, its reward model's names do not change (an evaluation scoring with an ORM)
    generating = "from vllm import LLM\nllm = LLM('m')\nouts = llm.generate(prompts)\n"
    plain = classify_path(write(tmp_path, "gen.py", generating))
    scored = classify_path(write(tmp_path, "gen_orm.py", generating + "orm_scores = orm_model(outs)\n"))
    assert (scored.primary, scored.role) == (plain.primary, plain.role)


def test_a_step_of_no_known_loss_that_trains_a_scorer_is_a_reward_model(tmp_path: Path) -> None:
    # PRIME's implicit process reward: the worker's loss is of no recognised form, but the optimiser
    # it steps is the reward model's
    code = (
        "def update(self, batch):\n    loss = objective(self.rm(batch), batch['acc'])\n    loss.backward()\n"
        "    self.reward_optimizer.step()\n"
    )
    result = classify_path(write(tmp_path, "worker.py", code))
    assert (result.primary, result.role) == ("REWARD_MODEL", "training")
    plain = classify_path(write(tmp_path, "plain.py", code.replace("reward_optimizer", "optimizer")))
    assert plain.primary == "UNKNOWN"


def test_a_shell_command_picks_the_route_of_the_script_it_runs(tmp_path: Path) -> None:
    write(
        tmp_path,
        "train.py",
        "from trl import DPOTrainer, SFTTrainer\n"
        "if args.use_dpo:\n    trainer = DPOTrainer(model=m)\nelse:\n    trainer = SFTTrainer(model=m)\n"
        "trainer.train()\n",
    )
    assert classify_path(tmp_path / "train.py").primary == "CONFIG_DEPENDENT"
    switched = classify_path(write(tmp_path, "dpo.sh", "python train.py --use_dpo True --beta 0.1\n"))
    assert switched.labels == ["DPO"]
    plain = classify_path(write(tmp_path, "plain.sh", "python train.py --beta 0.1\n"))
    assert plain.primary == "CONFIG_DEPENDENT"


def test_command_lines_written_for_a_scheduler_decide_only_a_file_that_trains_nothing(tmp_path: Path) -> None:
    launcher = (
        "def submit(cluster, n):\n"
        "    cmd = f'uv run python /code/training/start_grpo.py ++grpo.num_generations={n}'\n"
        "    cluster.run(cmd)\n"
    )
    result = classify_path(write(tmp_path, "pipeline.py", launcher))
    assert (result.primary, result.role) == ("GRPO", "launcher")
    assert result.findings[0].line == 2
    trains = launcher + "for batch in loader:\n    loss = model(**batch).loss\n    loss.backward()\n"
    assert classify_path(write(tmp_path, "both.py", trains)).primary == "SFT"


def test_a_rollout_function_serves_rl_unless_the_script_reports_a_metric_with_it(tmp_path: Path) -> None:
    component = (
        "class MathEnv(BaseEnv):\n"
        "    async def collect_trajectories(self, item):\n"
        "        out = await self.server.chat_completion(messages=item, n=self.group_size)\n"
        "        return [(o, self.score(o)) for o in out]\n"
    )
    assert classify_path(write(tmp_path, "env.py", component)).primary == "GRPO"
    evaluation = component + (
        "if __name__ == '__main__':\n"
        "    rows = run(MathEnv().collect_trajectories, items)\n"
        "    acc = sum(r for _, r in rows) / len(rows)\n"
        "    print(f'accuracy: {acc}')\n"
    )
    assert classify_path(write(tmp_path, "eval.py", evaluation)).primary == "EVAL_ONLY"


def test_a_shell_launcher_reads_quoted_settings_and_commands_behind_a_wrapper(tmp_path: Path) -> None:
    write(tmp_path, "train_loop.py", MULTI_TURN_ROLLOUT)
    quoted = write(
        tmp_path,
        "quoted.sh",
        'LAUNCH_CMD="deepspeed --num_gpus 8"\n${LAUNCH_CMD} train_loop.py --lr 1e-6\n',
    )
    assert classify_path(quoted).labels == ["ONLINE_RL"]
    wrapped = write(
        tmp_path, "slurm.sh", "srun -p gpu --gres=gpu:8 torchrun --nproc_per_node 8 train_loop.py\n"
    )
    assert classify_path(wrapped).labels == ["ONLINE_RL"]


def test_a_launcher_of_evaluations_only_is_an_evaluation(tmp_path: Path) -> None:
    write(
        tmp_path,
        "run_eval.py",
        "from vllm import LLM\nllm = LLM('m')\nouts = llm.generate(prompts)\n"
        "acc = sum(o == a for o, a in zip(outs, answers)) / len(answers)\nprint(f'accuracy: {acc}')\n",
    )
    assert classify_path(tmp_path / "run_eval.py").primary == "EVAL_ONLY"
    sweep = write(tmp_path, "sweep.sh", "for d in gsm8k math; do\n  python run_eval.py --dataset $d\ndone\n")
    result = classify_path(sweep)
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")
    write(tmp_path, "train_loop.py", MULTI_TURN_ROLLOUT)
    both = write(tmp_path, "both.sh", "python train_loop.py\npython run_eval.py\n")
    assert classify_path(both).primary == "ONLINE_RL"  # the evaluation after training is no stage


def test_an_evaluation_command_given_an_estimator_is_read_without_error() -> None:
    # an evaluation entry (no route) beside an estimator setting on one line
    routes = command_routes("python3 -m verl.trainer.main_generation algorithm.adv_estimator=grpo")
    assert "EVAL_ONLY" in routes


def test_a_sweep_reads_the_script_it_runs_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "train_loop.py", MULTI_TURN_ROLLOUT)
    sweep = write(tmp_path, "sweep.sh", "".join(f"python train_loop.py --seed {i}\n" for i in range(5)))
    read: list[str] = []
    real = read_source

    def counting(path: Path, display: str | None = None) -> SourceFile:
        read.append(Path(path).name)
        return real(path, display)

    monkeypatch.setattr(launchers, "read_source", counting)
    result = classify_path(sweep)
    assert result.primary == "ONLINE_RL" and len(result.findings) == 5
    assert read == ["train_loop.py"]


def test_a_shell_launcher_finds_the_script_it_runs_from_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path, "repo/src/train/loop.py", MULTI_TURN_ROLLOUT)
    nested = write(
        tmp_path, "repo/exp/runs/hh/train.sh", "deepspeed --include localhost:0 src/train/loop.py --lr 1e-6\n"
    )
    assert classify_path(nested).labels == ["ONLINE_RL"]
    # the agent's absolute path, and options gathered with += and positional defaults
    absolute = write(
        tmp_path,
        "repo/exp/runs/hh/abs.sh",
        'BASE=${1-"/home/me/repo"}\nOPTS=""\nOPTS+=" --lr 1e-6"\n'
        'CMD="torchrun --nproc_per_node 8 ${BASE}/src/train/loop.py ${OPTS}"\nCODE_BASE=HF ${CMD}\n',
    )
    assert classify_path(absolute).labels == ["ONLINE_RL"]
    # nothing above the neighbourhood (three folders up) is read
    far = write(tmp_path, "repo/a/b/c/d/far.sh", "python src/train/loop.py\n")
    assert classify_path(far).primary == "NONE_TRAINING"


def test_a_framework_command_given_a_config_the_script_does_not_fix_is_config_dependent(
    tmp_path: Path,
) -> None:
    result = classify_path(write(tmp_path, "run.sh", "yaml=$1\nllamafactory-cli train ${yaml}\n"))
    assert (result.primary, result.role) == ("CONFIG_DEPENDENT", "launcher")
    assert result.default_route == "SFT"
    write(tmp_path, "dpo.yaml", "stage: dpo\nmodel_name_or_path: m\n")
    fixed = classify_path(write(tmp_path, "fixed.sh", "llamafactory-cli train dpo.yaml\n"))
    assert fixed.primary == "DPO"
    # Hydra's option naming the config, in one word with its value
    hydra = "python3 -m verl.trainer.main_ppo --config-path=conf --config-name=$1 trainer.n_gpus_per_node=8\n"
    given = classify_path(write(tmp_path, "hydra.sh", hydra))
    assert (given.primary, given.default_route) == ("CONFIG_DEPENDENT", "PPO")


def test_a_step_of_unknown_loss_on_an_environments_episodes_is_online_rl(tmp_path: Path) -> None:
    code = (
        "from agents.trainers import ActorCriticTrainer\n"
        "def train_loop(env, agent, iterations):\n"
        "    trainer = ActorCriticTrainer(agent=agent, lm_lr=1e-5)\n"
        "    for i in range(iterations):\n"
        "        trajectories = batch_interact_environment(agent=agent, env=env, n=64)\n"
        "        buffer.extend(trajectories)\n"
        "        info = trainer.update(buffer)\n"
    )
    result = classify_path(write(tmp_path, "loop.py", code))
    assert (result.primary, result.role) == ("ONLINE_RL", "training")
    assert [(s.kind, s.interactive) for s in result.stages] == [("unknown", True)]
    # the same update on a fixed buffer is an honest unknown
    fixed = code.replace("batch_interact_environment(agent=agent, env=env, n=64)", "load(path)")
    assert classify_path(write(tmp_path, "fixed.py", fixed)).primary == "UNKNOWN"


def test_a_loop_of_this_file_handed_an_environment_is_read_from_its_own_rollouts(tmp_path: Path) -> None:
    code = (
        "import torch\n"
        "from envs import DigitEnvironment\n"
        "def rollout(model, environment):\n"
        "    out = model.generate(environment.prompt(), do_sample=True)\n"
        "    return out, environment.reward(out)\n"
        "def train(model, environment, optimizer, steps):\n"
        "    for step in range(steps):\n"
        "        out, reward = rollout(model, environment)\n"
        "        loss = -(model.log_probs(out).sum() * reward)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "def main():\n"
        "    environment = DigitEnvironment()\n"
        "    train(model, environment, torch.optim.AdamW(model.parameters()), 10)\n"
    )
    # one prompt answered once per sample: the file's own loop says single-turn REINFORCE
    result = classify_path(write(tmp_path, "reinforce.py", code))
    assert (result.primary, result.labels) == ("PPO", ["PPO"])
    # the same call of an imported loop says only that it trains on the environment's episodes
    imported = "from loops import train\n" + code.split("def main():\n")[1].replace("    ", "")
    assert classify_path(write(tmp_path, "run.py", imported)).primary == "ONLINE_RL"


def test_teacher_answers_checked_and_written_as_training_data_are_data_generation(tmp_path: Path) -> None:
    code = (
        "import argparse, json\n"
        "from openai import OpenAI\n"
        "from myproj.evaluation.reward_fn import reward_from_text\n"
        "def main(args):\n"
        "    client = OpenAI()\n"
        "    with open(args.outfile, 'w') as out:\n"
        "        for row in map(json.loads, open(args.infile)):\n"
        "            reply = client.chat.completions.create(model='deepseek-reasoner', messages=[row])\n"
        "            text = reply.choices[0].message.content\n"
        "            row['correct'] = reward_from_text(text, row['answer'])\n"
        "            out.write(json.dumps(row) + '\\n')\n"
        "if __name__ == '__main__':\n"
        "    parser = argparse.ArgumentParser()\n"
        "    parser.add_argument('--infile', default='data/gsm8k/train.jsonl')\n"
        "    parser.add_argument('--outfile', default='data/r1_gsm8k_traces.jsonl')\n"
        "    main(parser.parse_args())\n"
    )
    # the check keeps a teacher's correct traces: rejection sampling, data made to train on
    assert classify_path(write(tmp_path, "traces.py", code)).primary == "DISTILLATION"
    # the same checks of answers written as predictions: an evaluation
    predictions = code.replace("r1_gsm8k_traces", "predictions")
    assert classify_path(write(tmp_path, "answers.py", predictions)).primary == "EVAL_ONLY"
    # a training split's prompts answered and checked, written nowhere named for data: an evaluation
    unnamed = code.replace("r1_gsm8k_traces", "out")
    assert classify_path(write(tmp_path, "unnamed.py", unnamed)).primary == "EVAL_ONLY"


def test_one_statement_naming_a_benchmark_twice_is_one_cue(tmp_path: Path) -> None:
    code = (
        "import json\n"
        "from vllm import LLM\n"
        "bench_prompts = {json.loads(l)['turns'][0] for l in open('mt_bench.jsonl')}\n"
        "seeds = [s for s in map(json.loads, open('seed_instructions.jsonl')) if s not in bench_prompts]\n"
        "outs = LLM('Qwen/Qwen2.5-72B-Instruct').generate(seeds)\n"
        "with open('sft_data/self_instruct_train.jsonl', 'w') as f:\n"
        "    for s, o in zip(seeds, outs):\n"
        "        f.write(json.dumps({'instruction': s, 'output': o.outputs[0].text}) + '\\n')\n"
    )
    # the benchmark read only to leave its prompts out: the name and its file are one cue, and the
    # data written for training outweighs it
    assert classify_path(write(tmp_path, "decontaminated.py", code)).primary == "DISTILLATION"


def test_a_framework_command_whose_key_is_unset_runs_its_default(tmp_path: Path) -> None:
    # the command line is the whole configuration: the framework's default estimator is what ran
    command = "ray job submit -- python3 -m openrlhf.cli.train_ppo_ray --pretrain m --critic_pretrain m\n"
    result = classify_path(write(tmp_path, "ppo.sh", command))
    assert (result.primary, result.default_route) == ("PPO", "PPO")
    # a config file named but not here leaves the route to it
    unread = classify_path(write(tmp_path, "unread.sh", "llamafactory-cli train configs/missing.yaml\n"))
    assert unread.primary == "CONFIG_DEPENDENT"


@pytest.mark.parametrize(
    "setting",
    [
        "trainer.max_turns=$1",
        "trainer.do_search=True",
        "actor_rollout_ref.rollout.agent.max_steps=5",
        "actor_rollout_ref.rollout.agent.default_agent_flow=agent_env_loop",
        "actor_rollout_ref.rollout.multi_turn.enable=true",
        "actor_rollout_ref.rollout.tools.tool_instances.search.class_path=tools.search.Search",
        "actor_rollout_ref.rollout.mode=sync_with_tool",
        "actor_rollout_ref.env.env_addr=http://localhost:36001",
    ],
)
def test_a_multi_turn_setting_makes_a_policy_gradient_command_online_rl(tmp_path: Path, setting: str) -> None:
    command = f"python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo {setting}\n"
    result = classify_path(write(tmp_path, "rl.sh", command))
    assert (result.primary, result.labels) == ("ONLINE_RL", ["ONLINE_RL", "GRPO"])


def test_turn_limits_of_one_or_of_an_evaluation_are_not_online_rl(tmp_path: Path) -> None:
    single = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.max_turns=1\n"
    assert classify_path(write(tmp_path, "one.sh", single)).primary == "GRPO"
    # tools left unset, a rollout mode without them: single-turn still
    unset = "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo rollout.tool_config_path=null\n"
    assert classify_path(write(tmp_path, "unset.sh", unset)).primary == "GRPO"
    plain = (
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo actor_rollout_ref.rollout.mode=sync\n"
    )
    assert classify_path(write(tmp_path, "sync.sh", plain)).primary == "GRPO"
    # a base config defines the tools some launchers switch on; by itself it runs none
    base = (
        "algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  rollout:\n    mode: sync\n"
        "    tools:\n      tool_instances:\n        search:\n          class_path: tools.Search\n"
    )
    assert classify_path(write(tmp_path, "ppo_trainer.yaml", base)).primary == "GRPO"
    write(
        tmp_path, "run_eval.py", "from vllm import LLM\nouts = LLM('m').generate(prompts)\nprint(sum(outs))\n"
    )
    evaluation = classify_path(write(tmp_path, "eval.sh", "python run_eval.py --max_turns 5\n"))
    assert evaluation.primary != "ONLINE_RL"


def test_a_command_written_into_a_variable_by_a_heredoc_is_read(tmp_path: Path) -> None:
    script = (
        "read -r -d '' training_commands <<EOF\n"
        "openrlhf.cli.train_sft\n   --pretrain $POLICY \\\n   --save_path ./ckpt\nEOF\n"
        "deepspeed --module $training_commands\n"
    )
    result = classify_path(write(tmp_path, "iterate.sh", script))
    assert (result.primary, result.role) == ("SFT", "launcher")
    # a heredoc that never ends holds the rest of the script, as bash reads it
    open_ended = classify_path(write(tmp_path, "open.sh", "read -r -d '' cmd <<EOF\ntrl dpo --model m\n"))
    assert open_ended.primary == "NONE_TRAINING"


def test_a_run_of_a_training_script_with_training_switched_off_evaluates(tmp_path: Path) -> None:
    write(
        tmp_path, "train.py", "from trl import SFTTrainer\ntrainer = SFTTrainer(model=m)\ntrainer.train()\n"
    )
    # the last line ends in a backslash: bash still runs the command
    trains = classify_path(write(tmp_path, "train.sh", "python train.py \\\n    --do_train True \\\n"))
    assert trains.labels == ["SFT"]
    predicts = "python train.py \\\n    --do_train False \\\n    --do_predict True \\\n"
    result = classify_path(write(tmp_path, "predict.sh", predicts))
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")


def test_an_environment_driven_by_evaluation_code_is_an_evaluation(tmp_path: Path) -> None:
    env = (
        "class ShopEnv:\n    def reset(self):\n        return self.obs\n"
        "    def step(self, action):\n        return self.obs, self.reward, self.done, {}\n"
    )
    assert classify_path(write(tmp_path, "env.py", env)).primary == "ONLINE_RL"
    benchmark = "from agent_eval.tasks import load_tasks\ntasks = load_tasks('shop')\n" + env
    (tmp_path / "evals").mkdir()
    result = classify_path(write(tmp_path, "evals/bench_env.py", benchmark))
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")
    # run as a script, the benchmark's environment is driven to evaluate
    script = benchmark + "if __name__ == '__main__':\n    print(len(tasks))\n"
    assert classify_path(write(tmp_path, "bench_env.py", script)).primary == "EVAL_ONLY"
    # a library module defining the environment beside evaluation code's helpers is that evaluation's
    assert classify_path(write(tmp_path, "shop_env.py", benchmark)).primary == "EVAL_ONLY"
    # one whose world is a benchmark's tasks (a terminal benchmark's harness), outside evaluation
    # code, serves whoever runs it: an RL environment
    world = "from shop_bench.tasks import load_tasks\ntasks = load_tasks('shop')\n" + env
    library = classify_path(write(tmp_path, "world_env.py", world))
    assert (library.primary, library.role) == ("ONLINE_RL", "component")


def test_an_rl_framework_s_tool_stepping_a_benchmark_s_world_serves_training(tmp_path: Path) -> None:
    """verl's BaseTool runs inside verl's rollouts: a benchmark's package it steps is the training world."""
    tool = (
        "from verl.tools.base_tool import BaseTool\n"
        "from agent_eval.tasks import load_tasks\n"
        "class ShopTool(BaseTool):\n"
        "    async def create(self, instance_id, **kwargs):\n"
        "        self.env = load_tasks('shop')[kwargs['index']]\n"
        "        return instance_id\n"
        "    async def execute(self, instance_id, parameters, **kwargs):\n"
        "        observation = self.env.step(parameters)\n"
        "        return observation, 0.0, {}\n"
    )
    result = classify_path(write(tmp_path, "shop_tool.py", tool))
    assert (result.primary, result.role) == ("ONLINE_RL", "component")
    # (kept among evaluation code, the same tool is that evaluation's)
    (tmp_path / "evals").mkdir()
    assert classify_path(write(tmp_path, "evals/shop_tool.py", tool)).primary == "EVAL_ONLY"


@pytest.mark.parametrize(
    ("test", "default"),
    [
        ("getattr(cfg, 'use_dpo', False)", "PPO"),
        ("hasattr(cfg.training, 'use_dpo') and cfg.training.use_dpo", "PPO"),
        ("cfg.get('use_dpo')", "PPO"),
        # (a flag read bare may be on by default: its config says, not this test)
        ("cfg.use_dpo", None),
        ("getattr(cfg, 'use_dpo', True)", None),
        # (what a dataset holds, not a flag)
        ("hasattr(ds, 'features') and 'chosen' in ds.features", None),
    ],
)
def test_a_flag_off_unless_set_makes_the_else_branch_the_default_route(
    tmp_path: Path, test: str, default: str | None
) -> None:
    code = (
        "from trl import DPOTrainer, PPOTrainer\ncfg = load()\n"
        f"if {test}:\n    DPOTrainer(model=m, train_dataset=d).train()\n"
        "else:\n    PPOTrainer(model=m, train_dataset=d).train()\n"
    )
    result = classify_path(write(tmp_path, "train.py", code))
    assert (result.primary, set(result.possible_routes)) == ("CONFIG_DEPENDENT", {"DPO", "PPO"})
    assert result.default_route == default


def test_a_pretraining_mix_beside_policy_updates_is_part_of_the_rl_stage(tmp_path: Path) -> None:
    """PPO-ptx steps a language-modelling loss after the policy update: the file still runs PPO."""
    agent = (
        "import torch\nimport torch.nn.functional as F\nclass PPOAgent:\n"
        "    def update_policy(self, batch):\n"
        "        ratio = torch.exp(batch['logp'] - batch['old_logp'])\n"
        "        adv = batch['adv']\n"
        "        loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
        "        loss.backward()\n        self.optimizer.step()\n"
        "    def compute_ptx_loss(self, batch):\n"
        "        logits = self.policy(batch['x'])\n"
        "        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch['y'].view(-1))\n"
        "        loss.backward()\n        self.optimizer.step()\n"
    )
    result = classify_path(write(tmp_path, "rl_ppo.py", agent))
    assert (result.primary, [s.kind for s in result.stages]) == ("PPO", ["ppo"])
    alone = (
        "import torch.nn.functional as F\nclass Model:\n    def compute_ptx_loss"
        + agent.split("def compute_ptx_loss")[1]
    )
    result = classify_path(write(tmp_path, "lm.py", alone))
    assert (result.primary, result.stages[0].variant) == ("SFT", None)


def test_a_pretraining_mix_in_an_rl_trainer_whose_update_a_subclass_defines_is_that_rl_stage(
    tmp_path: Path,
) -> None:
    """A base RL trainer computes GAE and steps the ptx loss; its ``rl_step`` is abstract: still PPO."""
    base = (
        "import abc\nimport torch.nn.functional as F\nclass RLTrainer(abc.ABC):\n"
        "    @abc.abstractmethod\n    def rl_step(self, batch):\n        raise NotImplementedError\n"
        "    def rollout(self, prompts):\n        return self.actor.generate(prompts, do_sample=True)\n"
        "    def get_advantages_and_returns(self, values, rewards, gamma, lam):\n"
        "        last = 0.0\n        advantages = []\n"
        "        for t in reversed(range(rewards.size(-1))):\n"
        "            delta = rewards[:, t] + gamma * values[:, t + 1] - values[:, t]\n"
        "            last = delta + gamma * lam * last\n            advantages.append(last)\n"
        "        return advantages\n"
        "    def ptx_step(self, batch):\n"
        "        logits = self.actor(batch['x'])\n"
        "        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), batch['y'].view(-1))\n"
        "        self.actor.backward(loss)\n        self.actor.step()\n"
    )
    result = classify_path(write(tmp_path, "rl_trainer.py", base))
    assert (result.primary, [s.kind for s in result.stages]) == ("PPO", ["ppo"])
    assert result.stages[0].on_policy is True
    # with no sampling, advantages beside an LM step may only filter logged data: plain SFT
    logged = base.replace(
        "        return self.actor.generate(prompts, do_sample=True)\n", "        return prompts\n"
    )
    assert classify_path(write(tmp_path, "filtered_bc.py", logged)).primary == "SFT"


def test_reward_functions_reading_tool_results_serve_online_rl_whatever_checker_they_call(
    tmp_path: Path,
) -> None:
    """A trainer's reward functions score its samples, even when the checker comes from evaluation code."""
    rewards = (
        "import re\nfrom src.evaluation import check_student_answers\n"
        "def reward_correctness(prompts, completions, **kwargs):\n"
        "    finals = [c['messages'][-1]['content'] for c in completions]\n"
        "    has_search = [re.search(r'<search>[\\s\\S]*?</search>', a) is not None for a in finals]\n"
        "    has_info = [re.search(r'<information>(.*?)</information>', a) is not None for a in finals]\n"
        "    ok = check_student_answers(prompts, kwargs['answer'], finals)\n"
        "    return [float(o and not s and not i) for o, s, i in zip(ok, has_search, has_info)]\n"
    )
    result = classify_path(write(tmp_path, "rewards.py", rewards))
    assert (result.primary, result.role) == ("ONLINE_RL", "component")


def test_a_loop_generating_until_a_tool_call_serves_rl_unless_a_script_runs_it(tmp_path: Path) -> None:
    rollout = (
        "from vllm import SamplingParams\n"
        "def generate_with_search(llm, prompts):\n"
        "    params = SamplingParams(temperature=1.0, stop=['<|end_of_query|>'])\n"
        "    for t in range(8):\n"
        "        outs = llm.generate(prompts, params)\n"
        "        prompts = [p + o + retrieve(o) for p, o in zip(prompts, outs)]\n"
        "    return prompts\n"
    )
    assert classify_path(write(tmp_path, "rollout.py", rollout)).primary == "ONLINE_RL"
    script = rollout + "if __name__ == '__main__':\n    rows = generate_with_search(llm, load())\n"
    result = classify_path(write(tmp_path, "eval_search.py", script))
    assert result.primary in ("EVAL_ONLY", "DISTILLATION")


def test_a_negated_log_likelihood_is_supervised_unless_rewards_weight_it(tmp_path: Path) -> None:
    cloning = "loss = -agent.get_log_prob(observation, action).sum(dim=1).mean()\nloss.backward()\n"
    assert classify_path(write(tmp_path, "bc.py", cloning)).primary == "SFT"
    weighted = "loss = -(agent.get_log_prob(observation, action) * rewards).mean()\nloss.backward()\n"
    assert classify_path(write(tmp_path, "pg.py", weighted)).primary != "SFT"


def test_a_config_of_an_llm_judge_is_an_evaluation(tmp_path: Path) -> None:
    judge = "judge_model: gpt-4.1\ntemperature: 0.0\nbench_name: arena\n"
    result = classify_path(write(tmp_path, "bench.yaml", judge))
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")
    # a training config that names a judge for its reward trains
    training = "algorithm:\n  adv_estimator: grpo\nreward_model:\n  judge_model: gpt-4.1\n"
    assert classify_path(write(tmp_path, "rl.yaml", training)).primary == "GRPO"


def test_a_config_naming_its_trainer_class_takes_that_trainers_route(tmp_path: Path) -> None:
    trlx = "train:\n  seq_length: 512\n  trainer: AcceleratePPOTrainer\nmethod:\n  name: ppoconfig\n"
    assert classify_path(write(tmp_path, "ppo.yml", trlx)).labels == ["PPO"]
    generic = "train:\n  trainer: AccelerateTrainer\n"
    assert classify_path(write(tmp_path, "generic.yml", generic)).primary == "NONE_TRAINING"


def test_a_launcher_reads_nothing_above_the_folder_classified_or_its_repository(tmp_path: Path) -> None:
    write(tmp_path, "outside/secret.py", MULTI_TURN_ROLLOUT)
    launcher = "python ../../outside/secret.py\npython " + str(tmp_path / "outside" / "secret.py") + "\n"
    write(tmp_path, "repo/scripts/run.sh", launcher)
    (result,) = classify_many([tmp_path / "repo"])
    assert result.primary == "NONE_TRAINING"
    # what was not read is said, naming the script
    assert result.error is not None and "secret.py: outside the folder a launcher may read" in result.error
    # a launcher given on its own is read within its repository
    (tmp_path / "repo" / ".git").mkdir()
    assert classify_path(tmp_path / "repo" / "scripts" / "run.sh").primary == "NONE_TRAINING"
    # and an audit's folder of a run's files is the boundary it is given
    (alone,) = classify_many(
        [tmp_path / "repo" / "scripts" / "run.sh"], boundary=tmp_path / "repo" / "scripts"
    )
    assert alone.primary == "NONE_TRAINING"


@pytest.mark.parametrize(
    "script",
    [
        "python " + "/x" * 3000 + "/t.py\n",
        "python " + "a" * 300 + ".py\n",
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo rollout.max_turns=\u00b2\n",
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.max_turns="
        + "9" * 5000
        + "\n",
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo rollout.agent_name=null\n",
    ],
)
def test_odd_command_lines_are_read_without_error_and_set_no_turns(tmp_path: Path, script: str) -> None:
    result = classify_path(write(tmp_path, "odd.sh", script))
    assert result.error is None
    assert result.primary in ("GRPO", "NONE_TRAINING")


def test_odd_literals_and_turn_settings_in_yaml_and_python_are_read_without_error(tmp_path: Path) -> None:
    yaml_text = (
        "algorithm:\n  adv_estimator: grpo\nactor_rollout_ref:\n  rollout:\n    multi_turn:\n"
        "      enable: false\n      max_assistant_turns: null\n      max_turns: '\u00b2'\n"
    )
    assert classify_path(write(tmp_path, "verl.yaml", yaml_text)).primary == "GRPO"
    code = (
        'import jsonlines\nwith jsonlines.open(p, mode="\\N{NOPE}") as w:\n    w.write_all(rows)\n'
        'for t in range(3):\n    outs = llm.generate(ps, SamplingParams(stop=["\\N{NOPE}"]))\n'
    )
    result = classify_path(write(tmp_path, "escapes.py", code))
    assert result.error is None and result.primary == "EVAL_ONLY"


def test_only_the_config_a_framework_command_is_given_can_leave_its_route_open(tmp_path: Path) -> None:
    write(tmp_path, "cfg.yaml", "model_name_or_path: m\n")
    result = classify_path(write(tmp_path, "run.sh", "llamafactory-cli train cfg.yaml --output_dir $1\n"))
    assert result.primary == "SFT"


def test_a_log_likelihood_weighted_by_returns_is_no_supervised_loss(tmp_path: Path) -> None:
    code = "import torch\nloss = -(torch.stack(log_probs) * G).sum()\nloss.backward()\noptimizer.step()\n"
    assert classify_path(write(tmp_path, "reinforce.py", code)).primary != "SFT"


def test_a_file_among_evaluation_code_writes_answers_not_a_dataset(tmp_path: Path) -> None:
    script = (
        "from vllm import LLM\nfrom datasets import Dataset\n"
        "outs = LLM('m').generate(questions)\n"
        "Dataset.from_dict({'answer': [o.outputs[0].text for o in outs]}).to_json('out.jsonl')\n"
    )
    generated = classify_path(write(tmp_path / "data", "generate.py", script))
    assert (generated.primary, generated.role) == ("DISTILLATION", "data_generation")
    for folder, name in (("evaluation/open_ended", "gen_answers.py"), ("scripts", "eval_search.py")):
        answered = classify_path(write(tmp_path / folder, name, script))
        assert (answered.primary, answered.role) == ("EVAL_ONLY", "eval")
        assert any(f.signal == "place" for f in answered.findings)


@pytest.mark.parametrize("module", ["torch.distributed.run", "torch.distributed.launch"])
def test_a_launcher_module_runs_the_script_named_after_its_options(tmp_path: Path, module: str) -> None:
    write(tmp_path, "train_dpo.py", "from trl import DPOTrainer\nDPOTrainer(model=m).train()\n")
    command = f"python -m {module} --nproc_per_node=8 --master_port=20001 train_dpo.py --beta 0.1\n"
    assert classify_path(write(tmp_path, "run.sh", command)).primary == "DPO"


def test_a_trainer_with_its_own_loss_built_only_to_evaluate_trains_nothing(tmp_path: Path) -> None:
    script = (
        "import torch.nn.functional as F\nimport transformers\n"
        "class MultiTaskTrainer(transformers.Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        logits = model(**inputs).logits\n"
        "        return F.cross_entropy(logits.view(-1, logits.size(-1)), inputs['labels'].view(-1))\n"
        "trainer = MultiTaskTrainer(model=model, args=args, eval_dataset=data)\n"
    )
    evaluates = classify_path(write(tmp_path, "score.py", script + "print(trainer.evaluate())\n"))
    assert (evaluates.primary, evaluates.role) == ("EVAL_ONLY", "eval")
    assert not any(f.signal == "gradient_step" for f in evaluates.findings)  # the loss is one, no step
    trains = classify_path(
        write(tmp_path, "train.py", script + "trainer.train()\nprint(trainer.evaluate())\n")
    )
    assert (trains.primary, trains.role) == ("SFT", "training")


def test_a_trainer_factory_of_the_file_names_the_trainer_by_the_one_class_it_builds(tmp_path: Path) -> None:
    imports = (
        "from trainer.ppo_trainer import PPOTrainerWrapper\nfrom trainer.rm import RewardTrainerWrapper\n"
    )
    run = "trainer = initialize_trainer(cfg)\ntrainer.train(train_dataset)\n"
    one = "def initialize_trainer(config):\n    return PPOTrainerWrapper(config=config)\n"
    assert classify_path(write(tmp_path, "one.py", imports + one + run)).primary == "PPO"
    # a factory picking between classes by a setting names none of them: the step's loss is unknown
    two = (
        "def initialize_trainer(config):\n    if config.rm:\n        return RewardTrainerWrapper(config)\n"
        "    return PPOTrainerWrapper(config=config)\n"
    )
    assert classify_path(write(tmp_path, "two.py", imports + two + run)).primary == "UNKNOWN"


def test_a_project_trainer_parsed_with_the_trainer_settings_name_trains_the_model_loss(
    tmp_path: Path,
) -> None:
    def script(classes: str) -> str:
        return (
            "import transformers\nfrom proj.utils import *\nfrom proj.trainer import VisionTrainer\n"
            f"parser = transformers.HfArgumentParser(({classes}))\n"
            "model_args, data_args, training_args = parser.parse_args_into_dataclasses()\n"
            "trainer = VisionTrainer(model=model, args=training_args, **data_module)\ntrainer.train()\n"
        )

    named = classify_path(write(tmp_path, "a.py", script("ModelArguments, DataArguments, TrainingArguments")))
    assert (named.primary, [s.variant for s in named.stages]) == ("SFT", ["hf_trainer"])
    # settings of other names say nothing of the trainer: its loss stays unknown
    other = classify_path(write(tmp_path, "b.py", script("ModelArguments, DataArguments, RunArguments")))
    assert other.primary == "UNKNOWN"


def test_a_training_module_s_entry_takes_its_package_s_route_only_for_a_bare_entry(tmp_path: Path) -> None:
    def primary(code: str) -> str:
        return classify_path(write(tmp_path, "entry.py", code)).primary

    assert (
        primary("from grpo_project.core.trainer import main\nif __name__ == '__main__':\n    main()\n")
        == "GRPO"
    )
    # a function naming what it trains is that training, of a route the package does not say
    assert primary("from recgrpo.semid.trainer import train_rqvae\ntrain_rqvae(cfg)\n") == "UNKNOWN"
    assert (
        primary("from grpo_project.core.trainer import train_reward_model\ntrain_reward_model(c)\n")
        == "UNKNOWN"
    )
    # the innermost package naming a route decides, and evaluation code names none
    assert primary("from rlhf.reward_model.trainer import train\ntrain(cfg)\n") == "UNKNOWN"
    assert primary("from sft_eval.trainer import main\nmain()\n") == "EVAL_ONLY"


def test_a_project_trainer_built_with_trainer_arguments_trains_the_model_loss(
    tmp_path: Path,
) -> None:
    built = "trainer = PeftTrainer(model=model, args=args, train_dataset=ds, data_collator=collate{})\n"
    script = "from utils.trainer import PeftTrainer\n" + built + "trainer.train()\n"
    assert classify_path(write(tmp_path, "sft.py", script.format(""))).primary == "SFT"
    # handed a reference model, it trains another objective: its loss is in the other file
    other = classify_path(write(tmp_path, "other.py", script.format(", ref_model=ref")))
    assert (other.primary, other.role) == ("UNKNOWN", "training")


def test_a_launched_script_that_cannot_say_its_route_is_named_for_it(tmp_path: Path) -> None:
    # not in the repository (an external checkout): its name is the evidence left
    missing = classify_path(
        write(tmp_path, "run.sh", "torchrun --nproc_per_node 8 src/grpo_jsonl.py --lr 1e-6\n")
    )
    assert (missing.primary, missing.role) == ("GRPO", "launcher")
    assert "not read here" in missing.findings[0].message
    # found, but training with a loss of another file
    write(tmp_path, "train_dpo.py", "from mylib import CustomTrainer\nCustomTrainer(m).train()\n")
    unknown = classify_path(write(tmp_path, "dpo.sh", "python train_dpo.py --beta 0.1\n"))
    assert unknown.primary == "DPO"
    # a name with no route word says nothing; one named for evaluating a route's model, or for
    # making data or merging, says that work, not the route
    assert classify_path(write(tmp_path, "q.sh", "python run.py --lr 1e-4\n")).primary == "NONE_TRAINING"
    assert classify_path(write(tmp_path, "e.sh", "python evaluate_grpo.py\n")).primary == "EVAL_ONLY"
    assert classify_path(write(tmp_path, "g.sh", "python gen_res.py --n 4\n")).primary == "DISTILLATION"
    assert classify_path(write(tmp_path, "m.sh", "python merge_models.py --a x --b y\n")).primary == "MERGE"


def test_an_estimator_extending_a_known_one_is_of_its_family(tmp_path: Path) -> None:
    command = "python -m verl.mix_src.main_mix_ppo algorithm.adv_estimator=grpo_split\n"
    assert classify_path(write(tmp_path, "mix.sh", command)).primary == "GRPO"
    # a setting that only names the project after a route picks nothing
    script = "import trl\nif args.algo == 'ppo':\n    trl.PPOTrainer(m).train()\n"
    write(tmp_path, "main.py", script + "else:\n    trl.GRPOTrainer(m).train()\n")
    named = classify_path(write(tmp_path, "named.sh", "python main.py trainer.project_name=GRPO_search\n"))
    assert named.primary == "CONFIG_DEPENDENT"


def test_a_model_run_in_a_file_named_for_making_data_generates_data(tmp_path: Path) -> None:
    script = "from vllm import LLM\nouts = LLM('m').generate(prompts)\nrows = [parse(o) for o in outs]\n"
    assert classify_path(write(tmp_path, "sample.py", script)).primary == "EVAL_ONLY"
    made = classify_path(write(tmp_path, "generate_questions.py", script))
    assert (made.primary, made.role) == ("DISTILLATION", "data_generation")
    assert any(f.signal == "place" for f in made.findings)
    # the file's own name says more than the folder it is kept in
    assert classify_path(write(tmp_path / "eval", "make_data.py", script)).primary == "DISTILLATION"
    assert classify_path(write(tmp_path / "data" / "eval", "sample.py", script)).primary == "EVAL_ONLY"


def test_a_launched_script_that_is_there_but_cannot_be_read_is_a_problem_named(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "loop.py").symlink_to("loop.py")
    result = classify_path(write(repo, "run.sh", "python loop.py\npython missing_but_fine.py\n"))
    assert (
        result.error
        == "scripts it runs were not read: loop.py: a symlink loop or an unreadable path, not read"
    )
    # a script too large to read, run by a script the launcher runs, is named the same way
    write(repo, "huge.py", "#" * (3 * 1024 * 1024))
    write(repo, "inner.sh", "python huge.py\n")
    nested = classify_path(write(repo, "outer.sh", "bash inner.sh\n"))
    assert nested.error is not None and nested.error.startswith(
        "scripts it runs were not read: huge.py: too large"
    )
    # a name with terminal escapes is shown inert
    write(tmp_path / "out", "\x1b]0;owned\x07.py", "x = 1\n")
    escaped = classify_path(write(repo, "esc.sh", "python ../out/\x1b]0;owned\x07.py\n"))
    assert escaped.error is not None and "\x1b" not in escaped.error and "\\x1b]0;owned" in escaped.error


def test_a_remote_policy_gradient_step_on_group_centred_advantages_is_grpo(tmp_path: Path) -> None:
    loop = (
        "for group in groups:\n"
        "    rewards_G = [get_reward(s) for s in group]\n"
        "    mean_reward = sum(rewards_G) / len(rewards_G)\n"
        "    advantages_G = [reward - mean_reward for reward in rewards_G]\n"
        "    datums.extend(make_datums(group, advantages_G))\n"
        "training_client.forward_backward(datums, loss_fn='importance_sampling')\n"
    )
    assert classify_path(write(tmp_path, "grpo.py", loop)).primary == "GRPO"
    # a baseline of another kind leaves it the policy-gradient family's
    other = loop.replace("reward - mean_reward", "reward - baseline")
    assert classify_path(write(tmp_path, "pg.py", other)).primary == "PPO"


def test_rlhf_names_ppo_in_code_names_only(tmp_path: Path) -> None:
    trainer = "from rlhf.trainer import ModernRLHFTrainer\nt = ModernRLHFTrainer(cfg, rm)\nt.train(loader)\n"
    assert classify_path(write(tmp_path, "run.py", trainer)).primary == "PPO"
    # a setting valued "rlhf" beside "sft" picks a masking strategy, not a route
    masking = (
        "def dist(self, td):\n    if self.masking_strategy == 'sft':\n        return self.a.sft_dist(td)\n"
        "    elif self.masking_strategy == 'rlhf':\n        return self.a.rlhf_dist(td)\n"
    )
    assert classify_path(write(tmp_path, "loss.py", masking)).primary == "NONE_TRAINING"


def test_a_remote_step_whose_loss_a_setting_names_is_known_only_when_every_name_agrees(
    tmp_path: Path,
) -> None:
    flag = "ap.add_argument('--loss-fn', default={default!r})\nargs = ap.parse_args()\n"
    step = "client.forward_backward(datums, loss_fn=args.loss_fn)\nclient.optim_step(adam)\n"
    assert (
        classify_path(write(tmp_path, "sft.py", flag.format(default="cross_entropy") + step)).primary == "SFT"
    )
    # a default the service does not define, or none at all: the loss is not in the file
    custom = classify_path(write(tmp_path, "custom.py", flag.format(default="my_loss") + step))
    assert (custom.primary, custom.role) == ("UNKNOWN", "training")
    assert classify_path(write(tmp_path, "bare.py", step)).primary == "UNKNOWN"
    # names of two stages allowed where the step is taken: either may run
    mixed = "if args.loss_fn in ('cross_entropy', 'ppo'):\n    " + step.replace("\n", "\n    ", 1)
    assert classify_path(write(tmp_path, "mixed.py", mixed)).primary == "UNKNOWN"
    # the ``else`` of a test says nothing of what the setting holds there, except what it rules out
    other = "if args.loss_fn == 'ppo':\n    pass\nelse:\n    " + step.replace("\n", "\n    ", 1)
    assert classify_path(write(tmp_path, "else.py", other)).primary == "UNKNOWN"
    ruled_out = flag.format(default="cross_entropy") + other.replace("'ppo'", "'cross_entropy'")
    assert classify_path(write(tmp_path, "ruled_out.py", ruled_out)).primary == "UNKNOWN"
    # a remote policy-gradient loss handed advantages a helper normalises within each prompt's group
    grouped = (
        "from functools import partial\nfrom lib.core_algos import compute_policy_loss\n"
        "def group_norm(s, G):\n    s = s.view(-1, G)\n"
        "    return ((s - s.mean(dim=1, keepdim=True)) / (s.std(dim=1, keepdim=True) + 1e-6)).view(-1)\n"
        "def update(worker, batch, cfg):\n    batch['advantages'] = group_norm(batch['scores'], cfg.n)\n"
        "    worker.forward_backward(batch, partial(compute_policy_loss, clip_ratio=0.2))\n"
    )
    assert classify_path(write(tmp_path, "grouped.py", grouped)).primary == "GRPO"


def test_only_the_nearest_folders_place_a_file_among_evaluation_code(tmp_path: Path) -> None:
    script = (
        "from vllm import LLM\nfrom datasets import Dataset\n"
        "outs = LLM('m').generate(questions)\n"
        "Dataset.from_dict({'answer': [o.outputs[0].text for o in outs]}).to_json('out.jsonl')\n"
    )
    # a folder named so far above the workspace says nothing of the file
    far = classify_path(write(tmp_path / "evals" / "run1" / "agent" / "src", "sample.py", script))
    assert far.primary == "DISTILLATION"


def test_what_a_model_run_makes_is_read_from_what_it_answers_and_for_whom(tmp_path: Path) -> None:
    written = (
        "import json\nfrom vllm import LLM\nfrom datasets import load_dataset\n"
        "ds = load_dataset('org/prompts', split={split!r})\n"
        "outs = LLM('m').generate([r['prompt'] for r in ds])\n"
        "with open('out.jsonl', 'w') as f:\n"
        "    for o in outs:\n        f.write(json.dumps({{'text': o.outputs[0].text}}) + '\\n')\n"
    )
    # written outputs are data unless something says they answer held-out questions
    assert classify_path(write(tmp_path, "a.py", written.format(split="train[:5]"))).primary == "DISTILLATION"
    answered = classify_path(write(tmp_path, "b.py", written.format(split="test")))
    assert (answered.primary, answered.role) == ("EVAL_ONLY", "eval")
    assert any(f.signal == "purpose" for f in answered.findings)
    # not written in a way recognised here: a model run is an evaluation unless made for training
    kept = "from vllm import LLM\nteacher = LLM('big')\nouts = teacher.generate(prompts)\nkeep(outs)\n"
    made = classify_path(write(tmp_path, "c.py", kept))
    assert (made.primary, made.role) == ("DISTILLATION", "data_generation")
    plain = classify_path(write(tmp_path, "d.py", kept.replace("teacher", "llm")))
    assert plain.primary == "EVAL_ONLY"
    # cues of both kinds say nothing: the file's other evidence decides
    both = written.format(split="test") + "teacher_name = 'big'\nlog(teacher_name)\n"
    assert classify_path(write(tmp_path, "e.py", both)).primary == "DISTILLATION"


def test_a_library_environment_built_serves_training_only_where_a_module_returns_it(tmp_path: Path) -> None:
    module = (
        "import verifiers as vf\n\n"
        "def load_environment(**kwargs):\n"
        "    return vf.{cls}(dataset=ds, tools=[search], max_turns=10, rubric=rubric)\n"
    )
    # a module building a multi-turn environment for a trainer to load serves online RL
    served = classify_path(write(tmp_path, "a.py", module.format(cls="ToolEnv")))
    assert (served.primary, served.role) == ("ONLINE_RL", "component")
    # one whose every episode is a single turn does not
    assert classify_path(write(tmp_path, "b.py", module.format(cls="SingleTurnEnv"))).primary != "ONLINE_RL"
    # a script playing the environment to write what it answers makes data, whatever the world
    script = (
        "import json\nfrom openai import OpenAI\nfrom wordle.env import WordleEnvironment\n\n"
        "def main():\n    env = WordleEnvironment()\n"
        "    out = OpenAI().chat.completions.create(model='m', messages=env.prompt())\n"
        "    with open('train.jsonl', 'w') as f:\n"
        "        f.write(json.dumps(out.choices[0].message.content))\n\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    assert classify_path(write(tmp_path, "c.py", script)).primary == "DISTILLATION"
    # a policy-gradient trainer handed the multi-turn environment trains on its episodes
    trained = (
        "import verifiers as vf\n\nenv = vf.ToolEnv(dataset=ds, tools=[search])\n"
        "trainer = vf.GRPOTrainer(model=m, env=env, args=vf.grpo_defaults(run_name='r'))\ntrainer.train()\n"
    )
    assert classify_path(write(tmp_path, "d.py", trained)).primary == "ONLINE_RL"


def test_a_library_module_that_only_runs_a_model_forward_evaluates_nothing(tmp_path: Path) -> None:
    helpers = (
        "import torch\n\n"
        "@torch.no_grad()\n"
        "def sample(net, prompts, seq_len):\n"
        "    out = prompts\n"
        "    for _ in range(seq_len):\n"
        "        logits = net(out)[:, -1]\n"
        "        out = torch.cat((out, logits.argmax(-1, keepdim=True)), dim=-1)\n"
        "    return out\n"
    )
    helper = classify_path(write(tmp_path, "a.py", helpers))
    assert (helper.primary, helper.role) == ("NONE_TRAINING", "none")
    # the same loop in a command's main() is a model run: an evaluation unless it makes data
    command = classify_path(
        write(tmp_path, "b.py", helpers + "\ndef main(n: int = 8):\n    print(sample(m, p, n))\n")
    )
    assert (command.primary, command.role) == ("EVAL_ONLY", "eval")
    # and so it is in a script's top level, with no main() or __main__ guard
    top = "import torch\nx = tok('hi')\nwith torch.no_grad():\n    print(model(**x).logits)\n"
    assert classify_path(write(tmp_path, "c.py", top)).primary == "EVAL_ONLY"


def test_a_model_served_over_http_is_run_with_no_update_and_makes_no_data(tmp_path: Path) -> None:
    # (the development corpora's reading: a chat demo and a reward model's scoring server are
    # EVAL_ONLY, model runs with no weight update; a retriever's encoder serves an index, no answer)
    server = (
        "import uvicorn\nfrom fastapi import FastAPI\nfrom transformers import AutoModelForCausalLM\n\n"
        "app = FastAPI()\nmodel = AutoModelForCausalLM.from_pretrained('m')\n\n"
        "def predict(prompt):\n    return model.generate(**tok(prompt), max_new_tokens=64)\n\n"
        "@app.post('/v1/completions')\nasync def completions(request):\n"
        "    return predict(request.prompt)\n\n"
        "if __name__ == '__main__':\n    uvicorn.run(app)\n"
    )
    served = classify_path(write(tmp_path, "a.py", server))
    assert (served.primary, served.role) == ("EVAL_ONLY", "eval")
    # a client built at module level, two hops down, or a model run in an executor: served all the same
    shapes = {
        "client.py": "from openai import OpenAI\nclient = OpenAI()\n\n@app.post('/v1/chat')\ndef chat(r):\n"
        "    return client.chat.completions.create(model='m', messages=r.messages)\n",
        "hops.py": "from vllm import LLM\nllm = LLM('m')\ndef run(p):\n    return llm.generate(p)\n"
        "def predict(p):\n    return run(p)\n@app.post('/v1/completions')\ndef done(r):\n"
        "    return predict(r.prompt)\n",
        "pool.py": "def predict(p):\n    return model.generate(**tok(p))\n@app.post('/v1/completions')\n"
        "async def done(r):\n    return await loop.run_in_executor(None, predict, r.prompt)\n",
    }
    for name, text in shapes.items():
        assert classify_path(write(tmp_path, name, text)).primary == "EVAL_ONLY", name
    retriever = (
        "import torch\nfrom fastapi import FastAPI\nfrom transformers import AutoModel\napp = FastAPI()\n"
        "encoder = AutoModel.from_pretrained('e5')\n@torch.no_grad()\ndef encode(q):\n"
        "    return encoder(**tok(q)).last_hidden_state[:, 0]\n"
        "@app.post('/retrieve')\ndef retrieve(r):\n    return index.search(encode(r.query), k=3)\n"
    )
    assert classify_path(write(tmp_path, "r.py", retriever)).primary == "NONE_TRAINING"
    # the same model run over a benchmark's questions, with no route answered, evaluates
    script = server.replace("@app.post('/v1/completions')\n", "")
    assert classify_path(write(tmp_path, "b.py", script)).primary == "EVAL_ONLY"
    # and so does a batch run beside a route that answers something else (a health check)
    checked = (
        "from fastapi import FastAPI\nfrom vllm import LLM\napp = FastAPI()\n\n"
        "@app.get('/health')\ndef health():\n    return 'ok'\n\n"
        "if __name__ == '__main__':\n    print(LLM('m').generate(prompts))\n"
    )
    assert classify_path(write(tmp_path, "c.py", checked)).primary == "EVAL_ONLY"


def test_a_library_of_trainers_is_the_one_whose_loss_it_writes(tmp_path: Path) -> None:
    library = (
        "import torch.nn.functional as F\nfrom trl import DPOTrainer, SFTTrainer\n\n"
        "class MyDPOTrainer(DPOTrainer):\n"
        "    def dpo_loss(self, chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps):\n"
        "        margin = (chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps)\n"
        "        return -F.logsigmoid(self.beta * margin).mean()\n\n"
        "class MySFTTrainer(SFTTrainer):\n    pass\n"
    )
    found = classify_path(write(tmp_path, "a.py", library))
    assert found.primary == "DPO" and {"SFT", "DPO"} <= set(found.labels)
    # a pipeline that builds them runs them in order: the last one is the route
    pipeline = (
        library
        + "\nMySFTTrainer(model=m).train()\nMyDPOTrainer(model=m).train()\nMySFTTrainer(model=m).train()\n"
    )
    assert classify_path(write(tmp_path, "b.py", pipeline)).primary == "SFT"


CONFIG_MODULE_GRPO = """\
from xtuner.v1.rl.loss import GRPOLossConfig
from xtuner.v1.config import AdamWConfig
optim_cfg = AdamWConfig(lr=1e-6)
loss_cfg = GRPOLossConfig(policy_loss_cfg=dict(cliprange_high=0.28))
"""


@pytest.mark.parametrize(
    ("loop", "primary"),
    [
        ("agent_loop_config = GSM8KToolAgentLoopConfig(max_turns=2)\n", "ONLINE_RL"),
        ("rollout_config = RolloutConfig(tool_call_parser='qwen3coder')\n", "ONLINE_RL"),
        ("rollout_config = RolloutConfig(extra=dict(lmdeploy_tool_call_parser='q'))\n", "ONLINE_RL"),
        ("agent_loop_config = SingleTurnAgentLoopConfig(max_turns=1)\n", "GRPO"),
        ("agent_loop_config = AgentLoopConfig(max_turns=1)\n", "GRPO"),
        ("rollout_config = RolloutConfig(env=experiment_name)\n", "GRPO"),
        ("rollout_config = RolloutConfig(tools=None, enable_tools=False)\n", "GRPO"),  # switched off
        ("profiler_config = ProfilerConfig(tools=['tensorboard'])\n", "GRPO"),  # not the rollouts'
        ("eval_config = EvalRolloutConfig(tools=['python'], max_turns=8)\n", "GRPO"),  # measuring
        ("agent_loop_config = AgentLoopConfig(max_turns=1, tools=[search_tool])\n", "ONLINE_RL"),
        ("agent_loop_config = AgentLoopConfig(max_assistant_turns=5)\n", "ONLINE_RL"),
        ("agent_loop_config = AgentLoopConfig(max_turns=-1)\n", "ONLINE_RL"),  # unlimited
        ("rollout_config = RolloutConfig(multi_turn=MultiTurnConfig(enable=False))\n", "GRPO"),
        ("rollout_config = RolloutConfig(multi_turn={'enable': False})\n", "GRPO"),
        ("val_rollout_config = ValRolloutConfig(max_turns=5)\n", "GRPO"),
    ],
)
def test_a_config_module_giving_rollouts_tools_configures_online_rl(
    tmp_path: Path, loop: str, primary: str
) -> None:
    result = classify_path(write(tmp_path, "rl_config.py", CONFIG_MODULE_GRPO + loop))
    assert (result.primary, result.role) == (primary, "component")


@pytest.mark.parametrize(
    ("command", "routes"),
    [
        (
            "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.val_only=True",
            ["EVAL_ONLY"],
        ),
        ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.val_only=False", ["GRPO"]),
        ("python3 -m verl.trainer.main_ppo trainer.val_before_train=True", ["PPO"]),  # then it trains
        ("trl sft --eval_only --model_name_or_path m", ["EVAL_ONLY"]),
        ("trl sft --eval_only results/ --model_name_or_path m", ["SFT"]),  # a value, not a switch
    ],
)
def test_a_training_command_set_to_validate_only_trains_nothing(command: str, routes: list[str]) -> None:
    assert command_routes(command) == routes


def test_an_unknown_entry_point_set_to_validate_only_evaluates() -> None:
    assert command_routes("python3 -m recipe.cppo.main_cppo trainer.val_only=True") == ["EVAL_ONLY"]


@pytest.mark.parametrize(
    ("command", "routes"),
    [
        ("deepspeed main.py --algo remax --actor_model_name_or_path m", ["PPO"]),
        ("python verifree.py --critic_type rloo --num_samples 8", ["PPO"]),
        ("python train.py --algorithm dpo", ["DPO"]),
        ("python train_dpo.py --algo grpo", ["GRPO"]),  # the setting before the file's name
        ("python eval.py --algo ppo", []),  # a checkpoint of that algorithm evaluated
        ("python main.py --algo mystery", []),
    ],
)
def test_an_algorithm_setting_names_the_route_of_a_script_not_read(command: str, routes: list[str]) -> None:
    assert command_routes(command) == routes


@pytest.mark.parametrize(
    ("command", "routes"),
    [
        ("python qlora.py --do_train --do_eval", ["SFT"]),
        ("deepspeed toolbench/train/train_lora.py --data_path d.json", ["SFT"]),
        ("python fine_tune.py", ["SFT"]),
        ("python lora_dpo.py", ["DPO"]),  # another route named
        ("python eval_lora.py --adapter out", []),  # a fine-tuned adapter looked at
        ("torchrun run_rm_with_peft.py --data pairs", []),  # a reward model's, by a word of its own
        ("python qlora.py --do_train False --do_predict True", ["EVAL_ONLY"]),
    ],
)
def test_a_script_not_read_named_for_fine_tuning_is_sft(command: str, routes: list[str]) -> None:
    assert command_routes(command) == routes


@pytest.mark.parametrize(
    ("code", "primary"),
    [
        (
            "def compute_turn_reward(tool_interact_info):\n"
            "    return sum(i['ok'] for i in tool_interact_info) / max(len(tool_interact_info), 1)\n",
            "ONLINE_RL",
        ),
        (
            # an optional turns parameter is support a caller may not use: single-turn GRPO's reward
            "def accuracy_reward(completions, solution, remaining_turns=None, **kwargs):\n"
            "    return [float(c == s) for c, s in zip(completions, solution)]\n",
            "GRPO",
        ),
        (
            # an agent's trajectory credited, and the module's own check of its verifier run as a
            # script: still the reward of the multi-turn training that imports it
            "from math_verify import parse, verify\n"
            "def math_reward_with_tool(trajectory, answer):\n"
            "    calls = [s for s in trajectory if s['role'] == 'tool']\n"
            "    return float(verify(parse(trajectory[-1]['content']), parse(answer))) if calls else 0.0\n"
            "if __name__ == '__main__':\n"
            "    print(verify(parse('\\\\boxed{2/3}'), parse('2/3')))\n",
            "ONLINE_RL",
        ),
        (
            # one turn of a chat completion: its last message, its format
            "def last_turn_reward(completions, **kwargs):\n"
            "    return [float('###' in c[-1]['content']) for c in completions]\n"
            "def single_turn_format_reward(completions, **kwargs):\n"
            "    return [1.0 for _ in completions]\n",
            "GRPO",
        ),
    ],
)
def test_a_reward_for_an_episode_s_turns_serves_online_rl(tmp_path: Path, code: str, primary: str) -> None:
    result = classify_path(write(tmp_path, "rewards.py", code))
    assert (result.primary, result.role) == (primary, "component")


@pytest.mark.parametrize(
    ("command", "routes"),
    [
        ("python train_dpo.py --beta 0.1; python train_dpo.py --eval_only", ["DPO"]),  # two commands
        ("python apply_lora.py --base-model-path b --target-model-path t", []),  # folds, not SFT
        ("python chat_lora.py --adapter out", []),
        ("python enjoy.py --algo ppo --env LunarLander-v2", []),  # replays a trained agent
        ("python collect_rollouts.py --algo grpo", []),
        ("python src/train_bash.py --stage dpo --do_train", ["DPO"]),
    ],
)
def test_launcher_names_and_settings_read_only_for_training(command: str, routes: list[str]) -> None:
    assert command_routes(command) == routes


def test_a_validate_only_setting_set_in_one_branch_does_not_hold(tmp_path: Path) -> None:
    branch = (
        'VAL_ONLY=False\nif [ "$MODE" = eval ]; then\n  VAL_ONLY=True\nfi\n'
        "python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo trainer.val_only=$VAL_ONLY\n"
    )
    assert classify_path(write(tmp_path, "branch.sh", branch)).primary == "GRPO"
    always = "VAL_ONLY=True\npython3 -m verl.trainer.main_ppo trainer.val_only=$VAL_ONLY\n"
    assert classify_path(write(tmp_path, "always.sh", always)).primary == "EVAL_ONLY"


def test_a_framework_learner_given_group_relative_advantages_trains_grpo(tmp_path: Path) -> None:
    learner = """
    from oat.algorithms.ppo import PPOLearner

    class ZeroLearner(PPOLearner):
        def compute_monte_carlo_advantages(self, rewards, masks):
            rewards = rewards.sum(-1)
            values = rewards.view(-1, self.args.num_samples).mean(dim=1)
            values = values.repeat_interleave(self.args.num_samples, dim=0)
            advantages = rewards - values
            return advantages
    """
    result = classify_path(write(tmp_path, "learner.py", textwrap.dedent(learner)))
    assert result.primary == "GRPO" and [s.kind for s in result.stages] == ["grpo"]
    plain = "from oat.algorithms.ppo import PPOLearner\n\nclass Learner(PPOLearner):\n    pass\n"
    assert classify_path(write(tmp_path, "plain.py", plain)).primary == "PPO"


def test_a_setting_that_picks_only_the_estimator_of_multi_turn_training_leaves_it_online_rl(
    tmp_path: Path,
) -> None:
    code = (
        "import argparse\nfrom oat.algorithms.ppo import PPOMultiTurnLearner\n\n"
        "class Learner(PPOMultiTurnLearner):\n    pass\n\n"
        "parser = argparse.ArgumentParser()\n"
        "parser.add_argument('--critic_type', choices=['ppo', 'grpo'], default='grpo')\n"
    )
    result = classify_path(write(tmp_path, "agent.py", code))
    assert result.primary == "ONLINE_RL" and set(result.possible_routes) == {"GRPO", "PPO"}
    single = code.replace("PPOMultiTurnLearner", "PPOLearner")
    assert classify_path(write(tmp_path, "single.py", single)).primary == "CONFIG_DEPENDENT"


def test_a_preference_loss_stepped_by_a_reward_models_optimiser_trains_the_reward_model(
    tmp_path: Path,
) -> None:
    code = """
    import torch.nn.functional as F

    class ProcessRewardUpdater:
        def update(self, batch):
            policy_chosen_logps, policy_rejected_logps = self.logps(self.model, batch)
            reference_chosen_logps, reference_rejected_logps = self.logps(self.ref, batch)
            chosen = policy_chosen_logps - reference_chosen_logps
            rejected = policy_rejected_logps - reference_rejected_logps
            loss = -F.logsigmoid(self.beta * (chosen - rejected)).mean()
            loss.backward()
            self.reward_optimizer.step()
    """
    result = classify_path(write(tmp_path, "prm.py", textwrap.dedent(code)))
    assert result.primary == "REWARD_MODEL"
    policy = textwrap.dedent(code).replace("reward_optimizer", "actor_optimizer")
    assert classify_path(write(tmp_path, "dpo.py", policy)).primary == "DPO"


def test_stage_functions_chained_by_the_module_keep_the_last_stage_not_config_dependent(
    tmp_path: Path,
) -> None:
    code = """
    import torch
    import torch.nn.functional as F

    def sft_stage(model, loader, opt):
        for batch in loader:
            logits = model(batch["input_ids"]).logits
            loss = F.cross_entropy(logits.flatten(0, 1), batch["labels"].flatten(), ignore_index=-100)
            loss.backward()
            opt.step()

    def reward_stage(rm, loader, opt):
        for batch in loader:
            loss = -F.logsigmoid(rm(batch["chosen_ids"]) - rm(batch["rejected_ids"])).mean()
            loss.backward()
            opt.step()

    def ppo_stage(policy, value, loader, opt, clip=0.2):
        for batch in loader:
            ratio = torch.exp(policy.logprobs(batch["seqs"]) - batch["old_logp"])
            adv = batch["returns"] - value(batch["seqs"]).detach()
            loss = -torch.min(ratio * adv, torch.clamp(ratio, 1 - clip, 1 + clip) * adv).mean()
            loss.backward()
            opt.step()

    def run_pipeline(policy, rm, value, data, opts):
        sft_stage(policy, data["sft"], opts["sft"])
        reward_stage(rm, data["pairs"], opts["rm"])
        ppo_stage(policy, value, data["prompts"], opts["ppo"])
    """
    result = classify_path(write(tmp_path, "pipeline.py", textwrap.dedent(code)))
    assert result.primary == "PPO" and result.role == "training"


TEACHER_LOGPROB_REWARDS = """
import torch
from .ray_trainer import RayPPOTrainer


class OnPolicyDistillationTrainer(RayPPOTrainer):
    def apply_reward_kl_penalty(self, data):
        teacher_action_log_probs = data["base_action_log_probs"]
        rewards = -(data["action_log_probs"] - teacher_action_log_probs) * data["loss_mask"]
        data["rewards"] = rewards
        return data


def policy_loss(log_probs, old_log_probs, advantages):
    ratio = torch.exp(log_probs - old_log_probs)
    return -torch.min(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages).mean()


loss = policy_loss(log_probs, old_log_probs, advantages)
loss.backward()
"""


def test_rewards_that_are_a_teachers_log_probabilities_make_on_policy_distillation(tmp_path: Path) -> None:
    # the policy-gradient step maximises the teacher's log-probabilities of the policy's own samples
    result = classify_path(write(tmp_path, "distill.py", TEACHER_LOGPROB_REWARDS))
    assert (result.primary, result.role) == ("SFT", "training")
    assert "DISTILLATION" in result.labels
    stage = result.stages[-1]
    assert (stage.kind, stage.variant, stage.data_source) == ("sft", "on_policy_distillation", "distilled")
    plain = TEACHER_LOGPROB_REWARDS.replace("teacher_action_log_probs", "baseline_values")
    assert classify_path(write(tmp_path, "ppo.py", plain)).primary in ("PPO", "GRPO", "CONFIG_DEPENDENT")


def test_a_script_that_only_masks_targets_prepares_data(tmp_path: Path) -> None:
    """Tokenising with ``-100`` labels and writing the rows out trains nothing (the corpus convention)."""
    collator = (
        "def collate(rows):\n    labels = [[-100] * r['n'] + r['ids'][r['n']:] for r in rows]\n"
        "    return labels\n"
    )
    component = classify_path(write(tmp_path, "collate.py", collator))
    assert (component.primary, component.role) == ("SFT", "component")
    script = collator + "if __name__ == '__main__':\n    json.dump(collate(rows), open('out.json', 'w'))\n"
    result = classify_path(write(tmp_path, "binarize.py", "import json\n" + script))
    assert (result.primary, result.role) == ("NONE_TRAINING", "none")


def test_a_project_trainer_takes_the_route_of_the_one_config_class_it_is_built_beside(tmp_path: Path) -> None:
    """``SELMTrainer(args=DPOConfig...)`` trains DPO; beside config classes of two routes, nothing says."""
    code = (
        "from alignment import {configs}, H4ArgumentParser\nfrom scripts.selm_trainer import SELMTrainer\n"
        "args = H4ArgumentParser(({configs},)).parse()\ntrainer = SELMTrainer(m, ref, args=args)\n"
        "trainer.train()\n"
    )
    one = classify_path(write(tmp_path, "run_selm.py", code.format(configs="DPOConfig")))
    assert one.primary == "DPO" and one.stages[0].decided_by == "name"
    two = classify_path(write(tmp_path, "run_two.py", code.format(configs="DPOConfig, SFTConfig")))
    assert two.primary == "UNKNOWN"
    # a project's config of an RL run's reward names no reward-model training; TRL's RewardConfig does
    reward = code.replace("from alignment import", "from mylib.config import")
    assert classify_path(
        write(tmp_path, "run_router.py", reward.format(configs="RouterRewardConfig"))
    ).primary == ("UNKNOWN")
    process = reward.format(configs="ProcessRewardConfig")
    assert classify_path(write(tmp_path, "run_prm.py", process)).primary == "REWARD_MODEL"
    trl = code.replace(
        "from alignment import {configs}, H4ArgumentParser",
        "from trl import {configs}\nfrom alignment import H4ArgumentParser",
    )
    assert (
        classify_path(write(tmp_path, "run_rm.py", trl.format(configs="RewardConfig"))).primary
        == "REWARD_MODEL"
    )


def test_a_module_defining_a_reward_model_class_serves_reward_modelling(tmp_path: Path) -> None:
    """A reward model's class (a one-output head) defined alone is that stage's component."""
    model = (
        "import torch.nn as nn\nclass PairedRewardModel(PreTrainedModel):\n    def __init__(self, config):\n"
        "        self.model = AutoModel.from_config(config)\n"
        "        self.value_head = nn.Linear(config.hidden_size, 1)\n"
    )
    component = classify_path(write(tmp_path, "reward_model.py", model))
    assert (component.primary, component.role) == ("REWARD_MODEL", "component")
    # built and loaded to be exported, the class is what the file serves, not a stage it trains
    export = (
        model
        + "rm = PairedRewardModel(cfg)\nrm.load_state_dict(torch.load('rm.pt'))\ntorch.jit.trace(rm, x)\n"
    )
    assert classify_path(write(tmp_path, "to_triton.py", export)).primary != "REWARD_MODEL"


def test_review_cases_process_rm_class_and_an_execution_round_loop(tmp_path: Path) -> None:
    """A ``ProcessRM`` class with a one-output head and its own no-gradient scoring method is the scorer;
    a loop named a loop that feeds code execution back tagged, round after round, plays rollouts."""
    rm = (
        "import torch\nimport torch.nn as nn\nclass ProcessRM(PreTrainedModel):\n    def __init__(self, c):\n"
        "        self.body = AutoModel.from_config(c)\n        self.head = nn.Linear(c.hidden_size, 1)\n"
        "    @torch.no_grad()\n    def step_scores(self, ids):\n        return self.head(self.body(ids)[0])\n"
    )
    assert classify_path(write(tmp_path, "prm.py", rm)).primary == "REWARD_MODEL"
    loop = (
        "class CodeActPolicy:\n    def think(self, history):\n"
        "        return self.model.generate(history, temperature=1.0)\n"
        "    def run_llm_loop(self, task):\n        history = [task]\n"
        "        for _ in range(self.max_rounds):\n            text = self.think(history)\n"
        "            result = self.sandbox.run(text)\n"
        "            history.append({'role': 'user', 'content': f'<execution>{result}</execution>'})\n"
    )
    assert classify_path(write(tmp_path, "codeact.py", loop)).primary == "ONLINE_RL"


def test_listwise_losses_over_rewards_log_ratios_and_similarities(tmp_path: Path) -> None:
    """A log-softmax over a scorer's reward scores trains the scorer; over beta-scaled policy/reference
    log-ratios it is a listwise preference loss; over an embedding model's similarity scores, neither."""
    reward = (
        "import torch\nreward_scores = model(input_ids)\nterms = []\nfor i in range(n):\n"
        "    rest = torch.stack([torch.exp(reward_scores[j]) for j in range(i, n)]).sum(0)\n"
        "    terms.append(-torch.log(torch.exp(reward_scores[i]) / rest))\n"
        "loss = torch.stack(terms).sum()\nmodel.backward(loss)\n"
    )
    assert classify_path(write(tmp_path, "rm.py", reward)).primary == "REWARD_MODEL"
    preference = (
        "import torch\nlogps, ref_logps = policy_logps(model, b), policy_logps(ref_model, b)\np = 1\n"
        "for i in range(n):\n"
        "    rest = sum(torch.exp(args.beta * (logps[j] - ref_logps[j])) for j in range(i, n))\n"
        "    p = p * torch.exp(args.beta * (logps[i] - ref_logps[i])) / rest\n"
        "loss = -torch.log(p)\nloss.backward()\n"
    )
    assert classify_path(write(tmp_path, "lpo.py", preference)).primary == "DPO"
    contrastive = (
        "import torch\nscores = q @ d.T / tau\n"
        "loss = -torch.log(torch.exp(scores.diag()) / torch.exp(scores).sum(1)).mean()\nloss.backward()\n"
    )
    assert classify_path(write(tmp_path, "embed.py", contrastive)).primary not in ("REWARD_MODEL", "DPO")


def test_a_name_bound_twice_is_reported_the_same_way_under_every_hash_seed() -> None:
    # a conditional import binds one name to two modules: the evidence must not depend on the order
    # Python happens to iterate a set of strings in (PYTHONHASHSEED)
    code = textwrap.dedent(
        """\
        try:
            from sklearn.metrics import accuracy_score
            from trl import GRPOConfig
        except ImportError:
            from evaluate_utils import accuracy_score
            from openrlhf_compat import GRPOConfig
        config = GRPOConfig(output_dir="out")
        print(accuracy_score(labels, predictions))
        """
    )
    program = (
        "import json, sys\nfrom arb_audit.analyzer.classify import find\n"
        "print(json.dumps([(f.detector, f.message) for f in find(sys.stdin.read())[0]]))\n"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", program],
            input=code,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }
    assert len(outputs) == 1, outputs
    assert "accuracy_score" in outputs.pop()


TD_CRITIC = """
import torch.nn.functional as F

def critic_warmup(critic, optimizer, batch, gamma=0.99):
    values = critic(batch.states)
    next_values = critic(batch.next_states).detach()
    token_rewards = batch.token_rewards
    loss = F.mse_loss(values, token_rewards + gamma * next_values)
    loss.backward()
    optimizer.step()
"""

LEARNED_LOG_Z = """
import torch

def weighted_tb_loss(log_pf, log_r, log_Z):
    w = torch.exp(log_pf.detach() - log_Z.detach()).clamp(max=10.0)
    return (w * (log_Z + log_pf - log_r) ** 2).sum()

def train(policy, buffer, optimizer):
    log_Z = torch.nn.Parameter(torch.zeros(()))
    for batch in buffer:
        loss = weighted_tb_loss(policy.log_prob(batch), batch.log_r, log_Z)
        loss.backward()
        optimizer.step()
"""

LOG_NORM_SOFTMAX = """
import torch

def fused_lm_loss(hidden, weight, targets):
    logits = hidden @ weight.T
    log_norm = torch.logsumexp(logits, dim=-1, keepdim=True)
    probs = torch.exp(logits - log_norm)
    nll = log_norm.squeeze(-1) - logits.gather(-1, targets[:, None]).squeeze(-1)
    return nll.mean(), probs

def train_step(model, batch, optimizer):
    loss, _ = fused_lm_loss(model(batch.x), model.head.weight, batch.y)
    loss.backward()
    optimizer.step()
"""


def test_next_token_words_spread_over_several_names_name_no_language_model_loss(tmp_path: Path) -> None:
    # (next_values, token_rewards, mse_loss: a critic's temporal-difference regression)
    assert classify_path(write(tmp_path, "critic.py", TD_CRITIC)).primary != "SFT"


def test_a_learned_log_partition_inside_exp_is_no_softmax_normaliser(tmp_path: Path) -> None:
    # a GFlowNet's learned log_Z: exp(log_pf - log_Z) weighs samples, it normalises no softmax
    assert classify_path(write(tmp_path, "tb.py", LEARNED_LOG_Z)).stages[0].kind == "ppo"


def test_a_computed_log_normaliser_inside_exp_is_a_softmax(tmp_path: Path) -> None:
    assert classify_path(write(tmp_path, "fused.py", LOG_NORM_SOFTMAX)).primary == "SFT"


OTHER_OBJECTS_LOSS = """
import torch
from transformers import AutoModelForCausalLM

def main(args, batches, objective):
    model = AutoModelForCausalLM.from_pretrained(args.model)
    ref_model = AutoModelForCausalLM.from_pretrained(args.model).eval()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for batch in batches:
        out = objective.compute_loss(model=model, ref_model=ref_model, batch=batch)
        out.loss.backward()
        opt.step()
"""


def test_a_causal_lm_beside_another_object_s_loss_is_no_language_model_loss(tmp_path: Path) -> None:
    # ``lm`` of the model's class and ``loss`` of another object's method name no next-token loss
    result = classify_path(write(tmp_path, "pref.py", OTHER_OBJECTS_LOSS))
    assert (result.primary, result.role) == ("UNKNOWN", "training")
    named = OTHER_OBJECTS_LOSS.replace(
        "out.loss.backward()", "lm_loss = out.loss\n        lm_loss.backward()"
    )
    assert classify_path(write(tmp_path, "lm.py", named)).primary == "SFT"


PROJECT_MODULE_FORWARD = """
import torch

def train(coconut, data, optimizer):
    for x in data:
        new_inputs, outputs = coconut(x.embeds, x.mask, x.targets)
        batch_loss = outputs.loss
        optimizer.zero_grad()
        batch_loss.backward()
        optimizer.step()
"""


def test_the_loss_of_a_called_object_of_the_file_is_its_forward_pass_s(tmp_path: Path) -> None:
    """``outputs = coconut(...)``: a project's module called, whatever its name; not a loss object."""
    assert classify_path(write(tmp_path, "coconut.py", PROJECT_MODULE_FORWARD)).primary == "SFT"
    criterion = PROJECT_MODULE_FORWARD.replace("coconut", "criterion")
    assert classify_path(write(tmp_path, "criterion.py", criterion)).primary == "UNKNOWN"
    # not any local callable's: the object whose output's loss is read, built from a class that names
    # no step or route (``DPOStep(policy, ref)`` returns its own loss)
    step = PROJECT_MODULE_FORWARD.replace(
        "def train(coconut, data, optimizer):",
        "def train(policy, ref, data, optimizer):\n    coconut = DPOStep(policy, ref)",
    )
    assert classify_path(write(tmp_path, "dpo_step.py", step)).primary == "UNKNOWN"
    collated = PROJECT_MODULE_FORWARD.replace(
        "new_inputs, outputs = coconut(x.embeds, x.mask, x.targets)",
        "batch = collator(x)\n        outputs = trainer.compute_loss(batch)",
    )
    assert classify_path(write(tmp_path, "collated.py", collated)).primary == "UNKNOWN"


GRPO_MODULE_WITH_CONTRASTIVE_TERM = """
import torch
import torch.nn.functional as F

class LatentPolicy(torch.nn.Module):
    def contrastive_loss(self, aggregates, temperature=0.1):
        similarity = aggregates @ aggregates.t() / temperature
        labels = torch.arange(aggregates.shape[0])
        return F.cross_entropy(similarity, labels)

    def compute_advantages(self, rewards):
        rewards_tensor = torch.tensor(rewards)  # (the group of trajectories of one question)
        return (rewards_tensor - rewards_tensor.mean()) / rewards_tensor.std().clamp_min(1e-8)

    def compute_policy_loss(self, log_probs, advantages):
        return -(advantages * log_probs).mean()
"""


def test_a_component_s_supervised_term_beside_a_policy_gradient_loss_names_it_last(
    tmp_path: Path,
) -> None:
    """A GRPO loss module with an auxiliary cross-entropy is GRPO's component, as a step would be."""
    result = classify_path(write(tmp_path, "latent.py", GRPO_MODULE_WITH_CONTRASTIVE_TERM))
    assert (result.role, result.primary) == ("component", "GRPO")


FOLD_TO_STREAM = """
from threading import Thread
from peft import AutoPeftModelForCausalLM
from transformers import TextIteratorStreamer

class LoRAInference:
    def __init__(self, weights_path, tokenizer):
        self.tokenizer = tokenizer
        self.model = self._get_merged_model(weights_path)

    def _get_merged_model(self, weights_path):
        model = AutoPeftModelForCausalLM.from_pretrained(weights_path)
        return model.merge_and_unload()

    def infer_one(self, prompt):
        ids = self.tokenizer(prompt, return_tensors="pt").input_ids
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True)
        Thread(target=self.model.generate, kwargs=dict(input_ids=ids, streamer=streamer)).start()
        return "".join(streamer)
"""


def test_an_adapter_folded_by_a_method_of_the_file_to_stream_generations_is_no_merge(
    tmp_path: Path,
) -> None:
    """The fold's own method (named ``_get_merged_model``) is read as the fold: inference, not a merge."""
    result = classify_path(write(tmp_path, "lora_inference.py", FOLD_TO_STREAM))
    assert "MERGE" not in result.labels
    saved = FOLD_TO_STREAM.replace(
        "return model.merge_and_unload()",
        "merged = model.merge_and_unload()\n        merged.save_pretrained('out')\n        return merged",
    )
    assert classify_path(write(tmp_path, "fold_and_save.py", saved)).primary == "MERGE"


def test_a_generic_trainer_run_in_a_function_named_for_another_stage_trains_its_model_s_loss(
    tmp_path: Path,
) -> None:
    """``def dpo(): Trainer(model=...).train()``: the generic trainer's loss decides, not the name."""
    script = (
        "from transformers import AutoModelForCausalLM, Trainer, TrainingArguments\n"
        "from transformers import DataCollatorForLanguageModeling\n"
        "def dpo(model_name, data):\n"
        "    model = AutoModelForCausalLM.from_pretrained(model_name)\n"
        "    trainer = Trainer(model=model, args=TrainingArguments('out'), train_dataset=data,\n"
        "                      data_collator=DataCollatorForLanguageModeling(tok, mlm=False))\n"
        "    trainer.train()\n"
        "if __name__ == '__main__':\n    dpo('m', load())\n"
    )
    result = classify_path(write(tmp_path, "sft.py", script))
    assert (result.primary, [s.kind for s in result.stages]) == ("SFT", ["sft"])
    # a trainer subclass of the file's own, named for the stage, may compute that stage's loss
    subclass = (
        "from transformers import Trainer\nclass RMTrainer(Trainer):\n"
        "    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        return model(**inputs).loss\n"
        "def main():\n    trainer = RMTrainer(model=model, args=args, train_dataset=ds)\n"
        "    trainer.train()\n"
    )
    result = classify_path(write(tmp_path, "trainer_rm.py", subclass))
    assert "REWARD_MODEL" in result.labels


def test_a_supervised_step_beside_a_policy_update_in_one_loop_is_that_rl_stage_s_auxiliary(
    tmp_path: Path,
) -> None:
    """GRPO then an auxiliary SFT step on every batch: one RL stage, not SFT after GRPO."""
    loop = (
        "import torch\nimport torch.nn.functional as F\n"
        "def train(policy, batches, optimizer, group):\n"
        "    for batch in batches:\n"
        "        r = batch['rewards'].view(-1, group)\n"
        "        adv = ((r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-6)).view(-1)\n"
        "        ratio = torch.exp(batch['logp'] - batch['old_logp'])\n"
        "        pg = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
        "        pg.backward()\n"
        "        logits = policy(batch['sft_ids'])\n"
        "        sft = F.cross_entropy(logits.view(-1, logits.size(-1)), batch['sft_labels'].view(-1))\n"
        "        sft.backward()\n"
        "        optimizer.step()\n"
    )
    result = classify_path(write(tmp_path, "grpo_sft.py", loop))
    assert (result.primary, [s.kind for s in result.stages]) == ("GRPO", ["grpo"])
    # in loops of their own, SFT then GRPO are two stages, the last one run standing
    apart = loop.replace(
        "        logits = policy(", "    for batch in sft_batches:\n        logits = policy("
    )
    result = classify_path(write(tmp_path, "sft_after.py", apart))
    assert [s.kind for s in result.stages] == ["grpo", "sft"]


def test_an_auxiliary_step_counts_in_any_shared_loop_but_not_across_exclusive_branches(
    tmp_path: Path,
) -> None:
    """PPO epochs in an inner loop, the ptx step one loop up: one PPO stage; ``if``/``else`` stages: two."""
    policy = (
        "            ratio = torch.exp(b['logp'] - b['old_logp'])\n"
        "            pg = -torch.min(ratio * b['adv'], torch.clamp(ratio, 0.8, 1.2) * b['adv']).mean()\n"
        "            pg.backward()\n"
    )
    supervised = (
        "        logits = policy(batch['x'])\n"
        "        F.cross_entropy(logits.view(-1, logits.size(-1)), batch['y'].view(-1)).backward()\n"
    )
    nested = (
        "import torch\nimport torch.nn.functional as F\ndef train(policy, loader):\n"
        "    for batch in loader:\n        for b in batch['minibatches']:\n" + policy + supervised
    )
    result = classify_path(write(tmp_path, "ppo_ptx.py", nested))
    assert (result.primary, [s.kind for s in result.stages]) == ("PPO", ["ppo"])
    exclusive = (
        "import torch\nimport torch.nn.functional as F\ndef train(policy, stages):\n"
        "    for stage, batch in stages:\n        if stage == 'sft':\n"
        + supervised.replace("        ", "            ")
        + "        else:\n            b = batch\n"
        + policy.replace("            ", "            ")
    )
    result = classify_path(write(tmp_path, "pipeline.py", exclusive))
    assert {s.kind for s in result.stages} == {"sft", "ppo"}


def test_a_generic_trainer_handed_a_loss_of_the_file_trains_that_loss(tmp_path: Path) -> None:
    """``Trainer(compute_loss_func=bt_loss)``: the handed Bradley-Terry loss decides, not the model's."""
    script = (
        "import torch.nn.functional as F\nfrom transformers import Trainer\n"
        "def bt_loss(outputs, labels, num_items_in_batch=None):\n"
        "    chosen, rejected = outputs.logits.chunk(2)\n"
        "    return -F.logsigmoid(chosen - rejected).mean()\n"
        "trainer = Trainer(model=model, args=args, train_dataset=ds, compute_loss_func=bt_loss)\n"
        "trainer.train()\n"
    )
    assert classify_path(write(tmp_path, "rm.py", script)).primary == "REWARD_MODEL"


def test_a_command_list_s_flag_switches_report_its_stage_once(tmp_path: Path) -> None:
    """Each switched line of ``["tune", "run", "--bf16" if a else "--fp16", ...]`` runs the same SFT."""
    script = (
        "import subprocess\n"
        "subprocess.run(['tune', 'run', '--bf16' if a else '--fp16', '--gc' if g else '--no-gc',\n"
        "                'lora_finetune_single_device', '--config', 'cfg.yaml'], check=True)\n"
    )
    result = classify_path(write(tmp_path, "launch.py", script))
    assert result.primary == "SFT"
    assert [len(s.evidence) for s in result.stages] == [1]


def test_a_scorer_of_predictions_evaluates_unless_it_serves_a_reward(tmp_path: Path) -> None:
    """A scorer of predictions against references evaluates, unless a reward of the file uses it."""
    scorer = (
        "def f1_score(prediction, ground_truth):\n"
        "    common = set(prediction.split()) & set(ground_truth.split())\n"
        "    return len(common) / max(len(prediction.split()), 1)\n"
    )
    assert classify_path(write(tmp_path, "metrics.py", scorer)).primary == "EVAL_ONLY"
    reward = scorer + (
        "def compute_score(solution_str, ground_truth):\n"
        "    return 1.0 if f1_score(solution_str, ground_truth) > 0.5 else 0.0\n"
        "if __name__ == '__main__':\n    print(compute_score('a b', 'a b'))\n"
    )
    assert classify_path(write(tmp_path, "reward.py", reward)).primary == "GRPO"


def test_a_scorer_or_a_judge_filtering_generated_data_keeps_it_data_generation(tmp_path: Path) -> None:
    """Samples kept by an answer check, or by a judge's rating, and written to train on are data."""
    filtered = (
        "import json\nfrom vllm import LLM\n"
        "def is_equiv(pred, answer):\n    return pred.strip() == answer.strip()\n"
        "outs = LLM('m').generate(prompts)\n"
        "kept = [o for o, a in zip(outs, answers) if is_equiv(o.outputs[0].text, a)]\n"
        "json.dump(kept, open('sft_data.json', 'w'))\n"
    )
    assert classify_path(write(tmp_path, "rs.py", filtered)).primary == "DISTILLATION"
    judged = (
        "import json, openai\nclient = openai.OpenAI()\n"
        "PROMPT = 'Rate the quality of the answer from 1 to 10.'\nout = open('sft_data.jsonl', 'w')\n"
        "for q in questions:\n"
        "    a = client.chat.completions.create(model='gpt-4', messages=[q]).choices[0].message.content\n"
        "    s = client.chat.completions.create(model='gpt-4', messages=[PROMPT, q, a])\n"
        "    if int(s.choices[0].message.content) >= 8:\n"
        "        out.write(json.dumps({'instruction': q, 'output': a}) + '\\n')\n"
    )
    assert classify_path(write(tmp_path, "judged.py", judged)).primary == "DISTILLATION"


def test_a_policy_update_is_online_where_its_function_plays_the_environment(tmp_path: Path) -> None:
    """The episodes a training function resets and steps feed its update; an evaluation's do not."""
    update = (
        "    ratio = torch.exp(logp - old_logp)\n"
        "    loss = -torch.min(ratio * adv, torch.clamp(ratio, 0.8, 1.2) * adv).mean()\n"
        "    loss.backward()\n"
    )
    played = (
        "import torch\ndef main():\n    obs = envs.reset()\n    for t in range(num_steps):\n"
        "        action, logp = policy.act(obs)\n        obs, reward, done, info = envs.step(action)\n"
    ) + update
    assert classify_path(write(tmp_path, "train.py", played)).primary == "ONLINE_RL"
    evaluated = (
        "import torch\ndef evaluate(policy):\n    obs = env.reset()\n"
        "    obs, r, done, info = env.step(policy(obs))\ndef update(logp, old_logp, adv):\n"
    ) + update
    assert classify_path(write(tmp_path, "ppo.py", evaluated)).primary == "PPO"
    # one step per reset (a sandbox giving each sample its reward) plays no episode
    sandboxed = (
        "import torch\ndef train():\n    for prompt, code in samples:\n        env.reset(task=prompt)\n"
        "        _, r, _, _ = env.step(code)\n"
    ) + update.replace("    ", "        ", 1).replace("\n    ", "\n        ")
    assert classify_path(write(tmp_path, "grpo.py", sandboxed)).primary == "PPO"
    # an episode played as a demo after the update is not what it trained on; a meter is no environment
    demo = (
        ("import torch\ndef main():\n    meter.reset()\n    ema.step(policy)\n")
        + update
        + "    obs = env.reset()\n    for t in range(9):\n        obs, r, d, i = env.step(policy(obs))\n"
    )
    assert classify_path(write(tmp_path, "demo.py", demo)).primary == "PPO"


def test_an_algorithm_named_class_is_a_trainer_only_when_imported_and_given_no_environment(
    tmp_path: Path,
) -> None:
    """``GRPO(policy, ...)`` of a library trains; SB3's ``PPO("MlpPolicy", env)`` learns from the env."""
    library = (
        "from nanolib.rl import GRPO\ngrpo = GRPO(policy, ref, reward_fn, cfg)\n"
        "for b in batches:\n    grpo.step(b)\n"
    )
    assert classify_path(write(tmp_path, "lib.py", library)).primary == "GRPO"
    sb3 = (
        "from stable_baselines3 import PPO\nenv = make_vec_env('CartPole-v1', n_envs=4)\n"
        "model = PPO('MlpPolicy', env, n_steps=256)\nmodel.learn(total_timesteps=50_000)\n"
        "obs = env.reset()\nfor _ in range(100):\n    action, _ = model.predict(obs)\n"
        "    obs, r, d, i = env.step(action)\n"
    )
    assert classify_path(write(tmp_path, "sb3.py", sb3)).primary == "ONLINE_RL"
    own = (
        "import json\nclass KTO:\n    def step(self, row):\n        return {'label': row['score'] > 3}\n"
        "conv = KTO()\nout = [conv.step(r) for r in rows]\njson.dump(out, open('kto.json', 'w'))\n"
    )
    assert classify_path(write(tmp_path, "kto.py", own)).primary == "NONE_TRAINING"
    played = (
        "from agents import PPO\nenvs = make_vec_envs('ALFWorld', 4)\n"
        "ppo = PPO(actor_critic, clip_param=0.2)\n"
        "obs = envs.reset()\nfor update in range(100):\n    for step in range(128):\n"
        "        obs, reward, done, infos = envs.step(actor_critic.act(obs))\n    ppo.update(rollouts)\n"
    )
    assert classify_path(write(tmp_path, "played.py", played)).primary == "ONLINE_RL"


def test_a_detector_that_raises_is_the_files_error_not_the_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise AttributeError("'Attribute' object has no attribute 'prefix'")

    monkeypatch.setattr(batch, "classify_loaded", broken)
    result = classify_path(write(tmp_path, "train.py", "loss.backward()\n"))
    assert result.error == "internal error: AttributeError: 'Attribute' object has no attribute 'prefix'"
    assert result.path.endswith("train.py")


def test_a_reward_reading_a_tools_replies_serves_multi_turn_tool_rl(tmp_path: Path) -> None:
    replies = (
        "import re\n\ndef compute_score(solution_str, ground_truth):\n"
        "    docs = re.findall(r'<information>(.*?)</information>', solution_str)\n"
        "    return float(ground_truth in ' '.join(docs))\n"
    )
    assert classify_path(write(tmp_path, "search_reward.py", replies)).primary == "ONLINE_RL"
    # the spans left to a helper of the file the reward calls (Search-R1's extract_solution)
    helper = (
        "import re\n\ndef extract_docs(solution_str):\n"
        "    return re.findall(r'<information>(.*?)</information>', solution_str)\n\n"
        "def compute_score(solution_str, ground_truth):\n"
        "    return float(ground_truth in ' '.join(extract_docs(solution_str)))\n"
    )
    assert classify_path(write(tmp_path, "helper_reward.py", helper)).primary == "ONLINE_RL"
    # a comparison of something else with "tool" does not hide the tool's messages beside it
    later = (
        "def tool_reward(completions, **kwargs):\n"
        "    scores = [float(any(m['role'] == 'tool' for m in c)) for c in completions]\n"
        "    kinds = [c[0]['kind'] == 'tool' for c in completions]\n"
        "    return scores\n"
    )
    assert classify_path(write(tmp_path, "later_reward.py", later)).primary == "ONLINE_RL"
    # a call the model writes, checked against a reference: single-turn tool-call training
    calls = (
        "import re\n\ndef compute_score(solution_str, ground_truth):\n"
        "    calls = re.findall(r'<tool_call>(.*?)</tool_call>', solution_str)\n"
        "    return float(calls == ground_truth)\n"
    )
    assert classify_path(write(tmp_path, "call_reward.py", calls)).primary == "GRPO"


def test_scores_over_data_named_for_training_with_no_model_run_filter_that_data(tmp_path: Path) -> None:
    filtering = (
        "import json\nfrom metrics import get_accuracy_metric\n\n"
        "def build(results):\n    train_instances = []\n    for r in results:\n"
        "        if get_accuracy_metric(r['answer'], r['gold']) > 0:\n"
        "            train_instances.append({'src': r['prompt'], 'tgt': r['answer']})\n"
        "    with open('data/train.jsonl', 'w') as f:\n"
        "        for inst in train_instances:\n            f.write(json.dumps(inst) + '\\n')\n\n"
        "if __name__ == '__main__':\n    build(json.load(open('outputs/sampled.json')))\n"
    )
    assert classify_path(write(tmp_path, "filtering.py", filtering)).primary == "NONE_TRAINING"
    # read from a training split's file, as filters of sampled training answers often are
    from_train = filtering.replace("outputs/sampled.json", "data/train.json")
    assert classify_path(write(tmp_path, "from_train.py", from_train)).primary == "NONE_TRAINING"
    # the same scores over stored outputs, with nothing named for training: an evaluation's metric
    scoring = (
        "import json\nfrom metrics import get_accuracy_metric\n\n"
        "results = json.load(open('outputs/predictions.json'))\n"
        "accuracy = sum(get_accuracy_metric(r['answer'], r['gold']) for r in results) / len(results)\n"
        "print(f'accuracy: {accuracy:.3f}')\n"
    )
    assert classify_path(write(tmp_path, "scoring.py", scoring)).primary == "EVAL_ONLY"


def test_a_project_trainer_handed_its_own_config_is_not_named_by_a_route_config_beside_it(
    tmp_path: Path,
) -> None:
    common = (
        "from trl import SFTConfig, TrlParser\nfrom src.rlvr import MTRLVRTrainer, RLVRConfig\n"
        "args, training_args = TrlParser((ScriptArguments, SFTConfig)).parse_args_and_config()\n"
    )
    own = common + (
        "config = RLVRConfig(adv_estimator=args.adv_estimator, kl_coef=args.kl_coef)\n"
        "trainer = MTRLVRTrainer(model=model, reward_fn=reward, config=config)\ntrainer.train(loader)\n"
    )
    assert classify_path(write(tmp_path, "own.py", own)).primary == "UNKNOWN"
    # handed the route's config (or nothing of its own): that library trainer's twin, taking its settings
    beside = common + "trainer = MTRLVRTrainer(model=model, args=training_args)\ntrainer.train()\n"
    assert classify_path(write(tmp_path, "beside.py", beside)).primary == "SFT"


def test_a_loop_defined_below_its_call_is_read_from_its_own_body_once_the_file_is_read(
    tmp_path: Path,
) -> None:
    rewards_only = (
        "import sys\nfrom trl import GRPOConfig, GRPOTrainer\n\n"
        "def run(env):\n    train_loop(env, sys.argv[1:])\n\n"
        "def train_loop(env, args):\n"
        "    trainer = GRPOTrainer(model=m, args=GRPOConfig(num_generations=8),\n"
        "                          reward_funcs=[env.compute_rewards], train_dataset=ds)\n"
        "    trainer.train()\n"
    )
    assert classify_path(write(tmp_path, "rewards_only.py", rewards_only)).primary == "GRPO"
    # one that hands the environment on to another file's loop trains on its episodes
    handed_on = (
        "from agents.loops import collect_trajectories\n\n"
        "def run(env):\n    train_loop(env, model)\n\n"
        "def train_loop(env, model):\n    for _ in range(10):\n"
        "        batch = collect_trajectories(env, model, max_turns=10)\n"
        "        loss = model.update(batch)\n        loss.backward()\n        optimizer.step()\n"
    )
    assert classify_path(write(tmp_path, "handed_on.py", handed_on)).primary == "ONLINE_RL"


TEACHER_LOGITS = """
import torch
from transformers import AutoModelForCausalLM

teacher = AutoModelForCausalLM.from_pretrained(TEACHER).eval()
records = []
for sample in samples:
    ids = tokenizer(sample["text"], return_tensors="pt").input_ids
    with torch.no_grad():
        logits = teacher(ids).logits[0]
    top = torch.topk(logits, k=100, dim=-1)
    records.append({"id": sample["id"], "values": top.values, "indices": top.indices})
torch.save(records, "teacher_logits.pt")
"""


def test_a_teacher_s_saved_logits_are_data_generation_and_saved_features_are_not(tmp_path: Path) -> None:
    """Soft labels written for a student are data made to train on; embeddings written are features."""
    result = classify_path(write(tmp_path, "teacher.py", TEACHER_LOGITS))
    assert (result.primary, result.role) == ("DISTILLATION", "data_generation")
    features = TEACHER_LOGITS.replace("teacher(ids).logits[0]", "teacher(ids).hidden_states[-1][0]")
    assert classify_path(write(tmp_path, "features.py", features)).primary == "NONE_TRAINING"
    # a quantiser reading logits for perplexity writes weights
    quantised = TEACHER_LOGITS.replace(
        'torch.save(records, "teacher_logits.pt")', 'torch.save(q.state_dict(), "q.pt")'
    )
    assert classify_path(write(tmp_path, "quantise.py", quantised)).primary == "NONE_TRAINING"


@pytest.mark.parametrize("trainer", ["IWOPDTrainer", "MiniLLMTrainer", "GOLDTrainer"])
def test_trl_s_on_policy_distillation_trainers_are_knowledge_distillation_training(
    tmp_path: Path, trainer: str
) -> None:
    """A teacher's distribution learnt on the student's own samples is SFT + DISTILLATION (TAXONOMY.md),
    whatever policy-gradient form the loss takes."""
    code = (
        f"from trl.experimental import {trainer}\n\n"
        f"{trainer}(model=student, teacher_model=teacher, args=args, train_dataset=prompts).train()\n"
    )
    result = classify_path(write(tmp_path, "distill.py", code))
    assert (result.primary, result.labels) == ("SFT", ["SFT", "DISTILLATION"])


def test_a_script_handing_its_work_to_a_routine_named_for_evaluating_evaluates(tmp_path: Path) -> None:
    """A script whose only recognised work is a call of an evaluation routine evaluates; beside a
    training step the call decides nothing."""
    script = (
        "from vllm import SamplingParams\nfrom utils import load_dataset, evaluate_vllm\n"
        "params = SamplingParams(temperature=1.0)\n"
        "rewards, responses = evaluate_vllm(model, reward_fn, load_dataset('test'), params)\n"
        "if __name__ == '__main__':\n    print(sum(rewards))\n"
    )
    result = classify_path(write(tmp_path, "baseline.py", script))
    assert (result.primary, result.role) == ("EVAL_ONLY", "eval")
    assert any(f.detector == "EvaluationCall" for f in result.findings)
    # the same script with no evaluation routine called does nothing recognised
    plain = script.replace("evaluate_vllm", "run_vllm")
    assert classify_path(write(tmp_path, "plain.py", plain)).primary == "NONE_TRAINING"
    # a model's outputs written by a script whose routine is named for evaluating are its answers
    answers = (
        "import json, torch\nfrom transformers import AutoModelForCausalLM\n"
        "def eval_model(args):\n    model = AutoModelForCausalLM.from_pretrained(args.model)\n"
        "    out = open(args.answers_file, 'w')\n    for q in questions:\n"
        "        with torch.no_grad():\n            ids = model.generate(q, max_new_tokens=64)\n"
        "        out.write(json.dumps({'question': q, 'text': decode(ids)}) + '\\n')\n"
        "if __name__ == '__main__':\n    eval_model(parse())\n"
    )
    assert classify_path(write(tmp_path, "infer.py", answers)).primary == "EVAL_ONLY"
    assert (
        classify_path(write(tmp_path, "gen.py", answers.replace("eval_model", "run"))).primary
        == "DISTILLATION"
    )
    # a training step decides, whatever is evaluated after it
    trained = script + "loss = model(**batch).loss\nloss.backward()\noptimizer.step()\n"
    assert classify_path(write(tmp_path, "train.py", trained)).primary != "EVAL_ONLY"


def test_a_policy_gradient_over_the_turns_of_stored_episodes_is_online_rl(tmp_path: Path) -> None:
    """Episodes an environment loop recorded elsewhere, trained on turn by turn, are multi-turn samples."""
    update = (
        "import torch\n\n"
        "def update(policy, optimizer, group):\n"
        "    rewards = torch.tensor([t.reward for t in group.trajectories])\n"
        "    advantages = (rewards - rewards.mean()) / (rewards.std() + 1e-6)\n"
        "    loss = 0.0\n"
        "    for adv, trajectory in zip(advantages, group.trajectories):\n"
        "        for turn in {turns}:\n"
        "            logp = score(policy, turn.prompt_token_ids, turn.completion_token_ids)\n"
        "            ratio = torch.exp(logp - turn.old_logprobs)\n"
        "            clipped = torch.clamp(ratio, 0.8, 1.2)\n"
        "            loss = loss - torch.min(ratio * adv, clipped * adv).mean()\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    )
    turns = classify_path(write(tmp_path, "turns.py", update.format(turns="trajectory.turns")))
    assert turns.primary == "ONLINE_RL"
    assert any(f.detector == "EpisodeTurns" for f in turns.findings)
    # the same update over single completions stays single-turn GRPO
    single = classify_path(write(tmp_path, "single.py", update.format(turns="trajectory.samples")))
    assert single.primary == "GRPO"


def test_a_command_giving_an_evaluation_harness_its_model_args_and_tasks_evaluates(tmp_path: Path) -> None:
    """lm-evaluation-harness's options, handed to a fork's own script, run the harness on a model."""
    assert command_routes(
        "accelerate launch eval/eval.py --model c --model_args pretrained=out --tasks mbpp"
    ) == ["EVAL_ONLY"]
    assert command_routes("python run.py --tasks=gsm8k --model_args=pretrained=m") == ["EVAL_ONLY"]
    # one of the two alone is no harness's, nor are they a training run's (its tasks are its data)
    assert command_routes("python run.py --tasks gsm8k") != ["EVAL_ONLY"]
    assert command_routes("python mtl.py --model_args a --tasks sst2 --learning_rate 3e-4") != ["EVAL_ONLY"]
    # each command of a line is its own: training, then the harness
    both = "python train_sft.py --tasks gsm8k && python eval.py --model_args pretrained=out --tasks gsm8k"
    assert "SFT" in command_routes(both)
    driver = (
        "import subprocess\n\ndef main(model_path, task):\n"
        "    cmd = ['accelerate', 'launch', 'eval/eval.py', '--model', 'custom',\n"
        "           '--model_args', f'pretrained={model_path}', '--tasks', task]\n"
        "    subprocess.run(cmd, check=True)\n\n"
        "if __name__ == '__main__':\n    main('out', 'humaneval')\n"
    )
    assert classify_path(write(tmp_path, "run_eval.py", driver)).primary == "EVAL_ONLY"
    # a script the line runs, read where it lies, decides over its options; one that shows no route
    # leaves them to say
    (tmp_path / "main.py").write_text("import argparse\nargs = argparse.ArgumentParser().parse_args()\n")
    (tmp_path / "eval.sh").write_text("python main.py --model hf --model_args pretrained=ckpt --tasks arc\n")
    assert classify_path(tmp_path / "eval.sh").primary == "EVAL_ONLY"
    trained = "from trl import SFTTrainer\nSFTTrainer(model=m, train_dataset=d).train()\n"
    (tmp_path / "train.py").write_text(trained)
    (tmp_path / "run.sh").write_text("python train.py --model_args pretrained=m --tasks t\n")
    assert classify_path(tmp_path / "run.sh").primary == "SFT"


def test_a_script_running_a_loaded_model_evaluates_and_one_saving_it_converts(tmp_path: Path) -> None:
    """A checkpoint loaded and run on inputs, nothing saved: a model run, no weight update."""
    run = (
        "from transformers import AutoModelForSequenceClassification, AutoTokenizer\n"
        "tok = AutoTokenizer.from_pretrained('out')\n"
        "m = AutoModelForSequenceClassification.from_pretrained('out', num_labels=5)\n"
        "m.eval()\n"
        "output = m(**tok('I love this book', return_tensors='pt'))\n"
        "print(output.logits)\n"
    )
    assert classify_path(write(tmp_path, "run.py", run)).primary == "EVAL_ONLY"
    # the same model traced for serving: a conversion, nothing evaluated
    traced = run + "import torch\ntorch.jit.trace(m, example).save('m.pt')\n"
    assert classify_path(write(tmp_path, "trace.py", traced)).primary == "NONE_TRAINING"
    # only a tokenizer loaded and run: no model
    tokens = (
        "from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained('m')\nprint(tok('hi'))\n"
    )
    assert classify_path(write(tmp_path, "tok.py", tokens)).primary == "NONE_TRAINING"


def test_a_setting_named_for_a_distillation_loss_is_no_distillation(tmp_path: Path) -> None:
    code = (
        "kd_loss_weight = 0.0\nout = model(input_ids=ids, labels=labels)\n"
        "loss = out.loss * (1.0 - kd_loss_weight)\nloss.backward()\n"
    )
    assert classify_path(write(tmp_path, "train.py", code)).labels == ["SFT"]


@pytest.mark.parametrize(
    ("code", "primary"),
    [
        # values regressed on the returns: the critic of an actor-critic method
        (
            "values = critic(obs)\nloss = ((values - returns) ** 2).mean()\nloss.backward()\nopt.step()\n",
            "PPO",
        ),
        ("values = critic(obs)\nloss = (values[:, :-1] - returns).pow(2).mean()\nloss.backward()\n", "PPO"),
        (
            "import torch\nloss = torch.square(mc_returns - old_values.squeeze(-1)).mean()\n"
            "loss.backward()\n",
            "PPO",
        ),
        (
            "import torch.nn.functional as F\nreturns = advantages + values\n"
            "loss = F.mse_loss(input=critic(obs), target=returns)\nloss.backward()\n",
            "UNKNOWN",
        ),
        (
            "import torch.nn as nn\nreturns = advantages + old_values\n"
            "loss = nn.MSELoss()(new_values, returns)\nloss.backward()\n",
            "PPO",
        ),
        # values regressed on labels: a regression head, not fitted to returns
        ("import torch.nn.functional as F\nloss = F.mse_loss(values, labels)\nloss.backward()\n", "UNKNOWN"),
        # predicted returns-to-go (a Decision Transformer's) are no value head's
        ("loss = ((return_preds - returns_to_go) ** 2).mean()\nloss.backward()\n", "UNKNOWN"),
        # the values and the returns handed to a call that is no regression
        ("loss = log_stats(values, returns) + aux\nloss.backward()\n", "UNKNOWN"),
    ],
)
def test_a_value_head_fitted_to_returns_is_an_actor_critic_s_critic(
    tmp_path: Path, code: str, primary: str
) -> None:
    result = classify_path(write(tmp_path, "critic.py", code))
    assert (result.primary, result.role) == (primary, "training")


def test_a_regression_on_returns_with_no_rl_around_is_no_critic(tmp_path: Path) -> None:
    # predicted stock returns fitted to the returns: no advantages, no old values, no discount
    code = "predicted_values = model(x)\nloss = ((predicted_values - returns) ** 2).mean()\n"
    result = classify_path(write(tmp_path, "stocks.py", code + "loss.backward()\n"))
    assert result.role == "training"
    assert result.primary not in ("PPO", "GRPO", "ONLINE_RL")


@pytest.mark.parametrize(
    ("code", "primary"),
    [
        # RLHF PPO's reward shaping: each token's reward is the KL penalty, the score added at the end
        (
            "def compute_rewards(scores, logprobs, ref_logprobs, kl_coef):\n"
            "    kl = logprobs - ref_logprobs\n    rewards = -kl_coef * kl\n"
            "    rewards[:, -1] += scores\n    return rewards\n",
            "PPO",
        ),
        # a KL only logged beside the reward: the reward is the plain score
        (
            "def compute_reward(completion, answer, kl, beta):\n"
            "    stats = {'kl_penalty': -beta * kl}\n    return float(completion == answer)\n",
            "GRPO",
        ),
    ],
)
def test_a_reward_with_the_kl_penalty_folded_in_serves_ppo(tmp_path: Path, code: str, primary: str) -> None:
    result = classify_path(write(tmp_path, "rewards.py", code))
    assert (result.primary, result.role) == (primary, "component")


RM_CLASS = (
    "import torch.nn as nn\nfrom transformers import Qwen2ForSequenceClassification, Trainer\n"
    "class CodeRewardModel(Qwen2ForSequenceClassification):\n    def __init__(self, config):\n"
    "        config.num_labels = 1\n        super().__init__(config)\n"
)


def test_a_supervised_loss_beside_the_reward_model_class_it_defines_trains_that_scorer(
    tmp_path: Path,
) -> None:
    # a Trainer subclass regressing scores with its own loss, in the file defining the reward model
    source = RM_CLASS + (
        "class CodeTrainer(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n"
        "        logits = model(**inputs['data'])['logits']\n"
        "        loss = nn.MSELoss()(logits.squeeze(), inputs['label'].squeeze())\n        return loss\n"
    )
    assert classify_path(write(tmp_path, "trainer.py", source)).primary == "REWARD_MODEL"


@pytest.mark.parametrize(
    "tail",
    [
        # a generic trainer handed a causal LM: it trains that model, whatever class the file defines
        "def main(args, ds):\n    actor = AutoModelForCausalLM.from_pretrained(args.actor)\n"
        "    Trainer(model=actor, args=TrainingArguments(args.out), train_dataset=ds).train()\n",
        # best-of-n: the reward model picks samples the policy is fine-tuned on
        "def main(policy, rm, prompts, ds):\n    outs = policy.generate(ids, do_sample=True)\n"
        "    Trainer(model=policy, args=TrainingArguments('o'), train_dataset=ds).train()\n",
    ],
)
def test_a_reward_model_class_beside_another_model_s_training_leaves_it_supervised(
    tmp_path: Path, tail: str
) -> None:
    source = RM_CLASS.replace("Trainer\n", "Trainer, TrainingArguments, AutoModelForCausalLM\n") + tail
    assert classify_path(write(tmp_path, "train.py", source)).primary == "SFT"


def test_a_library_class_named_for_one_algorithm_does_not_decide_against_the_loss(tmp_path: Path) -> None:
    # verl names every actor DataParallelPPOActor: a subclass computing group-relative advantages and a
    # clipped ratio trains GRPO, with no PPO stage from the base class's name
    source = (
        "import torch\nfrom verl.workers.actor import DataParallelPPOActor\n"
        "class GroupActor(DataParallelPPOActor):\n"
        "    def update_policy(self, data):\n"
        "        r = data['rewards'].view(-1, self.n)\n"
        "        advantages = (r - r.mean(dim=1, keepdim=True)) / (r.std(dim=1, keepdim=True) + 1e-6)\n"
        "        advantages = advantages.flatten()\n"
        "        ratio = torch.exp(data['log_probs'] - data['old_log_probs'])\n"
        "        loss = -torch.min(ratio * advantages, torch.clamp(ratio, 0.8, 1.2) * advantages).mean()\n"
        "        loss.backward()\n        self.actor_optimizer.step()\n"
    )
    result = classify_path(write(tmp_path, "actor.py", source))
    assert [s.kind for s in result.stages] == ["grpo"]


def test_an_untagged_tool_loop_beside_a_library_trainer_does_not_make_it_online(tmp_path: Path) -> None:
    # TRL's GRPOTrainer samples for itself; a loop trying the trained model with a calculator after
    # training is not known to feed it
    source = (
        "from trl import GRPOTrainer\n"
        "def solve_with_calculator(model, tool_manager, conv, max_turns=4):\n"
        "    for _ in range(max_turns):\n        text = generate_reply(model, conv)\n"
        "        conv = add(conv, tool_manager.call_tool(text))\n    return conv\n"
        "def main(m, r, d, tools):\n"
        "    trainer = GRPOTrainer(model=m, reward_funcs=[r], train_dataset=d)\n    trainer.train()\n"
        "    print(solve_with_calculator(trainer.model, tools, []))\n"
    )
    assert classify_path(write(tmp_path, "train.py", source)).primary == "GRPO"


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("proj/synthesis_cot/generate_oai.py", "synthesis_cot/"),
        ("proj/data/gen.py", "data/"),
        ("proj/scripts/generate_questions.py", "generate_questions.py"),
        # a repository's own folder names its project, not what each file does; a data helpers' folder
        # holds no generation
        ("laffytaffyz+dllm-distillation/sample.py", None),
        ("my-distillation-project/sample.py", None),
        ("proj/data_utils/loader.py", None),
        ("proj/natural_questions/predict.py", None),
    ],
)
def test_a_place_named_for_making_data(path: str, place: str | None) -> None:
    from arb_audit.analyzer.classify import data_generation_place

    assert data_generation_place(path) == place


def test_a_kl_penalised_score_in_evaluation_code_is_no_reward_shaping(tmp_path: Path) -> None:
    # ``rewards - kl_penalty`` shapes RLHF PPO's rewards in training code; an evaluation reports it
    source = (
        "def evaluate_kl_penalized_reward(rewards, logprobs, ref_logprobs, kl_coef):\n"
        "    kl_penalty = kl_coef * (logprobs - ref_logprobs).sum(-1)\n"
        "    return (rewards - kl_penalty).mean()\n"
        "def kl_penalize_reward(rewards, logprobs, ref_logprobs, kl_coef):\n"
        "    kl_penalty = kl_coef * (logprobs - ref_logprobs)\n"
        "    return rewards - kl_penalty\n"
    )
    found = classify_path(write(tmp_path, "rewards.py", source)).findings
    shaped = [f.line for f in found if f.signal == "loss" and f.kind == "ppo"]
    assert shaped == [4]


def test_a_reward_trainer_built_to_predict_takes_no_step_where_the_file_writes_data(tmp_path: Path) -> None:
    # the loss hook of a trainer that only predicts is a loss, not a step, in the evidence too, also where
    # the file writes records (the perplexity filter must not hide that rewrite)
    source = (
        "import json\nimport torch.nn.functional as F\nfrom transformers import Trainer\n"
        "class PairTrainer(Trainer):\n    def compute_loss(self, model, inputs):\n"
        "        return -F.logsigmoid(inputs['chosen'] - inputs['rejected']).mean()\n"
        "trainer = PairTrainer(model=rm, args=args)\nscores = trainer.predict(ds)\n"
        "records = [{'score': float(s)} for s in scores.predictions]\n"
        "with open('scores.json', 'w') as f:\n    json.dump(records, f)\n"
    )
    result = classify_path(write(tmp_path, "score.py", source))
    assert not any(f.signal == "gradient_step" for f in result.findings)
    assert result.primary not in ("REWARD_MODEL", "UNKNOWN")


def test_a_sampling_engine_taking_the_policy_weights_is_the_rl_loop_rollout_worker(tmp_path: Path) -> None:
    # vLLM handed a trainer's tensors as it samples: the rollout side of on-policy RL, not an evaluation;
    # the same engine sampled with no weights taken in, and scored, evaluates
    worker = (
        "from vllm import LLM, SamplingParams\nclass RolloutWorker:\n"
        "    def __init__(self, path):\n        self.llm = LLM(model=path)\n"
        "    def update_weights(self, state_dict):\n"
        "        model = self.llm.llm_engine.model_executor.driver_worker.model_runner.model\n"
        "        model.load_weights(state_dict.items())\n"
        "    def rollout(self, prompts):\n        return self.llm.generate(prompts, SamplingParams(n=8))\n"
    )
    result = classify_path(write(tmp_path, "rollout_worker.py", worker))
    assert (result.role, result.primary) == ("component", "GRPO")
    evaluation = (
        "from vllm import LLM, SamplingParams\nllm = LLM(model='out')\n"
        "outs = llm.generate(questions, SamplingParams(temperature=0))\n"
        "acc = sum(o.outputs[0].text.strip() == a for o, a in zip(outs, answers)) / len(answers)\n"
        "print(f'accuracy: {acc}')\n"
    )
    assert classify_path(write(tmp_path, "eval.py", evaluation)).primary == "EVAL_ONLY"


def test_a_tool_loop_beside_a_stage_reported_late_is_weighed_after_every_detector(tmp_path: Path) -> None:
    # an untagged turn loop beside a stage is not known to feed it; the merge below is found only as its
    # detector leaves the module, after the tool loop's detector in name order
    source = (
        "import torch\n"
        "def generate_with_tool_calls(model, tool_manager, conv, max_rounds=5):\n"
        "    for _ in range(max_rounds):\n"
        "        text = generate_conversation_fn(model=model, inputs=conv)\n"
        "        result = tool_manager.call_tool(text)\n"
        "        conv = handle_tool_result(result, conv)\n"
        "a = torch.load(p)\nb = torch.load(q)\n"
        "torch.save({k: (a[k] + b[k]) / 2 for k in a}, out)\n"
    )
    found = classify_path(write(tmp_path, "merge_then_chat.py", source)).findings
    assert any(f.signal == "stage" and f.kind == "merge" for f in found)
    assert not any(f.signal == "interactive" and f.detector == "ToolFeedback" for f in found)
