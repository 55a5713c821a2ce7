"""The run store: one SQLite file per run directory.

Split along its seams: :mod:`~repro.store.schema` (file name, migrations), :mod:`~repro.store.reader`
(:class:`RunReader`, every query, read-only) and :mod:`~repro.store.writer` (:class:`RunStore`, which
reads and writes: the writer connection, migration on open, the batching writer thread).

Metrics never scan the big tables: candidates carry the furthest stage they reached and passed,
and model and Lean accounting are kept as running totals in the same transactions as the rows
they count, so ``repro status`` costs the same on a thousand problems as on a million.
"""

from repro.store.reader import RunReader
from repro.store.schema import _MIGRATIONS, SCHEMA_VERSION, STAGE_RANK, STORE_FILENAME, StoreError
from repro.store.writer import RunStore, WriteOperation

__all__ = [
    "SCHEMA_VERSION",
    "STAGE_RANK",
    "STORE_FILENAME",
    "_MIGRATIONS",
    "RunReader",
    "RunStore",
    "StoreError",
    "WriteOperation",
]
