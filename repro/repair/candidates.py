"""Repair candidates from a model: three attempt styles, JSON answers, one format retry."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field, field_validator

from repro.llm.client import ModelClient
from repro.llm.json_answers import ask_json
from repro.llm.protocol import ChatMessage, ModelCallError, ModelRequest
from repro.prompts import render_prompt


class AttemptStyle(StrEnum):
    guided = "guided"
    strict = "strict"
    fresh = "fresh"


STYLE_ORDER = (AttemptStyle.guided, AttemptStyle.strict, AttemptStyle.fresh)


class RepairAnswer(BaseModel):
    steps: list[str] = Field(max_length=4)
    final_answer: str

    @field_validator("final_answer", mode="before")
    @classmethod
    def _as_text(cls, value: object) -> str:
        return str(value).strip()


def render_candidate(answer: RepairAnswer) -> str:
    lines = [f"Step {index}: {step.strip()}" for index, step in enumerate(answer.steps, start=1)]
    return "\n".join(lines + [f"Final Answer: {answer.final_answer}"])


def candidate_prompt(
    style: AttemptStyle, problem: str, original_answer: str | None, hint: str, *, with_original: bool = True
) -> str:
    shown = original_answer if original_answer is not None else "(none: the earlier solution gave no final answer)"
    if style == AttemptStyle.guided:
        return render_prompt("repair_guided", problem=problem, original_answer=shown, hint=hint)
    if style == AttemptStyle.strict:
        return render_prompt("repair_strict", problem=problem, original_answer=shown)
    warning = (
        f"An earlier solution answered {shown}; treat it only as a warning sign, not as a hint."
        if with_original
        else ""
    )
    return render_prompt("repair_fresh", problem=problem, warning=warning)


class GeneratedCandidate(BaseModel):
    style: AttemptStyle
    text: str
    calls: int
    error: str | None = None
    call_failed: bool = False  # the endpoint failed (infrastructure), as opposed to a bad answer


async def generate_candidate(
    client: ModelClient,
    style: AttemptStyle,
    problem: str,
    original_answer: str | None,
    hint: str,
    *,
    max_tokens: int = 512,
    seed: int | None = 0,
    sample_offset: int = 0,
    with_original: bool = True,
) -> GeneratedCandidate:
    prompt = candidate_prompt(style, problem, original_answer, hint, with_original=with_original)
    request = ModelRequest(
        messages=[ChatMessage(role="user", content=prompt)],
        temperature=0.0,
        top_p=1.0,
        max_tokens=max_tokens,
        seed=seed,
        sample_offset=sample_offset,
    )
    try:
        answer = await ask_json(client, request, RepairAnswer)
    except ModelCallError as error:
        return GeneratedCandidate(style=style, text="", calls=1, error=f"model call failed: {error}", call_failed=True)
    text = render_candidate(answer.value) if answer.value else ""
    return GeneratedCandidate(
        style=style,
        text=text,
        calls=len(answer.responses),
        error=None if answer.value else "invalid JSON after one format retry",
    )
