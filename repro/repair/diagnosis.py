"""The full deterministic diagnosis of one trace and the trigger that decides whether to repair it."""

from __future__ import annotations

from pydantic import BaseModel, Field

from repro.repair.meta import MetaDiagnosis, MetaError, diagnose_meta
from repro.repair.semantic_graph import Risk, SemanticReport, analyze_semantics


class TriggerSettings(BaseModel):
    missing_constraint_score: float = 0.90
    low_meta_score: float = 0.65


class Diagnosis(BaseModel):
    meta: MetaDiagnosis
    semantics: SemanticReport
    trigger_reasons: list[str] = Field(default_factory=list)

    @property
    def triggered(self) -> bool:
        return bool(self.trigger_reasons)

    def hint(self) -> str:
        """A short, deterministic description of what looks wrong, for the guided repair prompt."""
        parts = []
        wrong = [s for s in self.meta.arithmetic if not s.correct]
        if wrong:
            parts.append("; ".join(f"'{s.text}' should give {s.computed}" for s in wrong[:3]))
        if self.meta.coverage.missing:
            parts.append(f"quantities never used: {', '.join(self.meta.coverage.missing[:5])}")
        parts += self.meta.contradictions[:2]
        parts += self.semantics.details[:3]
        return " | ".join(parts) or "no specific issue found"


def diagnose(
    problem: str, trace: str, *, generation_failed: bool = False, settings: TriggerSettings | None = None
) -> Diagnosis:
    settings = settings or TriggerSettings()
    meta = diagnose_meta(problem, trace, generation_failed=generation_failed)
    semantics = analyze_semantics(problem, trace)
    reasons = []
    if not (trace or "").strip():
        reasons.append("empty_trace")
    if meta.error_type in (MetaError.generation_failure, MetaError.arithmetic_error, MetaError.logical_contradiction):
        reasons.append(f"meta_{meta.error_type.value}")
    if Risk.generation_failure in semantics.risks:
        reasons.append("graph_generation_failure")
    for risk in semantics.high_risk:
        reasons.append(f"high_risk_{risk.value}")
    if meta.error_type == MetaError.missing_constraint and meta.score < settings.missing_constraint_score:
        reasons.append("missing_constraint_low_score")
    if meta.score < settings.low_meta_score:
        reasons.append("low_meta_score")
    return Diagnosis(meta=meta, semantics=semantics, trigger_reasons=list(dict.fromkeys(reasons)))
