"""Numbered migrations of the run store.

Each migration is a function ``mNNN_name(con)`` appended to :data:`MIGRATIONS` in order; the store
records the applied ones in ``_arb_migrations`` and applies the missing ones when it opens, so a store
written by an older arb-audit opens with a newer one. Never edit a migration that has shipped: add one.
Times are stored as naive ``TIMESTAMP`` in UTC.
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS _arb_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMP)"
)
"""The table of applied migrations, made before the first one runs."""
MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables of the design (ARCHITECTURE.md), even those later work fills."""
    con.execute(
        """
        CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, task VARCHAR, level INTEGER, scaffold VARCHAR, driver VARCHAR,
            mode VARCHAR, base_model VARCHAR, base_score DOUBLE, budget_s DOUBLE,
            started_at TIMESTAMP, ended_at TIMESTAMP, source_format VARCHAR, source_path VARCHAR,
            recorder_version VARCHAR
        );
        CREATE TABLE revisions (
            run_id VARCHAR, seq INTEGER, sha VARCHAR, taken_at TIMESTAMP, trigger VARCHAR,
            files_changed INTEGER, PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE files (
            run_id VARCHAR, revision_seq INTEGER, path VARCHAR, blob_sha VARCHAR, size BIGINT
        );
        CREATE TABLE commands (
            run_id VARCHAR, seq INTEGER, started_at TIMESTAMP, ended_at TIMESTAMP, command VARCHAR,
            cwd VARCHAR, exit_code INTEGER, source VARCHAR, revision_seq INTEGER, output_excerpt VARCHAR
        );
        CREATE TABLE submissions (
            run_id VARCHAR, seq INTEGER, requested_at TIMESTAMP, completed_at TIMESTAMP,
            model_path VARCHAR, artifact_id VARCHAR, score DOUBLE, error VARCHAR, status VARCHAR,
            best_so_far DOUBLE, prev_hash VARCHAR, record_hash VARCHAR, PRIMARY KEY (run_id, seq)
        );
        CREATE TABLE artifacts (
            run_id VARCHAR, artifact_id VARCHAR, kind VARCHAR, size BIGINT, parent_ref VARCHAR,
            trainer_evidence JSON
        );
        CREATE TABLE tensors (
            artifact_id VARCHAR, name VARCHAR, dtype VARCHAR, shape INTEGER[], content_hash VARCHAR,
            rel_change DOUBLE
        );
        CREATE TABLE signals (
            blob_sha VARCHAR, detector VARCHAR, detector_version VARCHAR, label VARCHAR,
            confidence DOUBLE, line INTEGER, col INTEGER, snippet VARCHAR
        );
        CREATE TABLE audits (
            run_id VARCHAR PRIMARY KEY, best_seq INTEGER, lineage JSON, routes_attempted JSON,
            routes_adopted JSON, failure_mode VARCHAR, flags JSON, quadrant VARCHAR, confidence DOUBLE,
            analyzer_version VARCHAR, evidence JSON
        );
        CREATE TABLE verdicts (
            run_id VARCHAR, reviewer VARCHAR, field VARCHAR, value VARCHAR, note VARCHAR,
            created_at TIMESTAMP, prev_hash VARCHAR, record_hash VARCHAR
        );
        """
    )


@migration
def m002_collected_details(con: duckdb.DuckDBPyConnection) -> None:
    """Add what collectors read beyond the design's tables: problems, self-reports, flags."""
    con.execute(
        """
        ALTER TABLE runs ADD COLUMN agent_launched_at TIMESTAMP;
        ALTER TABLE runs ADD COLUMN workspace_path VARCHAR;
        ALTER TABLE runs ADD COLUMN utc_offset_s INTEGER;
        ALTER TABLE runs ADD COLUMN revisions_path VARCHAR;
        ALTER TABLE runs ADD COLUMN extra JSON;
        ALTER TABLE submissions ADD COLUMN harness_id INTEGER;
        ALTER TABLE submissions ADD COLUMN elapsed_s DOUBLE;
        ALTER TABLE submissions ADD COLUMN gpu VARCHAR;
        ALTER TABLE submissions ADD COLUMN baseline_score DOUBLE;
        ALTER TABLE submissions ADD COLUMN artifact_path VARCHAR;
        ALTER TABLE submissions ADD COLUMN duplicate_of INTEGER;
        ALTER TABLE submissions ADD COLUMN evidence JSON;
        ALTER TABLE artifacts ADD COLUMN path VARCHAR;
        ALTER TABLE artifacts ADD COLUMN path_exists BOOLEAN;
        ALTER TABLE artifacts ADD COLUMN n_files INTEGER;
        ALTER TABLE artifacts ADD COLUMN latest_mtime TIMESTAMP;
        ALTER TABLE artifacts ADD COLUMN note VARCHAR;
        ALTER TABLE files ADD COLUMN note VARCHAR;
        CREATE TABLE problems (run_id VARCHAR, seq INTEGER, path VARCHAR, message VARCHAR);
        CREATE TABLE flags (run_id VARCHAR, seq INTEGER, flag VARCHAR, message VARCHAR, evidence JSON);
        CREATE TABLE reported_iterations (
            run_id VARCHAR, source VARCHAR, number INTEGER, reported_at TIMESTAMP, status VARCHAR,
            exit_code INTEGER, score DOUBLE, train_type VARCHAR, failure_type VARCHAR, duration_s DOUBLE,
            line INTEGER, fields JSON
        );
        ALTER TABLE audits ADD COLUMN report JSON;
        """
    )


@migration
def m003_uncommitted_file_hashes(con: duckdb.DuckDBPyConnection) -> None:
    """Add the content hash of files a revision lists without committing them (checkpoints, data)."""
    con.execute("ALTER TABLE files ADD COLUMN content_hash VARCHAR")


@migration
def m004_artifact_manifests(con: duckdb.DuckDBPyConnection) -> None:
    """Keep what was graded, file by file and tensor by tensor, keyed by content (shared across runs)."""
    con.execute(
        """
        CREATE TABLE artifact_files (
            artifact_id VARCHAR, path VARCHAR, size BIGINT, digest VARCHAR, note VARCHAR,
            PRIMARY KEY (artifact_id, path)
        );
        ALTER TABLE tensors ADD COLUMN file_path VARCHAR;
        """
    )


@migration
def m005_classifications(con: duckdb.DuckDBPyConnection) -> None:
    """Cache the static analyzer's verdict per file content, so an unchanged file is analysed once."""
    con.execute(
        """
        CREATE TABLE classifications (
            blob_sha VARCHAR, file_kind VARCHAR, analyzer_version VARCHAR, result JSON,
            PRIMARY KEY (blob_sha, file_kind, analyzer_version)
        )
        """
    )


@migration
def m006_command_sources(con: duckdb.DuckDBPyConnection) -> None:
    """Say which tool ran each command, where in which transcript it is, and how it ended."""
    con.execute(
        """
        ALTER TABLE commands ADD COLUMN tool VARCHAR;
        ALTER TABLE commands ADD COLUMN source_path VARCHAR;
        ALTER TABLE commands ADD COLUMN line INTEGER;
        ALTER TABLE commands ADD COLUMN session INTEGER;
        ALTER TABLE commands ADD COLUMN error VARCHAR;
        ALTER TABLE commands ADD COLUMN finished BOOLEAN;
        """
    )


@migration
def m007_study_runs(con: duckdb.DuckDBPyConnection) -> None:
    """Create a study's runs table: each run's cell keys and its audit's headline facts (arb_audit.study)."""
    con.execute(
        """
        CREATE TABLE study_runs (
            run_key VARCHAR PRIMARY KEY, fingerprint VARCHAR, ingested_at TIMESTAMP, error VARCHAR,
            run_id VARCHAR, format VARCHAR, task VARCHAR, level INTEGER, scaffold VARCHAR,
            driver VARCHAR, mode VARCHAR, seed VARCHAR, base_score DOUBLE, best_score DOUBLE,
            best_seq INTEGER, n_submissions INTEGER, n_valid INTEGER, valid_rate DOUBLE,
            time_to_first_valid_s DOUBLE, time_to_best_s DOUBLE, route_label VARCHAR, chain VARCHAR,
            written VARCHAR[], attempted VARCHAR[], adopted VARCHAR[], failure VARCHAR,
            quadrant VARCHAR, flags VARCHAR[], report VARCHAR
        );
        """
    )


@migration
def m008_verdict_ledger(con: duckdb.DuckDBPyConnection) -> None:
    """Give the reviewers' verdicts what their hash chain covers.

    The run's key, the order, the value a verdict supersedes, the analyzer's value at the time, and
    whether it was made blind.
    """
    con.execute(
        """
        ALTER TABLE verdicts ADD COLUMN seq INTEGER;
        ALTER TABLE verdicts ADD COLUMN run_key VARCHAR;
        ALTER TABLE verdicts ADD COLUMN previous VARCHAR;
        ALTER TABLE verdicts ADD COLUMN analyzer VARCHAR;
        ALTER TABLE verdicts ADD COLUMN blind BOOLEAN;
        """
    )


@migration
def m009_study_confidence(con: duckdb.DuckDBPyConnection) -> None:
    """Keep each study run's route confidence in a column.

    The reviewer's desk orders by it, and reading it out of 5,000 audits' JSON took most of a study's
    opening.
    """
    con.execute("ALTER TABLE study_runs ADD COLUMN confidence DOUBLE")


@migration
def m010_audit_inputs(con: duckdb.DuckDBPyConnection) -> None:
    """Keep what each audit was made from, so an unchanged run's audit is read back, not redone.

    ``input_key`` digests the code, the run folder's listing and the options; ``depends`` lists the
    folders and files outside the run folder the audit read (a recording's workspace, the base model's
    folder) with their listings' digests (arb_audit.audit_cache).
    """
    con.execute(
        """
        ALTER TABLE audits ADD COLUMN input_key VARCHAR;
        ALTER TABLE audits ADD COLUMN depends JSON;
        """
    )


@migration
def m011_study_strength(con: duckdb.DuckDBPyConnection) -> None:
    """Keep each study run's route evidence level (``strength``) in place of m009's confidence number.

    A row audited before holds a number, not a level, and its audit JSON an older schema: its
    fingerprint is cleared, so the next ``arb-audit ingest`` audits it anew instead of reading it as
    this version's.
    """
    con.execute(
        """
        ALTER TABLE study_runs ADD COLUMN strength VARCHAR;
        ALTER TABLE study_runs DROP COLUMN confidence;
        UPDATE study_runs SET fingerprint = NULL;
        """
    )


@migration
def m012_classification_macs(con: duckdb.DuckDBPyConnection) -> None:
    """Key each cached classification with this user's secret (an HMAC), so a planted one is not read.

    A run store can lie in the run folder, which the agent writes: a classification rewritten there
    (an honest SFT script cached as on-policy GRPO) turned the audit's route. Rows cached before carry
    no key and could have been written by anyone: they are dropped, and the files classified again.
    """
    con.execute(
        """
        ALTER TABLE classifications ADD COLUMN mac VARCHAR;
        DELETE FROM classifications;
        """
    )


@migration
def m013_task_description(con: duckdb.DuckDBPyConnection) -> None:
    """Keep what the run says of its task (level, grading split, intended training) with the run.

    The analyzer reads the task from the run's own record, never from a table by task name; a run stored
    before has none, and is collected anew on its next audit (the kept audit's key covers the code).
    """
    con.execute("ALTER TABLE runs ADD COLUMN task_description JSON")


@migration
def m014_audit_macs(con: duckdb.DuckDBPyConnection) -> None:
    """Key each kept audit with this user's secret (an HMAC over its key, report and inputs).

    ``input_key`` alone let a kept audit be found, not trusted: the store can lie in the run folder,
    and a report rewritten there under the same key was read back as our audit. A row kept before
    carries no key and is not read back: its run is audited anew on its next audit.
    """
    con.execute("ALTER TABLE audits ADD COLUMN mac VARCHAR")


@migration
def m015_manifest_macs(con: duckdb.DuckDBPyConnection) -> None:
    """Key each kept manifest with this user's secret (an HMAC over every file and tensor it lists).

    A manifest's tensor list decides whether two gradings hold the same weights (``grader_probing``),
    and its artifact id covers each file's digest, not that list: a store planted in the run folder
    could list the same tensors for every graded artifact. A manifest kept before carries no key: it
    still serves ``verify`` (the ledger chains its files), never the audit's weight facts.
    """
    con.execute("ALTER TABLE artifact_files ADD COLUMN mac VARCHAR")
