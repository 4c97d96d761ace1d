"""pytest-benchmark's ``--benchmark-json`` file → Reported runs, one per benchmark.

What pytest-benchmark records, and where it goes (nothing it does not record is filled in):

- operation: the benchmark's ``group``, else its test name without the parameters;
- implementation: the value of ``--implementation-param`` (a parameter such as ``provider``),
  else the project in ``commit_info`` (its commit, where the tree was clean), or --implementation;
- workload: ``params`` (less the implementation parameter), in the test's order;
- timing, in whole ns: the raw per-round times (each the mean of its round's iterations) when the
  file has them (``--benchmark-save-data``), with their summary computed as sitegen computes every
  record's (so intervals are bootstrapped); else the tool's min, max, mean, median and stddev. The
  median ranks. The tool's own statistics, quartiles included (its quartile rule is not the linear
  percentile the format's p25 means), stay in sourceNative.metrics in seconds;
- protocol: the timer, minimum rounds, round time, warm-up and GC setting from ``options``;
- environment: the host CPU and Python that ``machine_info`` records (the tool records no GPU:
  name it with --gpu), the system and release as settings;
- observedAt: the file's ``datetime`` (the tool dates the session, not each benchmark).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from sitegen.importers.core import Plan, RowError
from sitegen.importers.harness import (
    SOURCE_OPTIONS, HarnessImporter, Result, nanoseconds, plan_results, read_json, rfc3339, sampled_timing, scalar,
    where_type,
)
from sitegen.core.problems import Problem

HARNESS_URL = "https://github.com/ionelmc/pytest-benchmark"
_STATS = {"min": "min", "max": "max", "mean": "mean", "median": "median", "stddev": "stdev"}


class PytestBenchmark(HarnessImporter):
    summary = "pytest-benchmark's --benchmark-json file: one BenchmarkRun per benchmark."
    help = ("Operation: each benchmark's group, else its test name; implementation: the value of "
            "--implementation-param, else commit_info's project; workload: its params. Raw round times "
            "are imported when the file has them (run with --benchmark-save-data), so `sitegen check` "
            "can bootstrap intervals. A benchmark that cannot be read is one line naming its JSON path.")
    options = (*SOURCE_OPTIONS, click.Option(
        ["--implementation-param"], metavar="PARAM",
        help="The parameter whose value names the implementation (e.g. provider); it leaves the workload."))

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        plan, shown = Plan(), str(path)
        data = read_json(plan, path, shown)
        if data is None:
            return plan
        if not isinstance(data, dict) or not isinstance(data.get("benchmarks"), list):
            plan.problems.append(Problem(shown, "$.benchmarks", "not pytest-benchmark's --benchmark-json output (no benchmarks array)"))
            return plan
        try:
            session = _session(data)
        except RowError as exc:
            plan.problems.append(Problem(shown, "$", str(exc)))
            return plan
        results = []
        for i, bench in enumerate(data["benchmarks"]):
            plan.rows += 1
            where = f"$.benchmarks[{i}]"
            try:
                results.append((where, _result(bench, session, options.get("implementation_param"))))
            except RowError as exc:
                plan.problems.append(Problem(shown, where, str(exc)))
        return plan_results(plan, shown, results, self.source(options)[0], options)


def _session(data: dict[str, Any]) -> dict[str, Any]:
    """What the file records once for every benchmark: date, machine, project, tool version."""
    machine = where_type(data.get("machine_info"), dict, "machine_info")
    commit = data.get("commit_info") if isinstance(data.get("commit_info"), dict) else {}
    cpu = machine.get("cpu") if isinstance(machine.get("cpu"), dict) else {}
    brand = cpu.get("brand_raw") or machine.get("processor")
    if not isinstance(brand, str) or not brand.strip():
        raise RowError("machine_info records no CPU (cpu.brand_raw, processor): name the GPU with --gpu")
    hardware = {"vendor": str(cpu.get("vendor_id_raw") or "unknown")[:300], "product": brand.strip()[:300],
                "architecture": str(machine.get("machine") or cpu.get("arch_string_raw") or "unknown")[:300]}
    software: dict[str, Any] = {}
    if isinstance(machine.get("python_version"), str):
        software["python"] = machine["python_version"]
    settings = {k: machine[k] for k in ("system", "release", "python_implementation")
                if isinstance(machine.get(k), str) and machine[k]}
    project = commit.get("project") if isinstance(commit.get("project"), str) and commit.get("project") else None
    revision = commit.get("id") if isinstance(commit.get("id"), str) else None
    clean = commit.get("dirty") is False
    return {
        "observed_at": rfc3339(data.get("datetime"), "datetime"),
        "version": data.get("version") if isinstance(data.get("version"), str) else None,
        "hardware": hardware, "software": software, "settings": settings, "project": project,
        # A dirty tree's commit does not name the code that ran.
        "commit": revision if clean and revision and re.fullmatch(r"[0-9a-f]{7,64}", revision) else None,
        "dirty": commit.get("dirty") is True,
    }


def _protocol(options: dict[str, Any], version: str | None) -> dict[str, Any]:
    harness: dict[str, Any] = {"name": "pytest-benchmark", "repository": HARNESS_URL}
    if version:
        harness["version"] = version
    measurement: dict[str, Any] = {"timer": str(options.get("timer") or "unrecorded")[:300], "primaryStatistic": "median"}
    if isinstance(options.get("warmup"), bool):
        measurement["warmup"] = {"notes": "pytest-benchmark's warm-up rounds before timing (--benchmark-warmup)"
                                 if options["warmup"] else "none: --benchmark-warmup was off"}
    rounds = options.get("min_rounds")
    if isinstance(rounds, int) and not isinstance(rounds, bool) and rounds > 0:
        measurement["minSamples"] = rounds
    recorded = {k: options[k] for k in ("disable_gc", "max_time", "min_time", "timer", "min_rounds", "warmup")
                if isinstance(options.get(k), (str, int, float, bool))}
    notes = ("Timed by pytest-benchmark on the host: each round calls the benchmarked function a calibrated number "
             "of times and records the mean per call; rounds repeat until max_time passes and min_rounds are done. "
             "A host clock around a GPU launch times completion only where the function synchronizes. Options as "
             "recorded: " + ", ".join(f"{k} = {v}" for k, v in sorted(recorded.items())))
    return {"harness": harness, "measurement": measurement,
            "devicePolicy": {f"pytest_benchmark.{k}": v for k, v in sorted(recorded.items())},
            "comparability": {"family": "pytest-benchmark", "notes": notes[:20000]}}


def _result(bench: Any, session: dict[str, Any], implementation_param: str | None) -> Result:
    bench = where_type(bench, dict, "benchmark")
    name = where_type(bench.get("name"), str, "name")
    stats = where_type(bench.get("stats"), dict, "stats")
    params = bench.get("params") or {}
    where_type(params, dict, "params")
    operation = bench.get("group") if isinstance(bench.get("group"), str) and bench.get("group") else name.split("[")[0]
    axes = {str(k): scalar(v) for k, v in params.items()}
    implementation = session["project"]
    if implementation_param:
        if implementation_param not in axes:
            raise RowError(f"params: no {implementation_param!r} (--implementation-param)")
        implementation = str(axes.pop(implementation_param))
    if not implementation:
        raise RowError("commit_info records no project: pass --implementation or --implementation-param")
    rounds = stats.get("rounds")
    samples = stats.get("data")
    if samples is not None:
        where_type(samples, list, "stats.data")
        if len(samples) != rounds:
            raise RowError(f"stats.data: {len(samples)} samples, but stats.rounds says {rounds!r}")
        timing = sampled_timing([nanoseconds(v, 10**9, f"stats.data[{i}]") for i, v in enumerate(samples)], "median")
    else:
        latency = {ours: nanoseconds(stats.get(theirs), 10**9, f"stats.{theirs}") for theirs, ours in _STATS.items()}
        timing = {"latencyNs": latency, "primaryStatistic": "median"}
    metrics = {f"{k}_s" if k != "ops" else k: stats[k] for k in ("min", "max", "mean", "median", "stddev", "q1", "q3", "iqr", "total", "ops")
               if isinstance(stats.get(k), (int, float)) and not isinstance(stats.get(k), bool)}
    metrics.update({k: stats[k] for k in ("rounds", "iterations", "iqr_outliers", "stddev_outliers")
                    if isinstance(stats.get(k), int) and not isinstance(stats.get(k), bool)})
    details: dict[str, Any] = {k: v for k, v in (bench.get("extra_info") or {}).items()
                               if isinstance(v, (str, int, float, bool)) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", k)}
    if session["dirty"]:
        details["commitDirty"] = True
    return Result(
        operation=operation, implementation=implementation, axes=axes, timing=timing,
        observed_at=session["observed_at"], external_id=str(bench.get("fullname") or name),
        metrics=metrics, hardware=session["hardware"]["product"], hardware_known=session["hardware"], host=True,
        protocol=_protocol(where_type(bench.get("options"), dict, "options"), session["version"]),
        software=dict(session["software"]), settings=dict(session["settings"]),
        project=session["project"] if not implementation_param else None,
        commit=session["commit"] if not implementation_param else None,
        details=details,
    )
