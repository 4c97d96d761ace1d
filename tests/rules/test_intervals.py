"""Bootstrap intervals (docs/record-format.md: "a 95% interval of its primary statistic from
2,000 bootstrap resamples seeded by its digest").

uncertainty.py draws each replicate by a shortcut (order statistics from Beta draws) that its
docstring says is "the same distribution as resampling". With four samples, every resample of
them (4⁴ = 256, equally likely) can be listed, so the exact bootstrap distribution of each
statistic is known and the shortcut's 2,000 draws are compared with it.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from sitegen.facts.uncertainty import REPLICATES, bounds, replicates

SAMPLES = [10, 20, 30, 40]
DIGEST = "sha256:" + "ab" * 32


def _exact(statistic: str) -> dict[float, float]:
    """The exact bootstrap distribution: the statistic (as the harness defines it) of every resample."""
    def value(resample):
        if statistic == "mean":
            return float(np.mean(resample))
        q = {"median": 0.5, "p5": 0.05, "p20": 0.2, "p80": 0.8, "min": 0.0, "max": 1.0}[statistic]
        return float(np.quantile(resample, q))  # linear interpolation, as do_bench
    counts = Counter(round(value(r), 6) for r in itertools.product(SAMPLES, repeat=len(SAMPLES)))
    return {v: c / 4 ** len(SAMPLES) for v, c in counts.items()}


@pytest.mark.parametrize("statistic", ["median", "p5", "p20", "p80", "min", "max", "mean"])
def test_replicates_follow_the_exact_bootstrap_distribution(statistic):
    draws = replicates(SAMPLES, statistic, DIGEST)
    assert len(draws) == REPLICATES
    exact = _exact(statistic)
    seen = Counter(round(float(v), 6) for v in draws)
    assert set(seen) <= set(exact), "a replicate no resample can give"
    # Total variation distance: 2,000 draws from the exact law land within a few percent of it.
    distance = sum(abs(seen.get(v, 0) / len(draws) - p) for v, p in exact.items()) / 2
    assert distance < 0.06


def test_two_samples_are_enough_to_resample():
    draws = replicates([10, 30], "median", DIGEST)
    assert set(np.round(draws, 6)) == {10.0, 20.0, 30.0}  # both low, one of each, both high


def test_a_mean_of_many_samples_is_resampled_in_blocks_to_exactly_2000_replicates():
    # Over 2,097 samples the mean's resamples are drawn a block at a time (memory bound).
    draws = replicates(list(range(1, 5001)), "mean", DIGEST)
    assert len(draws) == 2000
    # Centred on the samples' mean: each replicate's standard error is 1443/√5000 ≈ 20.4, so the
    # average of 2,000 of them lies within 0.46 of it (3 is over six of those).
    assert abs(float(draws.mean()) - 2500.5) < 3


def test_statistics_without_a_bootstrap_get_none():
    assert replicates(SAMPLES, "stdev", DIGEST) is None
    assert replicates(SAMPLES, "p2x", DIGEST) is None
    assert replicates([10], "median", DIGEST) is None


def test_the_draws_are_the_runs_own_seeded_by_its_digest():
    again = replicates(SAMPLES * 10, "median", DIGEST)
    assert (again == replicates(SAMPLES * 10, "median", DIGEST)).all()
    other = replicates(SAMPLES * 10, "median", "sha256:" + "cd" * 32)
    assert not (again == other).all()


def test_the_interval_is_the_central_95_percent():
    values = np.arange(1, 1001, dtype=float)
    low, high = bounds(values)
    assert (low, high) == pytest.approx((np.percentile(values, 2.5), np.percentile(values, 97.5)))
    assert (low, high) == pytest.approx((25.975, 975.025))
