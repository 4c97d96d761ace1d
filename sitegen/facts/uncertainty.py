"""Bootstrap intervals of a run's primary statistic, reproducible from the run's digest.

Resampling n sorted samples with replacement and taking a quantile is, exactly, reading
the sample at ⌊n·U⌋ for order statistics U of n uniform draws. The j-th smallest of n
uniforms is Beta(j, n+1−j), and the next one is it plus (1−it)·Beta(1, n−j). So each
bootstrap replicate of a linear-interpolation quantile (the harness's and do_bench's)
takes two Beta draws instead of n index draws: the same distribution as resampling, at
O(1) a replicate, which keeps 2,000 replicates cheap for runs with thousands of samples.
"""

from __future__ import annotations

import math

import numpy as np

REPLICATES = 2000
LOWER, UPPER = 2.5, 97.5
# The mean has no order-statistic shortcut: it is resampled the plain way, in blocks.
_BLOCK_ELEMENTS = 1 << 22


def generator(digest: str) -> np.random.Generator:
    """The run's own generator: seeded from its digest, so every build draws the same replicates."""
    return np.random.default_rng(int(digest.removeprefix("sha256:")[:16], 16))


def quantile_of(statistic: str) -> float | None:
    """median → 0.5, p20 → 0.2, min → 0, max → 1; None for statistics that are no quantile."""
    if statistic == "median":
        return 0.5
    if statistic == "min":
        return 0.0
    if statistic == "max":
        return 1.0
    if statistic.startswith("p") and statistic[1:].isdigit():
        return int(statistic[1:]) / 100
    return None


def replicates(samples: list[int], statistic: str, digest: str) -> np.ndarray | None:
    """REPLICATES bootstrap values of ``statistic`` over ``samples``; None when it has none (stdev, < 2 samples)."""
    n = len(samples)
    if n < 2:
        return None
    rng = generator(digest)
    ordered = np.sort(np.asarray(samples, dtype=np.float64))
    q = quantile_of(statistic)
    if q is None:
        if statistic != "mean":
            return None
        rows = max(1, _BLOCK_ELEMENTS // n)
        means = [ordered[rng.integers(0, n, size=(min(rows, REPLICATES - done), n))].mean(axis=1)
                 for done in range(0, REPLICATES, rows)]
        return np.concatenate(means)
    position = (n - 1) * q
    j = math.floor(position)
    fraction = position - j
    u = rng.beta(j + 1, n - j, size=REPLICATES)
    low = ordered[np.minimum((u * n).astype(np.int64), n - 1)]
    if fraction == 0 or j + 1 >= n:
        return low
    u_next = u + (1 - u) * rng.beta(1, n - j - 1, size=REPLICATES)
    high = ordered[np.minimum((u_next * n).astype(np.int64), n - 1)]
    return low + fraction * (high - low)


def bounds(values: np.ndarray) -> tuple[float, float]:
    """The central 95% of ``values``."""
    low, high = np.percentile(values, [LOWER, UPPER])
    return float(low), float(high)
