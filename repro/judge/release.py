"""The kernel judge over released rows: ``repro reverify --replay`` and ``repro release --replay``.

Every row is rebuilt from its own text (the trusted header, our statement, the text Lean checked) and judged
by the tool pinned for its toolchain (:mod:`repro.judge.kernel`). ``release --replay`` withholds each row
the judge did not pass (rejected, or no verdict at all: a missing tool or a timeout is not a pass) and
names it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repro.config import JudgeSettings
from repro.exit_codes import ExitCode
from repro.judge.kernel import build_judge, judge_all
from repro.judge.verdict import Judge, JudgeRequest, JudgeStatus, JudgeVerdict
from repro.lean.text import StatementError, read_statement


def theorem_name(statement: str) -> str:
    """Our theorem's name, read from our statement (empty when it cannot be read: the judge then refuses)."""
    try:
        return read_statement(statement).name
    except StatementError:
        return ""


def judge_request(key: str, header: str, statement: str, submission: str, toolchain: str | None = None) -> JudgeRequest:
    return JudgeRequest(
        key=key,
        header=header,
        statement=statement,
        theorem_name=theorem_name(statement),
        submission=submission,
        toolchain=toolchain,
    )


def requests_of_release(out_dir: str | Path, header: str) -> list[JudgeRequest]:
    """One request per released row; the header is the trusted one, never the row's own."""
    from repro.release import read_parquet_release

    return [
        judge_request(
            instance.instance_id,
            header,
            instance.lean_statement,
            instance.verified_code,
            instance.provenance.lean_toolchain,
        )
        for instance in read_parquet_release(out_dir)
    ]


async def judge_release(out_dir: str | Path, header: str, judge: Judge) -> list[JudgeVerdict]:
    return await judge_all(judge, requests_of_release(out_dir, header))


def judge_exit_code(verdicts: list[JudgeVerdict]) -> ExitCode:
    """1 when the judge rejected a row; 3 when some row got no verdict; 4 when only a stand-in spoke; else 0."""
    if any(v.status == JudgeStatus.rejected for v in verdicts):
        return ExitCode.rejected
    if any(not v.passed for v in verdicts):
        return ExitCode.unfinished
    if any(not v.real for v in verdicts):
        return ExitCode.fake_backend
    return ExitCode.ok


class JudgeFilter:
    """``write_release(keep=...)``: keeps the rows of each page the judge passed; remembers the others.

    Rows are the release writer's tuples, one value per column of ``repro.release._COLUMNS`` followed
    by the provenance fields (a JSON array: models, backends, lean_toolchain, ...)."""

    def __init__(self, judge: Judge, columns: list[str]) -> None:
        self.judge = judge
        self._index = {name: position for position, name in enumerate(columns)}
        self._provenance = len(columns)
        self.verdicts: list[JudgeVerdict] = []

    @property
    def withheld(self) -> list[JudgeVerdict]:
        return [v for v in self.verdicts if not v.passed]

    def _text(self, row: Any, column: str) -> str:
        value = row[self._index[column]]
        return value.decode("utf-8") if isinstance(value, bytes) else str(value or "")

    def _request(self, row: Any) -> JudgeRequest:
        provenance = json.loads(row[self._provenance] or "[]")
        return judge_request(
            self._text(row, "instance_id"),
            self._text(row, "lean_header"),  # the run's configured header, not prover text
            self._text(row, "lean_statement"),
            self._text(row, "verified_code"),
            provenance[2] if len(provenance) > 2 else None,
        )

    def __call__(self, page: list[Any]) -> list[Any]:
        verdicts = asyncio.run(judge_all(self.judge, [self._request(row) for row in page]))
        self.verdicts += verdicts
        return [row for row, verdict in zip(page, verdicts, strict=True) if verdict.passed]


def release_judge_filter(settings: JudgeSettings, *, allow_unconfined: bool = False) -> JudgeFilter:
    from repro.release import release_columns

    return JudgeFilter(build_judge(settings, allow_unconfined=allow_unconfined), release_columns())


def describe(verdict: JudgeVerdict) -> str:
    why = verdict.detail or (verdict.cause or "")
    return f"{verdict.key}: {verdict.status.value}" + (f": {why}" if why else "")


KeepRows = Callable[[list[Any]], list[Any]]
