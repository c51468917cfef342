"""Training on the turns of stored multi-turn episodes: each turn's tokens or log-probs, by episode."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

STORED_TURNS = "stored_turns"
"""Variant of an ``interactive`` finding: the file reads the policy's tokens or log-probs turn by turn
from episodes an environment loop played (recorded, or collected by another module)."""
EPISODE_WORDS = frozenset({"episode", "episodes", "trajectory", "trajectories", "traj", "trajs", "ep", "eps"})
"""Words of an episode (or a collection of them) whose turns a loop walks."""
TURN_FIELD_WORDS = frozenset(
    {
        *("token", "tokens", "ids", "logprob", "logprobs", "logp", "logps", "log", "probs", "completion"),
        *("action", "actions", "response", "mask"),
    }
)
"""Words of a turn's field that the policy wrote or scored (``turn.completion_token_ids``,
``turn["old_logprobs"]``): what a policy-gradient update reads; a turn's text, length or index is
read by reports as well."""


def _turns_of(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """Return the episode a loop walks the turns of (``trajectory.turns``, ``ep["turns"]``), if it does.

    Through ``enumerate`` too (``for i, turn in enumerate(traj.turns)``).
    """
    if (
        type(iterable) is cst.Call
        and type(iterable.func) is cst.Name
        and iterable.func.value == "enumerate"
        and iterable.args
    ):
        iterable = iterable.args[0].value
    if type(iterable) is cst.Attribute and iterable.attr.value == "turns":
        return iterable.value
    if (
        type(iterable) is cst.Subscript
        and len(iterable.slice) == 1
        and type(iterable.slice[0].slice) is cst.Index
        and type(key := iterable.slice[0].slice.value) is cst.SimpleString
        and literal_text(key) == "turns"
    ):
        return iterable.value
    return None


def _turn_target(target: cst.BaseExpression) -> str | None:
    """Return the name a loop binds to each turn (``turn``, or ``turn`` of ``i, turn``)."""
    if type(target) is cst.Tuple and target.elements:
        target = target.elements[-1].value
    return target.value if type(target) is cst.Name else None


def _policy_field(node: cst.CSTNode, turn: str) -> bool:
    """Say whether a node reads a field of the turn the policy wrote or scored (``turn.old_logprobs``)."""
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == turn:
        return bool(TURN_FIELD_WORDS & set(words(node.attr.value)))
    if (
        type(node) is cst.Subscript
        and type(node.value) is cst.Name
        and node.value.value == turn
        and len(node.slice) == 1
        and type(node.slice[0].slice) is cst.Index
        and type(key := node.slice[0].slice.value) is cst.SimpleString
    ):
        return bool(TURN_FIELD_WORDS & set(words(literal_text(key))))
    return False


class EpisodeTurns(RouteDetector):
    """A loop over the turns of an episode that reads what the policy wrote at each turn.

    Multi-turn agent RL often splits the environment loop from the update: a collector plays the
    episodes and records, for every turn, the prompt the policy saw, the tokens it wrote and their
    log-probs; the update walks them episode by episode (``for trajectory in group.trajectories:
    for turn in trajectory.turns: logp = score(turn.completion_token_ids, ...)``). Samples that are
    the turns of an environment's episodes make a policy-gradient stage online RL (TAXONOMY.md), though
    no environment is stepped in the file. A loop in a function named for evaluation, a demo or a
    report does not count, nor does one that reads only a turn's text or its length.
    """

    TRIGGERS = ("turns",)

    VALID = (
        # a report over episodes' turns: their count and text, nothing the policy scored
        Valid(
            "def summarize(episodes):\n    for ep in episodes:\n        for turn in ep.turns:\n"
            "            print(len(turn.text))\n"
        ),
        # an evaluation walks the turns of the episodes it played
        Valid(
            "def evaluate(policy, episodes):\n    for ep in episodes:\n        for turn in ep.turns:\n"
            "            score(turn.completion_token_ids)\n"
        ),
        # a chat's turns: no episode of an environment
        Valid("for turn in conversation.turns:\n    ids = tok(turn.content)['input_ids']\n"),
        Valid("turns = 3\nfor t in range(turns):\n    step()\n"),
    )
    INVALID = (
        Invalid(
            "def policy_loss(group):\n    for trajectory in group.trajectories:\n"
            "        for turn in trajectory.turns:\n"
            "            logp = score(model, turn.prompt_token_ids, turn.completion_token_ids)\n"
            "            ratio = (logp - turn.old_policy_logprobs).exp()\n",
            "interactive",
            variant=STORED_TURNS,
        ),
        Invalid(
            "def update(batch):\n    for i, episode in enumerate(batch.episodes):\n"
            "        for turn in episode.turns:\n"
            "            total = total + logprob_of(turn.action_tokens)\n",
            "interactive",
            variant=STORED_TURNS,
        ),
        Invalid(
            "for traj in rollouts:\n    for j, turn in enumerate(traj['turns']):\n"
            "        masks.append(turn['loss_mask'])\n",
            "interactive",
            variant=STORED_TURNS,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.functions: list[str] = []
        self.found = False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_For(self, node: cst.For) -> None:
        if self.found or (episode := _turns_of(node.iter)) is None:
            return
        if not EPISODE_WORDS & set(words(last_name(episode) or "")):
            return  # (``conversation.turns``: a chat's turns, no environment's episode)
        if any(NOT_TRAINING_SCOPES & set(words(name)) for name in self.functions):
            return  # an evaluation's or a demo's loop over the episodes it played
        turn = _turn_target(node.target)
        if turn is not None and any(_policy_field(n, turn) for n in descendants(node.body)):
            self.found = True
            statement = self.context.statements[-1] if self.context.statements else None
            message = "reads what the policy wrote at each turn of stored multi-turn episodes"
            self.report(node, "interactive", message, statement=statement, variant=STORED_TURNS)
