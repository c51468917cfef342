"""A trained model loaded from its checkpoint and run on inputs, with nothing saved: inference."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name

NOT_MODELS = frozenset(
    {"tokenizer", "config", "processor", "extractor", "configuration", "vocab", "template", "dataset"}
)
"""Words of a class whose ``from_pretrained`` loads no model (``AutoTokenizer``, ``GenerationConfig``,
``AutoImageProcessor``)."""
PASSED_ON = frozenset({"to", "cuda", "eval", "half", "float", "bfloat16", "requires_grad_", "cpu"})
"""Methods chained after loading that hand the same model back (``.to(device).eval()``)."""
RUNNING_WORDS = frozenset(
    {
        *("generate", "generation", "sample", "sampling", "inference", "predict", "prediction"),
        *("predictions", "score", "scores", "scoring", "forward", "decode", "decoding", "chat", "respond"),
        *("answer", "logprob", "logprobs", "logits", "perplexity", "ppl", "embed", "encode", "evaluate"),
        *("eval", "evaluation", "log", "prob", "probs"),
    }
)
"""Words of a helper that runs the model it is handed (``sequence_log_prob(ref_model, ids)``,
``jacobi_generate(inputs, model, tok)``): one with none of them may only wrap, move or inspect it
(``infer_auto_device_map(model)`` infers where its layers go)."""
MODEL_METHODS = frozenset({"forward", "generate", "chat", "stream_chat", "score"})
"""A loaded model's methods that run it on inputs."""
SAVING = frozenset(
    {
        *("save_pretrained", "save_model", "save", "save_file", "save_state_dict", "push_to_hub"),
        *("export", "trace", "script", "save_checkpoint", "merge_and_unload"),
    }
)
"""Calls that write or convert a model (or any tensors): a file that makes one converts, exports or
saves; what it runs on the way is no evaluation."""
TRAINING_MODE = frozenset({"train", "backward", "step", "zero_grad"})
"""A loaded model's (or anything's) methods that train: such a file is read by its gradient steps."""


class LoadedModelRun(RouteDetector):
    """A model loaded with ``from_pretrained`` and then run on inputs, in a file that saves nothing.

    Called itself (``model(ids)``, ``model.forward``, ``model.generate``) or handed to a helper named
    for running it (``sequence_log_prob(ref_model, ids)``, ``jacobi_generate(x, model, tok)``), with
    no ``no_grad`` around it: the model's outputs are computed and nothing is trained here (a file
    with a gradient step is read by its steps). A file that saves, exports, traces or folds a model
    converts it; a tokenizer, config or processor loaded is no model; a model only built, moved or
    handed to a constructor (a trainer's) is not run here.
    """

    TRIGGERS = ("from_pretrained",)

    VALID = (
        Valid("tok = AutoTokenizer.from_pretrained('m')\nids = tok('hi')\n"),
        # exported for serving: a conversion
        Valid(
            "import torch\nmodel = AutoModel.from_pretrained(p).eval()\n"
            "traced = torch.jit.trace(model, example)\ntraced.save('model.pt')\n"
        ),
        # handed to a trainer that is built here: not run by this file
        Valid("model = AutoModelForCausalLM.from_pretrained(p)\ntrainer = MyTrainer(model=model)\n"),
        # a model prepared for training elsewhere
        Valid(
            "def load(p):\n    model = AutoModelForCausalLM.from_pretrained(p)\n"
            "    model = get_peft_model(model, config)\n    return model\n"
        ),
        # trained in the file
        Valid(
            "model = AutoModelForCausalLM.from_pretrained(p)\nmodel.train()\n"
            "out = model(**batch)\nout.loss.backward()\n"
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
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.loaded: set[str] = set()
        """Names bound to a model loaded from its checkpoint."""
        self.runs: list[tuple[cst.Call, cst.CSTNode | None, str]] = []
        """Calls that may run one: (the call, its statement, the name it runs), decided at the end."""
        self.saves = False
        """Whether the file saves, exports or trains anything."""

    def visit_Assign(self, node: cst.Assign) -> None:
        if not _loads_a_model(node.value):
            return
        for target in node.targets:
            element: cst.BaseExpression = target.target
            if type(element) is cst.Tuple and element.elements:
                element = element.elements[0].value  # (``model, tok = FastLanguageModel.from_pretrained``)
            if type(element) is cst.Name:
                self.loaded.add(element.value)

    def visit_Call(self, node: cst.Call) -> None:
        name = last_name(node.func)
        if name in SAVING or name in TRAINING_MODE:
            self.saves = True
            return
        statement = self.context.statements[-1] if self.context.statements else None
        func = node.func
        if type(func) is cst.Name:
            self.runs.append((node, statement, func.value))
            if set(words(func.value)) & RUNNING_WORDS:
                self.runs.extend(
                    (node, statement, a.value.value) for a in node.args if type(a.value) is cst.Name
                )
        elif type(func) is cst.Attribute and type(func.value) is cst.Name and name in MODEL_METHODS:
            self.runs.append((node, statement, func.value.value))

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.saves:
            return
        for call, statement, name in self.runs:
            if name in self.loaded:
                self.report(
                    call, "inference", f"runs {name}, a model loaded from its checkpoint", statement=statement
                )
                return


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
