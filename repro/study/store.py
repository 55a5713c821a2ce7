"""The study store: one SQLite file per study directory, modelled on the run store.

Every fresh model response is written with all its samples in one transaction, and every verdict (the
screen's and the judge's) in one more, so a study killed at any moment resumes without asking a model for
a sample it already has and without re-checking code Lean already judged (Lean results are kept by code
hash, across provers).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from repro.exit_codes import ReproError
from repro.judge.verdict import JudgeVerdict
from repro.store.sqlite import SqliteStore
from repro.study.records import ProverEntry, SampleOutcome, StudySettings, StudyStatement

STUDY_FILENAME = "study.sqlite"

_MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE statements (statement_id TEXT PRIMARY KEY, position INTEGER NOT NULL, payload TEXT NOT NULL);
    CREATE TABLE provers (name TEXT PRIMARY KEY, position INTEGER NOT NULL, payload TEXT NOT NULL);
    CREATE TABLE samples (
        prover TEXT NOT NULL,
        statement_id TEXT NOT NULL,
        sample_index INTEGER NOT NULL,
        judged INTEGER NOT NULL,
        verified INTEGER NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (prover, statement_id, sample_index)
    );
    CREATE TABLE lean_cache (code_hash TEXT PRIMARY KEY, result TEXT NOT NULL);
    """,
    # 2: the kernel judge's verdicts (passed or rejected only), keyed by JudgeRequest.cache_key, shared by
    # every prover of the study: identical code is judged once
    """
    CREATE TABLE judge_cache (cache_key TEXT PRIMARY KEY, verdict TEXT NOT NULL);
    """,
    # 3: a success is a sample the kernel judge passed, not one the screen passed. What a study stored as
    # verified (the sample or its salvaged text) before the judge existed was never judged: it is unjudged
    # again, so `prove-study --resume` judges it (its text and Lean results are read back, no model call).
    """
    UPDATE samples SET judged = 0, verified = 0,
        payload = json_set(payload, '$.judged', json('false'), '$.verified', json('false'),
            '$.salvage_verified', json('false'))
        WHERE verified = 1 OR json_extract(payload, '$.salvage_verified') = 1;
    """,
)
SCHEMA_VERSION = len(_MIGRATIONS)


class StudyStoreError(ReproError, RuntimeError):
    pass


class StudyStore(SqliteStore):
    """All persistent state of one study. Safe to share between the event loop and worker threads."""

    MIGRATIONS = _MIGRATIONS
    ERROR = StudyStoreError

    def __init__(self, study_dir: str | Path, *, create: bool = True) -> None:
        self.study_dir = Path(study_dir)
        self.path = self.study_dir / STUDY_FILENAME
        if not self.path.exists() and not create:
            raise StudyStoreError(
                f"{self.study_dir}: no study store ({STUDY_FILENAME}) here; is this a study directory?"
            )
        super().__init__(self.path)

    # -- settings ----------------------------------------------------------------------------------
    def save_settings(self, settings: StudySettings) -> None:
        self.set_meta("settings", settings.model_dump_json())

    def settings(self) -> StudySettings:
        raw = self.get_meta("settings")
        if raw is None:
            raise StudyStoreError(f"{self.path}: the study has no settings; was it ever started?")
        return StudySettings.model_validate_json(raw)

    # -- statements and provers ----------------------------------------------------------------
    def add_statements(self, statements: Iterable[StudyStatement]) -> int:
        """Insert statements not yet stored; a known id with different text is an error, not an update."""
        added = 0
        with self.transaction() as connection:
            start = connection.execute("SELECT COALESCE(MAX(position), -1) + 1 FROM statements").fetchone()[0]
            for statement in statements:
                row = connection.execute(
                    "SELECT payload FROM statements WHERE statement_id=?", (statement.id,)
                ).fetchone()
                if row is not None:
                    known = StudyStatement.model_validate_json(row[0])
                    if (known.statement, known.header) != (statement.statement, statement.header):
                        raise StudyStoreError(
                            f"statement {statement.id!r} is already in the study with a different text or header"
                        )
                    continue
                connection.execute(
                    "INSERT INTO statements(statement_id, position, payload) VALUES (?, ?, ?)",
                    (statement.id, start + added, statement.model_dump_json()),
                )
                added += 1
        return added

    def statements(self) -> list[StudyStatement]:
        rows = self._query("SELECT payload FROM statements ORDER BY position")
        return [StudyStatement.model_validate_json(row["payload"]) for row in rows]

    def add_prover(self, prover: ProverEntry) -> None:
        """Register a prover; the same name with other settings would mix two models' samples, so it fails."""
        with self.transaction() as connection:
            row = connection.execute("SELECT payload FROM provers WHERE name=?", (prover.name,)).fetchone()
            if row is not None:
                if ProverEntry.model_validate_json(row[0]).settings != prover.settings:
                    raise StudyStoreError(
                        f"prover {prover.name!r} is already in the study with other settings; choose another name"
                    )
                return
            position = connection.execute("SELECT COUNT(*) FROM provers").fetchone()[0]
            connection.execute(
                "INSERT INTO provers(name, position, payload) VALUES (?, ?, ?)",
                (prover.name, position, prover.model_dump_json()),
            )

    def provers(self) -> list[ProverEntry]:
        rows = self._query("SELECT payload FROM provers ORDER BY position")
        return [ProverEntry.model_validate_json(row["payload"]) for row in rows]

    # -- samples -------------------------------------------------------------------------------
    def add_samples(self, samples: list[SampleOutcome]) -> None:
        """Store a fresh response's samples (not yet judged) in one transaction."""
        with self.transaction() as connection:
            for sample in samples:
                connection.execute(
                    "INSERT OR IGNORE INTO samples(prover, statement_id, sample_index, judged, verified, payload)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        sample.prover,
                        sample.statement_id,
                        sample.sample_index,
                        int(sample.judged),
                        int(sample.verified),
                        sample.model_dump_json(),
                    ),
                )

    def save_verdict(self, sample: SampleOutcome) -> None:
        with self.transaction() as connection:
            connection.execute(
                "UPDATE samples SET judged=?, verified=?, payload=?"
                " WHERE prover=? AND statement_id=? AND sample_index=?",
                (
                    int(sample.judged),
                    int(sample.verified),
                    sample.model_dump_json(),
                    sample.prover,
                    sample.statement_id,
                    sample.sample_index,
                ),
            )

    def reopen_outdated_judgements(self, outdated: Callable[[JudgeVerdict], str | None]) -> int:
        """Verified samples whose pass (the sample's, or its salvaged text's) a real judge gave that ``outdated``
        says is not today's judge: unjudged again, so ``prove-study --resume`` judges them afresh (their text
        and Lean results are read back; the judge's cache key holds revision and checks). How many."""
        reopened = 0
        for sample in self.samples():
            passes = [v for v in (sample.judge, sample.salvage_judge) if v is not None and v.passed and v.real]
            if not (sample.verified or sample.salvage_verified) or not any(outdated(v) for v in passes):
                continue
            sample.judged = sample.verified = sample.salvage_verified = False
            self.save_verdict(sample)
            reopened += 1
        return reopened

    def samples(self, *, prover: str | None = None, statement_id: str | None = None) -> list[SampleOutcome]:
        clauses, parameters = [], []
        for column, value in (("prover", prover), ("statement_id", statement_id)):
            if value is not None:
                clauses.append(f"{column}=?")
                parameters.append(value)
        sql = "SELECT payload FROM samples" + (" WHERE " + " AND ".join(clauses) if clauses else "")
        sql += " ORDER BY prover, natural_key(statement_id), statement_id, sample_index"
        return [SampleOutcome.model_validate_json(row["payload"]) for row in self._query(sql, parameters)]

    def verified_samples(self) -> list[SampleOutcome]:
        rows = self._query(
            "SELECT payload FROM samples WHERE verified=1"
            " ORDER BY prover, natural_key(statement_id), statement_id, sample_index"
        )
        return [SampleOutcome.model_validate_json(row["payload"]) for row in rows]

    def sample_counts(self) -> dict[str, tuple[int, int]]:
        """Per prover: (samples stored, samples judged), for progress on resume."""
        rows = self._query("SELECT prover, COUNT(*) AS n, SUM(judged) AS j FROM samples GROUP BY prover")
        return {row["prover"]: (row["n"], row["j"] or 0) for row in rows}

    # -- Lean results ----------------------------------------------------------------------------
    def cached_lean_result(self, code_hash: str) -> dict[str, Any] | None:
        rows = self._query("SELECT result FROM lean_cache WHERE code_hash=?", (code_hash,))
        return json.loads(rows[0]["result"]) if rows else None

    def lean_result_count(self) -> int:
        """How many distinct codes Lean has judged for this study (each exactly once)."""
        return int(self._query("SELECT COUNT(*) AS n FROM lean_cache")[0]["n"])

    def cache_lean_result(self, code_hash: str, result: dict[str, Any]) -> None:
        with self.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO lean_cache(code_hash, result) VALUES (?, ?)",
                (code_hash, json.dumps(result, ensure_ascii=False)),
            )

    # -- judge verdicts ------------------------------------------------------------------------------
    def cached_judge_verdict(self, cache_key: str) -> dict[str, Any] | None:
        rows = self._query("SELECT verdict FROM judge_cache WHERE cache_key=?", (cache_key,))
        return json.loads(rows[0]["verdict"]) if rows else None

    def cache_judge_verdict(self, cache_key: str, verdict: dict[str, Any]) -> None:
        with self.transaction() as connection:
            connection.execute(
                "INSERT OR REPLACE INTO judge_cache(cache_key, verdict) VALUES (?, ?)",
                (cache_key, json.dumps(verdict, ensure_ascii=False)),
            )

    def judge_verdict_count(self) -> int:
        """How many distinct submissions the judge has given a verdict on for this study (each exactly once)."""
        return int(self._query("SELECT COUNT(*) AS n FROM judge_cache")[0]["n"])
