"""Final-answer extraction and normalization for reasoning traces.

Explicit markers win (``Final Answer:``, ``final answer is``, ``answer:``). A ``\\boxed{}`` value on the
marked line is the answer. When the marked line is a sentence that restates the question ("Marian will
need 23 trays to prepare 276 cookies"), the answer is the first value not copied from the problem (the
question's givens are restated after it), or the first value when all are givens; a marked line that is
a bare value or a computation keeps its last value. Without a marker: the last ``\\boxed{}``, else the
last answer-like value of the trace (a trace without either marker is unfinished, see ``is_finished``).
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


_SENTENCE_WORDS = re.compile(r"[A-Za-z]{2,}")
_COMPUTATION = re.compile(r"\d\s*(?:[-+*/×÷·x]|\\times|\\div|\\cdot)\s*\(?\s*\$?\d[^=\n]*=")
_VARIABLE = re.compile(r"\\text\{[^{}]*\}|\\[a-zA-Z]+")


def is_finished(trace: str) -> bool:
    """A finished trace commits to an answer with a marker or ``\\boxed{}``; one without either was cut
    off (or rambled past its budget) and its last number is not a committed answer."""
    return bool(trace) and (_MARKER.search(trace) is not None or "\\boxed{" in trace)


def _given_values(problem: str) -> set[str]:
    return {normalized for value in answer_values(problem) if (normalized := normalize_answer(value)) is not None}


_TARGET = re.compile(r"\bhow\s+(?:many|much)\s+([a-z]+(?:[-\s][a-z]+)?)", re.IGNORECASE)
_NOT_NOUNS = {
    "more",
    "less",
    "fewer",
    "longer",
    "money",
    "time",
    "of",
    "did",
    "does",
    "do",
    "will",
    "would",
    "is",
    "are",
}


def _target_noun(problem: str) -> str | None:
    """The counted noun of the question ("how many trays will she need" -> "tray")."""
    match = _TARGET.search(problem.split("?")[0].split(".")[-1] if "?" in problem else problem)
    if not match:
        return None
    noun = match.group(1).split()[0].split("-")[0].lower()
    return None if noun in _NOT_NOUNS or len(noun) < 3 else noun.rstrip("s")[:6]


def _sentence_answer(line: str, values: list[str], problem: str | None) -> str:
    """In a restating sentence, the value bound to the question's target noun; else the first value
    that is not one of the question's givens; else the first value."""
    if problem and (noun := _target_noun(problem)):
        bound = [
            match
            for match in _VALUE.finditer(_clean(line))
            if re.match(rf"\s*(?:[a-z]+\s+){{0,2}}{re.escape(noun)}", _clean(line)[match.end() :], re.IGNORECASE)
        ]
        if len(bound) == 1:
            return answer_values(bound[0].group(0))[0]
    given = _given_values(problem) if problem else set()
    fresh = [value for value in values if normalize_answer(value) not in given]
    return fresh[0] if fresh else values[0]


def _marked_line_answer(marker: str, line: str, problem: str | None) -> str | None:
    boxed = _BOXED.findall(line)
    if boxed and (values := answer_values(boxed[-1])):
        return values[-1]
    values = answer_values(line)
    words = _SENTENCE_WORDS.findall(_VARIABLE.sub(" ", _BOXED.sub(" ", line)))
    sentence = len(values) > 1 and len(words) >= 3 and not _COMPUTATION.search(line)
    if not sentence or not marker.lower().startswith("final"):
        return None  # a bare value, a computation, or a mid-prose "answer:": the marked span decides
    return _sentence_answer(line, values, problem)


def extract_answer(trace: str, problem: str | None = None) -> str | None:
    """The final answer of a trace, or None if it holds no answer-like value. ``problem`` lets a
    restating answer sentence skip the question's own numbers."""
    if not trace or not trace.strip():
        return None
    markers = list(_MARKER.finditer(trace))
    if markers:
        span = trace[markers[-1].end() :]
        lines = [line for line in span.splitlines() if line.strip()]
        if lines and (answer := _marked_line_answer(markers[-1].group(0), lines[0], problem)) is not None:
            return answer
        values = answer_values(span)
        if values:
            return values[-1]
    boxed = _BOXED.findall(trace)
    if boxed and (values := answer_values(boxed[-1])):
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
