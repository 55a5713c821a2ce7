"""The kernel judge over released rows (``repro reverify``): requests built from a release's own files.

Every row is rebuilt from its own text (the trusted header, our statement, the text Lean checked) and judged
by the tool pinned for its toolchain (:mod:`repro.judge.kernel`). A release holds only rows the run's judge
passed (:mod:`repro.release.writer`); reverify asks the judge again, afresh.
"""

from __future__ import annotations

from pathlib import Path

from repro.exit_codes import ExitCode
from repro.judge.kernel import judge_all
from repro.judge.verdict import Judge, JudgeRequest, JudgeStatus, JudgeVerdict
from repro.lean.text import StatementError, read_statement


def theorem_of(statement: str) -> str:
    """Our theorem's name, read from our statement (empty when it cannot be read: the judge then refuses)."""
    try:
        return read_statement(statement).name
    except StatementError:
        return ""


def judge_request(
    key: str,
    header: str,
    statement: str,
    submission: str,
    toolchain: str | None = None,
    *,
    theorem_name: str | None = None,
) -> JudgeRequest:
    """``theorem_name``: the row's own (what the run judged), else read from our statement."""
    return JudgeRequest(
        key=key,
        header=header,
        statement=statement,
        theorem_name=theorem_name or theorem_of(statement),
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
            instance.provenance.judge_toolchain or instance.provenance.lean_toolchain,
            theorem_name=instance.theorem_name,
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


def describe(verdict: JudgeVerdict) -> str:
    why = verdict.detail or (verdict.cause or "")
    return f"{verdict.key}: {verdict.status.value}" + (f": {why}" if why else "")
