"""Run metrics from the store alone: funnel, generation rates, pass@j, cost per retained instance."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from repro.records import STAGE_ORDER, AttemptStatus, CandidateStatus, Stage
from repro.store import RunStore


def funnel(store: RunStore) -> dict[str, Any]:
    """How many candidates reached each stage, passed it, and were rejected there (by reason)."""
    attempts = store.attempts()
    reached: dict[str, set[str]] = defaultdict(set)
    passed: dict[str, set[str]] = defaultdict(set)
    for attempt in attempts:
        reached[attempt.stage.value].add(attempt.candidate_id)
        if attempt.status == AttemptStatus.passed:
            passed[attempt.stage.value].add(attempt.candidate_id)
    rejected: dict[str, Counter[str]] = defaultdict(Counter)
    for candidate in store.candidates(CandidateStatus.rejected):
        rejected[candidate.reject_stage.value if candidate.reject_stage else "?"][
            candidate.reject_reason.value if candidate.reject_reason else "?"
        ] += 1
    return {
        stage.value: {
            "reached": len(reached[stage.value]),
            "passed": len(passed[stage.value]),
            "rejected": dict(rejected[stage.value]),
        }
        for stage in STAGE_ORDER
    }


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def generation_rates(store: RunStore, k: int, strategy: str = "parallel") -> dict[str, Any]:
    problems = store.problems()
    outcomes = store.problem_outcomes()
    finished = [p for p in problems if outcomes.get(p.problem_id) is not None]
    retained = {c.problem_id: c for c in store.candidates(CandidateStatus.retained)}
    by_level: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for problem in finished:
        hit = int(problem.problem_id in retained)
        for table, key in ((by_level, problem.level), (by_type, problem.type)):
            if key:
                table[key][0] += hit
                table[key][1] += 1
    # pass@j: unbiased when all k samples were drawn, else the first success index (repro.study.run_pass_at)
    from repro.study.run_pass_at import run_pass_at

    pass_at, estimator = run_pass_at(store, retained.values(), len(finished), k, strategy)
    return {
        "drawn": len(problems),
        "finished": len(finished),
        "retained": len(retained),
        "generation_rate": _rate(len(retained), len(finished)),
        "by_level": {key: _rate(*value) for key, value in sorted(by_level.items())},
        "by_type": {key: _rate(*value) for key, value in sorted(by_type.items())},
        "generation_rate_at": pass_at,
        "pass_at_estimator": estimator,
    }


def model_accounting(store: RunStore) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for call in store.model_calls():
        row = table.setdefault(
            f"{call.stage} | {call.model_id}",
            {"calls": 0, "cache_hits": 0, "failed": 0, "retries": 0, "tokens_in": 0, "tokens_out": 0, "latency_s": 0.0},
        )
        if call.cache_hit:
            row["cache_hits"] += call.samples
            continue
        row["calls"] += 1
        row["failed"] += int(call.error is not None)
        row["retries"] += call.retries
        row["tokens_in"] += call.tokens_in
        row["tokens_out"] += call.tokens_out
        row["latency_s"] = round(row["latency_s"] + call.latency_s, 3)
    return table


def cost_per_retained(store: RunStore) -> dict[str, float | None]:
    retained = len(store.candidates(CandidateStatus.retained))
    calls = [c for c in store.model_calls() if not c.cache_hit]
    lean_seconds = sum(a.lean_seconds for a in store.attempts())
    return {
        "model_calls": _rate(len(calls), retained),
        "tokens": _rate(sum(c.tokens_in + c.tokens_out for c in calls), retained),
        "lean_seconds": _rate(int(lean_seconds * 1000), retained * 1000) if retained else None,
    }


def run_metrics(store: RunStore, k: int, strategy: str = "parallel") -> dict[str, Any]:
    return {
        "funnel": funnel(store),
        "rates": generation_rates(store, k, strategy),
        "models": model_accounting(store),
        "cost_per_retained": cost_per_retained(store),
        "stage_order": [stage.value for stage in Stage],
    }
