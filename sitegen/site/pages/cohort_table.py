"""One cohort as a table: a row per implementation, its rank, interval, roofline share and pass note."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.registry.config import Config
from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.site.text.labels import Link
from sitegen.facts.roofline import roofline
from sitegen.facts.ranking import NORMAL, PUBLISHED
from sitegen.facts.runfacts import RunFacts


@dataclass(frozen=True)
class AlsoMeasured:
    run: Link
    value: str
    level: str
    noisy: bool


@dataclass(frozen=True)
class RankedRow:
    rank: str
    """``1``, ``=2`` or ``noisy``."""
    rank_note: str | None
    """``no interval`` when the rank stands on values alone."""
    rank_reason: str | None
    run: Link
    revision: str
    value: str
    interval: str
    ratio: str
    roofline: str
    level: str
    observed: str
    pass_note: str | None
    also: list[AlsoMeasured]
    compare: Link | None = None
    """The pre-rendered comparison with the row above (sitegen.site.pages.compare), from the second row on."""
    interval_label: str = "Interval"
    """What ``interval`` is (interval_label): a phone shows it beside the value, as the header does on a screen."""


@dataclass(frozen=True)
class UnrankedRow:
    run: Link
    value: str
    reasons: str
    flagged: bool


@dataclass(frozen=True)
class CohortView:
    id: str
    heading: str
    key: str
    timed_pass: str
    dtype: str
    workload: str
    ranked: list[RankedRow]
    unranked: list[UnrankedRow]
    interval_header: str = "Interval"
    """The interval column's header: the one kind its rows share, else what they may be."""


def value_text(facts: RunFacts) -> str:
    return units.show(facts.value, facts.unit) if facts.value is not None else "—"


def rank_text(facts: RunFacts) -> str:
    """A run's rank wherever runs are listed: its implementation's, with what stands behind it."""
    if facts.flagged:
        return "flagged: " + ", ".join(facts.failed_checks)
    if facts.reasons or facts.cohort is None:
        return "not ranked"
    shown = facts.ranked_as
    label = shown.rank_label or "not ranked"
    if shown.rank_note:
        label += f" · {shown.rank_note}"
    if facts.noisy and shown is not facts:
        label += " · this run noisy"
    return label + (" (another run represents it)" if facts.representative is not None else "")


# The kinds of a run's own interval, as its column header and a phone's card name them: only a
# bootstrap of raw samples is a 95% interval; the others are ranges the page explains.
INTERVAL_LABELS = {"bootstrap": "95% bootstrap interval", PUBLISHED: "p20–p80 spread", NORMAL: "Normal-approximation range"}


def interval_label(facts: RunFacts) -> str:
    return INTERVAL_LABELS.get(facts.interval.method, "Interval") if facts.interval is not None else "Interval"


def interval_header(labels: list[str]) -> str:
    kinds = set(labels)
    return kinds.pop() if len(kinds) == 1 else "Interval or range"


def interval_text(facts: RunFacts) -> str:
    if facts.interval is None:
        return "no interval"
    span = units.spread(facts.interval.low, facts.interval.high, facts.unit)
    if facts.interval.method == "bootstrap":
        return span
    return f"{span} (p20–p80)" if facts.interval.method == PUBLISHED else f"{span} (normal approx. of the mean)"


def pass_note(facts: RunFacts) -> str | None:
    notes = facts.implementation.model.spec.passNotes
    return getattr(notes, facts.timed_pass, None) if notes and facts.timed_pass in ("forward", "backward", "full") else None


def revision_label(facts: RunFacts) -> str:
    """The implementation revision as pages name it: its version, else its commit (12 digits), else ``unknown``."""
    revision = facts.implementation.model.spec.projectRevision
    return revision.version or (revision.commit or "")[:12] or "unknown"


def ranked_row(facts: RunFacts, leader: RunFacts | None, config: Config, above: RunFacts | None = None,
               compare_page: str = "") -> RankedRow:
    """``compare_page``: the page of this row's table's neighbour comparisons (sitegen.site.pages.compare_layout)."""
    figures = roofline(facts, config)
    compare = None
    if above is not None and above.value is not None and facts.value is not None:
        compare = Link(f"compare with {L.implementation_label(above.implementation)}", L.compare_path(compare_page, above.digest, facts.digest))
    return RankedRow(
        rank=facts.rank_label or "—", rank_note=facts.rank_note, rank_reason=facts.rank_reason,
        run=Link(L.implementation_label(facts.implementation), L.run_path(facts.name)), revision=revision_label(facts),
        value=value_text(facts), interval=interval_text(facts),
        ratio=units.ratio(facts.value, leader.value) if leader else "—",
        roofline=figures.column() if figures else "—", level=facts.level, observed=facts.observed,
        pass_note=pass_note(facts),
        also=[AlsoMeasured(Link(value_text(o), L.run_path(o.name)), value_text(o), o.level, o.noisy is not None) for o in facts.also],
        compare=compare, interval_label=interval_label(facts),
    )


def cohort_view(key: str, members: list[RunFacts], config: Config, compare_page: str) -> CohortView:
    first = members[0]
    representatives = [f for f in members if f.rank_label is not None]
    leader = next((f for f in representatives if f.rank is not None), None)
    family = first.protocol.model.spec.comparability.family
    ranked = [ranked_row(f, leader, config, representatives[i - 1] if i else None, compare_page) for i, f in enumerate(representatives)]
    return CohortView(
        id=L.cohort_id(key), heading=f"{L.workload_label(first.workload)} · {first.timed_pass} · {first.metric} ({first.statistic}) · {family}",
        key=L.short_digest(key), timed_pass=first.timed_pass, dtype=L.dtype_label(first.workload) or "—",
        workload=L.workload_label(first.workload),
        ranked=ranked,
        unranked=[
            UnrankedRow(Link(L.implementation_label(f.implementation), L.run_path(f.name)), value_text(f),
                        "; ".join(f.reasons), bool(f.flagged))
            for f in members if f.reasons
        ],
        interval_header=interval_header([r.interval_label for r in ranked]),
    )
