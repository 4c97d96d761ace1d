"""Ranks within a cohort: one row per implementation, shared ranks unless intervals separate.

Rules (the "How ranks work" text on operation pages says the same):

- Representative. Each implementation revision is ranked by one run: highest evidence
  level, then latest observedAt, then smallest digest. Its other eligible runs in the
  cohort are listed with it, never ranked.
- Interval. A run with raw samples gets a 95% bootstrap interval of its primary statistic
  (uncertainty.py). A run without them uses the source's published p20–p80 when there are
  any, a wider interval than a 95% one of the median, so a separation it shows is real.
  A run ranked by its mean that publishes only mean and standard deviation (KernelBench)
  gets mean ± 1.96 · stdev / √n, n the protocol's minSamples (its trial count): the
  normal approximation of the mean's 95% interval, labelled so, since there are no
  samples to resample. It assumes the trials independent; it is never wider for having
  fewer samples than the protocol promised, because minSamples is a lower bound.
- Noise. A run is noisy, and never holds a strict rank, when its harness said so
  (evidence.details.noisy), when its interval's half-width is over 5% of its value, or
  when its p80/p20 spread is over 1.5×: a number that moves that much from call to call
  does not order implementations.
- Neighbours. Going from the fastest, an implementation gets a rank of its own only if
  the 95% interval of the ratio to the one just ahead excludes 1 (the bootstrap ratio
  when both have samples; the ratio of interval ends otherwise) and the gap is at least
  the protocol's minimum effect (comparability.minEffect, 1% when absent). Otherwise it
  shares that rank ("=2"). Without an interval on either side the gap alone decides, and
  the rank says "no interval". Ranks count the implementations ahead (1, =2, =2, 4).
- Set aside. Ranks are places among the ranked runs. Where a run of another
  implementation measured faster but was set aside as noisy, or flagged only by a check
  that a slowed GPU fails (throttle, exclusive_gpu: its speed can only be understated),
  the rank's note names it ("faster but set aside: …"), and the run is no first place
  (RunFacts.leads), holds no badge and is no lead in a summary.

This follows criterion.rs (a change must clear both a confidence interval and a noise
threshold) and nvbench's compare script (relative noise decides before the difference).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from sitegen.core import units
from sitegen.facts.evidence import LEVELS
from sitegen.facts.runfacts import Interval, RunFacts
from sitegen.facts.uncertainty import bounds, replicates

PASS_ORDER = ("full", "forward", "backward")
MIN_EFFECT = 0.01
NOISY_HALF_WIDTH = 0.05
NOISY_SPREAD = 1.5
PUBLISHED = "published p20–p80"
NORMAL = "normal approximation of the mean"
Z95 = 1.959964


@dataclass
class _Estimate:
    facts: RunFacts
    draws: np.ndarray | None


def headline_pass(runs: list[RunFacts]) -> str | None:
    """"full" whenever the operation has it: only forward + backward together compares like with like."""
    present = {f.timed_pass for f in runs if f.cohort}
    return next((p for p in PASS_ORDER if p in present), min(present) if present else None)


def min_effect(facts: RunFacts) -> float:
    value = facts.protocol.model.spec.comparability.minEffect
    return MIN_EFFECT if value is None else value


def _known(facts: RunFacts) -> dict[str, float]:
    """Every statistic of the primary metric the run states (timing and measurements)."""
    spec = facts.run.spec
    known = {m.statistic: m.value for m in spec.measurements or [] if m.metric == facts.metric and m.unit == facts.unit}
    if spec.timing is not None and facts.metric == "latency":
        known.update({k: v for k, v in spec.timing.latencyNs.model_dump().items() if v is not None})
    return known


def draws_of(facts: RunFacts) -> np.ndarray | None:
    """The run's bootstrap replicates of its primary statistic: latency runs with raw samples only."""
    timing = facts.run.spec.timing
    if timing is not None and timing.samplesNs and facts.metric == "latency":
        return replicates(timing.samplesNs, facts.statistic, facts.digest)
    return None


def estimate(facts: RunFacts) -> _Estimate:
    """Set the run's interval and noise verdict; return its bootstrap replicates, if any."""
    draws = draws_of(facts)
    known = _known(facts)
    if draws is not None:
        facts.interval = Interval(*bounds(draws), "bootstrap")
    elif "p20" in known and "p80" in known:
        facts.interval = Interval(known["p20"], known["p80"], PUBLISHED)
    elif facts.statistic == "mean" and "stdev" in known and facts.value is not None:
        n = facts.protocol.model.spec.measurement.minSamples
        if n is not None and n >= 2:
            half = Z95 * known["stdev"] / math.sqrt(n)
            facts.interval = Interval(max(0.0, facts.value - half), facts.value + half, f"{NORMAL} (n = {n})")
    facts.noisy = _noise(facts, known)
    return _Estimate(facts, draws)


def _noise(facts: RunFacts, known: dict[str, float]) -> str | None:
    """Every reason the run is too noisy to rank, joined; None when there is none."""
    reasons = []
    if facts.details.get("noisy") is True:
        spread = facts.details.get("processSpreadRel")
        extra = f" (medians {units.percent(spread)} apart)" if isinstance(spread, (int, float)) and not isinstance(spread, bool) else ""
        reasons.append(f"the harness found its processes disagree{extra}")
    if facts.interval is not None and facts.interval.method != PUBLISHED and facts.value:
        half = (facts.interval.high - facts.interval.low) / 2 / facts.value
        if half > NOISY_HALF_WIDTH:
            reasons.append(f"95% interval ±{units.percent(half)} of the value (over {units.percent(NOISY_HALF_WIDTH)})")
    low, high = known.get("p20"), known.get("p80")
    if low and high and high / low > NOISY_SPREAD:
        reasons.append(f"p80/p20 = {high / low:.2f}× (over {NOISY_SPREAD:g}×)")
    return "; ".join(reasons) or None


def _representative_order(facts: RunFacts) -> tuple:
    # Highest level first, then newest, then smallest digest.
    return (-LEVELS.index(facts.level), _negated(facts.run.spec.observedAt), facts.digest)


def _negated(text: str) -> tuple:
    return tuple(-ord(c) for c in text)


def _ratio_interval(ahead: _Estimate, behind: _Estimate) -> tuple[float, float, str] | None:
    a, b = ahead.facts, behind.facts
    if ahead.draws is not None and behind.draws is not None and (ahead.draws > 0).all():
        low, high = bounds(behind.draws / ahead.draws)
        return low, high, "95% bootstrap interval"
    if a.interval and b.interval and a.interval.high > 0 and a.interval.low > 0:
        kinds = {a.interval.method, b.interval.method}
        return b.interval.low / a.interval.high, b.interval.high / a.interval.low, f"range from each run's {' and '.join(sorted(kinds))}"
    return None


def ratio_interval(ahead: RunFacts, behind: RunFacts) -> tuple[float, float, str] | None:
    """The 95% interval of ``behind``'s value over ``ahead``'s, by the rule neighbours are ranked by:
    the bootstrap ratio when both have raw samples, else the ratio of interval ends; None without.
    Reads the runs' intervals as ranking set them (an index's runs are ranked)."""
    return _ratio_interval(_Estimate(ahead, draws_of(ahead)), _Estimate(behind, draws_of(behind)))


def separation(ahead: RunFacts, behind: RunFacts) -> tuple[bool, str, bool]:
    """(distinct rank?, reason, had an interval?) for any two runs of one cohort, ``ahead`` no slower:
    the test neighbours are ranked by, for pages that state a verdict on a pair (compare, trends).
    Reads the runs' intervals as ranking set them."""
    return _separate(_Estimate(ahead, draws_of(ahead)), _Estimate(behind, draws_of(behind)))


def _separate(ahead: _Estimate, behind: _Estimate) -> tuple[bool, str, bool]:
    """(distinct rank?, reason, had an interval?) for two neighbours, ``ahead`` no slower."""
    a, b = ahead.facts, behind.facts
    threshold = max(min_effect(a), min_effect(b))
    name = a.implementation.model.spec.name
    if not a.value:
        # Nothing is a ratio of zero: a zero ahead separates from anything above it, ties with another zero.
        return b.value > 0, f"{name} measured 0 and this {units.show(b.value, b.unit)}", False
    gap = b.value / a.value - 1
    interval = _ratio_interval(ahead, behind)
    gap_text = units.slower_than(b.value, a.value, b.unit or "ns", name)
    if interval is None:
        if gap >= threshold:
            return True, f"{gap_text}, at least the {units.percent(threshold)} minimum effect (no interval)", False
        return False, f"{gap_text}, under the {units.percent(threshold)} minimum effect (no interval)", False
    low, high, how = interval
    ci = f"ratio {b.value / a.value:.3f}× ({how} {low:.3f}–{high:.3f}×)"
    if low <= 1:
        return False, f"{gap_text}: {ci} includes 1", True
    if gap < threshold:
        return False, f"{gap_text}: under the {units.percent(threshold)} minimum effect, though the {ci} excludes 1", True
    return True, f"{gap_text}: {ci} excludes 1 and the gap is at least the {units.percent(threshold)} minimum effect", True


def rank_cohort(members: list[RunFacts]) -> None:
    """Representatives, intervals, noise and ranks of one cohort's runs."""
    estimates = {id(f): estimate(f) for f in members if f.value is not None}
    by_implementation: dict[str, list[RunFacts]] = {}
    for facts in members:
        if not facts.reasons:
            by_implementation.setdefault(facts.implementation.digest, []).append(facts)
    representatives = []
    for runs in by_implementation.values():
        runs.sort(key=_representative_order)
        head, *rest = runs
        head.also = sorted(rest, key=lambda f: (f.value, f.name))
        for other in rest:
            other.representative = head
        representatives.append(head)
    representatives.sort(key=lambda f: (f.value, f.name))
    ranked = [f for f in representatives if f.noisy is None]
    for facts in representatives:
        if facts.noisy is not None:
            facts.rank_label, facts.rank_reason = "noisy", f"noisy: {facts.noisy}"
    previous, rank = None, 0
    for position, facts in enumerate(ranked, start=1):
        if previous is None:
            rank, with_interval = 1, facts.interval is not None
            facts.rank_reason = None
        else:
            distinct, reason, with_interval = _separate(estimates[id(previous)], estimates[id(facts)])
            facts.rank_reason = reason
            if distinct:
                rank = position
        facts.rank = rank
        if not with_interval or facts.interval is None:
            facts.interval_note = "no interval"
        previous = facts
    counts: dict[int, int] = {}
    for facts in ranked:
        counts[facts.rank] = counts.get(facts.rank, 0) + 1
    leader = ranked[0] if ranked else None
    aside = _set_aside(members)
    for facts in ranked:
        facts.rank_label = f"={facts.rank}" if counts[facts.rank] > 1 else str(facts.rank)
        facts.leader = leader
        # How sure the gap to the leader is, which the summary states beside the ratio.
        if facts is not leader and leader.value:
            facts.leader_ratio = _ratio_interval(estimates[id(leader)], estimates[id(facts)])
        facts.faster_set_aside = [f"{name} ({why})" for value, name, why in aside
                                  if value < facts.value and name != facts.implementation.model.spec.name]


# Integrity checks that fail when the GPU, not the code, was slowed (throttled clocks, another
# process on the board): a run flagged by these alone measured no faster than it would have run,
# so if it still beat a ranked run, that speed is real. Every other check fails on the timing
# itself (faster than the memory floor, work hidden past the timer, a repeated input served from
# cache...): such a run's speed is the thing in doubt and undercuts no one.
SLOWING_CHECKS = ("throttle", "exclusive_gpu")


def _set_aside(members: list[RunFacts]) -> list[tuple[float, str, str]]:
    """(value, implementation, why) of each implementation's fastest run that the cohort measured but did
    not rank: a noisy representative, or a run flagged only by SLOWING_CHECKS (and nothing else).

    Ranks are places among the ranked runs only. A set-aside run that measured faster than a
    ranked one still ran (its output passed the gate; only the steadiness or the conditions of
    its timing are in doubt), so the ranked run's rank says so, and no page calls it first or
    fastest (a badge, a tally of firsts). A failed, retracted or dry run is not counted, nor one
    whose flags doubt the timing itself: their speed says nothing."""
    fastest: dict[str, tuple[float, str, str]] = {}
    for f in members:  # a cohort's members all have a value: the cohort key needs the primary metric
        checks = f.failed_checks
        if f.reasons and all(r.startswith("flagged: ") for r in f.reasons) and all(c in SLOWING_CHECKS for c in checks):
            why = "flagged: " + ", ".join(checks)
        elif not f.reasons and f.representative is None and f.rank_label == "noisy":
            why = "noisy"
        else:
            continue
        name = f.implementation.model.spec.name
        if name not in fastest or f.value < fastest[name][0]:
            fastest[name] = (f.value, name, why)
    return sorted(fastest.values())


def tally_firsts(firsts: Iterable[tuple[str, bool]]) -> dict[str, list[int]]:
    """{implementation: [firsts alone, firsts shared]} of (implementation, first alone) pairs,
    one a first place: how the home page and the operation summary count wins."""
    counts: dict[str, list[int]] = {}
    for name, alone in firsts:
        counts.setdefault(name, [0, 0])[0 if alone else 1] += 1
    return counts
