"""The run store: one SQLite file per run directory.

WAL mode lets ``repro status`` and ``repro audit`` read a run while it is being written. Every
attempt is written in one transaction together with the candidate row it changes, so a process
killed at any moment leaves either the whole attempt or none of it. The schema is versioned and
migrated forward on open.

A run at scale starts the store's writer thread (:meth:`RunStore.start_writer`): every write is
then queued in order and the thread commits whatever has queued up as one transaction, so SQLite
leaves the event loop and a commit costs once per batch instead of once per attempt. Writes are
applied in the order they were made and a batch commits whole or not at all, so a killed process
leaves a prefix of its writes: never an attempt without its candidate row, never a cached answer
without its accounting. Reads go through a second connection and see what has been committed.

Metrics never scan the big tables: candidates carry the furthest stage they reached and passed,
and model and Lean accounting are kept as running totals in the same transactions as the rows
they count, so ``repro status`` costs the same on a thousand problems as on a million.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from repro.records import (
    LEVER_STAGES,
    STAGE_ORDER,
    AttemptStatus,
    Candidate,
    CandidateStatus,
    ModelCallRecord,
    SourceProblem,
    Stage,
    StageAttempt,
    utc_now,
)

STORE_FILENAME = "run.sqlite"

# A stage's position in the pipeline; a candidate that reached (passed) a stage reached (passed)
# every stage before it, so one number per candidate says how far it got.
STAGE_RANK: dict[str, int] = {stage.value: rank for rank, stage in enumerate(STAGE_ORDER)}
STAGE_RANK.update({lever.value: STAGE_RANK[Stage.verify.value] for lever in LEVER_STAGES})
_STAGE_RANK_SQL = "CASE stage " + " ".join(f"WHEN '{name}' THEN {rank}" for name, rank in STAGE_RANK.items()) + " END"

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
)

SCHEMA_VERSION = len(_MIGRATIONS)

# a queued write: runs inside the writer's open transaction
WriteOperation = Callable[[sqlite3.Connection], object]


class StoreError(RuntimeError):
    pass


class _Flush:
    """A marker in the write queue: set once every write queued before it has been committed."""

    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


class RunStore:
    """All persistent state of one run. Safe to share between the event loop and worker threads."""

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILENAME
        if not self.path.exists() and not create:
            raise StoreError(f"{self.run_dir}: no run store ({STORE_FILENAME}) here; is this a run directory?")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = self._connect()
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._read_lock = threading.RLock()
        self._reader = self._connect()
        self._migrate()
        self._queue: queue.Queue[object] | None = None
        self._writer: threading.Thread | None = None
        self._failure: StoreError | None = None
        self.batches_written = 0
        # tables that were empty when the writer started, with what this run wrote to them lately
        self._fresh: dict[str, OrderedDict[str, str]] = {}

    def _connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None, timeout=30)
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.execute("PRAGMA busy_timeout=30000")
        return connection

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        try:
            self.stop_writer()
        finally:
            with self._lock:
                self._connection.close()
            with self._read_lock:
                self._reader.close()

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
        with self._read_lock:
            cursor = self._reader.execute(sql, tuple(parameters))
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def _iterate(self, sql: str, parameters: Iterable[Any] = (), *, page: int = 500) -> Iterator[sqlite3.Row]:
        """Rows of a query a page at a time from one cursor, so a caller that stops early never reads
        the rest and a full pass costs one scan (the lock is held per page, not across the caller)."""
        with self._read_lock:
            cursor = self._reader.execute(sql, tuple(parameters))
            cursor.row_factory = sqlite3.Row
        try:
            while True:
                with self._read_lock:
                    rows = cursor.fetchmany(page)
                if not rows:
                    return
                yield from rows
        finally:
            with self._read_lock:
                cursor.close()

    def schema_version(self) -> int:
        tables = self._query("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'")
        if not tables:
            return 0
        rows = self._query("SELECT value FROM meta WHERE key='schema_version'")
        return int(rows[0]["value"]) if rows else 0

    def _written_version(self, connection: sqlite3.Connection) -> int:
        if not connection.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone():
            return 0
        row = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 0

    def _migrate(self) -> None:
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {current} is newer than this repro ({SCHEMA_VERSION}); upgrade repro"
            )
        while current < SCHEMA_VERSION:
            with self.transaction() as connection:
                # re-read under the write lock: another process may have migrated meanwhile
                version = self._written_version(connection)
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

    # -- the writer thread -----------------------------------------------------------------------
    def start_writer(self, *, batch_size: int = 1000, queue_size: int = 20000) -> None:
        """From now on writes are queued and committed in batches by one thread (see module doc).

        The queue is bounded: when the disk cannot keep up, writers wait instead of growing memory.
        """
        if self._writer is not None:
            return
        # A cache table that starts empty (a fresh run) can only answer with what this run wrote:
        # lookups go to a bounded memory of recent writes instead of the database, so the event
        # loop does not wait on SQLite (and the writer thread) for a lookup that would miss.
        self._fresh = {
            table: OrderedDict()
            for table in ("response_cache", "lean_cache", "problems")
            if not self._query(f"SELECT 1 FROM {table} LIMIT 1")
        }
        self._queue = queue.Queue(maxsize=queue_size)
        self._batch_size = batch_size
        self._writer = threading.Thread(target=self._write_loop, name=f"repro-store-writer:{self.run_dir}", daemon=True)
        self._writer.start()

    def flush(self) -> None:
        """Block until every write made so far is committed; raise if any of them failed."""
        if self._queue is not None and self._writer is not None and self._writer.is_alive():
            marker = _Flush()
            self._queue.put(marker)
            marker.done.wait()
        self._raise_failure()

    def stop_writer(self) -> None:
        """Commit what is queued and go back to writing synchronously."""
        if self._writer is None or self._queue is None:
            return
        if self._writer.is_alive():
            self._queue.put(_STOP)
            self._writer.join()
        self._writer, self._queue = None, None
        self._fresh = {}
        self._raise_failure()

    @property
    def writer_running(self) -> bool:
        return self._writer is not None

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _write_loop(self) -> None:
        assert self._queue is not None
        while True:
            batch: list[object] = [self._queue.get()]
            while len(batch) < self._batch_size and batch[-1] is not _STOP:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            operations: list[WriteOperation] = [item for item in batch if callable(item)]
            if operations:
                self._commit(operations)
            for item in batch:
                if isinstance(item, _Flush):
                    item.done.set()
            if batch[-1] is _STOP:
                return

    def _commit(self, operations: list[WriteOperation]) -> None:
        try:
            with self.transaction() as connection:
                for operation in operations:
                    operation(connection)
            self.batches_written += 1
            return
        except Exception:
            pass  # find the write that fails; every other one still lands, in order
        for operation in operations:
            try:
                with self.transaction() as connection:
                    operation(connection)
            except Exception as error:
                if self._failure is None:
                    self._failure = StoreError(f"{self.path}: a queued write failed: {type(error).__name__}: {error}")

    def _write(self, operation: WriteOperation) -> None:
        if self._failure is not None:
            self._raise_failure()
        if self._queue is not None:
            self._queue.put(operation)
            return
        with self.transaction() as connection:
            operation(connection)

    def _write_and_wait(self, operation: WriteOperation) -> object:
        result: list[object] = []
        self._write(lambda connection: result.append(operation(connection)))
        self.flush()
        return result[0] if result else None

    # -- meta ----------------------------------------------------------------------------------------
    def set_meta(self, key: str, value: str) -> None:
        self._write(
            lambda connection: connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
        )

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else None

    # -- problems ------------------------------------------------------------------------------------
    @staticmethod
    def _problem_rows(problems: Iterable[SourceProblem]) -> list[tuple[str, str, str | None, str | None]]:
        return [(p.problem_id, p.model_dump_json(), p.level, p.type) for p in problems]

    @staticmethod
    def _insert_problems(connection: sqlite3.Connection, rows: list[tuple[str, str, str | None, str | None]]) -> int:
        # MAX over the draw_order index: constant time however many problems are stored
        start = connection.execute("SELECT COALESCE(MAX(draw_order), -1) + 1 FROM problems").fetchone()[0]
        added = 0
        for problem_id, payload, level, kind in rows:
            cursor = connection.execute(
                "INSERT OR IGNORE INTO problems(problem_id, draw_order, payload, level, type) VALUES (?, ?, ?, ?, ?)",
                (problem_id, start + added, payload, level, kind),
            )
            added += cursor.rowcount
        return added

    def add_problems(self, problems: Iterable[SourceProblem]) -> int:
        """Insert problems not yet stored, keeping the first draw order; returns how many were new."""
        rows = self._problem_rows(problems)
        added = self._write_and_wait(lambda connection: self._insert_problems(connection, rows))
        return added if isinstance(added, int) else 0

    def register_problem(self, problem: SourceProblem) -> None:
        """Add one problem (if new) without waiting for the write: O(1) however large the run."""
        rows = self._problem_rows([problem])
        self._write(lambda connection: self._insert_problems(connection, rows))

    def problems(self) -> list[SourceProblem]:
        return list(self.iter_problems())

    def iter_problems(self) -> Iterator[SourceProblem]:
        for row in self._iterate("SELECT payload FROM problems ORDER BY draw_order"):
            yield SourceProblem.model_validate_json(row["payload"])

    def problem(self, problem_id: str) -> SourceProblem:
        rows = self._query("SELECT payload FROM problems WHERE problem_id=?", (problem_id,))
        if not rows:
            raise StoreError(f"problem {problem_id!r} not in {self.path}")
        return SourceProblem.model_validate_json(rows[0]["payload"])

    def draw_orders(self) -> dict[str, int]:
        """Problem id -> draw position, without parsing any payload."""
        return {row[0]: row[1] for row in self._query("SELECT problem_id, draw_order FROM problems")}

    def set_problem_outcome(self, problem_id: str, outcome: str) -> None:
        self._write(
            lambda connection: connection.execute(
                "UPDATE problems SET outcome=?, unfinished_cause=NULL WHERE problem_id=?", (outcome, problem_id)
            )
        )

    def mark_unfinished(self, problem_id: str, cause: str) -> None:
        """Record why a problem was left for ``--resume`` (an endpoint, Lean, or an unexpected error)."""
        self._write(
            lambda connection: connection.execute(
                "UPDATE problems SET unfinished_cause=? WHERE problem_id=? AND outcome IS NULL",
                (cause[:2000], problem_id),
            )
        )

    def problem_outcome(self, problem_id: str) -> str | None:
        if "problems" in self._fresh:  # a fresh run: nothing was finished before it started
            return None
        rows = self._query("SELECT outcome FROM problems WHERE problem_id=?", (problem_id,))
        return rows[0]["outcome"] if rows else None

    def problem_outcomes(self) -> dict[str, str | None]:
        rows = self._query("SELECT problem_id, outcome FROM problems ORDER BY draw_order")
        return {row["problem_id"]: row["outcome"] for row in rows}

    def outcome_counts(self) -> dict[str | None, int]:
        """Problems per outcome (``None``: drawn but unfinished)."""
        rows = self._query("SELECT outcome, COUNT(*) AS n FROM problems GROUP BY outcome")
        return {row["outcome"]: row["n"] for row in rows}

    def unfinished_problems(self, limit: int = 20) -> list[tuple[str, str | None]]:
        """The first unfinished problems in draw order, each with the cause recorded for it."""
        rows = self._query(
            "SELECT problem_id, unfinished_cause FROM problems WHERE outcome IS NULL ORDER BY draw_order LIMIT ?",
            (limit,),
        )
        return [(row["problem_id"], row["unfinished_cause"]) for row in rows]

    def level_type_outcomes(self) -> list[tuple[str | None, str | None, str | None, int]]:
        rows = self._query(
            "SELECT level, type, outcome, COUNT(*) AS n FROM problems WHERE outcome IS NOT NULL"
            " GROUP BY level, type, outcome"
        )
        return [(row["level"], row["type"], row["outcome"], row["n"]) for row in rows]

    # -- candidates and attempts -----------------------------------------------------------------
    @staticmethod
    def _candidate_row(candidate: Candidate) -> tuple[Any, ...]:
        """Serialized now, on the caller's thread: the pipeline keeps mutating the object."""
        return (
            candidate.candidate_id,
            candidate.problem_id,
            candidate.status.value,
            candidate.reject_stage.value if candidate.reject_stage else None,
            candidate.reject_reason.value if candidate.reject_reason else None,
            candidate.model_dump_json(),
            utc_now(),
            candidate.proof_attempt_number,
        )

    @staticmethod
    def _write_candidate(connection: sqlite3.Connection, row: tuple[Any, ...]) -> None:
        connection.execute(
            "INSERT INTO candidates(candidate_id, problem_id, status, reject_stage, reject_reason, payload, updated_at,"
            " proof_attempt_number) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(candidate_id) DO UPDATE SET problem_id=excluded.problem_id, status=excluded.status,"
            " reject_stage=excluded.reject_stage, reject_reason=excluded.reject_reason, payload=excluded.payload,"
            " updated_at=excluded.updated_at, proof_attempt_number=excluded.proof_attempt_number",
            row,
        )

    def save_candidate(self, candidate: Candidate) -> None:
        row = self._candidate_row(candidate)
        self._write(lambda connection: self._write_candidate(connection, row))

    @staticmethod
    def _write_attempt(connection: sqlite3.Connection, attempt: StageAttempt) -> None:
        key = (attempt.candidate_id, attempt.stage.value, attempt.attempt_number)
        previous = connection.execute(
            "SELECT lean_seconds, status, reason FROM attempts WHERE candidate_id=? AND stage=? AND attempt_number=?",
            key,
        ).fetchone()
        connection.execute(
            "INSERT OR REPLACE INTO attempts(candidate_id, problem_id, stage, attempt_number, status, reason,"
            " payload, lean_seconds) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                attempt.candidate_id,
                attempt.problem_id,
                attempt.stage.value,
                attempt.attempt_number,
                attempt.status.value,
                attempt.reason.value if attempt.reason else None,
                attempt.model_dump_json(),
                attempt.lean_seconds,
            ),
        )
        counted = "UPDATE attempt_counts SET n = n - 1 WHERE stage=? AND status=? AND reason=?"
        if previous:  # a resumed run re-records the attempt: it replaces, so it is not counted twice
            connection.execute(counted, (attempt.stage.value, previous[1], previous[2] or ""))
        connection.execute(
            "INSERT INTO attempt_counts(stage, status, reason, n) VALUES (?, ?, ?, 1)"
            " ON CONFLICT(stage, status, reason) DO UPDATE SET n = n + 1",
            (attempt.stage.value, attempt.status.value, attempt.reason.value if attempt.reason else ""),
        )
        added = attempt.lean_seconds - (previous[0] if previous else 0.0)
        if added:
            connection.execute(
                "INSERT INTO totals(name, value) VALUES ('lean_seconds', ?)"
                " ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                (added,),
            )
        rank = STAGE_RANK[attempt.stage.value]
        connection.execute(
            "UPDATE candidates SET reached_rank = MAX(reached_rank, ?), passed_rank = MAX(passed_rank, ?)"
            " WHERE candidate_id=?",
            (rank, rank if attempt.status == AttemptStatus.passed else -1, attempt.candidate_id),
        )

    def record_attempt(self, attempt: StageAttempt, candidate: Candidate | None = None) -> None:
        """Write one attempt (and the candidate state it leads to) atomically.

        Re-recording the same (candidate, stage, attempt number), as a resumed run does, replaces
        the row instead of duplicating it.
        """
        row = self._candidate_row(candidate) if candidate is not None else None

        def write(connection: sqlite3.Connection) -> None:
            if row is not None:
                self._write_candidate(connection, row)
            self._write_attempt(connection, attempt)

        self._write(write)

    def candidates(self, status: CandidateStatus | None = None) -> list[Candidate]:
        return list(self.iter_candidates(status))

    def iter_candidates(self, status: CandidateStatus | None = None) -> Iterator[Candidate]:
        sql = "SELECT payload FROM candidates"
        parameters: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status=?"
            parameters = (status.value,)
        sql += " ORDER BY candidate_id"
        for row in self._iterate(sql, parameters):
            yield Candidate.model_validate_json(row["payload"])

    def retained_rows(
        self, select: str, *, where: str = "", parameters: Mapping[str, Any] | Iterable[Any] = (), page: int = 5000
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        """Retained candidates joined to their problems, in release order (draw order, then id), a
        page of plain tuples at a time.

        ``select`` and ``where`` are SQL over ``c`` (candidates) and ``p`` (problems), so a caller
        reads the fields it needs in one pass, extracted by SQLite, without parsing whole payloads.
        A retained candidate whose problem is not stored is not among them: see :meth:`check_retained_problems`.
        """
        sql = (
            # problems first (CROSS JOIN fixes the order): their draw-order index gives the release
            # order, so only each problem's few candidates are sorted, never the whole release
            f"SELECT {select} FROM problems p CROSS JOIN candidates c ON c.problem_id=p.problem_id"
            f" WHERE c.status='retained'{f' AND ({where})' if where else ''} ORDER BY p.draw_order, c.candidate_id"
        )
        bound = parameters if isinstance(parameters, Mapping) else tuple(parameters)
        with self._read_lock:
            cursor = self._reader.execute(sql, bound)
        try:
            while True:
                with self._read_lock:
                    rows = cursor.fetchmany(page)
                if not rows:
                    return
                yield rows
        finally:
            with self._read_lock:
                cursor.close()

    def check_retained_problems(self) -> None:
        """Raise if a retained candidate's problem is not stored (a damaged store)."""
        orphan = self._query(
            "SELECT problem_id FROM candidates c WHERE status='retained'"
            " AND NOT EXISTS (SELECT 1 FROM problems p WHERE p.problem_id=c.problem_id) LIMIT 1"
        )
        if orphan:
            raise StoreError(f"problem {orphan[0]['problem_id']!r} not in {self.path}")

    def retained_count(self) -> int:
        return int(self._query("SELECT COUNT(*) AS n FROM candidates WHERE status='retained'")[0]["n"])

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
            "SELECT stage, status, reason, n FROM attempt_counts WHERE n > 0 ORDER BY stage, status, reason"
        )
        return [(row["stage"], row["status"], row["reason"] or None, row["n"]) for row in rows]

    def candidate_status_counts(self) -> dict[str, int]:
        rows = self._query("SELECT status, COUNT(*) AS n FROM candidates GROUP BY status")
        return {row["status"]: row["n"] for row in rows}

    def reach_counts(self) -> list[tuple[int, int, int]]:
        """(furthest stage rank reached, furthest passed, candidates) over all candidates."""
        rows = self._query(
            "SELECT reached_rank, passed_rank, COUNT(*) AS n FROM candidates GROUP BY reached_rank, passed_rank"
        )
        return [(row["reached_rank"], row["passed_rank"], row["n"]) for row in rows]

    def statement_check_counts(self) -> list[tuple[str | None, str | None, str, int]]:
        """(level, type, reason, candidates) for statements our Lean checks found vacuous or refuted."""
        rows = self._query(
            "SELECT p.level AS level, p.type AS type, a.reason AS reason, COUNT(DISTINCT a.candidate_id) AS n"
            " FROM attempts a JOIN problems p ON p.problem_id = a.problem_id"
            " WHERE a.stage = 'check' AND a.reason IN ('statement_vacuous', 'statement_refuted')"
            " GROUP BY p.level, p.type, a.reason"
        )
        return [(row["level"], row["type"], row["reason"], row["n"]) for row in rows]

    def rejection_counts(self) -> list[tuple[str | None, str | None, int]]:
        rows = self._query(
            "SELECT reject_stage, reject_reason, COUNT(*) AS n FROM candidates WHERE status='rejected'"
            " GROUP BY reject_stage, reject_reason"
        )
        return [(row["reject_stage"], row["reject_reason"], row["n"]) for row in rows]

    def retained_proof_positions(self, *, raw_samples_only: bool = False) -> dict[int | None, int]:
        """Retained candidates per position of their verified sample (for pass@j).

        With ``raw_samples_only``, only candidates whose proof is a raw prover sample (no salvage, no
        feedback round): the prover's own first-round pass@j.
        """
        lever = " AND json_extract(payload, '$.proof_lever') IS NULL" if raw_samples_only else ""
        rows = self._query(
            "SELECT proof_attempt_number AS position, COUNT(*) AS n FROM candidates WHERE status='retained'"
            f"{lever} GROUP BY proof_attempt_number"
        )
        return {row["position"]: row["n"] for row in rows}

    def retained_by_lever(self) -> list[tuple[str | None, str | None, str | None, int]]:
        """(level, type, lever, retained candidates): which lever, if any, gave each retained proof."""
        rows = self._query(
            "SELECT p.level AS level, p.type AS type, json_extract(c.payload, '$.proof_lever') AS lever,"
            " COUNT(*) AS n FROM candidates c JOIN problems p ON p.problem_id = c.problem_id"
            " WHERE c.status='retained' GROUP BY 1, 2, 3"
        )
        return [(row["level"], row["type"], row["lever"], row["n"]) for row in rows]

    def lever_costs(self) -> dict[str, dict[str, float]]:
        """Per lever stage: attempts, verified, Lean seconds, model calls and tokens it cost."""
        rows = self._query(
            "SELECT stage, COUNT(*) AS attempts, SUM(status = 'passed') AS verified,"
            " SUM(lean_seconds) AS lean_seconds,"
            " SUM(COALESCE(json_extract(payload, '$.model_calls'), 0)) AS model_calls,"
            " SUM(COALESCE(json_extract(payload, '$.tokens_in'), 0)) AS tokens_in,"
            " SUM(COALESCE(json_extract(payload, '$.tokens_out'), 0)) AS tokens_out"
            " FROM attempts WHERE stage IN ('salvage', 'feedback') GROUP BY stage"
        )
        return {
            row["stage"]: {
                "attempts": row["attempts"],
                "verified": row["verified"],
                "lean_seconds": round(row["lean_seconds"] or 0.0, 3),
                "model_calls": row["model_calls"],
                "tokens_in": row["tokens_in"],
                "tokens_out": row["tokens_out"],
            }
            for row in rows
        }

    def proving_round_counts(self, k: int) -> dict[tuple[int, int], int]:
        """Retained candidates per (samples drawn, samples verified) in the round that gave their proof.

        One aggregate over the verify attempts of retained candidates (rounds are ``attempt // k``; the
        proving round is the last one with a verified sample);
        proofs a study supplied (``--reprove-with``) are not the run's prover's and are left out.
        """
        rows = self._query(
            "SELECT n, c, COUNT(*) AS candidates FROM ("
            " SELECT n, c, ROW_NUMBER() OVER (PARTITION BY candidate_id ORDER BY round DESC) AS latest FROM ("
            "  SELECT a.candidate_id, a.attempt_number / ? AS round, COUNT(*) AS n,"
            "   SUM(a.status = 'passed') AS c FROM attempts a"
            "  JOIN candidates cd ON cd.candidate_id = a.candidate_id"
            "  WHERE cd.status = 'retained' AND cd.proof_attempt_number IS NOT NULL AND a.stage = 'verify'"
            "  AND COALESCE(json_extract(a.payload, '$.output.reused_from_study'), 0) = 0"
            "  GROUP BY a.candidate_id, round HAVING c > 0"
            " )"
            ") WHERE latest = 1 GROUP BY n, c",
            (k,),
        )
        return {(row["n"], row["c"]): row["candidates"] for row in rows}

    # -- model responses and accounting ----------------------------------------------------------
    def _remember(self, table: str, key: str, text: str, *, entries: int = 20000) -> None:
        recent = self._fresh.get(table)
        if recent is not None:
            recent[key] = text
            if len(recent) > entries:
                recent.popitem(last=False)

    def _recalled(self, table: str, key: str) -> str | None:
        return self._fresh[table].get(key)

    def cached_response(self, cache_key: str) -> dict[str, Any] | None:
        if "response_cache" in self._fresh:
            text = self._recalled("response_cache", cache_key)
            return json.loads(text) if text is not None else None
        rows = self._query("SELECT response FROM response_cache WHERE cache_key=?", (cache_key,))
        return json.loads(rows[0]["response"]) if rows else None

    @staticmethod
    def _account(connection: sqlite3.Connection, call: ModelCallRecord) -> None:
        connection.execute(
            "INSERT INTO model_calls(stage, model_id, backend_id, cache_hit, payload) VALUES (?, ?, ?, ?, ?)",
            (call.stage, call.model_id, call.backend_id, int(call.cache_hit), call.model_dump_json()),
        )
        fresh = not call.cache_hit
        connection.execute(
            "INSERT INTO model_totals(stage, model_id, calls, cache_hits, failed, retries, tokens_in, tokens_out,"
            " latency_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(stage, model_id) DO UPDATE SET"
            " calls = calls + excluded.calls, cache_hits = cache_hits + excluded.cache_hits,"
            " failed = failed + excluded.failed, retries = retries + excluded.retries,"
            " tokens_in = tokens_in + excluded.tokens_in, tokens_out = tokens_out + excluded.tokens_out,"
            " latency_s = latency_s + excluded.latency_s",
            (
                call.stage,
                call.model_id,
                int(fresh),
                0 if fresh else call.samples,
                int(fresh and call.error is not None),
                call.retries if fresh else 0,
                call.tokens_in if fresh else 0,
                call.tokens_out if fresh else 0,
                call.latency_s if fresh else 0.0,
            ),
        )

    def record_model_response(self, call: ModelCallRecord, entries: dict[str, dict[str, Any]]) -> None:
        """Cache a fresh response's samples and account for the call in one transaction, so a kill
        can never keep the answer while losing the record that it was paid for (or the reverse)."""
        created = utc_now()
        rows = [(key, json.dumps(response, ensure_ascii=False), created) for key, response in entries.items()]
        for key, text, _ in rows:
            self._remember("response_cache", key, text)

        def write(connection: sqlite3.Connection) -> None:
            connection.executemany(
                "INSERT OR REPLACE INTO response_cache(cache_key, response, created_at) VALUES (?, ?, ?)", rows
            )
            self._account(connection, call)

        self._write(write)

    def record_model_call(self, call: ModelCallRecord) -> None:
        self._write(lambda connection: self._account(connection, call))

    def model_calls(self) -> list[ModelCallRecord]:
        rows = self._query("SELECT payload FROM model_calls ORDER BY call_id")
        return [ModelCallRecord.model_validate_json(row["payload"]) for row in rows]

    def model_totals(self) -> list[dict[str, Any]]:
        """Per (stage, model): fresh calls, cache hits (samples), failures, retries, tokens, latency."""
        rows = self._query("SELECT * FROM model_totals ORDER BY stage, model_id")
        return [dict(row) for row in rows]

    def total(self, name: str) -> float:
        rows = self._query("SELECT value FROM totals WHERE name=?", (name,))
        return float(rows[0]["value"]) if rows else 0.0

    # -- Lean results -------------------------------------------------------------------------------
    def cached_lean_result(self, code_hash: str) -> dict[str, Any] | None:
        if "lean_cache" in self._fresh:
            text = self._recalled("lean_cache", code_hash)
            return json.loads(text) if text is not None else None
        rows = self._query("SELECT result FROM lean_cache WHERE code_hash=?", (code_hash,))
        return json.loads(rows[0]["result"]) if rows else None

    def cache_lean_result(self, code_hash: str, result: dict[str, Any]) -> None:
        text = json.dumps(result, ensure_ascii=False)
        self._remember("lean_cache", code_hash, text)
        self._write(
            lambda connection: connection.execute(
                "INSERT OR REPLACE INTO lean_cache(code_hash, result) VALUES (?, ?)", (code_hash, text)
            )
        )
