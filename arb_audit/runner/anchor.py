"""The ledger's anchor: the hash chain's head written outside the store after every append, and checked.

The hash chain inside the store catches an edited row, but not one who rewrites the store whole: delete
the last rows, recompute every hash after a changed score, or append a forged attempt with its hash
chained. So at every append the recorder also appends the new head (seq and record hash) as one line
to ``ledger.anchor`` beside the store, fsync'd before the agent gets its answer.

Why a file of chained lines, not a commit in the revisions repository: the store and the revisions
are both rewritten by tools (DuckDB, the snapshotter) that never read the anchor back, so an anchor in
either shares their fate; a plain append-only file is written with one ``O_APPEND`` write per append
(no lock, no process, no ref to race with a snapshot), survives a store restored from a copy, and can
be read with ``tail``. Each line carries the SHA-256 of the line before it, so a line deleted or edited
in the middle breaks the anchor's own chain. Anything on this disk can be rewritten whole by whoever
owns it: ``record`` prints the final head at its end, to be kept elsewhere, and ``verify --head``
checks the ledger against it.

A recording made before anchors has none (its ``recording.json`` names none): that is said, not failed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arb_audit.chain import GENESIS_HASH, ledger_head, ledger_heads
from arb_audit.model import LedgerCheck, LedgerMismatch
from arb_audit.regular_files import read_regular
from arb_audit.runner.layout import ANCHOR_NAME, Marker
from arb_audit.store import RunStore

MAX_ANCHOR_BYTES = 64 * 1024 * 1024
"""Largest anchor read (a line is some 250 bytes: this holds some 250,000 appends)."""
NO_ANCHOR = "no anchor: edits after recording cannot all be detected"
"""What verify says of a recording made before anchors (not a failure)."""


@dataclass(frozen=True, slots=True)
class AnchorLine:
    """One line of the anchor: the ledger's head after an append (seq 0: the run's start)."""

    number: int
    """Its line number in the file."""
    run_id: str
    """The run whose ledger it anchors."""
    seq: int
    """The last submission's seq then (0 before any)."""
    record_hash: str
    """That submission's record hash (GENESIS_HASH before any)."""


def _line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def read_anchor(path: Path) -> tuple[list[AnchorLine], list[str]]:
    """Return the anchor's lines and what is wrong with it (a broken line chain, unreadable lines)."""
    raw = read_regular(path, MAX_ANCHOR_BYTES)
    problems: list[str] = []
    if len(raw) > MAX_ANCHOR_BYTES:
        return [], [f"is over {MAX_ANCHOR_BYTES:,} bytes; not read"]
    found: list[AnchorLine] = []
    prev = GENESIS_HASH
    for number, line in enumerate(raw.splitlines(), 1):
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            said = (entry["run_id"], entry["seq"], entry["record_hash"], entry["prev"])
            if not (isinstance(said[0], str) and isinstance(said[1], int) and isinstance(said[2], str)):
                raise ValueError("a field of the wrong type")
        except (ValueError, KeyError, RecursionError) as exc:
            problems.append(f"line {number} is not an anchor line ({str(exc)[:100]}): the anchor was edited")
            prev = _line_hash(line)
            continue
        if said[3] != prev:
            problems.append(f"line {number} no longer chains to the line before it: the anchor was edited")
        found.append(AnchorLine(number, said[0], said[1], said[2]))
        prev = _line_hash(line)
    return found, problems


@dataclass
class AnchorWriter:
    """Appends the ledger's head to the anchor (the recorder's, one process at a time)."""

    path: Path
    """The anchor file."""
    last: str = GENESIS_HASH
    """SHA-256 of the last line written (what the next line chains to)."""

    @classmethod
    def open(cls, path: Path) -> AnchorWriter:
        """Continue the anchor at ``path`` (a resumed recording) or start one."""
        writer = cls(path)
        if path.exists() or path.is_symlink():
            raw = read_regular(path, MAX_ANCHOR_BYTES)
            lines = raw.splitlines()
            if lines:
                writer.last = _line_hash(lines[-1])
            if raw and not raw.endswith(b"\n"):
                writer._write(b"\n")  # a line cut short by a kill: the next one starts on its own
        return writer

    def anchor(self, run_id: str, seq: int, record_hash: str) -> str:
        """Append the head ``(seq, record_hash)`` of ``run_id``'s ledger; return the line's hash."""
        entry: dict[str, Any] = {
            "run_id": run_id,
            "seq": seq,
            "record_hash": record_hash,
            "at": datetime.now(UTC).isoformat(),
            "prev": self.last,
        }
        line = json.dumps(entry, separators=(",", ":")).encode()
        self._write(line + b"\n")
        self.last = _line_hash(line)
        return self.last

    def _write(self, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.path, flags, 0o644)
        try:
            os.write(fd, data)  # one write of a short line under O_APPEND: never interleaved
            os.fsync(fd)
        finally:
            os.close(fd)


def anchor_head(writer: AnchorWriter, store: RunStore, run_id: str) -> tuple[int, str]:
    """Anchor the current head of ``run_id``'s ledger in ``store``; return it (seq, record hash)."""
    seq, record_hash = ledger_head(store.con, run_id)
    writer.anchor(run_id, seq, record_hash)
    return seq, record_hash


def _seqs(seqs: list[int]) -> str:
    shown = ", ".join(str(s) for s in seqs[:5])
    return shown + (f" and {len(seqs) - 5} more" if len(seqs) > 5 else "")


def check_ledger(
    run_dir: Path,
    marker: Marker | None,
    store: RunStore,
    run_id: str,
    head: str | None = None,
) -> LedgerCheck:
    """Check ``run_id``'s ledger in ``store``: its hash chain, the anchor beside it and the kept manifests.

    ``head``, when given, is the record hash ``record`` printed at its end: the ledger's last row
    must still be it.
    """
    from arb_audit.runner.artifact_hash import manifest_id  # blake3, only when checking

    found = LedgerCheck()
    broken = store.verify_submission_chain(run_id)
    if broken is not None:
        found.mismatches.append(
            LedgerMismatch(
                "ledger",
                f"submission {broken}",
                "its row no longer matches the hash chain: the ledger was edited",
            )
        )
    rows = dict(ledger_heads(store.con, run_id))
    last = max(rows, default=0)
    if head is not None and (rows.get(last) if rows else GENESIS_HASH) != head:
        found.mismatches.append(
            LedgerMismatch("ledger", f"submission {last}", f"the ledger's head is not {head}, the one given")
        )
    found.mismatches += _against_anchor(run_dir, marker, rows, run_id, found.notes)
    for s in store.load_record(run_id).submissions:
        if s.artifact_id is None:
            continue
        where = f"{s.artifact_path or s.model_path} (submission {s.seq})"
        kept = store.load_manifest(s.artifact_id)
        if kept is None:
            found.mismatches.append(
                LedgerMismatch(
                    "manifest", where, "its kept manifest is gone from the store: the store was edited"
                )
            )
        elif manifest_id(kept.files) != s.artifact_id:
            found.mismatches.append(
                LedgerMismatch("manifest", where, "its kept manifest no longer matches the ledger")
            )
    return found


def _against_anchor(
    run_dir: Path, marker: Marker | None, rows: dict[int, str], run_id: str, notes: list[str]
) -> list[LedgerMismatch]:
    """Compare the ledger's rows (seq → record hash) with the heads the anchor kept of them."""
    path = run_dir / ANCHOR_NAME
    if not path.exists() and not path.is_symlink():
        if marker is not None and marker.anchored:
            return [
                LedgerMismatch(
                    "anchor", ANCHOR_NAME, "is gone: the recording was anchored, its ledger cannot be checked"
                )
            ]
        notes.append(f"ledger: {NO_ANCHOR}")
        return []
    try:
        lines, problems = read_anchor(path)
    except OSError as exc:
        return [LedgerMismatch("anchor", ANCHOR_NAME, f"cannot be read: {exc.strerror or exc}")]
    found = [LedgerMismatch("anchor", ANCHOR_NAME, problem) for problem in problems]
    anchored: dict[int, str] = {}
    for line in lines:
        if line.run_id != run_id or line.seq == 0:
            continue
        if anchored.setdefault(line.seq, line.record_hash) != line.record_hash:
            found.append(
                LedgerMismatch(
                    "anchor",
                    ANCHOR_NAME,
                    f"line {line.number} anchors submission {line.seq} twice, differently",
                )
            )
    gone = sorted(seq for seq in anchored if seq not in rows)
    if gone and len(gone) == len(anchored):
        found.append(
            LedgerMismatch(
                "ledger",
                "every submission",
                f"all {len(gone)} anchored submission(s) are gone from the store",
            )
        )
    elif gone:
        found.append(
            LedgerMismatch(
                "ledger",
                f"submission {gone[0]}",
                f"submission(s) {_seqs(gone)} were anchored and are gone from the store",
            )
        )
    rewritten = sorted(seq for seq in anchored if seq in rows and rows[seq] != anchored[seq])
    if rewritten:
        found.append(
            LedgerMismatch(
                "ledger",
                f"submission {rewritten[0]}",
                f"submission(s) {_seqs(rewritten)} no longer have the hash anchored when they were recorded:"
                " the ledger was rewritten (its chain recomputed, or its rows reordered)",
            )
        )
    top = max(anchored, default=0)
    unanchored = sorted(seq for seq in rows if seq > top)
    if unanchored:
        found.append(
            LedgerMismatch(
                "ledger",
                f"submission {unanchored[0]}",
                f"submission(s) {_seqs(unanchored)} are not in the anchor: appended after the recording"
                " (forged), or never answered (the recorder was killed between the store and the anchor)",
            )
        )
    return found
