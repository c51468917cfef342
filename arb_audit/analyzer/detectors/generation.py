"""Generation with a model or a hosted LLM, outside any trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    GENERATION_METHODS,
    GENERATION_WORDS,
    data_generator,
    is_generation,
    is_generation_helper,
    is_http_post,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import cached_by_name, words
from arb_audit.analyzer.names import literal_text

GENERATION_ENGINES = frozenset({"vllm.LLM", "vllm.AsyncLLMEngine", "sglang.Engine", "transformers.pipeline"})
"""Constructors of inference engines."""
ENGINE_LAST = frozenset(q.rsplit(".", 1)[-1] for q in GENERATION_ENGINES)
CLIENTS = ("openai.", "anthropic.", "aiohttp.ClientSession", "litellm.", "httpx.AsyncClient")
"""Hosted-LLM clients (and the HTTP clients that call OpenAI-compatible servers), by name prefix."""
CLIENT_PACKAGES = frozenset({"openai", "anthropic"})
"""A qualified name with one of these as a component (``llama_index.llms.openai.OpenAI``) is a client."""
ENDPOINTS = ("/v1/chat/completions", "/v1/completions", "/v1/responses", "/generate", "/api/chat")
"""Paths of OpenAI-compatible and inference servers (vLLM, SGLang, TGI, Ollama's ``/api/chat`` and
``/api/generate``)."""


@cached_by_name
def _engine_or_client(name: str) -> bool:
    """Say whether a qualified name is a generation engine or a hosted model's client (asked per call)."""
    return (
        name in GENERATION_ENGINES
        or name.startswith(CLIENTS)
        or bool(CLIENT_PACKAGES & set(name.split(".")[1:-1]))
    )


SERVED = "served"
"""Variant of a ``generation`` finding made in a function that answers an HTTP route: the file serves a
model to whatever asks (an OpenAI-compatible server), it neither evaluates nor makes data by itself."""
ROUTE_DECORATORS = frozenset({"post", "get", "route", "api_route", "websocket"})
"""Methods of a web app or router that register a function as an HTTP route's handler."""


def _answers_route(node: cst.FunctionDef) -> bool:
    """Say whether a function is registered as an HTTP route's handler (``@app.post("/v1/chat/...")``)."""
    for decorator in node.decorators:
        call = decorator.decorator
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in ROUTE_DECORATORS
            and call.args
            and isinstance(path := call.args[0].value, cst.SimpleString)
            and literal_text(path).startswith("/")
        ):
            return True
    return False


class Generation(RouteDetector):
    """Sampling text: ``model.generate``, vLLM, a pipeline, or a hosted LLM client.

    An HTTP POST in a file that names an inference endpoint (``/v1/chat/completions``, ``/generate``)
    is generation by a server. In a file that trains nothing, generation is evaluation or data
    generation (which one depends on whether the outputs are scored or written out as a dataset).
    """

    TRIGGERS = (
        "generate",
        ".sample(",
        ".sample_async(",
        "agent.step(",
        "agent.astep(",
        ".chat(",
        "create",
        "completion",
        "infer",
        "gpt",
        "llm",
        "claude",
        "gemini",
        "LLM",
        "pipeline",
        "sglang",
        "openai",
        "anthropic",
        "aiohttp",
        "litellm",
        "httpx",
        "distilabel",
        "synthetic_data_kit",
        "llama_index",
        "curator",
        "datadreamer",
        "/v1/",
        "/generate",
        "/api/chat",
    )

    VALID = (
        Valid("text = tokenizer.decode(ids)\ntexts = decode_tokens(ids)\nbatch = decode_batch(ids)\n"),
        Valid("from utils import decode_prompt\nprint(decode_prompt(tok, ex['input_ids']))\n"),
        Valid("def generate_plot(xs, temperature=1.0):\n    pass\ngenerate_plot(xs, temperature=0.5)\n"),
        Valid("import random\nrandom.sample(corpus, 3)\nrng.sample(pool, 2)\n"),
        Valid("import vllm\n"),
        Valid("agent.step()\nobs = env.step(action)\n"),
        Valid(
            "def generate_ground_truth_response(p):\n    return p[::-1]\ngenerate_ground_truth_response(x)\n"
        ),
        Valid("class DigitCompletion:\n    pass\ntask = DigitCompletion(max_number=20)\n"),
        Valid("reply = bot.chat(message)\nsession.chat(text)\n"),
        Valid("text = 'model.generate(x)'\n"),
        Valid("import torch\nwith torch.inference_mode():\n    y = f(x)\n"),
        Valid("from accelerate import infer_auto_device_map\ninfer_auto_device_map(model)\n"),
        Valid("engine = Policy.load_inference(path)\npolicy.prepare_for_lp_inference()\n"),
    )
    INVALID = (
        Invalid("outputs = model.generate(**inputs, max_new_tokens=64)\n", "generation"),
        Invalid(
            "from bespokelabs import curator\nclass Reasoner(curator.LLM):\n"
            "    def prompt(self, row):\n        return row['problem']\n"
            "ds = Reasoner(model_name='deepseek-reasoner')(ds)\n",
            "generation",
        ),
        Invalid("response, history = model.chat(tokenizer, question, history=None)\n", "generation"),
        Invalid("import utils\nresults = utils.openai_completion(prompts, decoding_args)\n", "generation"),
        Invalid("results = make_gpt3_requests(engine, prompts, max_tokens=1024)\n", "generation"),
        Invalid(
            "responses, price = create_test_cases_using_gpt(programs, model='gpt-4o-mini')\n", "generation"
        ),
        Invalid("scores = client.infer_batch(batch)\n", "generation"),
        Invalid(
            "from threading import Thread\nThread(target=self.model.generate, kwargs=gen_kwargs).start()\n",
            "generation",
        ),
        Invalid(
            "from fastapi import FastAPI\napp = FastAPI()\ndef predict(p):\n"
            "    return model.generate(**tok(p))\n"
            "@app.post('/v1/completions')\nasync def complete(r):\n    return predict(r.prompt)\n",
            "generation",
            None,
            SERVED,
        ),
        Invalid(
            "from utils import generate_with_references\n"
            "out = generate_with_references(model=m, messages=ms, temperature=0.7, max_tokens=512)\n",
            "generation",
        ),
        Invalid(
            "from alpaca_farm.inference import decode\n"
            "outs = decode.decode_prompts_with_huggingface(p, prompts)\n",
            "generation",
        ),
        Invalid(
            "result = await sampling_client.sample_async(prompt=p, num_samples=1, sampling_params=sp)\n",
            "generation",
        ),
        Invalid("answer = await instructor.generate_response(prompt, temperature=0.7)\n", "generation"),
        Invalid("response = self.reason_agent.step(prompt)\n", "generation"),
        Invalid(
            "request = client.chat_completions if chat else client.dispatch_completions\n"
            "responses = await request(prompts, n=4)\n",
            "generation",
        ),
        Invalid(
            "reply = client.models.generate_content(model='gemini-2.5-pro', contents=msgs)\n", "generation"
        ),
        Invalid("from vllm import LLM\nllm = LLM(model='m')\n", "generation"),
        Invalid(
            "from openai import OpenAI\nclient = OpenAI()\n"
            "client.chat.completions.create(model='x', messages=m)\n",
            "generation",
        ),
        Invalid(
            "from transformers import pipeline\nBUILDERS = {'default': pipeline}\n"
            "pipe = BUILDERS[name]('text-classification', model=m)\n",
            "generation",
        ),
        Invalid(
            "import requests\ndef ask(p, url='http://localhost:11434/api/chat'):\n"
            "    return requests.post(url, json={'messages': p})\n",
            "generation",
        ),
        Invalid(
            "import requests\nurl = f'http://localhost:{port}/v1/chat/completions'\n"
            "reply = requests.post(url, json={'messages': m})\n",
            "generation",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.serving = False
        """Whether a function of the file answers an HTTP route (``@app.post("/v1/completions")``): the
        file is a server, and what it generates it generates for whoever asks."""
        self.endpoint = False
        self.posts: list[tuple[cst.Call, cst.CSTNode | None]] = []
        self.requesters: set[str] = set()
        """Names bound to a client's method named for asking a model (``fn = client.chat_completions``)."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.serving = self.serving or _answers_route(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        choices = [value.body, value.orelse] if isinstance(value, cst.IfExp) else [value]
        if any(isinstance(c, cst.Attribute) and GENERATION_WORDS & set(words(c.attr.value)) for c in choices):
            self.requesters |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.endpoint = self.endpoint or any(e in node.value for e in ENDPOINTS)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self.endpoint = self.endpoint or any(e in node.value for e in ENDPOINTS)

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.endpoint and self.posts:
            node, statement = self.posts[0]
            self.report(node, "generation", "posts to an inference server's endpoint", statement=statement)
        if self.serving:
            for finding in self.context.findings:
                if finding.detector == "Generation" and finding.variant is None:
                    finding.variant = SERVED

    def visit_Arg(self, node: cst.Arg) -> None:
        value = node.value
        if isinstance(value, cst.Attribute) and value.attr.value in GENERATION_METHODS:
            # a model's generate handed on to be run (``Thread(target=model.generate, kwargs=kw)`` to
            # stream its tokens, ``pool.submit(llm.generate, prompts)``)
            self.report(value, "generation", f"hands on {value.attr.value} to run")
            return
        self._engine_value(value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._engine_value(node.value)

    def _engine_value(self, value: cst.BaseExpression) -> None:
        """Report an engine handed on as a value (``{"builder": pipeline}``, ``run(pipeline)``)."""
        last = (
            value.value
            if isinstance(value, cst.Name)
            else value.attr.value
            if isinstance(value, cst.Attribute)
            else None
        )
        if last in ENGINE_LAST:  # only these few names need resolving
            for name in self.names(value) & GENERATION_ENGINES:
                self.report(value, "generation", f"hands on {name} to build a model")
                return

    def visit_Call(self, node: cst.Call) -> None:
        names = self.names(node.func)
        if is_http_post(node, names):
            self.posts.append((node, self.context.statements[-1] if self.context.statements else None))
        if is_generation(node, self.names):
            self.report(node, "generation", "samples text")
            return
        if is_generation_helper(node, self.names):
            self.report(node, "generation", "calls a helper named for asking a model for text")
            return
        if isinstance(node.func, cst.Name) and node.func.value in self.requesters:
            self.report(node, "generation", f"calls {node.func.value}, a client's method asking for text")
            return
        for name in names:
            if _engine_or_client(name):
                self.report(node, "generation", f"uses {name}")
                return
        if (library := data_generator(names, self.context.resolver.ancestry)) is not None:
            self.report(node, "generation", f"uses {library}")
