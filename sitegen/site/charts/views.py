"""Which charts a page shows, with the numbers of each as a table: sweeps, history, sample spread.

The SVG drawing is sitegen.site.charts.svg; this module chooses the data from the index.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable

from markupsafe import Markup

from sitegen.site.charts import svg as charts
from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.site.pages.cohort_table import pass_note
from sitegen.facts.index import Index, RunFacts, path_slug
from sitegen.facts.ranking import PASS_ORDER

_SCALES = {"s": 1e9, "ms": 1e6, "µs": 1e3, "ns": 1.0}

FloorOf = Callable[[RunFacts], "float | None"]
"""The least time, in the run's own unit, the run's pass could take (its roofline floor), or None."""


@dataclass(frozen=True)
class ChartView:
    """One chart and the same numbers as a table (header row, then rows of text)."""

    id: str
    caption: str
    svg: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    """The pass notes of the implementations drawn (``torch: computes the gradient in forward``)."""
    missing: list[str] = field(default_factory=list)
    """Implementations of the page without a line here, each with why (``Liger: flagged``)."""
    note: str | None = None
    """A sentence under the chart: the rule its marks follow (trends.py)."""


def _unit_of(values_ns: list[float]) -> tuple[str, float]:
    """The display unit of a set of durations: the one its median reads best in."""
    middle = sorted(values_ns)[len(values_ns) // 2]
    unit = units.duration_ns(middle)[1]
    return unit, _SCALES[unit]


def _tick(value: float) -> str:
    if abs(value) >= 1000:
        return f"{round(value):,}"
    return f"{value:.3g}"


def _numeric(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _pass_first(key: tuple) -> tuple:
    # Full-pass charts first: forward + backward is the headline, the split passes need their notes.
    gpu, dtype, the_pass, fixed = key
    return (PASS_ORDER.index(the_pass) if the_pass in PASS_ORDER else len(PASS_ORDER), the_pass, gpu, dtype, fixed)


def _why_missing(runs: list[RunFacts]) -> str:
    """Why an implementation's runs in a chart's cohorts drew no line: flagged, noisy, failed, or one point only."""
    why = []
    if any(f.flagged for f in runs):
        why.append("flagged")
    if any(f.noisy for f in runs):
        why.append("noisy")
    if any(f.reasons and not f.flagged for f in runs):
        why.append("failed or not eligible")
    if not why:
        why.append("ranked at one workload only")
    return ", ".join(why)


def sweep_charts(runs: list[RunFacts], floor_of: FloorOf | None = None) -> list[ChartView]:
    """Per GPU × dtype × pass (× the other axes held fixed): latency against each varying numeric axis.

    One line per implementation (its newest ranked run at each point), log–log; with
    ``floor_of``, a roofline-floor line through the points where it knows the floor. Under
    each chart: the pass notes of the implementations drawn, and every implementation of
    the page that has no line, with why.
    """
    slots = {name: i for i, name in enumerate(sorted({L.implementation_label(f.implementation) for f in runs}))}
    values: dict[str, set] = defaultdict(set)
    for f in runs:
        for key, value in f.workload.model.spec.axes.items():
            values[key].add(value)
    views = []
    for axis in sorted(k for k, v in values.items() if len(v) > 1 and all(_numeric(x) for x in v)):
        groups: dict[tuple, dict[str, dict[float, RunFacts]]] = defaultdict(lambda: defaultdict(dict))
        tried: dict[tuple, dict[str, list[RunFacts]]] = defaultdict(lambda: defaultdict(list))
        for f in runs:
            axes = f.workload.model.spec.axes
            if f.metric != "latency" or f.unit != "ns" or axis not in axes:
                continue
            fixed = " · ".join(f"{k} = {L.scalar(v)}" for k, v in axes.items() if k != axis)
            key = (f.gpu, L.dtype_label(f.workload) or "—", f.timed_pass, fixed)
            tried[key][L.implementation_label(f.implementation)].append(f)
            if f.rank is None:
                continue
            cell = groups[key][L.implementation_label(f.implementation)]
            x = float(axes[axis])
            if x not in cell or (f.run.spec.observedAt, f.name) > (cell[x].run.spec.observedAt, cell[x].name):
                cell[x] = f
        for key in sorted(groups, key=_pass_first):
            lines = {name: cells for name, cells in sorted(groups[key].items()) if len(cells) > 1}
            if lines:
                view = _sweep_view(axis, key, lines, floor_of, slots)
                notes = [f"{name}: {note}" for name, cells in lines.items()
                         if (note := pass_note(next(iter(cells.values()))))]
                missing = [f"{name}: {_why_missing(tried[key][name]) if tried[key].get(name) else 'not run'}"
                           for name in sorted(slots) if name not in lines]
                # A drawn line's points that were measured but not ranked (a gap, or a workload no line
                # reaches, such as one where every run was flagged) are said, not silently dropped.
                for name, cells in lines.items():
                    unranked: dict[float, list[RunFacts]] = defaultdict(list)
                    for f in tried[key][name]:
                        x = float(f.workload.model.spec.axes[axis])
                        if x not in cells:
                            unranked[x].append(f)
                    missing += [f"{name} at {axis} = {L.scalar(found[0].workload.model.spec.axes[axis])}: {_why_missing(found)}"
                                for _, found in sorted(unranked.items())]
                views.append(ChartView(view.id, view.caption, view.svg, view.columns, view.rows, notes, missing))
    return views


def _sweep_view(axis: str, key: tuple, lines: dict[str, dict[float, RunFacts]], floor_of: FloorOf | None,
                slots: dict[str, int]) -> ChartView:
    gpu, dtype, the_pass, fixed = key
    xs = sorted({x for cells in lines.values() for x in cells})
    unit, scale = _unit_of([f.value for cells in lines.values() for f in cells.values()])
    series = [charts.Series(name, [(x, cells[x].value / scale) for x in sorted(cells)], slot=slots.get(name))
              for name, cells in lines.items()]
    floor = None
    if floor_of is not None:
        # Every implementation at one point shares the workload, so any run there gives the floor.
        at = {x: next(cells[x] for cells in lines.values() if x in cells) for x in xs}
        floor = [(x, ns) for x in xs if (ns := floor_of(at[x])) is not None] or None
        # A line under the floor did this pass's work in another pass (see the pass notes):
        # the floor would then only mislead, so it is left out of that chart.
        if floor and any(cells[x].value < ns for x, ns in floor for cells in lines.values() if x in cells):
            floor = None
        if floor:
            series.append(charts.Series("roofline floor", [(x, y / scale) for x, y in floor], floor=True))
    where = " · ".join(p for p in (gpu, dtype, the_pass, fixed) if p)
    caption = f"Latency against {axis}: {where}"
    svg = charts.line_chart(
        title=caption,
        desc=f"Log–log line chart, one line per implementation ({', '.join(lines)}), median latency in {unit} "
             f"at {axis} = {', '.join(_tick(x) for x in xs)}. The table beside it lists the same values.",
        series=series,
        x=charts.Axis(axis, log=True, format=_tick), y=charts.Axis(f"latency ({unit})", log=True, format=_tick),
    )
    columns = [axis] + [f"{name} ({unit})" for name in lines]
    if floor:
        columns.append(f"roofline floor ({unit})")
        floor_at = dict(floor)
    rows = []
    for x in xs:
        row = [_tick(x)] + [units.significant(cells[x].value / scale) if x in cells else "—" for cells in lines.values()]
        if floor:
            row.append(units.significant(floor_at[x] / scale) if x in floor_at else "—")
        rows.append(row)
    ident = "sweep-" + "-".join(filter(None, (axis, *(L.scalar(p) for p in key))))
    return ChartView(path_slug(ident), caption, Markup(svg), columns, rows)


def samples_of(facts: RunFacts) -> list[int]:
    """Every raw sample of the run in ns, processes one after another."""
    timing = facts.run.spec.timing
    if timing is None:
        return []
    if timing.samplesNs:
        return list(timing.samplesNs)
    return [s for p in timing.processes or [] for s in p.samplesNs]


def samples_chart(facts: RunFacts) -> ChartView | None:
    """The distribution of the run's raw samples, with the median and its 95% interval marked."""
    samples = samples_of(facts)
    if len(samples) < 2:
        return None
    ordered = sorted(samples)
    unit, scale = _unit_of(ordered)
    n = len(ordered)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    # The interval the page states and ranks by (ranking.estimate), not a second one of its own.
    stated = facts.interval
    interval = (stated.low, stated.high) if stated and stated.method == "bootstrap" and facts.statistic == "median" else None
    # The slowest 1% (one-off stalls) would stretch the axis until the body is one bar;
    # they are counted in the description and the table instead.
    cut = ordered[min(math.ceil(n * 0.99), n - 1)]
    shown = [v / scale for v in ordered if v <= cut]
    tail = n - len(shown)
    caption = f"Distribution of the {n:,} raw samples"
    # The median and its interval to the digits that tell the interval's ends apart.
    digits = units.distinct_digits(interval[0] / scale, interval[1] / scale) if interval else 3
    desc = f"Histogram of {n:,} latency samples in {unit}, median {units.significant(median / scale, digits)} {unit}"
    if interval:
        desc += (f", 95% interval of the median {units.significant(interval[0] / scale, digits)}–"
                 f"{units.significant(interval[1] / scale, digits)} {unit}")
    if tail:
        desc += f"; {tail:,} samples above {units.significant(cut / scale)} {unit} (the slowest 1%) are not drawn"
    svg = charts.histogram(
        title=caption, desc=desc + ". The table beside it lists the same values.", values=shown,
        marks={"median": median / scale}, band=(interval[0] / scale, interval[1] / scale) if interval else None,
        x=charts.Axis(f"latency ({unit})", format=_tick),
    )
    rows = [["min", units.significant(ordered[0] / scale)],
            ["median", units.significant(median / scale, digits)]]
    if interval:
        rows += [["median 95% interval, low", units.significant(interval[0] / scale, digits)],
                 ["median 95% interval, high", units.significant(interval[1] / scale, digits)]]
    if tail:
        rows.append(["p99 (drawn up to)", units.significant(cut / scale)])
    rows.append(["max", units.significant(ordered[-1] / scale)])
    return ChartView("samples", caption, Markup(svg), ["statistic", f"value ({unit})"], rows)
