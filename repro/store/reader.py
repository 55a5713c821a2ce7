"""Reading a run store: every query ``status``, ``audit``, ``report``, ``release`` and resume ask.

A :class:`RunReader` opens the SQLite file read-only and never migrates, so the reading commands work
on an archived run whose directory (or file) is read-only, and can never change a run they inspect.
When SQLite cannot open a WAL store read-only in place (a read-only directory without the ``-shm``
file), it is opened as immutable: every committed write that was checkpointed is read, and a leftover
``-wal`` file is reported, since its writes cannot be read without write access.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import quote

from repro import natural
from repro.records import (
    JUDGED_SCREENS,
    Candidate,
    CandidateStatus,
    ModelCallRecord,
    SourceProblem,
    Stage,
    StageAttempt,
)
from repro.store.fields import StoredField, expression, json_member, packed_expression
from repro.store.schema import SCHEMA_VERSION, STORE_FILENAME, StoreError, refuse_newer
from repro.store.sqlite import written_version


def _read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that cannot write, opened in place if SQLite can, else as an immutable file."""
    location = quote(str(path.resolve()))
    connection = sqlite3.connect(f"file:{location}?mode=ro", uri=True, check_same_thread=False, timeout=30)
    try:
        connection.execute("PRAGMA busy_timeout=30000")
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return natural.register(connection)
    except sqlite3.OperationalError:
        connection.close()
    return natural.register(sqlite3.connect(f"file:{location}?immutable=1", uri=True, check_same_thread=False))


class RunReader:
    """Read access to one run's store. Safe to share between threads."""

    def __init__(self, run_dir: str | Path) -> None:
        self._bind(run_dir)
        if not self.path.exists():
            raise StoreError(f"{self.run_dir}: no run store ({STORE_FILENAME}) here; {_what_is_here(self.run_dir)}")
        self._reader = _read_only_connection(self.path)
        try:
            version = self.schema_version()
            refuse_newer(self.path, version)
            if version < SCHEMA_VERSION:
                self._reader.close()
                self._upgrade(version)
                self._reader = _read_only_connection(self.path)
        except BaseException:
            self._reader.close()
            raise

    def _bind(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILENAME
        self._read_lock = threading.RLock()
        # tables that were empty when the writer started, with what this run wrote to them lately
        self._fresh: dict[str, OrderedDict[str, str]] = {}

    def _upgrade(self, version: int) -> None:
        """An older store is migrated once by a writer, if the directory allows it."""
        if not os.access(self.run_dir, os.W_OK) or not os.access(self.path, os.W_OK):
            raise StoreError(
                f"{self.path}: written by an older repro (schema {version}, this one reads {SCHEMA_VERSION}) and"
                " read-only here; make a writable copy of the run directory and read that"
            )
        from repro.store.writer import RunStore

        RunStore(self.run_dir, create=False).close()

    def unreadable_wal(self) -> bool:
        """True when a ``-wal`` file holds writes that a read-only open of this store cannot see."""
        wal = self.path.with_name(self.path.name + "-wal")
        return wal.exists() and wal.stat().st_size > 0 and not os.access(self.run_dir, os.W_OK)

    # -- lifecycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        with self._read_lock:
            self._reader.close()

    def __enter__(self) -> RunReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _query(self, sql: str, parameters: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._read_lock:
            cursor = self._reader.execute(sql, tuple(parameters))
            cursor.row_factory = sqlite3.Row
            return cursor.fetchall()

    def _pages(
        self, sql: str, parameters: Mapping[str, Any] | Iterable[Any], *, page: int, named: bool
    ) -> Generator[list[Any], None, None]:
        """A query's rows a page at a time from one cursor, so a caller that stops early never reads
        the rest and a full pass costs one scan (the lock is held per page, not across the caller).
        ``named``: rows as :class:`sqlite3.Row`, else plain tuples."""
        bound = parameters if isinstance(parameters, Mapping) else tuple(parameters)
        with self._read_lock:
            cursor = self._reader.execute(sql, bound)
            if named:
                cursor.row_factory = sqlite3.Row
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

    def _iterate(self, sql: str, parameters: Iterable[Any] = (), *, page: int = 500) -> Iterator[sqlite3.Row]:
        """Rows of a query, read a page at a time (see :meth:`_pages`)."""
        with closing(self._pages(sql, parameters, page=page, named=True)) as pages:
            for rows in pages:
                yield from rows

    def schema_version(self) -> int:
        with self._read_lock:
            return written_version(self._reader)

    def get_meta(self, key: str) -> str | None:
        rows = self._query("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0]["value"] if rows else None

    # -- problems ------------------------------------------------------------------------------------
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
        """The first unfinished problems in natural id order, each with the cause recorded for it."""
        rows = self._query(
            "SELECT problem_id, unfinished_cause FROM problems WHERE outcome IS NULL"
            " ORDER BY natural_key(problem_id), problem_id LIMIT ?",
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
    def candidates(self, status: CandidateStatus | None = None) -> list[Candidate]:
        return list(self.iter_candidates(status))

    def iter_candidates(self, status: CandidateStatus | None = None) -> Iterator[Candidate]:
        sql = "SELECT payload FROM candidates"
        parameters: tuple[Any, ...] = ()
        if status is not None:
            sql += " WHERE status=?"
            parameters = (status.value,)
        sql += " ORDER BY natural_key(candidate_id), candidate_id"  # cand-2 before cand-10
        for row in self._iterate(sql, parameters):
            yield Candidate.model_validate_json(row["payload"])

    def retained_rows(
        self,
        columns: Sequence[StoredField],
        *,
        packed: tuple[StoredField, ...] = (),
        json_members: Sequence[tuple[str, StoredField]] = (),
        only_if: Sequence[StoredField] = (),
        parameters: Mapping[str, Any] | None = None,
        page: int = 5000,
    ) -> Generator[list[tuple[Any, ...]], None, None]:
        """Retained candidates joined to their problems, in release order (natural order of problem
        id, then of candidate id: ``gsm8k-9`` before ``gsm8k-10``), a page of plain tuples at a time.

        Each tuple holds one value per field of ``columns`` (text as UTF-8 bytes, booleans as 0 or 1),
        then, if ``packed`` is given, the JSON array text of those candidate fields, then, if
        ``json_members`` is given, the UTF-8 JSON object text of those members. Rows whose ``only_if``
        fields are all true. SQLite extracts the fields in one pass, without any payload parsed in
        Python. A retained candidate whose problem is not stored is not among them: see
        :meth:`check_retained_problems`.
        """
        selected = [expression(field) if field.boolean else f"CAST({expression(field)} AS BLOB)" for field in columns]
        if packed:
            selected.append(packed_expression(packed))
        if json_members:
            members = ", ".join(json_member(name, field) for name, field in json_members)
            selected.append(f"CAST(json_object({members}) AS BLOB)")
        where = "".join(f" AND ({expression(field)})" for field in only_if)
        sql = (
            # natural_key is computed once per row; SQLite's sorter then compares plain strings
            # (spilling to temporary files past its cache), never calling back into Python
            f"SELECT {', '.join(selected)} FROM problems p CROSS JOIN candidates c ON c.problem_id=p.problem_id"
            f" WHERE c.status='retained'{where}"
            " ORDER BY natural_key(p.problem_id), p.problem_id, natural_key(c.candidate_id), c.candidate_id"
        )
        yield from self._pages(sql, dict(parameters or {}), page=page, named=False)

    def check_retained_problems(self) -> None:
        """Raise if a retained candidate's problem is not stored (a damaged store)."""
        orphan = self._query(
            "SELECT problem_id FROM candidates c WHERE status='retained'"
            " AND NOT EXISTS (SELECT 1 FROM problems p WHERE p.problem_id=c.problem_id) LIMIT 1"
        )
        if orphan:
            raise StoreError(f"problem {orphan[0]['problem_id']!r} not in {self.path}")

    def retained_count(self, only_if: Sequence[StoredField] = (), parameters: Mapping[str, Any] | None = None) -> int:
        """Retained candidates, or those whose ``only_if`` conditions all hold (as :meth:`retained_rows`)."""
        if not only_if:
            return int(self._query("SELECT COUNT(*) AS n FROM candidates WHERE status='retained'")[0]["n"])
        where = "".join(f" AND ({expression(field)})" for field in only_if)
        sql = f"SELECT COUNT(*) FROM candidates c WHERE c.status='retained'{where}"
        with self._read_lock:
            return int(self._reader.execute(sql, dict(parameters or {})).fetchone()[0])

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
        self,
        *,
        stage: str | None = None,
        reason: str | None = None,
        limit: int | None = None,
        candidate: str | None = None,
    ) -> list[sqlite3.Row]:
        """Not-passed attempts (any candidate status) with their candidate, problem, the statement
        the attempt worked on (the output of the formalize attempt its ``inputs`` point to) and, for
        a verify attempt (or a judge attempt on a raw sample), the prove attempt it checked: one query with
        LIMIT, never every attempt."""
        clauses, parameters = ["a.status != 'passed'"], []
        for column, value in (("a.stage", stage), ("a.reason", reason)):
            if value is not None:
                clauses.append(f"{column}=?")
                parameters.append(value)
        if candidate is not None:  # a candidate id, or a problem id for all of its candidates
            clauses.append("(a.candidate_id=? OR a.problem_id=?)")
            parameters += [candidate, candidate]
        sql = (
            "SELECT a.payload AS attempt, c.payload AS candidate, p.payload AS problem,"
            " (SELECT q.payload FROM attempts q WHERE q.candidate_id=a.candidate_id AND q.stage='prove'"
            "  AND ((a.stage='verify' AND q.attempt_number=a.attempt_number)"
            "   OR (a.stage='judge' AND json_extract(a.payload, '$.output.screened_by')='verify'"
            "    AND q.attempt_number=json_extract(a.payload, '$.output.of_attempt')))) AS prove_attempt,"
            " (SELECT json_extract(f.payload, '$.output.statement') FROM attempts f WHERE f.candidate_id=a.candidate_id"
            "  AND f.stage='formalize' AND f.attempt_number=json_extract(a.payload, '$.inputs.formalize'))"
            " AS input_statement"
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

    def answer_outcomes(self) -> list[tuple[str, str | None, str | None, str | None, str | None, int]]:
        """(status, answer form, reject reason, why no answer, answer class, candidates) over candidates
        that reached the answer stage, read from each one's last answer attempt."""
        rows = self._query(
            "SELECT c.status AS status, json_extract(c.payload, '$.answer_form') AS form,"
            " c.reject_reason AS reason, json_extract(a.payload, '$.output.no_answer') AS gap,"
            " json_extract(a.payload, '$.output.answer_class') AS class, COUNT(*) AS n"
            " FROM candidates c JOIN attempts a ON a.candidate_id = c.candidate_id AND a.stage = 'answer'"
            " AND a.attempt_number = (SELECT MAX(b.attempt_number) FROM attempts b"
            " WHERE b.candidate_id = c.candidate_id AND b.stage = 'answer')"
            " GROUP BY 1, 2, 3, 4, 5"
        )
        return [(row["status"], row["form"], row["reason"], row["gap"], row["class"], row["n"]) for row in rows]

    def stop_counts(self) -> list[tuple[int, str | None, int]]:
        """Rejected candidates per (rank of the stage where they stopped, reason): the stage after the
        furthest one they passed, which is where the funnel loses them."""
        rows = self._query(
            "SELECT passed_rank + 1 AS stopped, reject_reason, COUNT(*) AS n FROM candidates WHERE status='rejected'"
            " GROUP BY passed_rank, reject_reason"
        )
        return [(row["stopped"], row["reject_reason"], row["n"]) for row in rows]

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

    def retained_judges(self) -> list[tuple[str | None, bool, int]]:
        """(judge tool, whether it is a real judge, retained candidates) over the retained candidates."""
        rows = self._query(
            "SELECT json_extract(payload, '$.judge_tool') AS tool,"
            " COALESCE(json_extract(payload, '$.judge_real'), 0) AS real, COUNT(*) AS n"
            " FROM candidates WHERE status='retained' GROUP BY 1, 2"
        )
        return [(row["tool"], bool(row["real"]), row["n"]) for row in rows]

    def retained_judge_pins(self) -> list[tuple[str | None, bool, str | None, str | None, int | None, int]]:
        """(judge tool, real, revision, toolchain, checks version, retained candidates) over the retained ones:
        what says whether today's judge passed them (:func:`repro.judge.currency.judge_outdated`)."""
        rows = self._query(
            "SELECT json_extract(payload, '$.judge_tool') AS tool,"
            " COALESCE(json_extract(payload, '$.judge_real'), 0) AS real,"
            " json_extract(payload, '$.judge_revision') AS revision,"
            " json_extract(payload, '$.judge_toolchain') AS toolchain,"
            " json_extract(payload, '$.judge_checks') AS checks, COUNT(*) AS n"
            " FROM candidates WHERE status='retained' GROUP BY 1, 2, 3, 4, 5"
        )
        return [
            (row["tool"], bool(row["real"]), row["revision"], row["toolchain"], row["checks"], row["n"]) for row in rows
        ]

    def retained_lean(self) -> list[tuple[str | None, bool, int]]:
        """(Lean backend, whether it is real Lean, retained candidates) over the retained candidates."""
        rows = self._query(
            "SELECT json_extract(payload, '$.verifier_backend') AS backend,"
            " COALESCE(json_extract(payload, '$.verifier_is_real_lean'), 0) AS real, COUNT(*) AS n"
            " FROM candidates WHERE status='retained' GROUP BY 1, 2"
        )
        return [(row["backend"], bool(row["real"]), row["n"]) for row in rows]

    def retained_unjudged(self) -> str | None:
        """The first retained candidate that no kernel judge passed (none should be: the judge stage retains
        only what it passed, and the store's migration turns older stores' retained candidates unfinished)."""
        rows = self._query(
            "SELECT candidate_id FROM candidates WHERE status='retained'"
            " AND json_extract(payload, '$.judge_tool') IS NULL ORDER BY natural_key(candidate_id) LIMIT 1"
        )
        return rows[0]["candidate_id"] if rows else None

    def lever_costs(self) -> dict[str, dict[str, float]]:
        """Per lever stage: checks (attempts that got a verdict), verified, failed (an endpoint or Lean gave
        no verdict: never counted as checks), Lean seconds, model calls and tokens it cost."""
        rows = self._query(
            "SELECT stage, SUM(status != 'error') AS attempts, SUM(status = 'passed') AS verified,"
            " SUM(status = 'error') AS failed,"
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
                "failed": row["failed"],
                "lean_seconds": round(row["lean_seconds"] or 0.0, 3),
                "model_calls": row["model_calls"],
                "tokens_in": row["tokens_in"],
                "tokens_out": row["tokens_out"],
            }
            for row in rows
        }

    def proving_rounds(self, k: int) -> dict[tuple[int, int, int | None], int]:
        """Formal statements the run's prover was asked to prove, by (samples drawn, samples passed, index of
        the first pass): every proving round (attempts ``round * k .. round * k + k - 1``) of a finished
        candidate. A sample passes when the kernel judge passed it (the judge attempt of verify attempt n);
        a study's proof (``--reprove-with``) is not the run's prover's sample and is left out. One aggregate.
        """
        stride, offset = len(JUDGED_SCREENS), JUDGED_SCREENS.index(Stage.verify)
        rows = self._query(
            "SELECT n, c, first, COUNT(*) AS statements FROM ("
            " SELECT round, COUNT(*) AS n, SUM(passed) AS c,"
            "  MIN(CASE WHEN passed THEN attempt_number - round * ? END) AS first FROM ("
            "  SELECT a.candidate_id, a.attempt_number, a.attempt_number / ? AS round,"
            "   EXISTS (SELECT 1 FROM attempts j WHERE j.candidate_id = a.candidate_id AND j.stage = 'judge'"
            "    AND j.attempt_number = a.attempt_number * ? + ? AND j.status = 'passed') AS passed FROM attempts a"
            "  JOIN candidates cd ON cd.candidate_id = a.candidate_id"
            "  WHERE cd.status IN ('retained', 'rejected') AND a.stage = 'verify'"
            "  AND COALESCE(json_extract(a.payload, '$.output.reused_from_study'), 0) = 0"
            " ) GROUP BY candidate_id, round"
            ") GROUP BY n, c, first",
            (k, k, stride, offset),
        )
        return {(row["n"], row["c"], row["first"]): row["statements"] for row in rows}

    # -- model responses and accounting ----------------------------------------------------------
    def _recalled(self, table: str, key: str) -> str | None:
        return self._fresh[table].get(key)

    def cached_response(self, cache_key: str) -> dict[str, Any] | None:
        if "response_cache" in self._fresh:
            text = self._recalled("response_cache", cache_key)
            return json.loads(text) if text is not None else None
        rows = self._query("SELECT response FROM response_cache WHERE cache_key=?", (cache_key,))
        return json.loads(rows[0]["response"]) if rows else None

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

    # -- judge verdicts -----------------------------------------------------------------------------
    def cached_judge_verdict(self, cache_key: str) -> dict[str, Any] | None:
        if "judge_cache" in self._fresh:
            text = self._recalled("judge_cache", cache_key)
            return json.loads(text) if text is not None else None
        rows = self._query("SELECT verdict FROM judge_cache WHERE cache_key=?", (cache_key,))
        return json.loads(rows[0]["verdict"]) if rows else None

    def judge_verdict_count(self) -> int:
        """How many distinct submissions the judge has given a verdict on in this run (each exactly once)."""
        return int(self._query("SELECT COUNT(*) AS n FROM judge_cache")[0]["n"])


def _what_is_here(directory: Path) -> str:
    """Where a directory that is not a run goes instead (n12): a study or an evaluation has its own report."""
    if (directory / "study.sqlite").is_file():
        return f"it is a coverage study: see repro study-report {directory} (or repro report {directory})"
    if (directory / "evaluation.sqlite").is_file():
        return f"it is an evaluation: see repro evaluate-report {directory} (or repro report {directory})"
    return "is this a run directory?"
