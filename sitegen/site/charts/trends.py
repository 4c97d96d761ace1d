"""Trends: one implementation's value on one workload, GPU and pass, over observed date and over
its versions, with every change the rule below marks. Shown in a record page's charts.

A trend holds the runs of one comparison group (operation, workload, pass, protocol family,
GPU, metric: the cohort key) by one implementation across its revisions, which share its
name, project and callable variant. A run not eligible to rank (failed, a dry run, flagged)
is no point of it.

The rule (docs/record-format.md, "Trends", and each chart's note say the same): going in
observed order (parsed times, so offsets and fractions of a second order correctly), a
change is marked at a run that ranking.separation would rank apart from the run before it:
the interval of their ratio (ranking.ratio_interval: a 95% bootstrap one when both have raw
samples, else the range between their intervals) excludes 1 and the gap is at least the
protocol's minimum effect (1% unless it says otherwise). Noisy runs are drawn but neither
marked nor compared with: a noisy run holds no strict rank. Without an interval on either
side nothing is marked: a value alone cannot tell a change from noise. A mark across
environments (KernelBench's machines differ) names both: the step may be the machine's.

asv's step detection is the anchor: it fits piecewise-constant levels to a long nightly
series and reports where the level moves. A registry's series are a handful of runs, each
with an interval of its own from raw samples, so each step is tested directly with the
test neighbouring ranks use: the same question (did the level move beyond the noise?) per pair.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone

from markupsafe import Markup, escape

from sitegen.site.charts import svg as charts
from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.site.charts.views import ChartView, _tick, _unit_of
from sitegen.site.pages.cohort_table import interval_text, revision_label
from sitegen.facts.index import Index, RunFacts
from sitegen.facts.ranking import ratio_interval, separation
from sitegen.facts.perindex import per_index
from sitegen.facts.trend import moment, trend_key

RULE = ("A change is marked (▲ slower, ▼ faster) at a run the ranks would separate from the run before it: the "
        "interval of their ratio excludes 1 and the gap is at least the protocol's minimum effect (1% unless it says "
        "otherwise). Noisy runs are neither marked nor compared with; without an interval, nothing is marked; a mark "
        "across environments names both. Every point links to its run.")

# A record page stays small however often one implementation is rerun: its charts show the
# newest runs of the trend (changes are still found over all of them).
TREND_POINTS = 100

# One grouping (and its marks) per build, shared by every record page of it. Keyed by the
# index's id and dropped when that index is collected, so `sitegen serve` never keeps an old
# build's index alive through it.


def as_recorded(observed_at: str) -> str:
    """observedAt to the minute as the record states it, with its offset (``2025-01-19 19:25 -08:00``,
    ``2026-08-21 10:00 UTC``): its date is the one the page's headline gives, where the date in
    UTC was a day later for an evening in California."""
    parsed = datetime.fromisoformat(observed_at.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        return f"{parsed:%Y-%m-%d %H:%M}"
    offset = parsed.strftime("%z")
    return f"{parsed:%Y-%m-%d %H:%M} " + ("UTC" if parsed.utcoffset().total_seconds() == 0 else f"{offset[:3]}:{offset[3:]}")


@per_index
def _groups(index: Index) -> dict[tuple, tuple[list[RunFacts], dict[int, tuple[str, str]]]]:
    groups: dict[tuple, list[RunFacts]] = defaultdict(list)
    for f in index.runs:
        if f.cohort and f.value is not None and not f.reasons:
            groups[trend_key(f)].append(f)
    for members in groups.values():
        members.sort(key=lambda f: (moment(f.run.spec.observedAt), f.name))
    return {key: (members, changes(members)) for key, members in groups.items()}


_cache = _groups.cache


def changes(members: list[RunFacts]) -> dict[int, tuple[str, str]]:
    """Position in ``members`` (observed order) → (``up`` | ``down`` | ``None``, why) for each run the rule
    marks, and for each noisy run (no direction: it is not tested)."""
    marked: dict[int, tuple[str, str]] = {}
    earlier = None
    for i, later in enumerate(members):
        if later.noisy:
            marked[i] = (None, "noisy: not tested for a change")
            continue
        if earlier is not None and earlier.value:
            mark = _change(earlier, later)
            if mark is not None:
                marked[i] = mark
        earlier = later
    return marked


def _change(earlier: RunFacts, later: RunFacts) -> tuple[str, str] | None:
    ahead, behind = (earlier, later) if later.value >= earlier.value else (later, earlier)
    distinct, _, with_interval = separation(ahead, behind)
    if not distinct or not with_interval:
        return None
    direction = "up" if later.value > earlier.value else "down"
    low, high, how = ratio_interval(earlier, later)
    kind = "95% bootstrap interval" if how.startswith("95% bootstrap") else how
    text = (f"{'▲' if direction == 'up' else '▼'} {units.slower(later.value, earlier.value, later.unit or 'ns')} than the run "
            f"before: ratio {later.value / earlier.value:.3f}× ({kind} {units.times_span(low, high)}) excludes 1")
    if earlier.environment.digest != later.environment.digest:
        text += f"; environment changed ({earlier.environment.name} vs {later.environment.name}): the step may be the machine's"
    return direction, text


def _days(observed_at: str) -> float:
    return (moment(observed_at) - datetime(1970, 1, 1, tzinfo=timezone.utc)).total_seconds() / 86400


def _href(facts: RunFacts) -> str:
    # The charts sit on record pages (runs/<name>/index.html): links go up to the site root.
    return "../../" + L.run_path(facts.name)


def trend_charts(facts: RunFacts, index: Index) -> list[ChartView]:
    """The run's trend over observed date (id ``history``), and over version when it has two or more;
    none for a run measured once or not eligible to rank."""
    if not facts.cohort or facts.value is None or facts.reasons:
        return []
    members, marked = _groups(index).get(trend_key(facts), ([], {}))
    if len(members) < 2:
        return []
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
    steps = sum(1 for direction, _ in marked.values() if direction)
    summary = f"{steps} change{'s' if steps != 1 else ''} marked" if steps else "no change marked"
    if total > len(members):
        summary = f"the {len(members)} newest of {total} runs; {summary}"
    desc = (f"{len(members)} runs' {facts.metric} ({facts.statistic}) in {unit}, each with its interval, "
            f"from {members[0].observed} to {members[-1].observed}, {len(versions)} version{'s' if len(versions) != 1 else ''}; "
            f"{summary}. The table beside it lists the same values.")
    rows = []
    for i, f in enumerate(members):
        observed = Markup('<a href="{}">{}</a>').format(_href(f), as_recorded(f.run.spec.observedAt))
        interval = interval_text(f)
        rows.append([observed, escape(revision_label(f)), units.significant(f.value / scale), interval, marked.get(i, (None, ""))[1]])
    columns = ["observed", "version", label, "interval (95% unless marked)", "change"]
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
