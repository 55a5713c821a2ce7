"""Final-answer extraction and normalization for reasoning traces.

Explicit markers win (``Final Answer:``, ``final answer is``, ``answer:``): the last answer-like value
in the span after the last marker. Without a marker, the last answer-like value of the trace.
Values: integers, decimals, thousands separators, fractions, colon ratios/times, yes/no. Two
answers are equivalent when they evaluate to the same number after punctuation and units are
stripped (``1,059,955`` = ``1059955``, ``12.0`` = ``12``, ``2/3`` = ``4/6``).
"""

from __future__ import annotations

import re
from fractions import Fraction

_MARKER = re.compile(r"final\s+answer\s*(?:is|:)|final\s+answer\b|\banswer\s*(?:is\s*)?:", re.IGNORECASE)
_VALUE = re.compile(
    r"(?<![\w.])(?:"
    r"(?P<ratio>\d+\s*:\s*\d+(?:\s*:\s*\d+)?)"
    r"|(?P<fraction>[-−]?\d+\s*/\s*\d+)"
    r"|(?P<number>[-−]?(?:\$\s?)?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|[-−]?\.\d+)"
    r"|(?P<word>yes|no)"
    r")(?![\w])",
    re.IGNORECASE,
)
_LATEX_FRACTION = re.compile(r"\\d?frac\{([^{}]+)\}\{([^{}]+)\}")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")


def _clean(text: str) -> str:
    text = _LATEX_FRACTION.sub(r"\1/\2", text)
    text = _BOXED.sub(r" \1 ", text)
    text = text.replace("**", " ").replace("\\(", " ").replace("\\)", " ").replace("\\$", "$")
    return text


def answer_values(text: str) -> list[str]:
    """Answer-like values in order of appearance, normalized (commas, ``$`` and spaces removed)."""
    values = []
    for match in _VALUE.finditer(_clean(text)):
        raw = match.group(0)
        if match.group("word"):
            values.append(raw.lower())
            continue
        value = raw.replace("$", "").replace(",", "").replace(" ", "").replace("−", "-")
        if match.group("ratio") is None and value.endswith("."):
            value = value[:-1]
        values.append(value)
    return values


def extract_answer(trace: str) -> str | None:
    """The final answer of a trace, or None if it holds no answer-like value."""
    if not trace or not trace.strip():
        return None
    markers = list(_MARKER.finditer(trace))
    if markers:
        span = trace[markers[-1].end() :]
        values = answer_values(span)
        if values:
            return values[-1]
    values = [value for value in answer_values(trace) if value not in ("yes", "no")]
    return values[-1] if values else None


def to_number(answer: str | None) -> Fraction | None:
    """Exact value of a normalized answer (yes/no and ratios are not numbers)."""
    if answer is None:
        return None
    text = answer.strip().lower().replace(",", "").replace("$", "").replace("%", "").replace("−", "-")
    text = re.sub(r"[a-z\s]+$", "", text).strip().rstrip(".")
    time = re.fullmatch(r"(\d{1,2})\s*:\s*(\d{2})\s*(?:am|pm)?", text)
    if time:  # a clock time H:MM compares as hours
        return Fraction(int(time.group(1))) + Fraction(int(time.group(2)), 60)
    try:
        if "/" in text:
            numerator, denominator = text.split("/", 1)
            return Fraction(Fraction(numerator.strip()), Fraction(denominator.strip()))
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def normalize_answer(answer: str | None) -> str | None:
    if answer is None:
        return None
    number = to_number(answer)
    if number is None:
        return re.sub(r"[\s.,;!]+", "", answer.strip().lower()) or None
    return str(number.numerator) if number.denominator == 1 else f"{number.numerator}/{number.denominator}"


def answers_equivalent(left: str | None, right: str | None) -> bool:
    if left is None or right is None:
        return False
    left_number, right_number = to_number(left), to_number(right)
    if left_number is not None and right_number is not None:
        return left_number == right_number
    return normalize_answer(left) == normalize_answer(right)
