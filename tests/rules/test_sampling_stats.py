"""The sampling rule's statistics (docs/rerun.md: each case samples until the 95% confidence
interval of its median is within 1% of it), checked against what the interval means.

median_ci promises a distribution-free 95% interval: order statistics whose ranks a
Binomial(n, ½) count of samples below the true median falls between with about 95%
probability. The tests compute that probability exactly for the ranks returned.
"""

from __future__ import annotations

import math
from math import comb

import pytest

from sitegen.rules.stats import ci_half_width_rel, median_ci, quantile


def _coverage(n: int, lo: int, hi: int) -> float:
    """P(X_(lo+1) <= true median <= X_(hi+1)) for 0-based ranks lo, hi of n samples."""
    return sum(comb(n, below) for below in range(lo + 1, hi + 1)) / 2 ** n


@pytest.mark.parametrize("n", [6, 10, 25, 100, 401])
def test_the_median_interval_covers_the_median_95_percent_of_the_time_and_no_narrower_would(n):
    lo, hi = (int(v) for v in median_ci(list(range(n))))  # samples equal to their ranks
    assert 0 <= lo < hi <= n - 1
    assert _coverage(n, lo, hi) >= 0.94  # the normal approximation's 95%, within a point
    assert _coverage(n, lo + 1, hi - 1) < 0.95  # one rank tighter on each side falls short
    assert lo + hi in (n - 2, n - 1, n)  # centred on the median


def test_the_interval_is_of_the_samples_values_not_their_ranks():
    assert median_ci([60, 10, 50, 20, 40, 30]) == (10.0, 60.0)
    assert median_ci([1000 + k for k in range(100)]) == (1040.0, 1059.0)


def test_one_sample_is_its_own_interval_and_none_has_none():
    assert median_ci([7]) == (7.0, 7.0)
    assert median_ci([20, 10]) == (10.0, 20.0)  # two samples already span an interval
    assert all(math.isnan(v) for v in median_ci([]))


def test_the_half_width_is_relative_to_the_median():
    samples = [1000 + k for k in range(100)]  # interval 1040-1059, median 1049.5
    assert ci_half_width_rel(samples) == pytest.approx((1059 - 1040) / 2 / 1049.5)
    assert ci_half_width_rel([500] * 40) == 0.0


def test_fewer_than_six_samples_never_reach_precision():
    assert ci_half_width_rel([100, 100, 100, 100, 100]) == math.inf
    assert ci_half_width_rel([100, 100, 100, 100, 100, 100]) == 0.0


def test_a_zero_median_has_no_relative_width():
    assert ci_half_width_rel([0] * 10) == math.inf


def test_quantiles_interpolate_linearly_and_refuse_no_samples():
    assert quantile([10, 20, 30, 40, 50], 0.2) == pytest.approx(18.0)
    assert quantile([10, 20], 1.0) == 20
    with pytest.raises(ValueError, match="^no samples$"):
        quantile([], 0.5)


def test_processes_disagree_by_their_medians_spread_over_the_median_of_medians():
    from sitegen.rules.stats import spread_rel

    assert spread_rel([1_000]) == 0.0  # one process agrees with itself
    assert spread_rel([1_000, 1_100]) == pytest.approx(100 / 1_050)
    assert spread_rel([1_000, 1_060, 1_030]) == pytest.approx(60 / 1_030)
    assert spread_rel([1, 1, 1]) == 0.0
    assert spread_rel([0, 0, 5]) == math.inf  # no median to be relative to


def test_a_median_of_one_nanosecond_still_has_a_relative_width():
    assert ci_half_width_rel([1] * 6) == 0.0


def test_each_stated_statistic_is_defined_as_the_harness_states_it():
    from sitegen.rules.stats import statistic

    values = [10, 20, 30, 40, 50]
    assert statistic(values, "p20") == pytest.approx(18.0)
    assert statistic(values, "p5") == pytest.approx(12.0)
    assert statistic(values, "p50") == statistic(values, "median") == 30
    assert statistic([7], "stdev") == 0.0 and statistic([1, 3], "stdev") == pytest.approx(2 ** 0.5)
    assert statistic(values, "x20") is None and statistic(values, "q5") is None
