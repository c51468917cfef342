"""Static route detection against the hand-labelled development corpus (../shared/corpus).

Run on demand: ``python benchmarks/bench_corpus_accuracy.py CORPUS_DIR [MANIFEST]`` where CORPUS_DIR
holds ``<id>.py`` as ``../shared/corpus/assemble.sh`` writes them and MANIFEST defaults to
``../shared/corpus/dev.tsv``. Prints primary-label accuracy, per-label precision/recall/F1 (on the
primary label, one label against the rest, and on the full label sets), the confusion table, every
miss, and the same accuracy for the substring rule AutoRL-Bench's pipelines use, measured in the
same run (goal for the analyzer issue: primary accuracy >= 0.90, every label's F1 >= 0.8).
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

from arb_audit.analyzer.batch import classify_path
from arb_audit.taxonomy.files import FILE_LABELS

SUBSTRING_RULE = (
    ("GRPOTrainer", "GRPO"),
    ("PPOTrainer", "PPO"),
    ("DPOTrainer", "DPO"),
    ("SFTTrainer", "SFT"),
)
"""The baseline: the first trainer name found anywhere in the text decides (else NONE_TRAINING)."""


def substring_guess(text: str) -> str:
    """Label a file the way a substring search for trainer names does."""
    return next((label for needle, label in SUBSTRING_RULE if needle in text), "NONE_TRAINING")


def f1(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (0 where undefined)."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> None:
    """Classify every corpus file and print the tables."""
    corpus = Path(sys.argv[1])
    manifest = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).parents[2] / "shared/corpus/dev.tsv"
    rows = list(csv.DictReader(manifest.open(), delimiter="\t"))
    labels = [d.name for d in FILE_LABELS]
    confusion: Counter[tuple[str, str]] = Counter()
    sets: dict[str, list[int]] = {label: [0, 0, 0] for label in labels}
    correct = baseline = 0
    misses = []
    for row in rows:
        path = corpus / f"{row['id']}.py"
        result = classify_path(path)
        gold, predicted = row["primary_label"], result.primary
        confusion[(gold, predicted)] += 1
        correct += gold == predicted
        baseline += gold == substring_guess(path.read_text(errors="replace"))
        gold_set, predicted_set = set(row["all_labels"].split(",")), set(result.labels)
        for label in labels:
            sets[label][0] += label in gold_set and label in predicted_set
            sets[label][1] += label not in gold_set and label in predicted_set
            sets[label][2] += label in gold_set and label not in predicted_set
        if gold != predicted or gold_set != predicted_set:
            misses.append(
                (row["id"], gold, predicted, row["all_labels"], ",".join(result.labels), result.error)
            )
    n = len(rows)
    print(f"files: {n}   primary accuracy: {correct / n:.3f}   substring rule: {baseline / n:.3f}")
    print(f"\n{'label':17} {'n':>3} {'P':>5} {'R':>5} {'F1':>5}   {'set P':>5} {'set R':>5} {'set F1':>6}")
    for label in labels:
        tp = confusion[(label, label)]
        fp = sum(c for (g, p), c in confusion.items() if p == label and g != label)
        fn = sum(c for (g, p), c in confusion.items() if g == label and p != label)
        if tp + fp + fn == 0 and not any(sets[label]):
            continue
        p, r, f = f1(tp, fp, fn)
        sp, sr, sf = f1(*sets[label])
        print(f"{label:17} {tp + fn:3d} {p:5.2f} {r:5.2f} {f:5.2f}   {sp:5.2f} {sr:5.2f} {sf:6.2f}")
    used = [label for label in labels if any(confusion[(label, p)] or confusion[(p, label)] for p in labels)]
    short = {label: label[:6] for label in used}
    print("\nconfusion (rows: gold, columns: predicted)")
    print(" " * 17 + " ".join(f"{short[p]:>6}" for p in used))
    for g in used:
        print(f"{g:17}" + " ".join(f"{confusion[(g, p)] or '.':>6}" for p in used))
    print("\nmisses (id, gold primary, predicted primary, gold labels, predicted labels, error)")
    for miss in misses:
        print("  " + " | ".join(str(x) for x in miss))


if __name__ == "__main__":
    main()
