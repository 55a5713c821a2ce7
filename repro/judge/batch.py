"""Checking many prover outputs through the soundness gate: streamed, resumable, summarised.

Users audit a prover's published outputs with it (``repro check-proof --batch``); our own tests run
it on real corpora. Each input row gives ``id``, ``statement``, ``output`` and optionally ``header``
and ``finish_reason``; each output row is one verdict. A row whose check failed for infrastructure
reasons (timeout, Lean unavailable) is checked again on resume; every other row is kept.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from repro.config import StaticLimits
from repro.exit_codes import ExitCode, ReproError
from repro.jsonl import BadRows, iter_json_objects
from repro.judge.screen import verify_proof
from repro.judge.verdict import Verdict
from repro.lean.protocol import Verifier
from repro.records import ReasonCode
from repro.salvage import salvage_variants
from repro.salvage.policy import worth_salvaging
from repro.waiting import about

INFRA_REASONS = frozenset({ReasonCode.lean_timeout, ReasonCode.lean_unavailable, ReasonCode.static_timeout})


class BatchInputError(ReproError, ValueError):
    """A batch input file or row is unusable; the message names file, line and field."""


class ProofRow(BaseModel):
    """One row of ``check-proof --batch``; an unknown (misspelt) field is refused, never ignored."""

    model_config = ConfigDict(extra="forbid")
    id: str
    statement: str
    output: str
    header: str | None = None
    finish_reason: str = "stop"


class VerdictRow(BaseModel):
    id: str
    verified: bool
    reasons: list[ReasonCode]
    details: list[str]
    taxonomy: list[str]
    static_passed: bool
    policy: list[str]
    axioms: list[str] | None
    backend: str | None
    real_lean: bool
    # with --salvage: the repaired texts tried (labels), how many passed the static layer, which one verified
    salvage_variants: list[str] = Field(default_factory=list)
    salvage_static_passed: int = 0
    salvage_verified: str | None = None

    @property
    def infrastructure_failure(self) -> bool:
        return bool(self.reasons) and set(self.reasons) <= INFRA_REASONS


class BatchSummary(BaseModel):
    total: int
    checked_now: int
    kept_from_before: int
    verified: int
    rejected: int
    infrastructure_failures: int
    static_passed: int
    refused_by_policy: dict[str, int]
    reasons: dict[str, int]
    backend: str
    real_lean: bool
    # with --salvage: failed rows that had repaired texts, how many texts, how many passed the static
    # layer, and rows a repaired text made verified
    salvaged_rows: int = 0
    salvage_variants: int = 0
    salvage_static_passed: int = 0
    salvage_verified: int = 0

    @property
    def exit_code(self) -> ExitCode:
        if self.infrastructure_failures:
            return ExitCode.infrastructure
        if self.rejected:
            return ExitCode.rejected
        return ExitCode.verified if self.real_lean else ExitCode.stand_in


def verdict_row(row_id: str, verdict: Verdict, verifier: Verifier | None) -> VerdictRow:
    lean = verdict.lean
    return VerdictRow(
        id=row_id,
        verified=verdict.verified,
        reasons=verdict.reasons,
        details=verdict.details,
        taxonomy=[fact.value for fact in verdict.taxonomy],
        static_passed=bool(verdict.static_passed),
        policy=verdict.policy,
        axioms=verdict.axioms,
        backend=lean.backend_id if lean else (verifier.backend_id if verifier else None),
        real_lean=bool(lean.real_lean) if lean else False,
    )


def verdict_exit_code(verdict: Verdict) -> ExitCode:
    if verdict.reasons and set(verdict.reasons) <= INFRA_REASONS:
        return ExitCode.infrastructure
    if ReasonCode.statement_not_single_theorem in verdict.reasons:
        return ExitCode.usage
    if not verdict.verified:
        return ExitCode.rejected
    return ExitCode.verified if verdict.lean is not None and verdict.lean.real_lean else ExitCode.stand_in


def read_rows(path: Path) -> list[ProofRow]:
    """All rows of a JSONL file, validated up front so a bad row stops nothing half-way; the error
    names every bad row (line, field, reason), not only the first."""
    rows: list[ProofRow] = []
    bad = BadRows(path, BatchInputError)
    for number, data in iter_json_objects(path, BatchInputError, bad=bad):
        if "id" in data and data["id"] is not None and not isinstance(data["id"], str):
            data["id"] = str(data["id"])
        row = bad.validated(number, ProofRow, data)
        if row is not None and bad.first_use(number, row.id):
            rows.append(row)
    bad.raise_if_any()
    return rows


def _kept_rows(out_path: Path) -> list[VerdictRow]:
    """Rows of a previous (possibly interrupted) run worth keeping; the file is rewritten to them."""
    if not out_path.exists():
        return []
    kept: list[VerdictRow] = []
    for line in out_path.read_text(encoding="utf-8").splitlines():
        try:
            row = VerdictRow.model_validate_json(line)
        except ValidationError:
            continue  # a line cut short by an interruption
        if not row.infrastructure_failure:
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
    allow_native_decide: bool = False,
    limits: StaticLimits | None = None,
    concurrency: int = 2,
    progress: Callable[[int, int], None] | None = None,
    salvage: int = 0,
) -> BatchSummary:
    """Check every row of ``in_path`` not already judged in ``out_path``, appending verdicts as they come.

    With ``salvage`` > 0, a failed row that is no cheat also has up to that many repaired texts checked
    (:mod:`repro.salvage`), each through the same gate, until one is verified.
    """
    rows = read_rows(in_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    kept = _kept_rows(out_path)
    done = {row.id for row in kept}
    todo = [row for row in rows if row.id not in done]
    results: list[VerdictRow] = []
    gate = asyncio.Semaphore(max(concurrency, 1))
    with out_path.open("a", encoding="utf-8") as handle:

        async def one(row: ProofRow) -> None:
            with about(f"row {row.id}"):  # the heartbeat names the row whose Lean check is in flight
                await check(row)

        async def check(row: ProofRow) -> None:
            async with gate:
                verdict = await _verify_row(
                    row, row.output, verifier, header, allow_native_decide, limits, finish_reason=row.finish_reason
                )
            result = verdict_row(row.id, verdict, verifier)
            if salvage > 0 and worth_salvaging(verdict, without_lean=True):
                async with gate:
                    result = await _salvage_row(
                        row, verdict, result, verifier, header, allow_native_decide, salvage, limits
                    )
            handle.write(result.model_dump_json() + "\n")
            handle.flush()
            results.append(result)
            if progress is not None:
                progress(len(results), len(todo))

        await asyncio.gather(*(one(row) for row in todo))
    wanted = {row.id for row in rows}
    everything = [row for row in kept if row.id in wanted] + results
    return summarize(everything, checked_now=len(results), verifier=verifier)


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
    """``text`` through the gate against the row's statement, under the row's own header if it has one."""
    return await verify_proof(
        row.statement,
        text,
        verifier,
        header=row.header if row.header is not None else header,
        allow_native_decide=allow_native_decide,
        finish_reason=finish_reason,
        limits=limits,
    )


async def _salvage_row(
    row: ProofRow,
    verdict: Verdict,
    result: VerdictRow,
    verifier: Verifier | None,
    header: str,
    allow_native_decide: bool,
    limit: int,
    limits: StaticLimits | None = None,
) -> VerdictRow:
    original = verdict.prover_code if verdict.lean_steps else None  # the variants are the prover's text too
    labels, static, verified = [], 0, None
    for variant in salvage_variants(row.statement, row.output, row.finish_reason, limit=limit, original_code=original):
        labels.append(variant.label)
        # a repaired text is checked as a finished reply: salvage allowed for a cut-off when it made the text
        checked = await _verify_row(row, variant.text, verifier, header, allow_native_decide, limits)
        static += bool(checked.static_passed)
        if checked.verified:
            verified = variant.label
            break
    return result.model_copy(
        update={"salvage_variants": labels, "salvage_static_passed": static, "salvage_verified": verified}
    )


def summarize(rows: list[VerdictRow], *, checked_now: int, verifier: Verifier | None) -> BatchSummary:
    reasons: Counter[str] = Counter(reason.value for row in rows for reason in row.reasons)
    policy: Counter[str] = Counter(label for row in rows for label in row.policy)
    infra = sum(1 for row in rows if row.infrastructure_failure)
    verified = sum(1 for row in rows if row.verified)
    return BatchSummary(
        total=len(rows),
        checked_now=checked_now,
        kept_from_before=len(rows) - checked_now,
        verified=verified,
        rejected=len(rows) - verified - infra,
        infrastructure_failures=infra,
        static_passed=sum(1 for row in rows if row.static_passed),
        refused_by_policy=dict(policy),
        reasons=dict(reasons),
        backend=verifier.backend_id if verifier else "none",
        real_lean=bool(verifier and verifier.real_lean),
        salvaged_rows=sum(1 for row in rows if row.salvage_variants),
        salvage_variants=sum(len(row.salvage_variants) for row in rows),
        salvage_static_passed=sum(row.salvage_static_passed for row in rows),
        salvage_verified=sum(1 for row in rows if row.salvage_verified),
    )
