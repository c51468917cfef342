"""A turn loop whose tool results go back into the policy's text: a search or code agent's rollout."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import libcst as cst

from arb_audit.analyzer.calls import (
    asks_helper,
    decodes_greedily,
    generates,
    is_http_post,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.detectors.reward_function import takes_samples
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

OBSERVATION_TAGS = (
    *("information", "observation", "obs", "result", "results", "output", "tool_response", "tool_result"),
    *("interpreter", "execution", "execution_result", "search_result", "search_results", "document"),
    "documents",
)
"""Names of the tags that wrap a tool's result spliced into the model's text."""
OBSERVATION_TAG = re.compile(rf"<(?:{'|'.join(OBSERVATION_TAGS)})>", re.IGNORECASE)
"""Tags that wrap what a tool returned when it is spliced into the model's text (Search-R1's
``<information>``, code agents' ``<output>``): the next turn reads the world's answer."""
TURN_WORDS = frozenset({"turn", "turns", "round", "rounds"})
SCORED_TOOL_RESULTS = "scored_tool_results"
"""Variant of an ``interactive`` finding: code scoring or reading responses looks for tool results in
them (a component of multi-turn tool RL, also where a ``__main__`` demo runs it)."""
SCORING_WORDS = frozenset({"reward", "rewards", "score", "scores", "scoring", "validate", "verify", "check"})
"""Words of a function that scores or checks responses (``compute_score``, ``validate_format``)."""
STEP_GENERATION_WORDS = frozenset({"generate", "generation", "generations"})
"""Words of a loop step's name that says it has the policy generate (``run_agent_generations``)."""
TOOL_CALL_VERBS = frozenset({"run", "call", "calls", "execute", "exec", "invoke", "handle", "process"})
"""Verbs of a loop step's name that runs the tool calls the policy wrote (``run_tool_calls``)."""
TOOL_CALL_TAG = re.compile(
    r"<(?:search|python|tool_call|tool|query|execute|code_interpreter|api_call|function_call)>", re.IGNORECASE
)
"""Tags in which a policy calls a tool (``<search>query</search>``); with an observation tag read in
the same scoring code, the responses scored hold tool calls and their results."""
STOP_KEYWORDS = frozenset({"stop", "stop_strings", "stop_sequences", "stop_words", "stop_tokens"})
"""Keywords of a generation call or its sampling settings that end the text at given strings."""
TOOL_CALL_WORDS = frozenset(
    {"query", "search", "tool", "observation", "code", "execute", "python", "call", "action", "output"}
)
"""Words of a stop string at which the policy has asked a tool (``<|end_of_query|>``, `````output``)."""


@dataclass(slots=True)
class _Loop:
    """What one open loop's calls do."""

    generates: bool = False
    """A call in it generates."""
    samples: bool = False
    """A generation in it samples."""
    greedy: bool = False
    """A generation in it decodes greedily (``temperature=0``)."""
    steps: set[str] = field(default_factory=set)
    """What its calls are named for: "generate", "tools" (``run_agent_generations``, ``run_tool_calls``)."""
    turns: bool = False
    """It runs over turns or rounds (``for _ in range(max_rounds)``)."""


def _greedy_settings(value: cst.BaseExpression, greedy_names: set[str]) -> bool:
    """Say whether a call or a value tells a generation to decode greedily.

    By keyword or in a dict it holds (``llm.generate(p, temperature=0)``, ``{"sampling_params":
    {"temperature": 0.0}}``), or through a name bound to such settings (``SamplingParams(temperature=0)``).
    """
    # (type identity, not isinstance: every node under the value is asked, and misses on libcst's
    # ABC-based classes are slow)
    for element in (value, *descendants(value)):
        if type(element) is cst.Arg and element.keyword is not None:
            if decodes_greedily(element.keyword.value, element.value):
                return True
        elif type(element) is cst.DictElement and type(element.key) is cst.SimpleString:
            if decodes_greedily(literal_text(element.key), element.value):
                return True
        elif type(element) is cst.Name and element.value in greedy_names:
            return True
    return False


def tool_call_stop(text: str) -> bool:
    """Say whether a stop string ends the policy's text where it calls a tool.

    A closing tag (``</search>``, ``</tool_call>``) other than the end of a sequence (``</s>``), a code
    block's output fence, or a marker named for a query, a tool, an action or an observation.
    """
    stripped = text.strip()
    if not stripped or stripped == "</s>":
        return False
    if stripped.startswith("</") or "```output" in stripped:
        return True
    return bool(TOOL_CALL_WORDS & set(words(re.sub(r"[^A-Za-z]+", "_", stripped))))


class ToolFeedback(RouteDetector):
    """A loop over turns, generation, and a tool's result wrapped in a tag for the next turn.

    Tool-using agents written without chat roles splice the tool's answer into the text the policy
    continues from: generate, parse ``<search>query</search>``, call the retriever, append
    ``<information>…</information>``, generate again, for ``max_turns`` turns. The three parts often
    sit in different methods of one class (the loop, the generation helper, the tool executor), so
    they are looked for in the whole file: a loop over turns, a generation call, and a string that
    wraps a tool's result in an observation tag. Loops in functions named for evaluation or a demo do
    not count.
    """

    TRIGGERS = (
        *(f"<{tag}>" for tag in OBSERVATION_TAGS),
        "stop",
        *("_tool", "tool_"),
    )
    """The observation tags themselves, a generation's stop sequences, or a call named for running
    tools: a file without one cannot show any of the shapes."""

    VALID = (
        Valid(
            "for batch in loader:\n    outs = llm.generate(batch, SamplingParams(stop=['</s>', '\\n\\n']))\n"
        ),
        Valid(
            "def evaluate(agent, states):\n    for i in range(max_generations):\n"
            "        states = agent.run_generations(states)\n        states = agent.run_tool_calls(states)\n"
            "    return f'<information>{states}</information>'\n"
        ),
        Valid(
            "def run(self, env, question):\n    prompt = question\n    for _ in range(5):\n"
            "        params = {'temperature': 0.0, 'max_new_tokens': 512}\n"
            "        out = requests.post(url, json={'text': prompt, 'sampling_params': params})\n"
            "        calls = self.extract_tool_calls(out['text'])\n"
            "        results = self.execute_tool_calls(env, calls)\n"
            "        prompt += out['text'] + f'<tool_response>{results}</tool_response>'\n"
        ),
        Valid(
            "for i in range(3):\n    outs = run_generations(states)\n    save(outs)\n"
            "tag = f'<information>{docs}</information>'\n"
        ),
        Valid(
            "def evaluate(llm):\n    for t in range(3):\n"
            "        outs = llm.generate(ps, SamplingParams(stop=['</search>']))\n"
        ),
        Valid("for turn in range(max_turns):\n    out = model.generate(x)\n"),
        # generation and tool calls over a dataset's items, not over turns; or in an evaluation
        Valid(
            "for item in dataset:\n    text = generate_answer(model, item)\n"
            "    result = tool_manager.call_tool(text)\n"
        ),
        Valid(
            "def evaluate(model, tools, conv, max_rounds):\n    for _ in range(max_rounds):\n"
            "        text = generate_reply(model, conv)\n        conv = add(conv, tools.call_tool(text))\n"
        ),
        Valid("text = f'<information>{docs}</information>'\nout = model.generate(text)\n"),
        Valid("def format_prompt(docs):\n    return f'<documents>{docs}</documents>'\n"),
        Valid("def parse_xml(text):\n    return re.findall(r'<result>(.*?)</result>', text)\n"),
        Valid("def format_reward(completion):\n    return float('<output>' in completion)\n"),
        Valid(
            "def evaluate(model):\n    for t in range(max_turns):\n        out = model.generate(x)\n"
            "        x = out + f'<information>{search(out)}</information>'\n"
        ),
    )
    INVALID = (
        # rounds of generation, each followed by the tool calls it wrote, the results handed on
        Invalid(
            "def generate_with_tool_calls(model, tool_manager, conv, max_rounds=5):\n"
            "    for _ in range(max_rounds):\n"
            "        text = generate_conversation_fn(model=model, inputs=conv)\n"
            "        result = tool_manager.call_tool(text)\n"
            "        conv = handle_tool_result(result, conv)\n",
            "interactive",
        ),
        Invalid(
            "class Agent:\n    def run_tool_calls(self, states):\n        for s in states:\n"
            "            obs = f'<information>{search(s)}</information>'\n"
            "            s['messages'].append({'role': 'user', 'content': obs})\n"
            "        return states\n"
            "    def run_agent(self, generate_fn, states):\n        for i in range(max_generations):\n"
            "            states = self.run_agent_generations(generate_fn, states)\n"
            "            states = self.run_tool_calls(states)\n        return states\n",
            "interactive",
        ),
        Invalid(
            "import re\ndef search_penalty(completions, **kwargs):\n"
            "    calls = [len(re.findall(r'<search>.*?</search>', c)) for c in completions]\n"
            "    seen = [len(re.findall(r'<observation>.*?</observation>', c)) for c in completions]\n"
            "    return [-0.2 if a > b else 0.0 for a, b in zip(calls, seen)]\n",
            "interactive",
            variant=SCORED_TOOL_RESULTS,
        ),
        Invalid(
            "def compute_score(solution_str, ground_truth):\n"
            "    calls = re.findall(r'<search>(.*?)</search>\\s*<result>(.*?)</result>', solution_str)\n"
            "    return 0.1 * bool(calls) + em(extract_answer(solution_str), ground_truth)\n",
            "interactive",
            variant=SCORED_TOOL_RESULTS,
        ),
        Invalid(
            "stop_tokens = ['<|end_of_query|>']\nfor t in range(11):\n"
            "    params = SamplingParams(temperature=1, stop=stop_tokens)\n"
            "    outs = llm.generate(prompts, params)\n"
            "    prompts = [p + o + retrieve(o) for p, o in zip(prompts, outs)]\n",
            "interactive",
        ),
        Invalid(
            "while calls_left >= 0:\n    sampling_params.stop = ['```output']\n"
            "    outputs = self.inference_engine.generate(prompts=ps, sampling_params=sampling_params)\n",
            "interactive",
        ),
        Invalid(
            "def run_llm_loop(model, text):\n    for _ in range(max_turns):\n"
            "        out = model.generate(text)\n"
            "        text = out + f'<information>{retrieve(out)}</information>'\n",
            "interactive",
        ),
        Invalid(
            "from rollout.http import post\nasync def generate(sample):\n"
            "    for turn in range(CONFIGS['max_turns']):\n"
            "        out = await post(url, {'text': text})\n"
            "        text += out['text'] + f'<information>{await search(out)}</information>'\n",
            "interactive",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.functions: list[str] = []
        self.greedy_names: set[str] = set()
        """Names bound to greedy generation settings."""
        self.agent_loop: cst.CSTNode | None = None
        """A loop that calls a generation step and a tool-calling step."""
        self.turn_tool_loop: cst.CSTNode | None = None
        """The first loop over turns that generates, then runs the tool calls (named for both)."""
        self.scorers: list[bool] = []
        """Per open function: whether it scores or checks responses."""
        self.loop: cst.CSTNode | None = None
        self.generates = False
        self.tagged = False
        self.tool_stops = False
        """A generation's stop strings end the text where the policy calls a tool."""
        self.loops: list[_Loop] = []
        """What each open loop does, outermost first."""
        self.stopped_loop: cst.CSTNode | None = None
        """A loop that generates, in a file whose generation stops at tool calls."""
        self.scored_call = False
        """A function scoring or checking responses looks for a tool call (``<search>``) in them."""
        self.scored_tag: tuple[cst.CSTNode, cst.CSTNode | None] | None = None
        """An observation tag a function scoring or reading responses looks for: they carry tool results."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)
        # a function scores responses when it is named so (``compute_score``) or takes a trainer's
        # samples as a reward function does (``search_penalty(completions, **kwargs)``)
        self.scorers.append(
            bool(SCORING_WORDS & set(words(node.name.value))) or takes_samples(node) is not None
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()
        self.scorers.pop()

    def _turns(self, node: cst.CSTNode) -> bool:
        """Say whether an expression counts turns (``range(self.config.max_turns)``)."""
        # a name or a config key (``range(CONFIGS["max_turns"])``)
        names = [
            n.value if isinstance(n, cst.Name) else literal_text(n)
            for n in (node, *descendants(node))
            if isinstance(n, cst.Name | cst.SimpleString)
        ]
        return any(TURN_WORDS & set(words(n)) for n in names)

    def _training_scope(self) -> bool:
        return not any(NOT_TRAINING_SCOPES & set(words(name)) for name in self.functions)

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(_Loop(turns=self._turns(node.iter)))
        if self.loop is None and self.loops[-1].turns and self._training_scope():
            self.loop = node

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(_Loop(turns=self._turns(node.test)))
        if self.loop is None and self.loops[-1].turns and self._training_scope():
            self.loop = node

    def _leave_loop(self, node: cst.For | cst.While) -> None:
        loop = self.loops.pop()
        if loop.greedy and not loop.samples:
            # decoding without sampling (``temperature: 0.0``) answers; rollouts for RL sample
            if self.loop is node:
                self.loop = None
            return
        if loop.steps == {"generate", "tools"} and self._training_scope():
            self.agent_loop = self.agent_loop or node
            if loop.turns:
                self.turn_tool_loop = self.turn_tool_loop or node
        if loop.generates and self.stopped_loop is None and self._training_scope():
            self.stopped_loop = node

    def leave_For(self, original_node: cst.For) -> None:
        self._leave_loop(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave_loop(original_node)

    def _stops(self, value: cst.BaseExpression) -> None:
        """Note stop strings given to a generation (a string or a list of them) that mark a tool call."""
        items = [e.value for e in value.elements] if isinstance(value, cst.List | cst.Tuple) else [value]
        for item in items:
            if type(item) is cst.SimpleString and isinstance(item.evaluated_value, str):
                self.tool_stops = self.tool_stops or tool_call_stop(item.evaluated_value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in STOP_KEYWORDS:
            self._stops(node.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            name = target.target.attr.value if type(target.target) is cst.Attribute else target.target
            if type(name) is cst.Name:
                name = name.value
            if isinstance(name, str) and "stop" in words(name):
                self._stops(node.value)
            if isinstance(name, str) and _greedy_settings(node.value, self.greedy_names):
                self.greedy_names.add(name)  # greedy = SamplingParams(temperature=0): handed on by name

    def visit_Call(self, node: cst.Call) -> None:
        # a rollout server is asked over HTTP as often as through a client (``await post(url, payload)``)
        asks = generates(self, node) or asks_helper(self, node) or is_http_post(node, self.names(node.func))
        self.generates = self.generates or asks
        if asks and self.loops:
            self.loops[-1].generates = True
            # which of the loop's generations decode greedily (a judge's may, the policy's may not)
            if _greedy_settings(node, self.greedy_names):
                self.loops[-1].greedy = True
            else:
                self.loops[-1].samples = True
        if self.loops:
            # an agent loop whose steps are the class's own methods (``self.run_agent_generations(...)``
            # then ``self.run_tool_calls(...)``): each named for what it does
            said = set(words(last_name(node.func)))
            if asks or said & STEP_GENERATION_WORDS:
                self.loops[-1].steps.add("generate")
            if said & {"tool", "tools"} and said & TOOL_CALL_VERBS:
                self.loops[-1].steps.add("tools")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        statement = self.context.statements[-1] if self.context.statements else None
        if type(statement) is cst.Expr and statement.value is node:
            return  # a docstring describes tags; code that reads or writes them holds them elsewhere
        self._tag(node, node.value)

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self._tag(node, node.value)

    def _tag(self, node: cst.CSTNode, text: str) -> None:
        scoring = any(self.scorers)
        if scoring and TOOL_CALL_TAG.search(text) is not None:
            self.scored_call = True
        if OBSERVATION_TAG.search(text) is None:
            return
        self.tagged = True
        if self.scored_tag is None and scoring:
            self.scored_tag = (node, self.context.statements[-1] if self.context.statements else None)

    def finish(self) -> None:
        # (after every detector: a trainer's stage reported as another detector leaves the module
        # counts, whatever the detectors' order)
        if self.loop is not None and self.generates and self.tagged:
            message = "a loop over turns generates and splices a tool's result back into the text"
            self.report(self.loop, "interactive", message, statement=self.loop, interactive=True)
        elif self.agent_loop is not None and self.tagged:
            message = "a loop generates, then runs the tool calls, whose results go back tagged into the text"
            self.report(self.agent_loop, "interactive", message, statement=self.agent_loop, interactive=True)
        elif self.turn_tool_loop is not None and not any(f.signal == "stage" for f in self.context.findings):
            # its turns are counted: what the tools return goes on into the next turn, however it is
            # put into the conversation (a chat message built by a helper, no tag). Beside a trainer
            # the file builds (TRL's GRPOTrainer samples for itself), such a loop is not known to
            # feed it: a check of the trained model as often
            message = "a loop over turns generates, then runs the tool calls the policy wrote"
            self.report(
                self.turn_tool_loop, "interactive", message, statement=self.turn_tool_loop, interactive=True
            )
        elif self.stopped_loop is not None and self.tool_stops:
            message = "a loop generates until the policy calls a tool (its stop strings), then goes on"
            self.report(
                self.stopped_loop, "interactive", message, statement=self.stopped_loop, interactive=True
            )
        elif self.scored_tag is not None and self.scored_call and not self.generates:
            # a reward that reads the tool results spliced into a response (``<result>...</result>``)
            # scores trajectories of several turns, whoever plays them
            message = "a reward reads the tool results spliced into the responses it scores"
            node, statement = self.scored_tag
            self.report(
                node,
                "interactive",
                message,
                statement=statement,
                interactive=True,
                variant=SCORED_TOOL_RESULTS,
            )
