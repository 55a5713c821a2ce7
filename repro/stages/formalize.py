"""Stage 3: formalize the rewritten question into a Lean 4 statement that compiles with `sorry`."""

from __future__ import annotations

from repro.config import ModelSettings
from repro.judge.screen import forbidden_constructs
from repro.lean.protocol import InfraStatus, Verifier
from repro.lean.text import (
    Kind,
    StatementError,
    ends_in_sorry,
    extract_lean_block,
    lex,
    read_statement,
    significant,
    without_header,
)
from repro.llm.client import ModelClient
from repro.llm.protocol import ModelCallError
from repro.prompts import render_prompt
from repro.records import AttemptStatus, LeanMessageRecord, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash


def normalize_statement(code: str, theorem_name: str) -> str:
    """Our form of a formal statement: leading header commands dropped, the theorem under our name.

    Raises :class:`StatementError` unless what remains is exactly one theorem ending in
    ``:= by sorry``: a statement with definitions or other commands is refused, never trimmed.
    """
    body = without_header(code)
    parsed = read_statement(body)
    if parsed.name == theorem_name:
        return body
    name_token = significant(lex(body))[1]
    return (body[: name_token.start] + theorem_name + body[name_token.end :]).strip()


async def formalize(
    question: str,
    theorem_name: str,
    client: ModelClient,
    settings: ModelSettings,
    verifier: Verifier,
    *,
    header: str,
    attempt: int,
    feedback: str = "",
) -> StageResult:
    """``feedback``: what Lean established about an earlier statement of this question (e.g. refuted)."""
    clock = Stopwatch()
    shown = f"\n{feedback.strip()}\n" if feedback.strip() else ""
    prompt = render_prompt("formalize", question=question, theorem_name=theorem_name, feedback=shown)
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
    try:
        statement = normalize_statement(extraction.code, theorem_name)
    except StatementError as error:
        result.status = AttemptStatus.rejected
        result.reason = (
            ReasonCode.formalization_not_sorry
            if "does not end in" in str(error) and _single_theorem_keyword(extraction.code)
            else ReasonCode.statement_not_single_theorem
        )
        result.output["problem"] = str(error)
        return result
    result.output["statement"] = statement
    if not ends_in_sorry(statement):
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.formalization_not_sorry
        return result
    forbidden = forbidden_constructs(read_statement(statement).declaration, header=header, line_starts=False)
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


def _single_theorem_keyword(code: str) -> bool:
    keywords = [t for t in significant(lex(code)) if t.kind == Kind.identifier and t.text in ("theorem", "lemma")]
    return len(keywords) == 1
