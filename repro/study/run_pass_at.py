"""The pipeline's own pass@j for ``repro status``, from a run's stored attempts.

When every retained candidate's proving round drew all k samples (the parallel strategy), the figure is
the unbiased estimator averaged over finished problems: a retained problem contributes
1 - C(n-c, j)/C(n, j) for its round's n samples with c verified. When the sequential strategy stopped
early, the samples after the first success were never drawn, so the figure is the first success index:
a retained problem counts at j when its first verified sample was among its first j.
"""

from __future__ import annotations

from collections.abc import Iterable

from repro.records import AttemptStatus, Candidate, Stage
from repro.store import RunStore
from repro.study.estimators import FIRST_SUCCESS, UNBIASED, first_success_pass_at, pass_at


def _round_counts(store: RunStore, candidate: Candidate, k: int) -> tuple[int, int] | None:
    """(samples drawn, samples verified) of the round that produced the candidate's proof."""
    rounds: dict[int, list[bool]] = {}
    for attempt in store.attempts(candidate_id=candidate.candidate_id, stage=Stage.verify.value):
        if attempt.output.get("reused_from_study"):
            continue
        rounds.setdefault(attempt.attempt_number // k, []).append(attempt.status == AttemptStatus.passed)
    proving = [outcomes for _, outcomes in sorted(rounds.items()) if any(outcomes)]
    if not proving:
        return None
    return len(proving[-1]), sum(proving[-1])


def run_pass_at(
    store: RunStore, retained: Iterable[Candidate], finished: int, k: int, strategy: str = "parallel"
) -> tuple[dict[str, float | None], str]:
    """(pass@j for j = 1..k as a share of finished problems, the estimator's name)."""
    own = [c for c in retained if c.proof_attempt_number is not None]  # study-fed proofs are not the run's prover's
    counts = {c.candidate_id: _round_counts(store, c, k) for c in own}
    unbiased = strategy == "parallel" and all(value is not None and value[0] == k for value in counts.values())
    figures: dict[str, float | None] = {}
    for j in range(1, k + 1):
        total = 0.0
        for candidate in own:
            value = counts[candidate.candidate_id]
            if unbiased and value is not None:
                total += pass_at(value[0], value[1], j)
            else:
                total += first_success_pass_at(candidate.proof_attempt_number, j)
        figures[f"pass@{j}"] = round(total / finished, 4) if finished else None
    return figures, UNBIASED if unbiased else FIRST_SUCCESS
