"""Human labels and units for manifest fields shown on record pages.

``measurement.warmup.minMs`` reads "Warm-up · minimum time" with the value "25 ms". The
raw keys stay in the canonical manifest and the JSON twin; a field without a label here
is still readable: its dotted camelCase key is split into words and a unit suffix (Ms, Ns,
MHz, W, Bytes) becomes the value's unit.
"""

from __future__ import annotations

import re

from sitegen.core import units

LABELS: dict[str, str] = {
    "measurement.quantiles": "Quantiles reported",
    "measurement.warmup.minIterations": "Warm-up · minimum calls",
    "measurement.warmup.minMs": "Warm-up · minimum time",
    "measurement.warmup.notes": "Warm-up · how",
    "measurement.minSamples": "Minimum samples",
    "measurement.minTimeMs": "Minimum measured time",
    "measurement.l2Flush": "L2 cache flushed before each sample",
    "measurement.inputs": "Inputs",
    "measurement.hostTimedCrossCheck": "Host-timed cross-check",
    "measurement.processes": "Processes",
    "measurement.repetitions": "Repetitions",
    "correctness.reference": "Correctness · reference",
    "correctness.comparator": "Correctness · comparator",
    "correctness.seeds": "Correctness · seeds",
    "correctness.poisonOutputs": "Correctness · outputs poisoned first",
    "integrity.roofline": "Integrity · bytes-moved floor checked",
    "integrity.repeatedInputMaxSpeedup": "Integrity · largest speed-up on repeated input",
    "integrity.throttleCheck": "Integrity · throttling checked",
    "integrity.exclusiveGpu": "Integrity · GPU used exclusively",
    "integrity.agreement": "Integrity · agreement tolerance",
    "devicePolicy.clocks": "Clocks",
    "devicePolicy.l2FlushBytes": "L2 flush size",
    "devicePolicy.tritonInterpret": "Triton interpreter",
    "comparability.notes": "What is timed",
    "harness.commit": "Harness commit",
    "count": "GPUs",
    "smCount": "Streaming multiprocessors",
    "maxClocksMHz.sm": "Maximum SM clock",
    "maxClocksMHz.memory": "Maximum memory clock",
    "powerLimitW": "Power limit",
    "ecc": "ECC memory",
    "persistenceMode": "Persistence mode",
    "memoryBytes": "Memory",
    "python": "Python",
    "driver": "Driver",
    "cudaToolkit": "CUDA toolkit",
    "rocm": "ROCm",
    "os": "Operating system",
    "floorBytes": "Bytes moved (roofline floor)",
    "warmupCalls": "Warm-up calls",
    "copyBandwidthGBs": "Measured copy bandwidth",
    "smClockMHz": "SM clock",
    "memoryClockMHz": "Memory clock",
    "temperatureC": "Temperature",
    "throttleReasons": "Throttle reasons",
    "repeated_input": "Repeated input",
    "host_timed": "Host-timed cross-check",
    "exclusive_gpu": "GPU used exclusively",
    "roofline": "Roofline floor",
    "throttle": "Throttling",
    "timed_output": "Timed outputs checked",
    # evidence.details of a controlled rerun (sitegen.rerun.outcome.assemble):
    "timingFolder": "KernelBench timing folder",
    "ciHalfWidthRel": "95% interval of the median, half-width",
    "processSpreadRel": "Spread of the processes' medians",
    "noisy": "Processes disagree (noisy)",
    "samplingStoppedBy": "Sampling stopped by",
    "timedOutputsChecked": "Timed calls whose output was checked",
    "timedGradientsChecked": "Timed calls whose gradient was checked",
    "repeatedInputMedianNs": "Median on repeated input",
    "repeatedInputFreshMedianNs": "Median on fresh input (same run)",
    "fullPassMedianNs": "Median of the full pass (for the split)",
}
# What "samplingStoppedBy" says, in words.
STOPPED_BY = {"precision": "the precision target (the interval was narrow enough)", "budget": "the time budget"}
_ACRONYMS = {"gpu": "GPU", "cpu": "CPU", "sm": "SM", "l2": "L2", "cuda": "CUDA", "id": "ID", "uuid": "UUID",
             "ecc": "ECC", "os": "OS", "mhz": "MHz", "pci": "PCI", "nvml": "NVML"}
_UNIT = re.compile(r"(Ms|Ns|MHz|W|Bytes|Percent|GBs|C|Rel)$")
_UNIT_TEXT = {"Ms": "ms", "Ns": "ns", "MHz": "MHz", "W": "W", "Percent": "%", "GBs": "GB/s", "C": "°C"}


def _words(key: str) -> str:
    parts = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", key).replace("_", " ").split()
    return " ".join(_ACRONYMS.get(p.lower(), p.lower()) for p in parts)


def label(key: str) -> str:
    """A reader's label for a dotted manifest key."""
    if key in LABELS:
        return LABELS[key]
    segments = [_UNIT.sub("", s) or s for s in key.split(".")]
    text = " · ".join(_words(s) for s in segments)
    return text[:1].upper() + text[1:]


def _unit_of(key: str) -> str | None:
    for segment in reversed(key.split(".")):
        found = _UNIT.search(segment)
        if found:
            return found.group(1)
    return None


def value(key: str, raw) -> str:
    """The value as a reader wants it: yes/no, thousands separators, a unit from the key."""
    if isinstance(raw, bool):
        return "yes" if raw else "no"
    unit = _unit_of(key)
    if key.endswith("samplingStoppedBy") and isinstance(raw, str):
        return STOPPED_BY.get(raw, raw)
    if isinstance(raw, (int, float)):
        if unit == "Rel":
            # A half-width is either side of the median; a spread is one width.
            shown = relative(raw)
            return ("±" + shown if "HalfWidth" in key else shown) + " of the median"
        if unit == "Bytes":
            return binary_size(raw) if "l2" in key.lower() or "flush" in key.lower() else units.byte_size(raw)
        if unit == "Ns":
            return units.show(raw, "ns")
        number = f"{raw:,}" if isinstance(raw, int) else f"{raw:g}"
        return f"{number} {_UNIT_TEXT[unit]}" if unit else number
    if isinstance(raw, list):
        # An empty list is a reading of nothing (no throttle reason), never a blank cell.
        return ", ".join(value(key, item) for item in raw) or "none"
    return str(raw)


def relative(fraction: float) -> str:
    """A fraction as a percentage with the digits it needs: 0.00035 → ``0.035%``, 0.0123 → ``1.2%``."""
    return f"{abs(fraction) * 100:.2g}%" if abs(fraction) < 0.01 else units.percent(fraction)


def binary_size(count: int) -> str:
    """Cache and buffer sizes, which are powers of two: 268435456 → 256 MiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:g} {unit}"
    return f"{count:,} B"


def leaves(data, prefix: str = ""):
    """(dotted key, raw leaf) in document order; a list of scalars is one leaf."""
    if isinstance(data, dict):
        for key, item in data.items():
            yield from leaves(item, f"{prefix}.{key}" if prefix else key)
    elif isinstance(data, list) and any(isinstance(item, (dict, list)) for item in data):
        for i, item in enumerate(data):
            yield from leaves(item, f"{prefix}[{i}]")
    else:
        yield prefix, data
