"""Trends: one implementation's value on one workload, GPU and pass, over observed date and over
its versions, with every change the rule below marks. Shown in a record page's charts.

A trend holds the runs of one comparison group (operation, workload, pass, protocol family,
GPU, metric: the cohort key) by one implementation across its revisions, which share its
name, project and callable variant. A run not eligible to rank (failed, a dry run, flagged)
is no point of it.

The rule (docs/record-format.md, "Trends", and each chart's note say the same): going in
observed order, a change is marked at a run whose value lies outside the 95% interval of the
run just before it and differs from that run's value by at least the protocol's minimum
effect (1% unless it says otherwise), the two tests a distinct rank needs too. Where the
earlier run has no interval, no change is marked: a value alone cannot tell a change from noise.

asv's step detection is the anchor: it fits piecewise-constant levels to a long nightly
series and reports where the level moves. A registry's series are a handful of runs, each
with an interval of its own from raw samples, so each step is tested directly against the
earlier run's interval: the same question (did the level move beyond the noise?) per pair.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone

from markupsafe import Markup, escape

from sitegen.site import charts
from sitegen.site import labels as L
from sitegen.site import units
from sitegen.site.chart_views import ChartView, _tick, _unit_of
from sitegen.site.cohort_table import revision_label
from sitegen.site.index import Index, RunFacts
from sitegen.site.ranking import min_effect

RULE = ("A change is marked (▲ slower, ▼ faster) at a run whose value lies outside the 95% interval of the run "
        "just before it and differs from it by at least the protocol's minimum effect (1% unless it says "
        "otherwise); where the earlier run has no interval, none is marked. Every point links to its run.")

# A record page stays small however often one implementation is rerun: its charts show the
# newest runs of the trend (changes are still found over all of them).
TREND_POINTS = 100

_cache: list = []


def trend_key(facts: RunFacts) -> tuple:
    """The comparison group and the implementation across revisions: name, project, callable variant."""
    spec = facts.implementation.model.spec
    return (facts.cohort, spec.name, spec.projectRevision.project, spec.callable.variant if spec.callable else None)


def _groups(index: Index) -> dict[tuple, list[RunFacts]]:
    # One grouping per build, shared by every record page of it.
    if _cache and _cache[0] is index:
        return _cache[1]
    groups: dict[tuple, list[RunFacts]] = defaultdict(list)
    for f in index.runs:
        if f.cohort and f.value is not None and not f.reasons:
            groups[trend_key(f)].append(f)
    for members in groups.values():
        members.sort(key=lambda f: (f.run.spec.observedAt, f.name))
    _cache[:] = [index, groups]
    return groups


def changes(members: list[RunFacts]) -> dict[int, tuple[str, str]]:
    """Position in ``members`` (observed order) → (``up`` | ``down``, why) for each change the rule marks."""
    marked = {}
    for i in range(1, len(members)):
        earlier, later = members[i - 1], members[i]
        interval = earlier.interval
        if interval is None or not earlier.value:
            continue
        outside = later.value > interval.high or later.value < interval.low
        gap = later.value / earlier.value - 1
        threshold = max(min_effect(earlier), min_effect(later))
        if outside and abs(gap) >= threshold:
            direction = "up" if gap > 0 else "down"
            size = f"{gap + 1:.2f}× slower" if gap >= 1 else f"{units.percent(gap)} {'slower' if gap > 0 else 'faster'}"
            if gap < 0 and earlier.value / later.value >= 2:
                size = f"{earlier.value / later.value:.2f}× faster"
            marked[i] = (direction, f"{'▲' if direction == 'up' else '▼'} {size} than the run before, outside its interval "
                                    f"{units.spread(interval.low, interval.high, earlier.unit)}")
    return marked


def _days(observed_at: str) -> float:
    moment = datetime.fromisoformat(observed_at.replace("Z", "+00:00"))
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds() / 86400


def _href(facts: RunFacts) -> str:
    # The charts sit on record pages (runs/<name>/index.html): links go up to the site root.
    return "../../" + L.run_path(facts.name)


def trend_charts(facts: RunFacts, index: Index) -> list[ChartView]:
    """The run's trend over observed date (id ``history``), and over version when it has two or more;
    none for a run measured once or not eligible to rank."""
    if not facts.cohort or facts.value is None or facts.reasons:
        return []
    members = _groups(index).get(trend_key(facts), [])
    if len(members) < 2:
        return []
    marked = changes(members)
    total = len(members)
    if total > TREND_POINTS:
        start = total - TREND_POINTS
        members = members[start:]
        marked = {i - start: change for i, change in marked.items() if i >= start}
    unit, scale = _unit_of([f.value for f in members]) if facts.unit == "ns" else (facts.unit, 1.0)
    name = L.implementation_label(facts.implementation)
    versions: list[str] = []
    for f in members:
        if revision_label(f) not in versions:
            versions.append(revision_label(f))

    def point(x: float, i: int, f: RunFacts) -> charts.TrendPoint:
        low = high = None
        if f.interval is not None:
            low, high = f.interval.low / scale, f.interval.high / scale
        label = f"{revision_label(f)} · {f.observed} · {units.show(f.value, f.unit)} · run {L.run_short_id(f.digest)}…"
        return charts.TrendPoint(x, f.value / scale, low, high, _href(f), label, marked.get(i, (None,))[0])

    where = f"{L.workload_label(facts.workload)} · {facts.timed_pass} on {facts.gpu}"
    label = f"{facts.metric} ({facts.statistic}, {unit})"
    summary = (f"{len(marked)} change{'s' if len(marked) != 1 else ''} marked" if marked else "no change marked")
    if total > len(members):
        summary = f"the {len(members)} newest of {total} runs; {summary}"
    desc = (f"{len(members)} runs' {facts.metric} ({facts.statistic}) in {unit}, each with its 95% interval, "
            f"from {members[0].observed} to {members[-1].observed}, {len(versions)} version{'s' if len(versions) != 1 else ''}; "
            f"{summary}. The table beside it lists the same values.")
    rows = []
    for i, f in enumerate(members):
        observed = Markup('<a href="{}">{}</a>').format(_href(f), f.run.spec.observedAt[:16].replace("T", " "))
        interval = units.spread(f.interval.low, f.interval.high, f.unit) if f.interval else "no interval"
        rows.append([observed, escape(revision_label(f)), units.significant(f.value / scale), interval, marked.get(i, (None, ""))[1]])
    columns = ["observed (UTC)", "version", label, "95% interval", "change"]
    views = [ChartView("history", f"History of {name}: {where}", Markup(charts.trend_chart(
        title=f"History of {name}: {where}", desc=f"Chart over observed date of {desc}",
        points=[point(_days(f.run.spec.observedAt), i, f) for i, f in enumerate(members)],
        x=charts.Axis("observed", dates=True), y=charts.Axis(label, format=_tick),
    )), columns, rows, note=f"{summary[0].upper()}{summary[1:]}. {RULE}")]
    if len(versions) > 1:
        # Versions in the order they were first observed: a version string alone has no order sitegen can trust.
        order = {v: n for n, v in enumerate(versions)}
        views.append(ChartView("versions", f"{name} by version: {where}", Markup(charts.trend_chart(
            title=f"{name} by version: {where}", desc=f"Chart over version (in the order first observed) of {desc}",
            points=[point(order[revision_label(f)], i, f) for i, f in enumerate(members)],
            x=charts.Axis("version, in the order first observed", format=lambda v: versions[round(v)] if abs(v - round(v)) < 1e-9 and 0 <= round(v) < len(versions) else ""),
            y=charts.Axis(label, format=_tick),
        )), columns, rows, note=f"The same runs by version. {RULE}"))
    return views
