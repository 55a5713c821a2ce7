"""A synthetic run store filled by bulk inserts, for the benchmarks that time reading a large run.

The store is made by :class:`repro.store.RunStore` (so its schema, migrations and indexes are the shipped
ones) and then filled through a raw connection with the journal kept but fsync off: a benchmark builds
its input fast and times only what it reads. Rows are written in the columns the writer fills.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from repro.config import RunConfig, dump_config
from repro.store import STORE_FILENAME, RunStore

INSERT_PROBLEM = (
    "INSERT INTO problems(problem_id, draw_order, payload, outcome, level, type, unfinished_cause)"
    " VALUES (?, ?, ?, ?, ?, ?, ?)"
)
INSERT_CANDIDATE = (
    "INSERT INTO candidates(candidate_id, problem_id, status, reject_stage, reject_reason, payload, updated_at,"
    " proof_attempt_number, reached_rank, passed_rank) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?)"
)


def bulk_connection(run_dir: Path) -> sqlite3.Connection:
    """A new run directory (default config, empty migrated store) and a connection to fill its store."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(dump_config(RunConfig()), encoding="utf-8")
    RunStore(run_dir).close()
    connection = sqlite3.connect(run_dir / STORE_FILENAME, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=OFF")
    return connection


def store_mb(run_dir: Path) -> float:
    """The store's size on disk with its WAL files, in MiB."""
    return round(sum(path.stat().st_size for path in run_dir.glob(STORE_FILENAME + "*")) / 2**20, 1)
