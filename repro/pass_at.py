"""pass@j estimators, and the pipeline's own pass@j for ``repro status`` from aggregate queries.

With n samples of which c passed, the unbiased estimate of "at least one of j fresh samples passes" is
1 - C(n-c, j) / C(n, j) (Chen et al. 2021); it needs all n samples drawn without looking at them.
A sequential strategy stops at the first success, which biases that estimator; there the honest
figure is the "first success index": the statement counts at j when its first success came within j.
This module imports nothing heavy: ``repro status`` uses it on stores of a million problems.
"""

from __future__ import annotations

from math import comb
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from repro.store import RunReader

UNBIASED = "unbiased (all k samples drawn)"
FIRST_SUCCESS = "first success index (sequential early stop)"


def failure_probability(n: int, c: int, j: int) -> float:
    """Probability that j samples drawn without replacement from n (c of them passing) all fail."""
    if j <= 0:
        return 1.0
    if n <= 0:
        return 1.0
    if j > n:
        raise ValueError(f"pass@{j} needs at least {j} samples, got {n}")
    return comb(n - c, j) / comb(n, j)


def pass_at(n: int, c: int, j: int) -> float:
    return 1.0 - failure_probability(n, c, j)


def first_success_pass_at(first_success: int | None, j: int) -> float:
    """1 when the first verified sample (0-based) came among the first j, else 0."""
    return 1.0 if first_success is not None and first_success < j else 0.0


def run_pass_at(
    store: RunReader, finished: int, k: int, strategy: str = "parallel"
) -> tuple[dict[str, float | None], str]:
    """(pass@j for j = 1..k as a share of finished problems, the estimator's name).

    Two aggregate queries, whatever the run's size: the retained candidates' proof positions, and the
    histogram of (samples drawn, samples verified) of their proving rounds.
    """
    # the prover's own samples: proofs that salvage or a feedback round produced are reported apart
    positions = {
        position: count
        for position, count in store.retained_proof_positions(raw_samples_only=True).items()
        if position is not None
    }
    rounds = store.proving_round_counts(k) if strategy == "parallel" else {}
    own = sum(positions.values())
    unbiased = bool(rounds) and all(drawn == k for drawn, _ in rounds) and sum(rounds.values()) == own
    figures: dict[str, float | None] = {}
    for j in range(1, k + 1):
        if unbiased:
            total = sum(count * pass_at(drawn, verified, j) for (drawn, verified), count in rounds.items())
        else:
            total = float(sum(count for position, count in positions.items() if position < j))
        figures[f"pass@{j}"] = round(total / finished, 4) if finished else None
    return figures, UNBIASED if unbiased else FIRST_SUCCESS
