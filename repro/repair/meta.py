"""Meta-consistency of a trace: one score and one dominant error type, from deterministic checks."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel

from repro.repair.answers import answer_values, answers_equivalent, extract_answer, is_finished
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
    """``score`` is content-based (penalties for wrong arithmetic, contradictions, unused quantities);
    ``consistency`` is the paper's meta-consistency mix of per-step validity, the share of steps that
    carry an equation and the share of problem quantities the trace uses. The trigger uses one of them
    (``TriggerSettings.meta_score``)."""

    answer: str | None
    score: float
    error_type: MetaError
    arithmetic: list[ArithmeticStatement]
    coverage: Coverage
    contradictions: list[str]
    unfinished: bool = False
    step_validity: float = 1.0
    equation_share: float = 1.0
    consistency: float = 1.0


class ConsistencyWeights(BaseModel):
    """Weights of the meta-consistency mix (normalized by their sum). A step is valid when the
    arithmetic checker verified a computation in it and found none wrong; a step with no checkable
    computation earns ``unchecked_step_credit``."""

    step_validity: float = 0.4
    equation_share: float = 0.3
    coverage: float = 0.3
    unchecked_step_credit: float = 0.0


_STEP = re.compile(r"(?im)^\s*(?:\*\*)?\s*step\s*\d+")
_FINAL = re.compile(r"final\s+answer", re.IGNORECASE)
_EQUATION = re.compile(r"\d\s*(?:[-+*/×÷·x^]|\\times|\\div|\\cdot)\s*\(?\s*\$?\d|=\s*\$?\d|\d\s*=")


def trace_steps(trace: str) -> list[str]:
    """Reasoning steps: ``Step N`` blocks when the trace numbers them, else its non-empty lines; the
    final-answer line is not a step."""
    starts = [match.start() for match in _STEP.finditer(trace)]
    if len(starts) >= 2:
        blocks = [trace[a:b] for a, b in zip(starts, [*starts[1:], len(trace)], strict=True)]
    else:
        blocks = [line for line in trace.splitlines() if line.strip()]
    steps = []
    for block in blocks:
        final = _FINAL.search(block)
        kept = block[: final.start()] if final else block
        if kept.strip():
            steps.append(kept)
    return steps


def _consistency(trace: str, coverage: Coverage, weights: ConsistencyWeights) -> tuple[float, float, float]:
    steps = trace_steps(trace)
    if not steps:
        return 0.0, 0.0, 0.0
    credit = 0.0
    for step in steps:
        statements = check_arithmetic(step)
        if not statements:
            credit += weights.unchecked_step_credit
        elif all(statement.correct for statement in statements):
            credit += 1.0
    validity = credit / len(steps)
    share = sum(bool(_EQUATION.search(step)) for step in steps) / len(steps)
    total = weights.step_validity + weights.equation_share + weights.coverage
    mixed = (
        weights.step_validity * validity + weights.equation_share * share + weights.coverage * coverage.ratio
    ) / total
    return round(validity, 4), round(share, 4), round(mixed, 4)


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


def diagnose_meta(
    problem: str,
    trace: str,
    *,
    generation_failed: bool = False,
    weights: ConsistencyWeights | None = None,
) -> MetaDiagnosis:
    """A trace with no final-answer marker and no ``\\boxed{}`` is an unfinished generation: its
    fallback answer is kept for accounting only, and it is diagnosed as a generation failure."""
    answer = extract_answer(trace, problem) if trace else None
    arithmetic = check_arithmetic(trace or "")
    coverage = constraint_coverage(problem, trace or "")
    validity, share, consistency = _consistency(trace or "", coverage, weights or ConsistencyWeights())
    unfinished = bool((trace or "").strip()) and not is_finished(trace)
    if generation_failed or not (trace or "").strip() or answer is None or unfinished:
        return MetaDiagnosis(
            answer=answer,
            score=0.0,
            error_type=MetaError.generation_failure,
            arithmetic=arithmetic,
            coverage=coverage,
            contradictions=[],
            unfinished=unfinished,
            step_validity=validity,
            equation_share=share,
            consistency=0.0,
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
        step_validity=validity,
        equation_share=share,
        consistency=consistency,
    )
