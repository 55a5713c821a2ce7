"""Stages 5 and 6: sample proofs from the prover and pass each through the soundness gate."""

from __future__ import annotations

import re

from pydantic import BaseModel

from repro.config import ModelSettings
from repro.lean.gate import Verdict, verify_proof
from repro.lean.protocol import Verifier
from repro.llm.client import ModelClient
from repro.llm.hygiene import extract_lean_block
from repro.llm.protocol import ModelCallError
from repro.prompts import render_prompt
from repro.records import AttemptStatus, LeanMessageRecord, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash

_DECLARATION = re.compile(r"\b(theorem|lemma|example)\b")


def has_no_lean(text: str) -> bool:
    """Output with neither a Lean code block nor a declaration: prose, an apology, garbage."""
    return extract_lean_block(text).code is None and _DECLARATION.search(text) is None


class ProofSample(BaseModel):
    index: int
    text: str
    finish_reason: str


def prover_prompt(statement: str, header: str) -> str:
    return render_prompt("prove", header=header.strip(), statement=statement.strip())


async def sample_proofs(
    statement: str,
    header: str,
    client: ModelClient,
    settings: ModelSettings,
    *,
    count: int,
    first_index: int,
) -> tuple[list[ProofSample], StageResult]:
    """``count`` samples in one request (``n=count``), numbered from ``first_index`` for the cache."""
    prompt = prover_prompt(statement, header)
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("prove", prompt, first_index))
    try:
        response = await client.generate(chat_request(settings, prompt, sample_offset=first_index, n=count))
    except ModelCallError as error:
        result.status, result.reason, result.output = (
            AttemptStatus.error,
            ReasonCode.model_call_failed,
            {"error": str(error)},
        )
        return [], result
    account(result, client, [response])
    samples = [
        ProofSample(index=first_index + i, text=text, finish_reason=finish)
        for i, (text, finish) in enumerate(zip(response.texts, response.finish_reasons, strict=True))
    ]
    return samples, result


async def verify_sample(
    statement: str, sample: ProofSample, verifier: Verifier, *, header: str, allow_native_decide: bool
) -> tuple[Verdict, StageResult]:
    clock = Stopwatch()
    verdict = await verify_proof(
        statement,
        sample.text,
        verifier,
        header=header,
        allow_native_decide=allow_native_decide,
        finish_reason=sample.finish_reason,
    )
    return verdict, verdict_result(statement, sample.text, verdict, clock.elapsed())


def verdict_result(statement: str, text: str, verdict: Verdict, elapsed_s: float) -> StageResult:
    """The stored record of one gate verdict on ``text`` (a raw sample, a salvaged or a repaired one)."""
    infra = {ReasonCode.lean_timeout, ReasonCode.lean_unavailable}
    if verdict.verified:
        status, reason = AttemptStatus.passed, None
    else:
        status = AttemptStatus.error if set(verdict.reasons) <= infra and verdict.reasons else AttemptStatus.rejected
        reason = verdict.reasons[0] if verdict.reasons else ReasonCode.lean_error
        if reason != ReasonCode.boundary_corruption and has_no_lean(text):
            # prose or garbage: the gate lexes it as code and may find `sorry` in an apology, but nothing
            # was restated or smuggled; there was no Lean at all
            reason = ReasonCode.no_lean_block
    lean = verdict.lean
    return StageResult(
        status=status,
        reason=reason,
        input_hash=input_hash("verify", statement, text),
        output={
            "reasons": [r.value for r in verdict.reasons],
            "details": verdict.details,
            "checked_code": verdict.checked_code,
            "axioms": verdict.axioms,
            "prover_statement_matches": verdict.prover_statement_matches,
            "static_passed": verdict.static_passed,
            "policy": verdict.policy,
            "lean_backend": lean.backend_id if lean else None,
            "real_lean": lean.real_lean if lean else False,
            "toolchain": lean.toolchain if lean else None,
            "mathlib_revision": lean.mathlib_revision if lean else None,
        },
        lean_messages=[
            LeanMessageRecord(severity=m.severity, line=m.line, column=m.column, text=m.text) for m in verdict.messages
        ],
        taxonomy=[fact.value for fact in verdict.taxonomy],
        lean_seconds=0.0 if lean is None or lean.cached else lean.elapsed_s,
        elapsed_s=elapsed_s,
    )
