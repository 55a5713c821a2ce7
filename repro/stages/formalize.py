"""Stage 3: formalize the rewritten question into a Lean 4 statement that compiles with `sorry`."""

from __future__ import annotations

import re

from repro.config import ModelSettings
from repro.lean.gate import forbidden_constructs
from repro.lean.protocol import InfraStatus, Verifier
from repro.lean.source import ends_in_sorry, theorems
from repro.llm.client import ModelClient
from repro.llm.hygiene import extract_lean_block
from repro.llm.protocol import ModelCallError
from repro.prompts import render_prompt
from repro.records import AttemptStatus, LeanMessageRecord, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash

_HEADER_LINE = re.compile(r"^\s*(import\s+\S+|open\s+[^\n]*|set_option\s+maxHeartbeats\s+\d+)\s*$", re.MULTILINE)


def normalize_statement(code: str, theorem_name: str) -> str | None:
    """Our form of a formal statement: header lines dropped, the theorem under our chosen name."""
    body = _HEADER_LINE.sub("", code).strip()
    spans = theorems(body)
    if not spans:
        return None
    if theorem_name not in {span.name for span in spans}:
        if len(spans) != 1:
            return None
        span = spans[0]
        head = body[span.start : span.assign]
        head = head.replace(span.name, theorem_name, 1)
        body = body[: span.start] + head + body[span.assign :]
    return body.strip()


async def formalize(
    question: str,
    theorem_name: str,
    client: ModelClient,
    settings: ModelSettings,
    verifier: Verifier,
    *,
    header: str,
    attempt: int,
) -> StageResult:
    clock = Stopwatch()
    prompt = render_prompt("formalize", question=question, theorem_name=theorem_name)
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("formalize", prompt, attempt))
    try:
        response = await client.generate(chat_request(settings, prompt, sample_offset=attempt))
    except ModelCallError as error:
        result.status, result.reason, result.output = (
            AttemptStatus.error,
            ReasonCode.model_call_failed,
            {"error": str(error)},
        )
        return result
    account(result, client, [response])
    text, finish = response.texts[0], response.finish_reasons[0]
    result.output = {"reply": text, "finish_reason": finish}
    extraction = extract_lean_block(text, finish)
    if extraction.code is None or extraction.failure:
        result.status = AttemptStatus.rejected
        result.reason = ReasonCode(extraction.failure or "no_lean_block")
        return result
    statement = normalize_statement(extraction.code, theorem_name)
    if statement is None:
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.no_lean_block
        result.output["problem"] = "no theorem declaration in the Lean block"
        return result
    result.output["statement"] = statement
    if not ends_in_sorry(statement):
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.formalization_not_sorry
        return result
    forbidden = [f for f in forbidden_constructs(statement.rsplit(":=", 1)[0], header=header)]
    if forbidden:
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.formalization_compile_error
        result.output["problem"] = f"forbidden constructs in the statement: {forbidden}"
        return result
    lean = await verifier.check(statement, header)
    result.lean_seconds = 0.0 if lean.cached else lean.elapsed_s
    result.lean_messages = [
        LeanMessageRecord(severity=m.severity, line=m.line, column=m.column, text=m.text) for m in lean.messages
    ]
    if lean.infra_status == InfraStatus.timeout:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_timeout
    elif lean.infra_status != InfraStatus.ok:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
        result.output["lean_detail"] = lean.detail
    else:
        others = [
            m for m in lean.messages if m.severity == "error" or (m.severity == "warning" and "sorry" not in m.text)
        ]
        if lean.has_error or others:
            result.status, result.reason = AttemptStatus.rejected, ReasonCode.formalization_compile_error
    result.output.update({"lean_backend": lean.backend_id, "real_lean": lean.real_lean})
    result.elapsed_s = clock.elapsed()
    return result
