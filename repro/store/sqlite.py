"""The SQLite plumbing every store of repro shares: how a file is opened, written and moved forward.

There are two kinds of store. The run store (:class:`repro.store.RunStore`) has its own writer thread and a
second connection for reads, for throughput. The study and evaluation stores write once per model
response and need neither: they derive from :class:`SqliteStore`. Both open their file the same way
(WAL, so readers see a store while it is written; one connection shared by threads under a lock), write
in ``BEGIN IMMEDIATE`` transactions, and apply the same kind of numbered migrations: forward, each in its
own transaction, with the version re-read under the write lock, so two processes opening an old store at
once cannot both apply a step. That shared part lives here, once.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Self

from repro import natural
from repro.records import utc_now

WriteTransaction = Callable[[], AbstractContextManager[sqlite3.Connection]]


def connect(path: Path, *, wal: bool = False) -> sqlite3.Connection:
    """A connection that threads may share (under the caller's lock), committing only what it is told to;
    ``natural_key()`` is callable in its SQL (listings in natural id order)."""
    connection = natural.register(sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30))
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=30000")
    if wal:
        connection.execute("PRAGMA journal_mode=WAL")
    return connection


@contextmanager
def immediate_transaction(lock: threading.RLock, connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Take the write lock at BEGIN, so a transaction never fails half-way on another writer's lock."""
    with lock:
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")


def written_version(connection: sqlite3.Connection) -> int:
    """The schema version recorded in the store (0: a new, empty file)."""
    if not connection.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'").fetchone():
        return 0
    row = connection.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 0


def refuse_newer_version(path: object, version: int, known: int, error: type[Exception]) -> None:
    """A store written by a newer repro may hold what this one would misread or lose: never open it."""
    if version > known:
        raise error(f"{path}: schema version {version} is newer than this repro ({known}); upgrade repro")


def apply_migrations(
    path: object,
    migrations: Sequence[str],
    current: int,
    transaction: WriteTransaction,
    *,
    error: type[Exception],
) -> None:
    """Apply every migration after ``current``; ``transaction`` opens a write transaction (BEGIN IMMEDIATE).

    The first migration must create ``meta``: the version and the creation time are kept there.
    """
    target = len(migrations)
    refuse_newer_version(path, current, target, error)
    while current < target:
        with transaction() as connection:
            # re-read under the write lock: another process may have migrated meanwhile
            version = written_version(connection)
            if version >= target:
                return
            for statement in migrations[version].split(";"):
                if statement.strip():
                    connection.execute(statement)
            connection.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version + 1),)
            )
            if version == 0:
                connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('created_at', ?)", (utc_now(),))
        current = version + 1


class SqliteStore:
    """A store written once per model response: one connection, no writer thread.

    Subclasses set ``MIGRATIONS`` (the first creates ``meta``) and ``ERROR`` (raised for a bad store).
    """

    MIGRATIONS: tuple[str, ...] = ()
    ERROR: type[Exception] = RuntimeError

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = connect(path, wal=True)
        apply_migrations(path, self.MIGRATIONS, self.schema_version(), self.transaction, error=self.ERROR)

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        return immediate_transaction(self._lock, self._connection)

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            cursor = self._connection.execute(sql, tuple(parameters))
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def schema_version(self) -> int:
        with self._lock:
            return written_version(self._connection)

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as connection:
            connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else None
