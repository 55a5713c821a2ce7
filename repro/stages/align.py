"""Stage 4: semantic alignment. Three distinct asks at temperature 0; all must say Consistent.

The judge sees our statement without its comments (:func:`repro.stages.common.statement_prompt`): a
formalizer's ``-- this matches the problem`` is no evidence that it does.
"""

from __future__ import annotations

from pydantic import BaseModel, field_validator

from repro.config import ModelSettings
from repro.llm.client import ModelClient
from repro.llm.json_answers import ask_json
from repro.llm.protocol import ModelCallError
from repro.records import AttemptStatus, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash, statement_prompt


class AlignAnswer(BaseModel):
    analysis: str = ""
    verdict: str

    @field_validator("verdict", mode="before")
    @classmethod
    def _strip(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value


async def check_alignment(
    question: str, statement: str, client: ModelClient, settings: ModelSettings, *, asks: int, attempt: int
) -> StageResult:
    clock = Stopwatch()
    prompt = statement_prompt("align", question=question, statement=statement)
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("align", prompt, attempt))
    verdicts: list[str] = []
    analyses: list[str] = []
    replies: list[str] = []
    zero_temperature = settings.model_copy(update={"temperature": 0.0})
    try:
        for ask in range(asks):
            request = chat_request(zero_temperature, prompt, sample_offset=attempt * asks + ask, json_answer=True)
            answer = await ask_json(client, request, AlignAnswer)
            account(result, client, answer.responses)
            verdicts.append(answer.value.verdict if answer.value else "unparseable")
            analyses.append(answer.value.analysis if answer.value else "")
            replies.extend(answer.texts)
    except ModelCallError as error:
        result.status, result.reason = AttemptStatus.error, ReasonCode.model_call_failed
        result.output = {"error": str(error), "verdicts": verdicts}
        return result
    # the judge's analyses are the evidence `repro audit` shows for a semantic mismatch
    result.output = {"verdicts": verdicts, "analyses": analyses, "replies": replies}
    if any(verdict.lower() != "consistent" for verdict in verdicts):
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.semantic_mismatch
    result.elapsed_s = clock.elapsed()
    return result
