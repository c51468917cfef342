"""PostTrainBench folder names: the method folder and the run folder inside it.

``src/run_task.sh`` names them ``{agent}_{agent_config_safe}_{H}h[_{N}gpu]{experiment}/`` and
``{task}_{org}_{model}_{cluster_id}/``, where ``*_safe`` replaces each of ``/ : [ ]`` with ``_`` (so the
mapping back is not always exact: ``claude-opus-4-6[1m]`` becomes ``claude-opus-4-6_1m_``). Names come
from untrusted folders: a name that does not fit gives None fields, never an exception.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NAME_CHARS = 255
"""Longer names are not folder names any file system gives; they are not parsed."""
MAX_CLUSTER_DIGITS = 18
"""HTCondor cluster ids have about 8 digits; more than this is not a cluster id (and stays an exact int)."""
SCAFFOLDS = ("claude", "codex", "gemini", "opencode")
"""The agent CLI families PostTrainBench's trace parser tells apart, by substring of the agent name."""
KNOWN_AGENTS = (
    "claude",
    "claude_non_api",
    "claude_non_api_max",
    "claude_reprompt",
    "codex",
    "codex_non_api",
    "codex_non_api_high",
    "codex_non_api_high_reprompt",
    "codex_non_api_max",
    "codex_non_api_reprompt",
    "codex_non_api_xhigh",
    "codex_non_api_xhigh_reprompt",
    "codex_xhigh",
    "codex_xhigh_reprompt",
    "codexhigh",
    "codexlow",
    "cursor_cli",
    "gemini",
    "glm5",
    "glmx",
    "grok_cli",
    "kimi_claude",
    "mcode",
    "opencode",
    "qwen3max",
    "ra",
)
"""Agent folder names under ``agents/`` in the PostTrainBench repository (May 2026). Agent names hold
``_`` just as agent configs do, so only a known name can split them; an unknown agent is taken to be
the first ``_``-token."""
SCAFFOLD_ALIASES = {"glm5": "claude", "qwen3max": "claude"}
"""Agents whose names say no family but that run Claude Code against another provider's endpoint."""

_OUTER = re.compile(
    r"(?P<head>.+?)_(?P<hours>\d{1,4}(?:\.\d{1,4})?)h(?:_(?P<gpus>\d{1,3})gpu)?(?P<experiment>(?:_.*)?)",
    re.DOTALL,
)
_INNER = re.compile(r"(?P<task>[^_]+)_(?P<middle>.+)_(?P<cluster>\d+)", re.DOTALL)
_STAMPED = re.compile(
    r"(?P<task>[^_]+)_(?P<middle>.+)_(?P<cluster>20\d\d(?:0[1-9]|1[0-2])(?:[0-2]\d|3[01])_[0-2]\d[0-5]\d[0-5]\d)",
    re.DOTALL,
)
"""A run id that is a timestamp, ``YYYYMMDD_HHMMSS`` (real runs outside HTCondor are named so)."""


@dataclass(frozen=True, slots=True)
class MethodName:
    """A method (agent configuration) folder name, ``{agent}_{config}_{H}h[_{N}gpu]{experiment}``."""

    name: str
    """The folder name as found."""
    agent: str | None = None
    """The agent (``claude``, ``claude_non_api``, ``codexhigh``, ...); None when the name does not fit."""
    scaffold: str | None = None
    """The CLI family (``claude``, ``codex``, ``gemini``, ``opencode``); None when none or several match."""
    agent_config: str | None = None
    """The agent configuration, usually the driving model, in its folder-safe form (``claude-opus-4-6``)."""
    hours: float | None = None
    """The time budget in hours."""
    gpus: int | None = None
    """GPUs given to the run: the ``_{N}gpu`` part, or 1 when the name fits and has none."""
    experiment: str | None = None
    """The experiment suffix as written (``_run2``, ``_v6_seed1``); empty when there is none."""

    @property
    def budget_s(self) -> float | None:
        """The time budget in seconds, from ``hours``."""
        return self.hours * 3600 if self.hours is not None else None


@dataclass(frozen=True, slots=True)
class RunName:
    """A run folder name, ``{task}_{org}_{model}_{cluster_id}``."""

    name: str
    """The folder name as found."""
    task: str | None = None
    """The benchmark task id (``gsm8k``); task ids hold no ``_``."""
    org: str | None = None
    """The base model's organisation (``Qwen``, ``google``, ``HuggingFaceTB``)."""
    model: str | None = None
    """The base model's name in its folder-safe form (``Qwen3-4B-Base``)."""
    cluster_id: int | None = None
    """The run id as a number (an HTCondor cluster id, or a ``YYYYMMDD_HHMMSS`` timestamp's digits); the
    highest one per (method, task, model) is the run that counts."""
    run_id: str | None = None
    """The run id as the name writes it (``16852431``, ``20260316_205609``)."""

    @property
    def base_model(self) -> str | None:
        """The base model id rebuilt as ``org/model`` (``Qwen/Qwen3-4B-Base``); None when incomplete."""
        return f"{self.org}/{self.model}" if self.org and self.model else None

    @property
    def complete(self) -> bool:
        """Whether every part of the name was found (only such names count as run folders)."""
        return None not in (self.task, self.org, self.model, self.cluster_id)


def _cluster(digits: str) -> int | None:
    digits = digits.replace("_", "")
    return int(digits) if digits.isdigit() and len(digits) <= MAX_CLUSTER_DIGITS else None


def safe_name(model: str) -> str:
    """Return a model id in its folder-safe form, as run_task.sh writes it (each of ``/ : [ ]`` → ``_``)."""
    return re.sub(r"[/:\[\]]", "_", model)


def parse_run_name(name: str, model: str | None = None) -> RunName:
    """Parse a run folder name; parts that cannot be found are None.

    ``model``, the base model the run's own files name (output.log's args line), splits the name
    exactly when it fits; without it, a run id is the trailing number, or a ``YYYYMMDD_HHMMSS``
    timestamp.
    """
    if len(name) > MAX_NAME_CHARS or "/" in name:
        return RunName(name)
    if model and "/" in model and (known := _with_model(name, model)) is not None:
        return known
    match = _STAMPED.fullmatch(name) or _INNER.fullmatch(name)
    if match is None:
        return RunName(name)
    run_id = match["cluster"]
    org, sep, model_part = match["middle"].partition("_")
    if not (sep and org and model_part):
        # Only three parts: the aggregators refuse these, so the model is not guessed either.
        return RunName(name, task=match["task"], cluster_id=_cluster(run_id), run_id=run_id)
    return RunName(
        name, task=match["task"], org=org, model=model_part, cluster_id=_cluster(run_id), run_id=run_id
    )


def _with_model(name: str, model: str) -> RunName | None:
    """Split ``name`` as ``{task}_{safe(model)}_{id}`` when it fits, else None."""
    task, sep, rest = name.partition("_")
    prefix = safe_name(model) + "_"
    if not (sep and task and rest.startswith(prefix)) or len(rest) == len(prefix):
        return None
    run_id = rest[len(prefix) :]
    if not re.fullmatch(r"[\w.\-]{1,64}", run_id):
        return None
    org, _, model_part = model.partition("/")
    return RunName(name, task=task, org=org, model=model_part, cluster_id=_cluster(run_id), run_id=run_id)


def scaffold_of(agent: str) -> str | None:
    """Return the CLI family of an agent name, as PostTrainBench's parser picks it, or None.

    The parser looks for each family's name inside the agent name and gives up when several match.
    """
    if agent in SCAFFOLD_ALIASES:
        return SCAFFOLD_ALIASES[agent]
    found = [family for family in SCAFFOLDS if family in agent]
    return found[0] if len(found) == 1 else None


def _split_agent(head: str) -> tuple[str | None, str | None]:
    for agent in sorted(KNOWN_AGENTS, key=len, reverse=True):
        if head.startswith(agent + "_") and len(head) > len(agent) + 1:
            return agent, head[len(agent) + 1 :]
    agent, _, config = head.partition("_")
    return agent or None, config or None


def parse_method_name(name: str) -> MethodName:
    """Parse a method folder name; parts that cannot be found are None.

    The first ``_{H}h`` token ends the agent and its config: experiment suffixes are free text, model
    names rarely hold one.
    """
    if len(name) > MAX_NAME_CHARS or "/" in name:
        return MethodName(name)
    match = _OUTER.fullmatch(name)
    if match is None:
        return MethodName(name)
    agent, config = _split_agent(match["head"])
    return MethodName(
        name,
        agent=agent,
        scaffold=scaffold_of(agent) if agent else None,
        agent_config=config,
        hours=float(match["hours"]),
        gpus=int(match["gpus"]) if match["gpus"] else 1,
        experiment=match["experiment"],
    )
