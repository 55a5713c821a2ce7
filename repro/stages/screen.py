"""Stage 2: feasibility screen. The solver's answer is kept for cross-checks only."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, field_validator

from repro.config import ModelSettings
from repro.llm.client import ModelClient
from repro.prompts import render_prompt
from repro.records import AttemptStatus, ReasonCode
from repro.stages.common import StageResult, Stopwatch, ask_stage_json, chat_request, input_hash


class ScreenAnswer(BaseModel):
    problem_kind: Literal["pure", "applied"]
    analysis: str = ""
    verdict: Literal["yes", "no"]
    answer: str = ""

    @field_validator("verdict", "problem_kind", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("answer", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return "" if value is None else str(value)


async def screen_problem(question: str, client: ModelClient, settings: ModelSettings, *, attempt: int) -> StageResult:
    clock = Stopwatch()
    prompt = render_prompt("screen", question=question)
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("screen", prompt, attempt))
    request = chat_request(settings, prompt, sample_offset=attempt, json_answer=True)
    answer = await ask_stage_json(client, request, ScreenAnswer, result)
    if answer is None:
        result.elapsed_s = clock.elapsed()
        return result
    result.output = {"replies": answer.texts}
    if answer.value is None:
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.screen_unparseable
    else:
        result.output.update(answer.value.model_dump())
        if answer.value.verdict != "yes":
            result.status, result.reason = AttemptStatus.rejected, ReasonCode.infeasible
    result.elapsed_s = clock.elapsed()
    return result
