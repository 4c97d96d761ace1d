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


def summary(samples_ns: list[int]) -> dict[str, int]:
    """latencyNs of the model: median primary, p20/p80 spread, min/max/mean/stdev."""
    s = sorted(samples_ns)
    out = {
        "median": quantile(s, 0.5), "p20": quantile(s, 0.2), "p80": quantile(s, 0.8),
        "min": s[0], "max": s[-1], "mean": statistics.fmean(s),
        "stdev": statistics.stdev(s) if len(s) > 1 else 0.0,
    }
    return {k: int(round(v)) for k, v in out.items()}
