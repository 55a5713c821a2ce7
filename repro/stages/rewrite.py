"""Stage 1: rewrite a source problem into a new one (the rewriter must not solve it)."""

from __future__ import annotations

from pydantic import BaseModel

from repro.config import ModelSettings
from repro.llm.client import ModelClient
from repro.prompts import render_prompt
from repro.records import AttemptStatus, ReasonCode, SourceProblem
from repro.stages.common import StageResult, Stopwatch, ask_stage_json, chat_request, input_hash


class RewriteAnswer(BaseModel):
    rewritten_question: str


def _previous_block(previous: str | None) -> str:
    if not previous:
        return ""
    return (
        "\nA previous rewrite of this problem exists. Your new problem must differ from it substantially"
        f' (different story, numbers and wording):\n"""\n{previous}\n"""\n'
    )


async def rewrite_problem(
    problem: SourceProblem, previous: str | None, client: ModelClient, settings: ModelSettings, *, attempt: int
) -> StageResult:
    clock = Stopwatch()
    prompt = render_prompt("rewrite", question=problem.question, previous_block=_previous_block(previous))
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("rewrite", prompt, attempt))
    request = chat_request(settings, prompt, sample_offset=attempt, json_answer=True)
    answer = await ask_stage_json(client, request, RewriteAnswer, result)
    if answer is None:
        result.elapsed_s = clock.elapsed()
        return result
    result.output = {"replies": answer.texts, "problems": answer.problems}
    if answer.value is None:
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.rewrite_invalid_json
    else:
        text = answer.value.rewritten_question.strip()
        result.output["rewritten_question"] = text
        if (
            not text
            or " ".join(text.split()) == " ".join(problem.question.split())
            or (previous and " ".join(text.split()) == " ".join(previous.split()))
        ):
            result.status, result.reason = AttemptStatus.rejected, ReasonCode.rewrite_empty
    result.elapsed_s = clock.elapsed()
    return result
