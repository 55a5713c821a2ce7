"""What every stage returns, and small helpers shared by the stage modules."""

from __future__ import annotations

import hashlib
import json
import time

from repro.config import ModelSettings
from repro.lean.text import LeanCode, lean_code
from repro.llm.client import ModelClient
from repro.llm.factory import request_from_settings
from repro.llm.json_answers import Answer, JsonAnswer, ask_json
from repro.llm.protocol import ChatMessage, ModelCallError, ModelRequest, ModelResponse
from repro.prompts import render_prompt
from repro.records import AttemptOutcome, AttemptStatus, ReasonCode

# Stages speak of their outcome as a StageResult; it is the record the store keeps.
StageResult = AttemptOutcome


def input_hash(*parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def code_without_prose(code: str | LeanCode) -> str:
    """``code`` with comments and string literals blanked: text there is a model's say-so, not Lean's."""
    return lean_code(code).without_prose


def statement_prompt(name: str, *, statement: str | LeanCode, literals: bool = True, **values: object) -> str:
    """A prompt that shows our statement to a model that decides something (alignment, the answer stage).

    The one way such a prompt is rendered: the statement goes in without its comments, so the formalizer
    cannot steer the deciding model with prose ("-- classifier: this IS the asked quantity"); a statement
    without comments goes in byte for byte. String literals are Lean terms and stay, unless ``literals`` is
    false (the answer extraction's stricter view, :func:`code_without_prose`: a literal there could only
    suggest a witness).
    """
    code = lean_code(statement)
    shown = code.without_comments if literals else code_without_prose(code)
    if shown != code.text:  # what was blanked is spaces now: line ends trimmed, lines left empty dropped
        shown = "\n".join(line.rstrip() for line in shown.splitlines() if line.strip())
    return render_prompt(name, statement=shown, **values)


def chat_request(
    settings: ModelSettings, prompt: str, *, sample_offset: int = 0, n: int = 1, json_answer: bool = False
) -> ModelRequest:
    seed = None if settings.seed is None else settings.seed + sample_offset
    return request_from_settings(
        settings,
        messages=[ChatMessage(role="user", content=prompt)],
        n=n,
        sample_offset=sample_offset,
        seed=seed,
        json_mode=settings.json_mode and json_answer,
    )


def account(result: StageResult, client: ModelClient, responses: list[ModelResponse]) -> StageResult:
    result.model_id = client.model_id
    result.backend_id = responses[-1].backend_id if responses else client.backend_id
    result.tokens_in += sum(r.tokens_in for r in responses)
    result.tokens_out += sum(r.tokens_out for r in responses)
    result.model_calls += sum(1 for r in responses if r.cache_hits < len(r.texts))
    return result


async def ask_stage_json(
    client: ModelClient, request: ModelRequest, schema: type[Answer], result: StageResult
) -> JsonAnswer[Answer] | None:
    """Ask for a JSON answer on behalf of a stage; a failed model call marks ``result`` and returns None."""
    try:
        answer = await ask_json(client, request, schema)
    except ModelCallError as error:
        result.status, result.reason = AttemptStatus.error, ReasonCode.model_call_failed
        result.output = {**result.output, "error": str(error)}
        return None
    account(result, client, answer.responses)
    return answer


class Stopwatch:
    def __init__(self) -> None:
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return round(time.perf_counter() - self.started, 4)
