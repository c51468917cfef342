"""How far two blind labellings of the same spot-set files agree, and the classifier against each.

Run on demand::

    python benchmarks/bench_label_agreement.py MIRROR_ROOT WORK_DIR FIRST.tsv SECOND.tsv [FIRST SECOND ...]

Each pair is a spot set (``benchmarks/spot_sets/*.tsv``) and a second labelling of the same rows made by
someone who saw neither the first labels nor the classifier (``benchmarks/spot_sets/second/``); or the
folder of spot sets and a second labelling of a sample drawn from several of them, its rows named by
their spot-set ids. Each
file is classified alone, as ``bench_corpus_accuracy.py --flat`` does (``WORK_DIR/flat/<id><suffix>``).

Printed per pair and over all pairs: how often the two labellers agree on the primary label (a label
written ``A|B`` allows either, so two labels agree when they share one; stricter, how often they wrote
the same labels, and the same first-written one), Cohen's κ of the two, and the
classifier's primary accuracy against the first labelling, the second, either of them, and on the files
where both agree. The labellers' agreement is the ceiling a file-level accuracy can be read against:
where two careful readers of the same file under the same conventions part, no classifier satisfies both.
"""

from __future__ import annotations

import argparse
import csv
from dataclasses import dataclass, field
from pathlib import Path

from bench_corpus_accuracy import flattened

from arb_audit.analyzer.batch import classify_path
from arb_audit.taxonomy.agreement import cohen_kappa


def allowed(label: str) -> set[str]:
    """The labels a row's primary label allows: ``A|B`` is either."""
    return {part.strip() for part in label.split("|") if part.strip()}


@dataclass
class Labelled:
    """One file as both labellings and the classifier see it."""

    id: str
    first: set[str]
    second: set[str]
    predicted: str
    leading: tuple[str, str] = ("", "")
    """Each labelling's first-written label (``A`` of ``A|B``)."""

    @property
    def agreed(self) -> bool:
        """The two labellings share a label."""
        return bool(self.first & self.second)

    def single(self) -> tuple[str, str]:
        """One label from each labelling for κ: the shared one where they agree, else each's first."""
        shared = sorted(self.first & self.second)
        if shared:
            return shared[0], shared[0]
        return min(self.first), min(self.second)


@dataclass
class Pair:
    """A spot set and its second labelling."""

    name: str
    files: list[Labelled] = field(default_factory=list)


def first_labels(first: Path, ids: list[str]) -> dict[str, dict[str, str]]:
    """Read the first labelling: a spot set's rows, or, for a folder of sets, the rows a sample names.

    A second labelling of a sample drawn from several sets names each row by its spot-set id
    (``p73_12``: row 12 of ``p73.tsv``); its first labels are read from ``first/p73.tsv``.
    """
    if not first.is_dir():
        return {r["id"]: r for r in csv.DictReader(first.open(), delimiter="\t")}
    wanted, rows = set(ids), {}
    for name in sorted({i.rsplit("_", 1)[0] for i in wanted}):
        named = first / f"{name}.tsv"
        if not named.is_file():
            raise SystemExit(f"{named}: no such spot set, which the sample's ids name")
        for row in csv.DictReader(named.open(), delimiter="\t"):
            if row["id"] in wanted:
                rows[row["id"]] = row
    return rows


def measure(name: str, first: Path, second: Path, mirrors: Path, work: Path) -> Pair:
    """Read both labellings (same ids), classify each file alone, and return them side by side."""
    again = {r["id"]: r for r in csv.DictReader(second.open(), delimiter="\t")}
    rows = first_labels(first, list(again))
    if rows.keys() != again.keys():
        raise SystemExit(f"{second}: its ids differ from {first}'s")
    where = flattened(mirrors, work)
    pair = Pair(name)
    for id_, row in rows.items():
        other = again[id_]
        if (other["repo"], other["path"]) != (row["repo"], row["path"]):
            raise SystemExit(f"{second}: row {id_} names another file than {first}'s")
        predicted = classify_path(where(row)).primary
        labels = (row["primary_label"], other["primary_label"])
        leading = (labels[0].split("|")[0].strip(), labels[1].split("|")[0].strip())
        pair.files.append(Labelled(id_, allowed(labels[0]), allowed(labels[1]), predicted, leading))
    return pair


def share(count: int, total: int) -> str:
    """``count/total (ratio)``."""
    return f"{count}/{total} ({count / total:.2f})" if total else "0/0"


def report(pair: Pair, details: bool) -> None:
    """Print one pair's (or the pooled) agreement and accuracies."""
    files = pair.files
    n = len(files)
    agreed = [f for f in files if f.agreed]
    kappa = cohen_kappa(*zip(*(f.single() for f in files), strict=True)) if files else None
    print(f"== {pair.name} ({n} files)")
    shown = "undefined" if kappa is None else f"{kappa:.2f}"
    print(f"labellers agree:               {share(len(agreed), n)}   Cohen's kappa {shown}")
    identical = sum(f.first == f.second for f in files)
    print(f"  the same labels:              {share(identical, n)}")
    print(f"  the same first-written label: {share(sum(f.leading[0] == f.leading[1] for f in files), n)}")
    print(f"classifier vs first labelling:  {share(sum(f.predicted in f.first for f in files), n)}")
    print(f"classifier vs second labelling: {share(sum(f.predicted in f.second for f in files), n)}")
    print(
        f"classifier vs either:           {share(sum(f.predicted in f.first | f.second for f in files), n)}"
    )
    both = sum(f.predicted in f.first & f.second for f in agreed)
    print(f"classifier where both agree:    {share(both, len(agreed))}")
    if details:
        for f in files:
            if not f.agreed:
                print(
                    f"  {f.id} | {'|'.join(sorted(f.first))} | {'|'.join(sorted(f.second))} | {f.predicted}"
                )
    print()


def main() -> None:
    """Measure each pair given, then all pairs pooled."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mirrors", type=Path, help="MIRROR_ROOT: owner+name/repo git copies")
    parser.add_argument("work", type=Path, help="WORK_DIR: where each file is written alone")
    parser.add_argument(
        "sets",
        nargs="+",
        type=Path,
        help="FIRST SECOND pairs of label TSVs (FIRST a folder of sets for a sample drawn from several)",
    )
    parser.add_argument("--quiet", action="store_true", help="leave out the list of disagreements")
    args = parser.parse_args()
    if len(args.sets) % 2:
        parser.error("give the label files in pairs: FIRST SECOND")
    pairs = [
        measure(second.stem if first.is_dir() else first.stem, first, second, args.mirrors, args.work)
        for first, second in zip(args.sets[::2], args.sets[1::2], strict=True)
    ]
    for pair in pairs:
        report(pair, not args.quiet)
    if len(pairs) > 1:
        report(Pair("all", [f for p in pairs for f in p.files]), details=False)


if __name__ == "__main__":
    main()
