"""The full deterministic diagnosis of one trace and the trigger that decides whether to repair it."""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Literal

from pydantic import BaseModel, Field

from repro.repair.answers import answer_values
from repro.repair.meta import ConsistencyWeights, MetaDiagnosis, MetaError, diagnose_meta
from repro.repair.quantities import problem_quantities
from repro.repair.semantic_graph import Risk, SemanticReport, analyze_semantics, computed_numbers


class TriggerSettings(BaseModel):
    """B.8's trigger. ``meta_score`` picks the score its two thresholds compare: ``consistency`` (the
    paper's mix of step validity, equation share and quantity coverage; fires on most weak-model traces)
    or ``content`` (penalties for detected errors only; fires on far fewer)."""

    missing_constraint_score: float = 0.90
    low_meta_score: float = 0.65
    meta_score: Literal["consistency", "content"] = "consistency"
    weights: ConsistencyWeights = Field(default_factory=ConsistencyWeights)
    semantic_high_risk: bool = True


class Diagnosis(BaseModel):
    meta: MetaDiagnosis
    semantics: SemanticReport
    trigger_reasons: list[str] = Field(default_factory=list)
    computed_quantities: list[str] = Field(default_factory=list)
    final_line_values: list[str] = Field(default_factory=list)

    @property
    def triggered(self) -> bool:
        return bool(self.trigger_reasons)

    def hint(self) -> str:
        """A short, deterministic description of what looks wrong, for the guided repair prompt."""
        parts = []
        if self.meta.unfinished:
            parts.append("the solution stopped before committing to a final answer")
        wrong = [s for s in self.meta.arithmetic if not s.correct]
        if wrong:
            parts.append("; ".join(f"'{s.text}' should give {s.computed}" for s in wrong[:3]))
        if self.meta.coverage.missing:
            parts.append(f"quantities never used: {', '.join(self.meta.coverage.missing[:5])}")
        parts += self.meta.contradictions[:2]
        parts += self.semantics.details[:3]
        return " | ".join(parts) or "no specific issue found"


_FINAL_MARKER = re.compile(r"final\s+answer\s*(?:is|:)?", re.IGNORECASE)


def final_line_values(trace: str) -> list[str]:
    """Every value on the line of the last final-answer marker (a multi-part answer states several)."""
    markers = list(_FINAL_MARKER.finditer(trace))
    if not markers:
        return []
    lines = [line for line in trace[markers[-1].end() :].splitlines() if line.strip()]
    return answer_values(lines[0]) if lines else []


def diagnose(
    problem: str, trace: str, *, generation_failed: bool = False, settings: TriggerSettings | None = None
) -> Diagnosis:
    settings = settings or TriggerSettings()
    meta = diagnose_meta(problem, trace, generation_failed=generation_failed, weights=settings.weights)
    semantics = analyze_semantics(problem, trace)
    score = meta.consistency if settings.meta_score == "consistency" else meta.score
    reasons = []
    if not (trace or "").strip():
        reasons.append("empty_trace")
    if meta.error_type in (MetaError.generation_failure, MetaError.arithmetic_error, MetaError.logical_contradiction):
        reasons.append(f"meta_{meta.error_type.value}")
    if Risk.generation_failure in semantics.risks:
        reasons.append("graph_generation_failure")
    if settings.semantic_high_risk:
        for risk in semantics.high_risk:
            reasons.append(f"high_risk_{risk.value}")
    if meta.error_type == MetaError.missing_constraint and score < settings.missing_constraint_score:
        reasons.append("missing_constraint_low_score")
    if score < settings.low_meta_score:
        reasons.append("low_meta_score")
    computed = computed_numbers(trace or "")
    given = [q.value for q in problem_quantities(problem) if not q.from_word]
    return Diagnosis(
        meta=meta,
        semantics=semantics,
        trigger_reasons=list(dict.fromkeys(reasons)),
        final_line_values=final_line_values(trace or ""),
        computed_quantities=sorted({value for value in given if Fraction(value) in computed}, key=Fraction),
    )
