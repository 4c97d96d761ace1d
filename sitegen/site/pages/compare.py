"""Compare two runs: the ratio of their values with its 95% interval, both distributions, and
what differs between their canonical manifests.

Two kinds of page. The pairs a cohort table links (each ranked row and the row above it)
are pre-rendered, so they read without JavaScript: all the pairs of one operation page's tables
on one page beside it (sitegen.site.pages.compare_groups), each pair under its own anchor; a
cohort of n rows gives n − 1 pairs. Any other pair, across cohorts and GPUs included, is
compared by compare/index.html?a=RUN&b=RUN, whose script (compare.js) reads the two runs'
JSON twins and follows the same rules; it says so on the page.

The ratio and its interval are ranking.ratio_interval's, the rule that ranks neighbours
(one rule, one place): the bootstrap ratio of the two runs' replicates when both have raw
samples (a 95% interval), else the ratio of their interval ends (a range, not a 95% interval).
The verdict claims no more than the cohort table does: a run is called faster only when
ranking.separation would give it a rank of its own (the ratio's interval excludes 1 and the
gap is at least the minimum effect); never when either run is noisy (a noisy run holds no
strict rank), and never across comparison groups, where the ratio compares unlike setups.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from sitegen.format.model.common import Name
from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.site.charts.views import ChartView, samples_chart
from sitegen.site.pages.cohort_table import interval_text, rank_text, revision_label
from sitegen.site.pages.compare_layout import compare_page_of
from sitegen.facts.index import Index, RunFacts
from sitegen.site.text.labels import Link
from sitegen.facts.ranking import PUBLISHED, ratio_interval, separation
from sitegen.facts.uncertainty import REPLICATES

APP_PATH = "compare/index.html"
NO_PLACE = "Only runs that hold a place in the group are compared, as in its ranks."


@dataclass(frozen=True)
class Side:
    """One of the two runs, as the comparison's table shows it."""

    implementation: str
    run: Link
    version: str
    gpu: str
    timed_pass: str
    workload: str
    protocol: str
    value: str
    interval: str
    samples: str
    level: str
    rank: str
    observed: str


@dataclass(frozen=True)
class DiffRow:
    field: str
    a: str
    b: str


@dataclass(frozen=True)
class DiffSection:
    title: str
    rows: list[DiffRow]
    same: int
    """How many fields the two documents share with equal values."""


@dataclass(frozen=True)
class ComparePage:
    id: str
    """The pair's anchor on its comparisons page (labels.pair_id)."""
    title: str
    a: Side
    b: Side
    same_cohort: bool
    ratio: str
    """``B is 2.77× slower than A``, or why there is no ratio."""
    interval: str
    """The ratio's interval and where it comes from, or why there is none."""
    interval_label: str
    """``95% interval of the ratio`` for a bootstrap one, ``Range of the ratio`` for one from the runs' own intervals."""
    sides_interval_label: str
    """The sides table's interval row: ``95% interval``, or a range where a side's is its published p20–p80."""
    verdict: str
    distributions: list[ChartView]
    no_samples: list[str]
    diff: list[DiffSection]
    app: str
    """The same pair on the JavaScript page, which compares any two runs."""


def app_link(a: str, b: str | None = None) -> str:
    return APP_PATH + f"?a={a}" + (f"&b={b}" if b else "")


def neighbours(rows: list[RunFacts]) -> list[tuple[RunFacts, RunFacts]]:
    """Each row of a cohort table (its representatives, in table order) with the row just above it."""
    return [(rows[i - 1], rows[i]) for i in range(1, len(rows)) if rows[i - 1].value is not None and rows[i].value is not None]


def _side(facts: RunFacts) -> Side:
    samples = ""
    timing = facts.run.spec.timing
    if timing is not None and timing.samplesNs:
        samples = f"{len(timing.samplesNs):,}"
    return Side(
        implementation=L.implementation_label(facts.implementation), run=Link(f"run {L.run_short_id(facts.digest)}…", L.run_path(facts.name)),
        version=revision_label(facts), gpu=facts.gpu, timed_pass=facts.timed_pass, workload=L.workload_label(facts.workload),
        protocol=f"{facts.protocol.name} ({facts.protocol.model.spec.comparability.family})",
        value=units.show(facts.value, facts.unit) if facts.value is not None else "—",
        interval=interval_text(facts), samples=samples or "none published", level=facts.level, rank=rank_text(facts),
        observed=facts.observed,
    )


def ratio_words(a_name: str, b_name: str, a_value: float, b_value: float, unit: str) -> str:
    """``B is 2.77× slower than A``: a time as a reader says it (units.slower_than); any other
    metric (memory) ``more`` or ``less``, never ``slower``."""
    return f"{b_name} is {units.slower_than(b_value, a_value, unit or 'ns', a_name)}"


def _names(a: RunFacts, b: RunFacts) -> tuple[str, str]:
    """Labels that tell the two apart: the implementation, with its version or run when both share it."""
    first, second = L.implementation_label(a.implementation), L.implementation_label(b.implementation)
    if first != second:
        return first, second
    if revision_label(a) != revision_label(b):
        return f"{first} {revision_label(a)}", f"{second} {revision_label(b)}"
    return f"{first} (run {L.run_short_id(a.digest)}…)", f"{second} (run {L.run_short_id(b.digest)}…)"


def interval_label(how: str) -> str:
    """What a ratio's interval is called: only a bootstrap one is a 95% interval of the ratio."""
    return "95% interval of the ratio" if how.startswith("95% bootstrap") else "Range of the ratio"


def sides_interval_label(a: RunFacts, b: RunFacts) -> str:
    published = any(f.interval is not None and f.interval.method == PUBLISHED for f in (a, b))
    return "95% interval or p20–p80 range" if published else "95% interval"


def verdict(a: RunFacts, b: RunFacts) -> str:
    """What the pair shows by the rule the cohort table ranks by, and nothing more."""
    a_name, b_name = _names(a, b)
    if not (a.cohort and a.cohort == b.cohort):
        return ("Not a ranking: the two runs are not in one comparison group (the GPU, pass, workload, protocol "
                "family or metric differs), so the ratio is shown but neither is called faster.")
    unplaced = [f"{name} holds no place in its comparison group ({'; '.join(f.reasons)})"
                for name, f in ((a_name, a), (b_name, b)) if f.reasons]
    if unplaced:
        return f"No verdict: {'; '.join(unplaced)}. {NO_PLACE}"
    noisy = [f"{name} is noisy ({f.noisy})" for name, f in ((a_name, a), (b_name, b)) if f.noisy]
    if noisy:
        return f"No verdict: {'; '.join(noisy)}. A noisy run holds no strict rank, so neither is called faster."
    (ahead, ahead_name), (behind, behind_name) = sorted(((a, a_name), (b, b_name)), key=lambda pair: (pair[0].value, pair[0].name))
    distinct, reason, _ = separation(ahead, behind)
    if not ahead.value:
        reason = f"{ahead_name} measured 0"
    else:
        reason = f"{behind_name} is {reason}"
    if distinct:
        # Lower ranks first in every cohort; only a time is "faster" (memory is "lower").
        better = "faster" if (ahead.unit or "ns") == "ns" else f"lower in {ahead.metric}"
        return f"{ahead_name} is {better} by the rule that gives a distinct rank: {reason}."
    return f"No verdict: {reason}. By the rule that gives a distinct rank, the two share one."


def _ratio(a: RunFacts, b: RunFacts) -> tuple[str, str, str, str]:
    """(ratio sentence, interval label, interval sentence, verdict) for B's value over A's."""
    a_name, b_name = _names(a, b)
    if a.unit != b.unit or a.metric != b.metric:
        return ("No ratio: the runs measure different things "
                f"({a.metric} in {a.unit}, {b.metric} in {b.unit})."), "", "", ""
    if not a.value:
        return f"No ratio: {a_name} measured 0.", "", "", ""
    value = b.value / a.value
    sentence = ratio_words(a_name, b_name, a.value, b.value, a.unit) + f" (ratio {value:.3f}×)."
    found = ratio_interval(a, b)
    if found is None:
        return sentence, "", "No interval: neither raw samples nor published quantiles on both sides.", verdict(a, b)
    low, high, how = found
    label = interval_label(how)
    if how.startswith("95% bootstrap"):
        how = f"95% bootstrap interval of the ratio, from {REPLICATES:,} resamples of each run's raw samples"
    return sentence, label, f"{low:.3f}–{high:.3f}× ({how})", verdict(a, b)


def _without_results(raw: dict) -> dict:
    """The run document less what a comparison reads as its result rather than its identity (shown
    above the diff): spec.timing, spec.measurements and spec.sourceNative.metrics. Cut before
    flattening: KernelBench runs carry ten measurements each."""
    spec = {k: v for k, v in raw.get("spec", {}).items() if k not in ("timing", "measurements")}
    native = spec.get("sourceNative")
    if isinstance(native, dict) and "metrics" in native:
        spec["sourceNative"] = {k: v for k, v in native.items() if k != "metrics"}
    return {**raw, "spec": spec}


def _flat(raw: dict, prefix: str) -> dict[str, str]:
    return dict(L.flatten(raw, prefix))


_shared: dict[str, dict[str, str]] = {}
# Protocols and environments are shared by thousands of runs (KernelBench: ten environments
# for 8,486 runs): each is flattened once per process, not once per comparison.
_SHARED_LIMIT = 4096


def _flat_shared(record, prefix: str) -> dict[str, str]:
    key = f"{prefix}\0{record.digest}"
    found = _shared.get(key)
    if found is None:
        if len(_shared) >= _SHARED_LIMIT:
            _shared.clear()
        found = _shared[key] = _flat(record.raw, prefix)
    return found


def _section(title: str, a: dict[str, str], b: dict[str, str]) -> DiffSection:
    order = list(a) + [k for k in b if k not in a]
    rows = [DiffRow(k, a.get(k, "—"), b.get(k, "—")) for k in order if a.get(k) != b.get(k)]
    return DiffSection(title, rows, sum(1 for k in order if k in a and k in b and a[k] == b[k]))


def manifest_diff(a: RunFacts, b: RunFacts) -> list[DiffSection]:
    """The fields where the two canonical manifests differ: the run documents (less their results), protocols and environments."""
    return [
        _section("Identity: the run documents", _flat(_without_results(a.record.raw), "run"), _flat(_without_results(b.record.raw), "run")),
        _section("Protocol", _flat_shared(a.protocol, "protocol"), _flat_shared(b.protocol, "protocol")),
        _section("Environment", _flat_shared(a.environment, "environment"), _flat_shared(b.environment, "environment")),
    ]


def _distributions(pairs: list[tuple[str, RunFacts]]) -> tuple[list[ChartView], list[str]]:
    charts, missing = [], []
    for key, facts in pairs:
        chart = samples_chart(facts)
        name = L.implementation_label(facts.implementation)
        if chart is None:
            missing.append(f"{name}: no raw samples published; its interval is {interval_text(facts)}.")
        else:
            charts.append(dataclasses.replace(chart, id=f"samples-{key}", caption=f"{name}: {chart.caption[0].lower()}{chart.caption[1:]}"))
    return charts, missing


def compare_page(a: RunFacts, b: RunFacts, *, charts: bool = True) -> ComparePage:
    """The comparison of ``a`` (the row above) and ``b``. Without ``charts`` the two distributions
    are left to the runs' own record pages, which draw them (the comparisons page links there)."""
    a_name, b_name = _names(a, b)
    ratio, label, interval, said = _ratio(a, b)
    charts, missing = _distributions([("a", a), ("b", b)]) if charts else ([], [])
    return ComparePage(
        id=L.pair_id(a.digest, b.digest), title=f"Compare {a_name} and {b_name}", a=_side(a), b=_side(b),
        same_cohort=a.cohort is not None and a.cohort == b.cohort,
        ratio=ratio, interval=interval, interval_label=label, sides_interval_label=sides_interval_label(a, b),
        verdict=said, distributions=charts, no_samples=missing,
        diff=manifest_diff(a, b), app=app_link(a.name, b.name),
    )


def cohort_pairs(index: Index, operation: str) -> list[tuple[RunFacts, RunFacts]]:
    """Every pair the operation's cohort tables link, in a stable order."""
    keys = sorted({f.cohort for f in index.runs_of_operation.get(operation, []) if f.cohort})
    pairs = []
    for key in keys:
        pairs += neighbours([f for f in index.cohorts[key] if f.rank_label is not None])
    return pairs


@dataclass(frozen=True)
class CompareApp:
    """compare/index.html: the page compare.js fills in from the URL."""

    path: str
    title: str
    pattern: str
    """The run-name pattern compare.js accepts from the URL (anything else is not fetched)."""
    no_place: dict[str, str]
    """Run name → why it holds no place, for every run of a comparison group that is out of its ranking
    (failed, flagged, a dry run, a rerun not Verified): what a run's own JSON twin cannot tell the
    browser, since whether a signature is trusted is the registry's to say. compare.js reads it from
    this page's JSON twin and gives no verdict on such a pair, as the pages do."""
    replicates: int = REPLICATES


def compare_app(index: Index) -> CompareApp:
    # The names the registry admits (sitegen.format.model.common.Name): no "/" and no "..", so a name
    # from the URL can only ever name a run's folder.
    pattern = next(m.pattern for m in Name.__metadata__ if getattr(m, "pattern", None))
    no_place = {f.name: "; ".join(f.reasons) for f in index.runs if f.cohort and f.reasons}
    return CompareApp(APP_PATH, "Compare two runs", pattern, dict(sorted(no_place.items())))


def record_link(facts: RunFacts, index: Index) -> Link:
    """The record page's way in: the pre-rendered comparison with the row above its implementation's
    in the cohort table when there is one, else the page that compares it with any run."""
    shown = facts.ranked_as
    if facts.cohort and not facts.reasons and shown is facts:
        rows = [f for f in index.cohorts[facts.cohort] if f.rank_label is not None]
        for above, row in neighbours(rows):
            if row is facts:
                return Link(f"Compare with {L.implementation_label(above.implementation)}, the row above in its comparison group →",
                            L.compare_path(compare_page_of(facts.cohort, index), above.digest, facts.digest))
    return Link("Compare this run with any other →", app_link(facts.name))
