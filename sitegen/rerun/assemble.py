"""Worker results → one outcome per case: status, correctness, timing, integrity checks.

Pure functions over the JSON the workers wrote; no torch, no GPU.
"""

from __future__ import annotations

from typing import Any

from sitegen.rerun import integrity
from sitegen.rerun.cases import ELEMENT_BYTES, Case
from sitegen.rerun.protocol import COMPARATOR, REFERENCE
from sitegen.rerun.stats import summary


def correctness(gate: dict[str, Any] | None) -> dict[str, Any]:
    """RunCorrectness from the gate's outcome for the case's implementation and workload."""
    if gate is None:
        return {"status": "not_checked", "comparator": COMPARATOR, "reference": REFERENCE}
    out: dict[str, Any] = {"status": gate["status"], "comparator": COMPARATOR, "reference": REFERENCE}
    for key in ("maxAbsError", "maxRelError"):
        if key in gate:
            out[key] = gate[key]
    if gate.get("cases"):
        out["cases"] = gate["cases"]
    if gate.get("notes"):
        out["notes"] = gate["notes"]
    return out


def timing_block(per_process: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's timing: pooled statistics, all samples in process order, each process's share."""
    pooled = [s for p in per_process for s in p["samplesNs"]]
    processes = []
    for p in per_process:
        entry = {"medianNs": summary(p["samplesNs"])["median"], "samplesNs": p["samplesNs"]}
        for key in ("hostTimedNs", "hostWaitNs"):
            if p.get(key) is not None:
                entry[key] = p[key]
        processes.append(entry)
    return {"latencyNs": summary(pooled), "primaryStatistic": "median", "samplesNs": pooled, "processes": processes}


def outcome(case: Case, gate: dict[str, Any] | None, per_process: list[dict[str, Any]], *,
            copy_bytes_per_s: float | None, process_counts: list[int | None], expected_counts: list[int],
            repeated_probe: bool, max_sm_mhz: int | None = None) -> dict[str, Any]:
    """{"status", "statusReason"?, "correctness", "timing"?, "integrity", "gpuBefore"?, "gpuAfter"?, "details"}."""
    result: dict[str, Any] = {"correctness": correctness(gate), "integrity": [], "details": {}}
    if gate is not None and gate["status"] != "passed":
        result["status"] = "failed"
        result["statusReason"] = (f"correctness gate: worst relative error {gate.get('maxRelError', 'n/a')} "
                                  "against the float64 reference; never timed")
        if gate.get("notes"):
            result["statusReason"] += f" ({gate['notes'][:500]})"
        return result
    errors = [p["error"] for p in per_process if "error" in p]
    if errors or not per_process:
        result["status"] = "errored"
        result["statusReason"] = "; ".join(errors)[:2000] or "no process measured this case"
        return result
    w = case.workload
    block = timing_block(per_process)
    median = block["latencyNs"]["median"]
    nbytes = integrity.floor_bytes(w.tokens, w.vocab, ELEMENT_BYTES[w.dtype], case.timed_pass)
    states = [s for p in per_process for s in (p.get("gpuBefore"), p.get("gpuAfter"))]
    checks = [
        integrity.roofline(median, nbytes, copy_bytes_per_s),
        integrity.host_timed(median, [p["hostTimedNs"] for p in per_process if p.get("hostTimedNs") is not None],
                             [p["hostWaitNs"] for p in per_process if p.get("hostWaitNs") is not None]),
        integrity.throttle(states, max_sm_mhz),
        integrity.exclusive(process_counts, expected_counts),
    ]
    if repeated_probe:
        # The probe's own fresh blocks, interleaved with its repeated ones, where it took them.
        first = per_process[0]
        fresh = first.get("repeatedFreshMedianNs") or summary(first["samplesNs"])["median"]
        checks.insert(1, integrity.repeated_input(fresh, first.get("repeatedMedianNs")))
    result["integrity"] = checks
    result["gpuBefore"], result["gpuAfter"] = per_process[0].get("gpuBefore"), per_process[-1].get("gpuAfter")
    result["details"] = {"floorBytes": nbytes, "warmupCalls": sum(p.get("warmupCalls", 0) for p in per_process)}
    if copy_bytes_per_s:
        result["details"]["copyBandwidthGBs"] = round(copy_bytes_per_s / 1e9, 2)
    discards = sum(p.get("throttleDiscards", 0) for p in per_process)
    if discards:
        result["details"]["throttleDiscardedSamples"] = discards
    if per_process[0].get("repeatedMedianNs") is not None:
        result["details"]["repeatedInputMedianNs"] = per_process[0]["repeatedMedianNs"]
        if per_process[0].get("repeatedFreshMedianNs") is not None:
            result["details"]["repeatedInputFreshMedianNs"] = per_process[0]["repeatedFreshMedianNs"]
    refused = [c for c in checks if c["name"] in ("roofline", "host_timed") and not c["passed"]]
    if refused:
        result["status"] = "failed"
        result["statusReason"] = "integrity: time refused: " + "; ".join(c["detail"] for c in refused)
        return result
    result["status"] = "passed"
    result["timing"] = block
    return result
