"""The run store's schema: its file name, its numbered migrations, and how a store is moved forward.

Each migration moves the schema one version forward. A store is migrated on the writer's open, the way
every store of repro is (:func:`repro.store.sqlite.apply_migrations`). A reader never migrates: it
refuses a store older or newer than this repro (see :mod:`repro.store.reader`).
"""

from __future__ import annotations

from repro.exit_codes import ReproError
from repro.records import LEVER_STAGES, STAGE_ORDER, Stage
from repro.store.sqlite import WriteTransaction, apply_migrations, refuse_newer_version

STORE_FILENAME = "run.sqlite"

# A stage's position in the pipeline; a candidate that reached (passed) a stage reached (passed)
# every stage before it, so one number per candidate says how far it got.
STAGE_RANK: dict[str, int] = {stage.value: rank for rank, stage in enumerate(STAGE_ORDER)}
# salvage and feedback attempts are verifications by a lever: they rank with verify
STAGE_RANK.update({lever.value: STAGE_RANK[Stage.verify.value] for lever in LEVER_STAGES})
_STAGE_RANK_SQL = "CASE stage " + " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in STAGE_RANK.items()) + " END"

# why a problem retained before the judge stage existed is unfinished after the judge migration (no `;` or `'`:
# a migration is split into statements at every `;`)
_UNJUDGED_CAUSE = (
    "judge: judge_unavailable: retained before the kernel judge existed, so never judged (repro run --resume judges it)"
)

# Each entry moves the schema one version forward. Never edit a released entry: append a new one.
_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE problems (
        problem_id TEXT PRIMARY KEY,
        draw_order INTEGER NOT NULL,
        payload TEXT NOT NULL,
        outcome TEXT
    );
    CREATE TABLE candidates (
        candidate_id TEXT PRIMARY KEY,
        problem_id TEXT NOT NULL,
        status TEXT NOT NULL,
        reject_stage TEXT,
        reject_reason TEXT,
        payload TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE INDEX candidates_by_problem ON candidates(problem_id);
    CREATE TABLE attempts (
        attempt_id INTEGER PRIMARY KEY AUTOINCREMENT,
        candidate_id TEXT NOT NULL,
        problem_id TEXT NOT NULL,
        stage TEXT NOT NULL,
        attempt_number INTEGER NOT NULL,
        status TEXT NOT NULL,
        reason TEXT,
        payload TEXT NOT NULL,
        UNIQUE (candidate_id, stage, attempt_number)
    );
    CREATE INDEX attempts_by_stage ON attempts(stage, status, reason);
    CREATE TABLE response_cache (cache_key TEXT PRIMARY KEY, response TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE TABLE model_calls (
        call_id INTEGER PRIMARY KEY AUTOINCREMENT,
        stage TEXT NOT NULL,
        model_id TEXT NOT NULL,
        backend_id TEXT NOT NULL,
        cache_hit INTEGER NOT NULL,
        payload TEXT NOT NULL
    );
    CREATE TABLE lean_cache (code_hash TEXT PRIMARY KEY, result TEXT NOT NULL);
    """,
    # 2: columns and running totals that let metrics, status and resume answer without scans
    f"""
    ALTER TABLE problems ADD COLUMN level TEXT;
    ALTER TABLE problems ADD COLUMN type TEXT;
    ALTER TABLE problems ADD COLUMN unfinished_cause TEXT;
    UPDATE problems SET level = json_extract(payload, '$.level'), type = json_extract(payload, '$.type');
    CREATE INDEX problems_by_draw_order ON problems(draw_order);
    CREATE INDEX problems_by_outcome ON problems(outcome, level, type);
    ALTER TABLE candidates ADD COLUMN proof_attempt_number INTEGER;
    ALTER TABLE candidates ADD COLUMN reached_rank INTEGER NOT NULL DEFAULT -1;
    ALTER TABLE candidates ADD COLUMN passed_rank INTEGER NOT NULL DEFAULT -1;
    UPDATE candidates SET proof_attempt_number = json_extract(payload, '$.proof_attempt_number');
    UPDATE candidates SET
        reached_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts WHERE attempts.candidate_id = candidates.candidate_id), -1),
        passed_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts
             WHERE attempts.candidate_id = candidates.candidate_id AND attempts.status = 'passed'), -1);
    CREATE INDEX candidates_by_status ON candidates(status, reject_stage, reject_reason, proof_attempt_number);
    CREATE INDEX candidates_by_reach ON candidates(reached_rank, passed_rank);
    ALTER TABLE attempts ADD COLUMN lean_seconds REAL NOT NULL DEFAULT 0;
    UPDATE attempts SET lean_seconds = COALESCE(json_extract(payload, '$.lean_seconds'), 0);
    CREATE TABLE attempt_counts (
        stage TEXT NOT NULL,
        status TEXT NOT NULL,
        reason TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (stage, status, reason)
    );
    INSERT INTO attempt_counts SELECT stage, status, COALESCE(reason, ''), COUNT(*) FROM attempts
        GROUP BY stage, status, COALESCE(reason, '');
    CREATE TABLE totals (name TEXT PRIMARY KEY, value REAL NOT NULL);
    INSERT INTO totals(name, value) SELECT 'lean_seconds', COALESCE(SUM(lean_seconds), 0) FROM attempts;
    CREATE TABLE model_totals (
        stage TEXT NOT NULL,
        model_id TEXT NOT NULL,
        calls INTEGER NOT NULL,
        cache_hits INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        retries INTEGER NOT NULL,
        tokens_in INTEGER NOT NULL,
        tokens_out INTEGER NOT NULL,
        latency_s REAL NOT NULL,
        PRIMARY KEY (stage, model_id)
    );
    INSERT INTO model_totals
        SELECT stage, model_id,
            SUM(1 - cache_hit),
            SUM(cache_hit * COALESCE(json_extract(payload, '$.samples'), 0)),
            SUM((1 - cache_hit) * (json_extract(payload, '$.error') IS NOT NULL)),
            SUM((1 - cache_hit) * COALESCE(json_extract(payload, '$.retries'), 0)),
            SUM((1 - cache_hit) * COALESCE(json_extract(payload, '$.tokens_in'), 0)),
            SUM((1 - cache_hit) * COALESCE(json_extract(payload, '$.tokens_out'), 0)),
            SUM((1 - cache_hit) * COALESCE(json_extract(payload, '$.latency_s'), 0))
        FROM model_calls GROUP BY stage, model_id;
    """,
    # 3: the `check` stage (our Lean checks of the statement) sits between align and prove: stored ranks
    # move up by one from prove on, so they are recomputed from the attempts
    f"""
    UPDATE candidates SET
        reached_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts WHERE attempts.candidate_id = candidates.candidate_id), -1),
        passed_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts
             WHERE attempts.candidate_id = candidates.candidate_id AND attempts.status = 'passed'), -1);
    """,
    # 4: the kernel judge's verdicts (passed or rejected only), keyed by JudgeRequest.cache_key: identical
    # code is judged once per (tool, revision, toolchain, header, statement), across resumes
    """
    CREATE TABLE judge_cache (cache_key TEXT PRIMARY KEY, verdict TEXT NOT NULL, created_at TEXT NOT NULL);
    """,
    # 5: the `judge` stage (the kernel judge) sits between verify and answer: ranks from answer on move up
    # by one. A candidate retained before the judge existed was never judged: it is no longer retained but
    # unfinished for want of a judge verdict, and its problem unfinished, so `repro run --resume` judges it
    # (every model answer and Lean result is read back from the store) instead of releasing it unjudged.
    f"""
    UPDATE candidates SET
        reached_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts WHERE attempts.candidate_id = candidates.candidate_id), -1),
        passed_rank = COALESCE(
            (SELECT MAX({_STAGE_RANK_SQL}) FROM attempts
             WHERE attempts.candidate_id = candidates.candidate_id AND attempts.status = 'passed'), -1);
    UPDATE problems SET outcome = NULL, unfinished_cause = '{_UNJUDGED_CAUSE}'
        WHERE outcome = 'retained' AND problem_id IN (
            SELECT problem_id FROM candidates c WHERE c.status = 'retained' AND NOT EXISTS (
                SELECT 1 FROM attempts a WHERE a.candidate_id = c.candidate_id AND a.stage = 'judge'
                AND a.status = 'passed'));
    UPDATE candidates SET status = 'unfinished', reject_stage = 'judge', reject_reason = 'judge_unavailable',
        payload = json_set(payload, '$.status', 'unfinished', '$.reject_stage', 'judge',
            '$.reject_reason', 'judge_unavailable')
        WHERE status = 'retained' AND NOT EXISTS (
            SELECT 1 FROM attempts a WHERE a.candidate_id = candidates.candidate_id AND a.stage = 'judge'
            AND a.status = 'passed');
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)


class StoreError(ReproError, RuntimeError):
    pass


def refuse_newer(path: object, version: int) -> None:
    refuse_newer_version(path, version, SCHEMA_VERSION, StoreError)


def migrate(path: object, current: int, transaction: WriteTransaction) -> None:
    """Apply every run-store migration after ``current``; ``transaction`` opens a write transaction."""
    apply_migrations(path, _MIGRATIONS, current, transaction, error=StoreError)
