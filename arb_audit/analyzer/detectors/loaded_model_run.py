"""A model loaded from its checkpoint and run on inputs, in a file that trains, writes and converts none."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import CHAT_METHODS, GENERATION_METHODS, SAMPLE_METHODS
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.framework_entry import STEPPED_WORDS
from arb_audit.analyzer.detectors.gradient_step import TRAINING_DATA_WORDS
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import dotted, last_name
from arb_audit.analyzer.trainers import TRAINING_WORDS

NOT_MODELS = frozenset(
    {"tokenizer", "config", "processor", "extractor", "configuration", "vocab", "template", "dataset"}
)
"""Words of a class whose ``from_pretrained`` loads no model (``AutoTokenizer``, ``GenerationConfig``,
``AutoImageProcessor``)."""
PASSED_ON = frozenset(
    {"to", "cuda", "eval", "half", "float", "bfloat16", "requires_grad_", "cpu", "merge_and_unload"}
)
"""Methods chained after loading that hand the same model back (``.to(device).eval()``; an adapter's
``merge_and_unload()`` hands back its base with the adapter folded in)."""
RUNNING_WORDS = frozenset(
    {
        *("generate", "generation", "sample", "sampling", "inference", "predict", "prediction"),
        *("predictions", "score", "scores", "scoring", "forward", "decode", "decoding", "chat", "respond"),
        *("answer", "logprob", "logprobs", "logits", "perplexity", "ppl", "embed", "encode", "evaluate"),
        *("eval", "evaluation", "prob", "probs", "likelihood"),
    }
)
"""Words of a helper that runs the model it is handed (``sequence_log_prob(ref_model, ids)``,
``jacobi_generate(inputs, model, tok)``): one with none of them may only wrap, move or inspect it
(``infer_auto_device_map(model)`` infers where its layers go; ``log_model(model)`` records it)."""
MODEL_METHODS = GENERATION_METHODS | CHAT_METHODS | SAMPLE_METHODS | {"forward", "score"}
"""A loaded model's methods that run it on inputs."""
SAVING_WORDS = frozenset({"save", "export", "trace", "upload", "push"})
"""Words of a call that writes or uploads (``save_pretrained``, ``export_model``, ``save_quantized``,
``upload_folder``, ``torch.jit.trace``; ``np.save(preds)`` too: a file that makes one is left to the
other readings): what such a file runs on the way may be a conversion's check, no evaluation."""
MODEL_WRITING_WORDS = frozenset({"convert", "quantize", "quantise", "write", "dump", "checkpoint"})
"""Words of a call that converts or writes a loaded model when handed it or called on it
(``write_checkpoint(model, dst)``, ``model.quantize(examples)``); called on anything else
(``tok.convert_tokens_to_ids``, ``f.write(line)``) they say nothing of the model."""
CONVERTING_VERBS = frozenset({"convert", "quantize", "quantise"})
"""A call named by one of these alone converts what a converter is called on (``converter.convert(out)``,
``quantizer.quantize(model)``); on anything else it converts only a loaded model it is called on or
handed (``Image.open(f).convert('RGB')`` converts an image)."""
CONVERTERS = frozenset({"converter", "converters", "quantizer", "quantiser", "exporter"})
"""Words of an object that converts or exports a checkpoint."""
TRAINING_VERBS = TRAINING_WORDS | {"learn", "backward"}
"""Words of a call that trains when it is a method (``trainer.train()``, ``algo.learn()``,
``loss.backward()``) or is handed a loaded model (``finetune(model, data)``): such a file is read by
its training, not as a model run. A plain call handed no model says only its name (``finetune_model()``
may merely score); ``model.train(False)`` switches to evaluation."""
STAGE_NOUNS = frozenset({"ppo", "dpo", "grpo", "sft", "rl"})
"""Stages a call trains only when its name runs one too (``run_dpo(model)``); alone they qualify what is
evaluated or read (``evaluate_dpo_model``, ``get_dpo_config``, ``load_rl_prompts``)."""
SPLIT_WORDS = TRAINING_DATA_WORDS | {"test"}
"""Words that, right after a training word, make it the name of a split (``train_test_split``,
``get_train_dataloader``), not of training (``train_on_data`` trains)."""
STEPPING = frozenset({"step", "zero"})
"""Words of a call that applies or clears gradients when called on an optimiser, a scheduler, a trainer
or a model (``optimizer.step()``, ``model.zero_grad()``), not on an environment (``env.step(a)``)."""


class LoadedModelRun(RouteDetector):
    """A model loaded with ``from_pretrained`` and run on inputs, in a file that trains and writes none.

    Any class's ``from_pretrained`` but a tokenizer's, a config's or a processor's counts as loading
    a model.

    Called itself (``model(ids)``, ``self.model.forward``, ``model.generate``) or handed to a helper
    named for running it (``sequence_log_prob(ref_model, ids)``, ``jacobi_generate(x, model, tok)``):
    the model's outputs are computed and nothing is trained here. A file that saves, exports, traces,
    quantises or uploads a model converts it; one that hands it to training (``finetune(model, data)``,
    ``trainer.train()``) is read by that. A tokenizer, config or processor loaded is no model; a model
    only built, moved or handed to a constructor (a trainer's) is not run here. Names are matched
    file-wide, not by scope: a model loaded in ``load_model()`` and run where the caller hands it on
    is the same model.
    """

    TRIGGERS = ("from_pretrained",)

    VALID = (
        Valid("tok = AutoTokenizer.from_pretrained('m')\nids = tok('hi')\n"),
        # exported for serving: a conversion
        Valid(
            "import torch\nmodel = AutoModel.from_pretrained(p).eval()\nprint(model(example))\n"
            "traced = torch.jit.trace(model, example)\n"
        ),
        # gradients cleared on the model: trained here
        Valid("model = AutoModel.from_pretrained(p)\nmodel.zero_grad()\nscores = model(ids)\n"),
        # trained by a helper handed it
        Valid("model = AutoModel.from_pretrained(p)\nprint(model(ids))\ntrain_on_data(model, ds)\n"),
        # a dataset's own loader: no model
        Valid("corpus = TextDataset.from_pretrained(p)\nitems = corpus(split)\n"),
        # quantised and saved through a library's own saver
        Valid(
            "model = AutoGPTQForCausalLM.from_pretrained(p, qcfg)\nmodel.quantize(examples)\n"
            "print(model(ids))\nmodel.save_quantized(out)\n"
        ),
        # an adapter folded in and the result written by a helper
        Valid(
            "model = PeftModel.from_pretrained(base, adapter).merge_and_unload()\n"
            "print(model(ids).logits)\nwrite_checkpoint(model, dst)\n"
        ),
        # handed to a trainer that is built here: not run by this file
        Valid("model = AutoModelForCausalLM.from_pretrained(p)\ntrainer = MyTrainer(model=model)\n"),
        # a model prepared for training elsewhere
        Valid(
            "def load(p):\n    model = AutoModelForCausalLM.from_pretrained(p)\n"
            "    model = get_peft_model(model, config)\n    return model\n"
        ),
        # trained in the file, by a helper: evaluated before and after, still a training file
        Valid(
            "model = AutoModelForCausalLM.from_pretrained(p)\nbefore = evaluate(model, val)\n"
            "finetune(model, train)\nafter = evaluate(model, val)\n"
        ),
        # recorded by a logger: not run
        Valid("model = AutoModel.from_pretrained(p)\nlog_model_info(model)\n"),
        # trained by its trainer's method
        Valid(
            "model = AutoModelForCausalLM.from_pretrained(p)\nprint(model(ids).loss)\n"
            "algo = Learner(model, cfg)\nalgo.learn(steps)\n"
        ),
        # converted by a converter of the same checkpoint: a conversion's check
        Valid(
            "model = AutoModelForSeq2SeqLM.from_pretrained(p)\nmodel(**dummy)\n"
            "converter = ctranslate2.converters.TransformersConverter(p)\nconverter.convert(out)\n"
        ),
    )
    INVALID = (
        Invalid(
            "ref = AutoModelForCausalLM.from_pretrained(path)\nref.eval()\n"
            "for batch in loader:\n    margin = sequence_log_prob(ref, batch['chosen'])\n",
            "inference",
        ),
        Invalid(
            "model = ChatGLMForConditionalGeneration.from_pretrained(p)\nouts = model(ids)\n", "inference"
        ),
        Invalid(
            "model = AutoModelForSequenceClassification.from_pretrained(p, num_labels=1).to(d)\n"
            "def score(q, a):\n    return model(**tok(q, a, return_tensors='pt')).logits.sigmoid()\n",
            "inference",
        ),
        # a split handled and a tokenizer's ids converted: nothing trained or written
        Invalid(
            "model = AutoModelForCausalLM.from_pretrained(p)\nparts = ds.train_test_split(0.1)\n"
            "ids = tok.convert_tokens_to_ids(words)\nprint(model(ids).logits)\n",
            "inference",
        ),
        # an image converted, a DPO model evaluated, a helper named for fine-tuning handed nothing,
        # evaluation mode switched on: none of them trains or converts the model
        Invalid(
            "model = LlavaForConditionalGeneration.from_pretrained(p)\nmodel.train(False)\n"
            "img = Image.open(f).convert('RGB')\nout = model.generate(**proc(img, q))\n"
            "evaluate_dpo_model(model, val)\nfinetune_model()\n",
            "inference",
        ),
        Invalid("model: PreTrainedModel = AutoModel.from_pretrained(p)\nprint(model(ids))\n", "inference"),
        # unsloth hands back the model and its tokenizer
        Invalid(
            "model, tok = FastLanguageModel.from_pretrained(p, load_in_4bit=True)\n"
            "FastLanguageModel.for_inference(model)\nout = model.generate(**tok(q, return_tensors='pt'))\n",
            "inference",
        ),
        # kept on the object, run by its method; an environment's step beside it trains nothing
        Invalid(
            "class Judge:\n    def __init__(self, p):\n        self.model = AutoModel.from_pretrained(p)\n"
            "    def rate(self, ids):\n        obs, r, done, info = env.step(0)\n"
            "        return self.model.forward(ids)\n",
            "inference",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.loaded: set[str] = set()
        """Dotted names bound to a model loaded from its checkpoint (``model``, ``self.model``)."""
        self.runs: list[tuple[cst.Call, cst.CSTNode | None, str]] = []
        """Calls that may run one: (the call, its statement, the name it runs), decided at the end."""
        self.touching: list[set[str]] = []
        """Of each call that writes or trains when it touches a loaded model, the dotted names of its
        receiver and its arguments (decided at the end, when every model load has been seen)."""
        self.converts_or_trains = False
        """Whether the file saves, exports or uploads something, or trains by a method or a step."""

    def visit_Assign(self, node: cst.Assign) -> None:
        """Note the names a model loaded from its checkpoint is bound to."""
        if _loads_a_model(node.value):
            for target in node.targets:
                self._bind(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """Note a model loaded into an annotated name (``model: PreTrainedModel = X.from_pretrained(p)``)."""
        if node.value is not None and _loads_a_model(node.value):
            self._bind(node.target)

    def _bind(self, target: cst.BaseExpression) -> None:
        if type(target) is cst.Tuple and target.elements:
            target = target.elements[0].value  # (``model, tok = FastLanguageModel.from_pretrained``)
        if name := dotted(target):
            self.loaded.add(name)

    def visit_Call(self, node: cst.Call) -> None:
        """Note what a call runs, writes or trains."""
        func = node.func
        named = words(last_name(func))
        said = frozenset(named)
        receiver = dotted(func.value) if type(func) is cst.Attribute else ""
        handed = {name for a in node.args if (name := dotted(a.value))}
        trains = _trains(named, node)
        if (
            said & SAVING_WORDS
            or (said and said <= CONVERTING_VERBS and set(words(receiver)) & CONVERTERS)
            or (receiver and (trains or (said & STEPPING and set(words(receiver)) & STEPPED_WORDS)))
        ):
            self.converts_or_trains = True
            return
        if trains or said & MODEL_WRITING_WORDS:
            self.touching.append(handed | {receiver} - {""})
            return
        statement = self.context.statements[-1] if self.context.statements else None
        if receiver and last_name(func) in MODEL_METHODS:
            self.runs.append((node, statement, receiver))
        elif name := dotted(func):
            self.runs.append((node, statement, name))
        if said & RUNNING_WORDS:
            self.runs.extend((node, statement, name) for name in handed)

    def leave_Module(self, original_node: cst.Module) -> None:
        """Report the first run of a loaded model, unless the file converts, writes or trains one."""
        if self.converts_or_trains or any(touched & self.loaded for touched in self.touching):
            return
        for call, statement, name in self.runs:
            if name in self.loaded:
                self.report(
                    call, "inference", f"runs {name}, a model loaded from its checkpoint", statement=statement
                )
                return


def _trains(named: tuple[str, ...], call: cst.Call) -> bool:
    """Say whether a call's name says it trains (see :data:`TRAINING_VERBS` and :data:`STAGE_NOUNS`)."""
    said = set(named)
    if said & RUNNING_WORDS and not said & TRAINING_VERBS:
        return False  # (``evaluate_dpo_model``, ``sft_model_score``)
    verbs = [i for i, w in enumerate(named) if w in TRAINING_VERBS]
    if verbs and all(i + 1 < len(named) and named[i + 1] in SPLIT_WORDS for i in verbs):
        return False  # (``train_test_split``, ``get_train_dataloader``: a split)
    if named == ("train",) and call.args and dotted(call.args[0].value) == "False":
        return False  # (``model.train(False)``: evaluation mode)
    return bool(verbs) or bool(said & STAGE_NOUNS and "run" in said)


def _loads_a_model(value: cst.BaseExpression) -> bool:
    """Say whether an expression loads a model from a checkpoint (``X.from_pretrained(p).to(d)``)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        attribute = value.func
        if attribute.attr.value == "from_pretrained":
            loader = last_name(attribute.value)
            return bool(loader) and not set(words(loader)) & NOT_MODELS
        if attribute.attr.value not in PASSED_ON:
            return False
        value = attribute.value
    return False
