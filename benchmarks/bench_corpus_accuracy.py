"""Static route detection against the hand-labelled development corpora (../shared/corpus).

Run on demand::

    python benchmarks/bench_corpus_accuracy.py DEV_DIR [WIDE_DIR]
    python benchmarks/bench_corpus_accuracy.py --corpus DIR MANIFEST [--corpus DIR MANIFEST ...]

    python benchmarks/bench_corpus_accuracy.py --spot MIRROR_ROOT WORK_DIR benchmarks/spot_sets/k.tsv ...

where each DIR holds ``<id>.py`` as ``../shared/corpus/assemble.sh`` writes them. ``--spot`` measures the
spot sets (``benchmarks/spot_sets/README.md``): each row's repository is exported at its commit from
``MIRROR_ROOT/owner+name/repo`` into ``WORK_DIR/owner+name`` and the file is classified in place; with
``--flat`` each file is written alone as ``WORK_DIR/flat/<id><suffix>`` (no path to read, as the held-out
sets are given) and classified there; with ``--workspace`` it is classified in its repository's workspace,
the repository's own modules it imports followed (what ``classify DIR`` and an audit of a run read). The two
positional folders are measured against ``../shared/corpus/dev.tsv`` and
``../shared/corpus/dev_wide.tsv``. Each corpus is reported on its own — ``dev.tsv`` is what the detectors
were built on and is never an accuracy figure by itself — with: primary-label accuracy, per-label
precision/recall/F1 (on the primary label, one label against the rest, and on the full label sets), the
confusion table, the files that take a gradient step yet are called ``NONE_TRAINING``/``EVAL_ONLY`` (must
be none), every miss, and the substring rule AutoRL-Bench's pipelines use, measured in the same run. A
side-by-side summary ends the output (goal for issue 19: primary accuracy >= 0.95 on each development
corpus and >= 0.90 on the held-out sets, every label's F1 >= 0.8, no training file called
NONE_TRAINING/EVAL_ONLY).
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import tarfile
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from arb_audit.analyzer.batch import classify_path, iter_files
from arb_audit.analyzer.classify import Classification
from arb_audit.analyzer.workspace import Use, in_workspace, text_in
from arb_audit.taxonomy.files import FILE_LABELS

SUBSTRING_RULE = (
    ("GRPOTrainer", "GRPO"),
    ("PPOTrainer", "PPO"),
    ("DPOTrainer", "DPO"),
    ("SFTTrainer", "SFT"),
)
"""The baseline: the first trainer name found anywhere in the text decides (else NONE_TRAINING)."""

NOT_TRAINING = frozenset({"NONE_TRAINING", "EVAL_ONLY"})
"""Primary labels a file that takes a gradient step must never get."""
GOLD_TRAINING = frozenset({"SFT", "DPO", "GRPO", "PPO", "ONLINE_RL", "REWARD_MODEL"})
"""Gold primary labels of files that train (components excepted: an environment trains nothing)."""
CORPUS_DIR = Path(__file__).resolve().parents[2] / "shared/corpus"


def substring_guess(text: str) -> str:
    """Label a file the way a substring search for trainer names does."""
    return next((label for needle, label in SUBSTRING_RULE if needle in text), "NONE_TRAINING")


def f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (0 where undefined)."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def takes_gradient_step(result: Classification) -> bool:
    """Say whether the analyzer saw a gradient step in the file."""
    return any(f.signal == "gradient_step" for f in result.findings) or result.role == "training"


@dataclass
class Measured:
    """One corpus's figures."""

    name: str
    files: int = 0
    correct: int = 0
    baseline: int = 0
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    f1: dict[str, float] = field(default_factory=dict)
    stepped_not_training: list[str] = field(default_factory=list)
    """Files where the analyzer saw a gradient step yet called them NONE_TRAINING/EVAL_ONLY."""
    gold_training_not_training: list[str] = field(default_factory=list)
    """Files labelled as training (not components) that the analyzer called NONE_TRAINING/EVAL_ONLY."""


def assembled(corpus: Path) -> Callable[[dict[str, str]], Path]:
    """Where ``assemble.sh`` put a row's file: ``corpus/<id>.py``."""
    return lambda row: corpus / f"{row['id']}.py"


def exported(mirrors: Path, work: Path) -> Callable[[dict[str, str]], Path]:
    """Where a spot set's row's file is, its repository exported at its commit on first use."""

    def where(row: dict[str, str]) -> Path:
        folder = work / row["repo"].replace("/", "+", 1)
        if not folder.exists():
            export(mirrors / folder.name / "repo", row["commit"], folder)
        return folder / row["path"]

    return where


def flattened(mirrors: Path, work: Path) -> Callable[[dict[str, str]], Path]:
    """Where a spot set's row's file is written alone, as ``assemble.sh`` writes a corpus (no path).

    ``WORK/flat/<id><suffix>``: what the held-out sets are like (a file's place cannot speak for it).
    """

    def where(row: dict[str, str]) -> Path:
        target = work / "flat" / (row["id"] + Path(row["path"]).suffix)
        if not target.exists():
            data = _blob(mirrors / row["repo"].replace("/", "+", 1) / "repo", row["commit"], row["path"])
            if data is not None:  # (else the row's file is missing: its classification says so)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        return target

    return where


def export(git_dir: Path, commit: str, folder: Path) -> None:
    """Write the tree of ``commit`` into ``folder`` (file by file where a blob is missing: LFS, partial)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(git_dir), "archive", commit], capture_output=True, check=False)
    if archive.returncode == 0:
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(folder, filter=_kept)
        return
    listed = subprocess.run(
        ["git", "-C", str(git_dir), "ls-tree", "-r", "-z", "--name-only", commit],
        capture_output=True,
        check=False,
    )  # (a copy without the commit leaves the folder empty: its rows' files are missing, as in --flat)
    for name in filter(None, listed.stdout.decode().split("\0")):
        data = _blob(git_dir, commit, name)
        target = (folder / name).resolve()
        if data is not None and target.is_relative_to(folder.resolve()):  # (a tree's names stay in it)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


def _kept(member: tarfile.TarInfo, destination: str) -> tarfile.TarInfo | None:
    """Extract what tarfile's ``data`` filter allows; leave out the rest (a link to an absolute path)."""
    try:
        return tarfile.data_filter(member, destination)
    except tarfile.FilterError:
        return None


def _blob(git_dir: Path, commit: str, path: str) -> bytes | None:
    """Return a file's bytes at ``commit`` in a git copy, or None where it is not there."""
    blob = subprocess.run(
        ["git", "-C", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    return blob.stdout if blob.returncode == 0 else None


class LazyWorkspace(Mapping[str, Classification]):
    """The files of an exported repository (relative path -> the file classified alone), each classified
    on first use: a row's workspace reads only the modules its file imports, not the whole repository."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = {p.relative_to(root).as_posix(): None for p in iter_files([root])}
        self.classified: dict[str, Classification] = {}
        self.read: dict[str, list[Use]] = {}
        """Each file's imports, read once for all the rows of the repository."""

    def __getitem__(self, path: str) -> Classification:
        if path not in self.paths:
            raise KeyError(path)
        if path not in self.classified:
            self.classified[path] = classify_path(self.root / path)
        return self.classified[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def in_its_workspace(work: Path) -> Callable[[Path], Classification]:
    """Classify an exported spot-set file in its repository's workspace (as ``classify DIR`` and audits do).

    The repository is the first folder under ``work``; the last one read is kept for the rows after it.
    """
    kept: dict[Path, LazyWorkspace] = {}

    def classify(path: Path) -> Classification:
        root = work / path.relative_to(work).parts[0]
        if root not in kept:
            kept.clear()
            kept[root] = LazyWorkspace(root)
        workspace = kept[root]
        relative = path.relative_to(root).as_posix()
        if relative not in workspace:
            return classify_path(path)
        text_of = partial(text_in, root)
        return in_workspace(workspace, text_of, only={relative}, read=workspace.read)[relative]

    return classify


def measure(
    name: str,
    where: Callable[[dict[str, str]], Path],
    manifest: Path,
    classify: Callable[[Path], Classification] = classify_path,
) -> Measured:
    """Classify every file of one corpus and print its tables.

    A spot set's gold label may be ``A|B`` (either is right); it has no ``all_labels`` nor ``kind``.
    ``classify``: how a file is classified (alone, by default).
    """
    rows = list(csv.DictReader(manifest.open(), delimiter="\t"))
    labels = [d.name for d in FILE_LABELS]
    m = Measured(name, files=len(rows))
    confusion = m.confusion
    sets: dict[str, list[int]] = {label: [0, 0, 0] for label in labels}
    misses = []
    for row in rows:
        path = where(row)
        result = classify(path)
        golds, predicted = row["primary_label"].split("|"), result.primary
        gold = predicted if predicted in golds else golds[0]
        confusion[(gold, predicted)] += 1
        m.correct += gold == predicted
        m.baseline += gold == substring_guess(path.read_text(errors="replace") if path.is_file() else "")
        if predicted in NOT_TRAINING and takes_gradient_step(result):
            m.stepped_not_training.append(row["id"])
        if predicted in NOT_TRAINING and gold in GOLD_TRAINING and row.get("kind") != "COMPONENT":
            m.gold_training_not_training.append(row["id"])
        gold_labels = row.get("all_labels") or gold
        gold_set, predicted_set = set(gold_labels.split(",")), set(result.labels)
        for label in labels:
            sets[label][0] += label in gold_set and label in predicted_set
            sets[label][1] += label not in gold_set and label in predicted_set
            sets[label][2] += label in gold_set and label not in predicted_set
        if gold != predicted or gold_set != predicted_set:
            misses.append((row["id"], gold, predicted, gold_labels, ",".join(result.labels), result.error))
    n = len(rows)
    print(f"== {name}: {manifest.name} ({n} files)")
    print(f"primary accuracy: {m.correct / n:.3f}   substring rule: {m.baseline / n:.3f}")
    print(f"\n{'label':17} {'n':>3} {'P':>5} {'R':>5} {'F1':>5}   {'set P':>5} {'set R':>5} {'set F1':>6}")
    for label in labels:
        tp = confusion[(label, label)]
        fp = sum(c for (g, p), c in confusion.items() if p == label and g != label)
        fn = sum(c for (g, p), c in confusion.items() if g == label and p != label)
        if tp + fp + fn == 0 and not any(sets[label]):
            continue
        p, r, f = f1(tp, fp, fn)
        if tp + fn:
            m.f1[label] = f
        sp, sr, sf = f1(*sets[label])
        print(f"{label:17} {tp + fn:3d} {p:5.2f} {r:5.2f} {f:5.2f}   {sp:5.2f} {sr:5.2f} {sf:6.2f}")
    used = [label for label in labels if any(confusion[(label, p)] or confusion[(p, label)] for p in labels)]
    short = {label: label[:6] for label in used}
    print("\nconfusion (rows: gold, columns: predicted)")
    print(" " * 17 + " ".join(f"{short[p]:>6}" for p in used))
    for g in used:
        print(f"{g:17}" + " ".join(f"{confusion[(g, p)] or '.':>6}" for p in used))
    print(
        f"\ngradient step seen, called NONE_TRAINING/EVAL_ONLY: {len(m.stepped_not_training)} "
        f"{' '.join(m.stepped_not_training)}"
    )
    print(
        f"labelled training (not a component), called NONE_TRAINING/EVAL_ONLY: "
        f"{len(m.gold_training_not_training)} {' '.join(m.gold_training_not_training)}"
    )
    print("\nmisses (id, gold primary, predicted primary, gold labels, predicted labels, error)")
    for miss in misses:
        print("  " + " | ".join(str(x) for x in miss))
    print()
    return m


def summary(measured: list[Measured]) -> None:
    """Print the corpora side by side."""
    print("== summary (each corpus on its own; dev.tsv is what the detectors were built on)")
    print(f"{'':44}" + "".join(f"{m.name:>12}" for m in measured))
    rows: list[tuple[str, list[str]]] = [
        ("files", [str(m.files) for m in measured]),
        ("primary accuracy", [f"{m.correct / m.files:.3f}" for m in measured]),
        ("substring rule", [f"{m.baseline / m.files:.3f}" for m in measured]),
        ("labels with F1 < 0.8", [str(sum(f < 0.8 for f in m.f1.values())) for m in measured]),
        ("lowest label F1", [f"{min(m.f1.values(), default=0.0):.2f}" for m in measured]),
        ("gradient step seen, NONE_TRAINING/EVAL_ONLY", [str(len(m.stepped_not_training)) for m in measured]),
        (
            "labelled training, NONE_TRAINING/EVAL_ONLY",
            [str(len(m.gold_training_not_training)) for m in measured],
        ),
    ]
    for title, values in rows:
        print(f"{title:44}" + "".join(f"{v:>12}" for v in values))


def main() -> None:
    """Measure each corpus given and print the tables, then the summary."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dev", nargs="?", type=Path, help="folder assembled from dev.tsv")
    parser.add_argument("wide", nargs="?", type=Path, help="folder assembled from dev_wide.tsv")
    parser.add_argument(
        "--corpus", nargs=2, action="append", default=[], metavar=("DIR", "MANIFEST"), help="another corpus"
    )
    parser.add_argument(
        "--spot", nargs="+", metavar="MIRROR_ROOT WORK_DIR SET", help="spot sets (benchmarks/spot_sets/*.tsv)"
    )
    parser.add_argument(
        "--flat", action="store_true", help="spot set files each alone as <id>.py, as the held-out sets are"
    )
    parser.add_argument(
        "--workspace",
        action="store_true",
        help="spot set files each in their repository's workspace (imports followed), as audits read runs",
    )
    args = parser.parse_args()
    corpora: list[tuple[str, Callable[[dict[str, str]], Path], Path]] = []
    classify: Callable[[Path], Classification] = classify_path
    if args.dev is not None:
        corpora.append(("dev", assembled(args.dev), CORPUS_DIR / "dev.tsv"))
    if args.wide is not None:
        corpora.append(("dev_wide", assembled(args.wide), CORPUS_DIR / "dev_wide.tsv"))
    for folder, manifest in args.corpus:
        corpora.append((Path(manifest).stem, assembled(Path(folder)), Path(manifest)))
    if args.spot:
        mirrors, work, *manifests = args.spot
        if not manifests:
            parser.error("--spot needs MIRROR_ROOT WORK_DIR and at least one spot set")
        if args.flat and args.workspace:
            parser.error("--flat and --workspace exclude each other")
        place = flattened if args.flat else exported
        corpora += [(Path(m).stem, place(Path(mirrors), Path(work)), Path(m)) for m in manifests]
        if args.workspace:
            classify = in_its_workspace(Path(work))
    if not corpora:
        parser.error("give at least one corpus folder")
    summary([measure(name, where, manifest, classify) for name, where, manifest in corpora])


if __name__ == "__main__":
    main()
