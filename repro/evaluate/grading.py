"""Grade a model's boxed answer against a reference answer with math-verify, never an LLM judge.

This module imports only the standard library and ``math_verify`` on purpose: ``repro release``
copies it beside the data so that the exported inspect_ai and lm-evaluation-harness tasks grade
exactly as ``repro evaluate`` does, without this toolkit installed.

Model output is adversarial: only the last ``\\boxed{...}`` counts, parsing runs under a timeout
where the platform allows one, and anything math-verify cannot parse falls back to a normalized
string comparison whose use is recorded in ``Grade.method``.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import lru_cache

from math_verify import parse, verify

METHOD_MATH_VERIFY = "math_verify"
"""Both answers parsed to mathematical objects and were compared symbolically."""
METHOD_MATH_VERIFY_STRING = "math_verify_string"
"""math-verify extracted both answers but at least one only as text; it compared them as strings."""
METHOD_STRING_FALLBACK = "string_fallback"
"""math-verify extracted nothing from one side (or failed): normalized strings were compared."""
METHOD_NO_ANSWER = "no_boxed_answer"
"""The response has no ``\\boxed{...}``: graded incorrect."""

_BOX_COMMANDS = ("\\boxed", "\\fbox")
_MAX_ANSWER_CHARS = 2000


@dataclass(frozen=True)
class Grade:
    correct: bool
    method: str
    extracted: str | None


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox``), braces balanced; ``\\boxed 5`` too."""
    start = max(text.rfind(command) for command in _BOX_COMMANDS)
    if start < 0:
        return None
    position = start + (len("\\boxed") if text.startswith("\\boxed", start) else len("\\fbox"))
    while position < len(text) and text[position] == " ":
        position += 1
    if position >= len(text):
        return None
    if text[position] != "{":
        match = re.match(r"[^\s$]+", text[position:])
        return match.group(0).rstrip(".,;") if match else None
    depth = 0
    for index in range(position, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return text[position + 1 : index].strip()
    return None


def normalize_answer(answer: str) -> str:
    """A plain-text form for the fallback comparison: no math delimiters, spacing, text wrappers,
    ``\\left``/``\\right``, thousands separators, trailing period; lower case."""
    text = answer.strip().strip("$")
    text = re.sub(r"\\(?:text|textbf|textrm|mathrm|mbox|operatorname)\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"\\(?:left|right)\b", "", text)
    text = re.sub(r"\\[dt]frac", r"\\frac", text)
    text = re.sub(r"\\[,;:! ]", "", text)
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    text = re.sub(r"\s+", "", text)
    return text.rstrip(".").lower()


def _timeout() -> int | None:
    # math-verify's timeouts use SIGALRM, which only the main thread may set
    return 5 if threading.current_thread() is threading.main_thread() else None


@lru_cache(maxsize=8192)
def _parse_answer(answer: str) -> tuple[object, ...]:
    """Parsing is most of a grade's cost, and references and common answers repeat across models and
    samples; sympy objects are immutable, so a parsed answer can be shared."""
    return tuple(parse("\\boxed{" + answer + "}", parsing_timeout=_timeout()))


def compare_answers(extracted: str, reference: str) -> Grade:
    """Compare an extracted answer with a reference answer (both as written, LaTeX allowed)."""
    if len(extracted) > _MAX_ANSWER_CHARS:
        return Grade(correct=False, method=METHOD_STRING_FALLBACK, extracted=extracted[:_MAX_ANSWER_CHARS])
    try:
        gold = _parse_answer(reference)
        predicted = _parse_answer(extracted)
        if gold and predicted:
            symbolic = any(not isinstance(item, str) for item in gold) and any(
                not isinstance(item, str) for item in predicted
            )
            correct = bool(verify(list(gold), list(predicted), timeout_seconds=_timeout()))
            return Grade(correct, METHOD_MATH_VERIFY if symbolic else METHOD_MATH_VERIFY_STRING, extracted)
    except Exception:  # noqa: BLE001 - a parser crash on adversarial text must not stop grading
        pass
    correct = bool(normalize_answer(extracted)) and normalize_answer(extracted) == normalize_answer(reference)
    return Grade(correct, METHOD_STRING_FALLBACK, extracted)


def grade_response(response: str, reference: str) -> Grade:
    """Grade a full model response: its last boxed answer against ``reference``."""
    extracted = last_boxed(response)
    if extracted is None or not extracted.strip():
        return Grade(correct=False, method=METHOD_NO_ANSWER, extracted=None)
    return compare_answers(extracted, reference)
