"""pass@j estimators, and the pipeline's own pass@j for ``repro status`` from aggregate queries.

With n samples of which c passed, the unbiased estimate of "at least one of j fresh samples passes" is
1 - C(n-c, j) / C(n, j) (Chen et al. 2021); it needs all n samples drawn without looking at them.
A sequential strategy stops at the first success, which biases that estimator; there the honest
figure is the "first success index": the statement counts at j when its first success came within j.
This module imports nothing heavy: ``repro status`` uses it on stores of a million problems. One figure is
called pass@j anywhere in repro: the prover's, over formal statements (:func:`statement_pass_at`).
"""

from __future__ import annotations

from collections.abc import Mapping
from math import comb
from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from repro.store import RunReader

UNBIASED = "unbiased estimator over the k samples drawn at once"
FIRST_SUCCESS = "first success index, as sequential sampling stops at the first pass"


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


def statement_pass_at(drawn: int, passed: int, j: int, *, sequential: bool, first_success: int | None) -> float:
    """One formal statement's pass@j estimate from the samples drawn for it: the one definition that
    ``repro status``, ``repro report`` and ``repro study-report`` average.

    Parallel sampling: Chen et al.'s unbiased 1 - C(n-c, j)/C(n, j) over the n samples (j capped at n
    when fewer than k were drawn). Sequential sampling stops at the first pass, which biases that
    estimator; there the statement counts at j when its first pass came within its first j samples.
    """
    if sequential:
        return first_success_pass_at(first_success, j)
    return pass_at(drawn, passed, min(j, drawn)) if drawn else 0.0


def estimator_name(sequential: bool) -> str:
    return FIRST_SUCCESS if sequential else UNBIASED


class PassAt(BaseModel):
    """pass@j of a prover: the mean over formal statements of each statement's estimate."""

    values: dict[str, float | None]  # "pass@1" .. "pass@k"
    statements: int  # the denominator: formal statements the prover was asked to prove (k samples each)
    estimator: str
    # what the figure is, for a reader of the JSON or the HTML: denominator and estimator in words
    label: str = ""


def pass_at_over(rounds: Mapping[tuple[int, int, int | None], int], k: int, *, sequential: bool) -> PassAt:
    """pass@j for j = 1..k from a histogram of statements by (samples drawn, passed, first pass's index)."""
    total = sum(rounds.values())
    values: dict[str, float | None] = {}
    for j in range(1, k + 1):
        summed = sum(
            count * statement_pass_at(drawn, passed, j, sequential=sequential, first_success=first)
            for (drawn, passed, first), count in rounds.items()
        )
        values[f"pass@{j}"] = round(summed / total, 4) if total else None
    name = estimator_name(sequential)
    label = f"prover pass@j over {total} formal statements (k = {k} samples each; {name})"
    return PassAt(values=values, statements=total, estimator=name, label=label)


def run_pass_at(store: RunReader, k: int, strategy: str = "parallel") -> PassAt:
    """The run's own prover's pass@j: over every formal statement of a finished candidate that it was asked
    to prove, a sample passing when the kernel judge passed it (one aggregate query, whatever the run's size).
    Proofs found by salvage, feedback rounds or a study are levers, counted apart (``rates.levers``)."""
    return pass_at_over(store.proving_rounds(k), k, sequential=strategy == "sequential")
