"""A path trained, graded, trained again by other code and graded again has two lineages, one per
producing command: each submission gets the producer it was graded with."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from arb_audit.analyzer.classify import classify_source
from arb_audit.analyzer.routes import Routes, RunCode, StageStep, analyze
from arb_audit.analyzer.scripts_run import scripts_run
from arb_audit.analyzer.source import SourceFile
from arb_audit.model import Command, FileEntry, Revision, RunInfo, RunRecord, Submission
from tests.analyzer.test_routes import BASE, HANDWRITTEN_SFT

DPO_INTO_THE_SAME_FOLDER = f"""\
from trl import DPOConfig, DPOTrainer

trainer = DPOTrainer(model="{BASE}", args=DPOConfig(output_dir="outputs/m"), train_dataset=None)
trainer.train()
"""
START = datetime(2026, 4, 10, tzinfo=UTC)


def _route(scores: tuple[float, float], weighed: list[list[str]] | None = None) -> Routes:
    """Audit the routes of: SFT into outputs/m, graded; DPO into outputs/m, graded again."""
    scripts = {"sft.py": HANDWRITTEN_SFT, "dpo.py": DPO_INTO_THE_SAME_FOLDER}
    shas = {path: f"{i + 1:040x}" for i, path in enumerate(scripts)}
    texts = {shas[path]: text for path, text in scripts.items()}
    revision = Revision(1, "a" * 40, START, "transcript-edit", [FileEntry(p, 1, shas[p]) for p in scripts])
    lines = [f"python sft.py --init {BASE} --out outputs/m", "python dpo.py"]
    commands = [
        Command(i, line, "Bash", started_at=START + timedelta(minutes=10 * i), exit_code=0, revision_seq=1)
        for i, line in enumerate(lines, 1)
    ]
    submissions = [
        Submission(
            i,
            "scored",
            "outputs/m",
            requested_at=START + timedelta(minutes=10 * i + 5),
            score=score,
            artifact_path="outputs/m",
        )
        for i, score in enumerate(scores, 1)
    ]
    run = RunInfo("t:resubmitted", "test", "/nonexistent", base_model=BASE)
    record = RunRecord(run, submissions=submissions, revisions=[revision], commands=commands)
    labels = {shas[p]: classify_source(SourceFile(p, "python", text, None)) for p, text in scripts.items()}
    code = RunCode(record, labels, scripts_run(commands, [revision]), texts.get)
    best = max(submissions, key=lambda s: s.score or 0.0)

    def refine(steps: list[StageStep]) -> None:
        if weighed is not None:
            weighed.append([s.kind for s in steps])

    return analyze(code, best, refine)


def test_a_retrained_path_gets_its_new_producer() -> None:
    weighed: list[list[str]] = []
    route = _route((0.3, 0.5), weighed)
    assert [(s.kind, s.parent) for s in route.chain] == [("dpo", BASE)]
    assert route.chain[0].evidence[0].command_seq == 2
    assert route.best_label == "DPO"
    # The path's lineage is the one it has now; the earlier grading keeps its own.
    assert [s.kind for s in route.lineage["outputs/m"]] == ["dpo"]
    assert [s.kind for s in route.submission_lineages["1"]] == ["sft"]
    assert "2" not in route.submission_lineages
    # Only the lineage whose artifact the folder still holds is compared with its parent's weights.
    assert weighed == [["dpo"]]


def test_the_best_submission_of_a_retrained_path_keeps_the_lineage_it_was_graded_with() -> None:
    route = _route((0.6, 0.5))
    assert [(s.kind, s.parent) for s in route.chain] == [("sft", BASE)]
    assert route.chain[0].evidence[0].command_seq == 1
    assert (route.best_label, route.adopted) == ("SFT", ["SFT"])
