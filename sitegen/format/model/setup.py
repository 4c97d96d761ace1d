"""How and where a measurement was taken: BenchmarkProtocol, ExecutionEnvironment."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from sitegen.format.model.common import (
    API_VERSION, Commit, HttpUrl, Metadata, NonNegative, NonNegativeInt, PositiveInt, Scalar,
    Short, Strict, Text,
)
from sitegen.format.model.definitions import DType, Key, Tolerance

Statistic = Annotated[str, StringConstraints(pattern=r"^(median|mean|min|max|stdev|p[0-9]{1,2})$")]


class Harness(Strict):
    """The program that took the measurement."""

    name: Short
    """Harness name, e.g. "Liger-Kernel benchmark scripts"."""
    version: Short | None = None
    """Harness version."""
    repository: HttpUrl | None = None
    """Where its code lives."""
    commit: Commit | None = None
    """Revision of its code."""


class Warmup(Strict):
    """What runs before timing starts."""

    minIterations: NonNegativeInt | None = None
    """Calls made before any sample is kept."""
    minMs: NonNegative | None = None
    """GPU time spent warming up, at least."""
    notes: Text | None = None
    """What the warm-up is for (compilation, autotuning, clocks)."""


class Measurement(Strict):
    """How samples are taken and summarised."""

    timer: Short
    """Clock used, e.g. ``cuda_events``."""
    primaryStatistic: Statistic
    """Statistic that ranks runs, e.g. ``median``."""
    quantiles: list[Annotated[float, Field(ge=0, le=1)]] | None = None
    """Quantiles reported besides the primary statistic."""
    warmup: Warmup | None = None
    """Warm-up before timing."""
    minSamples: PositiveInt | None = None
    """Samples per case, at least."""
    minTimeMs: NonNegative | None = None
    """GPU time per case, at least."""
    l2Flush: bool | None = None
    """Whether the L2 cache is flushed before every timed call."""
    inputs: Short | None = None
    """Input policy, e.g. ``fresh-random-rotated``."""
    hostTimedCrossCheck: bool | None = None
    """Whether a synchronized host-timed batch cross-checks the device timer."""
    processes: PositiveInt | None = None
    """Independent processes the measurement is repeated in."""


class ProtocolCorrectness(Strict):
    """How correctness is checked before timing."""

    reference: Short
    """Reference implementation, e.g. ``sitegen.kernels.reference (float64)``."""
    comparator: Short
    """Comparison rule."""
    tolerances: dict[DType, Tolerance] | None = None
    """Bounds per element type."""
    seeds: list[NonNegativeInt] | None = None
    """Random seeds of the checked inputs."""
    extraShapes: list[list[PositiveInt]] | None = None
    """Additional (odd) shapes checked besides the timed one."""
    poisonOutputs: bool | None = None
    """Whether outputs are filled with NaN beforehand and checked fully written."""


class Integrity(Strict):
    """Checks that refuse implausible timings."""

    roofline: bool | None = None
    """Refuse a time below bytes moved / measured copy bandwidth."""
    repeatedInputMaxSpeedup: Annotated[float, Field(ge=1)] | None = None
    """Flag a repeated-input time this much faster than fresh inputs."""
    throttleCheck: bool | None = None
    """Record clocks and throttle reasons before and after; mark throttled runs."""
    exclusiveGpu: bool | None = None
    """Refuse to run with other processes on the GPU."""
    timedOutputCheck: bool | None = None
    """Compare the outputs of the timed calls themselves (loss, and a projection of dX) with the reference."""
    agreement: Annotated[float, Field(ge=0)] | None = None
    """Relative difference within which two machines' medians agree."""


class Comparability(Strict):
    """What results of this protocol may be compared with."""

    family: Short
    """Comparability family; only runs of one family are ranked together."""
    minEffect: Annotated[float, Field(ge=0, le=1)] | None = None
    """Smallest relative difference of primary statistics that separates two ranks (0.01 = 1%); 1% when absent."""
    notes: Text | None = None
    """What is timed and what is comparable."""


class BenchmarkProtocolBody(Strict):
    harness: Harness
    """The harness."""
    measurement: Measurement
    """Timing and statistics."""
    correctness: ProtocolCorrectness | None = None
    """Correctness gate."""
    integrity: Integrity | None = None
    """Integrity checks."""
    devicePolicy: dict[Key, Scalar] | None = None
    """Device settings required or recorded, e.g. ``{"clocks": "as found"}``."""
    comparability: Comparability
    """Comparability family."""


class BenchmarkProtocol(Strict):
    """How a run was timed."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["BenchmarkProtocol"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: BenchmarkProtocolBody
    """The protocol's identity."""


class Clocks(Strict):
    """Clock rates in MHz."""

    sm: NonNegativeInt | None = None
    """Streaming-multiprocessor clock."""
    memory: NonNegativeInt | None = None
    """Memory clock."""


class Hardware(Strict):
    """The accelerator."""

    vendor: Short
    """Vendor, e.g. ``nvidia``."""
    product: Short
    """Product name as the driver reports it, e.g. "NVIDIA H200"."""
    architecture: Short
    """Architecture, e.g. ``sm_90``."""
    memoryBytes: PositiveInt | None = None
    """Device memory."""
    count: PositiveInt | None = None
    """Devices used."""
    smCount: PositiveInt | None = None
    """Multiprocessors."""
    maxClocksMHz: Clocks | None = None
    """Maximum clocks."""
    powerLimitW: NonNegative | None = None
    """Enforced power limit."""
    ecc: bool | None = None
    """Whether ECC is on."""
    persistenceMode: bool | None = None
    """Whether persistence mode is on."""


class Framework(Strict):
    """The framework the code ran under."""

    name: Short
    """e.g. ``torch``."""
    version: Short
    """e.g. ``2.11.0+cu130``."""


class Software(Strict):
    """Software the run depends on."""

    driver: Short | None = None
    """GPU driver version."""
    cudaToolkit: Short | None = None
    """CUDA version the framework was built with."""
    framework: Framework | None = None
    """Framework."""
    libraries: dict[Key, Short] | None = None
    """Other libraries and versions, e.g. ``{"triton": "3.6.0"}``."""
    python: Short | None = None
    """Python version."""


class ExecutionEnvironmentBody(Strict):
    hardware: Hardware
    """The accelerator."""
    software: Software
    """Software versions."""
    settings: dict[Key, Scalar] | None = None
    """Other settings that affect results."""


class ExecutionEnvironment(Strict):
    """Where a run took place. Instance facts (GPU UUID, host) live on the run instead."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["ExecutionEnvironment"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: ExecutionEnvironmentBody
    """The environment's identity."""
