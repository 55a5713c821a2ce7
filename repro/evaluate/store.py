"""The evaluation store: one SQLite file per evaluation directory, modelled on the run store.

The graded answers of one request (all its samples) are written in one transaction, so a process
killed at any moment leaves an item either fully answered or not at all; ``--resume`` asks only for
what is missing. Model responses themselves are cached (and paid for once) in the run store in
``model_cache/`` of the same directory, through :class:`repro.llm.ModelClient`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from repro.evaluate.records import EvalAnswer, EvalModel, Variant
from repro.exit_codes import ReproError
from repro.records import ReleasedInstance
from repro.store.sqlite import SqliteStore

EVAL_STORE_FILENAME = "evaluation.sqlite"

_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE models (name TEXT PRIMARY KEY, position INTEGER NOT NULL, payload TEXT NOT NULL);
    CREATE TABLE instances (instance_id TEXT PRIMARY KEY, position INTEGER NOT NULL, payload TEXT NOT NULL);
    CREATE TABLE answers (
        model TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        variant TEXT NOT NULL,
        sample INTEGER NOT NULL,
        correct INTEGER NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (model, instance_id, variant, sample)
    );
    """,
)

SCHEMA_VERSION = len(_MIGRATIONS)


class EvalStoreError(ReproError, RuntimeError):
    pass


class EvalStore(SqliteStore):
    MIGRATIONS = _MIGRATIONS
    ERROR = EvalStoreError

    def __init__(self, eval_dir: str | Path, *, create: bool = True) -> None:
        self.eval_dir = Path(eval_dir)
        self.path = self.eval_dir / EVAL_STORE_FILENAME
        if not self.path.exists() and not create:
            raise EvalStoreError(f"{self.eval_dir}: no evaluation ({EVAL_STORE_FILENAME}) here")
        super().__init__(self.path)

    # -- what is evaluated ------------------------------------------------------------------------
    def set_plan(self, meta: dict[str, str], models: list[EvalModel], instances: list[ReleasedInstance]) -> None:
        """Record what this evaluation covers, once, in one transaction."""
        with self.transaction() as connection:
            for key, value in meta.items():
                connection.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
            for position, model in enumerate(models):
                connection.execute(
                    "INSERT OR REPLACE INTO models(name, position, payload) VALUES (?, ?, ?)",
                    (model.name, position, model.model_dump_json()),
                )
            for position, instance in enumerate(instances):
                connection.execute(
                    "INSERT OR REPLACE INTO instances(instance_id, position, payload) VALUES (?, ?, ?)",
                    (instance.instance_id, position, instance.model_dump_json()),
                )

    def models(self) -> list[EvalModel]:
        rows = self._query("SELECT payload FROM models ORDER BY position")
        return [EvalModel.model_validate_json(row["payload"]) for row in rows]

    def instances(self) -> list[ReleasedInstance]:
        rows = self._query("SELECT payload FROM instances ORDER BY position")
        return [ReleasedInstance.model_validate_json(row["payload"]) for row in rows]

    # -- answers --------------------------------------------------------------------------------------
    def record_answers(self, answers: list[EvalAnswer]) -> None:
        """All samples of one request together, or none of them."""
        with self.transaction() as connection:
            for answer in answers:
                connection.execute(
                    "INSERT OR REPLACE INTO answers(model, instance_id, variant, sample, correct, payload)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        answer.model,
                        answer.instance_id,
                        answer.variant.value,
                        answer.sample,
                        int(answer.correct),
                        answer.model_dump_json(),
                    ),
                )

    def answered(self) -> set[tuple[str, str, str]]:
        """(model, instance, variant) triples that have at least one stored sample."""
        rows = self._query("SELECT DISTINCT model, instance_id, variant FROM answers")
        return {(row["model"], row["instance_id"], row["variant"]) for row in rows}

    def answers(self, model: str | None = None) -> list[EvalAnswer]:
        sql = "SELECT payload FROM answers"
        parameters: tuple[Any, ...] = ()
        if model is not None:
            sql += " WHERE model=?"
            parameters = (model,)
        sql += " ORDER BY model, natural_key(instance_id), instance_id, variant, sample"
        return [EvalAnswer.model_validate_json(row["payload"]) for row in self._query(sql, parameters)]

    def correctness(self) -> dict[tuple[str, str, Variant], list[bool]]:
        """(model, instance, variant) -> correctness per sample, in sample order."""
        rows = self._query("SELECT model, instance_id, variant, sample, correct FROM answers ORDER BY sample")
        result: dict[tuple[str, str, Variant], list[bool]] = {}
        for row in rows:
            result.setdefault((row["model"], row["instance_id"], Variant(row["variant"])), []).append(
                bool(row["correct"])
            )
        return result
