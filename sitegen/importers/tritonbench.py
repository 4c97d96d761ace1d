"""TritonBench's results (``--output-json FILE``, or ``--csv --output FILE``) → Reported runs, one per input × provider.

What TritonBench writes (tritonbench/utils/triton_op.py, ``userbenchmark_dict`` and ``write_csv_to_file``):
JSON keys ``tritonbench_{op}_{mode}[x_{x_val}-{provider}]_{metric}`` with one value each (latency as
text), plus averages; the CSV (``;``-separated) one row per x_val and a column per
``provider-metric``, then an ``average`` row. What goes where:

- operation: the op (the CSV does not name it: --operation, else the file name TritonBench gives
  it, ``op_{op}_….csv``); the pass: the mode (fwd, bwd, fwd_bwd; fwd_no_grad is its own operation);
- implementation: the provider; workload: ``x_val``, the input TritonBench iterates over;
- timing: ``latency``, TritonBench's median (``statistics.median_low`` of its samples after removing
  IQR outliers) in ms, as whole ns. Its other numeric metrics (gbps, tflops, speedup...) stay in
  sourceNative.metrics. No samples, quantiles, device, date or version are in either file, so the
  runs carry no interval, --gpu names the device and --observed-at the time.

Averages over inputs (``x_average``, ``…-avg``, the CSV's ``average`` row) are no measurement: each is
skipped with one line.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import click

from sitegen.importers.core import Plan, RowError
from sitegen.importers.harness import SOURCE_OPTIONS, HarnessImporter, Result, nanoseconds, plan_results, read_json, rfc3339
from sitegen.importers.nvbench import OBSERVED_AT
from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem

HARNESS_URL = "https://github.com/meta-pytorch/tritonbench"
PASSES = {"fwd": "forward", "bwd": "backward", "fwd_bwd": "full", "fwd_no_grad": "forward"}
_KEY = re.compile(r"^tritonbench_(?P<bench>.+)\[x_(?P<x>.*)-(?P<provider>[^\]-]+)\]_(?P<metric>.+)$")
_AVERAGE = re.compile(r"^tritonbench_.+\[[^\]]+\]-.+-avg$")


class TritonBench(HarnessImporter):
    summary = "TritonBench's --output-json or --csv --output file: one BenchmarkRun per input and provider."
    help = ("The latency (TritonBench's median, ms) of each x_val and provider; other metrics in sourceNative. "
            "The files record no device and no date: --gpu and --observed-at are required. Averages are skipped "
            "with one line each.")
    units = "result(s)"
    options = (*SOURCE_OPTIONS, OBSERVED_AT,
               click.Option(["--operation"], metavar="OP", help="The op a CSV holds (TritonBench's --op); the JSON names it."),
               click.Option(["--mode"], type=click.Choice(sorted(PASSES)), help="The mode a CSV was run in; the JSON names it."))

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        plan, shown = Plan(), str(path)
        # The file first: a file that is not TritonBench's output is the problem to name, not the
        # date it would need.
        if path.suffix.lower() == ".csv":
            cells = self._csv(path, shown, options, plan)
        else:
            cells = self._json(path, shown, plan)
        if plan.problems:
            return plan
        if not options.get("observed_at"):
            plan.problems.append(Problem(shown, "$", "TritonBench's output records no date: pass --observed-at, when it was measured"))
            return plan
        try:
            observed = rfc3339(options["observed_at"], "--observed-at")
        except RowError as exc:
            plan.problems.append(Problem(shown, "$", str(exc)))
            return plan
        results = []
        for (bench, x_val, provider), (where, metrics) in cells.items():
            plan.rows += 1
            try:
                results.append((where, _result(bench, x_val, provider, metrics, observed)))
            except RowError as exc:
                plan.problems.append(Problem(shown, where, str(exc)))
        return plan_results(plan, shown, results, self.source(options)[0], options)

    def _json(self, path: Path, shown: str, plan: Plan) -> dict[tuple[str, str, str], tuple[str, dict[str, Any]]]:
        data = read_json(plan, path, shown)
        if data is None:
            return {}
        if not isinstance(data, dict):
            plan.problems.append(Problem(shown, "$", "not TritonBench's --output-json output (an object of metrics)"))
            return {}
        cells: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        for key, value in data.items():
            where = f"$[{key!r}]"
            if _AVERAGE.match(key):
                plan.warnings.append(f"{shown}: {where}: skipped: an average over inputs, not a measurement")
                continue
            match = _KEY.match(key)
            if match is None:
                plan.problems.append(Problem(shown, where, "not a TritonBench metric key (tritonbench_OP_MODE[x_X-PROVIDER]_METRIC)"))
                continue
            if match["x"] == "average":
                plan.warnings.append(f"{shown}: {where}: skipped: an average over inputs, not a measurement")
                continue
            cell = cells.setdefault((match["bench"], match["x"], match["provider"]), (where, {}))
            cell[1][match["metric"]] = value
        return cells

    def _csv(self, path: Path, shown: str, options: dict[str, Any], plan: Plan) -> dict[tuple[str, str, str], tuple[str, dict[str, Any]]]:
        named = re.match(r"^op_(.+?)_[^_]+\.csv$", path.name)
        op = options.get("operation") or (named.group(1) if named else None)
        if not op:
            plan.problems.append(Problem(shown, "$", "a TritonBench CSV does not name its op: pass --operation"))
            return {}
        try:
            text = read_regular(path, 64 * 1024 * 1024, shown).decode("utf-8")
        except InputError as exc:
            plan.problems.extend(exc.problems)
            return {}
        except UnicodeDecodeError as exc:
            plan.problems.append(Problem(shown, "$", f"not UTF-8 text: {exc.reason}"))
            return {}
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
        if not rows or not rows[0] or rows[0][0] != "x_val":
            plan.problems.append(Problem(shown, "line 1", "not TritonBench's CSV (no x_val;PROVIDER-METRIC header)"))
            return {}
        header = rows[0]
        bench = op + (f"_{options['mode']}" if options.get("mode") else "")
        cells: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = {}
        for line, row in enumerate(rows[1:], start=2):
            if not row:
                continue
            if row[0] == "average":
                plan.warnings.append(f"{shown}: line {line}: skipped: the average over inputs, not a measurement")
                continue
            for column, value in zip(header[1:], row[1:]):
                provider, _, metric = column.partition("-")
                cell = cells.setdefault((bench, row[0], provider), (f"line {line}", {}))
                cell[1][metric] = value
        return cells


def _result(bench: str, x_val: str, provider: str, metrics: dict[str, Any], observed: str) -> Result:
    op, timed, mode = bench, None, None
    for suffix in sorted(PASSES, key=len, reverse=True):
        if bench.endswith("_" + suffix):
            op, mode = bench[: -len(suffix) - 1], suffix
            break
    if mode:
        timed = PASSES[mode]
        if mode == "fwd_no_grad":
            op = f"{op} (no grad)"
    if "latency" not in metrics or metrics["latency"] in (None, ""):
        raise RowError(f"{provider} at x_val {x_val}: no latency")
    try:
        latency_ms = float(metrics["latency"])
    except (TypeError, ValueError):
        raise RowError(f"latency: {metrics['latency']!r} is not a number of ms") from None
    numbers = {}
    for name, value in metrics.items():
        try:
            number = float(value) if isinstance(value, str) else value
        except ValueError:
            continue  # a metric TritonBench prints as text (a shape, a list)
        key = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{name}_ms" if name == "latency" else name)[:64]
        if isinstance(number, (int, float)) and not isinstance(number, bool) and re.match(r"[A-Za-z_]", key):
            numbers[key] = number
    x_axis: int | str = int(x_val) if re.fullmatch(r"-?[0-9]{1,15}", x_val) else x_val
    return Result(
        operation=op, implementation=provider, axes={"x_val": x_axis},
        timing={"latencyNs": {"median": nanoseconds(latency_ms, 1_000_000, "latency")}, "primaryStatistic": "median"},
        observed_at=observed, external_id=f"{bench}[x_{x_val}-{provider}]", metrics=numbers, hardware="", host=True,
        timed_pass=timed,
        protocol={"harness": {"name": "TritonBench", "repository": HARNESS_URL},
                  "measurement": {"timer": "unrecorded", "primaryStatistic": "median"},
                  "comparability": {"family": "tritonbench", "notes": (
                      "TritonBench's latency: the median (statistics.median_low) in ms of the samples it took, after "
                      "removing IQR outliers (tritonbench/components/do_bench/run.py, Latency). Its output records "
                      "only that number: the timer, warm-up and repetitions are in the command line it ran, not in the file.")}},
    )
