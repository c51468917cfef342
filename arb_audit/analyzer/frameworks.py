"""Framework knowledge as data: which public names of which training framework run which stage.

One :class:`Framework` per library, with its top-level package and one :class:`Entry` per trainer class,
train function, pipeline or entry point. An entry either fixes the stage (``kind``), or says that a
config key or flag picks it (``routes``, with ``default`` and the ``key``), or that it evaluates
(``role="eval"``). A name matches an entry when its qualified name lies in the framework's package and
ends with the entry's name — the public re-export (``areal.DPOTrainer``) and the internal path
(``areal.trainer.dpo.DPOTrainer``) alike — whether the file calls it, constructs it or subclasses it.

Each framework carries examples, code the table must resolve to a label and code it must not; the
tests run them, and every entry's own name is tested by a generated import-and-call example. Adding a
framework is one :class:`Framework` here. These are supporting evidence: a loss found in the file
decides over them (TAXONOMY.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Entry:
    """One public name of a framework and what using it runs."""

    name: str
    """The last component of the qualified name (a class or a function)."""
    kind: str | None = None
    """Stage kind it runs, when fixed."""
    variant: str | None = None
    """Algorithm variant, when fixed."""
    data_source: str | None = None
    """``distilled`` / ``self_generated`` when the entry fixes where the targets come from."""
    interactive: bool = False
    """Its rollouts are multi-turn environment or tool episodes."""
    routes: tuple[str, ...] = ()
    """When a config key or flag picks the route: every file label it can select."""
    default: str | None = None
    """The label selected when the key is not set."""
    key: str | None = None
    """The config key or flag that picks the route."""
    role: str | None = None
    """``eval`` for an evaluation entry point."""


@dataclass(frozen=True, slots=True)
class Framework:
    """A training or evaluation framework."""

    name: str
    """As people call it."""
    package: str
    """Its top-level import package."""
    entries: tuple[Entry, ...]
    """Its public names that decide a route."""
    valid: tuple[str, ...] = ()
    """Code that must resolve to no entry."""
    invalid: tuple[tuple[str, str], ...] = ()
    """Code and the label it must resolve to."""


RL_ROUTES = ("GRPO", "PPO")
FRAMEWORKS: tuple[Framework, ...] = (
    Framework(
        "NeMo-Aligner",
        "nemo_aligner",
        (
            Entry("DPOTrainer", "dpo", "dpo"),
            Entry("SPINTrainer", "dpo", "spin", "self_generated"),
            Entry("PPOTrainer", "ppo", "ppo"),
            Entry("CriticServerTrainer", "ppo", "ppo"),
            Entry("ReinforceTrainer", "ppo", "reinforce"),
            Entry("RSTrainer", "sft", "rejection_sampling", "self_generated"),
            Entry("SupervisedTrainer", "sft"),
        ),
        invalid=(
            ("from nemo_aligner.algorithms.dpo import DPOTrainer\nt = DPOTrainer(cfg)\nt.fit()\n", "DPO"),
        ),
        valid=("from nemo_aligner.utils.distributed import Timer\nTimer(cfg)\n",),
    ),
    Framework(
        "NeMo-RL",
        "nemo_rl",
        (
            Entry("sft_train", "sft"),
            Entry("dpo_train", "dpo", "dpo"),
            Entry("grpo_train", "grpo", "grpo"),
            Entry("rm_train", "reward_model"),
            Entry("distillation_train", "sft", "distillation", "distilled"),
            Entry("run_env_eval", role="eval"),
        ),
        invalid=(("from nemo_rl.algorithms.grpo import grpo_train\ngrpo_train(policy, data)\n", "GRPO"),),
        valid=("from nemo_rl.algorithms.utils import get_tokenizer\nget_tokenizer(cfg)\n",),
    ),
    Framework(
        "prime-rl",
        "prime_rl",
        (Entry("sft_train", "sft"), Entry("dpo_train", "dpo", "dpo"), Entry("grpo_train", "grpo", "grpo")),
        invalid=(("from prime_rl.trainer.sft import sft_train\nsft_train(cfg)\n", "SFT"),),
    ),
    Framework(
        "AReaL",
        "areal",
        (
            # The RL trainer's algorithm (group-normalised or not) comes from the YAML; every shipped
            # default normalises advantages within groups.
            Entry("PPOTrainer", "grpo", None, key="actor.adv_norm"),
            Entry("DPOTrainer", "dpo", "dpo"),
            Entry("RWTrainer", "reward_model"),
            Entry("SFTTrainer", "sft"),
        ),
        invalid=(("from areal import RWTrainer\nRWTrainer(config)\n", "REWARD_MODEL"),),
        valid=("from areal.api.cli_args import load_expr_config\nload_expr_config(args)\n",),
    ),
    Framework(
        "ROLL",
        "roll",
        (
            Entry("DPOPipeline", "dpo", "dpo"),
            Entry("SFTPipeline", "sft"),
            Entry("DistillPipeline", "sft", "distillation", "distilled"),
            Entry("AgenticPipeline", "grpo", None, interactive=True),
            Entry("RLVRPipeline", routes=("PPO", "GRPO"), default="PPO", key="adv_estimator"),
        ),
        invalid=(
            ("from roll.pipeline.dpo.dpo_pipeline import DPOPipeline\nDPOPipeline(cfg).run()\n", "DPO"),
            (
                "from roll.pipeline.rlvr.rlvr_pipeline import RLVRPipeline\nRLVRPipeline(cfg).run()\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
    Framework(
        "SkyRL",
        "skyrl",
        (
            Entry(
                "RayPPOTrainer", routes=RL_ROUTES, default="GRPO", key="trainer.algorithm.advantage_estimator"
            ),
            Entry(
                "BasePPOExp", routes=RL_ROUTES, default="GRPO", key="trainer.algorithm.advantage_estimator"
            ),
            Entry("SFTTrainer", "sft"),
        ),
        invalid=(
            (
                "from skyrl.train.trainer import RayPPOTrainer\nRayPPOTrainer(cfg).train()\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
    Framework(
        "ms-swift",
        "swift",
        (
            Entry(
                "rlhf_main", routes=("DPO", "REWARD_MODEL", "PPO", "GRPO"), default="DPO", key="--rlhf_type"
            ),
            Entry(
                "SwiftRLHF", routes=("DPO", "REWARD_MODEL", "PPO", "GRPO"), default="DPO", key="--rlhf_type"
            ),
            Entry("sft_main", "sft"),
            Entry("pt_main", "sft", "pretrain"),
            Entry("SwiftSft", "sft"),
            Entry("GKDTrainer", "sft", "gkd", "distilled"),
            Entry("GRPOTrainer", "grpo", "grpo"),
            Entry("PPOTrainer", "ppo", "ppo"),
            Entry("DPOTrainer", "dpo", "dpo"),
            Entry("RewardTrainer", "reward_model"),
            Entry("eval_main", role="eval"),
        ),
        invalid=(("from swift.pipelines import rlhf_main\nrlhf_main()\n", "CONFIG_DEPENDENT"),),
    ),
    Framework(
        "axolotl",
        "axolotl",
        (
            Entry("train", routes=("SFT", "DPO", "GRPO", "REWARD_MODEL"), default="SFT", key="rl"),
            Entry("do_train", routes=("SFT", "DPO", "GRPO", "REWARD_MODEL"), default="SFT", key="rl"),
            Entry("evaluate", role="eval"),
        ),
        invalid=(
            ("from axolotl.train import train\ntrain(cfg=cfg, dataset_meta=meta)\n", "CONFIG_DEPENDENT"),
        ),
        valid=("from axolotl.utils.dict import DictDefault\nDictDefault({})\n",),
    ),
    Framework(
        "oat",
        "oat",
        (
            Entry("DAPLearner", "dpo", "online_dpo"),
            Entry("XPOLearner", "dpo", "xpo"),
            Entry("APLLearner", "dpo", "apl"),
            Entry("PPOLearner", "ppo", "ppo"),
            Entry("PPOMultiTurnLearner", "ppo", "ppo", interactive=True),
            Entry("SFTLearner", "sft"),
            Entry("RESTLearner", "sft", "rest", "self_generated"),
        ),
        invalid=(("from oat.learners import DAPLearner\nclass L(DAPLearner):\n    pass\n", "DPO"),),
    ),
    Framework(
        "SPIN / alignment-handbook",
        "alignment",
        (Entry("SPINTrainer", "dpo", "spin", "self_generated"),),
        invalid=(("from alignment import SPINTrainer\nSPINTrainer(model, ref).train()\n", "DPO"),),
        valid=("from alignment import H4ArgumentParser\nH4ArgumentParser(x)\n",),
    ),
    Framework(
        "MiniLLM (LMOps)",
        "minillm",
        (Entry("train", "sft", "minillm", "distilled"),),
        invalid=(("from minillm import train\ntrain(args, tokenizer, model, teacher)\n", "SFT"),),
    ),
    Framework(
        "RL4LMs",
        "rl4lms",
        (
            Entry("OnPolicyTrainer", "ppo", "ppo"),
            Entry("SupervisedTrainer", "sft"),
        ),
        invalid=(
            (
                "from rl4lms.envs.text_generation.training_utils import SupervisedTrainer\n"
                "SupervisedTrainer(c)\n",
                "SFT",
            ),
        ),
    ),
    Framework(
        "FastChat",
        "fastchat",
        (
            # fastchat.train.train.train / train_lora.train / train_mem: supervised fine-tuning on
            # conversations with the assistant turns as targets.
            Entry("train", "sft"),
            Entry("play_a_match_single", role="eval"),
            Entry("play_a_match_pair", role="eval"),
        ),
        invalid=(("from fastchat.train.train import train\ntrain()\n", "SFT"),),
        valid=("from fastchat.conversation import get_conv_template\nget_conv_template('vicuna_v1.1')\n",),
    ),
    Framework(
        "lm-evaluation-harness",
        "lm_eval",
        (
            Entry("simple_evaluate", role="eval"),
            Entry("evaluate", role="eval"),
            Entry("cli_evaluate", role="eval"),
        ),
        invalid=(("import lm_eval\nlm_eval.simple_evaluate(model='hf', tasks=['gsm8k'])\n", "EVAL_ONLY"),),
        valid=("from lm_eval.utils import make_table\nmake_table(r)\n",),
    ),
)
"""Every framework the table knows."""

_BY_PACKAGE: dict[str, dict[str, Entry]] = {f.package: {e.name: e for e in f.entries} for f in FRAMEWORKS}
PACKAGES: tuple[str, ...] = tuple(f.package for f in FRAMEWORKS)
"""Top-level packages of the frameworks."""
IMPORT_WORDS: tuple[str, ...] = tuple(w for p in PACKAGES for w in (f"from {p}", f"import {p}"))
"""What a file that uses a framework of the table holds (a file with none of these needs no lookup)."""


def entry_for(qualified: str) -> Entry | None:
    """Return the table entry a qualified name denotes, if any."""
    root, _, rest = qualified.partition(".")
    entries = _BY_PACKAGE.get(root)
    if entries is None or not rest:
        return None
    return entries.get(qualified.rsplit(".", 1)[-1])
