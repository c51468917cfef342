"""Training on the turns of stored multi-turn episodes: each turn's tokens or log-probs, by episode."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.multi_turn_loop import DATA_SCOPES, NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name, literal_text
from arb_audit.analyzer.walk import descendants

STORED_TURNS = "stored_turns"
"""Variant of an ``interactive`` finding: the file reads the policy's tokens or log-probs turn by turn
from episodes an environment loop played (recorded, or collected by another module)."""
EPISODE_WORDS = frozenset({"episode", "episodes", "trajectory", "trajectories", "traj", "trajs", "ep", "eps"})
"""Words of an episode (or a collection of them) whose turns a loop walks."""
SCORED_FIELD_WORDS = frozenset({"logprob", "logprobs", "logp", "logps", "mask", "token", "tokens"})
"""Words of a turn's field that a policy-gradient update reads: log-probabilities, a loss mask, token
ids (``turn.old_logprobs``, ``turn.completion_token_ids``, ``turn["loss_mask"]``)."""
POLICY_OUTPUT_WORDS = frozenset({"generated", "completion", "action", "response", "output", "sampled"})
"""Words of a turn's field the policy wrote; with ``ids`` beside them, its tokens (``turn.generated_ids``,
``action_ids``). Alone they name text, which reports read too (``turn.action``, ``turn.response``), and
other ids are bookkeeping (``turn.tool_call_ids``)."""
REPORT_SCOPES = frozenset(
    {
        *("log", "logs", "logging", "plot", "plots", "report", "summary", "summarize", "summarise"),
        *("dump", "save", "debug", "write", "print", "show", "visualize", "visualise", "table", "stats"),
        *("statistics", "evaluator", "export", "sft", "buffer", "replay"),
    }
)
"""Words of a function or class around a loop over turns that reports, stores or exports them (a W&B
table of completions, a debug dump, turns written out for SFT): no update trains on them there."""


OTHER_SCOPES = NOT_TRAINING_SCOPES | DATA_SCOPES | REPORT_SCOPES
"""Words of a function or class whose loops over turns feed no update."""


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
    field = None
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == turn:
        field = node.attr.value
    elif (
        type(node) is cst.Subscript
        and type(node.value) is cst.Name
        and node.value.value == turn
        and len(node.slice) == 1
        and type(node.slice[0].slice) is cst.Index
        and type(key := node.slice[0].slice.value) is cst.SimpleString
    ):
        field = literal_text(key)
    if field is None:
        return False
    said = set(words(field))
    return bool(said & SCORED_FIELD_WORDS or ("ids" in said and said & POLICY_OUTPUT_WORDS))


class EpisodeTurns(RouteDetector):
    """A loop over the turns of an episode that reads what the policy wrote at each turn.

    Multi-turn agent RL often splits the environment loop from the update: a collector plays the
    episodes and records, for every turn, the prompt the policy saw, the tokens it wrote and their
    log-probs; the update walks them episode by episode (``for trajectory in group.trajectories:
    for turn in trajectory.turns: logp = score(turn.completion_token_ids, ...)``). Samples that are
    the turns of an environment's episodes make a policy-gradient stage online RL (TAXONOMY.md), though
    no environment is stepped in the file. A loop in a function or class named for evaluation, a demo,
    building data or reporting (logging, plotting, dumping, exporting for SFT) does not count, nor does
    one that reads only a turn's text, its length or ids of other things. Episodes read back from a
    file count as well: whether a policy played them is not told apart here.
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
        # a report of completions (a W&B table), and a log of the text the policy wrote
        Valid(
            "def log_samples(step, trajectories, tok):\n    for trajectory in trajectories:\n"
            "        for i, turn in enumerate(trajectory.turns):\n"
            "            table.add_data(step, tok.decode(turn.completion_ids), sum(turn.logprobs))\n"
        ),
        Valid(
            "for traj in batch.trajectories:\n    for turn in traj.turns:\n"
            "        logger.info('action=%s response=%s', turn.action, turn.response)\n"
            "        n += len(turn.tool_call_ids)\n"
        ),
        Valid(
            "class RolloutEvaluator:\n    def run(self, episodes):\n        for ep in episodes:\n"
            "            for turn in ep.turns:\n                score(turn.logprobs)\n"
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
        self.found = False
        """Whether a loop has been reported (one finding per file)."""

    def visit_For(self, node: cst.For) -> None:
        if self.found or (episode := _turns_of(node.iter)) is None:
            return
        if not EPISODE_WORDS & set(words(last_name(episode) or "")):
            return  # (``conversation.turns``: a chat's turns, no environment's episode)
        if any(set(words(name)) & OTHER_SCOPES for name in self.enclosing()):
            return  # an evaluation's, a demo's or a report's loop over the episodes played
        turn = _turn_target(node.target)
        if turn is not None and any(_policy_field(n, turn) for n in descendants(node.body)):
            self.found = True
            statement = self.context.statements[-1] if self.context.statements else None
            message = "reads what the policy wrote at each turn of stored multi-turn episodes"
            self.report(node, "interactive", message, statement=statement, variant=STORED_TURNS)
