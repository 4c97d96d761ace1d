"""A small pytest-benchmark suite: two providers of the 10 smallest of n integers."""

import heapq

import pytest


@pytest.mark.parametrize("n", [1000, 4000])
@pytest.mark.parametrize("provider", ["sorted", "heapq"])
def test_topk(benchmark, provider, n):
    data = list(range(n, 0, -1))
    benchmark.group = "topk"
    if provider == "sorted":
        benchmark(lambda: sorted(data)[:10])
    else:
        benchmark(lambda: heapq.nsmallest(10, data))
