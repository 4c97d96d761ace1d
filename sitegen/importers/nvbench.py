"""NVBench's JSON (``--json FILE``; C++ NVBench or its Python package cuda-bench) → Reported runs, one per state.

The file (nvbench/json_printer.cu) holds ``meta`` (argv, NVBench's version and git commit),
``devices`` (each GPU's name, SM version, memory, SM count, clock, ECC) and ``benchmarks``, each
with ``states``: one per device × axis values, with its ``summaries`` (tag, typed string values).
What goes where:

- operation: the benchmark's name; implementation: the executable (``argv[0]``), or --implementation;
- workload: the state's axis values (int64, float64 and type/string axes, typed as written);
- timing, in whole ns: the cold GPU time (``nv/cold/time/gpu/*``: isolated launches timed by
  CUDA events): mean, and min, max, median and absolute stdev where the file has them (older
  NVBench writes only the relative stdev: the absolute one is that times the mean). The mean
  ranks; samples are not in the JSON (``--jsonbin`` writes them apart), so the interval is the
  normal approximation over the protocol's min_samples;
- every summary with a number (CPU times, batch GPU time, bandwidth, sample size) stays in
  sourceNative.metrics under its tag, "/" written ".";
- environment: the state's device as ``devices`` records it; protocol: min_samples, max_noise,
  min_time, timeout and warm-up as recorded, NVBench's version and commit.

NVBench records no date: --observed-at states when the file was written. A skipped state is one
line with NVBench's reason.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from sitegen.importers.core import Plan, RowError
from sitegen.importers.harness import (
    SOURCE_OPTIONS, HarnessImporter, Result, nanoseconds, plan_results, read_json, rfc3339, where_type,
)
from sitegen.core.problems import Problem

HARNESS_URL = "https://github.com/NVIDIA/nvbench"
OBSERVED_AT = click.Option(["--observed-at"], metavar="TIME",
                           help="When the results were measured (RFC 3339, e.g. 2026-12-07T17:00:00Z): the file records no date.")
_GPU = {"mean": "nv/cold/time/gpu/mean", "min": "nv/cold/time/gpu/min", "max": "nv/cold/time/gpu/max",
        "median": "nv/cold/time/gpu/median", "stdev": "nv/cold/time/gpu/stdev/absolute"}
_STATE_SETTINGS = ("min_samples", "max_noise", "min_time", "skip_time", "timeout", "cold_warmup_runs",
                   "cold_max_warmup_walltime", "batch_target_time")


class NVBench(HarnessImporter):
    summary = "NVBench's JSON (--json; also cuda-bench, its Python package): one BenchmarkRun per state."
    help = ("The cold GPU time (isolated launches timed by CUDA events) of each state: mean, and the min, "
            "max, median and stdev the file holds; the state's device and axis values; every other summary "
            "in sourceNative. NVBench writes no date: --observed-at is required. A skipped state is one "
            "line with NVBench's reason.")
    units = "state(s)"
    options = (*SOURCE_OPTIONS, OBSERVED_AT)

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        plan, shown = Plan(), str(path)
        data = read_json(plan, path, shown)
        if data is None:
            return plan
        if not isinstance(data, dict) or not all(isinstance(data.get(k), list) for k in ("devices", "benchmarks")):
            plan.problems.append(Problem(shown, "$", "not NVBench's JSON output (no devices and benchmarks arrays)"))
            return plan
        if not options.get("observed_at"):
            plan.problems.append(Problem(shown, "$", "NVBench's JSON records no date: pass --observed-at, when it was measured"))
            return plan
        try:
            session = _session(data, options["observed_at"])
        except RowError as exc:
            plan.problems.append(Problem(shown, "$.meta", str(exc)))
            return plan
        results = []
        for b, bench in enumerate(data["benchmarks"]):
            if not isinstance(bench, dict) or not isinstance(bench.get("states"), list):
                plan.problems.append(Problem(shown, f"$.benchmarks[{b}]", "not a benchmark (no states array)"))
                continue
            for s, state in enumerate(bench["states"]):
                where = f"$.benchmarks[{b}].states[{s}]"
                if isinstance(state, dict) and state.get("is_skipped") is True:
                    plan.warnings.append(f"{shown}: {where}: skipped: NVBench skipped {state.get('name')!r}: {state.get('skip_reason')}")
                    continue
                plan.rows += 1
                try:
                    results.append((where, _result(bench, state, session)))
                except RowError as exc:
                    plan.problems.append(Problem(shown, where, str(exc)))
        return plan_results(plan, shown, results, self.source(options)[0], options)


def _session(data: dict[str, Any], observed_at: str) -> dict[str, Any]:
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    argv = meta.get("argv") if isinstance(meta.get("argv"), list) else []
    version = (meta.get("version") or {}).get("nvbench") if isinstance(meta.get("version"), dict) else None
    harness: dict[str, Any] = {"name": "NVBench", "repository": HARNESS_URL}
    if isinstance(version, dict):
        if isinstance(version.get("string"), str):
            harness["version"] = version["string"]
        sha = version.get("git_sha")
        if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{7,64}", sha) and version.get("git_is_dirty") is False:
            harness["commit"] = sha
    devices = {}
    for device in data["devices"]:
        if isinstance(device, dict) and isinstance(device.get("id"), int):
            devices[device["id"]] = device
    return {"observed_at": rfc3339(observed_at, "--observed-at"), "harness": harness, "devices": devices,
            "executable": Path(argv[0]).name if argv and isinstance(argv[0], str) and argv[0] else None}


def _hardware(device: dict[str, Any]) -> dict[str, Any]:
    name = where_type(device.get("name"), str, "device name")
    sm = device.get("sm_version")
    hardware: dict[str, Any] = {"vendor": "nvidia", "product": name.strip()[:300],
                                "architecture": f"sm_{sm // 10}" if isinstance(sm, int) and sm > 0 else "unknown"}
    for ours, theirs in (("memoryBytes", "global_memory_size"), ("smCount", "number_of_sms")):
        if isinstance(device.get(theirs), int) and not isinstance(device.get(theirs), bool) and device[theirs] > 0:
            hardware[ours] = device[theirs]
    clock = device.get("sm_default_clock_rate")
    if isinstance(clock, int) and clock > 0:
        hardware["maxClocksMHz"] = {"sm": clock // 1_000_000}
    if isinstance(device.get("ecc_state"), bool):
        hardware["ecc"] = device["ecc_state"]
    return hardware


def _values(state: dict[str, Any]) -> dict[str, int | float | str]:
    """Each summary's "value" by its tag, typed as the file declares it."""
    out: dict[str, int | float | str] = {}
    for summary in state.get("summaries") or []:
        if not isinstance(summary, dict) or not isinstance(summary.get("tag"), str):
            continue
        for value in summary.get("data") or []:
            if isinstance(value, dict) and value.get("name") == "value":
                out[summary["tag"]] = _typed(value, summary["tag"])
    return out


def _typed(value: dict[str, Any], what: str) -> int | float | str:
    text, kind = value.get("value"), value.get("type")
    try:
        if kind == "int64":
            return int(text)
        if kind == "float64":
            return float(text)
    except (TypeError, ValueError):
        raise RowError(f"{what}: {text!r} is not a {kind}") from None
    return str(text)


def _result(bench: dict[str, Any], state: Any, session: dict[str, Any]) -> Result:
    state = where_type(state, dict, "state")
    name = where_type(bench.get("name"), str, "benchmark name")
    device = session["devices"].get(state.get("device"))
    if device is None:
        raise RowError(f"device: {state.get('device')!r} is not a device the file lists")
    values = _values(state)
    if _GPU["mean"] not in values:
        raise RowError(f"no {_GPU['mean']} summary (the cold GPU time)")
    latency = {k: nanoseconds(values[tag], 10**9, tag) for k, tag in _GPU.items() if tag in values}
    relative = values.get("nv/cold/time/gpu/stdev/relative")
    if "stdev" not in latency and isinstance(relative, float):
        latency["stdev"] = nanoseconds(relative * values[_GPU["mean"]], 10**9, "nv/cold/time/gpu/stdev/relative × mean")
    axes = {}
    for axis in state.get("axis_values") or []:
        if isinstance(axis, dict) and isinstance(axis.get("name"), str):
            axes[axis["name"]] = _typed(axis, f"axis {axis['name']}")
    recorded = {k: state[k] for k in _STATE_SETTINGS if isinstance(state.get(k), (int, float)) and not isinstance(state.get(k), bool)}
    measurement: dict[str, Any] = {"timer": "cuda_events", "primaryStatistic": "mean"}
    if isinstance(recorded.get("min_samples"), int) and recorded["min_samples"] > 0:
        measurement["minSamples"] = recorded["min_samples"]
    if isinstance(recorded.get("cold_warmup_runs"), int):
        measurement["warmup"] = {"minIterations": max(0, recorded["cold_warmup_runs"])}
    protocol = {
        "harness": dict(session["harness"]), "measurement": measurement,
        "devicePolicy": {f"nvbench.{k}": v for k, v in sorted(recorded.items())},
        "comparability": {"family": "nvbench-cold", "notes": (
            "Timed by NVBench's cold measurement: isolated launches, each timed by CUDA events, repeated until "
            "min_samples and min_time are reached and the relative noise is under max_noise (or timeout passes); "
            "the mean ranks, with the normal approximation of its interval over min_samples, a lower bound on the "
            "samples taken (nv/cold/sample_size in sourceNative). Settings as recorded: "
            + (", ".join(f"{k} = {v}" for k, v in sorted(recorded.items())) or "none"))},
    }
    metrics = {tag.replace("/", ".")[:64]: v for tag, v in values.items()
               if isinstance(v, (int, float)) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", tag.replace("/", "."))}
    hardware = _hardware(device)
    return Result(
        operation=name, implementation=session["executable"] or "", axes=axes,
        timing={"latencyNs": latency, "primaryStatistic": "mean"}, observed_at=session["observed_at"],
        external_id=f"{name}/{state.get('name')}", metrics=metrics, hardware=hardware["product"], hardware_known=hardware,
        protocol=protocol,
    )
