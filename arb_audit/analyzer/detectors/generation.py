"""Generation with a model or a hosted LLM, outside any trainer."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    GENERATION_METHODS,
    GENERATION_WORDS,
    asks_helper,
    data_generator,
    delegates,
    generates,
    is_http_post,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.loss_slice import cached_by_name, words
from arb_audit.analyzer.names import either, last_name, literal_text
from arb_audit.analyzer.walk import descendants

GENERATION_ENGINES = frozenset({"vllm.LLM", "vllm.AsyncLLMEngine", "sglang.Engine", "transformers.pipeline"})
"""Constructors of inference engines."""
ENGINE_LAST = frozenset(q.rsplit(".", 1)[-1] for q in GENERATION_ENGINES)
CLIENTS = ("openai.", "anthropic.", "aiohttp.ClientSession", "litellm.", "httpx.AsyncClient")
"""Hosted-LLM clients (and the HTTP clients that call OpenAI-compatible servers), by name prefix."""
CLIENT_PACKAGES = frozenset({"openai", "anthropic"})
"""A qualified name with one of these as a component (``llama_index.llms.openai.OpenAI``) is a client."""
ENDPOINTS = ("/chat/completions", "/v1/completions", "/v1/responses", "/generate", "/api/chat")
"""Paths of OpenAI-compatible and inference servers (vLLM, SGLang, TGI, Ollama's ``/api/chat`` and
``/api/generate``; ``{BASE_URL}/chat/completions`` where the base holds the version)."""


HOSTED_WORDS = (("open", "ai"), ("anthropic",))
"""Words of a hosted model's provider in a class's name (``ChatOpenAI``, ``OpenAIServerModel``)."""
CLIENT_ENDINGS = frozenset({"ai", "anthropic", "model", "client", "llm", "chat"})
"""Last words of such a class that asks the provider's model (not ``OpenAIConfig``, a setting)."""


@cached_by_name
def _engine_or_client(name: str) -> bool:
    """Say whether a qualified name is a generation engine or a hosted model's client (asked per call).

    Agent and chain libraries wrap the clients in classes of their own named for the provider
    (LangChain's ``ChatOpenAI``, smolagents' ``OpenAIServerModel``, a project's ``engines.ChatOpenAI``).
    """
    if name in GENERATION_ENGINES or name.startswith(CLIENTS) or CLIENT_PACKAGES & set(name.split(".")[1:-1]):
        return True
    last = name.rsplit(".", 1)[-1]
    said = words(last)
    return (
        "." in name
        and last[:1].isupper()
        and bool(said)
        and said[-1] in CLIENT_ENDINGS
        and any(said[i : i + len(w)] == w for w in HOSTED_WORDS for i in range(len(said)))
    )


MODEL_BASES = (
    *("transformers.PreTrainedModel", "transformers.modeling_utils.PreTrainedModel", "GenerationMixin"),
    *("torch.nn.Module", "torch.nn.modules.module.Module"),
)
"""Ends of the qualified names of model classes' bases (transformers', torch's)."""
SERVED = "served"
"""Variant of a ``generation`` finding made in a function that answers an HTTP route, in a function it
calls, in building the model such functions answer with, or in building vLLM's server: the file serves a
model to whatever asks (an OpenAI-compatible server), it neither evaluates nor makes data by itself."""
ROUTE_DECORATORS = frozenset({"post", "get", "route", "api_route", "websocket"})
"""Methods of a web app or router that register a function as an HTTP route's handler."""


def _answers_route(node: cst.FunctionDef) -> bool:
    """Say whether a function is registered as an HTTP route's handler (``@app.post("/v1/chat/...")``)."""
    for decorator in node.decorators:
        call = decorator.decorator
        if (
            type(call) is cst.Call
            and type(call.func) is cst.Attribute
            and call.func.attr.value in ROUTE_DECORATORS
            and call.args
            and isinstance(path := call.args[0].value, cst.SimpleString)
            and literal_text(path).startswith("/")
        ):
            return True
    return False


SERVERS = ("vllm.entrypoints.", "sglang.srt.entrypoints.")
"""Modules whose functions build an inference server (vLLM's OpenAI-compatible API server)."""
RUNNERS = frozenset(
    {
        "submit",
        "run_in_executor",
        "partial",
        "map",
        "starmap",
        "imap",
        "imap_unordered",
        "apply_async",
        "to_thread",
    }
)
"""Calls that run the function given first (or as ``target=``) with the arguments that follow."""


def run_generate(node: cst.Call) -> cst.Attribute | None:
    """Return a model's ``generate`` a call hands on to be run, if it does.

    ``Thread(target=model.generate, ...)``, ``pool.submit(llm.generate, prompts)``; a signature read or
    a wrapper's ``functools.wraps(model.generate)`` runs nothing.
    """
    runner = last_name(node.func)
    at = 1 if runner == "run_in_executor" else 0  # (its first argument is the executor)
    for index, arg in enumerate(node.args):
        value = arg.value
        if (
            type(value) is cst.Attribute
            and value.attr.value in GENERATION_METHODS
            and (
                (arg.keyword is not None and arg.keyword.value == "target")
                or (runner in RUNNERS and index == at)
            )
        ):
            return value
    return None


ANSWERING_VERBS = frozenset(
    {"chat", "ask", "respond", "reply", "answer", "generate", "complete", "converse", "talk"}
)
"""First words of a method that answers a message it is handed (``bot.respond(message)``)."""
MODEL_PACKAGES = frozenset(
    {
        *("torch", "transformers", "vllm", "mlx", "mlx_lm", "openai", "anthropic", "llama_cpp", "peft"),
        *("unsloth", "sglang", "ollama", "litellm", "jax", "tensorflow", "gpt4all", "ctransformers"),
        *("langchain", "langchain_openai", "langchain_community", "llama_index", "dashscope", "zhipuai"),
        *("mistralai", "groq", "cohere", "together", "huggingface_hub", "optimum", "onnxruntime"),
        *("deepspeed", "bert4torch", "fastchat", "lmdeploy", "exllamav2", "modelscope", "google"),
    }
)
"""Packages a file imports when it runs a model (a chat loop's object answers with one)."""


def _cleaned(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return what a chain of method calls starts from (``input("> ").strip()`` -> ``input("> ")``)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute:
        value = value.func.value
    return value


def _typed(value: cst.BaseExpression) -> bool:
    """Say whether an expression is what the user types at the prompt: ``input(...)``, maybe cleaned."""
    value = _cleaned(value)
    return type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "input"


def _methods(module: cst.Module) -> set[str]:
    """Return the names of the methods the classes of a module define."""
    return {
        f.name.value
        for c in descendants(module)
        if type(c) is cst.ClassDef and type(c.body) is cst.IndentedBlock
        for f in c.body.body
        if type(f) is cst.FunctionDef
    }


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
        "OpenAI",
        "Anthropic",
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
        "sampler(",
        "generator(",
        "chatbot(",
        "temperature",  # (a helper named for an API or a request, handed how to sample)
        "max_new_tokens",  # (a project's helper handed the model and how much to sample)
        "max_tokens",
        "num_samples",
        "client.",  # (a chat conversation written out, handed to a client)
        "input(",  # (what a user types, handed to what answers it)
        "messages",  # (a chat model's wrapper handed the conversation: ``model(messages)``)
        # (a helper named for the answers it returns, handed the model and the prompts)
        *("_responses(", "_completions(", "_answers(", "_replies(", "_generations("),
    )

    VALID = (
        # a model definition's chat helper sampling with the model itself (a vendored modeling file)
        Valid(
            "from transformers import PreTrainedModel\nclass GLMForGeneration(PreTrainedModel):\n"
            "    @torch.no_grad()\n    def chat(self, tokenizer, query, **kw):\n"
            "        outputs = self.generate(**tokenizer([query], return_tensors='pt'), **kw)\n"
            "        return tokenizer.decode(outputs[0])\n"
        ),
        # the right completion written out from the target, given, not asked for
        Valid("from .rewards import target_completion\nchosen = target_completion(target)\n"),
        # a forward pass on token ids, and a reward model scoring a conversation: no text sampled
        Valid("logits = model(prompt_ids)\nout = model(**inputs)\nscore = reward_model(messages)\n"),
        # a teacher-forced forward pass on a tokenised chat, a guard model moderating one, a function
        # picking a model for it, a remote setter handed sampling settings: no text sampled
        Valid(
            "out = model(tokenized_chat, labels=tokenized_chat)\nverdict = guard_model(messages)\n"
            "name = select_model(messages)\nengine.set_sampling_params.remote(sampling_params=sp)\n"
            "engine.update_sampling_params.remote(sampling_params)\n"
            "engine.apply_sampling_params.remote(sampling_params)\n"
            "handle = workers.VLLMWorker.remote(model_path, sampling_params)\n"
        ),
        # a helper named for responses handed no model: what it reads back was generated elsewhere
        Valid("from io_utils import get_responses\nouts = get_responses(prompts=prompts, path=p)\n"),
        # a rule's checker called a judge, handed code and tests (no prompt)
        Valid("from sandbox import run_judge\nresult = run_judge(code, tests, timeout=10)\n"),
        # settings, statistics or data queried with a sampling-like keyword
        Valid("from api import get_api_config\ncfg = get_api_config(temperature=0.2)\n"),
        # a test double standing in for an inference client
        Valid("from .mocks import MockInferenceClient\ninference = MockInferenceClient()\n"),
        Valid("from index import query_dataset\nrows = query_dataset(idx, temperature=0.5)\n"),
        # a model object's request with no prompt handed is no question
        Valid("status = llm.request(endpoint='/health')\nhit = llm_cache.query(prompt=p)\n"),
        # a client keeping, sending or measuring a conversation; a conversation handed to no client
        Valid(
            "db_client.insert_many([{'role': 'user', 'content': q}])\n"
            "n = client.count_tokens([{'role': 'user', 'content': q}])\n"
            "queue_client.send([{'role': 'user', 'content': q}])\n"
            "langfuse_client.trace(input=[{'role': 'user', 'content': q}])\n"
            "text = tokenizer.apply_chat_template([{'role': 'user', 'content': q}], tokenize=False)\n"
        ),
        # a softmax's temperature handed to a helper named for no request; a class of this file
        Valid("from losses import kd_loss\nloss = kd_loss(s, t, temperature=2.0)\n"),
        Valid("def query_api(x, temperature):\n    return x\n\nquery_api(1, temperature=0.5)\n"),
        Valid("from liger_kernel.utils import infer_device\ndevice = infer_device()\n"),
        Valid("from data.utils import infer_db_path\nrow = {'db_path': infer_db_path(raw_dir, db_id)}\n"),
        Valid(
            "from utils import infer_special_token_sequences\n"
            "ids = infer_special_token_sequences(tokenizer)\n"
        ),
        Valid(
            "class WithValueHead(nn.Module):\n    def generate(self, *args, **kwargs):\n"
            "        return self.pretrained_model.generate(*args, **kwargs)\n"
        ),
        Valid(
            "import functools, inspect\nprint(inspect.signature(model.generate))\n"
            "@functools.wraps(model.generate)\ndef patched(*a, **k):\n    return None\n"
        ),
        Valid("text = tokenizer.decode(ids)\ntexts = decode_tokens(ids)\nbatch = decode_batch(ids)\n"),
        Valid("indices = list(sampler(dataset))\nbatch = batch_sampler(indices)\n"),
        Valid("batches = data_generator(train_dataset, batch_size=8)\nx = generator(seed_config)\n"),
        Valid("text = generator(sample['prompt'], persona='a student')\nt = text_generator(raw['prompt'])\n"),
        Valid(
            "sampler = build_sampler(prompts)\nllm = make_llm(prompt_config)\n"
            "s = DistributedSampler(prompts_dataset)\nt = sampler(prompts_dataset)\n"
        ),
        Valid("from utils import decode_prompt\nprint(decode_prompt(tok, ex['input_ids']))\n"),
        Valid("def generate_plot(xs, temperature=1.0):\n    pass\ngenerate_plot(xs, temperature=0.5)\n"),
        Valid("from .plots import generate_report\ngenerate_report(rows, params, 1)\n"),
        Valid(
            "from kd import generate_soft_labels\nsoft = generate_soft_labels(teacher(x), temperature=4.0)\n"
            "from data import generate_dataset\nds = generate_dataset(n=1000, noise=0.1, temperature=0.5)\n"
        ),
        Valid("import random\nrandom.sample(corpus, 3)\nrng.sample(pool, 2)\n"),
        Valid("import vllm\n"),
        Valid("from myproj.settings import OpenAIConfig\ncfg = OpenAIConfig(key=k)\n"),
        Valid("from gen import generate\nout = generate(model_config, temperature=0.5)\n"),
        Valid("agent.step()\nobs = env.step(action)\n"),
        Valid(
            "def generate_ground_truth_response(p):\n    return p[::-1]\ngenerate_ground_truth_response(x)\n"
        ),
        Valid("class DigitCompletion:\n    pass\ntask = DigitCompletion(max_number=20)\n"),
        Valid("reply = bot.chat(message)\nsession.chat(text)\n"),
        # what a user types, handed to what keeps, parses or runs it
        Valid("cmd = input('> ')\nhistory.append(cmd)\nparser.parse(cmd)\nrunner.run(cmd)\n"),
        Valid(
            "import re\nclass Converter:\n    def respond(self, q):\n        return re.sub('a', 'b', q)\n"
            "print(Converter().respond(input('> ')))\n"
        ),
        Valid("text = 'model.generate(x)'\n"),
        Valid("import torch\nwith torch.inference_mode():\n    y = f(x)\n"),
        Valid("from accelerate import infer_auto_device_map\ninfer_auto_device_map(model)\n"),
        Valid("engine = Policy.load_inference(path)\npolicy.prepare_for_lp_inference()\n"),
        # a model asked whether it can generate, or for a mask; a client storing a conversation
        Valid("if model.can_generate():\n    mask = model.generate_square_subsequent_mask(8)\n"),
        Valid("vectors = model.generate_embeddings(prompts)\n"),
        Valid("hidden = model.generate_hidden_states(prompts)\n"),  # (prompts handed: no conversation)
        Valid("store_client.save(messages)\nclient.send(trajectory.messages)\n"),
        # a model handed with a temperature only (a distillation loss's), or a length with no model
        Valid("from kd import distill_loss\nloss = distill_loss(model=student, temperature=2.0)\n"),
        Valid("from data import pad_batch\nbatch = pad_batch(rows, max_new_tokens=64)\n"),
    )
    INVALID = (
        # a DSPy program's predictor held as self.generate asks an LLM (a DSPy Module is no model)
        Invalid(
            "import dspy\nclass Answer(dspy.Module):\n    def __init__(self):\n"
            "        self.generate = dspy.ChainOfThought('question -> answer')\n"
            "    def forward(self, question):\n        return self.generate(question=question)\n",
            "generation",
        ),
        # an imported helper asking a judge with a prompt
        Invalid(
            "from ace_scoring.llm import call_judge\ndef grade(criterion, response):\n"
            "    prompt = TEMPLATE.format(criterion=criterion, response=response)\n"
            "    return parse_json(call_judge(prompt))\n",
            "generation",
        ),
        Invalid(
            # a project's client asked with a batch of conversations written out
            "from matharena.api_client import APIClient\nclient = APIClient(**config)\n"
            "for _, conversation, cost in client.run_queries([[{'role': 'user', 'content': prompt}]]):\n"
            "    print(conversation)\n",
            "generation",
        ),
        Invalid(
            # simple-evals' sampler objects: called with the conversation, they return the reply
            "def fn(row):\n    prompt_messages = [pack(row['Question'])]\n"
            "    response_text = sampler(prompt_messages)\n    return grade(response_text)\n",
            "generation",
        ),
        Invalid("reply = sampler([{'role': 'user', 'content': q}])\n", "generation"),
        # a model's own generation method of another name (remote code, a research model)
        Invalid("out = model.mmu_generate(image_tokens, input_ids=question_ids)\n", "generation"),
        # (a model's method named for what it writes, handed a sampling setting)
        Invalid("obj = model.generate_comment(build_msgs(rec), max_completion_tokens=512)\n", "generation"),
        Invalid("comment = model.generate_comment(prompt_messages)\n", "generation"),
        # (names a model is asked for: the handed model and sampling setting decide)
        Invalid(
            "from utils import infer_names\nnames = infer_names(llm, papers, max_new_tokens=16)\n",
            "generation",
        ),
        Invalid("ids = self.policy.beam_generate(input_ids, num_beams=4)\n", "generation"),
        # a project's helper handed the model and how much to sample, whatever it is named for
        Invalid(
            "from pairs import build_dpo_pairs\npairs = build_dpo_pairs(model=model, max_new_tokens=512)\n",
            "generation",
        ),
        # an imported generate_* helper handed the model by name and how to sample
        Invalid(
            "from utils.generate import generate_env_profile\n"
            "profile = generate_env_profile(model_name=gen_model, temperature=0.5)\n",
            "generation",
        ),
        # a project's client asked with the conversation so far, by name
        Invalid("reply = client.complete(trajectory.messages, TOOL_SCHEMAS)\n", "generation"),
        Invalid("def run(self, generate_fn, prompts):\n    responses = generate_fn(prompts)\n", "generation"),
        Invalid("reply = self.sampler(messages=msgs)\n", "generation"),
        # a wrapper's method of the same name handing on what it built itself (its prompts tokenised),
        # not its own ``*args``/``**kwargs``: a generation of its own
        Invalid(
            "class InferencePipeline:\n    def generate(self, prompts, max_new_tokens=256):\n"
            "        inputs = self.tokenizer(prompts, return_tensors='pt')\n"
            "        options = {'max_new_tokens': max_new_tokens}\n"
            "        return self.model.generate(**inputs, **options)\n",
            "generation",
        ),
        # a project's chat-model wrapper answering a conversation
        Invalid("model = MLLM_Models(name)()\nraw_answer = model(messages)\n", "generation"),
        Invalid(
            "from utils import get_responses\n"
            "outs = get_responses(prompts=prompts, model_path=path, batch_size=32)\n",
            "generation",
        ),
        Invalid("out = generator(sample['prompt'], max_new_tokens=256)[0]['generated_text']\n", "generation"),
        Invalid("out = generator(sample['prompt'], **generator_kwargs)\n", "generation"),
        Invalid(
            "response = generator(system_prompt=principle, user_prompt=row['instruction'])\n", "generation"
        ),
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
        # a chat demo's loop: what the user types, handed to what replies
        Invalid(
            "import torch\nwhile True:\n    user_input = input('> ')\n    chat.chat(user_input.lower())\n",
            "generation",
        ),
        Invalid("print(bot.respond(input('You: ')))\n", "generation"),
        Invalid("from mlx_lm import load, generate\nout = generate(model, tok, prompt=p)\n", "generation"),
        Invalid(
            "from utils.streaming import generate_stream\n"
            "for text in generate_stream(model, tok, ids, generation_config=cfg):\n    print(text)\n",
            "generation",
        ),
        Invalid(
            "from threading import Thread\nThread(target=self.model.generate, kwargs=gen_kwargs).start()\n",
            "generation",
        ),
        Invalid("import asyncio\nout = await asyncio.to_thread(llm.generate, prompts)\n", "generation"),
        Invalid(
            "from vllm.entrypoints.openai.api_server import build_app\napp = build_app(args)\n",
            "generation",
            None,
            SERVED,
        ),
        Invalid(
            "from fastapi import FastAPI\napp = FastAPI()\ndef predict(p):\n"
            "    return model.generate(**tok(p))\n"
            "@app.post('/v1/completions')\nasync def complete(r):\n    return predict(r.prompt)\n",
            "generation",
            None,
            SERVED,
        ),
        # a helper named for an API or a request, handed how to sample
        Invalid(
            "from utils.parallel_utils import batch_get_api_merge\n"
            "batch_get_api_merge(examples=todo, eng=args.eng, temperature=0.7, max_try=8)\n",
            "generation",
        ),
        # a project's wrapper named for a hosted model, asked with a prompt
        Invalid(
            "from llm_oai import LLMs\nllm = LLMs(model='gpt-4', request_type='openai')\n"
            "result = llm.request(prompt=row['prompt'])\n",
            "generation",
        ),
        Invalid(
            "from utils import generate_with_references\n"
            "out = generate_with_references(model=m, messages=ms, temperature=0.7, max_tokens=512)\n",
            "generation",
        ),
        # the engine and its sampling settings handed in their places
        Invalid(
            "from .utils import generate_k_steps\n"
            "outs = generate_k_steps(convs, k, llm, sampling_params, 1)\n",
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
        # a remote engine's request handed vLLM's sampling settings by their name, in their place
        Invalid("llm.add_requests.remote(rank, sampling_params, prompt_token_ids=ids)\n", "generation"),
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
            "from langchain_openai import ChatOpenAI\nllm = ChatOpenAI(model='gpt-4o-mini', temperature=0)\n",
            "generation",
        ),
        Invalid(
            "from smolagents import OpenAIServerModel\nm = OpenAIServerModel(model_id='gpt-4o')\n",
            "generation",
        ),
        Invalid(
            "from generate import generate\nout = generate(model, ids, tok, steps=64, temperature=0.0)\n",
            "generation",
        ),
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
        Invalid(
            "import requests\nreply = requests.post(f'{BASE_URL}/chat/completions', json={'messages': m})\n",
            "generation",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.model_classes: dict[str, bool] = {}
        """The file's classes judged so far: whether each derives from a model base."""
        self.handlers: set[str] = set()
        """Functions that answer an HTTP route: what they, and what they call, generate is generated
        for whoever asks (the file serves a model)."""
        self.callees: dict[str, set[str]] = {}
        """Functions each function of the file calls, or hands to a runner (``run_in_executor(None, f)``)."""
        self.decorators: set[int] = set()
        """Calls that decorate a function (a route's registration is no request)."""
        self.where: dict[int, tuple[str, ...]] = {}
        """The functions around each generation finding of this detector, by the finding's id."""
        self.endpoint = False
        self.posts: list[tuple[cst.Call, cst.CSTNode | None, tuple[str, ...]]] = []
        """HTTP requests sent (call, statement, the functions around it)."""
        self.requesters: set[str] = set()
        """Names bound to a client's method named for asking a model (``fn = client.chat_completions``)."""
        self.typed: set[str] = set()
        """Names bound to what a user types at the prompt (``user_input = input("> ").strip()``)."""
        self.answered: list[tuple[cst.Call, cst.CSTNode | None, tuple[str, ...]]] = []
        """Calls of a method named for answering, handed what the user typed (decided at the end)."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # ``@app.post("/v1/completions")`` registers a handler: it posts nothing
        self.decorators |= {id(d.decorator) for d in node.decorators}
        if _answers_route(node):
            self.handlers.add(node.name.value)

    def _answers_typed(self, node: cst.Call) -> bool:
        """Say whether a method named for answering is handed what the user typed.

        A chat demo's loop hands each line typed at the prompt to the object that replies
        (``chat.chat(user_input)``, ``bot.respond(input("> "))``): whatever the object is, what answers a
        person's message in turn is a model.
        """
        if type(node.func) is not cst.Attribute or not any(self._typed_value(arg.value) for arg in node.args):
            return False
        said = words(node.func.attr.value)
        return bool(said) and said[0] in ANSWERING_VERBS

    def _typed_value(self, value: cst.BaseExpression) -> bool:
        """Say whether a value is what the user typed, maybe cleaned (``user_input.strip()``)."""
        root = _cleaned(value)
        return _typed(root) or (type(root) is cst.Name and root.value in self.typed)

    def _generates(
        self,
        node: cst.CSTNode,
        message: str,
        statement: cst.CSTNode | None = None,
        around: tuple[str, ...] | None = None,
        variant: str | None = None,
    ) -> None:
        """Report generation, and the functions around it (``around``: where a deferred one was seen)."""
        finding = self.report(node, "generation", message, statement, variant=variant)
        self.where[id(finding)] = tuple(self.enclosing()) if around is None else around

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if _typed(value):
            self.typed |= {t.target.value for t in node.targets if type(t.target) is cst.Name}
        if any(
            type(c) is cst.Attribute and GENERATION_WORDS & set(words(c.attr.value)) for c in either(value)
        ):
            self.requesters |= {t.target.value for t in node.targets if type(t.target) is cst.Name}

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.endpoint = self.endpoint or any(e in node.value for e in ENDPOINTS)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self.endpoint = self.endpoint or any(e in node.value for e in ENDPOINTS)

    def leave_Module(self, original_node: cst.Module) -> None:
        models = any(q.split(".", 1)[0] in MODEL_PACKAGES for q in self.context.resolver.imported)
        methods = _methods(original_node) if self.answered and not models else set()
        for node, statement, around in self.answered:
            if models or last_name(node.func) not in methods:
                # (a method this file defines, in a file that imports no model library, shows in its
                # body that it answers with a parser or a database)
                self._generates(node, "answers what the user types (a chat loop)", statement, around)
        if self.endpoint and self.posts:
            node, statement, around = self.posts[0]
            self._generates(node, "posts to an inference server's endpoint", statement, around)
        self._mark_served()

    def _mark_served(self) -> None:
        """Mark what route handlers generate, through the functions they call (a proxy's post too).

        Where they do, the model they answer with is built at module level or in ``__init__``
        (``client = OpenAI()``, ``self.llm = LLM(...)``): that is served as well.
        """
        served = set(self.handlers)
        pending = list(served)
        while pending:
            for callee in self.callees.get(pending.pop(), ()):
                if callee not in served:
                    served.add(callee)
                    pending.append(callee)
        mine = [f for f in self.context.findings if id(f) in self.where and f.variant is None]
        marked = [f for f in mine if served & set(self.where[id(f)])]
        for finding in marked:
            finding.variant = SERVED
        if marked:
            for finding in mine:
                around = self.where[id(finding)]
                if not around or around[-1] == "__init__":
                    finding.variant = SERVED

    def _models_own_api(self, node: cst.Call) -> bool:
        """Say whether a call is a model class's method sampling with itself (``self.generate(...)``).

        ``ChatGLMForConditionalGeneration.chat`` and ``stream_chat``: a model definition's helpers
        for whoever loads it, as ``generate`` is transformers'. The file defines a model; it neither
        evaluates nor makes data by itself. Only torch's and transformers' model bases: a DSPy
        ``Module``'s ``self.generate`` is a predictor asking an LLM.
        """
        func = node.func
        if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self"):
            return False
        around = self.enclosing()
        at = next((i for i in range(len(around) - 1, -1, -1) if around[i][:1].isupper()), None)
        if at is None:
            return False
        return self._model_class(".".join(around[: at + 1]))

    def _model_class(self, qualified: str) -> bool:
        """Say whether a class of the file derives from a model base, each class judged once.

        (Its bases first, through the file's own classes: a chain of thousands is read once, not
        once per class asking.)
        """
        bases = self.context.resolver.class_bases
        pending = [qualified]
        while pending:
            current = pending[-1]
            if current in self.model_classes:
                pending.pop()
                continue
            local = [b for b in bases.get(current, ()) if b in bases and b not in self.model_classes]
            if local and len(pending) <= len(bases):
                pending.extend(local)  # (judged first; a cycle is cut by the stack's bound)
                continue
            pending.pop()
            self.model_classes[current] = any(
                b.endswith(MODEL_BASES) or self.model_classes.get(b, False) for b in bases.get(current, ())
            )
        return self.model_classes[qualified]

    def visit_Arg(self, node: cst.Arg) -> None:
        self._engine_value(node.value)

    def visit_DictElement(self, node: cst.DictElement) -> None:
        self._engine_value(node.value)

    def _engine_value(self, value: cst.BaseExpression) -> None:
        """Report an engine handed on as a value (``{"builder": pipeline}``, ``run(pipeline)``)."""
        last = (
            value.value
            if type(value) is cst.Name
            else value.attr.value
            if type(value) is cst.Attribute
            else None
        )
        if last in ENGINE_LAST:  # only these few names need resolving
            for name in sorted(self.names(value) & GENERATION_ENGINES):
                self._generates(value, f"hands on {name} to build a model")
                return

    def visit_Call(self, node: cst.Call) -> None:
        if delegates(node, self.enclosing, self.context.statements):
            return  # a wrapper's pass-through (``def generate(self, *a, **kw)``): its callers generate
        caller = self.enclosing()
        if caller:
            # what each function calls or hands to a runner: a route handler's callees serve too
            found = self.callees.setdefault(caller[-1], set())
            found.add(last_name(node.func))
            found.update(last_name(a.value) for a in node.args if type(a.value) is cst.Name)
        if (run := run_generate(node)) is not None:
            # a model's generate handed on to be run (``Thread(target=model.generate, kwargs=kw)`` to
            # stream its tokens, ``pool.submit(llm.generate, prompts)``)
            self._generates(run, f"hands on {run.attr.value} to run")
            return
        names = self.names(node.func)
        if is_http_post(node, names) and id(node) not in self.decorators:
            statement = self.context.statements[-1] if self.context.statements else None
            self.posts.append((node, statement, tuple(self.enclosing())))
        if generates(self, node):
            if self._models_own_api(node):
                return  # (a model class's ``chat`` calling ``self.generate``: its users decide)
            self._generates(node, "samples text")
            return
        if asks_helper(self, node):
            self._generates(node, "calls a helper named for asking a model for text")
            return
        if type(node.func) is cst.Name and node.func.value in self.requesters:
            self._generates(node, f"calls {node.func.value}, a client's method asking for text")
            return
        if self._answers_typed(node):
            statement = self.context.statements[-1] if self.context.statements else None
            self.answered.append((node, statement, tuple(self.enclosing())))
            return
        # (sorted: a name bound twice reports the same way every run; one name needs no sorting)
        for name in sorted(names) if len(names) > 1 else names:
            if _engine_or_client(name):
                served = SERVED if name.startswith(SERVERS) else None  # (an inference server built)
                self._generates(node, f"uses {name}", variant=served)
                return
        if (library := data_generator(names, self.context.resolver.ancestry)) is not None:
            self._generates(node, f"uses {library}")
