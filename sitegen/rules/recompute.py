"""A run's stated figures, recomputed from its raw samples and its own numbers.

A record that carries its samples states summaries of them (latencyNs, each process's
median, measurements) and the harness's arithmetic on them (evidence.details, the roofline
check's detail). Every one is recomputed here with the functions that wrote it
(sitegen.rules.stats, sitegen.rules.integrity), so a figure edited by hand, or a sample
list swapped under its summary, is refused instead of shown beside the samples it
contradicts. A stated figure agrees when it lies within half a unit of its own last
written digit of the recomputed value: the tolerance absorbs rounding for the page, never
a different number.
"""

from __future__ import annotations

import math
from typing import Any, Iterator

from sitegen.rules import integrity
from sitegen.rules.protocol import AGREEMENT
from sitegen.rules.stats import ci_half_width_rel, spread_rel, statistic, summary

Path = tuple[str | int, ...]

# Measured values in these units are latencies of the timed call, in ns per unit.
TIME_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
# Achieved bandwidth, in bytes per ns (GB/s) per unit.
BANDWIDTH_UNITS = {"GB/s": 1.0, "TB/s": 1e3}


def _half_unit(stated: float) -> float:
    """Half a unit of the stated number's last digit as JSON writes it (0.5 for an integer)."""
    if isinstance(stated, int):
        return 0.5
    text = repr(float(stated))
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def _agrees(stated: float, recomputed: float, slack: float = 0.0) -> bool:
    # A relative 1e-12 more covers the float arithmetic of the recomputation itself.
    return abs(stated - recomputed) <= _half_unit(stated) + slack + 1e-12 * abs(recomputed)


def _shown(value: float) -> str:
    if isinstance(value, int) or not math.isfinite(value):
        return str(value)
    if abs(value) >= 1:
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{value:.6g}"


def _differs(path: Path, stated: Any, recomputed: float, source: str) -> tuple[Path, str]:
    return path, f"stated {_shown(stated)}, recomputed {_shown(recomputed)} from {source}"


def disagreements(spec: Any) -> list[tuple[Path, str]]:
    """(path under the document, reason) for every stated figure of a BenchmarkRun spec that its samples contradict."""
    timing = spec.timing
    if timing is None or not timing.samplesNs:
        return []
    return list(_timing(timing)) + list(_measurements(spec, timing)) + list(_details(spec, timing))


def _timing(timing) -> Iterator[tuple[Path, str]]:
    samples = sorted(timing.samplesNs)
    source = f"the {len(samples)} samples of $.spec.timing.samplesNs"
    for name, stated in timing.latencyNs.model_dump().items():
        if stated is None:
            continue
        recomputed = statistic(samples, name)
        if not _agrees(stated, recomputed):
            yield _differs(("spec", "timing", "latencyNs", name), stated, recomputed, source)
    processes = timing.processes or []
    if not processes:
        return
    pooled = [ns for process in processes for ns in process.samplesNs]
    if pooled != timing.samplesNs:
        yield (("spec", "timing", "samplesNs"),
               f"holds {len(timing.samplesNs)} samples, which are not its {len(processes)} processes' "
               f"{len(pooled)} samples in process order")
    for i, process in enumerate(processes):
        if not process.samplesNs:
            continue
        recomputed = statistic(sorted(process.samplesNs), "median")
        if not _agrees(process.medianNs, recomputed):
            yield _differs(("spec", "timing", "processes", i, "medianNs"), process.medianNs, recomputed,
                           f"the {len(process.samplesNs)} samples of process {i}")


def _measurements(spec, timing) -> Iterator[tuple[Path, str]]:
    samples = sorted(timing.samplesNs)
    details = (spec.evidence.details if spec.evidence else None) or {}
    moved = details.get("floorBytes")
    for i, value in enumerate(spec.measurements or []):
        per_unit = TIME_UNITS.get(value.unit) if value.metric == "latency" else None
        if per_unit is not None:
            ns = statistic(samples, value.statistic)
            if ns is not None and not _agrees(value.value, ns / per_unit):
                yield _differs(("spec", "measurements", i, "value"), value.value, ns / per_unit,
                               f"the {len(samples)} samples of $.spec.timing.samplesNs")
        per_unit = BANDWIDTH_UNITS.get(value.unit) if value.metric == "bandwidth" else None
        if per_unit is not None and _number(moved):
            ns = statistic(samples, value.statistic)
            if ns:
                recomputed = moved / ns / per_unit
                if not _agrees(value.value, recomputed):
                    yield _differs(("spec", "measurements", i, "value"), value.value, recomputed,
                                   "$.spec.evidence.details.floorBytes over the samples' " + value.statistic)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _details(spec, timing) -> Iterator[tuple[Path, str]]:
    evidence = spec.evidence
    details = (evidence.details if evidence else None) or {}
    at = ("spec", "evidence", "details")
    width = details.get("ciHalfWidthRel")
    if _number(width):
        recomputed = ci_half_width_rel(timing.samplesNs)
        if not _agrees(width, recomputed):
            yield _differs((*at, "ciHalfWidthRel"), width, recomputed, "the samples' median interval")
    processes = timing.processes or []
    if processes and all(p.samplesNs for p in processes):
        # As the harness: the spread of the processes' medians as it wrote them (whole ns).
        spread = spread_rel([summary(p.samplesNs)["median"] for p in processes])
        stated = details.get("processSpreadRel")
        if _number(stated) and not _agrees(stated, min(spread, 1e6)):
            yield _differs((*at, "processSpreadRel"), stated, spread, "the processes' medians")
        noisy = details.get("noisy")
        if isinstance(noisy, bool) and noisy != (spread > AGREEMENT):
            yield ((*at, "noisy"), f"stated {str(noisy).lower()}, but the processes' medians spread "
                                   f"{spread:.5f} against the {AGREEMENT} allowed")
    yield from _roofline(evidence, details, timing)


def _roofline(evidence, details: dict, timing) -> Iterator[tuple[Path, str]]:
    """The roofline check's detail: its median, bytes, copy bandwidth and floor against the record's own."""
    checks = (evidence.integrity if evidence else None) or []
    for i, check in enumerate(checks):
        match = integrity.ROOFLINE_FIGURES.match(check.detail or "") if check.name == "roofline" else None
        if match is None:
            continue
        path = ("spec", "evidence", "integrity", i, "detail")
        median, floor, moved, copy = int(match[1]), int(match[2]), int(match[3]), float(match[4])
        recomputed = statistic(sorted(timing.samplesNs), "median")
        if not _agrees(median, recomputed):
            yield path, f"states median {median} ns, recomputed {_shown(recomputed)} from the samples"
        stated_bytes = details.get("floorBytes")
        if _number(stated_bytes) and stated_bytes != moved:
            yield (("spec", "evidence", "details", "floorBytes"),
                   f"stated {stated_bytes}, but the roofline check moved {moved} bytes")
        stated_copy = details.get("copyBandwidthGBs")
        if _number(stated_copy) and stated_copy > 0:
            if not _agrees(copy, stated_copy, _half_unit(stated_copy)):
                yield (("spec", "evidence", "details", "copyBandwidthGBs"),
                       f"stated {_shown(stated_copy)}, but the roofline check measured {match[4]} GB/s")
            else:
                # The floor from the stated copy bandwidth, within what its rounding can move it.
                recomputed = integrity.floor_ns(moved, stated_copy * 1e9)
                if not _agrees(floor, recomputed, recomputed * _half_unit(stated_copy) / stated_copy):
                    yield path, f"states floor {floor} ns, recomputed {recomputed:.0f} ns from {moved} B at {_shown(stated_copy)} GB/s"

