"""Quantities of a problem (digits and number words) and which of them a trace uses."""

from __future__ import annotations

import re
from fractions import Fraction

from pydantic import BaseModel

_WORDS: dict[str, int | Fraction] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "dozen": 12,
    "half": Fraction(1, 2),
    "twice": 2,
    "double": 2,
    "triple": 3,
    "quarter": Fraction(1, 4),
    "thrice": 3,
}
_DIGITS = re.compile(r"(?<![\w.])\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(%?)")
_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b", re.IGNORECASE)


class Quantity(BaseModel):
    text: str
    value: str
    start: int
    end: int
    from_word: bool = False


def problem_quantities(problem: str) -> list[Quantity]:
    found = []
    for match in _DIGITS.finditer(problem):
        value = Fraction(match.group(1).replace(",", "") + (match.group(2) or ""))
        found.append(Quantity(text=match.group(0), value=str(value), start=match.start(), end=match.end()))
    for match in _WORD.finditer(problem):
        value = Fraction(_WORDS[match.group(1).lower()])
        found.append(
            Quantity(text=match.group(0), value=str(value), start=match.start(), end=match.end(), from_word=True)
        )
    return sorted(found, key=lambda q: q.start)


def trace_numbers(trace: str) -> set[Fraction]:
    values: set[Fraction] = set()
    for match in _DIGITS.finditer(trace):
        value = Fraction(match.group(1).replace(",", "") + (match.group(2) or ""))
        values.add(value)
        if match.group(3):
            values.add(value / 100)
    for match in _WORD.finditer(trace):
        values.add(Fraction(_WORDS[match.group(1).lower()]))
    return values


class Coverage(BaseModel):
    used: list[str]
    missing: list[str]
    ratio: float


def constraint_coverage(problem: str, trace: str) -> Coverage:
    """Which numeric quantities of the problem appear in the trace (word forms count as used when
    their value appears, or when they are multipliers like ``half`` that a trace may fold in)."""
    numbers = trace_numbers(trace)
    used, missing = [], []
    seen: set[str] = set()
    for quantity in problem_quantities(problem):
        if quantity.value in seen:
            continue
        seen.add(quantity.value)
        value = Fraction(quantity.value)
        if value in numbers or (quantity.from_word and value in (Fraction(1, 2), Fraction(1, 4), 1, 2)):
            used.append(quantity.text)
        else:
            missing.append(quantity.text)
    total = len(used) + len(missing)
    return Coverage(used=used, missing=missing, ratio=1.0 if total == 0 else len(used) / total)
