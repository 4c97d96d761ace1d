"""How a rerun compares with the run it re-measures: one judgement for `sitegen rerun --like`,
which prints it on the GPU host, and for record pages, which show it.

Pydantic-free, so the measuring side can import it on hosts without the site's dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.core.units import percent


def pass_from_benchmark(benchmark: str) -> str | None:
    """The timed pass a source's benchmark name ends in ("jsd/forward" → "forward"), or None without "/"."""
    return benchmark.rsplit("/", 1)[1] if "/" in benchmark else None


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "reproduced", "not reproduced" or "not comparable"
    text: str


def judge(*, rerun_product: str, original_product: str, rerun_value: float | None, original_value: float | None,
          tolerance: float, rerun_metric: str = "latency", original_metric: str = "latency") -> Verdict:
    """Comparable hardware first, then the same metric, then agreement of primary values.

    The change is relative to the original: the rerun re-measures it, not the other way round.
    """
    if rerun_product != original_product:
        return Verdict("not comparable", f"not comparable (different GPU product: {original_product} recorded, "
                                         f"{rerun_product} rerun)")
    if rerun_value is None or not original_value:
        return Verdict("not comparable", "not comparable (no primary value to compare)")
    if rerun_metric != original_metric:
        return Verdict("not comparable", f"not comparable (different metric: {original_metric} recorded, "
                                         f"{rerun_metric} rerun)")
    change = (rerun_value - original_value) / original_value
    if rerun_metric.startswith("latency"):
        direction = "slower" if change > 0 else "faster"
    else:
        direction = "higher" if change > 0 else "lower"
    if abs(change) <= tolerance:
        return Verdict("reproduced", f"reproduced within {percent(tolerance)} ({percent(change)} {direction})")
    return Verdict("not reproduced", f"not reproduced ({percent(change)} {direction})")
