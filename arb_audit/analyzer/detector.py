"""The route detector: one class per file under ``analyzer/detectors/``, written like a Fixit rule.

A detector subclasses :class:`RouteDetector` (a libcst ``BatchableCSTVisitor``): its docstring is its
documentation, its ``visit_<Node>`` methods call :meth:`RouteDetector.report`, and its ``VALID`` and
``INVALID`` examples — code it must stay silent on, and code it must report — are turned into tests.
Names are resolved with :meth:`RouteDetector.names` (qualified-name sets, see
:mod:`arb_audit.analyzer.names`), never by reading ``Name.value`` of an imported thing.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import libcst as cst

from arb_audit.analyzer.names import NameResolver, Scope
from arb_audit.analyzer.trainers import Trainer, resolve_trainer

Signal = Literal[
    "stage",
    "interactive",
    "on_policy",
    "generation",
    "scoring",
    "data_output",
    "environment",
    "reward_function",
    "reward_named",
    "dispatch",
    "weight_edit",
    "inference",
    "adapter",
    "loss",
    "variant",
    "reward_head",
    "gradient_step",
    "tensor_output",
    "entry_point",
    "place",
    "purpose",
]
"""What a finding says about the file:

- ``stage``: a training stage runs here (``kind``, ``variant``, ``on_policy``, ``data_source``);
- ``interactive``: policy-gradient samples are multi-turn trajectories in an environment or with tools;
- ``on_policy``: samples are generated from the policy inside the training loop;
- ``generation``: text is generated with a model or an API (evaluation or data generation);
- ``scoring``: generated output is scored against references or a benchmark;
- ``data_output``: generated examples are written out as a dataset;
- ``environment``: an environment is defined or driven (reset/step) — a component of online RL;
- ``reward_function``: a reward function is defined — a component of GRPO/PPO;
- ``reward_named``: a function or callable class named for a reward is defined — a component of GRPO/PPO
  when nothing in the file runs a model (else it is a reward model's scorer, served or evaluated);
- ``dispatch``: the route is picked by a flag, config key or table (``routes``, ``default``);
- ``weight_edit``: weights are edited without training (surgery, extraction);
- ``inference``: the model runs without gradients (scoring, serving);
- ``adapter``: the training updates a LoRA adapter (``variant`` ``lora`` or ``qlora``);
- ``loss``: a stage's loss is implemented here (``kind``) for another file to train with;
- ``variant``: a config names the algorithm variant of the stage of its ``kind``;
- ``reward_head``: the model trained is a scalar scorer (a generic trainer's stage is a reward model);
- ``gradient_step``: weights are updated here (``backward``, an optimiser's or engine's ``step``, a trainer's
  ``train``); ``kind`` is what its loss optimises, None when the loss could not be classified;
- ``tensor_output``: tensors are written to a file (converted or quantised weights, extracted features);
- ``entry_point``: the file runs something when executed (a script, not a library of definitions);
- ``place``: the file's path says what it is (an evaluation folder: its written outputs are answers);
- ``purpose``: what a model's outputs are for (``variant``): answers to held-out questions, or training data.
"""


@dataclass(slots=True)
class Finding:
    """One thing a detector saw, with where it saw it."""

    detector: str
    """The detector's class name."""
    signal: Signal
    """What it says about the file."""
    kind: str | None = None
    """Stage kind (``sft``, ``dpo``, ``grpo``, ``ppo``, ``reward_model``, ``merge``) of a ``stage``."""
    variant: str | None = None
    """The algorithm variant (``kto``, ``rloo``, ``online_dpo``...), where known."""
    on_policy: bool | None = None
    """Whether samples come from the current policy, where known."""
    interactive: bool | None = None
    """Whether samples are multi-turn trajectories, where known."""
    data_source: str | None = None
    """``given``, ``self_generated``, ``distilled`` or ``benchmark_derived``, where known."""
    routes: tuple[str, ...] = ()
    """For ``dispatch``: the file labels the choice can select."""
    default: str | None = None
    """For ``dispatch``: the label selected when nothing is set."""
    key: str | None = None
    """For ``dispatch``: the setting that chooses, as a dotted config key (``trainer.algorithm.name``,
    ``stage`` for ``--stage``), where known: a config file of the workspace may set it."""
    message: str = ""
    """Why this is evidence, in a few words."""
    line: int = 0
    """1-based line in the file (0 until located)."""
    col: int = 0
    """0-based column."""
    excerpt: str = ""
    """The source line, trimmed."""
    path: str | None = None
    """The file it was seen in, when not the classified file itself (a workspace module it calls)."""
    node: cst.CSTNode | None = field(default=None, repr=False, compare=False)
    """The node reported (not serialised)."""
    statement: cst.CSTNode | None = field(default=None, repr=False, compare=False)
    """The innermost statement around it, for locating it."""


@dataclass(frozen=True, slots=True)
class Valid:
    """Code a detector must stay silent on."""

    code: str
    """The example."""


@dataclass(frozen=True, slots=True)
class Invalid:
    """Code a detector must report, and what the report must say."""

    code: str
    """The example."""
    signal: Signal
    """The signal expected."""
    kind: str | None = None
    """The stage kind expected, if any."""
    variant: str | None = None
    """The variant expected, if any."""
    routes: tuple[str, ...] = ()
    """For ``dispatch``: labels that must all be among the reported routes."""


class FileContext:
    """What detectors share while one file is walked: names, the current scope, findings."""

    def __init__(self, resolver: NameResolver, text: str = "") -> None:
        self.resolver = resolver
        """Bindings of the file's scopes."""
        self.text = text
        """The file's source ("" where a caller walks a tree it built itself)."""
        self._identifiers: Counter[str] | None = None
        self.scope: Scope = resolver.module_scope
        """The scope being walked."""
        self.statements: list[cst.CSTNode] = []
        """Statements around the node being walked, outermost first."""
        self.findings: list[Finding] = []
        """Everything reported so far."""
        self.qualified: dict[int, tuple[Scope, frozenset[str]]] = {}
        """Qualified names of the expressions looked up so far, by node, with the scope they were read
        in: most detectors ask for the callee of every call, and a name's meaning in one scope does not
        change (asked in another scope, they are read again)."""
        self.enclosing: dict[str, tuple[str, ...]] = {}
        """The classes and functions a scope's prefix names, by prefix (see RouteDetector.enclosing)."""
        self.trainers: dict[int, tuple[Scope, tuple[str, Trainer] | None]] = {}
        """The trainer each call looked up so far constructs, by call, as for names."""
        self.generation: dict[int, tuple[Scope, bool]] = {}
        """Whether each call asked so far samples text (``calls.is_generation``), by call, as for names:
        several detectors ask it of every call."""
        self.generation_helpers: dict[int, tuple[Scope, bool]] = {}
        """Whether each call asked so far calls a helper named for asking a model for text, likewise."""

    def mentions(self, name: str) -> int | None:
        """Return how many times an identifier is spelled in the file's source (None: no source).

        A name spelled once is bound and never read (``eval_path = "dev.jsonl"`` left over): what it
        is called says nothing of what the file does. The count is the whole file's, scope-blind, and
        takes in words of strings and comments too (a use commented out counts): it errs towards a name
        being read. Identifiers are compared as Python compares them (NFKC-normalised). Counted once per
        file, on first ask.
        """
        if not self.text:
            return None
        if self._identifiers is None:
            self._identifiers = Counter(IDENTIFIER.findall(unicodedata.normalize("NFKC", self.text)))
        return self._identifiers[unicodedata.normalize("NFKC", name)]


IDENTIFIER = re.compile(r"[^\W\d]\w*")
"""An identifier as Python spells one (keywords and the words of strings and comments match too)."""
MAX_MESSAGE = 240
"""Longest message a finding keeps (characters)."""


class RouteDetector(cst.BatchableCSTVisitor):
    """Base of every detector; subclasses document themselves in their docstring."""

    VALID: ClassVar[tuple[Valid, ...]] = ()
    """Examples it must not report."""
    INVALID: ClassVar[tuple[Invalid, ...]] = ()
    """Examples it must report."""
    TRIGGERS: ClassVar[tuple[str, ...]] = ()
    """Substrings one of which any code it reports must contain: a file with none of them is not
    walked for this detector, and a file that triggers no detector is not even parsed by libcst."""
    READS_INERT_CALLS: ClassVar[bool] = False
    """Whether its ``visit_Call``/``leave_Call`` read calls of conversion and type-test builtins too
    (``len``, ``isinstance``: ``walk.INERT_BUILTINS``); other detectors' hooks are not called on them."""

    def __init__(self, context: FileContext) -> None:
        super().__init__()
        self.context = context

    def enclosing(self) -> tuple[str, ...]:
        """Return the names of the classes and functions around the node being visited, outermost first.

        Read from the resolver's scope (``Cls.method.<locals>.``): lambdas and comprehensions are not
        named, and a ``def`` or ``class`` is around its own body (and its own ``visit`` hook). Split
        once per scope: detectors ask it of every call.
        """
        scope = self.context.scope
        found = self.context.enclosing.get(scope.prefix)
        if found is None:
            found = self.context.enclosing[scope.prefix] = tuple(
                p for p in scope.prefix.split(".") if p and not p.startswith("<")
            )
        return found

    def names(self, node: cst.CSTNode) -> frozenset[str]:
        """Return the qualified names of a Name or Attribute chain where it is used."""
        context = self.context
        scope = context.scope
        entry = context.qualified.get(id(node))
        if entry is None or entry[0] is not scope:
            entry = context.qualified[id(node)] = (
                scope,
                frozenset(context.resolver.qualified_names(node, scope)),
            )
        return entry[1]

    def trainer(self, node: cst.Call) -> tuple[str, Trainer] | None:
        """Return the trainer class a call constructs (and the name that shows it), if it constructs one."""
        context = self.context
        scope = context.scope
        entry = context.trainers.get(id(node))
        if entry is None or entry[0] is not scope:
            resolver = context.resolver
            entry = context.trainers[id(node)] = (
                scope,
                resolve_trainer(self.names(node.func), resolver.class_bases, resolver.ancestry),
            )
        return entry[1]

    def report_trainer(self, node: cst.CSTNode, message: str, trainer: Trainer) -> None:
        """Record the training stage a trainer class runs."""
        self.report(
            node,
            "stage",
            message,
            kind=trainer.kind,
            variant=trainer.variant,
            on_policy=trainer.on_policy,
            data_source=trainer.data_source,
        )

    def finish(self) -> None:
        """Run once every detector has left the module (after the walk), in the detectors' order.

        For a decision that weighs what other detectors found (a finding of theirs made as they leave
        the module is there by now, whatever their names' order).
        """

    def report(
        self,
        node: cst.CSTNode,
        signal: Signal,
        message: str,
        statement: cst.CSTNode | None = None,
        **details: object,
    ) -> Finding:
        """Record a finding at ``node`` and return it; ``details`` are :class:`Finding` fields.

        ``statement``: the statement around ``node`` when reporting after the walk has left it.
        """
        if statement is None and self.context.statements:
            statement = self.context.statements[-1]
        if len(message) > MAX_MESSAGE:
            # messages quote names from the file: a hostile one is not copied whole into the report
            message = message[: MAX_MESSAGE - 1] + "…"
        finding = Finding(
            type(self).__name__,
            signal,
            message=message,
            node=node,
            statement=statement,
            **details,  # type: ignore[arg-type]
        )
        self.context.findings.append(finding)
        return finding


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    """Return the argument passed to ``call`` as ``name=``, if any."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def discover() -> list[type[RouteDetector]]:
    """Return every detector class under ``arb_audit.analyzer.detectors``, found by walking the package."""
    import arb_audit.analyzer.detectors as package

    found: list[type[RouteDetector]] = []
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for _, member in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(member, RouteDetector)
                and member is not RouteDetector
                and member.__module__ == module.__name__
            ):
                found.append(member)
    return sorted(found, key=lambda d: d.__name__)
