"""Google Benchmark's JSON (``--benchmark_format=json`` or ``--benchmark_out``) → Reported runs, one per benchmark.

The C++ library and its Python bindings (``pip install google-benchmark``) write the same file:
a ``context`` (date, CPU count and clock, caches, build type, library version) and one entry per
repetition of each benchmark, then the aggregates of its repetitions. What goes where:

- operation: the family name (the run name less its arguments and settings), or with
  --split-family its part before the last "/", the rest naming the implementation;
- implementation: else the executable the context names, or --implementation;
- workload: the arguments (``n:1000`` by name, unnamed ones as arg0, arg1...);
- timing, in whole ns: each repetition's ``real_time`` (a mean per iteration) as one raw sample,
  summarized as sitegen summarizes every record with samples; the mean ranks; with one
  repetition only that mean. The tool's own aggregates (mean, median, stddev, cv), cpu_time and
  user counters stay in sourceNative.metrics under its names;
- protocol: wall clock, or the benchmark's own time for a ``/manual_time`` run (how a CUDA
  benchmark reports event times), repetitions, and the library version;
- environment: the tool records no CPU model and no GPU: the host as its CPU count and clock,
  unless --gpu names the GPU; build type, CPU scaling and ASLR as settings.

A repetition that reported an error, and a complexity fit (BigO, RMS), are skipped with one line each.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from sitegen.importers.core import Plan, RowError
from sitegen.importers.harness import (
    SOURCE_OPTIONS, HarnessImporter, Result, nanoseconds, plan_results, read_json, rfc3339, sampled_timing,
)
from sitegen.core.problems import Problem

HARNESS_URL = "https://github.com/google/benchmark"
SCALE = {"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000}
# Name segments that are run settings, not arguments (benchmark_register.cc's name parts).
_SETTINGS = re.compile(r"^(min_time|min_warmup_time|iterations|repeats|threads|real_time|manual_time|process_time)(:.*)?$")
_ARG = re.compile(r"^(?:([A-Za-z_][A-Za-z0-9_]*):)?(-?[0-9]+)$")
_KNOWN = {"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions", "repetition_index",
          "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name", "aggregate_unit", "label",
          "error_occurred", "error_message", "skipped", "skip_message"}


class GoogleBenchmark(HarnessImporter):
    summary = "Google Benchmark's JSON (--benchmark_format=json, also its Python bindings): one BenchmarkRun per benchmark."
    help = ("Each benchmark's repetitions become its raw samples (run with --benchmark_repetitions=N for an "
            "interval); operation: the family name; implementation: the executable, or with --split-family the "
            "family name's last segment. Errors and complexity fits are skipped with one line each.")
    options = (*SOURCE_OPTIONS, click.Option(
        ["--split-family"], is_flag=True,
        help="The family name is OPERATION/IMPLEMENTATION: split it at its last '/'."))

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        plan, shown = Plan(), str(path)
        data = read_json(plan, path, shown)
        if data is None:
            return plan
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list) or not isinstance(data.get("context"), dict):
            plan.problems.append(Problem(shown, "$", "not Google Benchmark's JSON output (no context object and benchmarks array)"))
            return plan
        try:
            context = _context(data["context"])
        except RowError as exc:
            plan.problems.append(Problem(shown, "$.context", str(exc)))
            return plan
        groups: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        aggregates: dict[str, dict[str, Any]] = {}
        failed: dict[str, str] = {}
        for i, entry in enumerate(data["benchmarks"]):
            where = f"$.benchmarks[{i}]"
            run_name = entry.get("run_name", entry.get("name")) if isinstance(entry, dict) else None
            if not isinstance(run_name, str):
                plan.problems.append(Problem(shown, where, "not a benchmark entry (no run_name)"))
                continue
            if entry.get("error_occurred") or entry.get("skipped"):
                # One failed repetition puts the benchmark's others in doubt: it is skipped whole.
                why = entry.get("error_message") or entry.get("skip_message") or entry.get("skipped")
                failed.setdefault(run_name, f"{shown}: {where}: skipped: {run_name} reported an error: {why}")
                continue
            if entry.get("run_type") == "aggregate":
                if entry.get("aggregate_name") in ("BigO", "RMS"):
                    plan.warnings.append(f"{shown}: {where}: skipped: {entry.get('name', run_name)} is a complexity fit, not a time")
                else:
                    aggregates.setdefault(run_name, {})[str(entry.get("aggregate_name"))] = entry
                continue
            groups.setdefault(run_name, []).append((i, entry))
        plan.warnings.extend(failed.values())
        results = []
        for run_name, entries in groups.items():
            if run_name in failed:
                continue
            plan.rows += 1
            where = f"$.benchmarks[{entries[0][0]}]"
            try:
                results.append((where, _result(run_name, [e for _, e in entries], aggregates.get(run_name, {}), context,
                                               options.get("split_family"))))
            except RowError as exc:
                plan.problems.append(Problem(shown, where, str(exc)))
        return plan_results(plan, shown, results, self.source(options)[0], options)


def _context(context: dict[str, Any]) -> dict[str, Any]:
    cpus, mhz = context.get("num_cpus"), context.get("mhz_per_cpu")
    if not isinstance(cpus, int) or isinstance(cpus, bool) or not isinstance(mhz, (int, float)) or isinstance(mhz, bool):
        raise RowError("no num_cpus and mhz_per_cpu, the host the context describes")
    settings = {k: context[k] for k in ("library_build_type", "cpu_scaling_enabled", "aslr_enabled")
                if isinstance(context.get(k), (str, bool))}
    executable = context.get("executable")
    return {
        "observed_at": rfc3339(context.get("date"), "date"),
        "host": f"host CPU: {cpus} × {mhz:g} MHz",
        "settings": settings,
        "executable": Path(executable).name if isinstance(executable, str) and executable else None,
        "version": context.get("library_version") if isinstance(context.get("library_version"), str) else None,
    }


def split_name(run_name: str) -> tuple[str, dict[str, Any], list[str]]:
    """(family name, arguments, settings) of a run name like ``sum/builtin/n:1000/manual_time``."""
    parts = run_name.split("/")
    settings = []
    while parts and _SETTINGS.match(parts[-1]):
        settings.insert(0, parts.pop())
    args: list[tuple[str | None, int]] = []
    while len(parts) > 1 and _ARG.match(parts[-1]):
        match = _ARG.match(parts.pop())
        args.insert(0, (match.group(1), int(match.group(2))))
    axes = {name or f"arg{i}": value for i, (name, value) in enumerate(args)}
    return "/".join(parts), axes, settings


def _result(run_name: str, entries: list[dict[str, Any]], aggregates: dict[str, dict[str, Any]], context: dict[str, Any],
            split: bool) -> Result:
    family, axes, settings = split_name(run_name)
    operation, implementation = family, context["executable"]
    if split:
        if "/" not in family:
            raise RowError(f"--split-family: {family!r} has no '/' between operation and implementation")
        operation, implementation = family.rsplit("/", 1)
    # Google Benchmark's JSON reporter always writes the unit; without it the times' scale is unknown.
    unit = entries[0].get("time_unit")
    if unit is None:
        raise RowError("time_unit: missing, so the times have no unit")
    if unit not in SCALE:
        raise RowError(f"time_unit: {unit!r} is not one of {', '.join(SCALE)}")
    samples = [nanoseconds(e.get("real_time"), SCALE[unit], f"{run_name}: real_time") for e in entries]
    if len(samples) > 1:
        timing = sampled_timing(samples, "mean")
    else:
        timing = {"latencyNs": {"mean": samples[0]}, "primaryStatistic": "mean"}
    metrics: dict[str, int | float] = {}
    first = entries[0]
    for key in ("iterations", "threads", "repetitions"):
        if isinstance(first.get(key), int) and not isinstance(first.get(key), bool):
            metrics[key] = first[key]
    for i, entry in enumerate(entries):
        for key in ("real_time", "cpu_time"):
            if isinstance(entry.get(key), (int, float)) and not isinstance(entry.get(key), bool):
                metrics[f"{key}_{i}" if len(entries) > 1 else key] = entry[key]
    for key, value in first.items():
        if key not in _KNOWN and isinstance(value, (int, float)) and not isinstance(value, bool) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", key):
            metrics[key] = value  # a user counter, as the benchmark named it
    for name, entry in sorted(aggregates.items()):
        for key in ("real_time", "cpu_time"):
            if isinstance(entry.get(key), (int, float)) and not isinstance(entry.get(key), bool) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                metrics[f"{name}_{key}"] = entry[key]
    manual = "manual_time" in settings
    protocol = {
        "harness": {"name": "Google Benchmark", "repository": HARNESS_URL, **({"version": context["version"]} if context["version"] else {})},
        "measurement": {"timer": "the benchmark's own time (manual_time)" if manual else "wall clock (real_time)",
                        "primaryStatistic": "mean", **({"minSamples": len(samples)} if len(samples) > 1 else {})},
        "comparability": {"family": "google-benchmark", "notes": (
            "Timed by Google Benchmark: each repetition runs the benchmark's loop for a calibrated number of iterations "
            "and records the mean time per iteration; "
            + ("the benchmark set each iteration's time itself (UseManualTime), as a CUDA benchmark does with events. "
               if manual else "real_time is the host's wall clock, which covers GPU work only where the loop synchronizes. ")
            + f"Run name settings: {', '.join(settings) or 'none'}.")},
    }
    details: dict[str, Any] = {}
    if isinstance(first.get("label"), str) and first["label"]:
        details["label"] = first["label"][:300]
    return Result(
        operation=operation, implementation=implementation or "", axes=axes, timing=timing, observed_at=context["observed_at"],
        external_id=run_name, metrics=metrics, hardware=context["host"], host=True,
        hardware_known={"vendor": "unknown", "product": context["host"], "architecture": "unknown"},
        protocol=protocol, settings=dict(context["settings"]), details=details,
    )
