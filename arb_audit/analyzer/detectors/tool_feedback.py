"""A turn loop whose tool results go back into the policy's text: a search or code agent's rollout."""

from __future__ import annotations

import re

import libcst as cst

from arb_audit.analyzer.calls import is_generation, is_generation_helper, is_http_post
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.walk import descendants

OBSERVATION_TAG = re.compile(
    r"<(?:information|observation|obs|result|results|output|tool_response|tool_result|interpreter"
    r"|execution_result|search_result|search_results|documents?)>",
    re.IGNORECASE,
)
"""Tags that wrap what a tool returned when it is spliced into the model's text (Search-R1's
``<information>``, code agents' ``<output>``): the next turn reads the world's answer."""
TURN_WORDS = frozenset({"turn", "turns"})


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

    TRIGGERS = tuple(
        f"<{tag}>"
        for tag in (
            *("information", "observation", "obs", "result", "results", "output", "tool_response"),
            *("tool_result", "interpreter", "execution_result", "search_result", "search_results"),
            *("document", "documents"),
        )
    )
    """The observation tags themselves: a file without one cannot show this shape."""

    VALID = (
        Valid("for turn in range(max_turns):\n    out = model.generate(x)\n"),
        Valid("text = f'<information>{docs}</information>'\nout = model.generate(text)\n"),
        Valid(
            "def evaluate(model):\n    for t in range(max_turns):\n        out = model.generate(x)\n"
            "        x = out + f'<information>{search(out)}</information>'\n"
        ),
    )
    INVALID = (
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
        self.loop: cst.CSTNode | None = None
        self.generates = False
        self.tagged = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def _turns(self, node: cst.CSTNode) -> bool:
        """Say whether an expression counts turns (``range(self.config.max_turns)``)."""
        # a name or a config key (``range(CONFIGS["max_turns"])``)
        names = [
            n.value if isinstance(n, cst.Name) else n.value.strip("'\"")
            for n in (node, *descendants(node))
            if isinstance(n, cst.Name | cst.SimpleString)
        ]
        return any(TURN_WORDS & set(words(n)) for n in names)

    def _training_scope(self) -> bool:
        return not any(NOT_TRAINING_SCOPES & set(words(name)) for name in self.functions)

    def visit_For(self, node: cst.For) -> None:
        if self.loop is None and self._turns(node.iter) and self._training_scope():
            self.loop = node

    def visit_While(self, node: cst.While) -> None:
        if self.loop is None and self._turns(node.test) and self._training_scope():
            self.loop = node

    def visit_Call(self, node: cst.Call) -> None:
        # a rollout server is asked over HTTP as often as through a client (``await post(url, payload)``)
        self.generates = (
            self.generates
            or is_generation(node, self.names)
            or is_generation_helper(node, self.names)
            or is_http_post(node, self.names(node.func))
        )

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self.tagged = self.tagged or OBSERVATION_TAG.search(node.value) is not None

    def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
        self.tagged = self.tagged or OBSERVATION_TAG.search(node.value) is not None

    def leave_Module(self, original_node: cst.Module) -> None:
        if self.loop is not None and self.generates and self.tagged:
            message = "a loop over turns generates and splices a tool's result back into the text"
            self.report(self.loop, "interactive", message, interactive=True)
