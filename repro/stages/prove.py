"""Stages 5 and 6: sample proofs from the prover and pass each through the soundness gate."""

from __future__ import annotations

import re

from pydantic import BaseModel

from repro.config import ModelSettings, StaticLimits
from repro.judge.screen import verify_proof
from repro.judge.verdict import Verdict
from repro.lean.protocol import Verifier
from repro.lean.text import extract_lean_block
from repro.llm.client import ModelClient
from repro.llm.factory import request_from_settings
from repro.llm.protocol import ModelCallError, ModelRequest, PromptTooLong
from repro.prompts import render_prompt
from repro.provers import ProverProfile, get_profile
from repro.records import AttemptStatus, LeanMessageRecord, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, input_hash

_DECLARATION = re.compile(r"\b(theorem|lemma|example)\b")


def has_no_lean(text: str) -> bool:
    """Output with neither a Lean code block nor a declaration: prose, an apology, garbage."""
    return extract_lean_block(text).code is None and _DECLARATION.search(text) is None


class ProofSample(BaseModel):
    index: int
    text: str
    finish_reason: str


def prover_prompt(statement: str, header: str) -> str:
    """repro's own prover prompt (the `custom` profile's)."""
    return render_prompt("prove", header=header.strip(), statement=statement.strip())


def profile_of(settings: ModelSettings) -> ProverProfile:
    """The profile a prover's settings name; `custom` (repro's own prompt) when they name none."""
    return get_profile(settings.profile or "custom")


def prover_request(
    settings: ModelSettings,
    statement: str,
    header: str,
    *,
    sample_offset: int,
    n: int,
    problem: str | None = None,
) -> ModelRequest:
    """The request the prover's harness would send: its roles, wording, statement form and sampling.

    A completion-format profile (DeepSeek-Prover-V1.5) sends its prompt as raw text, which is its whole
    template; a chat profile sends messages, which the server renders with the model's chat template.
    """
    profile = profile_of(settings)
    seed = None if settings.seed is None else settings.seed + sample_offset
    if profile.prompt_format == "completion" and settings.prompt_format == "completion":
        inputs: dict[str, object] = {"prompt": profile.user_text(statement, header, problem)}
    else:
        inputs = {"messages": profile.messages(statement, header, problem)}
    return request_from_settings(settings, n=n, sample_offset=sample_offset, seed=seed, json_mode=False, **inputs)


def prover_output_text(settings: ModelSettings, statement: str, output: str) -> str:
    """The text the soundness gate reads for one prover output (a continuation gets its statement back)."""
    return profile_of(settings).proof_text(statement, output)


def prover_sample(settings: ModelSettings, statement: str, index: int, output: str, finish: str) -> ProofSample:
    """One prover output as the gate reads it: its text and the finish reason that describes that text."""
    text, reason = profile_of(settings).proof_output(statement, output, finish)
    return ProofSample(index=index, text=text, finish_reason=reason)


async def sample_proofs(
    statement: str,
    header: str,
    client: ModelClient,
    settings: ModelSettings,
    *,
    count: int,
    first_index: int,
    problem: str | None = None,
) -> tuple[list[ProofSample], StageResult]:
    """``count`` samples in one request (``n=count``), numbered from ``first_index`` for the cache."""
    request = prover_request(settings, statement, header, sample_offset=first_index, n=count, problem=problem)
    prompt = request.prompt_text()
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("prove", prompt, first_index))
    try:
        response = await client.generate(request)
    except PromptTooLong as error:  # a verdict on this prompt, not an outage: asking again would not help
        result.status, result.reason, result.output = (
            AttemptStatus.rejected,
            ReasonCode.prompt_too_long,
            {"error": str(error)},
        )
        return [], result
    except ModelCallError as error:
        result.status, result.reason, result.output = (
            AttemptStatus.error,
            ReasonCode.model_call_failed,
            {"error": str(error)},
        )
        return [], result
    account(result, client, [response])
    samples = [
        prover_sample(settings, statement, first_index + i, text, finish)
        for i, (text, finish) in enumerate(zip(response.texts, response.finish_reasons, strict=True))
    ]
    return samples, result


async def verify_sample(
    statement: str,
    sample: ProofSample,
    verifier: Verifier,
    *,
    header: str,
    allow_native_decide: bool,
    limits: StaticLimits | None = None,
) -> tuple[Verdict, StageResult]:
    clock = Stopwatch()
    verdict = await verify_proof(
        statement,
        sample.text,
        verifier,
        header=header,
        allow_native_decide=allow_native_decide,
        finish_reason=sample.finish_reason,
        limits=limits,
    )
    return verdict, verdict_result(statement, sample.text, verdict, clock.elapsed())


def verdict_result(statement: str, text: str, verdict: Verdict, elapsed_s: float) -> StageResult:
    """The stored record of one gate verdict on ``text`` (a raw sample, a salvaged or a repaired one)."""
    infra = {ReasonCode.lean_timeout, ReasonCode.lean_unavailable, ReasonCode.static_timeout}
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
