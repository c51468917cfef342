"""A sampling engine that takes in the policy's weights as it trains: the rollout side of RL."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import method
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

ROLLOUT = "rollout"
"""Variant of a ``generation`` finding in a file whose sampling engine is handed the policy's weights
while it runs (:class:`PolicyWeights`): its samples are a training loop's rollouts, not answers."""

WEIGHT_RECEIVERS = frozenset(
    {"update_weights_from_tensor", "update_weights_from_distributed", "init_weights_update_group"}
)
"""SGLang engine methods that take in a trainer's tensors (or open the group they are broadcast over)."""
SAMPLING_CALLS = frozenset({"generate", "async_generate", "generate_async", "agenerate", "SamplingParams"})
"""Calls of a sampling engine: what makes a file that takes in weights sample with them."""
ENGINE_PACKAGES = ("vllm.", "sglang.")
"""Packages of sampling engines: a file building one (``vllm.LLM``, vLLM's OpenAI server) samples with it."""


def _tensors_by_name(call: cst.Call) -> bool:
    """Say whether ``load_weights`` is handed (name, tensor) pairs, vLLM's form, not a file's path.

    ``model.load_weights(weights=[(name, w)])``, ``load_weights(state_dict.items())``: a trainer's
    tensors put into the engine's model; Keras' ``model.load_weights("ckpt.h5")`` reads a checkpoint.
    """
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "weights":
            return True
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    return (type(first) is cst.Call and method(first) == "items") or isinstance(
        first, cst.List | cst.Tuple | cst.GeneratorExp | cst.ListComp
    )


class PolicyWeights(RouteDetector):
    """A file that samples with an engine into which a trainer's weights are loaded as they change.

    vLLM's ``model_runner.model.load_weights(weights=[(name, tensor)])`` (also through a worker
    extension that receives them broadcast), ``collective_rpc("update_weight", ...)``, SGLang's
    ``update_weights_from_tensor``/``update_weights_from_distributed``: a rollout worker or a weight-
    synced server of on-policy RL. Its generation is the training loop's sampling (TAXONOMY.md: a
    component of the RL stage), reported as ``generation`` of variant :data:`ROLLOUT`, only where the
    file also samples.
    """

    TRIGGERS = ("load_weights", "update_weights", "weights_update_group", "collective_rpc")

    VALID = (
        # a checkpoint read from disk and loaded once, to look at its generations: no policy training
        Valid(
            "import torch\nfrom vllm import LLM, SamplingParams\nllm = LLM(model=m)\nsd = torch.load(ckpt)\n"
            "model = llm.llm_engine.model_executor.driver_worker.model_runner.model\n"
            "model.load_weights(sd.items())\nprint(llm.generate(prompts, SamplingParams(temperature=0)))\n"
        ),
        # Keras reads a checkpoint file into a model
        Valid("model.load_weights('ckpt.h5')\nout = model.generate(x)\n"),
        # weights taken in, nothing sampled here
        Valid("def sync(engine, sd):\n    engine.model.load_weights(weights=sd.items())\n"),
        # an RPC naming no weights
        Valid("llm.collective_rpc('report_memory')\nouts = llm.generate(prompts, SamplingParams(n=4))\n"),
    )
    INVALID = (
        Invalid(
            "from vllm import AsyncLLMEngine, SamplingParams\nclass Worker:\n"
            "    def update_weights(self, new_state_dict):\n"
            "        m = self.llm.engine.model_executor.driver_worker.model_runner.model\n"
            "        m.load_weights(new_state_dict.items())\n"
            "    async def inference(self, p):\n"
            "        return self.llm.generate(p, SamplingParams(n=8), request_id=i)\n",
            "generation",
            variant=ROLLOUT,
        ),
        Invalid(
            "class WeightSyncWorkerExtension:\n    def update_named_param(self, name, dtype, shape):\n"
            "        weight = torch.empty(shape, dtype=dtype)\n        self.comm.broadcast(weight, src=0)\n"
            "        self.model_runner.model.load_weights(weights=[(name, weight)])\n"
            "outputs = llm.generate(prompts, sampling_params=params)\n",
            "generation",
            variant=ROLLOUT,
        ),
        # vLLM's OpenAI-compatible server, its worker extension taking broadcast weights
        Invalid(
            "from vllm.entrypoints.openai.api_server import build_app\nclass Ext:\n"
            "    def update_named_param(self, name, weight):\n"
            "        self.model_runner.model.load_weights(weights=[(name, weight)])\napp = build_app(args)\n",
            "generation",
            variant=ROLLOUT,
        ),
        Invalid(
            "def sync(llm, name, dtype, shape):\n"
            "    llm.collective_rpc('update_weight', args=(name, dtype, shape))\n"
            "outs = llm.generate(prompts)\n",
            "generation",
            variant=ROLLOUT,
        ),
        Invalid(
            "def push(engine, named_tensors):\n    engine.update_weights_from_tensor(named_tensors)\n"
            "outs = engine.generate(prompts, params)\n",
            "generation",
            variant=ROLLOUT,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.received: tuple[cst.Call, cst.CSTNode | None] | None = None
        """The first call that takes weights into the engine, with its statement."""
        self.samples = False

    def visit_Call(self, node: cst.Call) -> None:
        name = method(node) or last_name(node.func)
        if name in SAMPLING_CALLS or any(q.startswith(ENGINE_PACKAGES) for q in self.names(node.func)):
            self.samples = True
        if self.received is not None:
            return
        if (
            name in WEIGHT_RECEIVERS
            or (name == "load_weights" and _tensors_by_name(node))
            or (
                name == "collective_rpc"
                and node.args
                and type(node.args[0].value) is cst.SimpleString
                and "weight" in (literal_text(node.args[0].value) or "")
            )
        ) and self._handed_in(node):
            self.received = (node, self.context.statements[-1] if self.context.statements else None)

    def _handed_in(self, call: cst.Call) -> bool:
        """Say whether what a call loads reaches it through its function's parameters.

        A trainer hands the weights to a worker's method (``def update_weights(self, state_dict)``,
        ``def update_named_param(self, name, dtype, shape)``); a script that reads a checkpoint from
        disk and loads it into the engine once, to look at its outputs, takes in no policy as it trains.
        """
        function = next((s for s in reversed(self.context.statements) if type(s) is cst.FunctionDef), None)
        if function is None:
            return False
        params = function.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} - {
            "self",
            "cls",
        }
        return any(
            type(n) is cst.Name and n.value in names
            for a in call.args
            for n in (a.value, *descendants(a.value))
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.received is not None and self.samples:
            node, statement = self.received
            message = "samples with an engine into which the policy's weights are loaded as it trains"
            self.report(node, "generation", message, statement=statement, variant=ROLLOUT)
