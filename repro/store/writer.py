"""Writing a run store: the writer connection, migration on open, the writer thread, every record.

WAL mode lets ``repro status`` and ``repro audit`` read a run while it is being written. Every
attempt is written in one transaction together with the candidate row it changes, so a process
killed at any moment leaves either the whole attempt or none of it.

A run at scale starts the store's writer thread (:meth:`RunStore.start_writer`): every write is
then queued in order and the thread commits whatever has queued up as one transaction, so SQLite
leaves the event loop and a commit costs once per batch instead of once per attempt. Writes are
applied in the order they were made and a batch commits whole or not at all, so a killed process
leaves a prefix of its writes: never an attempt without its candidate row, never a cached answer
without its accounting. Reads go through a second connection and see what has been committed.

A write that fails is reported to the caller that made it, never to whoever writes next: every row is
serialized and checked for encodability on the caller's thread (what cannot be stored raises there, as a
:class:`StoreError` naming the record), and a queued write that still fails in the writer thread is kept
for the task (or thread) that queued it, raised at its next write or flush; one no caller claimed is raised
when the writer stops. One reply holding a lone surrogate failed an innocent concurrent problem's next write
(red team red1, R7).
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from repro.records import (
    AttemptStatus,
    Candidate,
    CandidateStatus,
    ModelCallRecord,
    ReasonCode,
    SourceProblem,
    Stage,
    StageAttempt,
    utc_now,
)
from repro.store.reader import RunReader
from repro.store.schema import STAGE_RANK, STORE_FILENAME, StoreError, migrate
from repro.store.sqlite import connect, immediate_transaction

# a queued write: runs inside the writer's open transaction
WriteOperation = Callable[[sqlite3.Connection], object]


class _Flush:
    """A marker in the write queue: set once every write queued before it has been committed."""

    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


def _caller() -> object:
    """Who makes a write: the asyncio task, else the thread; a queued write's failure is kept for it."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return task if task is not None else threading.get_ident()


def _storable(what: str, *values: object) -> None:
    """Raise, on the caller's thread, for a text that no UTF-8 encoder (SQLite's) accepts."""
    for value in values:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as error:
                raise StoreError(f"cannot store {what}: {error}") from None


def _json(what: str, dump: Callable[[], str]) -> str:
    """A record's JSON, made on the caller's thread; what cannot be encoded is that caller's error."""
    try:
        text = dump()
    except (ValueError, TypeError) as error:  # pydantic's PydanticSerializationError is a ValueError
        raise StoreError(f"cannot store {what}: {error}") from None
    _storable(what, text)
    return text


class RunStore(RunReader):
    """All persistent state of one run, read and written. Safe to share between the event loop and
    worker threads."""

    def __init__(self, run_dir: str | Path, *, create: bool = True) -> None:
        self._bind(run_dir)
        if not self.path.exists() and not create:
            raise StoreError(f"{self.run_dir}: no run store ({STORE_FILENAME}) here; is this a run directory?")
        try:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            self._lock = threading.RLock()
            self._connection = connect(self.path, wal=True)
            self._reader = connect(self.path)
        except (OSError, sqlite3.OperationalError) as error:
            raise StoreError(f"{self.path}: cannot open the run store for writing ({error})") from None
        migrate(self.path, self.schema_version(), self.transaction)
        self._queue: queue.Queue[object] | None = None
        self._writer: threading.Thread | None = None
        # the failures of queued writes, by the caller (task or thread) that queued each
        self._failures: dict[object, StoreError] = {}
        self._failures_lock = threading.Lock()
        self.batches_written = 0

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        try:
            self.stop_writer()
        finally:
            with self._lock:
                self._connection.close()
            super().close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self._lock, self._connection)

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
            for table in ("response_cache", "lean_cache", "judge_cache", "problems")
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
        self._raise_failure(_caller())

    def stop_writer(self) -> None:
        """Commit what is queued and go back to writing synchronously."""
        if self._writer is None or self._queue is None:
            return
        if self._writer.is_alive():
            self._queue.put(_STOP)
            self._writer.join()
        self._writer, self._queue = None, None
        self._fresh = {}
        self._raise_failure(None)  # a failure no caller claimed is not lost

    @property
    def writer_running(self) -> bool:
        return self._writer is not None

    def _raise_failure(self, owner: object | None) -> None:
        """Raise the failure of a write ``owner`` queued (None: any caller's)."""
        with self._failures_lock:
            if owner is None:
                owner = next(iter(self._failures), None)
            failure = self._failures.pop(owner, None) if owner is not None else None
        if failure is not None:
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
            operations = [item for item in batch if isinstance(item, tuple)]
            if operations:
                self._commit(operations)
            for item in batch:
                if isinstance(item, _Flush):
                    item.done.set()
            if batch[-1] is _STOP:
                return

    def _commit(self, operations: list[tuple[object, WriteOperation]]) -> None:
        try:
            with self.transaction() as connection:
                for _, operation in operations:
                    operation(connection)
            self.batches_written += 1
            return
        except Exception:
            pass  # find the write that fails; every other one still lands, in order
        for owner, operation in operations:
            try:
                with self.transaction() as connection:
                    operation(connection)
            except Exception as error:
                failure = StoreError(f"{self.path}: a queued write failed: {type(error).__name__}: {error}")
                with self._failures_lock:
                    self._failures.setdefault(owner, failure)

    def _write(self, operation: WriteOperation) -> None:
        owner = _caller()
        self._raise_failure(owner)
        if self._queue is not None:
            self._queue.put((owner, operation))
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

    # -- problems ------------------------------------------------------------------------------------
    @staticmethod
    def _problem_rows(problems: Iterable[SourceProblem]) -> list[tuple[str, str, str | None, str | None]]:
        rows = [(p.problem_id, _json(f"problem {p.problem_id}", p.model_dump_json), p.level, p.type) for p in problems]
        for row in rows:
            _storable(f"problem {row[0]}", *row)
        return rows

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

    def set_problem_outcome(self, problem_id: str, outcome: str) -> None:
        self._write(
            lambda connection: connection.execute(
                "UPDATE problems SET outcome=?, unfinished_cause=NULL WHERE problem_id=?", (outcome, problem_id)
            )
        )

    def mark_unfinished(self, problem_id: str, cause: str) -> None:
        """Record why a problem was left for ``--resume`` (an endpoint, Lean, or an unexpected error)."""
        cause = cause.encode("utf-8", "replace").decode("utf-8")  # a cause quoting model text is still stored
        self._write(
            lambda connection: connection.execute(
                "UPDATE problems SET unfinished_cause=? WHERE problem_id=? AND outcome IS NULL",
                (cause[:2000], problem_id),
            )
        )

    # -- candidates and attempts -----------------------------------------------------------------
    @staticmethod
    def _candidate_row(candidate: Candidate) -> tuple[Any, ...]:
        """Serialized now, on the caller's thread: the pipeline keeps mutating the object."""
        row = (
            candidate.candidate_id,
            candidate.problem_id,
            candidate.status.value,
            candidate.reject_stage.value if candidate.reject_stage else None,
            candidate.reject_reason.value if candidate.reject_reason else None,
            _json(f"candidate {candidate.candidate_id}", candidate.model_dump_json),
            utc_now(),
            candidate.proof_attempt_number,
        )
        _storable(f"candidate {candidate.candidate_id}", *row)
        return row

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
    def _reopen_problem(problem_id: str, cause: str) -> Callable[[sqlite3.Connection], object]:
        def reopen(connection: sqlite3.Connection) -> object:
            return connection.execute(
                "UPDATE problems SET outcome=NULL, unfinished_cause=? WHERE problem_id=?", (cause, problem_id)
            )

        return reopen

    def reopen_outdated_judgements(self, outdated: Callable[[Candidate], str | None]) -> list[tuple[str, str]]:
        """Retained candidates a real judge passed that ``outdated`` says is not today's judge: unfinished again for
        want of today's verdict, and their problems with them, so ``repro run --resume`` judges them afresh
        (every model answer and Lean result is read back from the store; the judge's cache key holds its
        revision and checks, so the older verdict is not). The (candidate id, why) of each, in order."""
        reopened: list[tuple[str, str]] = []
        for candidate in self.candidates(CandidateStatus.retained):
            why = outdated(candidate) if candidate.judge_real else None
            if why is None:
                continue
            candidate.status = CandidateStatus.unfinished
            candidate.reject_stage, candidate.reject_reason = Stage.judge, ReasonCode.judge_unavailable
            self.save_candidate(candidate)
            cause = f"judge: judge_unavailable: {why} (repro run --resume judges it again)"[:2000]
            self._write(self._reopen_problem(candidate.problem_id, cause))
            reopened.append((candidate.candidate_id, why))
        return reopened

    @staticmethod
    def _write_attempt(connection: sqlite3.Connection, attempt: StageAttempt, payload: str) -> None:
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
                payload,
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
        what = f"the {attempt.stage.value} attempt {attempt.attempt_number} of {attempt.candidate_id}"
        payload = _json(what, attempt.model_dump_json)  # now, on the caller's thread (see module doc)

        def write(connection: sqlite3.Connection) -> None:
            if row is not None:
                self._write_candidate(connection, row)
            self._write_attempt(connection, attempt, payload)

        self._write(write)

    # -- model responses and accounting ----------------------------------------------------------
    def _remember(self, table: str, key: str, text: str, *, entries: int = 20000) -> None:
        recent = self._fresh.get(table)
        if recent is not None:
            recent[key] = text
            if len(recent) > entries:
                recent.popitem(last=False)

    @staticmethod
    def _account(connection: sqlite3.Connection, call: ModelCallRecord, payload: str) -> None:
        connection.execute(
            "INSERT INTO model_calls(stage, model_id, backend_id, cache_hit, payload) VALUES (?, ?, ?, ?, ?)",
            (call.stage, call.model_id, call.backend_id, int(call.cache_hit), payload),
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
        _storable(f"a response of {call.model_id}", *(text for _, text, _ in rows))
        call_payload = _json(f"the call record of {call.model_id}", call.model_dump_json)
        for key, text, _ in rows:
            self._remember("response_cache", key, text)

        def write(connection: sqlite3.Connection) -> None:
            connection.executemany(
                "INSERT OR REPLACE INTO response_cache(cache_key, response, created_at) VALUES (?, ?, ?)", rows
            )
            self._account(connection, call, call_payload)

        self._write(write)

    def record_model_call(self, call: ModelCallRecord) -> None:
        payload = _json(f"the call record of {call.model_id}", call.model_dump_json)
        self._write(lambda connection: self._account(connection, call, payload))

    # -- Lean results -------------------------------------------------------------------------------
    def cache_lean_result(self, code_hash: str, result: dict[str, Any]) -> None:
        text = json.dumps(result, ensure_ascii=False)
        _storable("a Lean result", text)
        self._remember("lean_cache", code_hash, text)
        self._write(
            lambda connection: connection.execute(
                "INSERT OR REPLACE INTO lean_cache(code_hash, result) VALUES (?, ?)", (code_hash, text)
            )
        )

    # -- judge verdicts -----------------------------------------------------------------------------
    def cache_judge_verdict(self, cache_key: str, verdict: dict[str, Any]) -> None:
        """Keep a verdict of the kernel judge (the caller keeps only passed and rejected ones)."""
        text = json.dumps(verdict, ensure_ascii=False)
        _storable("a judge verdict", text)
        self._remember("judge_cache", cache_key, text)
        created = utc_now()
        self._write(
            lambda connection: connection.execute(
                "INSERT OR REPLACE INTO judge_cache(cache_key, verdict, created_at) VALUES (?, ?, ?)",
                (cache_key, text, created),
            )
        )
