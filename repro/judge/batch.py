"""Checking many prover outputs through the screen and the kernel judge: streamed, resumable, summarised.

Users audit a prover's published outputs with it (``repro check-proof --batch``); our own tests run
it on real corpora. Each input row gives ``id``, ``statement``, ``output`` and optionally ``header``
and ``finish_reason``; each output row is one verdict. A row the screen passes goes to the kernel judge
(:mod:`repro.judge.proof`), and a row is ``verified`` only when a real screen and a real judge passed it.
A row with no verdict (timeout, Lean or the judge unavailable) is checked again on resume, and so is a
row whose verdict was given for another text, header, screen backend or judge (:func:`resume_key`); every
other row is kept. A row's own ``header`` is data: checked against the trusted header, never run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repro.config import StaticLimits
from repro.exit_codes import ExitCode, ReproError
from repro.jsonl import BadRows, iter_json_objects
from repro.judge.header import header_refusal
from repro.judge.proof import ProofCheck, judge_screened_text
from repro.judge.screen import verify_proof
from repro.judge.verdict import Judge, JudgeVerdict, Verdict
from repro.lean.protocol import Verifier
from repro.records import ReasonCode
from repro.salvage import salvage_variants
from repro.salvage.policy import worth_salvaging
from repro.waiting import about

INFRA_REASONS = frozenset({ReasonCode.lean_timeout, ReasonCode.lean_unavailable, ReasonCode.static_timeout})
# a row with only these reasons got no verdict: the screen's infrastructure, or the judge's (checked again on resume)
NO_VERDICT_REASONS = INFRA_REASONS | {ReasonCode.judge_unavailable}


class BatchInputError(ReproError, ValueError):
    """A batch input file or row is unusable; the message names file, line and field."""


class ProofRow(BaseModel):
    """One row of ``check-proof --batch``; an unknown (misspelt) field is refused, never ignored."""

    model_config = ConfigDict(extra="forbid")
    id: str
    statement: str
    output: str
    # checked against the trusted header, never run (read_rows)
    header: str | None = None
    finish_reason: str = "stop"


class VerdictRow(BaseModel):
    id: str
    # a real screen and a real kernel judge both passed it: nothing else is verified
    verified: bool
    # the screen and the judge both passed it, whichever backends (a fake Lean, a stand-in judge)
    passed: bool
    reasons: list[ReasonCode]
    details: list[str]
    taxonomy: list[str]
    static_passed: bool
    # the screen (static layer and REPL check) passed it: only a candidate for the judge
    screen_passed: bool
    policy: list[str]
    axioms: list[str] | None
    backend: str | None
    real_lean: bool
    # the judge's verdict on what the screen passed (None: not asked, the screen did not pass it)
    judge: JudgeVerdict | None = None
    # with --salvage: the repaired texts tried (labels), how many passed the static layer, and which one the
    # screen and the judge passed
    salvage_variants: list[str] = Field(default_factory=list)
    salvage_static_passed: int = 0
    salvage_verified: str | None = None
    # what this verdict was given for (:func:`resume_key`): the row's text, the header, the screen's backend and
    # the judge's identity; a resume keeps the verdict only when today's row and checkers have the same key
    checked_for: str | None = None

    @property
    def infrastructure_failure(self) -> bool:
        return bool(self.reasons) and set(self.reasons) <= NO_VERDICT_REASONS


class BatchSummary(BaseModel):
    total: int
    checked_now: int
    kept_from_before: int
    # a real screen and a real kernel judge passed them
    verified: int
    # the screen and the judge passed them, whichever backends
    passed: int
    rejected: int
    # rejected by the judge after the screen passed them (the judge wins)
    judge_rejected: int
    infrastructure_failures: int
    static_passed: int
    screen_passed: int
    refused_by_policy: dict[str, int]
    reasons: dict[str, int]
    backend: str
    real_lean: bool
    judge: str
    judge_real: bool
    # with --salvage: failed rows that had repaired texts, how many texts, how many passed the static
    # layer, and rows a repaired text passed (screen and judge)
    salvaged_rows: int = 0
    salvage_variants: int = 0
    salvage_static_passed: int = 0
    salvage_verified: int = 0

    @property
    def exit_code(self) -> ExitCode:
        """repro/exit_codes.py: 3 if any row got no verdict, else 1 if any was rejected, else 0 only when every
        row was verified (a real screen and a real judge), else 4."""
        if self.infrastructure_failures:
            return ExitCode.infrastructure
        if self.rejected:
            return ExitCode.rejected
        return ExitCode.verified if self.verified == self.total else ExitCode.fake_backend


def verdict_row(row_id: str, checked: ProofCheck | Verdict, verifier: Verifier | None) -> VerdictRow:
    if isinstance(checked, Verdict):
        checked = ProofCheck(screen=checked)
    verdict = checked.screen
    lean = verdict.lean
    return VerdictRow(
        id=row_id,
        verified=checked.verified,
        passed=checked.passed,
        reasons=checked.reasons,
        details=verdict.details + ([checked.judge_line()] if verdict.verified else []),
        taxonomy=[fact.value for fact in verdict.taxonomy],
        static_passed=bool(verdict.static_passed),
        screen_passed=verdict.verified,
        policy=verdict.policy,
        axioms=verdict.axioms,
        backend=lean.backend_id if lean else (verifier.backend_id if verifier else None),
        real_lean=bool(lean.real_lean) if lean else False,
        judge=checked.judge,
    )


def verdict_exit_code(verdict: Verdict) -> ExitCode:
    """The exit status of the screen's verdict alone: never 0, since the screen never decides "verified"
    (check-proof asks the judge after a screen pass: :attr:`repro.judge.proof.ProofCheck.exit_code`)."""
    return ProofCheck(screen=verdict).exit_code


def read_rows(path: Path, *, trusted_header: str | None = None) -> list[ProofRow]:
    """All rows of a JSONL file, validated up front so a bad row stops nothing half-way; the error
    names every bad row (line, field, reason), not only the first.

    With ``trusted_header``, a row's own ``header`` must fall within it (:func:`repro.judge.header.header_refusal`):
    it is never run, the trusted header is, so a row whose header says more is refused rather than checked
    under a header it did not ask for."""
    rows: list[ProofRow] = []
    bad = BadRows(path, BatchInputError)
    for number, data in iter_json_objects(path, BatchInputError, bad=bad):
        if "id" in data and data["id"] is not None and not isinstance(data["id"], str):
            data["id"] = str(data["id"])
        row = bad.validated(number, ProofRow, data)
        if row is None or not bad.first_use(number, row.id):
            continue
        refusal = header_refusal(row.header, trusted_header) if row.header and trusted_header is not None else None
        if refusal is not None:
            bad.add(number, refusal, field="header")
            continue
        rows.append(row)
    bad.raise_if_any()
    return rows


def resume_key(
    row: ProofRow,
    *,
    header: str,
    verifier: Verifier | None,
    judge: Judge | None,
    toolchain: str | None,
    allow_native_decide: bool,
    salvage: int,
    limits: StaticLimits | None,
) -> str:
    """What a verdict row was given for, as the Lean and judge caches key theirs: the row's statement, output,
    header and finish reason, the trusted header, the screen's backend identity and the judge's (name, real,
    tool revision), the options that change a verdict. A verdict kept by id alone counted a fake backend's
    pass as real on a rerun with the real one, and kept a changed row's old verdict (red team red1, R3)."""
    revision = None
    if judge is not None:
        try:
            revision = judge.revision(toolchain or "")
        except Exception:  # noqa: BLE001 - an unknown toolchain: the judge says so when asked
            revision = None
    parts = {
        "row": [row.statement, row.output, row.header, row.finish_reason],
        "header": header,
        "screen": None
        if verifier is None
        else [verifier.backend_id, verifier.real_lean, verifier.toolchain, verifier.mathlib_revision],
        "judge": None if judge is None else [judge.name, judge.real, revision],
        "toolchain": toolchain,
        "options": [allow_native_decide, salvage, limits.model_dump(mode="json") if limits is not None else None],
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _kept_rows(out_path: Path, keys: dict[str, str]) -> list[VerdictRow]:
    """Rows of a previous (possibly interrupted) run worth keeping; the file is rewritten to them.

    ``keys``: today's :func:`resume_key` of each input row by id; a verdict is kept only for its own key (a row
    with no verdict, a row changed since, or one checked by another backend or judge is checked again)."""
    if not out_path.exists():
        return []
    kept: list[VerdictRow] = []
    for line in out_path.read_text(encoding="utf-8").splitlines():
        try:
            row = VerdictRow.model_validate_json(line)
        except ValidationError:
            continue  # a line cut short by an interruption
        if row.infrastructure_failure:
            continue
        if row.id in keys and row.checked_for != keys[row.id]:
            continue
        kept.append(row)
    temporary = out_path.with_suffix(out_path.suffix + ".tmp")
    temporary.write_text("".join(row.model_dump_json() + "\n" for row in kept), encoding="utf-8")
    temporary.replace(out_path)
    return kept


async def check_batch(
    in_path: Path,
    out_path: Path,
    verifier: Verifier | None,
    *,
    header: str,
    judge: Judge | None = None,
    toolchain: str | None = None,
    allow_native_decide: bool = False,
    limits: StaticLimits | None = None,
    concurrency: int = 2,
    progress: Callable[[int, int], None] | None = None,
    salvage: int = 0,
) -> BatchSummary:
    """Check every row of ``in_path`` not already judged in ``out_path``, appending verdicts as they come.

    What the screen passes goes to ``judge`` (on ``toolchain``); without a judge a screen pass is no verdict.
    With ``salvage`` > 0, a failed row that is no cheat also has up to that many repaired texts checked
    (:mod:`repro.salvage`), each through the same screen and judge, until one passes both.
    """
    rows = read_rows(in_path, trusted_header=header)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    keys = {
        row.id: resume_key(
            row,
            header=header,
            verifier=verifier,
            judge=judge,
            toolchain=toolchain,
            allow_native_decide=allow_native_decide,
            salvage=salvage,
            limits=limits,
        )
        for row in rows
    }
    kept = _kept_rows(out_path, keys)
    done = {row.id for row in kept}
    todo = [row for row in rows if row.id not in done]
    results: list[VerdictRow] = []
    gate = asyncio.Semaphore(max(concurrency, 1))
    with out_path.open("a", encoding="utf-8") as handle:

        async def one(row: ProofRow) -> None:
            with about(f"row {row.id}"):  # the heartbeat names the row whose Lean check is in flight
                await check(row)

        async def check(row: ProofRow) -> None:
            async with gate:  # the Lean workers; the judge bounds its own judgements
                verdict = await _verify_row(
                    row, row.output, verifier, header, allow_native_decide, limits, finish_reason=row.finish_reason
                )
            checked = await _judge_row(row, verdict, judge, header, toolchain)
            result = verdict_row(row.id, checked, verifier)
            if salvage > 0 and not checked.passed and worth_salvaging(verdict, without_lean=True):
                result = await _salvage_row(
                    row, verdict, result, verifier, judge, header, toolchain, allow_native_decide, salvage, limits, gate
                )
            result = result.model_copy(update={"checked_for": keys[row.id]})
            handle.write(result.model_dump_json() + "\n")
            handle.flush()
            results.append(result)
            if progress is not None:
                progress(len(results), len(todo))

        await asyncio.gather(*(one(row) for row in todo))
    wanted = {row.id for row in rows}
    everything = [row for row in kept if row.id in wanted] + results
    return summarize(everything, checked_now=len(results), verifier=verifier, judge=judge)


async def _verify_row(
    row: ProofRow,
    text: str,
    verifier: Verifier | None,
    header: str,
    allow_native_decide: bool,
    limits: StaticLimits | None,
    *,
    finish_reason: str = "stop",
) -> Verdict:
    """``text`` through the screen against the row's statement, under the trusted ``header``: never the row's
    own, which :func:`read_rows` only checked (red team red1, R2: a row's header ran unscreened in Lean)."""
    return await verify_proof(
        row.statement,
        text,
        verifier,
        header=header,
        allow_native_decide=allow_native_decide,
        finish_reason=finish_reason,
        limits=limits,
    )


async def _judge_row(
    row: ProofRow, verdict: Verdict, judge: Judge | None, header: str, toolchain: str | None, *, key: str | None = None
) -> ProofCheck:
    return await judge_screened_text(
        verdict, judge, key=key or row.id, header=header, statement=row.statement, toolchain=toolchain
    )


async def _salvage_row(
    row: ProofRow,
    verdict: Verdict,
    result: VerdictRow,
    verifier: Verifier | None,
    judge: Judge | None,
    header: str,
    toolchain: str | None,
    allow_native_decide: bool,
    limit: int,
    limits: StaticLimits | None,
    gate: asyncio.Semaphore,
) -> VerdictRow:
    original = verdict.prover_code if verdict.lean_steps else None  # the variants are the prover's text too
    labels, static, verified = [], 0, None
    for variant in salvage_variants(row.statement, row.output, row.finish_reason, limit=limit, original_code=original):
        labels.append(variant.label)
        # a repaired text is checked as a finished reply: salvage allowed for a cut-off when it made the text
        async with gate:
            screened = await _verify_row(row, variant.text, verifier, header, allow_native_decide, limits)
        static += bool(screened.static_passed)
        checked = await _judge_row(row, screened, judge, header, toolchain, key=f"{row.id}/{variant.label}")
        if checked.passed:
            verified = variant.label
            break
    return result.model_copy(
        update={"salvage_variants": labels, "salvage_static_passed": static, "salvage_verified": verified}
    )


def summarize(
    rows: list[VerdictRow], *, checked_now: int, verifier: Verifier | None, judge: Judge | None = None
) -> BatchSummary:
    reasons: Counter[str] = Counter(reason.value for row in rows for reason in row.reasons)
    policy: Counter[str] = Counter(label for row in rows for label in row.policy)
    infra = sum(1 for row in rows if row.infrastructure_failure)
    passed = sum(1 for row in rows if row.passed)
    return BatchSummary(
        total=len(rows),
        checked_now=checked_now,
        kept_from_before=len(rows) - checked_now,
        verified=sum(1 for row in rows if row.verified),
        passed=passed,
        rejected=len(rows) - passed - infra,
        judge_rejected=sum(1 for row in rows if ReasonCode.judge_rejected in row.reasons),
        infrastructure_failures=infra,
        static_passed=sum(1 for row in rows if row.static_passed),
        screen_passed=sum(1 for row in rows if row.screen_passed),
        refused_by_policy=dict(policy),
        reasons=dict(reasons),
        backend=verifier.backend_id if verifier else "none",
        real_lean=bool(verifier and verifier.real_lean),
        judge=judge.name if judge is not None else "none",
        judge_real=bool(judge is not None and judge.real),
        salvaged_rows=sum(1 for row in rows if row.salvage_variants),
        salvage_variants=sum(len(row.salvage_variants) for row in rows),
        salvage_static_passed=sum(row.salvage_static_passed for row in rows),
        salvage_verified=sum(1 for row in rows if row.salvage_verified),
    )
