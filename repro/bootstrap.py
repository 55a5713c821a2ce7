"""The percentile bootstrap of a mean: the interval the coverage study (over statements) and the
evaluation (over instances, and over paired differences) both report, computed once, with scipy."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import stats


def bootstrap_mean(
    values: Sequence[float] | npt.NDArray[np.float64], *, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    """(low, high) of the mean's percentile bootstrap interval; NaNs when there is no value.

    When every value is the same every resample has that mean: it is returned without asking scipy,
    which would warn about a degenerate distribution."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (float("nan"), float("nan"))
    if np.ptp(data) == 0:
        return (float(data[0]), float(data[0]))
    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))
