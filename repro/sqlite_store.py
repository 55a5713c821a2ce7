"""The SQLite plumbing that the study and evaluation stores share: one file, WAL, numbered migrations.

Each store is one SQLite file in its own directory, opened in WAL mode with one connection guarded by
a lock, so the event loop and worker threads can share it. Migrations are applied forward, each in
its own transaction, and the version is re-read under the write lock, so two processes opening a new
store at once cannot both create its tables. (The run store has its own writer thread and reader
connection for throughput; these stores write once per model response and need neither.)
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from repro import natural
from repro.records import utc_now


class SqliteStore:
    """Subclasses set ``MIGRATIONS`` (the first creates ``meta``) and ``ERROR`` (raised for a bad store)."""

    MIGRATIONS: tuple[str, ...] = ()
    ERROR: type[Exception] = RuntimeError

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._connection = natural.register(
            sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=30)
        )
        self._connection.execute("PRAGMA journal_mode=WAL")
        self._connection.execute("PRAGMA synchronous=NORMAL")
        self._connection.execute("PRAGMA busy_timeout=30000")
        self._migrate()

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> Self:
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
        if not self._query("SELECT name FROM sqlite_master WHERE type='table' AND name='meta'"):
            return 0
        rows = self._query("SELECT value FROM meta WHERE key='schema_version'")
        return int(rows[0]["value"]) if rows else 0

    def _migrate(self) -> None:
        target = len(self.MIGRATIONS)
        current = self.schema_version()
        if current > target:
            raise self.ERROR(f"{self.path}: schema version {current} is newer than this repro ({target})")
        while current < target:
            with self.transaction() as connection:
                version = self.schema_version()
                if version >= target:
                    return
                for statement in self.MIGRATIONS[version].split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)", (str(version + 1),)
                )
                if version == 0:
                    connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('created_at', ?)", (utc_now(),))
            current = version + 1

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as connection:
            connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else None
