"""The registry as its readers (the site, the gate, attest) see it: each run with its documents, cohort, rank and level.

Everything here is computed once per build in linear time (dicts keyed by digest and
cohort), so pages only look things up.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

from sitegen.registry.config import Config
from sitegen.core.digest import comparison_key
from sitegen.format.loader import Record
from sitegen.format.model import BenchmarkRun
from sitegen.registry.folder import Registry
from sitegen.core.signing import trusted_keys
from sitegen.facts.evidence import assign_levels
from sitegen.facts.ranking import rank_cohort
from sitegen.facts.runfacts import RunFacts
from sitegen.rules.verdict import pass_from_benchmark

__all__ = ["Index", "RunFacts", "build_index", "gpu_slugs", "path_slug", "primary", "timed_pass"]

UNKNOWN_PASS = "unspecified"


@dataclass
class Index:
    """Every lookup the pages need."""

    registry: Registry
    config: Config
    runs: list[RunFacts]
    by_digest: dict[str, RunFacts]
    cohorts: dict[str, list[RunFacts]]
    operations: list[Record]
    runs_of_operation: dict[str, list[RunFacts]]
    runs_of_implementation: dict[str, list[RunFacts]]
    runs_of_gpu: dict[str, list[RunFacts]]
    dangling_reruns: dict[str, str] = field(default_factory=dict)


def path_slug(text: str) -> str:
    """``NVIDIA H100 80GB HBM3`` → ``nvidia-h100-80gb-hbm3``: a safe path segment, maybe empty."""
    out, dash = [], False
    for char in text.lower():
        if char.isascii() and char.isalnum():
            out.append(char)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    return "".join(out).strip("-")


def gpu_slugs(products: set[str]) -> dict[str, str]:
    """A distinct path segment for each product: its slug, or slug + hash when that is ambiguous.

    Slugs drop punctuation and non-ASCII, so "Acme X.1" and "Acme X-1" share one and a
    Cyrillic name has none. Each product whose slug is empty or shared gets the first 8
    hex of the SHA-256 of its name appended: stable across builds, distinct in practice,
    and every product with a slug of its own keeps it.
    """
    by_slug: dict[str, list[str]] = defaultdict(list)
    for product in sorted(products):
        by_slug[path_slug(product)].append(product)
    segments = {}
    for base, group in by_slug.items():
        for product in group:
            segments[product] = base if _plain(base) and len(group) == 1 else _hashed(base[:MAX_SLUG] or "gpu", product)
    # A hashed segment could in principle equal another product's plain slug (a name
    # ending in the same 8 hex): then that product is hashed as well.
    taken = {segment for product, segment in segments.items() if segment != path_slug(product)}
    for product, segment in segments.items():
        if segment in taken and segment == path_slug(product):
            segments[product] = _hashed(segment, product)
    return segments


# A product may be 300 characters; a path segment must stay under 255 bytes.
MAX_SLUG = 100


def _plain(base: str) -> bool:
    """A slug usable as it is: not empty, not too long, not a Windows device name."""
    from sitegen.format.model.common import WINDOWS_DEVICES

    return bool(base) and len(base) <= MAX_SLUG and base not in WINDOWS_DEVICES


def _hashed(base: str, product: str) -> str:
    return f"{base}-{hashlib.sha256(product.encode()).hexdigest()[:8]}"


def timed_pass(run: BenchmarkRun) -> str:
    """spec.timedPass, else the part after "/" of the source's benchmark name."""
    spec = run.spec
    if spec.timedPass:
        return spec.timedPass
    found = pass_from_benchmark(spec.sourceNative.benchmark) if spec.sourceNative else None
    return UNKNOWN_PASS if found is None else found


def primary(run: BenchmarkRun, protocol_statistic: str) -> tuple[str, str, float, str] | None:
    """(metric, statistic, value, unit) that ranks the run, or None.

    Always at the protocol's primary statistic, so one cohort compares like with like: a
    run's own timing.primaryStatistic is ignored (a run declaring "min" must not beat the
    others' medians). Timed runs rank by latencyNs at that statistic; untimed ones
    (memory) by the measurement at it.
    """
    spec = run.spec
    if spec.timing is not None:
        value = getattr(spec.timing.latencyNs, protocol_statistic, None)
        return None if value is None else ("latency", protocol_statistic, float(value), "ns")
    candidates = sorted(
        (m.metric, m.unit, m.value) for m in spec.measurements or [] if m.statistic == protocol_statistic
    )
    if not candidates:
        return None
    metric, unit, value = candidates[0]
    return metric, protocol_statistic, float(value), unit


def _facts(record: Record, registry: Registry) -> RunFacts:
    spec = record.model.spec
    get = registry.by_digest.__getitem__
    workload = get(spec.workloadDigest)
    protocol = get(spec.protocolDigest)
    environment = get(spec.environmentDigest)
    operation = get(workload.model.spec.operationSpecDigest)
    ranking_statistic = protocol.model.spec.measurement.primaryStatistic
    found = primary(record.model, ranking_statistic)
    metric, statistic, value, unit = found if found else (None, None, None, None)
    the_pass = timed_pass(record.model)
    cohort = None
    if metric is not None:
        hardware = environment.model.spec.hardware
        cohort = comparison_key(
            operation=operation.digest, workload=workload.digest, timed_pass=the_pass,
            family=protocol.model.spec.comparability.family, product=hardware.product,
            architecture=hardware.architecture, metric=metric,
        )
    reasons = []
    if spec.status != "passed":
        reasons.append(f"status {spec.status}" + (f" ({spec.statusReason})" if spec.statusReason else ""))
    if metric is None:
        measured = spec.timing is not None or bool(spec.measurements)
        reasons.append(f"no {ranking_statistic}, the protocol's primary statistic" if measured else "no primary metric")
    if spec.evidence and spec.evidence.dryRun:
        reasons.append("dry run (CPU rehearsal)")
    # Any failed integrity check takes the run out of every ranking, whatever its status says.
    flagged = [f"{check.name}: {check.detail}" if check.detail else check.name
               for check in (spec.evidence.integrity if spec.evidence else None) or [] if not check.passed]
    reasons += [f"flagged: {text}" for text in flagged]
    return RunFacts(
        record=record, implementation=get(spec.implementationDigest), workload=workload,
        operation=operation, protocol=protocol, environment=environment, timed_pass=the_pass,
        metric=metric, statistic=statistic, value=value, unit=unit, cohort=cohort, reasons=reasons,
        flagged=flagged,
    )


def build_index(registry: Registry, config: Config, *, exclude_dry_runs: bool = False, rank=rank_cohort) -> Index:
    """Index a validated registry once; everything later is a lookup.

    ``rank`` ranks one cohort as ranking.rank_cohort does (rankcache.Rankings.rank: from
    an earlier build where nothing it reads changed)."""
    runs = [_facts(r, registry) for r in registry.of_kind("BenchmarkRun")]
    if exclude_dry_runs:
        runs = [f for f in runs if not f.dry_run]
    runs.sort(key=lambda f: f.name)
    by_digest = {f.digest: f for f in runs}
    cohorts: dict[str, list[RunFacts]] = defaultdict(list)
    by_operation: dict[str, list[RunFacts]] = defaultdict(list)
    by_implementation: dict[str, list[RunFacts]] = defaultdict(list)
    by_gpu: dict[str, list[RunFacts]] = defaultdict(list)
    slugs = gpu_slugs({f.product for f in runs})
    for facts in runs:
        facts.gpu_slug = slugs[facts.product]
        if facts.cohort:
            cohorts[facts.cohort].append(facts)
        by_operation[facts.operation.name].append(facts)
        by_implementation[facts.implementation.name].append(facts)
        by_gpu[facts.gpu_slug].append(facts)
    # Levels first: a cohort's representative run is chosen by level.
    assign_levels(runs, trusted_keys(config.trust), config.reviewed)
    for members in cohorts.values():
        members.sort(key=lambda f: (f.reasons != [], f.value, f.name))
        rank(members)
    for attestation in registry.of_kind("Attestation"):
        target = by_digest.get(attestation.model.spec.run)
        if target is not None:
            target.attestations.append(attestation)
    dangling = {}
    for facts in runs:
        facts.attestations.sort(key=lambda a: (a.model.spec.date, a.name))
        evidence = facts.run.spec.evidence
        if evidence and evidence.rerunOf:
            original = by_digest.get(evidence.rerunOf.runDigest)
            if original is None:
                dangling[facts.digest] = evidence.rerunOf.runDigest
            else:
                facts.rerun_of = original
                original.reruns.append(facts)
    index = Index(
        registry=registry, config=config, runs=runs, by_digest=by_digest, cohorts=dict(cohorts),
        operations=sorted(registry.of_kind("OperationSpec"), key=lambda r: r.name),
        runs_of_operation=dict(by_operation), runs_of_implementation=dict(by_implementation),
        runs_of_gpu=dict(by_gpu), dangling_reruns=dangling,
    )
    return index
