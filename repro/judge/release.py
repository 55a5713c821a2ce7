"""The kernel judge over released rows: ``repro reverify --replay`` and ``repro release --replay``.

Every row is rebuilt from its own text (the trusted header, our statement, the text Lean checked) and judged
by the tool pinned for its toolchain (:mod:`repro.judge.kernel`). ``release --replay`` withholds each row
the judge did not pass (rejected, or no verdict at all: a missing tool or a timeout is not a pass) and
names it.
"""

from __future__ import annotations

import asyncio
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

    Rows are the release writer's tuples, read by name through :class:`repro.release.rows.PageRow`."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.verdicts: list[JudgeVerdict] = []

    @property
    def withheld(self) -> list[JudgeVerdict]:
        return [v for v in self.verdicts if not v.passed]

    def _request(self, row: Any) -> JudgeRequest:
        from repro.release.rows import PageRow

        named = PageRow(row)
        return judge_request(
            named.text("instance_id"),
            named.text("lean_header"),  # the run's configured header, not prover text
            named.text("lean_statement"),
            named.text("verified_code"),
            named.provenance_field("lean_toolchain"),
        )

    def __call__(self, page: list[Any]) -> list[Any]:
        verdicts = asyncio.run(judge_all(self.judge, [self._request(row) for row in page]))
        self.verdicts += verdicts
        return [row for row, verdict in zip(page, verdicts, strict=True) if verdict.passed]


def release_judge_filter(settings: JudgeSettings, *, sandbox: str = "bwrap") -> JudgeFilter:
    return JudgeFilter(build_judge(settings, sandbox=sandbox))


def describe(verdict: JudgeVerdict) -> str:
    why = verdict.detail or (verdict.cause or "")
    return f"{verdict.key}: {verdict.status.value}" + (f": {why}" if why else "")


KeepRows = Callable[[list[Any]], list[Any]]
