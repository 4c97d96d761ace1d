"""New results against a registry, by the ranking rule: the verdicts ``sitegen check`` prints and gates on.

Each run of the candidate folder is compared, within its cohort (the registry's cohort key:
operation, workload, pass, protocol family, GPU, metric), with its own implementation's previous
run there (same name, project and callable variant, across revisions: sitegen.facts.trend.trend_key), and
with the fastest run of another implementation. The comparison is ranking.separation, the test
neighbouring ranks use: the 95% interval of the ratio (bootstrap when both runs have raw
samples, else the range between their intervals) must exclude 1 and the gap reach the
protocol's minimum effect. Nothing else decides, so:

- never a verdict across cohorts (a run with no cohort in the registry is "not comparable");
- never on a noisy run, either side (ranking's noise rule) nor on a run out of every ranking
  (failed, flagged, dry run);
- never on a value alone: without an interval on both sides there is no verdict;
- a regression is a "slower" verdict against the implementation's own previous run whose gap
  is at least ``threshold`` (on top of the minimum effect the verdict already needs); a run ranked
  by another metric (memory) is "more" or "less", and never a regression.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from sitegen.core.problems import InputError, Problem

FASTER, SLOWER, TIE, NOT_COMPARABLE = "faster", "slower", "tie", "not comparable"
# A run ranked by another metric than time (Liger's memory rows) uses more or less of it: told so,
# never gated, since the gate is about speed.
MORE, LESS = "more", "less"


@dataclass
class Verdict:
    """One candidate run's comparison, as the table and the JSON state it."""

    run: str
    implementation: str
    operation: str
    workload: str
    gpu: str
    verdict: str
    """faster, slower, tie or not comparable; more or less for a run ranked by another metric than time (memory)."""
    why: str
    previous: str | None = None
    """The run it was compared with (its implementation's previous run in the cohort)."""
    ratio: float | None = None
    """Its value over the previous run's."""
    interval: tuple[float, float] | None = None
    """The 95% interval of that ratio."""
    regression: bool = False
    """Slower than the previous run beyond the threshold: what makes ``check`` exit 1."""
    versus_fastest: str | None = None
    """How it compares with the cohort's fastest run of another implementation."""

    def as_dict(self) -> dict:
        return asdict(self)


def load(candidate: Path, against: Path):
    """(index of registry ∪ candidate, candidate run digests, registry run digests); InputError when either is unreadable
    or the two disagree (a name holding two different documents)."""
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import check_references, index, open_registry
    from sitegen.facts.index import build_index

    found = open_registry(against)
    new = open_registry(candidate, check_lock_file=False)
    merged, problems = index(found.records + new.records)
    problems += check_references(merged)
    if problems:
        raise InputError(problems)
    ours = {r.digest for r in new.records if r.kind == "BenchmarkRun"}
    theirs = {r.digest for r in found.records if r.kind == "BenchmarkRun"}
    if not ours:
        raise InputError([Problem(str(candidate), "$", "holds no BenchmarkRun to check")])
    return build_index(merged, load_config(against)), ours, theirs


def compare(index, ours: set[str], theirs: set[str], threshold: float) -> list[Verdict]:
    """A verdict for each candidate run, in run-name order."""
    from sitegen.facts.trend import moment, trend_key

    out = []
    for facts in sorted((index.by_digest[d] for d in ours), key=lambda f: f.name):
        spec = facts.implementation.model.spec
        row = Verdict(run=facts.name, implementation=spec.name, operation=facts.operation.model.metadata.title or facts.operation.name,
                      workload=facts.workload.model.metadata.title or facts.workload.name, gpu=facts.product,
                      verdict=NOT_COMPARABLE, why="")
        out.append(row)
        if facts.reasons:
            row.why = "out of every ranking: " + "; ".join(facts.reasons)
            continue
        members = [f for f in index.cohorts.get(facts.cohort, []) if f.digest in theirs and f.digest not in ours]
        if not members:
            row.why = "no cohort in the registry: no run there of this operation, workload, pass, protocol family and GPU"
            continue
        eligible = [f for f in members if not f.reasons]
        own = [f for f in eligible if trend_key(f) == trend_key(facts) and moment(f.run.spec.observedAt) < moment(facts.run.spec.observedAt)]
        others = [f for f in eligible if trend_key(f)[1:] != trend_key(facts)[1:] and not f.noisy]
        if facts.noisy:
            row.why = f"noisy: {facts.noisy}"
            continue
        if others:
            fastest = min(others, key=lambda f: (f.value, f.name))
            verdict, why, _ = _against(facts, fastest, fastest.implementation.model.spec.name)
            row.versus_fastest = f"{verdict}: {why}"
        if not own:
            row.why = f"no earlier run of {spec.name} in the cohort"
            continue
        previous = max(own, key=lambda f: (moment(f.run.spec.observedAt), f.name))
        row.previous = previous.name
        if previous.noisy:
            row.why = f"its previous run {previous.name} is noisy: {previous.noisy}"
            continue
        verdict, why, ratio = _against(facts, previous, "its previous run")
        row.verdict, row.why = verdict, why
        if ratio is not None:
            row.ratio, row.interval = ratio[0], ratio[1]
        gap = facts.value / previous.value - 1 if previous.value else 0.0
        row.regression = verdict == SLOWER and gap >= threshold
    return out


def _against(facts, other, name: str) -> tuple[str, str, tuple[float, tuple[float, float]] | None]:
    """(verdict, why, (ratio, interval)) of ``facts`` against ``other`` by ranking.separation."""
    from sitegen.facts.ranking import ratio_interval, separation
    from sitegen.core import units

    if other.noisy:
        return NOT_COMPARABLE, f"{name} is noisy", None
    slower = facts.value >= other.value
    ahead, behind = (other, facts) if slower else (facts, other)
    distinct, reason, with_interval = separation(ahead, behind)
    found = ratio_interval(other, facts) if other.value else None
    ratio = (facts.value / other.value, (found[0], found[1])) if found else None
    # separation words its reason from the slower run's side; the table speaks of the candidate.
    said = units.slower_than(facts.value, other.value, facts.unit or "ns", name)
    detail = reason.split(": ", 1)[1] if ": " in reason else reason.split(", ", 1)[-1]
    if not with_interval:
        return NOT_COMPARABLE, f"{said}, but no interval on one side: a value alone cannot tell a change from noise", ratio
    if not distinct:
        return TIE, f"{said}: {detail}", ratio
    if facts.metric != "latency":
        return (MORE if slower else LESS), f"{said}: {detail}", ratio
    return (SLOWER if slower else FASTER), f"{said}: {detail}", ratio
