"""Predicates on calls shared by detectors: generating with a model, stepping an environment.

Method calls on local objects (``llm.generate``, ``env.step``) have no qualified name — the object's
type is not known statically — so these look at the method's name and arguments; module-level
functions are matched on their qualified names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from itertools import pairwise
from typing import TYPE_CHECKING

import libcst as cst

from arb_audit.analyzer.frameworks import PACKAGES
from arb_audit.analyzer.loss_slice import CALLABLE_WORDS, words
from arb_audit.analyzer.names import dotted, last_name, literal_text
from arb_audit.analyzer.walk import descendants

if TYPE_CHECKING:  # (detectors import this module)
    from arb_audit.analyzer.detector import RouteDetector
    from arb_audit.analyzer.names import Scope

GENERATION_METHODS = frozenset(
    {
        "generate",
        "fast_generate",
        "generate_rollout_completions",
        "generate_sequences",
        "generate_content",
        "generate_content_async",
        "generate_async",
        "async_generate",
        "agenerate",
    }
)
"""Methods that sample text from a model (HF, vLLM, unsloth, TRL's rollout helpers, verl's rollout
worker group, Gemini's SDK)."""
OPTIMISER_WORDS = frozenset({"optim", "optimizer", "optimiser", "opt"})
"""Words of a receiver whose argument-less ``step()`` applies gradients."""
TRAINER_EVALUATIONS = frozenset({"evaluate", "predict", "eval", "test", "validate"})
"""A trainer's methods that measure a model without training it (Lightning's ``trainer.test(model)``
and ``trainer.validate(model)`` too)."""
AGENT_TURNS = frozenset({"step", "astep"})
"""Methods by which an agent takes its turn: on a chat agent, its model answers a message."""
AGENT_WORDS = frozenset({"agent", "agents"})
"""Last words of an object or class named for an agent (``reason_agent``, ``ReActAgent``)."""


def names_an_agent(name: str) -> bool:
    """Say whether a name's last word says it is an agent (``reason_agent``, ``OpenAIFuncCallAgent``)."""
    said = words(name)
    return bool(said) and said[-1] in AGENT_WORDS


SAMPLE_METHODS = frozenset({"sample", "sample_async"})
"""Methods of a sampling client that return completions when given sampling settings."""
SAMPLING_KEYWORDS = frozenset(
    {
        *("sampling_params", "num_samples", "max_tokens", "max_new_tokens", "temperature", "top_p"),
        "max_completion_tokens",  # (OpenAI's chat API for its reasoning models, in place of max_tokens)
    }
)
"""Keywords that set how a model samples text: they make a ``sample`` call one of a model's (not of a
random generator), and a ``generate_*`` helper given them one that asks a model."""
CHAT_METHODS = frozenset({"chat", "stream_chat", "chat_stream"})
"""Methods by which a checkpoint's own code answers a chat turn (called on a model)."""
MODEL_WORDS = frozenset({"model", "llm", "policy", "lm"})
"""Words of a receiver that holds a model."""
API_COMPLETIONS = (".chat.completions.create", ".completions.create", ".responses.create", ".messages.create")
"""Hosted-LLM client calls (OpenAI, Anthropic and compatible servers)."""
GENERATION_FUNCTIONS = frozenset(
    {
        "litellm.completion",
        "litellm.acompletion",
        "openai.ChatCompletion.create",
        "ray.data.llm.build_llm_processor",
        "mlx_lm.generate",
        "mlx_lm.stream_generate",
        "mlx_lm.batch_generate",
        "mlx_lm.utils.generate",
    }
)
"""Module-level generation functions (Ray Data's LLM processor runs a model over a dataset's rows;
mlx-lm's ``generate(model, tokenizer, prompt=p)`` samples from a model on Apple silicon)."""
DATA_GENERATORS = (
    "distilabel.",
    "synthetic_data_kit.",
    "llama_index.packs.",
    "bespokelabs.curator",
    "datadreamer.",
)
"""Synthetic-data libraries, by qualified-name prefix: they generate with a model and write a dataset."""


def data_generator(names: AbstractSet[str], ancestry: Callable[[str], set[str]]) -> str | None:
    """Return the synthetic-data library class or function a callee is, or derives from, if any.

    Such libraries are used through a class of the project (``class Reasoner(curator.LLM)``).
    """
    found = {a for n in names for a in ancestry(n) if a.startswith(DATA_GENERATORS)}
    return min(found) if found else None


GENERATION_WORDS = frozenset({"completion", "completions", "inference"})
"""Words of a helper of the project that asks a model for text (``openai_completion``)."""
OUTPUT_WORDS = frozenset(
    {"response", "responses", "answer", "answers", "reply", "replies", "text", "questions", "instructions"}
)
"""Words after ``generate`` in a helper that asks a model for them (``generate_response``)."""
PROMPT_WORDS = frozenset({"prompt", "prompts", "query", "queries", "instruction", "instructions"})
DECODER_WORDS = frozenset(
    {"with", "using", "via", "by", "model", "hf", "huggingface", "vllm", "llm", "openai"}
)
"""Words after ``decode``, with prompt words, of a helper that decodes (samples) continuations of
prompts by a model (``decode_prompts_with_huggingface``), unlike one that turns a prompt's token ids
back into text (``decode_prompt(tokenizer, ids)``)."""
LLM_WORDS = frozenset({"gpt", "llm", "llms", "openai", "chatgpt", "claude", "gemini"})
REQUEST_WORDS = frozenset({"request", "requests", "query", "ask", "chat", "call", "using", "via", "generate"})
"""A hosted model's name with one of these (``make_gpt3_requests``, ``query_llm``,
``create_test_cases_using_gpt``) asks it for text."""
API_WORDS = frozenset({"api", "apis"})
"""Words of a helper named for an API (``batch_get_api_merge``)."""
ASKING_WORDS = LLM_WORDS | API_WORDS | {"request", "requests", "query", "ask", "chat"}
"""Words of a helper that, handed a sampling setting, asks a hosted model (``batch_get_api_merge``)."""
NOT_ASKING_WORDS = frozenset(
    {"config", "configs", "settings", "stats", "pool", "similarity", "dataset", "datasets", "key", "keys"}
)
"""Words of such a helper that reads settings, statistics or data rather than asking a model."""
SETUP_WORDS = frozenset({"load", "prepare", "init", "initialize", "setup", "build", "get", "configure"})
"""First words of a helper that readies an inference object rather than asking it (``load_inference``)."""
STORE_WORDS = frozenset({"buffer", "queue", "storage", "store", "replay", "memory", "pool"})
"""Words of an object that keeps what a call adds to it (a replay buffer, a queue)."""
TEST_DOUBLE_WORDS = frozenset({"mock", "fake", "dummy", "stub"})
"""First words of a stand-in built for tests or examples (``MockInferenceClient``), which asks no model."""
SETTER_WORDS = frozenset({"set", "update", "reset", "apply", "broadcast", "sync", "register"})
"""First words of a method that changes an engine's settings (``set_sampling_params``), asking nothing."""
GIVEN_TARGET_WORDS = frozenset({"target", "gold", "golden", "expected", "ground", "correct"})
"""First words of a helper that writes out the right completion (``target_completion(value)``,
``gold_completion(row)``): the answer given, formatted, not one a model is asked for (unless it is
handed how to sample). Not ``ref``/``reference``: a reference model is asked for completions too."""
TEXT_HANDLING_VERBS = frozenset(
    {
        *("postprocess", "process", "parse", "clean", "extract", "format", "filter", "normalize"),
        *("normalise", "strip", "truncate", "split", "score", "grade", "check", "verify", "validate"),
        *("save", "write", "read", "print", "log", "count", "tokenize", "encode", "render", "show"),
        *("display", "dedup", "deduplicate", "compare", "match", "is", "has", "to"),
    }
)
"""First words of a helper that handles a completion already made rather than asking for one
(``postprocess_completion(record["completion"])``, ``parse_completion``, ``is_completion_valid``)."""
LIBRARY_PREFIXES = ("torch.", "transformers.", "accelerate.", "numpy.", "jax.", "tensorflow.")
"""Libraries whose ``inference``-named functions are modes or device maps, not text generation."""
NOT_ENVIRONMENTS = ("optim", "sched", "scaler", "lr", "accelerator", "engine", "model", "trainer", "agent")
"""Receivers whose ``step`` is an optimiser's, a scheduler's or a trainer's (TRL's classic
``ppo_trainer.step(queries, responses, rewards)``), or an agent's own turn (``agent.step(message)``:
a chat agent answering, as CAMEL's do), not an environment's."""


def method(node: cst.Call) -> str | None:
    """Return the method name of ``x.method(...)``, else None."""
    func = node.func
    return func.attr.value if type(func) is cst.Attribute else None  # (not isinstance: see names.dotted)


def delegates(
    node: cst.Call, enclosing: Callable[[], Sequence[str]], statements: Sequence[cst.CSTNode]
) -> bool:
    """Say whether ``node`` hands a wrapper's own arguments on to the method of the same name.

    ``def generate(self, *args, **kwargs): return self.pretrained_model.generate(*args, **kwargs)``
    (a value-head or reference-model wrapper) passes calls through: what is generated, or pushed,
    depends on whoever calls the wrapper, not on the file that defines it. Only the wrapper's own
    ``*args``/``**kwargs`` are passed through: ``self.model.generate(**inputs, **options)`` hands on
    what the method built itself (its prompts templated and tokenised), a generation of its own.
    ``statements``: the statements around the call, innermost last (the walk's).
    """
    if not node.args or not all(a.star in ("*", "**") and type(a.value) is cst.Name for a in node.args):
        return False
    around = enclosing()  # (asked last: most calls pass their own arguments)
    if not around or method(node) != around[-1]:
        return False
    function = next((s for s in reversed(statements) if type(s) is cst.FunctionDef), None)
    if function is None:
        return True
    own = {
        p.name.value for p in (function.params.star_arg, function.params.star_kwarg) if type(p) is cst.Param
    }
    return all(type(a.value) is cst.Name and a.value.value in own for a in node.args)


def discarded(
    node: cst.Call, statements: Sequence[cst.CSTNode], places: dict[int, dict[int, tuple[int, int]]]
) -> bool:
    """Say whether a call's result is bound to a name the next statement binds again, unread.

    ``out = generate_with_tool_calls(m, p)`` followed by ``out = m.generate(**p)`` (on the next line or
    after a ``;``): the first result is thrown away, so nothing downstream reads what that call made.
    ``statements``: the walk's statements around the call, innermost last; ``places``: where each
    statement of a block sits (line, position in it), filled once per block and kept by the caller.
    """
    if len(statements) < 2 or type(bound := statements[-1]) is not cst.Assign or bound.value is not node:
        return False
    if len(bound.targets) != 1 or type(target := bound.targets[0].target) is not cst.Name:
        return False
    for lines in _blocks(statements[-2]):
        where = places.get(id(lines))
        if where is None:
            where = places[id(lines)] = {
                id(small): (i, k)
                for i, line in enumerate(lines)
                if type(line) is cst.SimpleStatementLine
                for k, small in enumerate(line.body)
            }
        at = where.get(id(bound))
        if at is None:
            continue
        line, k = lines[at[0]], at[1]
        assert type(line) is cst.SimpleStatementLine
        if k + 1 < len(line.body):
            after: cst.CSTNode | None = line.body[k + 1]
        else:
            following = lines[at[0] + 1] if at[0] + 1 < len(lines) else None
            after = following.body[0] if type(following) is cst.SimpleStatementLine else None
        # (a store the call was handed and the rebinding reads, ``buffer=buffer`` then
        # ``buffer.sample()``, carries its result on)
        handed = {
            a.value.value
            for a in node.args
            if type(a.value) is cst.Name and set(words(a.value.value)) & STORE_WORDS
        } | {target.value}
        return (
            type(after) is cst.Assign
            and any(type(t.target) is cst.Name and t.target.value == target.value for t in after.targets)
            and not any(type(n) is cst.Name and n.value in handed for n in descendants(after.value))
        )
    return False


def _blocks(compound: cst.CSTNode) -> list[Sequence[cst.BaseStatement]]:
    """Return the statement lists of a compound statement's blocks (its body, else, handlers, finally)."""
    suites = [getattr(compound, "body", None), getattr(getattr(compound, "orelse", None), "body", None)]
    suites += [h.body for h in getattr(compound, "handlers", ())]
    suites.append(getattr(getattr(compound, "finalbody", None), "body", None))
    return [s.body for s in suites if type(s) is cst.IndentedBlock]


def generates(detector: RouteDetector, node: cst.Call) -> bool:
    """:func:`is_generation` of a call, asked once per call and scope in a walk (detectors share it)."""
    return _asked_once(detector, detector.context.generation, is_generation, node)


def asks_helper(detector: RouteDetector, node: cst.Call) -> bool:
    """:func:`is_generation_helper` of a call, asked once per call and scope in a walk."""
    return _asked_once(detector, detector.context.generation_helpers, is_generation_helper, node)


def _asked_once(
    detector: RouteDetector,
    answers: dict[int, tuple[Scope, bool]],
    question: Callable[[cst.Call, Callable[[cst.CSTNode], AbstractSet[str]]], bool],
    node: cst.Call,
) -> bool:
    """Answer ``question`` of a call from ``answers`` (by call and scope), asking it the first time."""
    scope = detector.context.scope
    entry = answers.get(id(node))
    if entry is None or entry[0] is not scope:
        entry = answers[id(node)] = (scope, question(node, detector.names))
    return entry[1]


def is_generation(node: cst.Call, names: Callable[[cst.CSTNode], AbstractSet[str]]) -> bool:
    """Say whether ``node`` samples text from a model or a hosted LLM.

    A Ray actor's generation method counts too (``llm.generate_async.remote(...)``).
    """
    called = method(node)
    if called in GENERATION_METHODS:
        return True
    if called == "remote" and type(node.func) is cst.Attribute:
        receiver = node.func.value
        if type(receiver) is cst.Attribute and receiver.attr.value in GENERATION_METHODS:
            return True
        if (
            type(receiver) is cst.Attribute
            and not receiver.attr.value[:1].isupper()  # (``workers.VLLMWorker.remote(...)``: an actor built)
            and not set(words(receiver.attr.value)[:1]) & (SETUP_WORDS | SETTER_WORDS)
            and "sampling_params" in _given(node)
        ):
            # a remote engine's request handed vLLM's sampling settings, by keyword or by their name
            # (OpenRLHF's ``llm.add_requests.remote(rank, sampling_params=sp, prompt_token_ids=ids)``,
            # ``engine.add_request.remote(ids, sampling_params)``): its answers are the engine's
            # samples, collected by another call
            return True
    if called in CHAT_METHODS and type(node.func) is cst.Attribute:
        # ``model.chat(tokenizer, query, history=h)``: the remote-code chat API of Qwen, ChatGLM,
        # InternLM and Baichuan checkpoints
        return bool(MODEL_WORDS & set(words(dotted(node.func.value).replace(".", "_"))))
    if called is not None and "generate" in called and _model_generates(node, called):
        return True
    if (
        called in AGENT_TURNS
        and node.args
        and type(node.func) is cst.Attribute
        and names_an_agent(dotted(node.func.value).rsplit(".", 1)[-1])
    ):
        # ``agent.step(message)``, ``reason_agent.astep(prompt)``: a chat agent's turn is its model's
        # answer (CAMEL's ChatAgent and agents like it)
        return True
    if called in SAMPLE_METHODS and any(
        arg.keyword is not None and arg.keyword.value in SAMPLING_KEYWORDS for arg in node.args
    ):
        # ``sampling_client.sample(prompt=p, num_samples=4, sampling_params=params)`` (Tinker, and
        # samplers like it): a sample of completions, unlike ``random.sample(pool, k)``
        return True
    if called == "create" and dotted(node.func).endswith(API_COMPLETIONS):  # (all end with .create)
        return True
    if _samples_messages(node):
        return True
    return bool(names(node.func) & GENERATION_FUNCTIONS)


NOT_SAMPLED_WORDS = frozenset({"embedding", "embeddings", "mask", "masks"})
"""Words of a model's ``generate_*`` method that makes no text (``generate_embeddings(prompts)``)."""


def _model_generates(node: cst.Call, called: str) -> bool:
    """Say whether a model's own generation method of another name is called (``model.mmu_generate(p)``).

    Checkpoints with remote code and research models name their sampling methods for the modality or
    the decoding (``mmu_generate``, ``beam_generate``, ``generate_text``): a method whose last word is
    ``generate``, or whose first is and whose others name text it returns or which is handed a
    sampling setting or a conversation, called on an object named for a model and handed what to
    answer, samples from it (not ``model.can_generate()``, nor
    ``model.generate_square_subsequent_mask(n)``).
    """
    said = words(called)
    if type(node.func) is not cst.Attribute or not said or not node.args:
        return False
    # (``model.generate_comment(msgs, max_completion_tokens=512)``: whatever the text is called, a
    # sampling setting or a conversation handed says it is sampled)
    sampled = any(a.keyword is not None and a.keyword.value in SAMPLING_KEYWORDS for a in node.args)
    # (a chat conversation, not prompts: ``generate_hidden_states(prompts)`` reads a model's states)
    sampled = (sampled or _conversation_handed(node, MESSAGES_WORDS)) and not set(said) & NOT_SAMPLED_WORDS
    if said[-1] != "generate" and (
        said[0] != "generate" or not (set(said[1:]) <= OUTPUT_WORDS | GENERATION_WORDS or sampled)
    ):
        return False
    receiver = words(last_name(node.func.value))
    return bool(receiver) and receiver[-1] in MODEL_WORDS


SAMPLER_WORDS = frozenset({"sampler", "llm", "chatbot", "generator"})
"""Last words of an object called with a conversation to answer it (simple-evals' ``sampler(messages)``)."""
SAMPLER_ENDINGS = tuple(SAMPLER_WORDS)
BUILD_WORDS = SETUP_WORDS | {"make", "create", "new"}
"""First words of a function that builds a sampler or a model (``build_sampler``, ``make_chatbot``)."""
MESSAGES_WORDS = frozenset({"messages", "msgs", "conversation", "convo", "chat"})
"""Last words of a name for a chat conversation itself (``prompt_messages``)."""
CONVERSATION_WORDS = MESSAGES_WORDS | {"prompt", "prompts"}
"""Words of a name holding what a model is asked (``prompt_messages``, ``prompts``)."""
NOT_CONVERSATION_WORDS = frozenset({"dataset", "data", "config", "cfg", "template", "loader", "indices"})
"""Words of a name holding what a sampler or model is built from, not a conversation it answers."""


def _samples_messages(node: cst.Call) -> bool:
    """Say whether ``node`` calls a sampler object with a conversation (``sampler(prompt_messages)``).

    The object itself (not a function building one, ``build_sampler(prompts)``, nor a class,
    ``DistributedSampler(prompts_dataset)``) handed messages: a name for them (not a dataset's or a
    config's), a list of chat messages, or ``messages=``.
    """
    if not node.args:
        return False
    name = last_name(node.func)  # ("" for a call of anything but a name or an attribute)
    if name.lower().endswith("model"):
        return _model_answers_messages(node, name)
    if not name.lower().endswith(SAMPLER_ENDINGS):  # (cheap: every call of a file is asked)
        return False
    found = words(name)
    if not found or found[-1] not in SAMPLER_WORDS or name[:1].isupper() or found[0] in BUILD_WORDS:
        return False
    if found[-1] == "generator" and not _generator_asked(node):
        return False  # (a template expander or a data generator is called with prompts too)
    for arg in node.args:
        said = set(words(arg.keyword.value)) if arg.keyword is not None else set()
        if CONVERSATION_WORDS & said and not NOT_CONVERSATION_WORDS & said:
            # (``sampler(messages=row["messages"])``, ``generator(user_prompt=q)``: the keyword says
            # what it is handed)
            return True
    first = node.args[0].value
    if type(first) is cst.List:
        return any(literal_field(e.value, "role") is not None for e in first.elements)
    key = literal_text(string) if (string := _string_index(first)) is not None else None
    said = set(words(key if key is not None else last_name(first)))  # (``generator(sample["prompt"])``)
    return bool(CONVERSATION_WORDS & said) and not NOT_CONVERSATION_WORDS & said


SCORING_MODEL_WORDS = frozenset(
    {
        *("reward", "rm", "prm", "critic", "value", "classifier", "cls", "embedding", "embed", "encoder"),
        *("ref", "reference", "guard", "moderation", "safety", "toxicity", "nli"),
    }
)
"""Words of a model that scores, embeds, moderates or serves as a reference for what it is handed, not a
chat model answering it."""
CHOOSING_VERBS = frozenset({"select", "choose", "pick", "route", "find", "resolve"})
"""First words of a function that picks a model for a conversation (``select_model(messages)``)."""
TOKENISED_WORDS = frozenset(
    {
        *("tokenized", "tokenised", "ids", "tokens", "input", "inputs"),
        *("encoded", "encodings", "tensor", "tensors"),
    }
)
"""Words of a name for a conversation already turned into token ids: a forward pass's input."""


def _model_answers_messages(node: cst.Call, name: str) -> bool:
    """Say whether a model object is called with a chat conversation (``raw = model(messages)``).

    A project's wrapper of a chat model answers its turns so; a network's forward pass is handed
    tensors (``model(prompt_ids)``, ``model(**inputs)``), never a conversation itself: the argument's
    last word, or ``messages=``, must name one, or it is a list of chat turns.
    """
    found = words(name)
    if not found or found[-1] != "model" or name[:1].isupper() or found[0] in BUILD_WORDS | CHOOSING_VERBS:
        return False
    if set(found) & SCORING_MODEL_WORDS:
        return False  # (``reward_model(messages)`` scores the conversation, it does not answer it)
    if any(arg.keyword is not None and arg.keyword.value == "labels" for arg in node.args):
        return False  # (``model(tokenized_chat, labels=...)``: a loss's forward pass, teacher-forced)
    for arg in node.args:
        if arg.keyword is not None:
            if words(arg.keyword.value)[-1:] == ("messages",):
                return True  # (``model(messages=msgs)``)
            continue
        if arg.star:
            continue
        if type(arg.value) is cst.List:
            return any(literal_field(e.value, "role") is not None for e in arg.value.elements)
        said = words(last_name(arg.value))
        # ("chat" alone is as often a tokenised pair member's name: ``policy_model(chosen_chat)``)
        return bool(said) and said[-1] in MESSAGES_WORDS - {"chat"} and not set(said) & TOKENISED_WORDS
    return False


ROLE_PROMPT_WORDS = frozenset({"system", "user"})
"""With ``prompt``, words of a keyword handing a chat model its turns (``user_prompt=``)."""


def _generator_asked(node: cst.Call) -> bool:
    """Say whether a generator object's call is a model's: given sampling settings or a chat turn.

    ``generator(prompt, max_new_tokens=256)`` or ``generator(p, **generator_kwargs)`` (a pipeline),
    ``generator(system_prompt=s, user_prompt=q)`` (an API caller); not ``generator(prompt, persona=p)``.
    """
    for arg in node.args:
        if arg.keyword is not None:
            said = set(words(arg.keyword.value))
            if arg.keyword.value in SAMPLING_KEYWORDS or ("prompt" in said and said & ROLE_PROMPT_WORDS):
                return True
        elif arg.star == "**" and {"generate", "generation", "generator", "gen", "sampling"} & set(
            words(last_name(arg.value))
        ):
            return True
    return False


def _string_index(node: cst.BaseExpression) -> cst.SimpleString | None:
    """Return the key of ``x["key"]`` when it is a literal string, else None."""
    if type(node) is cst.Subscript and len(node.slice) == 1:
        index = node.slice[0].slice
        if type(index) is cst.Index and type(index.value) is cst.SimpleString:
            return index.value
    return None


FETCHING_VERBS = frozenset({"get", "sample", "collect", "fetch"})
"""First words of a helper named for what it returns (``get_responses``, ``sample_completions``)."""
SAMPLED_OUTPUTS = frozenset(
    {"response", "responses", "completion", "completions", "answers", "replies", "generations"}
)
"""What a model answers, as the last word of such a helper's name."""
HELPER_VERBS = frozenset({"infer", "generate", "generation", "decode"})
"""First words of the helpers below that need no generation or LLM word in their name."""
INFERRED_SETTINGS = frozenset(
    {"device", "devices", "dtype", "type", "types", "shape", "shapes", "format", "schema", "config", "size"}
    | {"token", "tokens", "delimiter", "delimiters", "template", "encoding"}
    # where something lies (``infer_db_path(root, db_id)``); not names, which a model may be asked for
    | {"path", "paths", "dir", "root", "file", "files", "url"}
)
"""What an ``infer_*`` helper that asks no model infers (``infer_device``, ``infer_dtype``; a
tokenizer's ``infer_special_token_sequences``; ``infer_db_path``)."""


ASKING_VERBS = frozenset({"request", "query", "ask", "chat", "complete", "completion"})
"""Methods of an object named for a hosted model that ask it (``llm.request(prompt=p)``)."""
NOT_MODEL_OBJECT_WORDS = NOT_ASKING_WORDS | {
    "cache",
    "usage",
    "db",
    "database",
    "log",
    "logger",
    "cost",
    "billing",
}
"""Words of an object named for a hosted model that keeps records about it rather than asking it
(``llm_cache.query(prompt=p)``, ``openai_usage.query(message=m)``)."""
ASKED_WORDS = PROMPT_WORDS | CONVERSATION_WORDS | {"question", "questions", "message"}
"""Words of what such a method is handed that is the prompt (``prompt=``, ``question``)."""


def _handed(node: cst.Call) -> list[str]:
    """Return the name of each argument of a call: its keyword, else the last name of its value."""
    return [a.keyword.value if a.keyword is not None else last_name(a.value) for a in node.args]


def _asks_model_object(node: cst.Call) -> bool:
    """Say whether a method call's receiver is named for a hosted model and it is handed a prompt."""
    receiver = node.func.value if type(node.func) is cst.Attribute else None
    named = set(words(last_name(receiver))) if receiver is not None else set()
    if not named & LLM_WORDS or named & NOT_MODEL_OBJECT_WORDS:
        return False
    return any(set(words(h)) & ASKED_WORDS for h in _handed(node) if h)


CLIENT_WORDS = LLM_WORDS | {"client", "clients"}
"""Last words of an object that, handed a chat conversation, asks a model with it (``main_client``)."""
CLIENT_ASKING_WORDS = frozenset(
    {"chat", "complete", "completion", "completions", "generate", "generation", "query", "queries"}
    | {"ask", "invoke", "request", "requests", "infer", "inference", "sample", "respond", "prompt"}
)
"""Words of a client's method that asks its model (``run_queries``, ``chat_completion``, ``ainvoke``
is not split: ``invoke``); a client sends, validates, traces or stores conversations too."""


def _client_asked_chat(node: cst.Call) -> bool:
    """Say whether a method of an object named a client, named for asking, is handed a conversation.

    The conversation is a list of messages with a ``role`` (``[{"role": "user", "content": p}]``), or
    a batch of them, or a name for one (``client.complete(trajectory.messages, tools)``), by position
    or as ``messages=``; a queue's, a validator's or a store's client sends or keeps them (under no
    asking name), and a tokenizer or a formatter is no client.
    """
    if type(node.func) is not cst.Attribute or not set(words(node.func.attr.value)) & CLIENT_ASKING_WORDS:
        return False
    named = words(last_name(node.func.value))
    if not named or named[-1] not in CLIENT_WORDS:
        return False
    return _conversation_handed(node)


def _conversation_handed(node: cst.Call, words_named: AbstractSet[str] = CONVERSATION_WORDS) -> bool:
    """Say whether a call is handed a chat conversation among its first two arguments.

    A list of messages with a ``role``, a batch of them, or a name for one (its last word one of
    ``words_named``); by position or as ``messages=``.
    """
    for arg in node.args[:2]:
        if arg.keyword is not None and not set(words(arg.keyword.value)) & CONVERSATION_WORDS:
            continue  # (``trace(input=[...])``: what a keyword hands is what it names)
        value = arg.value
        named = words(last_name(value)) if type(value) in (cst.Name, cst.Attribute) else ()
        if (
            named
            and named[-1] in CONVERSATION_WORDS
            and named[-1] in words_named
            and not (NOT_CONVERSATION_WORDS & set(named))
        ):
            return True
        if type(value) is cst.List and value.elements and type(value.elements[0].value) is cst.List:
            value = value.elements[0].value  # (a batch of one or more conversations)
        if type(value) is cst.List and any(
            literal_field(e.value, "role") is not None for e in value.elements
        ):
            return True
    return False


def is_generation_helper(node: cst.Call, names: Callable[[cst.CSTNode], AbstractSet[str]]) -> bool:
    """Say whether ``node`` calls a helper named for asking a model for text.

    Projects wrap their client or server in helpers (``utils.openai_completion``,
    ``make_gpt3_requests``, ``client.infer_batch``); the name is what shows it.
    """
    func = node.func.attr if type(node.func) is cst.Attribute else node.func  # (not isinstance: see dotted)
    attribute = func is not node.func
    if type(func) is not cst.Name:
        return False
    found = words(func.value)
    if not found:
        return False
    if _samples_with_model_handed(node) and (attribute or any("." in q for q in names(func))):
        # a project's helper handed the model and how long to sample (``build_dpo_pairs(model=m,
        # max_new_tokens=512)``), whatever it is named for: it generates with that model
        return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if (
        found[0] in FETCHING_VERBS
        and found[-1] in SAMPLED_OUTPUTS
        and len(found) == 2
        and "model" in (given := _given(node))
        and given & ASKED_WORDS
        and (attribute or any("." in q for q in names(func)))
    ):
        # an imported helper named for the answers it returns, handed the model (``model_path=``) and
        # the prompts (``get_responses(prompts=ps, model_path=p)``): the model's answers to them
        # (asked before the setup verbs, where "get" readies an inference object)
        return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if found[0] in SETUP_WORDS or found[0] in TEST_DOUBLE_WORDS:
        return False  # (``MockInferenceClient()``: a test double stands in for a model, asking none)
    said = set(found)
    if (
        said & ASKING_WORDS
        and not said & NOT_ASKING_WORDS
        and (attribute or any("." in q for q in names(func)))
    ):
        # a method or an imported helper named for an API or a request, handed how to sample
        # (``batch_get_api_merge(examples=todo, temperature=0.7)``, ``chat.ask(q, max_tokens=256)``):
        # one setting where its name says a hosted model or an API, else as a ``generate_*`` helper
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
        if (said & (LLM_WORDS | API_WORDS) and keywords & SAMPLING_KEYWORDS) or _asks_for_samples(keywords):
            return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if attribute and found[0] in ASKING_VERBS and _asks_model_object(node):
        # ``llm.request(prompt=p)``, ``self.llm.ask(question)``: an object named for a hosted model
        # asked with a prompt (a project's wrapper around its client)
        return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if attribute and _client_asked_chat(node):
        # ``client.run_queries([[{"role": "user", "content": prompt}]])``: a project's model client
        # handed a chat conversation written out (what else a client does with one is answer it)
        return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if (
        "judge" in said
        and found[0] in REQUEST_WORDS | {"run", "invoke"}
        and (attribute or any("." in q for q in names(func)))
        and any(set(words(h)) & ASKED_WORDS for h in _handed(node) if h)
    ):
        # an imported helper named for asking a judge, handed a prompt (``call_judge(prompt)``): a
        # judge handed a prompt is a model (a rule's checker is handed code and tests)
        return not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))
    if not (GENERATION_WORDS & said or LLM_WORDS & said or found[0] in HELPER_VERBS or "generate" in said):
        return False  # (no name below can say it: most calls are answered here, before any lookup)
    # a method, or an imported helper: not a function or class of this file, whose body says more
    outside = attribute or any("." in q for q in names(func))
    if func.value[:1].isupper() and not outside:
        return False  # a class of this file named so (``DigitCompletion(...)``, a task) is built, not asked
    named = (
        bool(
            GENERATION_WORDS & set(found)
            and found[0] not in TEXT_HANDLING_VERBS
            and not (found[0] in GIVEN_TARGET_WORDS and not _asks_for_samples(_given(node)))
        )
        # (``infer_device()``, ``infer_dtype``: the setting inferred, no model asked)
        or (found[0] == "infer" and not INFERRED_SETTINGS & set(found[1:]))
        # the generation function a loop is handed (``responses = generate_fn(prompts)``); one this
        # module defines shows in its own body whether it asks a model
        or (
            found[0] in ("generate", "generation")
            and len(found) > 1
            and found[-1] in CALLABLE_WORDS
            and func.value not in names(func)
        )
        or (
            # (a function of this file named so shows in its own body whether it asks a model:
            # ``generate_ground_truth_response`` computes the answer); the verb may come after how
            # it is asked (``generator.batch_rollout_generate_response(rollouts)``)
            "generate" in found
            and bool(OUTPUT_WORDS & set(found[found.index("generate") + 1 :]))
            and not {"path", "file", "dir", "name"} & set(found)
            and outside
        )
        or bool(LLM_WORDS & set(found) and REQUEST_WORDS & set(found))
        or (found[0] == "decode" and bool(PROMPT_WORDS & set(found[1:])) and bool(DECODER_WORDS & set(found)))
        or (
            # an imported ``generate_*`` helper given a model's sampling settings
            # (``generate_with_references(model=m, messages=ms, temperature=0.7, max_tokens=512)``)
            found[0] == "generate" and outside and _asks_for_samples(_given(node))
        )
    )
    return named and not any(q.startswith(LIBRARY_PREFIXES) for q in names(node.func))


MODEL_NAME_WORDS = frozenset({"name", "id", "path"})
"""Words after a model's word in a keyword that names the model handed (``model_name=``, ``llm_id=``)."""


def _given(node: cst.Call) -> set[str]:
    """Return a call's keywords, and what its positional arguments are named for.

    ``generate(model, input_ids, tokenizer, temperature=0.0)``: a project's sampling loop is handed
    the model first, as ``model.generate`` is called on it; ``generate_k_steps(convs, k, llm,
    sampling_params, 1)``: the engine and its sampling settings handed in their places (an argument
    named as a sampling keyword is that setting). A model handed by name (``model_name=``) is a model.
    """
    given = {a.keyword.value for a in node.args if a.keyword is not None}
    for keyword in list(given):
        said = words(keyword)
        if said and said[0] in MODEL_WORDS and set(said[1:]) <= MODEL_NAME_WORDS:
            given.add("model")  # (``model_name="gpt-4"``: the model to ask, named)
    for at, arg in enumerate(node.args):
        if arg.keyword is not None or arg.star or not isinstance(arg.value, cst.Name | cst.Attribute):
            continue
        name = last_name(arg.value)
        said = words(name)
        if said and said[-1] in MODEL_WORDS and (at == 0 or said[-1] == "llm"):
            given.add("model")
        if name in SAMPLING_KEYWORDS or name == "generation_config":
            given.add(name)
    return given


SAMPLE_LENGTHS = frozenset(
    {"max_new_tokens", "max_tokens", "num_samples", "sampling_params", "generation_config"}
)
"""Settings of how much a model samples (not a temperature, which a distillation loss is handed too)."""


def _samples_with_model_handed(node: cst.Call) -> bool:
    """Say whether a call is handed a model (``model=m``, or first) and how much it is to sample."""
    given = _given(node)
    return "model" in given and bool(given & SAMPLE_LENGTHS)


def _asks_for_samples(keywords: AbstractSet[str]) -> bool:
    """Say whether a call's keywords set how a model samples.

    Twice (``temperature=``, ``max_tokens=``), or once beside a model or its input (``model=``,
    ``messages=``): a temperature alone may be a softmax's.
    """
    settings = len(keywords & SAMPLING_KEYWORDS)
    return (
        settings >= 2
        # (vLLM's and HF's settings objects: nothing else is called so)
        or bool(keywords & {"sampling_params", "generation_config"})
        or (settings == 1 and bool(keywords & {"model", "messages", "prompt", "prompts"}))
    )


HTTP_POSTS = frozenset({"requests.post", "httpx.post", "urllib.request.urlopen", "requests.Session.post"})
"""Module-level HTTP calls that send a request body."""


def is_http_post(node: cst.Call, names: AbstractSet[str]) -> bool:
    """Say whether ``node`` sends an HTTP request body.

    ``requests.post``, ``session.post``, or a project's own ``post`` helper (``from utils.http import
    post``); ``names`` are the qualified names of its callee.
    """
    return (
        bool(names & HTTP_POSTS)
        or method(node) == "post"
        or any(n == "post" or n.endswith(".post") for n in names)
    )


ACTOR_WORDS = frozenset({"env", "environment", "agent", "tool", "tools", "game", "world"})
"""Words of a function that, named with "step", steps a world with an action (``agent_step(obs, act)``)."""


def is_env_step(node: cst.Call) -> bool:
    """Say whether ``node`` is ``env.step(action)``: a ``step`` that takes an action.

    Also a function named for stepping an environment, agent or tool (``await agent_step(obs, act)``).
    """
    if type(node.func) is cst.Name and node.args:
        named = set(words(node.func.value))
        return "step" in named and bool(named & ACTOR_WORDS)
    if method(node) != "step" or not node.args:
        return False
    assert type(node.func) is cst.Attribute
    receiver = dotted(node.func.value).lower()
    # ``self.step(queries, responses, rewards)``: an object's own step (a TRL-style trainer's), where
    # ``self.env.step(action)`` is its environment's
    return receiver != "self" and not any(word in receiver for word in NOT_ENVIRONMENTS)


EPISODE_WORDS = frozenset({"interact", "interaction", "rollout", "rollouts", "episode", "episodes"})
"""Words of a helper that plays episodes (``batch_interact_environment``, ``rollout_env``)."""
ENVIRONMENT_WORDS = frozenset({"env", "envs", "environment", "environments"})
"""Words of an environment: an argument handed one (``env=env``), a class's last word (``ToolEnv``)."""


NOT_AGENT_ENVIRONMENTS = (
    *("jinja2.", "dotenv.", "environs.", "lmdb.", "simpy.", "django.", "os.", "ray.runtime_env."),
    *("lightning.", "lightning_fabric.", "pytorch_lightning.", "azureml.", "azure."),
)
"""Libraries whose ``Environment`` classes are templates, settings, stores, a cluster's or a job's
runtime (``ray.runtime_env.RuntimeEnv``, Lightning's ``SLURMEnvironment``, Azure ML's ``Environment``),
not worlds an agent acts in."""
SOFTWARE_ENVIRONMENT_WORDS = frozenset({"runtime", "virtual", "conda", "docker", "build", "cluster"})
"""Words of an environment class that installs or runs software rather than answering an agent."""


def names_an_environment(name: str) -> bool:
    """Say whether a class name's last word says environment and no other word says software's.

    ``ToolEnv``, ``SWEEnvironment``; not ``RuntimeEnv``, ``PythonVirtualEnv`` or ``DockerEnvironment``.
    """
    said = words(name)
    return bool(said) and said[-1] in ENVIRONMENT_WORDS and not SOFTWARE_ENVIRONMENT_WORDS & set(said)


MADE_ENVIRONMENTS = frozenset({"gym.make", "gymnasium.make", "textarena.make"})
"""Factories that build an environment from its registered id."""


def built_environment(
    node: cst.Call, names_of: Callable[[cst.CSTNode], AbstractSet[str]], imported: Callable[[str], bool]
) -> str | None:
    """Return the library environment a call builds (``vf.ToolEnv(tools=..., max_turns=10)``, ``gym.make``).

    ``names_of``: the qualified names of an expression; ``imported``: whether a qualified name is
    imported. A class of the file itself is read by its methods instead (the ``Environment`` detector's
    class rules). The callee's own name is read first: only ``make`` and bare names (``make`` imported
    under another name) are looked up before the name says it is an environment.
    """
    last = last_name(node.func)
    if last == "make" or type(node.func) is cst.Name:  # (a bare name may be ``make`` imported as)
        made = names_of(node.func) & MADE_ENVIRONMENTS
        if made:
            return min(made)
    if not (last[:1].isupper() and names_an_environment(last)):
        return None
    return next(
        (q for q in sorted(names_of(node.func)) if imported(q) and not q.startswith(NOT_AGENT_ENVIRONMENTS)),
        None,
    )


def single_turn(name: str) -> bool:
    """Say whether an environment's name says every episode is one turn (``SingleTurnEnv``)."""
    said = words(name.rsplit(".", 1)[-1])
    return "single" in said and "turn" in said


PLAYING_VERBS = frozenset({"run", "play", "rollout", "collect", "interact", "simulate"})
"""First words of an environment's method that plays episodes (``run_episode``; not ``log_episode``)."""


PLAYED_WORDS = frozenset({"episode", "episodes"})
"""Words after a verb of playing that name an environment's episode (``run_episode``, ``collect_episodes``);
not "rollout", which frameworks' own helpers (``run_multi_turn_rollout``) and classic-control loops
(``collect_rollouts``) are named by, with turns their configs set."""


def runs_episodes(node: cst.Call) -> bool:
    """Say whether ``node`` hands an environment to a helper named for playing episodes in it.

    ``batch_interact_environment(agent=agent, env=env)``, ``run_episode(model, processor, env)``: the
    multi-turn loop is the helper's, in whatever file it lives; an argument says it is an environment's,
    and the name says it plays episodes (named for the environment, or a verb of playing before the
    episode, ``run_episode``: a bare ``rollout(model, environment)`` may sample one answer). So is an
    environment's own method named for episodes, handed the policy (``env.run_episode(agent_fn, s)``).
    """
    said = words(last_name(node.func))
    named = set(said)
    if environment_plays(node):
        return True
    if not named & EPISODE_WORDS:
        return False
    if not (named & ENVIRONMENT_WORDS or (said[0] in PLAYING_VERBS and set(said[1:]) & PLAYED_WORDS)):
        return False
    return any(
        (a.keyword is not None and set(words(a.keyword.value)) & ENVIRONMENT_WORDS)
        or set(words(last_name(a.value))) & ENVIRONMENT_WORDS
        for a in node.args
    )


def environment_plays(node: cst.Call) -> bool:
    """Say whether ``node`` is an environment's own method playing an episode, handed what it needs.

    ``self.environment.run_episode(agent_fn, scenario)``, ``rollout_env.run_episode(task_id=t)``: the
    environment plays the episode, asking the policy between its turns (one episode is several turns).
    """
    return (
        bool(set(words(last_name(node.func))) & EPISODE_WORDS)
        and type(node.func) is cst.Attribute
        and bool(node.args)
        and words(node.func.attr.value)[0] in PLAYING_VERBS
        and bool(set(words(last_name(node.func.value))) & ENVIRONMENT_WORDS)
    )


TURN_WORDS = frozenset({"agent", "agentic", "tool", "tools", "multiturn"})
"""Words that, beside "loop" or "rollout" (``agent_loop``, ``tool_rollout``), name a helper running the
model's turns against tools or an environment (so does "multi" with "turn": ``multi_turn_rollout``)."""


def runs_agent_loop(node: cst.Call, names: Callable[[cst.CSTNode], AbstractSet[str]]) -> bool:
    """Say whether ``node`` calls a helper named for running the model's turns with tools or a world.

    ``generation_manager.run_llm_loop(gen_batch, initial_input_ids)`` (Search-R1 and its forks),
    ``agent_loop(...)``, ``multi_turn_rollout(...)``: the multi-turn loop is the helper's, in another
    file; the name says generation is interleaved with the world's turns; so does
    ``generate_with_tool_calls(...)``. ``train_loop``, ``generate_rollout``, ``llm_rollout``,
    ``single_turn_rollout`` and ``turn_rollouts_into_batch`` say nothing of several turns and do not
    count, nor does a framework's own helper (NeMo-RL's
    ``run_multi_turn_rollout`` runs as many turns as its config says, one by default): what a
    framework runs is its table's to say.
    """
    if any(q.partition(".")[0] in PACKAGES for q in names(node.func)):
        return False
    said = words(last_name(node.func))
    named = set(said)
    turns = bool(named & TURN_WORDS) or {"multi", "turn"} <= named or {"multi", "turns"} <= named
    if named & {"single", "one"}:
        return False
    if "loop" in named:
        return turns or "llm" in named
    if {("with", "tool"), ("tool", "calls")} <= set(pairwise(said)):
        # ``vllm_generate_with_tool_calls(...)``: generation interleaved with the tool calls it makes
        # (not ``sample_tool_call_with_logprob``, one call sampled, nor ``generate_with_tools(tools=
        # schemas)``, function calling offered in one turn)
        return bool(named & {"generate", "rollout", "sample"})
    return bool(named & {"rollout", "rollouts"}) and turns


SAME_VALUES = frozenset(
    {
        *("to", "cpu", "cuda", "contiguous", "clone", "detach", "tolist"),
        *("float", "half", "bfloat16", "double", "bool", "int", "long"),
    }
)
"""Tensor methods that return the same values in another dtype, device or memory."""


def uncast(value: cst.BaseExpression) -> cst.BaseExpression:
    """Return what a value is through moves and casts (``flags.to(torch.float32).cpu()`` -> ``flags``)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and method(value) in SAME_VALUES:
        value = value.func.value
    return value


def dict_field(value: cst.BaseExpression, key: str) -> cst.BaseExpression | None:
    """Return the value of ``key`` in a dict literal or a ``dict(...)`` call, if given there."""
    if type(value) is cst.Dict:
        for element in value.elements:
            if (
                type(element) is cst.DictElement
                and type(element.key) is cst.SimpleString
                and element.key.evaluated_value == key
            ):
                return element.value
    if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value == "dict":
        return next((a.value for a in value.args if a.keyword is not None and a.keyword.value == key), None)
    return None


def literal_field(value: cst.BaseExpression, key: str) -> str | None:
    """Return ``key``'s string literal in a dict literal or ``dict(...)`` call (``{"role": "tool"}``)."""
    found = dict_field(value, key)
    text = found.evaluated_value if type(found) is cst.SimpleString else None
    return text if isinstance(text, str) else None


def decodes_greedily(key: str | None, value: cst.BaseExpression) -> bool:
    """Say whether a setting tells a generation to decode greedily (``temperature=0``).

    Greedy decoding answers (a benchmark, a demo); rollouts that RL trains on are sampled.
    """
    return key == "temperature" and isinstance(value, cst.Integer | cst.Float) and float(value.value) == 0.0


CLI_RUNNERS = frozenset({"fire.Fire", "typer.run", "tyro.cli", "jsonargparse.CLI"})
"""Functions that run the function they are handed as a command line."""
RUNNERS = frozenset(
    {
        "subprocess.run",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "os.system",
    }
)
"""Functions that run a command line (the subprocess_launch detector reads its words)."""
PROCESS_STARTERS = ("subprocess.", "os.system", "os.exec", "os.spawn", "os.popen")
"""Prefixes of the qualified names of every call that starts another process: the :data:`RUNNERS`,
whose command line is read, and the rest (``os.execv``, ``subprocess.getoutput``)."""


def flag_key(call: cst.Call) -> str | None:
    """Return the setting ``parser.add_argument("--rl-type", dest=...)`` stores, as a config key."""
    dest = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dest"), None)
    for value in (dest, call.args[0].value if call.args else None):
        if type(value) is cst.SimpleString and isinstance(value.evaluated_value, str):
            return value.evaluated_value.lstrip("-").replace("-", "_") or None
    return None
