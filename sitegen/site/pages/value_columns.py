"""Run tables with one metric per column and one unit per column.

A table of runs may mix latency and memory, and latencies from microseconds to
milliseconds. Each metric (with its statistic) gets its own column, and each column one
unit, chosen so its median value reads best; the unit goes in the header, cells hold
numbers only.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.core import units
from sitegen.facts.index import RunFacts

_SCALES = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1.0}


@dataclass(frozen=True)
class ValueColumn:
    header: str
    cells: list[str]
    """One per row: the number in the header's unit, or "" where the row has another metric."""


def value_columns(facts: list[RunFacts | None]) -> list[ValueColumn]:
    """Columns for rows whose runs are ``facts`` (None: a row without a run), in metric order."""
    groups: dict[tuple[str, str, str], list[float]] = {}
    for f in facts:
        if f is not None and f.value is not None:
            groups.setdefault((f.metric, f.statistic, f.unit), []).append(f.value)
    columns = []
    for (metric, statistic, unit), values in sorted(groups.items()):
        middle = sorted(values)[len(values) // 2]
        shown, scale = unit, 1.0
        if unit == "ns":
            shown = units.duration_ns(middle)[1]
            scale = _SCALES[shown]
        cells = [
            units.significant(f.value / scale)
            if f is not None and f.value is not None and (f.metric, f.statistic, f.unit) == (metric, statistic, unit) else ""
            for f in facts
        ]
        columns.append(ValueColumn(f"{metric.capitalize()}, {statistic} ({shown})", cells))
    return columns
