"""JSON answers from models: find one object in a reply, validate it, and retry the format once."""

from __future__ import annotations

import json
import re
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from repro.llm.client import ModelClient
from repro.llm.protocol import ChatMessage, ModelRequest, ModelResponse
from repro.prompts import render_prompt

Answer = TypeVar("Answer", bound=BaseModel)
_FENCED = re.compile(r"```(?:json)?\s*\n(.*?)```", re.DOTALL)


def _balanced_objects(text: str) -> list[str]:
    """Top-level ``{...}`` spans, respecting strings, in order of appearance."""
    spans, depth, start, in_string, escaped = [], 0, -1, False, False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and depth > 0:
            in_string = True
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : index + 1])
    return spans


def extract_json_object(text: str) -> dict[str, object] | None:
    """One JSON object from a reply: bare, fenced, or surrounded by prose (the last valid one wins)."""
    if "</think>" in text:
        text = text.rsplit("</think>", 1)[1]
    candidates = [text.strip()] + [m.group(1).strip() for m in _FENCED.finditer(text)][::-1]
    candidates += _balanced_objects(text)[::-1]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(value, dict):
            return value
    return None


def parse_json_answer(text: str, schema: type[Answer]) -> tuple[Answer | None, str | None]:
    value = extract_json_object(text)
    if value is None:
        return None, "no JSON object found"
    try:
        return schema.model_validate(value), None
    except ValidationError as error:
        return None, "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())


class JsonAnswer(BaseModel, Generic[Answer]):
    value: Answer | None
    texts: list[str]
    problems: list[str]
    responses: list[ModelResponse]


async def ask_json(client: ModelClient, request: ModelRequest, schema: type[Answer]) -> JsonAnswer[Answer]:
    """Ask once; if the reply does not validate, ask the model to rewrite only the malformed output."""
    first = await client.generate(request)
    value, problem = parse_json_answer(first.texts[0], schema)
    if value is not None:
        return JsonAnswer[schema](value=value, texts=first.texts[:1], problems=[], responses=[first])  # type: ignore[valid-type]
    retry_prompt = render_prompt(
        "format_retry",
        schema=json.dumps(schema.model_json_schema(), indent=1),
        problem=problem or "invalid",
        output=first.texts[0][-6000:],
    )
    retry = request.model_copy(
        update={
            "messages": [ChatMessage(role="user", content=retry_prompt)],
            "prompt": None,
            "n": 1,
            "sample_offset": request.sample_offset,
        }
    )
    second = await client.generate(retry)
    value, second_problem = parse_json_answer(second.texts[0], schema)
    return JsonAnswer[schema](  # type: ignore[valid-type]
        value=value,
        texts=[first.texts[0], second.texts[0]],
        problems=[problem or "", second_problem or ""] if value is None else [problem or ""],
        responses=[first, second],
    )
