"""The scripted "models" of ``configs/demo.yaml``: an offline demonstration, never a real result.

They answer each stage's prompt deterministically, using the answers of the shipped GSM8K sample,
and fail on purpose now and then so the audit has something to show. Everything they produce is
marked scripted, and the demo's Lean backend is the fake REPL, so nothing is ever verified.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import cache

from repro.config import DatasetSettings
from repro.data import load_source
from repro.llm.protocol import ModelRequest
from repro.prompts import bundled_path

_RESTATED = "In a new setting, the following happens. "


@cache
def _answers() -> dict[str, str]:
    problems, _ = load_source(DatasetSettings(path=str(bundled_path("data/gsm8k_sample.jsonl")), name="gsm8k"))
    return {" ".join(p.question.split()): p.answer for p in problems}


def _lookup(question: str) -> str | None:
    key = " ".join(question.replace(_RESTATED, "").split())
    answer = _answers().get(key)
    return answer if answer and re.fullmatch(r"\d+", answer) else None


def _bucket(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16) % 10


def _between(text: str, start: str, end: str) -> str:
    after = text.split(start, 1)[1] if start in text else text
    return after.split(end, 1)[0].strip()


def responder(request: ModelRequest, sample_index: int) -> str:
    prompt = request.prompt_text()
    if "You rewrite math problems" in prompt:
        question = _between(prompt, "Original problem:\n", "\n\nReply")
        return json.dumps({"rewritten_question": _RESTATED + question})
    if "strict reviewer of math problems" in prompt:
        question = _between(prompt, "Problem:\n", "\n\nReply")
        answer = _lookup(question)
        verdict = "yes" if answer is not None and _bucket(question) != 0 else "no"
        return json.dumps({"problem_kind": "applied", "analysis": "demo", "verdict": verdict, "answer": answer or ""})
    if "autoformalize" in prompt:
        name = _between(prompt, "theorem name: ", "\n")
        question = _between(prompt, "The natural language statement is:\n", "\n\nWrite a single")
        answer = _lookup(question) or "0"
        return (
            f"<think>demo</think>\n```lean4\ntheorem {name} (answer : ℕ) (h₀ : answer = {answer}) :"
            f" answer = {answer} := by sorry\n```"
        )
    if "faithfully encodes a math problem" in prompt:
        question = _between(prompt, "Problem:\n", "\n\nLean 4 statement")
        consistent = not (_bucket(question) == 1 and sample_index < 3)
        return json.dumps({"analysis": "demo", "verdict": "Consistent" if consistent else "Inconsistent"})
    if "Complete the following Lean 4 code" in prompt:
        statement = _between(prompt, "```lean4\n", "```")
        theorem = statement[statement.index("theorem") :].replace(":= by sorry", "").strip()
        body = "  sorry" if sample_index == 0 and _bucket(statement) < 5 else "  subst h₀\n  rfl"
        return f"Plan: substitute the hypothesis.\n```lean4\n{theorem} := by\n{body}\n```"
    if "Classify the candidate" in prompt:
        return json.dumps({"class": "final", "reason": "demo"})
    if "Read off the answer" in prompt:
        return json.dumps({"answer": "0"})
    if "Rewrite ONLY that output" in prompt:
        return "{}"
    raise LookupError("the demo responder has no answer for this prompt")
