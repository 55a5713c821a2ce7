"""Fixed/broken accounting for a repair run, with the statistics a reviewer asks for."""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, Field
from scipy.stats import binomtest


class CandidateOutcome(BaseModel):
    style: str
    text: str
    answer: str | None
    correct: bool
    failures: list[str] = Field(default_factory=list)
    path: str | None = None
    error: str | None = None


class ExampleResult(BaseModel):
    id: str
    problem: str
    gold_answer: str
    original_answer: str | None
    initial_correct: bool
    triggered: bool
    trigger_reasons: list[str]
    meta_error: str
    meta_score: float
    semantic_score: float
    semantic_risks: list[str]
    candidates: list[CandidateOutcome] = Field(default_factory=list)
    decision: str = "kept"
    acceptance_path: str | None = None
    final_answer: str | None
    final_correct: bool
    model_calls: int = 0
    failed_calls: int = 0


def build_report(results: list[ExampleResult], *, settings: dict[str, Any]) -> dict[str, Any]:
    total = len(results)
    initial_correct = sum(r.initial_correct for r in results)
    final_correct = sum(r.final_correct for r in results)
    fixed = sum(1 for r in results if not r.initial_correct and r.final_correct)
    broken = sum(1 for r in results if r.initial_correct and not r.final_correct)
    accepted = [r for r in results if r.decision == "replaced"]
    accepted_correct = sum(1 for r in accepted if r.final_correct)
    initially_wrong = [r for r in results if not r.initial_correct]
    changed = fixed + broken
    sign_test_p = float(binomtest(fixed, changed, 0.5).pvalue) if changed else 1.0
    guard_rejections: Counter[str] = Counter()
    for result in initially_wrong:
        for candidate in result.candidates:
            if candidate.correct and candidate.failures:
                guard_rejections[candidate.failures[0].split(":")[0]] += 1
    flow = {
        "initially_wrong": len(initially_wrong),
        "triggered": sum(r.triggered for r in initially_wrong),
        "got_correct_candidate": sum(any(c.correct for c in r.candidates) for r in initially_wrong),
        "accepted": sum(r.decision == "replaced" for r in initially_wrong),
        "accepted_correct": sum(r.decision == "replaced" and r.final_correct for r in initially_wrong),
        "correct_candidate_rejected_by_guard": dict(guard_rejections),
    }
    calls = sum(r.model_calls for r in results)
    undecided = [r.id for r in results if r.decision == "undecided"]
    return {
        "total": total,
        "initial_correct": initial_correct,
        "final_correct": final_correct,
        "fixed": fixed,
        "broken": broken,
        "initial_accuracy": initial_correct / total if total else 0.0,
        "final_accuracy": final_correct / total if total else 0.0,
        "accepted_repairs": len(accepted),
        "accepted_precision": accepted_correct / len(accepted) if accepted else None,
        "error_repair_rate": fixed / len(initially_wrong) if initially_wrong else None,
        "harm_rate": broken / total if total else 0.0,
        "harm_upper_95_rule_of_three": (3 / total if total else None) if broken == 0 else None,
        "sign_test_p_value": sign_test_p,
        "changed_examples": changed,
        "trigger_rate": sum(r.triggered for r in results) / total if total else 0.0,
        "model_calls": calls,
        "calls_per_example": calls / total if total else 0.0,
        "failed_calls": sum(r.failed_calls for r in results),
        "undecided": len(undecided),
        "undecided_ids": undecided,
        "triggered": sum(r.triggered for r in results),
        "accepted_by_transition": dict(
            Counter(
                ("W" if not r.initial_correct else "C") + "->" + ("C" if r.final_correct else "W") for r in accepted
            )
        ),
        "accepted_by_path": dict(Counter(r.acceptance_path for r in accepted)),
        "candidate_flow_initially_wrong": flow,
        "settings": settings,
    }
