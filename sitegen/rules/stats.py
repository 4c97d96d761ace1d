"""Statistics of timed samples, as do_bench and the record model define them (no torch)."""

from __future__ import annotations

import math
import statistics


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolation quantile (numpy's and torch.quantile's default), as do_bench uses."""
    if not sorted_values:
        raise ValueError("no samples")
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def statistic(sorted_values: list[float], name: str) -> float | None:
    """One statistic of the model's Statistic names over sorted samples, unrounded; None for an unknown name.

    The harness writes its summaries with it and sitegen.rules.recompute recomputes a record's stated
    figures with it, so the two can never define a statistic differently.
    """
    if name == "mean":
        return statistics.fmean(sorted_values)
    if name == "stdev":
        return statistics.stdev(sorted_values) if len(sorted_values) > 1 else 0.0
    at = {"median": 0.5, "min": 0.0, "max": 1.0}.get(name)
    if at is None and name.startswith("p") and name[1:].isdigit():
        at = int(name[1:]) / 100
    return None if at is None else quantile(sorted_values, at)


SUMMARY = ("median", "p20", "p80", "min", "max", "mean", "stdev")


def summary(samples_ns: list[int]) -> dict[str, int]:
    """latencyNs of the model: median primary, p20/p80 spread, min/max/mean/stdev."""
    s = sorted(samples_ns)
    return {k: int(round(statistic(s, k))) for k in SUMMARY}


# z for a two-sided 95% interval.
_Z95 = 1.959963984540054


def median_ci(samples_ns: list[int]) -> tuple[float, float]:
    """Distribution-free 95% confidence interval of the median: the order statistics at
    ranks n/2 ∓ z·√n/2 (the binomial percentile interval, normal approximation), so no
    resampling is needed inside the sampling loop."""
    s = sorted(samples_ns)
    n = len(s)
    if n < 2:
        return (float(s[0]), float(s[0])) if s else (math.nan, math.nan)
    half = _Z95 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half) - 1)
    return float(s[lo]), float(s[hi])


def ci_half_width_rel(samples_ns: list[int]) -> float:
    """Half the width of median_ci over the median; inf below 6 samples (no such interval)."""
    if len(samples_ns) < 6:
        return math.inf
    lo, hi = median_ci(samples_ns)
    median = statistics.median(samples_ns)
    return (hi - lo) / 2 / median if median > 0 else math.inf


def spread_rel(medians: list[float]) -> float:
    """(max − min) / median of per-process medians: how far the processes disagree."""
    if len(medians) < 2:
        return 0.0
    mid = statistics.median(medians)
    return (max(medians) - min(medians)) / mid if mid > 0 else math.inf
