"""The harness's own account of a run (AutoRL-Bench's ``results.csv`` row), set against the run folder.

run.py appends one row per run to a results.csv outside the run folder: how many entries scores.json
held, the best score among them (errored entries included, 0 when none), run.py's baseline, the agent's
exit (``../shared/reference/autorl_bench.md`` §1.7). It is the benchmark's word, not the folder's: the
audit shows it as such, says where the two disagree, and takes the score from it only when the folder
holds no record of the submissions at all (no scores.json, and run.log shows none): then the row is
all there is, and "0 attempts" would contradict the harness.
"""

from __future__ import annotations

from arb_audit import schema
from arb_audit.evidence import Evidence
from arb_audit.model import HarnessAccount, RunRecord, Submission

SCORES = "scores.json"
"""The grading server's list of recorded submissions, the file results.csv's counts are taken from."""
SAME = 1e-6
"""Scores closer than this are the same number written twice."""


def account_of(record: RunRecord) -> HarnessAccount | None:
    """Return the harness's account the collector kept with the run, or None."""
    return record.run.harness_account


def _recorded(record: RunRecord) -> list[Submission]:
    """Return the attempts scores.json recorded (what results.csv counts)."""
    return [s for s in record.submissions if any(e.path == SCORES for e in s.evidence)]


def _scores_read(record: RunRecord) -> bool:
    return SCORES in (record.run.ledger_sources or [])


def all_there_is(record: RunRecord) -> HarnessAccount | None:
    """Return the account when it is the only record of the run's submissions, or None.

    That is: the folder's ledger is empty, scores.json could not be read, and the row counts at least
    one submission with a best score.
    """
    account = account_of(record)
    if account is None or record.submissions or _scores_read(record):
        return None
    if not account.submissions or account.best_score is None:
        return None
    return account


def cite(account: HarnessAccount) -> Evidence:
    """Point at the row, with what it says of the submissions."""
    return Evidence(
        "file",
        path=account.path,
        line=account.line,
        excerpt=f"the harness's results.csv row: {account.submissions} submission(s), best score"
        f" {account.best_score} (errored entries included), baseline {account.baseline}",
    )


def disagreements(record: RunRecord, account: HarnessAccount) -> list[str]:
    """Say each place where the row and the run folder tell different things."""
    found: list[str] = []
    if _scores_read(record):
        recorded = _recorded(record)
        if account.submissions is not None and account.submissions != len(recorded):
            found.append(
                f"results.csv counts {account.submissions} submission(s); scores.json holds {len(recorded)}"
            )
        scores = [s.score for s in recorded if s.score is not None]
        best = max(scores) if scores else 0.0  # run.py writes 0 when there were none
        if account.best_score is not None and abs(account.best_score - best) > SAME:
            found.append(f"results.csv's best score is {account.best_score}; scores.json's highest is {best}")
    elif account.submissions and not record.submissions:
        found.append(
            f"results.csv counts {account.submissions} submission(s) (best {account.best_score}); the run"
            " folder holds no record of any (no scores.json, none in run.log)"
        )
    base = record.run.base_score
    if account.baseline is not None and base is not None and abs(account.baseline - base) > SAME:
        found.append(f"results.csv's baseline is {account.baseline}; the run's base score is {base}")
    code = record.run.agent_exit_code
    if account.success is not None and code is not None and account.success != (code == 0):
        found.append(f"results.csv says success={account.success}; run.log's agent exit code is {code}")
    if account.success is True and record.run.agent_timed_out is True:
        found.append("results.csv says success=True; run.log says the agent timed out")
    return found


def reported_account(record: RunRecord) -> schema.HarnessAccount | None:
    """Return the account as the audit shows it: the row, where it disagrees, and what was taken from it."""
    account = account_of(record)
    if account is None:
        return None
    used = (
        ["the best score (for the failure and the quadrant): the folder holds no record of the submissions"]
        if all_there_is(record)
        else []
    )
    # Every field of the row as the run record keeps it (the schema refuses one it does not define).
    return schema.HarnessAccount(
        **account.to_json(), disagreements=disagreements(record, account), used_for=used
    )
