"""Supported-but-wrong repair candidates for a correct trace: the harm stress test.

Each candidate is clean, every equation in it is correct and its final answer is the result of one of
them, yet the answer differs from the original's. They are built from the trace's own correct
computations, so they read like a plausible repair: the last computation with another operation, one
extra step that folds in a given quantity, or the first computation alone (stopping early).
"""

from __future__ import annotations

import re
from fractions import Fraction

from repro.repair.answers import answers_equivalent, extract_answer, to_number
from repro.repair.arithmetic import check_arithmetic, evaluate_expression
from repro.repair.quantities import problem_quantities

_SWAP = {"+": "-", "-": "+", "*": "+", "×": "+", "/": "*", "÷": "×"}


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{float(value):.2f}".rstrip("0").rstrip(".")


def _render(steps: list[str], answer: str) -> str:
    lines = [f"Step {index}: {step}." for index, step in enumerate(steps, start=1)]
    return "\n".join([*lines, f"Final Answer: {answer}"])


def supported_wrong_candidates(problem: str, trace: str) -> list[str]:
    """Up to three answer-changing, equation-supported candidates for ``trace`` (none when the trace
    has no correct computation to build from)."""
    original = extract_answer(trace, problem)
    statements = [s for s in check_arithmetic(trace) if s.correct]
    if not statements:
        return []
    plain = [re.sub(r"[$,]", "", s.text).rstrip(".,") for s in statements]
    built: list[str] = []

    def add(steps: list[str], value: Fraction | None) -> None:
        if value is None or value < 0:
            return
        shown = _show(value)
        if not answers_equivalent(shown, original) and all(not candidate.endswith(f": {shown}") for candidate in built):
            built.append(_render(steps[-4:], shown))

    last = plain[-1]
    left = last.split("=")[0]
    operator = next((symbol for symbol in _SWAP if symbol in left), None)
    if operator:
        swapped = left.replace(operator, _SWAP[operator], 1).strip()
        value = evaluate_expression(swapped)
        if value is not None:
            add([*plain[:-1][-3:], f"{swapped} = {_show(value)}"], value)
    result = to_number(last.split("=")[-1].strip())
    givens = sorted({Fraction(q.value) for q in problem_quantities(problem) if not q.from_word})
    if result is not None and givens:
        quantity = givens[0]
        add([*plain[-3:], f"{_show(result)} + {_show(quantity)} = {_show(result + quantity)}"], result + quantity)
    first_value = to_number(plain[0].split("=")[-1].strip())
    add(plain[:1], first_value)
    return built
