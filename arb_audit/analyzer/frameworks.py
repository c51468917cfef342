"""Framework knowledge as data: which public names of which training framework run which stage.

One :class:`Framework` per library, with its top-level package and one :class:`Entry` per trainer class,
train function, pipeline, loss or entry point. An entry either fixes the stage (``kind``), or says that
a config key, flag or argument picks it (``key``, with the labels it can select in ``routes`` or, when
its values are known, one entry per value in ``choices``, and the ``default``), or that it evaluates
(``role="eval"``). A name matches an entry when its qualified name lies in the framework's package and
ends with the entry's name (one component, ``DPOTrainer``, or a dotted tail, ``train_dpo.train``, where
the last component alone says nothing) — the public re-export (``areal.DPOTrainer``) and the internal
path (``areal.trainer.dpo.DPOTrainer``) alike — whether the file calls it, constructs it or subclasses
it. An entry's ``command`` is how a shell reaches the same thing (``trl dpo``, ``tune run <recipe>``,
``python -m openrlhf.cli.train_dpo``): the launcher reader (launchers.py) matches command lines
against it.

Each framework carries examples, code the table must resolve to a label and code it must not, and
command lines with the label they run; the tests run them, and every entry is tested by a generated
import-and-call example and, when it has a command, a generated command line. Adding a framework is one
:class:`Framework` here. These are supporting evidence: a loss found in the file decides over them
(TAXONOMY.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase

from arb_audit.taxonomy.files import STAGE_LABELS


@dataclass(frozen=True, slots=True)
class Entry:
    """One public name or command of a framework and what using it runs."""

    name: str
    """The last component(s) of the qualified name (a class or a function); empty for a command only.
    In ``choices``: the value of the key (a glob: ``*dpo*``)."""
    kind: str | None = None
    """Stage kind it runs, when fixed; with ``choices``, what runs when the key is not set (a key that
    only picks the variant)."""
    variant: str | None = None
    """Algorithm variant, when fixed."""
    data_source: str | None = None
    """``distilled`` / ``self_generated`` when the entry fixes where the targets come from."""
    interactive: bool = False
    """Its rollouts are multi-turn environment or tool episodes."""
    routes: tuple[str, ...] = ()
    """When a config key or flag picks the route and its values are not listed: every file label it can
    select."""
    default: str | None = None
    """The label selected when the key is not set."""
    key: str | None = None
    """The config key, flag or keyword argument that picks the route; for a command with ``choices`` and
    no key, the first word after the command that names a choice picks it (``tune run <recipe>``)."""
    role: str | None = None
    """``eval`` for an evaluation entry point; ``environment`` for the base of a tool or environment that
    answers a policy between its turns in the framework's multi-turn rollouts (a file defining one is a
    component of online RL)."""
    choices: tuple[Entry, ...] = ()
    """What each value of ``key`` runs, when the values are known (first match wins)."""
    commands: tuple[str, ...] = ()
    """Command lines that run it: words, each a glob; ``-m module`` for ``python -m``/``--module``."""
    on_policy: bool | None = None
    """Whether it trains on samples of the current policy, where the kind alone does not say."""
    given: tuple[tuple[str, Entry], ...] = ()
    """For a function whose route its arguments decide: what runs when the call is given each keyword
    argument (the first given wins); a call given none of them is no evidence."""
    switch_only: bool = False
    """For a command whose ``key`` only switches a stage on (``swift export --merge_lora true``): with the
    key unset on the command line, or set to no choice, the command runs no stage (it converts,
    quantises or uploads). A YAML config the command is given is not read for the key."""
    trained_by: str | None = None
    """For a class that builds a model object rather than a run: the method whose call with data in the
    same file trains it (``model.train(groups)``; a torch module's ``train()``/``train(False)`` switches
    a mode), or ``method(keyword)`` when a method so common (``fit``) only counts given that keyword, or
    ``method()`` when the method's name says a training run and a call without arguments counts
    (``recipe.run_train_validation_loop()``).
    A file that builds one and never trains it (deploys, serves or inspects the model) runs no
    stage."""

    @property
    def label(self) -> str | None:
        """The file label a fixed entry runs (None for one whose key picks)."""
        if self.kind is not None:
            return "ONLINE_RL" if self.interactive else STAGE_LABELS[self.kind]
        return {"eval": "EVAL_ONLY", "environment": "ONLINE_RL"}.get(self.role or "")

    @property
    def labels(self) -> tuple[str, ...]:
        """Every label the entry can select: its ``routes``, else its choices' labels, default first."""
        found = self.routes or tuple(c.label for c in self.choices if c.label is not None)
        return tuple(dict.fromkeys([self.default, *found] if self.default else found))

    def choose(self, value: str) -> Entry | None:
        """Return the choice a value of the key selects, if any."""
        return next((c for c in self.choices if fnmatchcase(value.lower(), c.name)), None)


@dataclass(frozen=True, slots=True)
class Framework:
    """A training or evaluation framework."""

    name: str
    """As people call it."""
    package: str
    """Its top-level import package."""
    entries: tuple[Entry, ...]
    """Its public names and commands that decide a route."""
    valid: tuple[str, ...] = ()
    """Code that must resolve to no entry."""
    invalid: tuple[tuple[str, str], ...] = ()
    """Code and the label it must resolve to."""
    lines: tuple[tuple[str, str | None], ...] = ()
    """Command lines and the label they must run (None: no route)."""


def _stages(*pairs: tuple[str, Entry]) -> tuple[Entry, ...]:
    """Choices written as ``(value glob, what it runs)`` pairs."""
    return tuple(
        Entry(glob, e.kind, e.variant, e.data_source, e.interactive, role=e.role, on_policy=e.on_policy)
        for glob, e in pairs
    )


SFT = Entry("", "sft")
DPO = Entry("", "dpo", "dpo")
KTO = Entry("", "dpo", "kto")
PPO = Entry("", "ppo", "ppo")
GRPO = Entry("", "grpo", "grpo")
REWARD = Entry("", "reward_model")
EVAL = Entry("", role="eval")
PRETRAIN = Entry("", "sft", "pretrain")
DISTILL = Entry("", "sft", "distillation", "distilled")
ESTIMATORS = _stages(
    ("gae", PPO),
    ("ppo", PPO),
    ("grpo", GRPO),
    ("gspo", Entry("", "grpo", "gspo")),
    ("group_norm", GRPO),
    ("dr_grpo", GRPO),
    ("rloo", Entry("", "ppo", "rloo")),
    ("reinforce_plus_plus*", Entry("", "ppo", "reinforce++")),
    ("reinforce_baseline", Entry("", "ppo", "reinforce_baseline")),
    ("reinforce*", Entry("", "ppo", "reinforce")),
    ("remax", Entry("", "ppo", "remax")),
)
"""Advantage estimators of policy-gradient launchers (OpenRLHF, verl): GAE is PPO, group-normalised GRPO."""


def estimator_entry(value: str) -> Entry | None:
    """Return what an advantage estimator's name runs (``group_norm`` -> GRPO, ``gae`` -> PPO), if known."""
    return next((e for e in ESTIMATORS if fnmatchcase(value.lower(), e.name)), None)


AGENT_ESTIMATORS = tuple(replace(e, interactive=True) for e in ESTIMATORS)
"""The same estimators over an agent framework's episodes (multi-turn calls, tools, environments)."""
RL_ROUTES = ("GRPO", "PPO")
SWIFT_RLHF_TYPES = _stages(
    ("dpo", DPO),
    ("kto", KTO),
    *((name, Entry("", "dpo", name)) for name in ("cpo", "orpo", "simpo")),
    ("rm", REWARD),
    ("ppo", PPO),
    ("grpo", GRPO),
    ("gkd", Entry("", "sft", "gkd", "distilled")),
)
"""What each ``--rlhf_type`` of ms-swift's ``swift rlhf`` runs (dpo unless set)."""
AXOLOTL_RL = _stages(
    *((name, Entry("", "dpo", name)) for name in ("dpo", "ipo", "kto", "orpo", "simpo")),
    ("grpo", GRPO),
)
"""What each value of axolotl's ``rl`` key runs (supervised fine-tuning unless set)."""
FASTCHAT_TRAINING_SCRIPTS = (
    *("train", "train_mem", "train_lora", "train_xformers", "train_flant5", "train_lora_t5"),
    *("train_baichuan", "train_yuan2", "train_with_template"),
)
"""FastChat's supervised fine-tuning scripts (``fastchat/train/``)."""
TRUE_VALUES = frozenset({"true", "1", "yes"})
"""Values that turn a command line's switch on (``--merge_lora true``, ``--do_eval 1``)."""


def _skyrl_main(package: str) -> Entry:
    """SkyRL's entry script run as a module: the config's estimator picks, GRPO unless set."""
    return Entry(
        "",
        routes=RL_ROUTES,
        default="GRPO",
        key="advantage_estimator",
        commands=(f"-m {package}.entrypoints.main_base",),
    )


SKYRL_ENTRIES = (
    Entry("RayPPOTrainer", routes=RL_ROUTES, default="GRPO", key="trainer.algorithm.advantage_estimator"),
    Entry("BasePPOExp", routes=RL_ROUTES, default="GRPO", key="trainer.algorithm.advantage_estimator"),
    Entry("SFTTrainer", "sft"),
)
"""SkyRL's trainer entries (its RL trainer's estimator comes from the config)."""

FRAMEWORKS: tuple[Framework, ...] = (
    Framework(
        "Agent Lightning",
        "agentlightning",
        (
            # run_ppo trains verl's actor on the trajectories an agent's runner records (its LLM calls,
            # tools and environment steps); algorithm.adv_estimator picks the estimator
            Entry(
                "entrypoint.run_ppo", "grpo", interactive=True, key="adv_estimator", choices=AGENT_ESTIMATORS
            ),
        ),
        invalid=(
            (
                "from agentlightning.verl.entrypoint import run_ppo\n"
                "config = {'algorithm': {'adv_estimator': 'rloo'}}\nrun_ppo(config, train_dataset=d)\n",
                "ONLINE_RL",
            ),
        ),
    ),
    Framework(
        "rLLM",
        "rllm",
        (
            # AgentTrainer runs a workflow's episodes (one model call or many, as the workflow says)
            # through verl's or tinker's policy-gradient update; rllm.algorithm.adv_estimator picks the
            # estimator, grpo by default. AgentSFTTrainer fine-tunes on recorded trajectories.
            Entry("AgentTrainer", "grpo", "grpo", key="adv_estimator", choices=ESTIMATORS),
            Entry("AgentSFTTrainer", "sft"),
            # the verl backend's trainer, built by its Hydra entry script: the config picks
            Entry("AgentWorkflowPPOTrainer", routes=RL_ROUTES, default="GRPO", key="algorithm.adv_estimator"),
        ),
        invalid=(
            (
                "from rllm.trainer import AgentTrainer\n"
                "trainer = AgentTrainer(workflow_class=math_flow, config=config, train_dataset=d)\n"
                "trainer.train()\n",
                "GRPO",
            ),
        ),
        valid=("from rllm.data.dataset import DatasetRegistry\nDatasetRegistry.load_dataset('math')\n",),
    ),
    Framework(
        "pyreft",
        "pyreft",
        (
            # representation fine-tuning: interventions trained with the task's supervised loss
            Entry("ReftTrainerForCausalLM", "sft", "reft"),
            Entry("ReftTrainerForCausalLMDistributed", "sft", "reft"),
            Entry("ReftTrainerForSequenceClassification", "sft", "reft"),
        ),
        invalid=(
            (
                "import pyreft\ntrainer = pyreft.ReftTrainerForCausalLM(model=m, args=a, **data)\n"
                "trainer.train()\n",
                "SFT",
            ),
        ),
        valid=("import pyreft\npyreft.get_reft_model(model, config)\n",),
    ),
    Framework(
        "slime",
        "slime",
        (
            # train.py / train_async.py: the rollout manager and the Megatron actor (a critic only for
            # ppo) run what --advantage-estimator names, grpo by default
            Entry("arguments.parse_args", key="advantage_estimator", default="GRPO", choices=ESTIMATORS),
        ),
        invalid=(
            (
                "from slime.utils.arguments import parse_args\nargs = parse_args()\ntrain(args)\n",
                "CONFIG_DEPENDENT",
            ),
        ),
        valid=("from slime.utils.types import Sample\nSample(prompt=p)\n",),
    ),
    Framework(
        "PipelineRL",
        "pipelinerl",
        (
            # the finetuning loop's rl_step computes the loss finetune.rl.policy_loss names (ppo default)
            Entry(
                "finetune_loop.run_finetuning_loop",
                key="policy_loss",
                default="PPO",
                choices=_stages(("ppo", PPO), ("reinforce", Entry("", "ppo", "reinforce")), ("gspo", GRPO)),
            ),
        ),
        invalid=(
            (
                "from pipelinerl.finetune_loop import run_finetuning_loop\nrun_finetuning_loop(cfg)\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
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
        "NeMo AutoModel",
        "nemo_automodel",
        (
            # A recipe object is built from a config, set up, then run by run_train_validation_loop();
            # ``automodel <config.yaml>`` runs the recipe the config's ``recipe`` key names.
            Entry(
                "TrainFinetuneRecipeForNextTokenPrediction", "sft", trained_by="run_train_validation_loop()"
            ),
            Entry(
                "KnowledgeDistillationRecipeForNextTokenPrediction",
                "sft",
                "distillation",
                "distilled",
                trained_by="run_train_validation_loop()",
            ),
            Entry(
                "TrainFinetuneRecipeForSequenceClassification",
                "sft",
                "classification",
                trained_by="run_train_validation_loop()",
            ),
            Entry("FinetuneRecipeForVLM", "sft", trained_by="run_train_validation_loop()"),
        ),
        invalid=(
            (
                "from nemo_automodel.recipes.llm import kd\n"
                "recipe = kd.KnowledgeDistillationRecipeForNextTokenPrediction(cfg)\nrecipe.setup()\n"
                "recipe.run_train_validation_loop()\n",
                "SFT",
            ),
        ),
        valid=(
            "from nemo_automodel.recipes.llm.train_ft import TrainFinetuneRecipeForNextTokenPrediction\n"
            "recipe = TrainFinetuneRecipeForNextTokenPrediction(cfg)\nrecipe.setup()\n",
        ),
    ),
    Framework(
        "NeMo",
        "nemo",
        (
            # NeMo 2's API: finetune trains on a dataset's targets (whole model or PEFT); pretrain and
            # train run the next-token loss on a data module's tokens; distill trains a student on a
            # teacher's logits
            Entry("finetune", "sft", commands=("nemo llm finetune",)),
            Entry("pretrain", "sft", "megatron_pretrain", commands=("nemo llm pretrain",)),
            # a recipe's factory builds the run NeMo-Run then executes (``llm.llama3_8b.finetune_recipe``)
            Entry("finetune_recipe", "sft"),
            Entry("pretrain_recipe", "sft", "megatron_pretrain"),
            Entry("llm.train", "sft", "megatron_pretrain"),
            Entry("api.train", "sft", "megatron_pretrain"),
            Entry("distill", "sft", "distillation", "distilled"),
            # NeMo 1's Megatron models: trained where a Lightning trainer's fit is given one (a script
            # restoring one to generate or test trains nothing, nor one fitting scikit-learn on its outputs)
            *(
                Entry(name, "sft", variant, trained_by="trainer.fit")
                for model, variant in (
                    ("MegatronGPTSFTModel", None),
                    ("MegatronGPTModel", "megatron_pretrain"),
                )
                for name in (model, f"{model}.restore_from")
            ),
        ),
        invalid=(
            (
                "from nemo.collections import llm\n"
                "llm.finetune(model=model, data=data, trainer=trainer, peft=llm.peft.LoRA())\n",
                "SFT",
            ),
            (
                "from nemo.collections.nlp.models.language_modeling.megatron_gpt_sft_model import"
                " MegatronGPTSFTModel\n"
                "model = MegatronGPTSFTModel.restore_from(path, cfg, trainer=trainer)\ntrainer.fit(model)\n",
                "SFT",
            ),
            (
                "import nemo_run as run\nfrom nemo.collections import llm\n"
                "recipe = llm.llama3_8b.finetune_recipe(dir='ckpt', name='sft', num_nodes=1)\n"
                "run.run(recipe, executor=run.LocalExecutor())\n",
                "SFT",
            ),
            (
                "import nemo_run as run\nfrom nemo.collections import llm\n"
                "task = run.Partial(llm.finetune, model=model, data=data, trainer=trainer)\nrun.run(task)\n",
                "SFT",
            ),
        ),
        valid=(
            "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
            "model = MegatronGPTModel.restore_from(path, trainer=trainer)\ntrainer.test(model)\n",
            "from nemo.collections.nlp.models.language_modeling.megatron_gpt_model import MegatronGPTModel\n"
            "model = MegatronGPTModel.restore_from(path, trainer=trainer)\nKMeans(8).fit(embed(model))\n",
            "from nemo.collections import llm\nmodel = llm.LlamaModel(llm.Llama3Config8B())\n",
        ),
        lines=(("nemo llm finetune --factory llama3_8b", "SFT"),),
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
            # the RLVR pipeline's rollout-only subclass: generates on the validation data and scores it
            Entry("RLVRRolloutPipeline", role="eval"),
        ),
        invalid=(
            ("from roll.pipeline.dpo.dpo_pipeline import DPOPipeline\nDPOPipeline(cfg).run()\n", "DPO"),
            (
                "from roll.pipeline.rlvr.rlvr_rollout_pipeline import RLVRRolloutPipeline\n"
                "RLVRRolloutPipeline(pipeline_config=cfg).run()\n",
                "EVAL_ONLY",
            ),
            (
                "from roll.pipeline.rlvr.rlvr_pipeline import RLVRPipeline\nRLVRPipeline(cfg).run()\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
    Framework(
        "SkyRL",
        "skyrl",
        (*SKYRL_ENTRIES, _skyrl_main("skyrl.train")),
        invalid=(
            (
                "from skyrl.train.trainer import RayPPOTrainer\nRayPPOTrainer(cfg).train()\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
    Framework(
        # SkyRL's trainer as published before it moved under ``skyrl.train`` (the ``skyrl-train``
        # package, which forks still import)
        "SkyRL (skyrl-train)",
        "skyrl_train",
        (*SKYRL_ENTRIES, _skyrl_main("skyrl_train")),
        lines=(
            ("uv run --isolated -m skyrl_train.entrypoints.main_base trainer.epochs=20", "GRPO"),
            (
                "python -m skyrl_train.entrypoints.main_base trainer.algorithm.advantage_estimator=gae",
                "PPO",
            ),
        ),
        invalid=(
            (
                "from skyrl_train.entrypoints.main_base import BasePPOExp\nBasePPOExp(cfg).run()\n",
                "CONFIG_DEPENDENT",
            ),
        ),
    ),
    Framework(
        "ms-swift",
        "swift",
        (
            # its command line: ``swift rlhf`` picks the loss by ``--rlhf_type`` (dpo unless set)
            Entry(
                "rlhf_main",
                key="rlhf_type",
                default="DPO",
                choices=SWIFT_RLHF_TYPES,
                commands=("swift rlhf", "-m swift.cli.rlhf", "*swift/cli/rlhf.py"),
            ),
            Entry("SwiftRLHF", key="rlhf_type", default="DPO", choices=SWIFT_RLHF_TYPES),
            Entry("sft_main", "sft", commands=("swift sft", "-m swift.cli.sft", "*swift/cli/sft.py")),
            Entry("pt_main", "sft", "pretrain", commands=("swift pt", "-m swift.cli.pt")),
            Entry("SwiftSft", "sft"),
            Entry("GKDTrainer", "sft", "gkd", "distilled"),
            Entry("GRPOTrainer", "grpo", "grpo"),
            Entry("PPOTrainer", "ppo", "ppo"),
            Entry("DPOTrainer", "dpo", "dpo"),
            Entry("RewardTrainer", "reward_model"),
            Entry("eval_main", role="eval", commands=("swift eval",)),
            # ``swift infer`` and ``swift deploy`` run or serve a model: no weight update
            Entry("infer_main", role="eval", commands=("swift infer",)),
            Entry("deploy_main", role="eval", commands=("swift deploy",)),
            # ``swift export`` quantises, converts or pushes a checkpoint; ``--merge_lora true`` folds the
            # trained adapter into its base and saves the merged model
            # (a command only: called from Python, its arguments object says what it does)
            Entry(
                "",
                key="merge_lora",
                choices=tuple(Entry(value, "merge") for value in sorted(TRUE_VALUES)),
                switch_only=True,
                commands=("swift export", "-m swift.cli.export"),
            ),
            # ms-swift 2's own command for the same fold
            Entry("", "merge", commands=("swift merge-lora", "-m swift.cli.merge_lora")),
        ),
        invalid=(("from swift.pipelines import rlhf_main\nrlhf_main()\n", "CONFIG_DEPENDENT"),),
        lines=(
            ("swift sft --model Qwen/Qwen2.5-7B-Instruct --train_type lora --dataset d", "SFT"),
            ("swift rlhf --rlhf_type grpo --model m --reward_funcs accuracy", "GRPO"),
            ("python -m swift.cli.rlhf --rlhf_type=kto --model m", "DPO"),
            ("CUDA_VISIBLE_DEVICES=0 swift rlhf --model m --dataset d", "DPO"),
            ("swift infer --adapters output/checkpoint-100 --stream true", "EVAL_ONLY"),
            ("swift export --adapters output/checkpoint-100 --merge_lora true", "MERGE"),
            ("swift export --model m --quant_bits 4 --quant_method awq", None),
            ("swift export --ckpt_dir output/v0/checkpoint-9 --merge-lora 1", "MERGE"),
            ("swift merge-lora --ckpt_dir output/v0/checkpoint-9", "MERGE"),
            ("swift --version", None),
        ),
    ),
    Framework(
        "axolotl",
        "axolotl",
        (
            # its command line (``axolotl train cfg.yml``, formerly ``python -m axolotl.cli.train``): the
            # config's ``rl`` key picks the loss, SFT unless set
            Entry(
                "train",
                key="rl",
                default="SFT",
                choices=AXOLOTL_RL,
                commands=("axolotl train", "-m axolotl.cli.train"),
            ),
            Entry("do_train", key="rl", default="SFT", choices=AXOLOTL_RL),
            Entry("evaluate", role="eval", commands=("axolotl evaluate", "-m axolotl.cli.evaluate")),
            Entry("do_inference", role="eval", commands=("axolotl inference", "-m axolotl.cli.inference")),
            # folds the trained adapter of its config into the base model and saves it
            Entry("do_merge_lora", "merge", commands=("axolotl merge-lora", "-m axolotl.cli.merge_lora")),
        ),
        invalid=(
            ("from axolotl.train import train\ntrain(cfg=cfg, dataset_meta=meta)\n", "CONFIG_DEPENDENT"),
            (
                "import subprocess, sys\n"
                "subprocess.run([sys.executable, '-m', 'axolotl.cli.train', 'qlora.yml'])\n",
                "SFT",  # (the config's ``rl`` unread here: its default; in a workspace the YAML decides)
            ),
        ),
        valid=("from axolotl.utils.dict import DictDefault\nDictDefault({})\n",),
        lines=(
            ("axolotl train examples/llama-3/lora-1b.yml", "SFT"),
            ("axolotl train cfg.yml --rl dpo", "DPO"),
            ("accelerate launch -m axolotl.cli.train config.yml", "SFT"),
            ("axolotl merge-lora config.yml --lora-model-dir outputs/lora", "MERGE"),
            ("axolotl inference config.yml --lora-model-dir outputs/lora", "EVAL_ONLY"),
            ("axolotl preprocess config.yml", None),
        ),
    ),
    Framework(
        "mlx-lm",
        "mlx_lm",
        (
            # ``mlx_lm.lora --train`` (also ``mlx_lm lora``; its word matches ``python -m mlx_lm.lora``
            # too): LoRA, DoRA or full fine-tuning, the tuner's trainer minimising masked next-token
            # cross-entropy (``fine_tune_type`` picks the adapter, not the loss); without ``--train`` it
            # only tests an adapter. The tuner's own ``train(..., loss=...)`` is not here: a caller hands
            # it the loss, which the file's code says.
            Entry("lora.run", "sft"),
            Entry("lora.main", "sft"),
            Entry("lora.train_model", "sft"),
            Entry(
                "",
                key="train",
                choices=tuple(Entry(value, "sft") for value in sorted(TRUE_VALUES)),
                switch_only=True,
                commands=("mlx_lm.lora", "mlx_lm lora"),
            ),
            # ``mlx_lm.fuse``: folds the trained adapters into the base and saves the fused model
            Entry(
                "fuse.main",
                "merge",
                commands=("mlx_lm.fuse", "mlx_lm fuse"),
            ),
            Entry("evaluate.main", role="eval", commands=("mlx_lm.evaluate", "mlx_lm evaluate")),
        ),
        invalid=(("from mlx_lm import lora\nlora.run(args)\n", "SFT"),),
        valid=(
            "from mlx_lm import load, generate\nmodel, tok = load(p)\ngenerate(model, tok, prompt=q)\n",
            # the tuner's loop is handed its loss: the table does not say it
            "from mlx_lm.tuner.trainer import train\ntrain(model, opt, tr, va, args=a, loss=my_loss)\n",
        ),
        lines=(
            ("mlx_lm.lora --model m --train --data data --iters 600", "SFT"),
            ("mlx_lm lora --model m --train --data d", "SFT"),
            ("mlx_lm.fuse --model m --adapter-path adapters --save-path fused", "MERGE"),
            ("python -m mlx_lm.fuse --model m --de-quantize", "MERGE"),
            ("mlx_lm.lora --model m --adapter-path adapters --test", None),
            ("mlx_lm.generate --model m --prompt hi", None),
        ),
    ),
    Framework(
        "mlx-lm-lora",
        "mlx_lm_lora",
        (
            # ``mlx_lm_lora.train`` (its ``run(args)``): ``train_mode`` picks the trainer, sft by default
            Entry(
                "train.run",
                key="train_mode",
                default="SFT",
                choices=_stages(
                    ("sft", SFT),
                    ("dpo", DPO),
                    *((name, Entry("", "dpo", name)) for name in ("cpo", "orpo", "ftpo")),
                    ("online_dpo", Entry("", "dpo", "online_dpo", on_policy=True)),
                    ("xpo", Entry("", "dpo", "xpo", on_policy=True)),
                    ("grpo", GRPO),
                    ("ppo", PPO),
                    ("rlhf_reinforce", Entry("", "ppo", "reinforce")),
                    ("rlhf", Entry("", "ppo", "reinforce")),  # (its name before 1.0)
                ),
                commands=("mlx_lm_lora.train",),
            ),
            Entry("train.main", key="train_mode", default="SFT", routes=("SFT", "DPO", "GRPO", "PPO")),
            Entry("train_sft", "sft"),
            Entry("train_dpo", "dpo", "dpo"),
            Entry("train_cpo", "dpo", "cpo"),
            Entry("train_orpo", "dpo", "orpo"),
            Entry("train_ftpo", "dpo", "ftpo"),
            Entry("train_online_dpo", "dpo", "online_dpo", on_policy=True),
            Entry("train_xpo", "dpo", "xpo", on_policy=True),
            Entry("train_grpo", "grpo", "grpo"),
            Entry("train_ppo", "ppo", "ppo"),
            Entry("train_rlhf_reinforce", "ppo", "reinforce"),
        ),
        invalid=(
            ("from mlx_lm_lora.train import run\nrun(args)\n", "CONFIG_DEPENDENT"),
            (
                "from mlx_lm_lora.trainer.grpo_trainer import train_grpo\n"
                "train_grpo(model=m, ref_model=r, optimizer=o, train_dataset=d)\n",
                "GRPO",
            ),
        ),
        valid=("from mlx_lm_lora.trainer.datasets import load_dataset\nload_dataset(args, tok)\n",),
        lines=(
            ("mlx_lm_lora.train --model m --train --train-mode grpo --data d", "GRPO"),
            ("mlx_lm_lora.train --model m --train --train-mode dpo", "DPO"),
            ("python -m mlx_lm_lora.train --model m --train --data d", "SFT"),
        ),
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
        invalid=(
            ("from oat.learners import DAPLearner\nclass L(DAPLearner):\n    pass\n", "DPO"),
            (
                "from oat.learners import DAPLearner\nfrom oat.interface import get_program\n"
                "learner_cls = DAPLearner\nprogram = get_program(args, learner_cls=learner_cls)\n",
                "DPO",
            ),
        ),
    ),
    Framework(
        "SPIN / alignment-handbook",
        "alignment",
        (Entry("SPINTrainer", "dpo", "spin", "self_generated"),),
        invalid=(("from alignment import SPINTrainer\nSPINTrainer(model, ref).train()\n", "DPO"),),
        valid=("from alignment import H4ArgumentParser\nH4ArgumentParser(x)\n",),
    ),
    Framework(
        "llama-cookbook (formerly llama-recipes)",
        "llama_cookbook",
        (
            # finetuning.main: full or PEFT (LoRA, llama-adapter) fine-tuning with the model's own
            # causal-LM loss on a dataset of the config (samsum by default)
            Entry("finetuning.main", "sft", commands=("-m llama_cookbook.finetuning",)),
        ),
        invalid=(
            ("import fire\nfrom llama_cookbook.finetuning import main\nfire.Fire(main)\n", "SFT"),
            ("from llama_cookbook.finetuning import main\nmain(use_peft=True, peft_method='lora')\n", "SFT"),
        ),
        valid=("from llama_cookbook.inference.model_utils import load_model\nload_model(m, q, True)\n",),
    ),
    Framework(
        "llama-recipes",
        "llama_recipes",
        (Entry("finetuning.main", "sft", commands=("-m llama_recipes.finetuning",)),),
        invalid=(("from llama_recipes.finetuning import main\nmain(**kwargs)\n", "SFT"),),
    ),
    Framework(
        "MiniLLM (LMOps)",
        "minillm",
        (Entry("train", "sft", "minillm", "distilled"),),
        invalid=(("from minillm import train\ntrain(args, tokenizer, model, teacher)\n", "SFT"),),
    ),
    Framework(
        "Tinker cookbook",
        "tinker_cookbook",
        (
            # Each module's main(config) runs one training loop against the Tinker service. RL centres
            # rewards within each prompt's group of samples; the episodes are whatever environment the
            # config's dataset builder makes (single answers or several turns).
            Entry("rl.train.main", "grpo", "grpo"),
            Entry("supervised.train.main", "sft"),
            Entry("preference.train_dpo.main", "dpo", "dpo"),
            Entry("distillation.train_on_policy.main", "sft", "on_policy_distillation", "distilled"),
            Entry("distillation.train_off_policy.main", "sft", "distillation", "distilled"),
            # folds a trained LoRA adapter into the base model's weights and saves the merged model
            Entry("weights.build_hf_model", "merge"),
        ),
        invalid=(
            (
                "from tinker_cookbook.rl.train import Config, main\nasyncio.run(main(Config(lr=1e-5)))\n",
                "GRPO",
            ),
            (
                "from tinker_cookbook.weights import build_hf_model\n"
                "build_hf_model(base_model=m, adapter_path=a, output_path=o)\n",
                "MERGE",
            ),
            ("from tinker_cookbook.supervised import train\nasyncio.run(train.main(config))\n", "SFT"),
        ),
        valid=("from tinker_cookbook import cli_utils\ncli_utils.check_log_dir(path)\n",),
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
            # its training scripts run as modules or by path (``deepspeed fastchat/train/train_mem.py``);
            # only its own: a fork's ``fastchat/train/train_dpo.py`` beside them is the fork's code
            Entry(
                "",
                "sft",
                commands=tuple(
                    command
                    for script in FASTCHAT_TRAINING_SCRIPTS
                    for command in (f"-m fastchat.train.{script}", f"*fastchat/train/{script}.py")
                ),
            ),
            # folds a LoRA adapter into its base and saves the merged model
            Entry("apply_lora", "merge", commands=("-m fastchat.model.apply_lora",)),
            # its model servers and chat CLI answer whoever asks; MT-bench's answer and judgment steps
            Entry(
                "",
                role="eval",
                commands=(
                    "-m fastchat.serve.*",
                    "-m fastchat.llm_judge.gen_model_answer",
                    "-m fastchat.llm_judge.gen_judgment",
                ),
            ),
        ),
        invalid=(("from fastchat.train.train import train\ntrain()\n", "SFT"),),
        lines=(
            ("torchrun --nproc_per_node=4 fastchat/train/train_mem.py --model_name_or_path m", "SFT"),
            ("python3 -m fastchat.train.train_lora --data_path d.json", "SFT"),
            ("python3 -m fastchat.serve.cli --model-path lmsys/vicuna-7b-v1.5", "EVAL_ONLY"),
            ("python -m fastchat.llm_judge.gen_model_answer --model-path m --model-id m", "EVAL_ONLY"),
            ("python3 -m fastchat.data.clean_sharegpt --in d.json", None),
            # a fork's own script beside them: its name decides, not FastChat's table
            ("torchrun --nproc_per_node=8 fastchat/train/train_dpo.py --beta 0.1", "DPO"),
        ),
        valid=("from fastchat.conversation import get_conv_template\nget_conv_template('vicuna_v1.1')\n",),
    ),
    Framework(
        "lm-evaluation-harness",
        "lm_eval",
        (
            Entry("simple_evaluate", role="eval"),
            Entry("evaluate", role="eval"),
            Entry("cli_evaluate", role="eval"),
            # its command line, also as ``python -m lm_eval`` (the harness's ``__main__``)
            Entry("", role="eval", commands=("lm_eval", "lm-eval")),
        ),
        invalid=(
            ("import lm_eval\nlm_eval.simple_evaluate(model='hf', tasks=['gsm8k'])\n", "EVAL_ONLY"),
            (
                "import subprocess\n"
                "subprocess.run(['lm_eval', '--model', 'vllm', '--tasks', 'gsm8k', '--model_args', a])\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from lm_eval.utils import make_table\nmake_table(r)\n",),
        lines=(
            ("lm_eval --model hf --model_args pretrained=out --tasks gsm8k", "EVAL_ONLY"),
            ("python -m lm_eval --model vllm --tasks mmlu", "EVAL_ONLY"),
        ),
    ),
    Framework(
        "OpenCompass",
        "opencompass",
        (
            # an evaluation platform: its runners, partitioners, tasks and evaluators run and score
            # models on benchmarks; its command line takes a config of models and datasets
            *(
                Entry(name, role="eval")
                for name in (
                    *("LocalRunner", "SlurmRunner", "DLCRunner", "NaivePartitioner", "SizePartitioner"),
                    *("OpenICLInferTask", "OpenICLEvalTask", "ICL_EVALUATORS", "Summarizer"),
                )
            ),
            Entry("", role="eval", commands=("opencompass",)),
        ),
        invalid=(
            (
                "from opencompass.runners import LocalRunner\nrunner = LocalRunner(task=dict(type=t))\n"
                "runner(tasks)\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from opencompass.utils import get_logger\nlogger = get_logger()\n",),
        lines=(("opencompass --models hf_qwen2_7b --datasets gsm8k_gen", "EVAL_ONLY"),),
    ),
    Framework(
        "AlpacaFarm",
        "alpaca_farm",
        (
            # its simulated annotators judge pairs of outputs (win rates against a reference); its RL
            # and best-of-n code trains, and is not named here
            Entry("PairwiseAutoAnnotator", role="eval"),
        ),
        invalid=(
            (
                "from alpaca_farm.auto_annotations import PairwiseAutoAnnotator\n"
                "annotator = PairwiseAutoAnnotator()\nresults = annotator.annotate_head2head(a, b)\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from alpaca_farm.utils import jload\nrows = jload('outputs.json')\n",),
    ),
    Framework(
        "Prometheus-Eval",
        "prometheus_eval",
        (
            # an open judge model grading responses against a rubric, alone (absolute) or in pairs
            # (relative): the judge runs, no weights change
            Entry("PrometheusEval", role="eval"),
        ),
        invalid=(
            (
                "from prometheus_eval import PrometheusEval\nfrom prometheus_eval.vllm import VLLM\n"
                "judge = PrometheusEval(model=VLLM(model='prometheus-eval/prometheus-7b-v2.0'))\n"
                "feedback, score = judge.single_absolute_grade(instruction=q, response=r, rubric=rub)\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from prometheus_eval.prompts import ABSOLUTE_PROMPT\nprint(ABSOLUTE_PROMPT)\n",),
    ),
    Framework(
        "LLM-Blender",
        "llm_blender",
        (
            # PairRM and its kin rank candidate responses pairwise (and GenFuser fuses them): a
            # pretrained ranker run, as a reward model is when it scores
            Entry("Blender", role="eval"),
        ),
        invalid=(
            (
                "import llm_blender\nblender = llm_blender.Blender()\n"
                "blender.loadranker('llm-blender/PairRM')\n"
                "ranks = blender.rank(prompts, candidates, return_scores=False)\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from llm_blender.pair_ranker.config import RankerConfig\ncfg = RankerConfig()\n",),
    ),
    Framework(
        "vLLM",
        "vllm",
        (
            # a model served behind an OpenAI-compatible API: a model run with no weight update (what
            # a training run's rollout engine or reward judge starts beside its trainer, the trainer's
            # own command decides)
            Entry(
                "",
                role="eval",
                commands=(
                    "vllm serve",
                    "-m vllm.entrypoints.openai.api_server",
                    "-m vllm.entrypoints.api_server",
                ),
            ),
        ),
        invalid=(
            (
                "import subprocess\nsubprocess.run(['vllm', 'serve', 'Qwen/Qwen2.5-7B', '--port', '8000'])\n",
                "EVAL_ONLY",
            ),
        ),
        lines=(
            ("vllm serve Qwen/Qwen2.5-7B-Instruct --port 8000 --tensor-parallel-size 2", "EVAL_ONLY"),
            ("python -m vllm.entrypoints.openai.api_server --model out/ckpt --port 8001", "EVAL_ONLY"),
        ),
    ),
    Framework(
        "SGLang",
        "sglang",
        (Entry("", role="eval", commands=("-m sglang.launch_server",)),),
        lines=(("python3 -m sglang.launch_server --model-path out/ckpt --port 30000", "EVAL_ONLY"),),
    ),
    Framework(
        "lmms-eval",
        "lmms_eval",
        (
            # the multimodal counterpart of lm-evaluation-harness, with the same entry points
            Entry("simple_evaluate", role="eval"),
            Entry("evaluate", role="eval"),
            Entry("cli_evaluate", role="eval"),
            Entry("", role="eval", commands=("lmms-eval", "-m lmms_eval")),
        ),
        valid=("from lmms_eval.utils import make_table\nmake_table(r)\n",),
        lines=(
            (
                "accelerate launch --num_processes=8 -m lmms_eval --model qwen2_vl --tasks mmmu_val",
                "EVAL_ONLY",
            ),
            ("python3 -m lmms_eval --model llava --tasks mme", "EVAL_ONLY"),
        ),
    ),
    Framework(
        "FlashRAG",
        "flashrag",
        (
            # retrieval-augmented generation pipelines run over a benchmark split and scored by the
            # toolkit's evaluator: what search-agent RL papers report their test numbers with
            *(
                Entry(pipeline, role="eval")
                for pipeline in (
                    *("SequentialPipeline", "ConditionalPipeline", "AdaptivePipeline", "REPLUGPipeline"),
                    *("SuRePipeline", "IterativePipeline", "SelfAskPipeline", "SelfRAGPipeline"),
                    *("FLAREPipeline", "IRCOTPipeline", "ReasoningPipeline", "Evaluator"),
                )
            ),
        ),
        invalid=(
            (
                "from flashrag.pipeline import SequentialPipeline\n"
                "pipeline = SequentialPipeline(config)\nresult = pipeline.run(test_data)\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from flashrag.config import Config\nconfig = Config('eval_config.yaml')\n",),
    ),
    Framework(
        "TRL",
        "trl",
        (
            # The trainer classes are known by name (trainers.py); the CLI's subcommands are here.
            Entry("", "sft", commands=("trl sft",)),
            Entry("", "dpo", "dpo", commands=("trl dpo",)),
            Entry("", "dpo", "kto", commands=("trl kto",)),
            Entry("", "grpo", "grpo", commands=("trl grpo",)),
            Entry("", "ppo", "rloo", commands=("trl rloo",)),
            Entry("", "reward_model", commands=("trl reward",)),
        ),
        lines=(("trl dpo --model_name_or_path m --dataset_name d", "DPO"), ("trl env", None)),
    ),
    Framework(
        "Unsloth",
        "unsloth",
        (
            # unsloth's own trainer is TRL's SFTTrainer with a separate learning rate for the embeddings
            # (continued pretraining, LoRA SFT); its RL and preference runs use TRL's trainers, patched,
            # which are known by name. Without this entry the prefix rule reads it as a generic Trainer.
            Entry("UnslothTrainer", "sft"),
        ),
        invalid=(
            (
                "from unsloth import FastLanguageModel, UnslothTrainer, UnslothTrainingArguments\n"
                "model, tok = FastLanguageModel.from_pretrained('unsloth/llama-3-8b')\n"
                "trainer = UnslothTrainer(model=model, train_dataset=d, args=UnslothTrainingArguments())\n"
                "trainer.train()\n",
                "SFT",
            ),
        ),
        valid=(
            "from unsloth import FastLanguageModel\n"
            "model, tok = FastLanguageModel.from_pretrained('m')\nFastLanguageModel.for_inference(model)\n",
        ),
    ),
    Framework(
        "verl",
        "verl",
        (
            # main_ppo runs PPO unless algorithm.adv_estimator picks another estimator.
            Entry(
                "",
                routes=("PPO", "GRPO"),
                default="PPO",
                key="adv_estimator",
                commands=("-m verl.trainer.main_ppo",),
            ),
            # main_ppo's Hydra main (and the run it calls) imported and run from Python: the
            # configuration it loads picks the estimator, unless the file sets it itself
            # (``config.algorithm.adv_estimator = "grpo"; run_ppo(config)``); and the advantage step
            # its trainer runs, called by a trainer of the file's own (a fork's fit loop), handed
            # the estimator that picks the route
            *(
                Entry(
                    name,
                    routes=("PPO", "GRPO"),
                    default="PPO",
                    key="algorithm.adv_estimator",
                    choices=ESTIMATORS,
                )
                for name in ("main_ppo.main", "main_ppo.run_ppo", "ray_trainer.compute_advantage")
            ),
            # main_ppo's trainer: its fit() computes the advantages algorithm.adv_estimator names
            Entry("RayPPOTrainer", routes=("PPO", "GRPO"), default="PPO", key="algorithm.adv_estimator"),
            # the critic's worker, handed to a trainer's role mapping (``ray.remote(CriticWorker)``): the
            # file assembles main_ppo's trainer, whose estimator the config picks
            Entry("CriticWorker", routes=("PPO", "GRPO"), default="PPO", key="algorithm.adv_estimator"),
            Entry("", "sft", commands=("-m verl.trainer.fsdp_sft_trainer",)),
            # samples n responses per prompt of a dataset (pass@k on a benchmark, or data to filter)
            Entry("", role="eval", commands=("-m verl.trainer.main_generation",)),
            # tools and interactions the multi-turn agent loop calls between the policy's turns
            Entry("tools.base_tool.BaseTool", role="environment"),
            Entry("interactions.base.BaseInteraction", role="environment"),
            # the agent loops that run a policy's turns against tools or a user (a subclass is the
            # multi-turn rollout the trainer updates on; the single-turn loop is verl's own)
            Entry("ToolAgentLoop", role="environment"),
            Entry("AgentLoopBase", role="environment"),
        ),
        invalid=(
            (
                "from verl.trainer.main_ppo import main\n\nif __name__ == '__main__':\n    main()\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "from verl.trainer.main_ppo import run_ppo\n"
                "config.algorithm.adv_estimator = 'grpo'\nrun_ppo(config)\n",
                "GRPO",
            ),
            (
                "from verl.trainer.ppo.ray_trainer import RayPPOTrainer\n"
                "trainer = RayPPOTrainer(config=config, tokenizer=tokenizer)\ntrainer.fit()\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "from verl.trainer.ppo.ray_trainer import compute_advantage\n"
                "batch = compute_advantage(batch, adv_estimator=self.config.algorithm.adv_estimator)\n"
                "self.actor_rollout_wg.update_actor(batch)\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "from verl.trainer.ppo.ray_trainer import compute_advantage\n"
                "batch = compute_advantage(batch, adv_estimator='grpo')\n"
                "self.actor_rollout_wg.update_actor(batch)\n",
                "GRPO",
            ),
            (
                "from verl.workers.fsdp_workers import CriticWorker\n"
                "role_worker_mapping[Role.Critic] = ray.remote(CriticWorker)\ntrainer.fit()\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "from verl.tools.base_tool import BaseTool\n\nclass SearchTool(BaseTool):\n"
                "    async def execute(self, instance_id, parameters, **kwargs):\n"
                "        return search(parameters['query']), 0.0, {}\n",
                "ONLINE_RL",
            ),
            (
                "from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop\n\n"
                "class ShopAgentLoop(ToolAgentLoop):\n"
                "    async def _handle_processing_tools_state(self, agent_data):\n"
                "        return await self.session.reply(agent_data)\n",
                "ONLINE_RL",
            ),
        ),
        lines=(
            ("python3 -m verl.trainer.main_ppo data.train_files=x.parquet", "PPO"),
            ("python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo", "GRPO"),
            ("python3 -m verl.trainer.main_generation data.path=x", "EVAL_ONLY"),
        ),
    ),
    Framework(
        "OpenRLHF",
        "openrlhf",
        (
            # Each ``openrlhf.cli.train_*`` module is one route; its ``train(args)`` is the entry point.
            Entry("train_sft.train", "sft", commands=("-m openrlhf.cli.train_sft",)),
            Entry("train_dpo.train", "dpo", "dpo", commands=("-m openrlhf.cli.train_dpo",)),
            Entry("train_kto.train", "dpo", "kto", commands=("-m openrlhf.cli.train_kto",)),
            Entry("train_rm.train", "reward_model", commands=("-m openrlhf.cli.train_rm",)),
            Entry("train_prm.train", "reward_model", "prm", commands=("-m openrlhf.cli.train_prm",)),
            Entry(
                "train_kd.train", "sft", "distillation", "distilled", commands=("-m openrlhf.cli.train_kd",)
            ),
            # PPO with GAE unless --advantage_estimator (--algo.advantage.estimator) picks another.
            Entry(
                "train_ppo_ray.train",
                key="advantage_estimator",
                default="PPO",
                choices=ESTIMATORS,
                commands=("-m openrlhf.cli.train_ppo_ray",),
            ),
            Entry(
                "train_ppo.train",
                key="advantage_estimator",
                default="PPO",
                choices=ESTIMATORS,
                commands=("-m openrlhf.cli.train_ppo",),
            ),
        ),
        invalid=(("from openrlhf.cli.train_dpo import train\ntrain(args)\n", "DPO"),),
        valid=("from openrlhf.cli.train_dpo import train\nprint(train)\n",),
        lines=(
            ("deepspeed --module openrlhf.cli.train_sft --max_len 2048", "SFT"),
            ("python3 -m openrlhf.cli.train_ppo_ray --pretrain m", "PPO"),
            ("python3 -m openrlhf.cli.train_ppo_ray --advantage_estimator group_norm", "GRPO"),
            ("python3 -m openrlhf.cli.serve_rm --reward_pretrain m", None),
        ),
    ),
    Framework(
        "LLaMA-Factory",
        "llamafactory",
        (
            Entry("run_sft", "sft"),
            Entry("run_pt", "sft", "pretrain"),
            Entry("run_dpo", "dpo", "dpo"),
            Entry("run_kto", "dpo", "kto"),
            Entry("run_ppo", "ppo", "ppo"),
            Entry("run_rm", "reward_model"),
            # ``llamafactory-cli train`` (alias ``lmf``) runs ``run_exp``: ``stage`` picks, default sft.
            Entry(
                "run_exp",
                key="stage",
                default="SFT",
                choices=_stages(
                    ("sft", SFT), ("pt", PRETRAIN), ("dpo", DPO), ("kto", KTO), ("ppo", PPO), ("rm", REWARD)
                ),
                commands=("llamafactory-cli train", "lmf train"),
            ),
            # ``export`` merges the adapter of its config into the base model and saves it.
            Entry("export_model", "merge", commands=("llamafactory-cli export",)),
            Entry("run_eval", role="eval", commands=("llamafactory-cli eval",)),
        ),
        invalid=(
            ("from llamafactory.train.dpo import run_dpo\nrun_dpo(m, d, t, f)\n", "DPO"),
            ("from llamafactory.train.tuner import run_exp\nrun_exp()\n", "CONFIG_DEPENDENT"),
            ("from llamafactory.train.tuner import run_exp\nrun_exp({'stage': 'kto', 'model': m})\n", "DPO"),
        ),
        valid=("from llamafactory.hparams import get_train_args\nget_train_args(a)\n",),
        lines=(
            ("llamafactory-cli train --stage dpo --model_name_or_path m", "DPO"),
            ("llamafactory-cli train stage=rm", "REWARD_MODEL"),
            ("llamafactory-cli train examples/train_lora/llama3_lora_sft.yaml", "SFT"),
            ("llamafactory-cli export merge.yaml", "MERGE"),
            ("llamafactory-cli webui", None),
        ),
    ),
    Framework(
        "fairseq2",
        "fairseq2",
        (
            # ``fairseq2 lm instruction_finetune <dir>``: next-token cross-entropy on the answers
            Entry("load_instruction_finetuner", "sft", commands=("fairseq2 lm instruction_finetune",)),
            # ``fairseq2 lm preference_finetune <dir>``: ``criterion`` picks the preference loss, dpo by
            # default (simpo, orpo and cpo are that family's variants too)
            Entry(
                "load_preference_finetuner",
                "dpo",
                "dpo",
                key="criterion",
                choices=_stages(
                    ("dpo", DPO),
                    ("simpo", Entry("", "dpo", "simpo")),
                    ("orpo", Entry("", "dpo", "orpo")),
                    ("cpo", Entry("", "dpo", "cpo")),
                ),
                commands=("fairseq2 lm preference_finetune",),
            ),
        ),
        invalid=(
            (
                "from fairseq2.recipes.lm import load_instruction_finetuner\n"
                "trainer = load_instruction_finetuner(config, out)\ntrainer()\n",
                "SFT",
            ),
        ),
        valid=("from fairseq2.models import load_model\nmodel = load_model('llama3_8b')\n",),
        lines=(
            ("srun fairseq2 lm instruction_finetune /ckpt --config-file sft.yaml", "SFT"),
            ("fairseq2 lm preference_finetune /ckpt --config criterion=simpo", "DPO"),
            ("fairseq2 assets list", None),
        ),
    ),
    Framework(
        "Oumi",
        "oumi",
        (
            # ``oumi train -c config.yaml`` (``oumi.train(config)``): training.trainer_type picks the
            # trainer, Hugging Face's supervised Trainer by default; TRL's and verl's for the others
            Entry(
                "train",
                key="training.trainer_type",
                default="SFT",
                choices=_stages(
                    ("*sft", SFT),
                    ("hf", SFT),
                    ("oumi", SFT),
                    ("*dpo", DPO),
                    ("*kto", KTO),
                    ("*grpo", GRPO),
                    ("*gkd", Entry("", "sft", "gkd", "distilled")),
                    ("*gold", DISTILL),
                ),
                commands=("oumi train",),
            ),
            Entry("evaluate", role="eval", commands=("oumi evaluate", "oumi eval")),
        ),
        invalid=(
            ("import oumi\noumi.train(config)\n", "CONFIG_DEPENDENT"),
            (
                "import oumi\nconfig.training.trainer_type = args.trl_dpo\noumi.train(config)\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "import oumi\nconfig = TrainingConfig.from_yaml(p)\n"
                "config.training.trainer_type = TrainerType.TRL_DPO\noumi.train(config)\n",
                "DPO",
            ),
            (
                "from oumi import train\n"
                "c = TrainingConfig(training=TrainingParams(trainer_type=TrainerType.TRL_GRPO))\ntrain(c)\n",
                "GRPO",
            ),
            ("from oumi import evaluate\nresults = evaluate(eval_config)\n", "EVAL_ONLY"),
        ),
        valid=("from oumi.core.configs import TrainingConfig\nc = TrainingConfig.from_yaml(p)\n",),
        lines=(
            ("oumi train -c train.yaml --training.trainer_type TRL_DPO", "DPO"),
            ("oumi train -c configs/recipes/llama3_1/sft/8b_full/train.yaml", "SFT"),
            ("oumi evaluate -c eval.yaml", "EVAL_ONLY"),
            ("oumi infer -c infer.yaml -i", None),
        ),
    ),
    Framework(
        "torchtune",
        "torchtune",
        (
            # Losses a recipe (or the agent's own loop) optimises; recipes usually build them from the
            # config, so a file that constructs one names its objective.
            Entry("DPOLoss", "dpo", "dpo"),
            Entry("RSOLoss", "dpo", "rso"),
            Entry("SimPOLoss", "dpo", "simpo"),
            Entry("PPOLoss", "ppo", "ppo"),
            Entry("GRPOLoss", "grpo", "grpo"),
            Entry("GRPOSimpleLoss", "grpo", "grpo"),
            Entry("GRPOCompletionLoss", "grpo", "grpo"),
            Entry("GRPOWithChunkedOutputLoss", "grpo", "grpo"),
            Entry("ForwardKLLoss", "sft", "distillation", "distilled"),
            Entry("ForwardKLWithChunkedOutputLoss", "sft", "distillation", "distilled"),
            Entry("ReverseKLLoss", "sft", "distillation", "distilled"),
            Entry("ReverseKLWithChunkedOutputLoss", "sft", "distillation", "distilled"),
            Entry("SymmetricKLLoss", "sft", "distillation", "distilled"),
            Entry("SymmetricKLWithChunkedOutputLoss", "sft", "distillation", "distilled"),
            # ``tune run [torchrun options] <recipe> --config <config>``: the recipe's name says what it
            # runs (the registry's names; a custom recipe is a .py file, read where it lies).
            Entry(
                "",
                choices=_stages(
                    ("*dpo*", DPO),
                    ("*simpo*", Entry("", "dpo", "simpo")),
                    ("*grpo*", GRPO),
                    ("*ppo*", PPO),
                    ("*knowledge_distillation*", DISTILL),
                    ("kd_*", DISTILL),
                    ("*eleuther_eval*", EVAL),
                    ("*generate*", EVAL),
                    ("*finetune*", SFT),
                    ("qat_*", SFT),
                ),
                commands=("tune run",),
            ),
        ),
        invalid=(
            ("from torchtune.rlhf.loss import DPOLoss\nloss_fn = DPOLoss(beta=0.1)\n", "DPO"),
            ("from torchtune.modules.loss import ForwardKLLoss\nkd = ForwardKLLoss()\n", "SFT"),
        ),
        valid=("from torchtune import config\nconfig.instantiate(cfg.loss)\n",),
        lines=(
            ("tune run lora_finetune_single_device --config llama3_2/1B_lora_single_device", "SFT"),
            ("tune run --nproc_per_node 4 full_dpo_distributed --config llama3_1/8B_full_dpo", "DPO"),
            ("tune run ppo_full_finetune_single_device --config mistral/7B_full_ppo_low_memory", "PPO"),
            (
                "tune run --nproc_per_node 8 dev/grpo_full_finetune_distributed --config dev/3B_full_grpo",
                "GRPO",
            ),
            ("tune run knowledge_distillation_single_device --config qwen2/knowledge_distillation", "SFT"),
            ("tune run eleuther_eval --config eleuther_evaluation tasks=[hellaswag]", "EVAL_ONLY"),
            ("tune run quantize --config quantization", None),
            ("tune download meta-llama/Llama-3.2-1B-Instruct", None),
        ),
    ),
    Framework(
        "torchtune recipes",
        "recipes",
        (
            # torchtune installs its recipes as the ``recipes`` package; their classes by what they run.
            Entry("FullFinetuneRecipeSingleDevice", "sft"),
            Entry("FullFinetuneRecipeDistributed", "sft"),
            Entry("LoRAFinetuneRecipeSingleDevice", "sft"),
            Entry("LoRAFinetuneRecipeDistributed", "sft"),
            Entry("QATRecipeSingleDevice", "sft"),
            Entry("QATRecipeDistributed", "sft"),
            Entry("QATLoRAFinetuneRecipeDistributed", "sft"),
            Entry("EarlyExitFinetuneRecipeDistributed", "sft"),
            Entry("LoRADPORecipeSingleDevice", "dpo", "dpo"),
            Entry("LoRADPORecipeDistributed", "dpo", "dpo"),
            Entry("FullDPORecipeDistributed", "dpo", "dpo"),
            Entry("PPOFullFinetuneRecipeSingleDevice", "ppo", "ppo"),
            Entry("GRPOFullFinetuneRecipeDistributed", "grpo", "grpo"),
            Entry("KDRecipeSingleDevice", "sft", "distillation", "distilled"),
            Entry("KDRecipeDistributed", "sft", "distillation", "distilled"),
            Entry("EleutherEvalRecipe", role="eval"),
        ),
        invalid=(
            (
                "from recipes.lora_dpo_single_device import LoRADPORecipeSingleDevice\n"
                "recipe = LoRADPORecipeSingleDevice(cfg=cfg)\nrecipe.train()\n",
                "DPO",
            ),
        ),
        valid=("from recipes.quantize import QuantizationRecipe\nQuantizationRecipe(cfg).quantize(cfg)\n",),
    ),
    Framework(
        "llm-foundry",
        "llmfoundry",
        (
            # Its train entry trains a causal LM (pretraining or finetuning, next-token loss) from a
            # YAML; its eval entry runs in-context-learning benchmarks (scripts/train, scripts/eval).
            Entry("command_utils.train_from_yaml", "sft", commands=("composer */train/train.py",)),
            Entry("command_utils.train.train", "sft"),
            Entry("command_utils.eval_from_yaml", role="eval", commands=("composer */eval/eval.py",)),
            Entry("command_utils.eval.evaluate", role="eval"),
        ),
        invalid=(
            (
                "from llmfoundry.command_utils import train_from_yaml\n"
                "train_from_yaml(yaml_path, args_list)\n",
                "SFT",
            ),
            (
                "from llmfoundry.command_utils import eval_from_yaml\neval_from_yaml(yaml_path, args_list)\n",
                "EVAL_ONLY",
            ),
        ),
    ),
    Framework(
        "Composer",
        "composer",
        (
            # MosaicML's generic trainer: fit() trains whatever loss its ComposerModel computes
            # (llm-foundry's causal LMs: next-token cross-entropy), like transformers' Trainer.
            Entry("Trainer", "sft", "composer_trainer"),
        ),
        invalid=(("from composer import Trainer\ntrainer = Trainer(model=m)\ntrainer.fit()\n", "SFT"),),
    ),
    Framework(
        "CoLLiE",
        "collie",
        (
            # OpenLMLab's trainer: next-token cross-entropy (its default loss_fn, GPTLMLoss) unless
            # handed another loss; its evaluators measure (the classification one is spelt so).
            Entry("Trainer", "sft", "collie_trainer"),
            Entry("Evaluator", role="eval"),
            Entry("EvaluatorForPerplexity", role="eval"),
            Entry("EvaluatorForGeneration", role="eval"),
            Entry("EvaluatorForClassfication", role="eval"),
        ),
        invalid=(
            ("from collie import Trainer\ntrainer = Trainer(model=m, config=c)\ntrainer.train()\n", "SFT"),
            (
                "from collie import EvaluatorForClassfication\n"
                "ev = EvaluatorForClassfication(model=m, dataset=d)\nprint(ev.eval())\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from collie import CollieConfig\nconfig = CollieConfig.from_pretrained(path)\n",),
    ),
    Framework(
        "SwissArmyTransformer",
        "sat",
        (
            # THUDM's DeepSpeed loop (GLM, CogVLM, VisualGLM fine-tuning): training_main(args, model_cls,
            # forward_step_function=...) trains the loss the file's forward_step returns, next-token
            # cross-entropy on the dataset's labels in its fine-tuning scripts
            Entry("training.deepspeed_training.training_main", "sft", "sat_training"),
            Entry("training_main", "sft", "sat_training"),
        ),
        invalid=(
            (
                "from sat.training.deepspeed_training import training_main\n"
                "training_main(args, model_cls=model, forward_step_function=forward_step,"
                " create_dataset_function=create_dataset_function)\n",
                "SFT",
            ),
        ),
        valid=("from sat.model.mixins import CachedAutoregressiveMixin\nm.add_mixin('auto', M())\n",),
    ),
    Framework(
        "Megatron-LM",
        "megatron",
        (
            # NVIDIA's training loop: pretrain(datasets_provider, model_provider, model_type,
            # forward_step) trains the loss forward_step returns, next-token cross-entropy on the
            # dataset's tokens in its GPT, BERT and T5 scripts (a loss the file writes decides over it).
            Entry("training.pretrain", "sft", "megatron_pretrain"),
            Entry(
                "",
                "sft",
                "megatron_pretrain",
                commands=(
                    *("* pretrain_gpt.py", "* pretrain_bert.py"),
                    *("* pretrain_t5.py", "* pretrain_mamba.py"),
                ),
            ),
        ),
        invalid=(
            (
                "from megatron.training import pretrain\n"
                "pretrain(train_valid_test_datasets_provider, model_provider, ModelType.encoder_or_decoder,"
                " forward_step)\n",
                "SFT",
            ),
            (
                # a preference loss the file hands the loop decides over the loop's default
                "import torch.nn.functional as F\nfrom megatron.training import pretrain\n"
                "def loss_func(chosen_logps, rejected_logps, ref_chosen_logps, ref_rejected_logps):\n"
                "    logits = (chosen_logps - ref_chosen_logps) - (rejected_logps - ref_rejected_logps)\n"
                "    return -F.logsigmoid(0.1 * logits).mean()\n"
                "pretrain(datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)\n",
                "DPO",
            ),
            (
                # the loss the handed forward_step returns decides (Megatron's own RL script)
                "from megatron.training import pretrain\n"
                "from megatron.rl.rl_utils import calculate_grpo_loss\n"
                "def forward_step(data_iterator, model):\n    logprobs = model(next(data_iterator))\n"
                "    loss = calculate_grpo_loss(current_logprobs=logprobs, advantages=adv)\n"
                "    return loss, None\n"
                "pretrain(datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)\n",
                "GRPO",
            ),
        ),
        valid=(
            "from megatron.training import get_args, print_rank_0\nargs = get_args()\n",
            "from megatron.core import parallel_state\nparallel_state.initialize_model_parallel(2)\n",
        ),
        lines=(("torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4", "SFT"),),
    ),
    Framework(
        "Pai-Megatron-Patch",
        "megatron_patch",
        (
            # Alibaba's extension of Megatron-LM: its pretrain() is Megatron's loop (see above).
            Entry("training.pretrain", "sft", "megatron_pretrain"),
        ),
        invalid=(
            (
                "from megatron_patch.training import pretrain\n"
                "pretrain(datasets_provider, model_provider, ModelType.encoder_or_decoder, forward_step)\n",
                "SFT",
            ),
        ),
    ),
    Framework(
        "litgpt",
        "litgpt",
        (
            # Python API: each module's ``setup`` (train) or function; the CLI ``litgpt <subcommand>``
            # maps the same names (litgpt/__main__.py).
            Entry("finetune.lora.setup", "sft", commands=("litgpt finetune_lora",)),
            Entry("finetune.full.setup", "sft", commands=("litgpt finetune_full",)),
            Entry("finetune.adapter.setup", "sft", commands=("litgpt finetune_adapter",)),
            Entry("finetune.adapter_v2.setup", "sft", commands=("litgpt finetune_adapter_v2",)),
            Entry("finetune.lora_legacy.setup", "sft"),
            Entry("", "sft", commands=("litgpt finetune",)),
            Entry("pretrain.setup", "sft", "pretrain", commands=("litgpt pretrain",)),
            Entry("merge_lora.merge_lora", "merge", commands=("litgpt merge_lora",)),
            Entry("convert_and_evaluate", role="eval", commands=("litgpt evaluate",)),
        ),
        invalid=(
            ("from litgpt.finetune.lora import setup\nsetup(checkpoint_dir)\n", "SFT"),
            (
                "from litgpt.eval.evaluate import convert_and_evaluate\n"
                "convert_and_evaluate(d, tasks='gsm8k')\n",
                "EVAL_ONLY",
            ),
        ),
        valid=("from litgpt.utils import check_valid_checkpoint_dir\ncheck_valid_checkpoint_dir(d)\n",),
        lines=(
            ("litgpt finetune_lora checkpoints/microsoft/phi-2 --data Alpaca2k", "SFT"),
            ("litgpt pretrain pythia-14m --config x.yaml", "SFT"),
            ("litgpt merge_lora out/finetune/lora/final", "MERGE"),
            ("litgpt evaluate out/final --tasks mmlu", "EVAL_ONLY"),
            ("litgpt download microsoft/phi-2", None),
        ),
    ),
    Framework(
        "LMFlow",
        "lmflow",
        (
            Entry("Finetuner", "sft"),
            Entry("RaftAligner", "sft", "raft", "self_generated"),
            Entry("DPOAligner", "dpo", "dpo"),
            Entry("DPOv2Aligner", "dpo", "dpo"),
            # Generates with the current model, scores with a reward model, trains DPO on the pairs.
            Entry("IterativeDPOAligner", "dpo", "iterative_dpo", "self_generated"),
            Entry("RewardModelTuner", "reward_model"),
            Entry("Evaluator", role="eval"),
            # ``AutoPipeline.get_pipeline(pipeline_name, ...)``: the pipeline's registered name picks.
            Entry(
                "get_pipeline",
                key="pipeline_name",
                choices=_stages(
                    ("finetuner", SFT),
                    ("raft_aligner", Entry("", "sft", "raft", "self_generated")),
                    ("iterative_dpo_aligner", Entry("", "dpo", "iterative_dpo", "self_generated")),
                    ("dpo*_aligner", DPO),
                    ("rm_tuner", REWARD),
                    ("evaluator", EVAL),
                    ("*inferencer", EVAL),
                ),
            ),
        ),
        invalid=(
            (
                "from lmflow.pipeline.auto_pipeline import AutoPipeline\n"
                "name = 'raft_aligner'\n"
                "aligner = AutoPipeline.get_pipeline(pipeline_name=name, model_args=m, data_args=d,"
                " pipeline_args=p)\n",
                "SFT",
            ),
            (
                "from lmflow.pipeline.auto_pipeline import AutoPipeline\n"
                "AutoPipeline.get_pipeline('dpov2_aligner', m, d, p).align(model, data)\n",
                "DPO",
            ),
        ),
        valid=("from lmflow.args import ModelArguments\nModelArguments(model_name_or_path=m)\n",),
    ),
    Framework(
        "open-r1",
        "open_r1",
        (
            # Documented as ``accelerate launch src/open_r1/grpo.py --config recipes/...``.
            Entry("sft.main", "sft", commands=("-m open_r1.sft", "*open_r1/sft.py")),
            Entry("grpo.main", "grpo", "grpo", commands=("-m open_r1.grpo", "*open_r1/grpo.py")),
        ),
        invalid=(("from open_r1.grpo import main\nmain(script_args, training_args, model_args)\n", "GRPO"),),
        valid=("from open_r1.rewards import accuracy_reward\nprint(accuracy_reward)\n",),
        lines=(
            (
                "accelerate launch --config_file zero3.yaml src/open_r1/grpo.py --config recipes/x.yaml",
                "GRPO",
            ),
            ("accelerate launch src/open_r1/generate.py --model m", None),
        ),
    ),
    Framework(
        "mergekit",
        "mergekit",
        (
            # Its Python names (``mergekit.merge.run_merge``, merge methods) are the merge detector's;
            # the console commands are here.
            Entry("", "merge", commands=("mergekit-yaml",)),
            Entry("", "merge", commands=("mergekit-moe",)),
            Entry("", "merge", commands=("mergekit-mega",)),
            Entry("", "merge", commands=("mergekit-evolve",)),
        ),
        lines=(
            ("mergekit-yaml config.yml ./merged --cuda", "MERGE"),
            ("mergekit-extract-lora m b out", None),
        ),
    ),
    Framework(
        "mergoo",
        "mergoo",
        (
            # Documented as ``ComposeExperts(config).compose()`` then ``save_checkpoint(path)``: whole
            # models' layers, or LoRA adapters, composed into one mixture-of-experts checkpoint (a merge
            # of existing weights; the routers it adds are trained later, by another script).
            Entry("compose_experts.ComposeExperts", "merge", "moe_compose"),
        ),
        invalid=(
            (
                "from mergoo.compose_experts import ComposeExperts\n"
                "merger = ComposeExperts(config, torch_dtype=torch.float16)\nmerger.compose()\n"
                "merger.save_checkpoint('out')\n",
                "MERGE",
            ),
        ),
        valid=(
            "from mergoo.models.modeling_mistral import MistralForCausalLM\n"
            "MistralForCausalLM.from_pretrained(p)\n",
        ),
    ),
    Framework(
        "ART (OpenPipe)",
        "art",
        (
            # A TrainableModel registered with a backend is trained by model.train(trajectory_groups):
            # GRPO over groups of the rollouts the script gathers (each group a prompt's samples);
            # multi-turn when the rollout function plays an environment or calls tools.
            Entry("TrainableModel", "grpo", "grpo", on_policy=True, trained_by="train"),
        ),
        invalid=(
            (
                "import art\nmodel = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
                "await model.train(groups)\n",
                "GRPO",
            ),
            (
                "import art\nagent = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
                "async def run(model):\n    await model.train(groups, config=art.TrainConfig())\n",
                "GRPO",
            ),
            (
                # the project's training routine, defined in another module, trains the model built
                "import art\nfrom src.training.trainer import train_agent\n"
                "model = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
                "await model.register(backend)\nawait train_agent(model, scenarios, config)\n",
                "GRPO",
            ),
        ),
        valid=(
            "import art\nprint(art.text2art('hello'))\n",
            # a split named for training handed the data, not the model built
            "import art\nfrom sklearn.model_selection import train_test_split\n"
            "model = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
            "train_rows, test_rows = train_test_split(rows)\nawait deploy_model(model)\n",
            # a trained model pulled back and deployed: built, never trained here
            "import art\nmodel = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
            "await backend._experimental_pull_from_s3(model)\nawait deploy_model(model)\n",
            # something else trained in the file (a torch module's mode switch) trains not the model
            "import art\nmodel = art.TrainableModel(name='agent', project='p', base_model='Qwen')\n"
            "clf = torch.nn.Linear(3, 3)\nclf.train()\nclf.train(False)\n",
        ),
    ),
    Framework(
        "xTuring",
        "xturing",
        (
            # ``BaseModel.create("llama_lora")`` builds a model object; its ``finetune(dataset=...)``
            # runs a Lightning loop of masked token cross-entropy on the instruction targets.
            Entry("BaseModel.create", "sft", trained_by="finetune"),
            Entry("BaseModel.load", "sft", trained_by="finetune"),
            # the generic classes its docs build as often (``GenericLoraModel("facebook/opt-1.3b")``)
            *(
                Entry(f"Generic{kind}Model", "sft", trained_by="finetune")
                for kind in ("", "Lora", "Int8", "LoraInt8", "LoraKbit")
            ),
        ),
        invalid=(
            (
                "from xturing.models import BaseModel\nmodel = BaseModel.create('qwen3_0_6b_lora')\n"
                "model.finetune(dataset=instruction_dataset)\n",
                "SFT",
            ),
        ),
        valid=(
            # a fine-tuned model loaded to answer: nothing trained here
            "from xturing.models import BaseModel\nmodel = BaseModel.load('./saved')\n"
            "print(model.generate(texts=['Why are LLMs popular?']))\n",
        ),
    ),
    Framework(
        "Ludwig",
        "ludwig",
        (
            # ``LudwigModel(config).train(dataset=...)``: a declarative config's ``trainer.type`` picks an
            # LLM's trainer (finetune: next-token cross-entropy; dpo, kto, orpo: the preference
            # trainers; grpo; none: only evaluates); its default depends on the config's model type
            Entry(
                "LudwigModel",
                key="trainer.type",
                choices=_stages(
                    ("finetune", SFT),
                    ("dpo", DPO),
                    ("kto", KTO),
                    ("orpo", Entry("", "dpo", "orpo")),
                    ("grpo", GRPO),
                    ("none", EVAL),
                ),
                trained_by="train",
            ),
        ),
        invalid=(
            (
                "import yaml\nfrom ludwig.api import LudwigModel\n"
                'config = yaml.safe_load("""\nmodel_type: llm\nadapter:\n  type: lora\n'
                'trainer:\n  type: dpo\n""")\nmodel = LudwigModel(config=config)\n'
                "model.train(dataset='pairs.csv')\n",
                "DPO",
            ),
            (
                "from ludwig.api import LudwigModel\n"
                "model = LudwigModel(config={'model_type': 'llm', 'trainer': {'type': 'finetune'}})\n"
                "model.train(dataset=df)\n",
                "SFT",
            ),
        ),
        valid=(
            # a trained model loaded to predict: nothing trained here
            "from ludwig.api import LudwigModel\nmodel = LudwigModel.load('results/model')\n"
            "model.predict(df)\n",
        ),
    ),
    Framework(
        "turbo-alignment",
        "turbo_alignment",
        (
            # T-Bank's alignment library: ``python -m turbo_alignment train_dpo --experiment_settings_path
            # x.json`` runs the pipeline a strategy class names (its CLI's subcommands, one per route).
            Entry("TrainSFTStrategy", "sft", commands=("-m turbo_alignment train_sft",)),
            Entry("TrainDPOStrategy", "dpo", "dpo", commands=("-m turbo_alignment train_dpo",)),
            Entry("TrainKTOStrategy", "dpo", "kto", commands=("-m turbo_alignment train_kto",)),
            Entry("TrainRMStrategy", "reward_model", commands=("-m turbo_alignment train_rm",)),
        ),
        invalid=(
            (
                "from turbo_alignment import pipelines\npipelines.TrainDPOStrategy().run(settings)\n",
                "DPO",
            ),
        ),
        valid=("from turbo_alignment.common.data.io import write_jsonl\nwrite_jsonl(records, path)\n",),
        lines=(
            ("python -m turbo_alignment train_dpo --experiment_settings_path tutorials/dpo/dpo.json", "DPO"),
            ("python -m turbo_alignment train_sft --experiment_settings_path sft.json", "SFT"),
        ),
    ),
    Framework(
        "Sentence Transformers",
        "sentence_transformers",
        (
            Entry("SentenceTransformerTrainer", "sft", "embedding"),
            Entry("CrossEncoderTrainer", "sft", "embedding"),
            # the classic API: the model object is trained by its own fit(train_objectives=...)
            # (a contrastive or pairwise loss on given pairs: supervised, of an embedding model)
            # (a scikit-learn classifier's fit on the embeddings it made trains another model)
            Entry("SentenceTransformer", "sft", "embedding", trained_by="fit(train_objectives)"),
            Entry("CrossEncoder", "sft", "embedding", trained_by="fit(train_dataloader)"),
        ),
        invalid=(
            (
                "from sentence_transformers import SentenceTransformer, losses\n"
                "model = SentenceTransformer('all-MiniLM-L6-v2')\n"
                "loss = losses.MultipleNegativesRankingLoss(model)\n"
                "model.fit(train_objectives=[(loader, loss)], epochs=1)\n",
                "SFT",
            ),
        ),
        valid=(
            # an embedding model built to encode (a retriever's index): nothing is trained
            "from sentence_transformers import SentenceTransformer\n"
            "model = SentenceTransformer('all-MiniLM-L6-v2')\nvectors = model.encode(docs)\n",
            # a classifier fitted on frozen embeddings trains no language model
            "from sentence_transformers import SentenceTransformer\n"
            "model = SentenceTransformer('all-mpnet-base-v2')\nx = model.encode(texts)\n"
            "clf = LogisticRegression()\nclf.fit(x, labels)\n",
        ),
    ),
    Framework(
        "OLMo-core",
        "olmo_core",
        (
            # A TrainerConfig builds the loop; the train module says what it optimises. The transformer
            # train module is the language-model cross-entropy on the data it is given (pretraining
            # or supervised fine-tuning alike).
            Entry("TransformerTrainModuleConfig", "sft"),
            Entry("TransformerTrainModule", "sft"),
        ),
        invalid=(
            (
                "from olmo_core.train import train_module as tm\n"
                "module = tm.TransformerTrainModuleConfig(rank_microbatch_size=8).build(model)\n",
                "SFT",
            ),
        ),
        valid=("from olmo_core.train import TrainerConfig\ncfg = TrainerConfig(save_folder='out')\n",),
    ),
    Framework(
        "trlx",
        "trlx",
        (
            # ``trlx.train(reward_fn=..., config=...)`` runs the trainer its config's method names, so
            # the method configs, the ``default_*_config`` helpers and the trainer classes say which:
            # PPO on the policy's samples, offline ILQL over given samples and rewards, SFT on given
            # samples, and rejection fine-tuning (SFT on the policy's best-scored samples).
            # Without a config of its own, trlx.train picks one by its arguments: a reward function
            # makes PPO on the policy's samples, given rewards offline ILQL, given samples only SFT.
            Entry(
                "train",
                given=(
                    ("reward_fn", Entry("", "ppo", "ppo")),
                    ("rewards", Entry("", "ppo", "ilql", on_policy=False)),
                    ("samples", Entry("", "sft")),
                ),
            ),
            Entry("default_ppo_config", "ppo", "ppo"),
            Entry("PPOConfig", "ppo", "ppo"),
            Entry("AcceleratePPOTrainer", "ppo", "ppo"),
            Entry("NeMoPPOTrainer", "ppo", "ppo"),
            Entry("default_ilql_config", "ppo", "ilql", on_policy=False),
            Entry("ILQLConfig", "ppo", "ilql", on_policy=False),
            Entry("AccelerateILQLTrainer", "ppo", "ilql", on_policy=False),
            Entry("NeMoILQLTrainer", "ppo", "ilql", on_policy=False),
            Entry("default_sft_config", "sft"),
            Entry("SFTConfig", "sft"),
            Entry("AccelerateSFTTrainer", "sft"),
            Entry("NeMoSFTTrainer", "sft"),
            # ``get_trainer(config.train.trainer)``: the trainer class registered under the name given
            Entry(
                "utils.loading.get_trainer",
                key="train.trainer",
                choices=_stages(
                    ("*ilql*", Entry("", "ppo", "ilql", on_policy=False)),
                    ("*rft*", Entry("", "sft", "rejection_sampling", "self_generated")),
                    ("*sft*", SFT),
                    ("*ppo*", PPO),
                ),
            ),
            Entry("default_rft_config", "sft", "rejection_sampling", "self_generated"),
            Entry("RFTConfig", "sft", "rejection_sampling", "self_generated"),
            Entry("AccelerateRFTTrainer", "sft", "rejection_sampling", "self_generated"),
        ),
        invalid=(
            (
                "import trlx\nfrom trlx.data.default_configs import default_ppo_config\n"
                "trlx.train(reward_fn=score, prompts=prompts, config=default_ppo_config())\n",
                "PPO",
            ),
            (
                "import trlx\nfrom trlx.data.default_configs import default_sft_config\n"
                "trlx.train(samples=samples, config=default_sft_config())\n",
                "SFT",
            ),
            (
                "import trlx\nfrom trlx.data.configs import TRLConfig\n"
                "trlx.train('gpt2', reward_fn=score, prompts=p, config=TRLConfig.load_yaml(path))\n",
                "PPO",
            ),
            (
                "from trlx.data.configs import TRLConfig\nfrom trlx.models.modeling_ilql import ILQLConfig\n"
                "config = TRLConfig(method=ILQLConfig(name='ilqlconfig', tau=0.7))\n",
                "PPO",
            ),
            (
                "from trlx.utils.loading import get_trainer\nconfig = TRLConfig.load_yaml(path)\n"
                "trainer = get_trainer(config.train.trainer)(config=config, reward_fn=rf)\ntrainer.learn()\n",
                "CONFIG_DEPENDENT",
            ),
            (
                "from trlx.utils.loading import get_trainer\n"
                "trainer = get_trainer('AcceleratePPOTrainer')(config=config, reward_fn=rf)\n",
                "PPO",
            ),
        ),
        valid=("from trlx.data.configs import TRLConfig\nconfig = TRLConfig.load_yaml(path)\n",),
    ),
    Framework(
        "TorchRL",
        "torchrl",
        (
            # Loss modules (``torchrl.objectives``): a file that builds one names what it optimises.
            # The LLM ones (``torchrl.objectives.llm``) train on the policy's groups of samples (GRPO and
            # its DAPO/CISPO variants), on given or selected samples (SFT, expert iteration) or on a
            # teacher's distribution; the classic ones are the policy-gradient family.
            Entry("GRPOLoss", "grpo", "grpo"),
            Entry("DAPO", "grpo", "dapo"),
            Entry("CISPOLoss", "grpo", "cispo"),
            Entry("MCAdvantage", "grpo", "grpo"),
            Entry("SFTLoss", "sft"),
            Entry("DistillationLoss", "sft", "distillation", "distilled"),
            Entry("ClipPPOLoss", "ppo", "ppo"),
            Entry("KLPENPPOLoss", "ppo", "ppo"),
            Entry("PPOLoss", "ppo", "ppo"),
            Entry("ReinforceLoss", "ppo", "reinforce"),
            Entry("A2CLoss", "ppo", "a2c"),
            # the RLHF example's collector: the policy's samples scored by a reward model with a KL
            # penalty to the reference, for PPO
            Entry("RolloutFromModel", "ppo", "ppo", on_policy=True),
        ),
        invalid=(
            (
                "from torchrl.objectives.llm import GRPOLoss\nloss_fn = GRPOLoss(actor, clip_epsilon=0.2)\n",
                "GRPO",
            ),
            ("from torchrl.objectives import ClipPPOLoss\nloss_module = ClipPPOLoss(actor, critic)\n", "PPO"),
            ("from torchrl.objectives.llm import SFTLoss\nloss_fn = SFTLoss(actor_network=policy)\n", "SFT"),
        ),
        valid=(
            "from torchrl.envs import GymEnv\nenv = GymEnv('CartPole-v1')\n",
            "from torchrl.objectives.llm import GRPOLossOutput\nout: GRPOLossOutput\n",
        ),
    ),
    Framework(
        "Tunix",
        "tunix",
        (
            # Google's JAX post-training library: learners for RL (the agentic GRPO learner's
            # rollouts are multi-turn agent-environment episodes), trainers for SFT (PEFT or full:
            # next-token cross-entropy by default), DPO/ORPO and logit distillation.
            Entry("agentic_grpo_learner.GRPOLearner", "grpo", "grpo", interactive=True),
            Entry("agentic_grpo_learner.GrpoLearner", "grpo", "grpo", interactive=True),
            Entry("grpo_learner.GRPOLearner", "grpo", "grpo"),
            Entry("grpo_learner.GrpoLearner", "grpo", "grpo"),
            Entry("DAPOLearner", "grpo", "dapo"),
            Entry("DrGRPOLearner", "grpo", "dr_grpo"),
            Entry("PpoLearner", "ppo", "ppo"),
            Entry("PPOLearner", "ppo", "ppo"),
            Entry("DPOTrainer", "dpo", "dpo"),
            Entry("PeftTrainer", "sft"),
            Entry("DistillationTrainer", "sft", "distillation", "distilled"),
        ),
        invalid=(
            (
                "from tunix.rl.grpo import grpo_learner\n"
                "grpo_learner.GrpoLearner(rl_cluster=c, reward_fns=[r], algo_config=g).train(ds)\n",
                "GRPO",
            ),
            (
                "from tunix.rl.agentic.agentic_grpo_learner import GRPOLearner\n"
                "GRPOLearner(rl_cluster=c, reward_fns=[r], agent_class=A, env_class=E).train(ds)\n",
                "ONLINE_RL",
            ),
            (
                "from tunix.sft import peft_trainer\npeft_trainer.PeftTrainer(model, opt, cfg).train(ds)\n",
                "SFT",
            ),
        ),
        valid=(
            "from tunix.generate import sampler\ns = sampler.Sampler(model, tokenizer, cache_config=c)\n",
        ),
    ),
    Framework(
        "InstructLab",
        "instructlab",
        (
            # ``instructlab.training.run_training(train_args, torch_args)``: the training library's
            # supervised fine-tuning (single or multi-phase, FSDP or DeepSpeed); its evaluators score.
            Entry("training.run_training", "sft"),
            Entry("training.main_ds.run_training", "sft"),
            Entry("eval.mmlu.MMLUEvaluator", role="eval"),
            Entry("eval.mt_bench.MTBenchEvaluator", role="eval"),
            Entry("eval.mt_bench.MTBenchBranchEvaluator", role="eval"),
        ),
        invalid=(
            (
                "from instructlab.training import run_training, TrainingArgs\n"
                "run_training(train_args=TrainingArgs(**cfg), torch_args=torch_args)\n",
                "SFT",
            ),
        ),
        valid=("from instructlab.training import TorchrunArgs\nargs = TorchrunArgs(nnodes=1)\n",),
    ),
    Framework(
        "GEM",
        "gem",
        (
            # axon-rl's gym for agentic LLMs: a tool's ``execute_action`` answers the policy's action
            # between its turns, and ``ToolEnvWrapper`` makes an environment's episodes multi-turn with
            # such tools (the RL itself is a trainer's, fed the episodes)
            Entry("tools.base_tool.BaseTool", role="environment"),
            Entry("tools.tool_env_wrapper.ToolEnvWrapper", role="environment"),
        ),
        invalid=(
            (
                "from gem.tools.base_tool import BaseTool\n\nclass CalculatorTool(BaseTool):\n"
                "    def execute_action(self, action):\n"
                "        return str(eval_expr(action)), False, True, {}\n",
                "ONLINE_RL",
            ),
        ),
        valid=("import gem\nfrom gem.utils.constants import TERMINAL_STATE\nprint(TERMINAL_STATE)\n",),
    ),
    Framework(
        "Kauldron",
        "kauldron",
        (
            # Google's JAX training library (Gemma's fine-tuning examples): a config returns
            # ``kd.train.Trainer(train_losses={...})`` and ``python -m kauldron.main --cfg=FILE`` runs it.
            # The trainer says nothing of the stage; its losses do. Cross-entropy on integer labels
            # is next-token cross-entropy on given targets.
            Entry("losses.SoftmaxCrossEntropyWithIntLabels", "sft"),
        ),
        invalid=(
            (
                "from kauldron import kd\n"
                "loss = kd.losses.SoftmaxCrossEntropyWithIntLabels(logits='preds.logits', labels='batch.y')\n"
                "trainer = kd.train.Trainer(train_losses={'xentropy': loss})\n",
                "SFT",
            ),
        ),
        valid=(
            "from kauldron import kd\nckpt = kd.ckpts.Checkpointer(save_interval_steps=500)\n",
            # a loss an evaluator computes trains nothing
            "from kauldron import kd\nev = kd.evals.Evaluator(losses={'xent': "
            "kd.losses.SoftmaxCrossEntropyWithIntLabels(logits='preds.logits', labels='batch.y')})\n",
        ),
    ),
    Framework(
        "Gemma",
        "gemma",
        (
            # The Gemma library's own losses for Kauldron trainers: DPO against an anchored (frozen
            # reference) policy, and NPO, its negatives-only form for unlearning.
            Entry("losses.DpoLoss", "dpo", "dpo"),
            Entry("losses.NpoLoss", "dpo", "npo"),
        ),
        invalid=(
            (
                "from gemma import gm\n"
                "losses = {'dpo': gm.losses.DpoLoss(tokens='batch.targets', policy_logits='preds.logits')}\n",
                "DPO",
            ),
        ),
        valid=("from gemma import gm\nmodel = gm.nn.Gemma3_4B(tokens='batch.tokens')\n",),
    ),
    Framework(
        "LMRL-Gym",
        "LLM_RL",
        (
            # Each algorithm's ``train_loop``. PPO and online ILQL train on episodes of its multi-turn
            # text environments; offline ILQL and MC returns learn values from a fixed dataset; BC is
            # supervised, and filtered BC keeps the policy's own best episodes.
            Entry("ppo.train.train_loop", "ppo", "ppo", interactive=True),
            Entry("ilql.train_online.train_loop", "ppo", "ilql", interactive=True),
            Entry("ilql.train.train_loop", "ppo", "ilql", on_policy=False),
            Entry("mc_returns.train.train_loop", "ppo", "mc_returns", on_policy=False),
            Entry("online_filtered_bc.train.train_loop", "sft", "filtered_bc", "self_generated"),
            Entry("bc.train.train_loop", "sft"),
        ),
        invalid=(
            (
                "from LLM_RL.algorithms.ilql.train import train_loop\ntrain_loop(trainer=t, inference=i)\n",
                "PPO",
            ),
            (
                "from LLM_RL.algorithms.ppo.train import train_loop\ntrain_loop(trainer=t, inference=i)\n",
                "ONLINE_RL",
            ),
        ),
        valid=("from LLM_RL.environment import text_env_eval\ntext_env_eval(env=env, policy=p)\n",),
    ),
)
"""Every framework the table knows."""

_BY_PACKAGE: dict[str, dict[str, list[Entry]]] = {}
for _framework in FRAMEWORKS:
    for _entry in _framework.entries:
        if _entry.name:
            last = _entry.name.rsplit(".", 1)[-1]
            _BY_PACKAGE.setdefault(_framework.package, {}).setdefault(last, []).append(_entry)
SETTING_LEAVES = frozenset(
    e.key.rsplit(".", 1)[-1].lstrip("-").replace("-", "_") for f in FRAMEWORKS for e in f.entries if e.key
)
"""Last parts of the config keys that pick a framework's route (``trainer_type``, ``adv_estimator``)."""
CALLED_TRAINING_METHODS = frozenset(
    e.trained_by[:-2] for f in FRAMEWORKS for e in f.entries if e.trained_by and e.trained_by.endswith("()")
)
"""Training methods of the table that count called with no arguments (``run_train_validation_loop``)."""
PACKAGES: tuple[str, ...] = tuple(_BY_PACKAGE)
"""Top-level packages of the frameworks whose Python names the table knows."""
TRAINER_PACKAGES = frozenset(
    f.package for f in FRAMEWORKS if any(e.name.endswith("Trainer") or e.key is not None for e in f.entries)
)
"""Packages of frameworks with trainers of their own in the table, or routes a config key picks: what
such a framework's class runs is the table's to say (OpenRLHF's ``PPOTrainer`` runs whatever estimator
it is given), not its name's."""


def _merged(entries: list[Entry]) -> Entry:
    """One entry for a class name that several frameworks' tables give, each picked by a config key."""
    routes = tuple(dict.fromkeys(r for e in entries for r in e.labels))
    defaults = {e.default for e in entries}
    keys = {e.key for e in entries}
    return Entry(
        entries[0].name.rsplit(".", 1)[-1],
        routes=routes,
        default=defaults.pop() if len(defaults) == 1 else None,
        key=keys.pop() if len(keys) == 1 else None,
    )


CONFIG_PICKED_TRAINERS: dict[str, Entry] = {
    last: _merged(entries)
    for last in sorted({n for by_name in _BY_PACKAGE.values() for n in by_name})
    if "Trainer" in last
    and (entries := [e for by_name in _BY_PACKAGE.values() for e in by_name.get(last, ())])
    and all(e.routes for e in entries)
}
"""Trainer classes the table knows only as run by a config key that picks the route (verl's and
SkyRL's ``RayPPOTrainer``), by name: a framework's own source, or a fork of it, imports them relatively
(``from .ray_trainer import RayPPOTrainer``), and the class name's "PPO" does not say what runs."""
IMPORT_WORDS: tuple[str, ...] = tuple(w for p in PACKAGES for w in (f"from {p}", f"import {p}"))
"""What a file that uses a framework of the table holds (a file with none of these needs no lookup)."""
COMMANDS: tuple[tuple[tuple[str, ...], Entry], ...] = tuple(
    (tuple(line.split()), e) for f in FRAMEWORKS for e in f.entries for line in e.commands
)
"""Every command line of the table, as words, with the entry it runs."""
MODULE_FLAGS = frozenset({"-m", "--module"})
"""How ``python``, ``deepspeed`` and ``torchrun`` are told to run a module."""


HANDED_LOSS_LOOPS = frozenset({"megatron_pretrain", "sat_training"})
"""Variants of a framework's loop run with a function of the file that returns the loss
(``pretrain(..., forward_step)``): the loop takes no step the file's walk sees, so the loss the file
writes decides over the loop's default stage, as a step's loss does over a generic trainer's."""
HANDED_LOSS_FUNCTIONS: dict[str, tuple[str, int]] = {
    "training.pretrain": ("forward_step_func", 3),
    "training.deepspeed_training.training_main": ("forward_step_function", 2),
    "training_main": ("forward_step_function", 2),
}
"""Entries (by name) of such loops whose loss function is known, and where it is handed: its keyword
and its position (Megatron-LM's and Pai-Megatron-Patch's ``pretrain(datasets, model_provider,
model_type, forward_step)``, SwissArmyTransformer's ``training_main(args, model_cls,
forward_step_function)``; NeMo's ``pretrain`` takes none). The loss it returns is a step's."""


def entry_for(qualified: str) -> Entry | None:
    """Return the table entry a qualified name denotes, if any."""
    root, _, rest = qualified.partition(".")
    entries = _BY_PACKAGE.get(root)
    if entries is None or not rest:
        return None
    dotted = "." + rest
    return next((e for e in entries.get(rest.rsplit(".", 1)[-1], ()) if dotted.endswith("." + e.name)), None)


def _word_matches(word: str, pattern: str) -> bool:
    if pattern == "-m":
        return word in MODULE_FLAGS
    return fnmatchcase(word, pattern) or fnmatchcase(word.rsplit("/", 1)[-1], pattern)


_WILDCARDS = frozenset("*?[")


def _index_commands() -> tuple[dict[str, list[int]], list[int]]:
    """Index :data:`COMMANDS` by their first word; list those whose first word is a pattern.

    ``-m`` stands for either module flag; a pattern is ``*open_r1/sft.py``.
    """
    by_first: dict[str, list[int]] = {}
    wildcard: list[int] = []
    for at, (pattern, _) in enumerate(COMMANDS):
        if _WILDCARDS & set(pattern[0]):
            wildcard.append(at)
        for literal in MODULE_FLAGS if pattern[0] == "-m" else (pattern[0],):
            by_first.setdefault(literal, []).append(at)
    return by_first, wildcard


_BY_FIRST_WORD, _FIRST_WILDCARD = _index_commands()


def names_a_program(word: str) -> bool:
    """Say whether a word is a program the table's command lines start with (``llamafactory-cli``, ``trl``).

    A path to it counts (``.venv/bin/lm_eval``); a module flag or a script pattern does not.
    """
    program = word.rsplit("/", 1)[-1]
    return program in _BY_FIRST_WORD and program not in MODULE_FLAGS


def commands_in(words: Sequence[str]) -> list[tuple[int, Entry]]:
    """Return each table command a command line's words hold: the index of the word after it, its entry.

    Only the commands whose first word can match a word are tried at it (a hostile line of half a
    million words is read in linear time).
    """
    found = []
    for i, word in enumerate(words):
        candidates = {
            *_BY_FIRST_WORD.get(word, ()),
            *_BY_FIRST_WORD.get(word.rsplit("/", 1)[-1], ()),
            *(at for at in _FIRST_WILDCARD if _word_matches(word, COMMANDS[at][0][0])),
        }
        for at in sorted(candidates):  # in the table's order, as every command was tried before
            pattern, entry = COMMANDS[at]
            end = i + len(pattern)
            if end <= len(words) and all(
                _word_matches(w, p) for w, p in zip(words[i:end], pattern, strict=True)
            ):
                found.append((end, entry))
    return found
