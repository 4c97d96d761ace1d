"""Worker results → one outcome per case: status, correctness, timing, integrity checks.

Pure functions over the JSON the workers wrote; no torch, no GPU.
"""

from __future__ import annotations

from typing import Any

from sitegen.rules import integrity
from sitegen.core.workload import Case
from sitegen.rules.protocol import AGREEMENT
from sitegen.rules.stats import ci_half_width_rel, spread_rel, summary

# Checks whose failure refuses the time itself: the number would be wrong, not just doubtful.
# The others (repeated_input, throttle, exclusive_gpu) flag the run; the site ranks no flagged run.
REFUSING = ("roofline", "host_timed", "timed_output", *integrity.GUARDS)


def correctness(gate: dict[str, Any] | None, op) -> dict[str, Any]:
    """RunCorrectness from the gate's outcome for the case's implementation and workload."""
    if gate is None:
        return {"status": "not_checked", "comparator": op.comparator, "reference": op.reference_name}
    out: dict[str, Any] = {"status": gate["status"], "comparator": op.comparator, "reference": op.reference_name}
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
        for key in ("hostTimedNs", "hostWaitNs", "emptySyncNs", "hiddenNs"):
            if p.get(key) is not None:
                entry[key] = p[key]
        processes.append(entry)
    return {"latencyNs": summary(pooled), "primaryStatistic": "median", "samplesNs": pooled, "processes": processes}


def outcome(case: Case, gate: dict[str, Any] | None, per_process: list[dict[str, Any]], *, op,
            copy_bytes_per_s: float | None, process_counts: list[int | None], expected_counts: list[int],
            repeated_probe: bool, max_sm_mhz: int | None = None, rtol: float | None = None) -> dict[str, Any]:
    """{"status", "statusReason"?, "correctness", "timing"?, "integrity", "gpuBefore"?, "gpuAfter"?, "details"}."""
    result: dict[str, Any] = {"correctness": correctness(gate, op), "integrity": [], "details": {}}
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
    nbytes = op.bytes_moved(w, case.timed_pass)
    full_bytes = op.bytes_moved(w, "full")
    checked = [p["timedCheck"] for p in per_process if "timedCheck" in p]
    full_pass = [ns for c in checked for ns in c.get("fullPassNs", [])]
    full_ns = None
    if case.timed_pass == "full":
        full_ns = median
    elif full_pass:
        full_ns = summary(full_pass)["median"]
    states = [s for p in per_process for s in (p.get("gpuBefore"), p.get("gpuAfter"))]
    checks = [
        integrity.roofline(median, nbytes, copy_bytes_per_s, timed_pass=case.timed_pass,
                           full_ns=None if case.timed_pass == "full" else full_ns, full_bytes=full_bytes),
        integrity.host_timed(median, [p["hostTimedNs"] for p in per_process if p.get("hostTimedNs") is not None],
                             [p["hostWaitNs"] for p in per_process if p.get("hostWaitNs") is not None],
                             [p["hiddenNs"] for p in per_process if p.get("hiddenNs") is not None]),
        integrity.throttle(states, max_sm_mhz),
        integrity.exclusive(process_counts, expected_counts),
    ]
    bound = rtol if rtol is not None else op.tolerances[w.dtype]
    if checked or repeated_probe:
        checks.insert(1, integrity.timed_output(_merge(checked) if checked else None, bound))
    # Under a protocol whose own loop times the calls (Liger's do_bench) no output is kept, so
    # timed_output is absent, not failed: the site names it as the check that run lacks.
    if repeated_probe:
        # The probe's own fresh blocks, interleaved with its repeated ones, where it took them.
        first = per_process[0]
        fresh = first.get("repeatedFreshMedianNs") or summary(first["samplesNs"])["median"]
        checks.insert(1, integrity.repeated_input(fresh, first.get("repeatedMedianNs")))
    checks += guard_checks(per_process)
    result["integrity"] = checks
    result["gpuBefore"], result["gpuAfter"] = per_process[0].get("gpuBefore"), per_process[-1].get("gpuAfter")
    result["details"] = {"floorBytes": nbytes, "flop": op.flop(w, case.timed_pass), "warmupCalls": sum(p.get("warmupCalls", 0) for p in per_process),
                         **_sampling(per_process, block)}
    if full_ns is not None and case.timed_pass != "full":
        result["details"]["fullPassMedianNs"] = full_ns
    if checked:
        merged = _merge(checked)
        result["details"]["timedOutputsChecked"] = merged["calls"]
        result["details"]["timedGradientsChecked"] = merged["checkedGradients"]
    if copy_bytes_per_s:
        result["details"]["copyBandwidthGBs"] = round(copy_bytes_per_s / 1e9, 2)
    discards = sum(p.get("throttleDiscards", 0) for p in per_process)
    if discards:
        result["details"]["throttleDiscardedSamples"] = discards
    if per_process[0].get("repeatedMedianNs") is not None:
        result["details"]["repeatedInputMedianNs"] = per_process[0]["repeatedMedianNs"]
        if per_process[0].get("repeatedFreshMedianNs") is not None:
            result["details"]["repeatedInputFreshMedianNs"] = per_process[0]["repeatedFreshMedianNs"]
    refused = [c for c in checks if c["name"] in REFUSING and not c["passed"]]
    if refused:
        result["status"] = "failed"
        result["statusReason"] = "integrity: time refused: " + "; ".join(c["detail"] for c in refused)
        return result
    result["status"] = "passed"
    result["timing"] = block
    return result


def guard_checks(per_process: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checks on untrusted code, from what every process's windows and timed outputs saw
    (absent where the process kept no such record: Liger's do_bench loop, older results)."""
    if not any("guards" in p for p in per_process):
        return []
    seen: dict[str, str] = {}
    for p in per_process:
        for name, why in (p.get("guards") or {}).items():
            seen.setdefault(name, why)
        checked = p.get("timedCheck") or {}
        if checked.get("foreignReason"):
            seen.setdefault("plain_output", f"{checked['foreignReason']} ({checked['foreignOutputs']} of "
                                            f"{checked['calls']} timed calls, never read)")
        if checked.get("inputsReason"):
            seen.setdefault("inputs_intact", checked["inputsReason"])
    return [integrity.guard(name, seen.get(name)) for name in integrity.GUARDS]


def _merge(checked: list[dict[str, Any]]) -> dict[str, Any]:
    """The processes' timed-output summaries as one."""
    return {
        "calls": sum(c["calls"] for c in checked),
        "checkedGradients": sum(c["checkedGradients"] for c in checked),
        "lossFailures": sum(c["lossFailures"] for c in checked),
        "gradientFailures": sum(c["gradientFailures"] for c in checked),
        "worstLossRelError": max(c["worstLossRelError"] for c in checked),
        "worstGradientRelError": max(c["worstGradientRelError"] for c in checked),
    }


def _sampling(per_process: list[dict[str, Any]], block: dict[str, Any]) -> dict[str, Any]:
    """What ended sampling, the pooled median's CI half-width, and whether the processes agree
    (issue 16's keys: samplingStoppedBy, ciHalfWidthRel, noisy, processSpreadRel)."""
    out: dict[str, Any] = {}
    stops = [p.get("samplingStoppedBy") for p in per_process]
    if all(stops):
        out["samplingStoppedBy"] = "precision" if all(s == "precision" for s in stops) else "budget"
    width = ci_half_width_rel(block["samplesNs"])
    if width != float("inf"):
        out["ciHalfWidthRel"] = round(width, 5)
    spread = spread_rel([p["medianNs"] for p in block["processes"]])
    out["processSpreadRel"] = round(min(spread, 1e6), 5)
    out["noisy"] = spread > AGREEMENT
    return out
