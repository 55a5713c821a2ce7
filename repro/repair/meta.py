"""Meta-consistency of a trace: one score and one dominant error type, from deterministic checks."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from repro.repair.answers import answer_values, answers_equivalent, extract_answer
from repro.repair.arithmetic import ArithmeticStatement, check_arithmetic
from repro.repair.quantities import Coverage, constraint_coverage


class MetaError(StrEnum):
    generation_failure = "generation_failure"
    arithmetic_error = "arithmetic_error"
    logical_contradiction = "logical_contradiction"
    missing_constraint = "missing_constraint"
    low_symbolic_coverage = "low_symbolic_coverage"
    none = "none"


class MetaDiagnosis(BaseModel):
    answer: str | None
    score: float
    error_type: MetaError
    arithmetic: list[ArithmeticStatement]
    coverage: Coverage
    contradictions: list[str]


_MARKED = re.compile(r"final\s+answer\s*(?:is|:)\s*([^\n]*)", re.IGNORECASE)
_HOW_MANY = re.compile(r"\bhow\s+many\b", re.IGNORECASE)


def _contradictions(problem: str, trace: str, answer: str | None) -> list[str]:
    found = []
    marked = [values[-1] for values in (answer_values(m.group(1)) for m in _MARKED.finditer(trace)) if values]
    if len({v for v in marked if not any(answers_equivalent(v, w) for w in marked if w != v)}) > 1 or any(
        not answers_equivalent(a, b) for a, b in zip(marked, marked[1:], strict=False)
    ):
        found.append(f"several different final answers: {marked}")
    if answer is not None and answer.startswith("-") and _HOW_MANY.search(problem):
        found.append(f"negative answer {answer} to a 'how many' question")
    return found


def diagnose_meta(problem: str, trace: str, *, generation_failed: bool = False) -> MetaDiagnosis:
    answer = extract_answer(trace) if trace else None
    arithmetic = check_arithmetic(trace or "")
    coverage = constraint_coverage(problem, trace or "")
    if generation_failed or not (trace or "").strip() or answer is None:
        return MetaDiagnosis(
            answer=answer,
            score=0.0,
            error_type=MetaError.generation_failure,
            arithmetic=arithmetic,
            coverage=coverage,
            contradictions=[],
        )
    contradictions = _contradictions(problem, trace, answer)
    wrong = [s for s in arithmetic if not s.correct]
    score = 1.0
    score -= 0.45 if wrong else 0.0
    score -= 0.4 if contradictions else 0.0
    score -= min(0.3, 0.12 * len(coverage.missing))
    low_symbolic = not arithmetic and len(coverage.used) + len(coverage.missing) >= 2
    score -= 0.15 if low_symbolic else 0.0
    score = max(0.0, min(1.0, score))
    if wrong:
        error = MetaError.arithmetic_error
    elif contradictions:
        error = MetaError.logical_contradiction
    elif coverage.missing:
        error = MetaError.missing_constraint
    elif low_symbolic:
        error = MetaError.low_symbolic_coverage
    else:
        error = MetaError.none
    return MetaDiagnosis(
        answer=answer,
        score=round(score, 4),
        error_type=error,
        arithmetic=arithmetic,
        coverage=coverage,
        contradictions=contradictions,
    )
