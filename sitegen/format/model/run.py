"""What was measured: BenchmarkRun, and community notes on it: Attestation."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints, model_validator

from sitegen.format.model.common import (
    API_VERSION, Day, Digest, HttpUrl, Metadata, Name, NonNegative, NonNegativeInt, Number,
    PositiveInt, Scalar, Short, Strict, Text, Timestamp,
)
from sitegen.format.model.definitions import Key, Pass
from sitegen.format.model.setup import Statistic


def _ordered(values: dict[str, float], label: str) -> None:
    """Quantiles must not cross: p20 <= median <= p80, min <= everything <= max."""
    order = ["min", "p20", "median", "p80", "max"]
    present = [(k, values[k]) for k in order if values.get(k) is not None]
    for (lo_key, lo), (hi_key, hi) in zip(present, present[1:]):
        if lo > hi:
            raise ValueError(f"{label}: {lo_key} ({lo}) is greater than {hi_key} ({hi})")


class LatencyNs(Strict):
    """Summary statistics of the timed samples, in integer nanoseconds."""

    median: NonNegativeInt | None = None
    """Median."""
    mean: NonNegativeInt | None = None
    """Mean."""
    min: NonNegativeInt | None = None
    """Fastest sample."""
    max: NonNegativeInt | None = None
    """Slowest sample."""
    p20: NonNegativeInt | None = None
    """20th percentile."""
    p80: NonNegativeInt | None = None
    """80th percentile."""
    stdev: NonNegativeInt | None = None
    """Standard deviation."""

    @model_validator(mode="after")
    def _check_order(self) -> "LatencyNs":
        _ordered(self.model_dump(), "latencyNs")
        return self


class ProcessTiming(Strict):
    """One process's share of a measurement repeated across processes."""

    medianNs: NonNegativeInt
    """Median of this process's samples."""
    samplesNs: list[NonNegativeInt]
    """Raw samples of this process."""
    hostTimedNs: NonNegativeInt | None = None
    """Per-call time of a synchronized host-timed batch, as a cross-check."""
    hostWaitNs: NonNegativeInt | None = None
    """Per-call time the host still waited, in that batch, after the call returned: GPU work the call left running on any stream."""
    emptySyncNs: NonNegativeInt | None = None
    """Median time a device-wide synchronize took once an empty call's stream was done, in this process: taken off the calls' waits for hiddenNs."""
    hiddenNs: NonNegativeInt | None = None
    """Median time the call's work went on after its own stream was done (until every stream was), less an empty call's: work it handed back unfinished, which its samples do not hold."""


class Timing(Strict):
    """Latency of the timed call."""

    latencyNs: LatencyNs
    """Summary statistics."""
    primaryStatistic: Statistic
    """The statistic that ranks this run."""
    samplesNs: list[NonNegativeInt] | None = None
    """All raw samples, in the order taken."""
    processes: list[ProcessTiming] | None = None
    """Per-process samples when repeated across processes."""

    @model_validator(mode="after")
    def _primary_present(self) -> "Timing":
        if getattr(self.latencyNs, self.primaryStatistic, None) is None:
            raise ValueError(f"latencyNs has no {self.primaryStatistic}, the primary statistic")
        return self


class MeasuredValue(Strict):
    """One reported number."""

    metric: Key
    """What is measured, e.g. ``latency`` or ``memory``."""
    statistic: Statistic
    """Which statistic, e.g. ``p20``."""
    unit: Short
    """Unit, e.g. ``ns`` or ``MB``."""
    value: NonNegative
    """The value."""


class SourceNative(Strict):
    """The run as its source published it, before conversion."""

    source: Key
    """Source identifier, e.g. ``liger-kernel-bench``."""
    benchmark: Short
    """Benchmark name in the source, e.g. ``jsd/forward``."""
    externalId: Short
    """Identifier of the run in the source."""
    metrics: dict[Key, Number]
    """Metrics under the source's own names, e.g. ``{"ms_50": 9.11}``."""


class CheckedCase(Strict):
    """One input the correctness gate checked."""

    shape: list[PositiveInt]
    """Input shape."""
    seed: NonNegativeInt
    """Random seed of the inputs."""
    maxAbsError: NonNegative
    """Largest absolute error of loss and gradient against the reference."""
    maxRelError: NonNegative
    """Largest relative error (norm-wise) against the reference."""
    fullyWritten: bool
    """Whether every output element was written (none left NaN from poisoning)."""
    passed: bool
    """Whether the case met the protocol's bounds."""


class RunCorrectness(Strict):
    """Outcome of the correctness check."""

    status: Literal["passed", "failed", "not_checked"]
    """Outcome."""
    comparator: Short
    """Comparison rule used."""
    reference: Short | None = None
    """Reference implementation."""
    maxAbsError: NonNegative | None = None
    """Worst absolute error over all checked cases."""
    maxRelError: NonNegative | None = None
    """Worst relative error over all checked cases."""
    cases: list[CheckedCase] | None = None
    """Every checked case."""
    notes: Text | None = None
    """Anything else a reader should know."""


class Artifact(Strict):
    """A file published with the run (trace, log, raw data)."""

    name: Short
    """File name."""
    url: HttpUrl | None = None
    """Where to get it."""
    digest: Digest | None = None
    """SHA-256 of its bytes."""
    mediaType: Short | None = None
    """MIME type."""


class IntegrityCheck(Strict):
    """One integrity check of a controlled rerun."""

    name: Key
    """Check name, e.g. ``roofline``, ``repeated_input``, ``throttle``, ``exclusive_gpu``."""
    passed: bool
    """Outcome."""
    detail: Text | None = None
    """Numbers behind the outcome."""


class GpuState(Strict):
    """GPU state read through NVML."""

    smClockMHz: NonNegativeInt | None = None
    """SM clock."""
    memoryClockMHz: NonNegativeInt | None = None
    """Memory clock."""
    temperatureC: int | None = None
    """Temperature."""
    throttleReasons: list[Key] | None = None
    """Active clock-throttle reasons (idle and application-clock settings excluded)."""


class Instance(Strict):
    """The particular machine; not part of the environment's identity."""

    gpuUuid: Short | None = None
    """GPU UUID."""
    hostname: Short | None = None
    """Host name."""


class RerunOf(Strict):
    """The reported run this run re-measures."""

    runDigest: Digest
    """Digest of the original run."""
    runName: Name | None = None
    """Name of the original run."""


class Evidence(Strict):
    """Material behind the run. The evidence level is derived from it, never declared."""

    artifacts: list[Artifact] | None = None
    """Published files."""
    dryRun: bool | None = None
    """True for a CPU/interpreter rehearsal: never Verified."""
    integrity: list[IntegrityCheck] | None = None
    """Integrity checks of a controlled rerun."""
    gpuBefore: GpuState | None = None
    """GPU state before timing."""
    gpuAfter: GpuState | None = None
    """GPU state after timing."""
    instance: Instance | None = None
    """Machine identity."""
    rerunOf: RerunOf | None = None
    """The run this one re-measures."""
    command: Short | None = None
    """Command that produced the run."""
    details: dict[Key, Scalar] | None = None
    """Other numbers (measured copy bandwidth, bytes moved, …)."""


class BenchmarkRunBody(Strict):
    implementationDigest: Digest
    """The ImplementationRevision measured."""
    workloadDigest: Digest
    """The WorkloadCase measured."""
    protocolDigest: Digest
    """The BenchmarkProtocol followed."""
    environmentDigest: Digest
    """The ExecutionEnvironment it ran in."""
    timedPass: Pass | None = None
    """Which pass was timed; when absent it is read from sourceNative's benchmark name."""
    status: Literal["passed", "failed", "errored", "retracted"]
    """Outcome. Only passed runs are ranked."""
    statusReason: Text | None = None
    """Why a run failed, errored or was retracted."""
    correctness: RunCorrectness | None = None
    """Correctness outcome."""
    timing: Timing | None = None
    """Latency of the timed call."""
    measurements: list[MeasuredValue] | None = None
    """Reported numbers besides the timing (quantiles, memory)."""
    sourceNative: SourceNative | None = None
    """The run as its source published it."""
    evidence: Evidence | None = None
    """Material behind the run."""
    observedAt: Timestamp
    """When the measurement was taken."""

    @model_validator(mode="after")
    def _consistent(self) -> "BenchmarkRunBody":
        if self.status == "failed" and self.timing is not None:
            raise ValueError("a failed run carries its error, never a time: remove timing")
        by_metric: dict[tuple[str, str], dict[str, float]] = {}
        for m in self.measurements or []:
            by_metric.setdefault((m.metric, m.unit), {})[m.statistic] = m.value
        for (metric, unit), values in sorted(by_metric.items()):
            _ordered(values, f"measurements {metric} ({unit})")
        return self


# An SSHSIG blob of an Ed25519 key is 239 bytes: 320 base64 characters.
SshSignature = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]{1,2000}={0,2}$")]


class RunMetadata(Metadata):
    """A run's descriptive data, and the signature of whoever ran it."""

    signature: SshSignature | None = None
    """SSH signature (SSHSIG, base64, namespace ``sitegen-run``) by the rerunning machine's Ed25519 key over the
    digests of this run and of every document it references (sitegen.core.signing): kept outside the digested spec,
    so signing never changes the digest it covers."""


class BenchmarkRun(Strict):
    """One measurement of one implementation on one workload."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["BenchmarkRun"]
    """Document kind."""
    metadata: RunMetadata
    """Descriptive data (not identity)."""
    spec: BenchmarkRunBody
    """The run's identity."""


class AttestationBody(Strict):
    run: Digest
    """The run the note is about."""
    kind: Literal["reproduced", "could_not_reproduce", "environment_note", "regression_observed"]
    """What kind of note."""
    value: Short | None = None
    """The number observed, with its unit, e.g. "9.3 ms"."""
    author: Short
    """Who writes the note."""
    date: Day
    """When."""
    body: Text | None = None
    """The note, in Markdown (rendered sanitized)."""
    link: HttpUrl | None = None
    """Supporting link (http or https only)."""


class Attestation(Strict):
    """A community note on a run. It never changes the run's evidence level."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["Attestation"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: AttestationBody
    """The note."""
