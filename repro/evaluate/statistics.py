"""Paired statistics for original-vs-rewritten accuracy, all computed with scipy.

Per instance i a model has scores c_ori(i), c_rew(i) in [0, 1] (the fraction of its samples graded
correct; 0 or 1 with one sample). Accuracy is the mean score. Its interval is Wilson's score
interval when every score is 0 or 1, otherwise a percentile bootstrap over instances. The drop is
mean(c_ori - c_rew); its interval is a paired percentile bootstrap over instances (the two
questions of an instance are resampled together). McNemar's exact test counts the discordant pairs
of the first sample and takes the two-sided binomial p-value of b successes in b + c at 1/2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np
import numpy.typing as npt
from scipy import stats

from repro.bootstrap import bootstrap_mean
from repro.evaluate.records import Interval

DEFAULT_CONFIDENCE = 0.95
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0

Values: TypeAlias = Sequence[float] | npt.NDArray[np.float64]


def _nan_interval() -> Interval:
    return Interval(low=float("nan"), high=float("nan"))


def wilson_interval(successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    if trials == 0:
        return _nan_interval()
    result = stats.binomtest(successes, trials).proportion_ci(confidence_level=confidence, method="wilson")
    return Interval(low=float(result.low), high=float(result.high))


def bootstrap_mean_interval(values: Values, *, confidence: float, resamples: int, seed: int) -> Interval:
    low, high = bootstrap_mean(values, confidence=confidence, resamples=resamples, seed=seed)
    return Interval(low=low, high=high)


def accuracy_interval(scores: Values, *, confidence: float, resamples: int, seed: int) -> Interval:
    data = np.asarray(scores, dtype=float)
    if np.all((data == 0) | (data == 1)):
        return wilson_interval(int(data.sum()), int(data.size), confidence)
    return bootstrap_mean_interval(data, confidence=confidence, resamples=resamples, seed=seed)


def paired_drop_interval(
    original: Values, rewritten: Values, *, confidence: float, resamples: int, seed: int
) -> Interval:
    """Resampling the per-instance differences resamples both questions of an instance together."""
    differences = np.asarray(original, dtype=float) - np.asarray(rewritten, dtype=float)
    return bootstrap_mean_interval(differences, confidence=confidence, resamples=resamples, seed=seed)


def mcnemar_exact(original_only: int, rewritten_only: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts (1.0 when there are none)."""
    discordant = original_only + rewritten_only
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(original_only, discordant, 0.5, alternative="two-sided").pvalue)


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None, str | None]:
    """(rho, p, note); rho and p are None where Spearman's rho is undefined."""
    if len(x) < 3:
        return None, None, "fewer than 3 instances"
    if np.ptp(np.asarray(x, dtype=float)) == 0:
        return None, None, "the metric is constant over the instances"
    if np.ptp(np.asarray(y, dtype=float)) == 0:
        return None, None, "the model-averaged drop is constant over the instances"
    result = stats.spearmanr(x, y)
    return float(result.statistic), float(result.pvalue), None
