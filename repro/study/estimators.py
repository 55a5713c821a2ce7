"""pass@j estimators and the bootstrap interval over statements.

With n samples of which c passed, the unbiased estimate of "at least one of j fresh samples passes" is
1 - C(n-c, j) / C(n, j) (Chen et al. 2021); it needs all n samples drawn without looking at them.
A sequential strategy stops at the first success, which biases that estimator; there the honest
figure is the "first success index": the statement counts at j when its first success came within j.
"""

from __future__ import annotations

from collections.abc import Sequence

from repro.bootstrap import bootstrap_mean
from repro.pass_at import (
    FIRST_SUCCESS,
    UNBIASED,
    estimator_name,
    failure_probability,
    first_success_pass_at,
    pass_at,
    statement_pass_at,
)

__all__ = [
    "FIRST_SUCCESS",
    "UNBIASED",
    "bootstrap_interval",
    "estimator_name",
    "failure_probability",
    "first_success_pass_at",
    "pass_at",
    "statement_pass_at",
]


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 2000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap of the mean over statements (statements are the unit that varies)."""
    return bootstrap_mean(values, confidence=confidence, resamples=resamples, seed=seed)


def best_budget_split(first: Sequence[tuple[int, int]], second: Sequence[tuple[int, int]], budget: int) -> list[float]:
    """Expected coverage when j of ``budget`` samples go to the first prover and the rest to the second.

    ``first`` and ``second`` hold (n, c) per statement, aligned. Samples of two provers are independent,
    so a statement fails only when both shares fail: 1 - f1(j) * f2(budget - j). Index j of the result.
    """
    curve = []
    for j in range(budget + 1):
        total = 0.0
        for (n1, c1), (n2, c2) in zip(first, second, strict=True):
            total += 1.0 - failure_probability(n1, c1, min(j, n1)) * failure_probability(n2, c2, min(budget - j, n2))
        curve.append(total / len(first) if first else 0.0)
    return curve
