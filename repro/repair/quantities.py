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
_UNITS = {
    k: v
    for k, v in _WORDS.items()
    if isinstance(v, int) and v < 20 and k not in ("dozen", "twice", "double", "triple", "thrice")
}
_TENS = {k: v for k, v in _WORDS.items() if isinstance(v, int) and 20 <= v < 100}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_NUMBER_WORD = "|".join([*_UNITS, *_TENS, *_SCALES])
_COMPOUND = re.compile(rf"\b(?:{_NUMBER_WORD})(?:[\s-]+(?:and[\s-]+)?(?:{_NUMBER_WORD}))+\b", re.IGNORECASE)


def compound_number_value(text: str) -> int | None:
    """Value of a spelled-out number of two or more words ("eight hundred sixty-five" -> 865)."""
    total = current = 0
    seen = False
    for word in re.split(r"[\s-]+", text.lower()):
        if word == "and":
            continue
        if word in _UNITS or word in _TENS:
            current += int(_UNITS.get(word, _TENS.get(word, 0)))
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale == 100:
                current = (current or 1) * 100
            else:
                total += (current or 1) * scale
                current = 0
        else:
            return None
        seen = True
    return total + current if seen else None


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
    compounds = []
    for match in _COMPOUND.finditer(problem):
        words = match.group(0).strip()
        if words.lower().endswith(" and") or (spelled := compound_number_value(words)) is None:
            continue
        compounds.append((match.start(), match.end()))
        found.append(Quantity(text=words, value=str(spelled), start=match.start(), end=match.end(), from_word=True))
    for match in _WORD.finditer(problem):
        if any(start <= match.start() < end for start, end in compounds):
            continue
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
    for match in _COMPOUND.finditer(trace):
        if (compound := compound_number_value(match.group(0).strip())) is not None:
            values.add(Fraction(compound))
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
        percent = quantity.text.endswith("%") or re.match(r"\s*percent", problem[quantity.end :]) is not None
        forms = {value / 100, 1 + value / 100, 1 - value / 100} if percent else set()
        if (
            value in numbers
            or forms & numbers
            or (quantity.from_word and value in (Fraction(1, 2), Fraction(1, 4), 1, 2))
        ):
            used.append(quantity.text)
        else:
            missing.append(quantity.text)
    total = len(used) + len(missing)
    return Coverage(used=used, missing=missing, ratio=1.0 if total == 0 else len(used) / total)
