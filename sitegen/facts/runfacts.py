"""One BenchmarkRun as its readers see it: its documents, cohort, level, interval and rank.

A module of its own because the evidence rules, the ranking and the index all need it,
and none of them should import another to get it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sitegen.format.loader import Record
from sitegen.format.model import BenchmarkRun
from sitegen.core.signing import Outcome


@dataclass(frozen=True)
class Interval:
    """A 95% interval of a run's primary statistic, and where it comes from."""

    low: float
    high: float
    method: str
    """``bootstrap`` (from raw samples) or ``published p20–p80`` (the source's own quantiles)."""


@dataclass(eq=False, slots=True)
class RunFacts:
    """One BenchmarkRun and everything derived about it."""

    record: Record
    implementation: Record
    workload: Record
    operation: Record
    protocol: Record
    environment: Record
    timed_pass: str
    metric: str | None
    statistic: str | None
    value: float | None
    unit: str | None
    cohort: str | None
    reasons: list[str]
    """Why the run is out of every ranking (status, no primary value, dry run, failed checks)."""
    flagged: list[str] = field(default_factory=list)
    """Failed integrity checks, ``name: detail``: these take a run out of every ranking."""
    level: str = "Reported"
    level_reason: str | None = None
    signature: Outcome | None = None
    """A controlled rerun's sitegen.core.signing.Outcome against the trust list; None for any other run."""
    """Why the run stops below Verified although it is a controlled rerun (a check that did not run)."""
    interval: Interval | None = None
    noisy: str | None = None
    """Why the run is too noisy to hold a strict rank, or None."""
    representative: RunFacts | None = None
    """For a run that is not its implementation's representative in its cohort: the one that is."""
    also: list[RunFacts] = field(default_factory=list)
    """For a representative: the implementation's other eligible runs in the cohort."""
    rank: int | None = None
    """Position among the cohort's ranked implementations (shared by a tie); representatives only."""
    rank_label: str | None = None
    """``1``, ``=2`` or ``noisy``; representatives only."""
    interval_note: str | None = None
    """``no interval`` when a neighbour comparison had no interval to stand on."""
    rank_reason: str | None = None
    """Why the rank is shared or distinct from the implementation ranked just ahead."""
    leader: RunFacts | None = None
    leader_ratio: tuple[float, float, str] | None = None
    """For a ranked run behind the leader: (low, high, how) of the ratio of its value to the leader's,
    the 95% bootstrap interval when both have samples; None for the leader or without intervals."""
    faster_set_aside: list[str] = field(default_factory=list)
    """For a ranked representative: the implementations whose runs in the cohort measured faster but were
    set aside (noisy, or flagged by an integrity check), each ``name (why)``. Its rank is a place among
    the ranked runs only: no page calls it first or fastest while this is not empty."""
    attestations: list[Record] = field(default_factory=list)
    reruns: list[RunFacts] = field(default_factory=list)
    rerun_of: RunFacts | None = None
    gpu_slug: str = ""
    """Path segment of the GPU page of this run's product (unique per product; see gpu_slugs)."""

    @property
    def run(self) -> BenchmarkRun:
        return self.record.model

    @property
    def name(self) -> str:
        return self.record.name

    @property
    def digest(self) -> str:
        return self.record.digest

    @property
    def observed(self) -> str:
        return self.run.spec.observedAt[:10]

    @property
    def gpu(self) -> str:
        hardware = self.environment.model.spec.hardware
        return f"{hardware.product} ({hardware.architecture})"

    @property
    def product(self) -> str:
        return self.environment.model.spec.hardware.product

    @property
    def harness(self) -> str:
        return self.protocol.model.spec.harness.name

    @property
    def dry_run(self) -> bool:
        evidence = self.run.spec.evidence
        return bool(evidence and evidence.dryRun)

    @property
    def holds_rank(self) -> bool:
        """Its implementation's representative in a cohort, ranked (strict or shared, not noisy): what a badge states."""
        return self.rank is not None and bool(self.cohort) and self.representative is None and self.rank_label not in (None, "noisy")

    @property
    def failed_checks(self) -> list[str]:
        """The names of the integrity checks it failed (``throttle``, ``roofline``…)."""
        return [text.split(":")[0] for text in self.flagged]

    @property
    def rank_note(self) -> str | None:
        """What the rank's reader must know beside it: ``no interval``, and the faster runs set aside."""
        notes = [self.interval_note] if self.interval_note else []
        if self.faster_set_aside:
            notes.append("faster but set aside: " + ", ".join(self.faster_set_aside))
        return " · ".join(notes) or None

    @property
    def leads(self) -> bool:
        """First in its cohort with no faster run set aside: what a tally of firsts counts."""
        return self.rank == 1 and self.representative is None and not self.faster_set_aside

    @property
    def ranked_as(self) -> RunFacts:
        """The run that stands for this one's implementation in the cohort table."""
        return self.representative or self

    @property
    def details(self) -> dict:
        evidence = self.run.spec.evidence
        return dict(evidence.details or {}) if evidence else {}
