"""The run store: one SQLite file per run directory.

WAL mode lets ``repro status`` and ``repro audit`` read a run while it is being written. Every
attempt is written in one transaction together with the candidate row it changes, so a process
killed at any moment leaves either the whole attempt or none of it. The schema is versioned and
migrated forward on open.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repro.records import (
    Candidate,
    CandidateStatus,
    ModelCallRecord,
    SourceProblem,
    StageAttempt,
    utc_now,
)

STORE_FILENAME = "run.sqlite"

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
)

SCHEMA_VERSION = len(_MIGRATIONS)


class StoreError(RuntimeError):
    pass


class RunStore:
    """All persistent state of one run. Safe to share between the event loop and worker threads."""

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILENAME
        if not self.path.exists() and not create:
            raise StoreError(f"{self.run_dir}: no run store ({STORE_FILENAME}) here; is this a run directory?")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.execute("PRAGMA busy_timeout=30000")
        self._migrate()

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._connection.execute("BEGIN IMMEDIATE")
            try:
                yield self._connection
            except BaseException:
                self._connection.execute("ROLLBACK")
                raise
            self._connection.execute("COMMIT")

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._connection.execute(sql, tuple(parameters))
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def schema_version(self) -> int:
        tables = self._query("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'")
        if not tables:
            return 0
        rows = self._query("SELECT value FROM meta WHERE key='schema_version'")
        return int(rows[0]["value"]) if rows else 0

    def _migrate(self) -> None:
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {current} is newer than this repro ({SCHEMA_VERSION}); upgrade repro"
            )
        while current < SCHEMA_VERSION:
            with self.transaction() as connection:
                # re-read under the write lock: another process may have migrated meanwhile
                version = self.schema_version()
                if version >= SCHEMA_VERSION:
                    return
                for statement in _MIGRATIONS[version].split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version + 1),)
                )
                if version == 0:
                    connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('created_at', ?)", (utc_now(),))
            current = version + 1

    # -- meta ----------------------------------------------------------------------------------------
    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as connection:
            connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else None

    # -- problems ------------------------------------------------------------------------------------
    def add_problems(self, problems: Iterable[SourceProblem]) -> int:
        """Insert problems not yet stored, keeping the first draw order; returns how many were new."""
        with self.transaction() as connection:
            start = connection.execute("SELECT COALESCE(MAX(draw_order), -1) + 1 FROM problems").fetchone()[0]
            added = 0
            for problem in problems:
                cursor = connection.execute(
                    "INSERT OR IGNORE INTO problems(problem_id, draw_order, payload) VALUES (?, ?, ?)",
                    (problem.problem_id, start + added, problem.model_dump_json()),
                )
                added += cursor.rowcount
        return added

    def problems(self) -> list[SourceProblem]:
        rows = self._query("SELECT payload FROM problems ORDER BY draw_order")
        return [SourceProblem.model_validate_json(row["payload"]) for row in rows]

    def problem(self, problem_id: str) -> SourceProblem:
        rows = self._query("SELECT payload FROM problems WHERE problem_id=?", (problem_id,))
        if not rows:
            raise StoreError(f"problem {problem_id!r} not in {self.path}")
        return SourceProblem.model_validate_json(rows[0]["payload"])

    def set_problem_outcome(self, problem_id: str, outcome: str) -> None:
        with self.transaction() as connection:
            connection.execute("UPDATE problems SET outcome=? WHERE problem_id=?", (outcome, problem_id))

    def problem_outcomes(self) -> dict[str, str | None]:
        rows = self._query("SELECT problem_id, outcome FROM problems ORDER BY draw_order")
        return {row["problem_id"]: row["outcome"] for row in rows}

    # -- candidates and attempts -----------------------------------------------------------------
    @staticmethod
    def _write_candidate(connection: sqlite3.Connection, candidate: Candidate) -> None:
        connection.execute(
            "INSERT OR REPLACE INTO candidates(candidate_id, problem_id, status, reject_stage, reject_reason,"
            " payload, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                candidate.candidate_id,
                candidate.problem_id,
                candidate.status.value,
                candidate.reject_stage.value if candidate.reject_stage else None,
                candidate.reject_reason.value if candidate.reject_reason else None,
                candidate.model_dump_json(),
                utc_now(),
            ),
        )

    def save_candidate(self, candidate: Candidate) -> None:
        with self.transaction() as connection:
            self._write_candidate(connection, candidate)

    def record_attempt(self, attempt: StageAttempt, candidate: Candidate | None = None) -> None:
        """Write one attempt (and the candidate state it leads to) atomically.

        Re-recording the same (candidate, stage, attempt number), as a resumed run does, replaces
        the row instead of duplicating it.
        """
        with self.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO attempts(candidate_id, problem_id, stage, attempt_number, status, reason,"
                " payload) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    attempt.candidate_id,
                    attempt.problem_id,
                    attempt.stage.value,
                    attempt.attempt_number,
                    attempt.status.value,
                    attempt.reason.value if attempt.reason else None,
                    attempt.model_dump_json(),
                ),
            )
            if candidate is not None:
                self._write_candidate(connection, candidate)

    def candidates(self, status: CandidateStatus | None = None) -> list[Candidate]:
        sql = "SELECT payload FROM candidates"
        parameters: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status=?"
            parameters = (status.value,)
        sql += " ORDER BY candidate_id"
        return [Candidate.model_validate_json(row["payload"]) for row in self._query(sql, parameters)]

    def attempts(
        self, *, candidate_id: str | None = None, stage: str | None = None, reason: str | None = None
    ) -> list[StageAttempt]:
        clauses, parameters = [], []
        for column, value in (("candidate_id", candidate_id), ("stage", stage), ("reason", reason)):
            if value is not None:
                clauses.append(f"{column}=?")
                parameters.append(value)
        sql = "SELECT payload FROM attempts"
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        sql += " ORDER BY attempt_id"
        return [StageAttempt.model_validate_json(row["payload"]) for row in self._query(sql, parameters)]

    def rejected_attempt_rows(
        self, *, stage: str | None = None, reason: str | None = None, limit: int | None = None
    ) -> list[sqlite3.Row]:
        """Not-passed attempts (any candidate status) with their candidate, problem and, for a
        verify attempt, the prove attempt it checked: one query with LIMIT, never every attempt."""
        clauses, parameters = ["a.status != 'passed'"], []
        for column, value in (("a.stage", stage), ("a.reason", reason)):
            if value is not None:
                clauses.append(f"{column}=?")
                parameters.append(value)
        sql = (
            "SELECT a.payload AS attempt, c.payload AS candidate, p.payload AS problem,"
            " (SELECT q.payload FROM attempts q WHERE q.candidate_id=a.candidate_id AND q.stage='prove'"
            "  AND q.attempt_number=a.attempt_number AND a.stage='verify') AS prove_attempt"
            " FROM attempts a JOIN candidates c ON c.candidate_id=a.candidate_id"
            " JOIN problems p ON p.problem_id=a.problem_id WHERE " + " AND ".join(clauses) + " ORDER BY a.attempt_id"
        )
        if limit is not None:
            sql += " LIMIT ?"
            parameters.append(str(limit))
        return self._query(sql, parameters)

    def stage_status_counts(self) -> list[tuple[str, str, str | None, int]]:
        rows = self._query(
            "SELECT stage, status, reason, COUNT(*) AS n FROM attempts GROUP BY stage, status, reason"
            " ORDER BY stage, status, reason"
        )
        return [(row["stage"], row["status"], row["reason"], row["n"]) for row in rows]

    def candidate_status_counts(self) -> dict[str, int]:
        rows = self._query("SELECT status, COUNT(*) AS n FROM candidates GROUP BY status")
        return {row["status"]: row["n"] for row in rows}

    # -- model responses and accounting ----------------------------------------------------------
    def cached_response(self, cache_key: str) -> dict[str, Any] | None:
        rows = self._query("SELECT response FROM response_cache WHERE cache_key=?", (cache_key,))
        return json.loads(rows[0]["response"]) if rows else None

    def record_model_response(self, call: ModelCallRecord, entries: dict[str, dict[str, Any]]) -> None:
        """Cache a fresh response's samples and account for the call in one transaction, so a kill
        can never keep the answer while losing the record that it was paid for (or the reverse)."""
        with self.transaction() as connection:
            for cache_key, response in entries.items():
                connection.execute(
                    "INSERT OR REPLACE INTO response_cache(cache_key, response, created_at) VALUES (?, ?, ?)",
                    (cache_key, json.dumps(response, ensure_ascii=False), utc_now()),
                )
            connection.execute(
                "INSERT INTO model_calls(stage, model_id, backend_id, cache_hit, payload) VALUES (?, ?, ?, ?, ?)",
                (call.stage, call.model_id, call.backend_id, int(call.cache_hit), call.model_dump_json()),
            )

    def record_model_call(self, call: ModelCallRecord) -> None:
        with self.transaction() as connection:
            connection.execute(
                "INSERT INTO model_calls(stage, model_id, backend_id, cache_hit, payload) VALUES (?, ?, ?, ?, ?)",
                (call.stage, call.model_id, call.backend_id, int(call.cache_hit), call.model_dump_json()),
            )

    def model_calls(self) -> list[ModelCallRecord]:
        rows = self._query("SELECT payload FROM model_calls ORDER BY call_id")
        return [ModelCallRecord.model_validate_json(row["payload"]) for row in rows]

    # -- Lean results -------------------------------------------------------------------------------
    def cached_lean_result(self, code_hash: str) -> dict[str, Any] | None:
        rows = self._query("SELECT result FROM lean_cache WHERE code_hash=?", (code_hash,))
        return json.loads(rows[0]["result"]) if rows else None

    def cache_lean_result(self, code_hash: str, result: dict[str, Any]) -> None:
        with self.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO lean_cache(code_hash, result) VALUES (?, ?)",
                (code_hash, json.dumps(result, ensure_ascii=False)),
            )
