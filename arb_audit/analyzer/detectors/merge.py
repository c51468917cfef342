"""A merge: mergekit, a LoRA adapter folded into its base model, or a library's merge function."""

from __future__ import annotations

import itertools
import re

import libcst as cst

from arb_audit.analyzer.calls import (
    BUILD_WORDS,
    generates,
    method,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.generation import ENGINE_LAST, GENERATION_ENGINES, run_generate
from arb_audit.analyzer.detectors.weight_average import (
    SAVE_METHODS,
    WEIGHT_LOADERS,
    WEIGHT_LOADS,
    WEIGHT_WORDS,
)
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_bool, literal_text
from arb_audit.analyzer.walk import descendants

FOLD_METHODS = frozenset({"merge_and_unload", "save_pretrained_merged", "push_to_hub_merged"})
"""peft's and unsloth's methods that fold a LoRA adapter into the base weights."""
ADAPTER_COMBINATIONS = frozenset({"add_weighted_adapter"})
"""peft's methods that combine several adapters into a new one (linear, TIES, DARE, SVD)."""
CHECKPOINT_COLLECTIONS = frozenset({"models", "checkpoints", "ckpts", "adapters", "loras", "experts"})
"""Words of a value that holds several checkpoints (``ft_ckpts``, ``finetuned_models``)."""
MERGE_WORDS = frozenset({"merge", "merging"})
"""Words of a function that merges (the verb: ``merged`` names a result, not an action)."""
SETTING_WORDS = frozenset(
    {"cfg", "cfgs", "config", "configs", "conf", "field", "fields", "arch", "args", "hparams", "settings"}
)
"""Words of what a merge-named function merges when it merges settings (``_merge_model_arch_fields(cfg,
path)``, a model's config fields taken from a checkpoint's): no weights are combined. (Settings it merges
*from* or is handed say nothing: ``merge_lora_from_config(cfg)``, ``merge_lora_weights(args)``.)"""
DATA_WORDS = frozenset(
    {
        *("doc", "docs", "document", "documents", "data", "dataset", "datasets", "file", "files", "text"),
        *("texts", "records", "rows", "samples", "chunks", "results", "outputs", "responses", "logs"),
        *("metrics", "predictions", "tables", "frames", "dfs", "jsonl", "tokens", "spans", "segments"),
    }
)
"""Words of what a merge-named function merges when it merges data, not weights (``split_merge_docs(docs,
tok, hf_embedding_model=m)``: the model it is handed counts tokens)."""
QUESTION_WORDS = frozenset(
    {"is", "has", "have", "can", "should", "must", "needs", "need", "requires", "supports"}
)
"""First words of a function that answers a question about merging (``requires_tensor_merging``,
``can_merge_lora``) rather than merging."""
READ_WORDS = frozenset({"load", "read", "open", "restore", "fetch", "download", "convert"})
"""First words of a function that reads a model back or converts it (``load_merged_model``,
``convert_merged_ckpt_to_hf``): what it handles was merged before, unless its name says it merges
too (``load_and_merge_models``)."""
LINKING_WORDS = frozenset({"from", "with", "by", "using", "via", "for", "into", "to", "in", "on"})
"""Words that end what a merge-named function merges (``merge_lora_from_config``: a LoRA merged)."""
CHECKPOINT_FORMATS = frozenset({"hf", "huggingface", "pt", "pth", "bin", "safetensors", "gguf", "onnx"})
"""Words of a checkpoint's file format (what a merge-named conversion writes: ``merge_to_hf``); not a
library's name (``torch``)."""
MERGED_PART_WORDS = frozenset({"lora", "adapter", "adapters", "peft", "base", "models", "experts", "delta"})
"""Words of what a merge combines into a model besides its own weights: an adapter, a base, others."""
SHARD_WORDS = frozenset(
    {
        "fsdp",
        "shard",
        "shards",
        "sharded",
        "distributed",
        "dcp",
        "zero",
        "tp",
        "pp",
        "parallel",
        "rank",
        "ranks",
    }
)
"""Shards of one model put back together: a format conversion, not a merge of models."""


FILE_SHARD_WORDS = (SHARD_WORDS - {"zero", "tp", "pp", "parallel", "rank", "ranks", "distributed"}) | {
    "world"
}
"""Words of any name of a file that say it puts one model's shards back together (``world_size``):
those of :data:`SHARD_WORDS` that training and merge code do not use for other things (``zero_grad``,
a LoRA's rank)."""
SAVED_WEIGHT_WORDS = WEIGHT_WORDS | {"state", "dict"}
"""What the name of something saved says when it holds weights (``merged_state_dict``)."""


def _merged_weights(name: str) -> bool:
    """Say whether a name holds weights said to be merged (``merged_state_dict``, ``merged_model``)."""
    said = words(name)
    return "merged" in said and bool(SAVED_WEIGHT_WORDS & set(said))


def _saved_name(call: cst.Call) -> str | None:
    """Return the name of what a save call writes: the model it is called on, else its first argument."""
    func = call.func
    if type(func) is cst.Attribute and func.attr.value in OBJECT_SAVES:
        return last_name(func.value) or None
    if not call.args or call.args[0].keyword is not None:
        return None
    return last_name(call.args[0].value) or None


HAND_FOLD_WORDS = ("lora_B", "lora_b")
LAYER_FOLDS = frozenset({"fuse", "to_linear"})
"""Methods by which MLX's LoRA layers return a plain linear layer with the adapter folded in."""
MODULE_WALKS = frozenset({"named_modules", "modules", "leaf_modules"})
"""Methods that walk a model's layers."""
OTHER_MERGES = ("flax.", "jax.", "pandas.", "polars.", "omegaconf.", "numpy.", "dask.", "tensorflow.")
"""Libraries whose ``merge`` joins something else than models' weights: a module's graph definition
with its state (``flax.nnx.merge``), tables, configs."""
MERGE_FLAG = "merge_weights"
"""Early peft's (and loralib's) LoRA layer flag: set, the adapter is folded into the weight on ``eval()``."""
"""Words any code folding a LoRA adapter by hand contains (its B matrix, by name or key)."""
MATMULS = frozenset({"matmul", "mm"})
"""Functions and methods multiplying two matrices (``torch.matmul(b, a)``, ``b.mm(a)``)."""


def _lora_product(value: cst.BaseExpression) -> bool:
    """Say whether ``value`` multiplies a LoRA adapter's two matrices (``sd[key_B] @ sd[key_A]``).

    The operands are told by the words of their names or keys: B's then A's (``lora_B`` and
    ``lora_A``, peft's, or ``sd[lora_key_B]``), one of them naming LoRA.
    """
    for node in (value, *descendants(value)):
        if type(node) is cst.BinaryOperation and isinstance(node.operator, cst.MatrixMultiply):
            operands = [node.left, node.right]
        elif type(node) is cst.Call and last_name(node.func) in MATMULS:
            args = [a.value for a in node.args]
            # ``b.mm(a)``/``b.matmul(a)``: the receiver is the left factor; ``torch.mm(b, a)``: two arguments
            receiver = node.func.value if type(node.func) is cst.Attribute and len(args) == 1 else None
            operands = [receiver, *args] if receiver is not None else args
        else:
            continue
        if any(_multiplies(o) for o in operands):
            continue  # an activation through both matrices (``x @ lora_A.T @ lora_B.T``): a forward pass
        said = [set(words(re.sub(r"\W+", "_", cst.Module([]).code_for_node(o)))) for o in operands]
        if len(said) == 2 and "b" in said[0] and "a" in said[1] and "lora" in said[0] | said[1]:
            return True  # delta W = B A
    return False


def _multiplies(node: cst.BaseExpression) -> bool:
    """Say whether ``node`` holds a matrix product itself."""
    return any(
        (type(n) is cst.BinaryOperation and isinstance(n.operator, cst.MatrixMultiply))
        or (type(n) is cst.Call and last_name(n.func) in MATMULS)
        for n in (node, *descendants(node))
    )


def _weight(node: cst.BaseExpression) -> bool:
    """Say whether ``node`` is a checkpoint's entry or a parameter's weight (``sd[k]``, ``p.weight.data``)."""
    return type(node) is cst.Subscript or (
        type(node) is cst.Attribute and node.attr.value in ("weight", "data")
    )


MERGEKIT_CONFIG = "mergekit_config"
"""Variant of a merge stage that is a mergekit configuration built in code (``{"merge_method": ...}``)."""
MERGEKIT_KEYS = frozenset({"models", "slices", "base_model", "parameters", "tokenizer_source"})
"""Keys beside ``merge_method`` in a mergekit configuration: without one, the key labels something else
(a results table's row naming how a checkpoint was merged)."""
MERGED_SAVE = "merged_save"
"""Variant of a merge shown only by what is saved being called merged: a stage when nothing else is."""
OBJECT_SAVES = frozenset({"save_pretrained", "save_model", "push_to_hub"})
"""Save methods called on the model they write."""


class Merge(RouteDetector):
    """Combining weights without training: mergekit's merges, or folding a LoRA adapter into its base.

    mergekit is recognised by qualified name (``mergekit.merge.run_merge``, merge methods, MoE
    builders). ``merge_and_unload()`` (peft) and unsloth's ``save_pretrained_merged`` fold an adapter:
    a merge on its own, but only the end of a stage when the file also trains (variant ``lora_fold``).
    A call whose name says it merges and that names models or weights (``merge_lora_weights(model)``,
    ``method.get_merged_model(models_to_merge=ms)``) is a merge by a library of merge methods; in a file
    that trains it is the end of that stage too (a LoRA fold) or a step of the training code, so it only
    makes a ``MERGE`` file when nothing is trained. Consolidating the shards of one model (FSDP, DCP,
    ZeRO) is not a merge, and a call inside a function that a script never calls is dead code. peft's
    ``add_weighted_adapter`` combines adapters into one: a merge. An adapter folded into a model that
    the file then samples from, with nothing saved, is how it runs the model (a decoder), not a merge.
    A mergekit configuration written as a dict literal (``{"merge_method": "slerp", ...}``) in a file
    that trains nothing configures a merge for mergekit to run.
    """

    TRIGGERS = ("merg", "add_weighted_adapter", "fuse(", "to_linear(", *HAND_FOLD_WORDS)

    VALID = (
        Valid(
            "from flax import nnx\ngraph_def, params = nnx.split(model)\n"
            "ref = nnx.merge(graph_def, restored_params)\n"
        ),
        Valid("import mergekit\n"),
        Valid("if False:\n    model.save_pretrained_merged('out', tok)\n"),
        Valid("merged = {**a, **b}\n"),
        Valid(
            "import torch\nmerged_state_dict = torch.load('merged.pt')\n"
            "model.load_state_dict(merged_state_dict)\n"
        ),
        Valid("cfg = _merge_model_arch_fields(cfg, cfg.model.restore_from_path)\ntrainer.fit(model)\n"),
        Valid("layer.q_proj.merge_weights = False\nmodel.save_pretrained('out')\n"),
        Valid("lora.Linear(4, 4, r=8, merge_weights=True)\n"),  # (a layer that may fold, built: no fold)
        Valid(
            "model.merge_weights = True\nloss = model(**batch).loss\nloss.backward()\nopt.step()\n"
            "model.eval()\ntorch.save(model.state_dict(), 'ckpt.pt')\n"
        ),
        # a fold readying the model a loader returns, where nothing is saved
        Valid(
            "def load_pretrained_model(path, base):\n    model = PeftModel.from_pretrained(base, path)\n"
            "    model = model.merge_and_unload()\n    return model\n"
        ),
        Valid("rows = merge_datasets(a, b)\n"),
        # documents merged to fit a prompt, a model handed on to count their tokens
        Valid("docs, n = split_merge_docs(docs, tok, hf_embedding_model=embedding_model)\n"),
        Valid("table = merge_results_into_table(results, model_name=model)\n"),
        # a question asked about merging: nothing is merged
        Valid("if requires_tensor_merging(model_state, checkpoint):\n    keys = sorted(model_state)\n"),
        Valid("config = {'merge_method': method}\n"),
        Valid("rows = [{'path': 'merged/slerp_t05', 'merge_method': 'slerp'}]\n"),
        Valid("merge_fsdp_weights(checkpoint_dir=d, output_path=o)\n"),
        Valid("merged_dataset = concatenate_datasets([a, b])\nmerged_dataset.push_to_hub(repo)\n"),
        Valid("torch.save(merged_predictions, out)\n"),
        Valid(
            "def load_policy(path):\n"
            "    merged_model = PeftModel.from_pretrained(base, path).merge_and_unload()\n"
            "    with torch.no_grad():\n        logits = merged_model(ids).logits\n"
            "    return ValueHead(merged_model)\n"
        ),
        Valid("h = x @ lora_A.T\nh += (h @ lora_B.T) * scaling\n"),
        Valid("result += (dropout(x) @ self.lora_A.T @ self.lora_B.T) * self.scaling\n"),
        Valid("sd[k] += (lora_B.T @ x) @ lora_A\ntorch.save(sd, p)\n"),  # (an activation: not B A)
        Valid("h = x @ w\nh += (lora_b @ lora_a) * 2.0\ntorch.save(h, p)\n"),
        Valid("result += F.linear(x, self.lora_B.weight @ self.lora_A.weight) * s\ntorch.save(m, p)\n"),
        Valid("def merge(self):\n    self.weight.data += (self.lora_B @ self.lora_A) * self.scaling\n"),
        Valid(
            "world_size = len(shards)\nmerged_state_dict = {}\nfor shard in shards:\n"
            "    merged_state_dict.update(torch.load(shard))\ntorch.save(merged_state_dict, out)\n"
        ),
        Valid(
            "def load_and_merge_models(tp_ckpt_name, out):\n"
            "    parts = [torch.load(f) for f in tp_ckpt_name]\n"
            "    torch.save(join(parts), out)\nload_and_merge_models(ckpt, out)\n"
        ),
        Valid(
            "def unused(model):\n    merge_lora_weights(model)\n"
            "def convert(p):\n    return p\nif __name__ == '__main__':\n    convert(x)\n"
        ),
        Valid("import pandas as pd\nresults = pd.DataFrame(models)\nresults.merge(other)\n"),
        Valid("from src.models import load_merged_model\nmodel, tok = load_merged_model(path)\n"),
        # conv and batch-norm fused in a detector's layers, not walked from a model's modules
        Valid("model.fuse()\nlayers = [m.fuse() for m in conv_blocks]\n"),
        Valid("from tools import convert_merged_ckpt_to_hf\nhf = convert_merged_ckpt_to_hf(ckpt, params)\n"),
        # one checkpoint's pieces written out in a format (nothing named merged before the link word)
        Valid(
            "def merge_to_hf_pt(load_dir, save_dir, model_assets_dir=None):\n"
            "    save_model_weights(save_dir, convert(load_dir))\n"
            "merge_to_hf_pt(load_dir, save_dir, model_assets_dir)\n"
        ),
        # objects not named for merging (a report, settings), and one merger of one model's shards
        Valid("report = ResultsReport(models)\nreport.merge(previous)\nsettings = EvalSettings(models)\n"),
        Valid("ckpts = glob('model_world_size_8_rank_*.pt')\nmerger = ShardMerger(ckpts)\nmerger.merge()\n"),
    )
    INVALID = (
        # (a function named for its merged result still merges: only a name bound to a value is run)
        Invalid("torch.save(merged_lora_weights(model, adapter), 'merged.pt')\n", "stage", kind="merge"),
        # an adapter named before the link word: merged, whatever format it is written in
        Invalid("merge_lora_to_hf(model_dir, adapter_dir, out)\n", "stage", kind="merge"),
        # a format after the link word, but handed an adapter, a base or two models: merged
        Invalid("merge_to_gguf(base_model, lora_adapter, 'merged.gguf')\n", "stage", kind="merge"),
        Invalid("merge_to_safetensors(model_a, model_b, alpha=0.5)\n", "stage", kind="merge"),
        # a loader's fold whose model the file writes: a merged model saved
        Invalid(
            "def get_model(path, base):\n    model = PeftModel.from_pretrained(base, path)\n"
            "    return model.merge_and_unload()\n\nget_model(a, b).save_pretrained('out')\n",
            "stage",
            "merge",
        ),
        Invalid(
            "import yaml\ndef configure(t):\n"
            "    config = {'merge_method': 'slerp', 'base_model': a, 'parameters': {'t': t}}\n"
            "    yaml.dump(config, open(path, 'w'))\nconfigure(0.5)\n",
            "stage",
            "merge",
        ),
        Invalid(
            "lora_model = PeftModel.from_pretrained(base, 'tloen/alpaca-lora-7b')\n"
            "for layer in lora_model.base_model.model.model.layers:\n"
            "    layer.self_attn.q_proj.merge_weights = True\n"
            "lora_model.train(False)\ntorch.save(base.state_dict(), 'consolidated.00.pth')\n",
            "stage",
            "merge",
        ),
        Invalid(
            "from safetensors.torch import save_file\nfor k in base:\n    w = base[k]\n"
            "    w += (lora_b[k] @ lora_a[k]) * 2.0\nsave_file(base, out)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        # a checkpoint's tensors read one by one, the adapter's product added, the shard written
        Invalid(
            "import safetensors\nwith safetensors.safe_open(shard, framework='pt') as f:\n"
            "    for key in f.keys():\n        tensor = f.get_tensor(key)\n"
            "        lora_A, lora_B = find_lora_weights(key)\n"
            "        if lora_A is not None:\n            tensor += scale * lora_B @ lora_A\n"
            "        tensors[key] = tensor\n"
            "    safetensors.torch.save_file(tensors, out / shard.name)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "from mergekit.merge import run_merge\nrun_merge(config, 'out', options)\n", "stage", "merge"
        ),
        Invalid("merge_lora_weights(args)\n", "stage", "merge", "lora_fold"),
        Invalid(
            "merged_model = {}\nfor name in names:\n"
            "    merged_model[name] = sum(w * m[name] for w, m in zip(lambdas, models))\n"
            "base.load_state_dict(merged_model)\n",
            "stage",
            "merge",
            "merged_save",
        ),
        Invalid("merge_lora_from_config(cfg)\n", "stage", "merge", "lora_fold"),
        Invalid(
            "flat = fisher * flatten(a) + (1 - fisher) * flatten(b)\n"
            "merged_state_dict = unflatten(flat, reference)\ntorch.save(merged_state_dict, out)\n",
            "stage",
            "merge",
            "merged_save",
        ),
        Invalid(
            "model.add_weighted_adapter(adapters=['a', 'b'], weights=[0.5, 0.5], adapter_name='m',"
            " combination_type='ties')\n",
            "stage",
            "merge",
            "merge_function",
        ),
        Invalid(
            "model = PeftModel.from_pretrained(base, path).merge_and_unload()\n"
            "outputs = model.generate(**inputs)\n",
            "inference",
        ),
        Invalid(
            "import transformers\nmodel = model.merge_and_unload()\n"
            "pipe = transformers.pipeline('text-generation', model=model)\n",
            "inference",
        ),
        Invalid(
            "from threading import Thread\nmodel = model.merge_and_unload()\n"
            "Thread(target=model.generate, kwargs=dict(input_ids=ids, streamer=streamer)).start()\n",
            "inference",
        ),
        Invalid(
            "model = model.merge_and_unload()\nprint(model.generate(**inputs))\nmodel.save_pretrained(out)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "model = PeftModel.from_pretrained(base, path)\nmodel = model.merge_and_unload()\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "from lib.lora import merge_lora_weights\nmerge_lora_weights(model)\n"
            "torch.save(model.state_dict(), p)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        # MLX's LoRA layers folded one by one and put back, then saved
        Invalid(
            "fused = [(n, m.to_linear()) for n, m in model.named_modules() if isinstance(m, LoRALinear)]\n"
            "model.update_modules(tree_unflatten(fused))\nsave(path, model)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        # a script's command registered by a decorator is called, though its name never is
        Invalid(
            "import typer\nfrom src.models import merge_lora_into_base\napp = typer.Typer()\n"
            "@app.command()\ndef main(adapter_path: str):\n"
            "    merge_lora_into_base(model=model, adapter_path=adapter_path)\n"
            "if __name__ == '__main__':\n    app()\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "import torch\nsd = torch.load(base)\nfor k in sd:\n"
            "    key_a = k.replace('.weight', '.lora_A.weight')\n"
            "    key_b = key_a.replace('lora_A', 'lora_B')\n"
            "    sd[k] += (lora[key_b].float() @ lora[key_a].float()) * scaling\ntorch.save(sd, out)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "import torch\nfor name, p in model.named_parameters():\n"
            "    p.data += torch.mm(lora[name + '.lora_B'], lora[name + '.lora_A']) * s\n"
            "model.save_pretrained(out)\n",
            "stage",
            "merge",
            "lora_fold",
        ),
        Invalid(
            "merged_tv = tv_merging(tv_flat_checks)\nmerged = flat_ptm + lam * merged_tv\n",
            "stage",
            "merge",
            "merge_function",
        ),
        # an object built from fine-tuned checkpoints, merging them (the method picked by name)
        Invalid(
            "def main(args):\n    ft_ckpts = get_ft_ckpts(args.base_model)\n"
            "    merger = getattr(methods, args.algo)(args.base_model, ft_ckpts, save_path)\n"
            "    merger.merge(**kwargs)\n\nif __name__ == '__main__':\n    main(parse_args())\n",
            "stage",
            "merge",
            "merge_function",
        ),
        Invalid(
            "merger = TaskArithmetic(base_model=base, models=finetuned)\nmerger.merge(lam=0.5)\n",
            "stage",
            "merge",
            "merge_function",
        ),
        Invalid(
            "merged = method.get_merged_model(merged_model=base, models_to_merge=models)\n"
            "merged.save_pretrained(out)\n",
            "stage",
            "merge",
            "merge_function",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.named: list[tuple[cst.Call, cst.CSTNode | None, str | None, str, set[str]]] = []
        """Calls of merge functions: (call, statement, enclosing top-level function, callee, words)."""
        self.depth = 0
        self.function: str | None = None
        """The top-level function being walked."""
        self.used: dict[str, int] = {}
        """How often each name occurs (a function's own definition counts once, and once more where a
        decorator registers it)."""
        self.main_guard = False
        """The file runs as a script (``if __name__ == "__main__":``)."""
        self.folding_functions: set[str] = set()
        """The file's functions that fold an adapter: a call of one is that fold, read where it is."""
        self.loading_functions: set[str] = set()
        """The file's functions that put weights into a model (``load_state_dict``): one that folds
        adapters and loads their average too combines models, whatever the folds alone would say."""
        self.parameters: dict[str, set[str]] = {}
        """Words of the parameters of each top-level function the file defines (what it is given)."""
        self.folds: list[tuple[cst.CSTNode, cst.CSTNode | None, str | None]] = []
        """Calls folding an adapter into its base: (call, statement, enclosing top-level function)."""
        self.weight_locals: set[str] = set()
        """Names bound to a checkpoint's entry or a parameter's weight (``w = base[k]``)."""
        self.hand_folds: list[tuple[cst.CSTNode, cst.CSTNode | None]] = []
        """Adapters' products added into weights by hand: a fold where the file saves a model."""
        self.flag_folds: list[tuple[cst.CSTNode, cst.CSTNode | None]] = []
        """LoRA layers flagged to fold themselves (``merge_weights = True``) when training mode is left."""
        self.leaves_training = False
        """The file switches a model out of training mode (``eval()``, ``train(False)``)."""
        self.backward = False
        """The file takes a backward pass (then the flag is a training run's evaluation setting)."""
        self.saves = False
        """The file writes a model (``save_pretrained``, ``torch.save``)."""
        self.generates = False
        """The file samples text from a model."""
        self.configured: list[tuple[cst.DictElement, cst.CSTNode | None, str | None, str]] = []
        """mergekit configurations written as dict literals (``{"merge_method": "slerp", ...}``)."""
        self.saved_merged: list[tuple[cst.Call, cst.CSTNode | None, str | None, str]] = []
        """Saves of a model or state dict named as merged: (call, statement, function, its name)."""
        self.loaded: set[str] = set()
        """Names bound to a checkpoint read (``merged_sd = torch.load(path)``): merged elsewhere."""
        self.built_from: dict[str, set[str]] = {}
        self.values: set[str] = set()
        """Names the file binds by assignment (``merged_model = peft_model.merge_and_unload()``)."""
        """Words of the checkpoint collections a plain name named for merging was built from, and of
        its class (``merger = Merger(base_model, ft_ckpts, out)``): what its ``merge()`` combines."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth == 0:
            self.function = node.name.value
            if node.decorators:
                # registered with whoever calls it (``@app.command()``, ``@click.command()``,
                # ``@hydra.main(...)``): a script's command is called though its name never is
                self.used[node.name.value] = self.used.get(node.name.value, 0) + 1
            params = (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params)
            self.parameters[node.name.value] = {w for p in params for w in words(p.name.value)}
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.function = None

    def visit_Name(self, node: cst.Name) -> None:
        self.used[node.value] = self.used.get(node.value, 0) + 1

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if type(test) is cst.Comparison and type(test.left) is cst.Name:
            self.main_guard = self.main_guard or test.left.value == "__name__"

    def visit_Call(self, node: cst.Call) -> None:
        called = method(node) or last_name(node.func)
        self.backward = self.backward or called == "backward"
        # ``model.eval()``, ``model.train(False)``: the mode switch at which flagged layers fold
        self.leaves_training = (
            self.leaves_training
            or called == "eval"
            or (called == "train" and bool(node.args) and literal_bool(node.args[0].value) is False)
        )
        self.saves = self.saves or called in SAVE_METHODS
        saved = _saved_name(node) if called in SAVE_METHODS else None
        if called in WEIGHT_LOADS and self.function is not None:
            self.loading_functions.add(self.function)
        if called in WEIGHT_LOADS:
            # model.load_state_dict(merged_state_dict), set_peft_model_state_dict(base, merged_model):
            # weights the file merged put into a model, as saving them is
            saved = next(
                (n for a in node.args if _merged_weights(n := last_name(a.value)) and n not in self.loaded),
                None,
            )
        if saved and _merged_weights(saved):
            statement = self.context.statements[-1] if self.context.statements else None
            self.saved_merged.append((node, statement, self.function, saved))
        self.generates = (
            self.generates
            or generates(self, node)
            or (called in ENGINE_LAST and bool(self.names(node.func) & GENERATION_ENGINES))
            # (``Thread(target=model.generate, kwargs=kw)``: a streamed generation run on a thread)
            or run_generate(node) is not None
        )
        if called in FOLD_METHODS:
            self.saves = self.saves or called != "merge_and_unload"  # unsloth's fold writes the model
            statement = self.context.statements[-1] if self.context.statements else None
            self.folds.append((node, statement, self.function))
            if self.function is not None:
                self.folding_functions.add(self.function)
            return
        if called in ADAPTER_COMBINATIONS:
            message = f"combines adapters into one with {called}"
            self.report(node, "stage", message, kind="merge", variant="merge_function")
            return
        for name in sorted(self.names(node.func)):  # (sorted: the same report every run)
            root, _, rest = name.partition(".")
            if root == "mergekit" and any(word in rest for word in ("merge", "moe", "evo")):
                self.report(node, "stage", f"calls {name}", kind="merge", variant="mergekit")
                return
        callee = last_name(node.func)
        said = set(words(callee))
        if any(name.startswith(OTHER_MERGES) for name in self.names(node.func)):
            return  # flax's nnx.merge(graphdef, params) rebuilds a module; pandas joins tables
        if words(callee)[:1] and words(callee)[0] in QUESTION_WORDS:
            return  # ``requires_tensor_merging(model)`` asks whether weights would be merged
        if words(callee)[:1] and words(callee)[0] in READ_WORDS and not said & MERGE_WORDS:
            return  # ``load_merged_model(path)`` reads a model merged before, merging nothing
        if type(node.func) is cst.Name and callee in self.values:
            return  # ``merged_model(ids)``: a name this file bound to a model is run, not a merge function
        if said & MERGE_WORDS or ("merged" in said and said & WEIGHT_WORDS):  # get_merged_model()
            # what the call names: its keywords, the names of the values it is handed, and the
            # checkpoints its object was built from (``merger.merge(**kwargs)``)
            receiver = node.func.value if type(node.func) is cst.Attribute else None
            named = said.union(*_handed_words(node))
            if type(receiver) is cst.Name:
                named |= self.built_from.get(receiver.value, set())
            if (
                named & WEIGHT_WORDS
                and not named & SHARD_WORDS
                and not _merges_no_weights(callee)
                and not _converts_format(callee, node)
            ):
                statement = self.context.statements[-1] if self.context.statements else None
                self.named.append((node, statement, self.function, callee, named))

    def visit_Assign(self, node: cst.Assign) -> None:
        # (names bound to a value: called, they run what they hold, whatever they are named)
        self.values.update(t.target.value for t in node.targets if type(t.target) is cst.Name)
        assigned = node.targets[0].target if len(node.targets) == 1 else None
        if (
            type(node.value) is cst.Call
            and type(assigned) is cst.Name
            # (an object named for merging: a report, a table or settings built from the models'
            # names merge themselves, not their weights)
            and MERGE_WORDS & {w.rstrip("r") for w in words(assigned.value)}
            and not any(q.startswith(OTHER_MERGES) for q in self.names(node.value.func))
        ):
            # what it is handed, by position or keyword, and what its class is named (``ShardMerger``)
            handed = [
                set(words(last_name(a.value))) | (set(words(a.keyword.value)) if a.keyword else set())
                for a in node.value.args
            ]
            collections = [w for w in handed if w & CHECKPOINT_COLLECTIONS]
            if collections:
                self.built_from[assigned.value] = set(words(last_name(node.value.func))).union(*collections)
        if type(node.value) is cst.Call and (
            self.names(node.value.func) & WEIGHT_LOADERS or last_name(node.value.func) == "from_pretrained"
        ):
            # merged = torch.load("merged.pt"): weights merged elsewhere, read back
            self.loaded.update(last_name(t.target) for t in node.targets)
        for target in node.targets:
            if (
                type(target.target) is cst.Attribute
                and target.target.attr.value == MERGE_FLAG
                and literal_bool(node.value) is True
            ):
                # ``layer.q_proj.merge_weights = True``: early peft's LoRA layers fold their adapter into
                # the base weight when the model leaves training mode (``model.train(False)``)
                self.flag_folds.append(
                    (node, self.context.statements[-1] if self.context.statements else None)
                )
            if type(target.target) is cst.Name:
                # (a weight read from a checkpoint: ``tensor = f.get_tensor(key)``, safetensors' reader)
                read = type(node.value) is cst.Call and method(node.value) == "get_tensor"
                name = target.target.value
                # (``tensor = tensor.to(torch.float32)``: the same weight, converted)
                converted = (
                    type(node.value) is cst.Call
                    and type(node.value.func) is cst.Attribute
                    and type(node.value.func.value) is cst.Name
                    and node.value.func.value.value == name
                )
                if _weight(node.value) or read:
                    self.weight_locals.add(name)
                elif not converted:
                    self.weight_locals.discard(name)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        # ``[(n, m.fuse()) for n, m in model.named_modules() if hasattr(m, "fuse")]``: MLX's LoRA
        # layers folded into plain linear layers one by one, put back with ``update_modules``
        iterable = node.for_in.iter
        if (
            type(iterable) is cst.Call
            and method(iterable) in MODULE_WALKS
            and any(type(n) is cst.Call and method(n) in LAYER_FOLDS for n in descendants(node.elt))
        ):
            statement = self.context.statements[-1] if self.context.statements else None
            self.folds.append((node, statement, self.function))
            if self.function is not None:
                self.folding_functions.add(self.function)

    def visit_Dict(self, node: cst.Dict) -> None:
        # {"merge_method": "slerp", "slices": ...}: a mergekit configuration built in code, to be
        # written out and run (an evolutionary merge's candidate, a merge recipe's YAML)
        keys = {
            literal_text(e.key): e
            for e in node.elements
            if type(e) is cst.DictElement
            and type(e.key) is cst.SimpleString
            and "b" not in e.key.prefix.lower()  # (bytes keys name no setting)
        }
        method = keys.get("merge_method")
        if method is not None and type(method.value) is cst.SimpleString and MERGEKIT_KEYS & keys.keys():
            statement = self.context.statements[-1] if self.context.statements else None
            self.configured.append((method, statement, self.function, literal_text(method.value)))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        # ``sd[k] += (lora_B @ lora_A) * scaling``: an adapter folded by hand into a weight (a
        # checkpoint's entry, a parameter's ``.weight``/``.data``), written out below; an activation
        # (``result += ...``) is a forward pass, a layer's own ``merge()`` unsaved is a mode switch
        target = node.target
        into_weight = _weight(target) or (type(target) is cst.Name and target.value in self.weight_locals)
        if isinstance(node.operator, cst.AddAssign) and into_weight and _lora_product(node.value):
            self.hand_folds.append((node, self.context.statements[-1] if self.context.statements else None))

    def _never_called(self, function: str | None) -> bool:
        """Say whether a top-level function of a script is never called (its code is dead)."""
        return self.main_guard and function is not None and self.used.get(function, 0) <= 1

    def _joins_shards(self) -> bool:
        return any(FILE_SHARD_WORDS & set(words(name)) for name in self.used)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.saves and self.flag_folds and self.leaves_training and not self.backward:
            # (in a file that also trains, the flag only says how the layers behave at evaluation)
            node, statement = self.flag_folds[0]
            message = "folds a LoRA adapter into its base (peft's merge_weights flag, then a save)"
            self.report(node, "stage", message, statement=statement, kind="merge", variant="lora_fold")
        if self.saves and self.hand_folds:
            node, statement = self.hand_folds[0]
            message = "folds a LoRA adapter into its base (B @ A added to the weights)"
            self.report(node, "stage", message, statement=statement, kind="merge", variant="lora_fold")
        for node, statement, function in self.folds:
            if not self.saves and function is not None and _loads_a_model(function):
                continue  # (``load_pretrained_model``: the adapter is folded into the model it returns)
            if self.generates and not self.saves:
                message = "folds a LoRA adapter into the model it samples from (nothing is saved)"
                self.report(node, "inference", message, statement=statement)
            else:
                message = "folds a LoRA adapter into its base"
                self.report(node, "stage", message, statement=statement, kind="merge", variant="lora_fold")
        if self.saved_merged and not self.folds and not self.named and not self._joins_shards():
            # a model or state dict the file calls merged and writes (``torch.save(merged_state_dict,
            # out)``): weights combined here by code of its own (Fisher-weighted, task arithmetic)
            node, statement, function, saved = self.saved_merged[0]
            if not self._never_called(function):
                message = f"writes {saved}, weights it merged"
                if method(node) in WEIGHT_LOADS or last_name(node.func) in WEIGHT_LOADS:
                    message = f"puts {saved}, weights it merged, into a model"
                self.report(node, "stage", message, statement=statement, kind="merge", variant=MERGED_SAVE)
        # (the first configuration in code that runs: one in a function the script never calls is dead)
        live = [
            (node, statement, method)
            for node, statement, function, method in self.configured
            if not self._never_called(function)
        ]
        if live and not self.backward:
            node, statement, merge_method = live[0]
            message = f"configures a mergekit merge (merge_method {merge_method})"
            self.report(node, "stage", message, statement=statement, kind="merge", variant=MERGEKIT_CONFIG)
        for node, statement, function, callee, said in self.named:
            # the file's own merge function says what it joins in its parameters (``tp_ckpt_name``:
            # the tensor-parallel shards of one model)
            named = said | self.parameters.get(callee, set())
            if named & SHARD_WORDS or (
                callee in self.folding_functions and callee not in self.loading_functions
            ):
                continue  # (a fold of the file's own, ``_get_merged_model``, is read as that fold)
            if self._never_called(function):
                continue  # inside a function the script never calls
            variant = "lora_fold" if named & {"lora", "adapter"} else "merge_function"
            message = f"calls {callee}, which merges weights"
            self.report(node, "stage", message, statement=statement, kind="merge", variant=variant)


def _loads_a_model(function: str) -> bool:
    """Say whether a function is named for setting a model up, not for merging (``_init_actor``).

    A fold in it, where the file writes no model, readies a fine-tuned model for whoever calls it:
    no weights are combined into a saved model.
    """
    said = words(function)
    return bool(said) and said[0] in BUILD_WORDS and not set(said) & MERGE_WORDS


def _merges_no_weights(name: str) -> bool:
    """Say whether a merge-named function merges settings or data, not weights.

    What follows its verb, up to a linking word, names what it merges.
    """
    said = words(name)
    at = next((i for i, w in enumerate(said) if w in MERGE_WORDS), None)
    if at is None:
        return False
    merged = list(itertools.takewhile(lambda w: w not in LINKING_WORDS, said[at + 1 :]))
    return bool(set(merged) & (SETTING_WORDS | DATA_WORDS))


def _converts_format(name: str, call: cst.Call) -> bool:
    """Say whether a merge-named call writes one checkpoint's pieces out in a format.

    ``merge_to_hf_pt(load_dir, save_dir, model_assets_dir)``: its name names nothing merged (no word
    before its verb, none between the verb and a linking word) and a checkpoint format after the
    linking word, and what it is handed names at most one model and no adapter or base
    (``merge_to_gguf(base_model, lora_adapter, out)`` and ``lora_merge_to_hf(...)`` fold an adapter;
    ``merge_to_torch(model_a, model_b)`` combines two models). Judged by the names alone.
    """
    said = words(name)
    at = next((i for i, w in enumerate(said) if w in MERGE_WORDS), None)
    if at != 0 or len(said) < 3 or said[1] not in LINKING_WORDS or not set(said[2:]) & CHECKPOINT_FORMATS:
        return False
    handed = _handed_words(call)
    return not any(h & MERGED_PART_WORDS for h in handed) and sum(bool(h & WEIGHT_WORDS) for h in handed) <= 1


def _handed_words(call: cst.Call) -> list[set[str]]:
    """Return, per argument of a call, the words of its keyword or of the name it hands (else none)."""
    return [
        set(words(a.keyword.value if a.keyword else a.value.value if type(a.value) is cst.Name else ""))
        for a in call.args
    ]
