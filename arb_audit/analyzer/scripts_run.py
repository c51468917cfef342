"""Which code files each command ran (``python train.py``, ``accelerate launch x.py``, ``bash run.sh``).

A command names a script as the agent's shell saw it (``train.py``, ``code/train.py``,
``/home/ben/task/train.py``); the revision in force when it ran lists the files by workspace path. The
script is the file of that revision whose path is the longest tail of the word (so the same rule maps
PostTrainBench's absolute container paths and AutoRL-Bench's ``code/`` prefix).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

from arb_audit.analyzer.shell_words import shell_words
from arb_audit.model import Command, Revision

RUNNERS = frozenset(
    {
        "python",
        "python3",
        "accelerate",
        "torchrun",
        "deepspeed",
        "bash",
        "sh",
        "zsh",
        "llamafactory-cli",
        "axolotl",
        "mergekit-yaml",
        "mergekit-moe",
        "papermill",
        "jupyter",
        "ipython",
        "uv",
        "poetry",
    }
)
"""Programs whose file arguments are the code they run."""
WRAPPERS = {"nohup": 0, "timeout": 1, "srun": 0, "xvfb-run": 0, "env": 0, "sudo": 0, "time": 0, "nice": 0}
"""Programs that run another (with this many leading arguments of their own): the real one follows."""
CODE_SUFFIXES = (".py", ".sh", ".yaml", ".yml", ".ipynb", ".bash")
_SEGMENTS = re.compile(r"&&|\|\||[;|&\n]")
_VERSIONED = re.compile(r"^python\d(\.\d+)?$")
MAX_SEGMENT_CHARS = 4000
"""Longer command segments are not parsed (a here-document body, not a command)."""


@dataclass(frozen=True, slots=True)
class ScriptRun:
    """One code file one command ran."""

    command_seq: int
    """The command."""
    path: str
    """The file's path in the revision."""
    revision_seq: int
    """The revision the file was read at."""
    blob_sha: str
    """Its content (in revisions.git)."""
    exit_code: int | None
    """How the command ended, where known."""
    ok: bool
    """The command finished without a reported failure."""


def _program(word: str) -> str:
    name = word.rsplit("/", 1)[-1]
    return "python" if _VERSIONED.match(name) else name


def _words(segment: str) -> list[str]:
    words = shell_words(segment, comments=True)
    return segment.split() if words is None else words  # (a comment alone has no words)


@dataclass(slots=True)
class ShellDir:
    """Where a command line stands as its ``cd``/``pushd``/``popd`` move it.

    ``path`` is relative to wherever the command started (``""``), absolute, or None once it is
    unknown (``cd ~``, ``cd $VAR``): a script is then found by its own words alone.
    """

    path: str | None = ""
    """The directory now."""
    previous: str | None = None
    """Where ``cd -`` goes."""
    stack: list[str | None] = field(default_factory=list)
    """``pushd``'s stack."""
    subshells: list[tuple[str | None, str | None, int]] = field(default_factory=list)
    """What to go back to when a ``( ... )`` ends: the directory, ``cd -``'s, the stack's depth."""

    def enter(self) -> None:
        """Start a subshell: its moves end with it."""
        self.subshells.append((self.path, self.previous, len(self.stack)))

    def leave(self) -> None:
        """End a subshell: stand where its parent stood."""
        if self.subshells:
            self.path, self.previous, depth = self.subshells.pop()
            del self.stack[depth:]

    def move(self, words: list[str]) -> bool:
        """Follow one ``cd``/``pushd``/``popd`` (``words`` is the whole segment); False if it is none."""
        if not words or words[0] not in ("cd", "pushd", "popd"):
            return False
        args = [w for w in words[1:] if not w.startswith("-") or w == "-"]
        if words[0] == "popd":
            self.previous, self.path = self.path, (self.stack.pop() if self.stack else None)
            return True
        if words[0] == "pushd":
            self.stack.append(self.path)
        target = args[0] if args else "~"
        if target == "-":
            self.previous, self.path = self.path, self.previous
            return True
        self.previous, self.path = self.path, self._join(target)
        return True

    def _join(self, target: str) -> str | None:
        if target.startswith(("~", "$")) or "`" in target or "$(" in target:
            return None  # a home or variable this record cannot know
        if target.startswith("/"):
            return posixpath.normpath(target)
        if self.path is None:
            return None
        return (
            posixpath.normpath(posixpath.join(self.path, target)) if self.path else posixpath.normpath(target)
        )

    def resolve(self, word: str) -> str:
        """Return a path a command names as seen from where it stands (unchanged if absolute or unknown)."""
        if word.startswith("/") or not self.path or self.path == ".":
            return word
        return posixpath.join(self.path, word)


def _named_files(segment: str, depth: int = 0) -> list[str]:
    """Return the code-file arguments of one command segment whose program runs code."""
    words = [w for w in _words(segment.strip().strip("()")) if "=" not in w or w.startswith("-")]
    while words and _program(words[0]) in WRAPPERS:
        skip, rest = WRAPPERS[_program(words[0])], words[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[1:]  # the wrapper's own options come before what it runs
        words = rest[skip:]
    if not words:
        return []
    program = _program(words[0])
    if program in ("bash", "sh", "zsh") and "-c" in words and depth < 2:
        script = words[words.index("-c") + 1] if words.index("-c") + 1 < len(words) else ""
        return [f for part in _SEGMENTS.split(script) for f in _named_files(part, depth + 1)]
    if program not in RUNNERS and not words[0].endswith(CODE_SUFFIXES):
        return []
    named = [w for w in words if w.endswith(CODE_SUFFIXES) and not w.startswith("-")]
    if program == "python" and "-m" in words[:-1]:
        module = words[words.index("-m") + 1]
        named.append(module.replace(".", "/") + ".py")
    return named


def _resolve(word: str, paths: dict[str, str]) -> str | None:
    """Return the revision path that is the longest tail of ``word``, or None."""
    parts = [p for p in word.split("/") if p not in ("", ".")]
    for start in range(len(parts)):
        candidate = "/".join(parts[start:])
        if candidate in paths:
            return candidate
    return None


def _revision_for(command: Command, revisions: list[Revision]) -> Revision | None:
    by_seq = {r.seq: r for r in revisions}
    if command.revision_seq is not None and command.revision_seq in by_seq:
        return by_seq[command.revision_seq]
    # No revision recorded when it ran (no code history): the earliest tree is the best guess.
    return revisions[0] if revisions else None


def scripts_run(commands: list[Command], revisions: list[Revision]) -> list[ScriptRun]:
    """Return every code file of the run's revisions that a command ran, in command order.

    A command's ``cd``/``pushd``/``popd`` move where its later scripts are looked for
    (``cd sub && python train.py`` runs ``sub/train.py``).
    """
    runs: list[ScriptRun] = []
    for command in commands:
        revision = _revision_for(command, revisions)
        if revision is None:
            continue
        paths = {f.path: f.blob_sha for f in revision.files if f.blob_sha}
        seen: set[str] = set()
        where = ShellDir()
        for segment in _SEGMENTS.split(command.command):
            if len(segment) > MAX_SEGMENT_CHARS:
                continue
            text = segment.strip()
            for _ in range(len(text) - len(text.lstrip("("))):
                where.enter()
            if not where.move(_words(text.strip("()"))):
                for word in _named_files(segment):
                    # The file at the path the shell saw, else (tail match) the one its words name.
                    path = _resolve(where.resolve(word), paths)
                    if path is None or path in seen:
                        continue
                    seen.add(path)
                    ok = command.finished and not command.error and command.exit_code in (0, None)
                    runs.append(
                        ScriptRun(command.seq, path, revision.seq, paths[path], command.exit_code, ok)
                    )
            for _ in range(len(text) - len(text.rstrip(")"))):
                where.leave()
    return runs
