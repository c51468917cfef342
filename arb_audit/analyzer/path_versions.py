"""Which command's output a path held at a moment of the run: a path is a variable, not a name.

Each command that trains into a path, copies or moves something onto it, or deletes it gives it a new
version; a submitted artifact is the version its path held when it was graded. A command only makes what
it finished making: one that failed, or that never reported its end (cut off, a background launch never
reported done), is passed over, unless the artifact's own files show its work (its trainer log names
that command's stage, or its files were written after that command started and before the run ended).

Moments are ``(command seq, part)``: the part is the command's shell segment (``rm -rf m && cp -r b m``
deletes, then copies), so a version can be made and read within one command line.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from arb_audit.analyzer.classify import Stage
from arb_audit.analyzer.scripts_run import MAX_SEGMENT_CHARS, ScriptRun
from arb_audit.analyzer.shell_words import shell_words
from arb_audit.model import ArtifactInfo, Command
from arb_audit.taxonomy.trainer_logs import kind_from_log_keys

Moment = tuple[int, int]
"""``(command seq, part of its command line)``."""
END: Moment = (2**62, 0)
"""After every command."""
How = Literal["trained", "copied", "moved", "deleted"]

SEGMENTS = re.compile(r"&&|\|\||[;|&\n]")
"""Where a command line's parts end (as :mod:`arb_audit.analyzer.scripts_run` splits them)."""
_COPY = re.compile(r"^(?:cp|rsync|mv)$")
_FILE_WORD = re.compile(r"\b(?:cp|rsync|mv|rm)\b")
_SHUTIL = re.compile(
    r"shutil\.(copytree|move|rmtree)\(\s*[\"']([^\"'\n]{1,300})[\"']"
    r"(?:\s*,\s*[\"']([^\"'\n]{1,300})[\"'])?"
)
"""``shutil.copytree("a", "b")``, ``shutil.move("a", "b")``, ``shutil.rmtree("a")`` in a ``python -c``."""


@dataclass(frozen=True, slots=True)
class Write:
    """One command's effect on a path: the version it gave it."""

    at: Moment
    """When."""
    how: How
    """Trained into it, copied or moved onto it, or deleted it."""
    source: str | None = None
    """What was copied or moved onto it."""
    run: ScriptRun | None = None
    """The training script run that wrote it."""
    stage: Stage | None = None
    """The stage that script implements."""
    done: bool = True
    """Whether the command finished making it (see :func:`finished`)."""
    named_only: bool = False
    """The script names the path but not as its output (it counts only when no script writes it)."""

    @property
    def seq(self) -> int:
        """The command that made it."""
        return self.at[0]


def finished(command: Command) -> bool:
    """Tell whether a command finished without a reported failure (an unknown exit code is no failure)."""
    return command.finished and not command.error and command.exit_code in (0, None)


def same_path(word: str, artifact: str) -> bool:
    """Tell whether a path, as a command or script writes it, names the artifact.

    Its tail matches, or the artifact lies under it (an ``output_dir`` whose trainer saved
    ``checkpoint-N`` inside); a bare folder name such as ``outputs`` is too common to count for that.
    """
    word = word.rstrip("/").removeprefix("./")
    if not word:
        return False
    same = word == artifact or word.endswith("/" + artifact) or artifact.endswith("/" + word)
    return same or ("/" in word and artifact.startswith(word + "/"))


def _holds(word: str, artifact: str) -> bool:
    """Tell whether deleting ``word`` deletes the artifact: it names it, or a folder the artifact is in."""
    word = word.rstrip("/").removeprefix("./")
    return bool(word) and (same_path(word, artifact) or artifact.startswith(word + "/"))


def copy_source(segment: str, artifact: str) -> str | None:
    """Return the source of a ``cp -r SRC DST`` / ``mv`` / ``rsync`` segment onto ``artifact``."""
    found = _copy(segment)
    if found is None:
        return None
    source, target = found
    if not same_path(target, artifact) or same_path(source, artifact):
        return None  # not a copy onto the artifact (or a backup of the artifact itself)
    # A file copied into the model folder (a chat template, a config) is an edit, not its origin.
    if target.endswith("/") and posixpath.basename(source) != posixpath.basename(artifact):
        return None
    if posixpath.splitext(source)[1] or "*" in source:
        return None
    return source


def _words(segment: str) -> list[str] | None:
    if len(segment) > MAX_SEGMENT_CHARS or not _FILE_WORD.search(segment):
        return None  # shlex is slow on long text; a file command is short and names its program
    return shell_words(segment, comments=True)


def _copy(segment: str) -> tuple[str, str] | None:
    """Return ``(source, target)`` of a two-path ``cp``/``mv``/``rsync`` segment, as written."""
    words = _words(segment)
    if not words or len(words) < 3 or not _COPY.match(words[0].rsplit("/", 1)[-1]) or "-t" in words:
        return None
    paths = [w for w in words[1:] if not w.startswith("-")]
    return (paths[0].rstrip("/"), paths[1]) if len(paths) == 2 else None


def _deleted(segment: str) -> list[str]:
    """Return the paths an ``rm -r`` segment deletes."""
    words = _words(segment)
    if not words or words[0].rsplit("/", 1)[-1] != "rm":
        return []
    flags = "".join(w[1:] for w in words[1:] if w.startswith("-") and not w.startswith("--"))
    recursive = "r" in flags.lower() or "--recursive" in words
    return [w for w in words[1:] if not w.startswith("-") and "*" not in w] if recursive else []


def file_writes(segment: str, artifact: str) -> list[tuple[How, str | None]]:
    """Return what one command segment does to ``artifact``'s path: copies, moves, deletions, in order."""
    found: list[tuple[How, str | None]] = []
    if (source := copy_source(segment, artifact)) is not None:
        program = (_words(segment) or ["?"])[0].rsplit("/", 1)[-1]
        found.append(("moved" if program == "mv" else "copied", source))
    elif (pair := _copy(segment)) is not None and pair[0] != pair[1]:
        program = (_words(segment) or ["?"])[0].rsplit("/", 1)[-1]
        if program == "mv" and same_path(pair[0], artifact):
            found.append(("deleted", None))  # moved away: the path holds nothing now
    if any(_holds(w, artifact) for w in _deleted(segment)):
        found.append(("deleted", None))
    if "shutil." in segment:
        for match in _SHUTIL.finditer(segment):
            call, first, second = match[1], match[2], match[3]
            if call == "rmtree" and _holds(first, artifact):
                found.append(("deleted", None))
            elif second and same_path(second, artifact) and not same_path(first, artifact):
                found.append(("moved" if call == "move" else "copied", first.rstrip("/")))
            elif call == "move" and second and same_path(first, artifact):
                found.append(("deleted", None))
    return found


def _part_of(segments: list[str], script: str) -> int:
    """Return the part of a command line that runs ``script`` (the first that names it; else 0)."""
    name = posixpath.basename(script)
    return next((i for i, s in enumerate(segments) if name in s), 0)


Trainings = Callable[[str], list[tuple[ScriptRun, Stage, str]]]
"""A path → every training script run that names it: the run, its stage, and how it names the path
(``writes``, ``names``; see :func:`arb_audit.analyzer.routes.RunCode.mention`)."""


class PathVersions:
    """The versions each path of a run took, command by command."""

    def __init__(
        self,
        commands: list[Command],
        trainings: Trainings,
        artifacts: list[ArtifactInfo],
        run_end: datetime | None,
    ) -> None:
        self._commands = {c.seq: c for c in commands}
        self._order = commands
        self._trainings = trainings
        self._artifacts = {a.path: a for a in artifacts}
        self._run_end = run_end
        self._writes: dict[str, list[Write]] = {}
        self._segments: dict[int, list[str]] = {}

    def command(self, seq: int) -> Command | None:
        """Return command ``seq``."""
        return self._commands.get(seq)

    def _parts(self, command: Command) -> list[str]:
        if command.seq not in self._segments:
            self._segments[command.seq] = SEGMENTS.split(command.command)
        return self._segments[command.seq]

    def writes(self, path: str) -> list[Write]:
        """Return every write of ``path``, in order, done or not.

        In a command that failed or never ended, its file operations before the first part that runs
        a script count (that script is the likelier failure); the rest do not.
        """
        if path in self._writes:
            return self._writes[path]
        found: list[Write] = []
        trained: dict[int, list[tuple[ScriptRun, Stage, str]]] = {}
        for run, stage, how in self._trainings(path):
            trained.setdefault(run.command_seq, []).append((run, stage, how))
        for command in self._order:
            parts = self._parts(command)
            done = finished(command)
            runs = trained.get(command.seq, [])
            first_script = min((_part_of(parts, r.path) for r, _, _ in runs), default=len(parts))
            for i, segment in enumerate(parts):
                for how, source in file_writes(segment, path):
                    found.append(Write((command.seq, i), how, source, done=done or i < first_script))
            for run, stage, how in runs:
                at = (command.seq, _part_of(parts, run.path))
                found.append(
                    Write(at, "trained", run=run, stage=stage, done=done, named_only=how != "writes")
                )
        found.sort(key=lambda w: w.at)
        # A script that only names the path is its producer only when no script writes it.
        if any(w.how == "trained" and not w.named_only for w in found):
            found = [w for w in found if not w.named_only]
        self._writes[path] = found
        return found

    def at(self, path: str, before: Moment = END) -> tuple[Write | None, str | None]:
        """Return the version ``path`` held just before ``before`` (None when no command shows one).

        The reason comes with it where a command that never finished made it: the artifact's own files
        show its work.
        """
        every = self.writes(path)
        writes = [w for w in every if w.at < before]
        made = next((w for w in reversed(writes) if w.done), None)
        # The artifact's files are what the path holds now: they tell only of its last writes.
        if len(writes) != len(every):
            return made, None
        for write in reversed(writes):
            if write.done:
                break
            if write.how == "trained" and (why := self._shows(path, write, made)) is not None:
                return write, why
        return made, None

    def current(self, path: str, write: Write | None) -> bool:
        """Tell whether ``path`` still holds the version ``write`` made (its files are that version's)."""
        return self.at(path)[0] == write

    def _shows(self, path: str, write: Write, before: Write | None) -> str | None:
        """Say how the artifact's own files show that ``write`` (never finished) saved it, or None."""
        info = self._artifacts.get(path)
        if info is None or not info.exists or write.stage is None:
            return None
        keys = info.trainer_evidence.log_keys or []
        logged = kind_from_log_keys(keys) if keys else None
        earlier = before.stage.kind if before is not None and before.stage is not None else None
        if logged is not None and logged[0] == write.stage.kind != earlier:
            return f"its trainer log names {logged[0]} ({', '.join(keys[:6])})"
        command = self._commands.get(write.seq)
        started, saved = command.started_at if command else None, info.latest_mtime
        if started is None or saved is None or self._run_end is None:
            return None
        previous = self._commands.get(before.seq) if before is not None else None
        previous_end = (previous.ended_at or previous.started_at) if previous is not None else None
        if started <= saved <= self._run_end and (previous_end is None or saved > previous_end):
            return f"its files were last written at {saved.isoformat()}, after command {write.seq} started"
        return None
