"""Liger-Kernel's benchmark CSV → validated kernelindex documents, row by row.

Each row becomes a BenchmarkRun plus the documents it references (operation, workload,
implementation, protocol, environment). A row is all or nothing: every document it
needs is validated before any is accepted; a row that cannot be mapped becomes one
Problem ``CSV: line N: reason`` and the other rows still import. Nothing here writes.
"""

from __future__ import annotations

import csv
import io
import math
from datetime import datetime, timezone
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.documents import document
from sitegen.importers import ligercases, ligersetup
from sitegen.core import identity
from sitegen.importers.core import Plan, RowError, accept, gpu_slug
from sitegen.core.ligertables import LIGER_REPOSITORY
from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem
from sitegen.core.strictjson import MAX_SAFE_INTEGER

SOURCE_ID = "liger-kernel-bench"
# Liger's whole CSV is 0.6 MB; a bound keeps /dev/zero or a runaway file from filling memory.
MAX_CSV_BYTES = 256 * 1024 * 1024
LIGER_SOURCE = {
    "name": "Liger-Kernel benchmarks",
    "url": LIGER_REPOSITORY,
    "license": "BSD-2-Clause",
    "citation": f"Liger-Kernel, benchmark/data/all_benchmark_data.csv, {LIGER_REPOSITORY} (BSD-2-Clause)",
}
COLUMNS = (
    "kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name", "metric_unit", "x_name",
    "x_label", "x_value", "y_value_50", "y_value_20", "y_value_80", "extra_benchmark_config_str",
    "gpu_name", "timestamp", "liger_version",
)
REQUIRED = tuple(c for c in COLUMNS if c not in ("x_label", "extra_benchmark_config_str", "liger_version"))
METRICS = {"speed": ("ms", "latency", "ns"), "memory": ("MB", "memory", "MB")}


def _number(row: dict[str, str], column: str) -> tuple[float, Decimal]:
    text = (row.get(column) or "").strip()
    try:
        exact = Decimal(text)
        value = float(text)
    except (InvalidOperation, ValueError):
        raise RowError(f"{column}: {text!r} is not a number") from None
    # Decimal reads "sNaN", which float does not; both read "nan" and "inf".
    if not exact.is_finite() or not math.isfinite(value) or value < 0:
        raise RowError(f"{column}: {text!r} is not a finite, non-negative number")
    return value, exact


def _nanoseconds(row: dict[str, str], column: str) -> int:
    # From the decimal text, not the float: 9.110560417175293 ms is exactly 9110560.417… ns,
    # and half-even rounding of the exact value never drifts by float error. The size is
    # bounded before rounding: quantizing past the context's 28 digits raises InvalidOperation.
    ns = _number(row, column)[1] * 1_000_000
    rounded = int(ns.quantize(Decimal(1), rounding=ROUND_HALF_EVEN)) if ns <= 2 * MAX_SAFE_INTEGER else None
    if rounded is None or rounded > MAX_SAFE_INTEGER:
        raise RowError(f"{column}: {row[column].strip()!r} ms is too large (more than 2**53-1 ns)")
    return rounded


def observed_at(text: str) -> tuple[str, str]:
    """The timestamp as RFC 3339 UTC ("2026-05-27T17:14:29.000Z") and as an id segment.

    The CSV's timestamps carry no zone; they are read as UTC (the only reading that needs
    no guess about the benchmark host's clock).
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise RowError(f"timestamp: {text!r} is not a date and time like 2026-05-27 17:14:29") from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    stamp = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{moment.microsecond // 1000:03d}Z"
    return stamp, moment.strftime("%Y-%m-%d-%H-%M-%S")


def _workload(kernel: str, case: ligercases.Case, operation: dict[str, Any]) -> dict[str, Any]:
    if kernel == "jsd" and not case.scalars and not case.config and case.dtype in identity.JSD_DTYPES:
        # The shared builder, so sitegen's own GPU reruns land in the same cohorts.
        return identity.jsd_workload_document(case.axes["tokens"], case.axes["vocab"], case.dtype)
    return identity.workload_document(
        kernel, case.axes, dtype=case.dtype, scalars=case.scalars, config=case.config, operation=operation,
    )


def _run(row: dict[str, str], docs: dict[str, dict[str, Any]], case: ligercases.Case) -> dict[str, Any]:
    kernel, provider, mode, metric = (row[c] for c in ("kernel_name", "kernel_provider", "kernel_operation_mode", "metric_name"))
    values = {q: _number(row, f"y_value_{q}") for q in ("50", "20", "80")}
    stamp, stamp_id = observed_at(row["timestamp"])
    segments = [kernel, mode, provider, gpu_slug(row["gpu_name"]), identity.case_slug(case.axes, case.dtype), stamp_id]
    title = f"{identity.kernel_title(kernel)} · {provider} · {mode}"
    if metric == "memory":
        # A memory row shares kernel, pass, provider, GPU and case with a speed row.
        segments.insert(2, "memory")
        title += " · memory"
    external_id = "/".join(segments)
    spec: dict[str, Any] = {
        "implementationDigest": document_digest(docs["implementation"]),
        "workloadDigest": document_digest(docs["workload"]),
        "protocolDigest": document_digest(docs["protocol"]),
        "environmentDigest": document_digest(docs["environment"]),
        "status": "passed",
    }
    if metric == "speed":
        spec["timing"] = {"latencyNs": {"median": _nanoseconds(row, "y_value_50")}, "primaryStatistic": "median"}
        spec["measurements"] = [
            {"metric": "latency", "statistic": f"p{q}", "unit": "ns", "value": _nanoseconds(row, f"y_value_{q}")}
            for q in ("20", "80")
        ]
        prefix = "ms"
    else:
        spec["measurements"] = [
            {"metric": "memory", "statistic": statistic, "unit": "MB", "value": values[q][0]}
            for statistic, q in (("median", "50"), ("p20", "20"), ("p80", "80"))
        ]
        prefix = "mb"
    spec["sourceNative"] = {
        "source": SOURCE_ID,
        "benchmark": f"{kernel}/{mode}",
        "externalId": external_id,
        "metrics": {f"{prefix}_{q}": values[q][0] for q in ("20", "50", "80")},
    }
    spec["observedAt"] = stamp
    metadata: dict[str, Any] = {"name": identity.name_slug("liger-" + external_id.replace("/", "-")), "title": title}
    if row.get("liger_version"):
        metadata["labels"] = {"liger_version": row["liger_version"]}
    return document("BenchmarkRun", metadata, spec)


class _Importer:
    def __init__(self, display: str):
        self.display = display
        self.plan = Plan()
        self.unknown_axes: dict[str, list[str]] = {}
        self.warned: set[tuple[str, str]] = set()

    def warn(self, line: int, what: str, key: str, message: str) -> None:
        if (what, key) not in self.warned:
            self.warned.add((what, key))
            self.plan.warnings.append(f"{self.display}: line {line}: warning: {message}")

    def fail(self, line: int, message: str) -> None:
        self.plan.problems.append(Problem(self.display, f"line {line}", message))

    def check(self, line: int, row: dict[str, str]) -> ligercases.Case:
        empty = [c for c in REQUIRED if not (row.get(c) or "").strip()]
        if empty:
            raise RowError(f"{empty[0]}: empty")
        if row["kernel_operation_mode"] not in ligersetup.PASSES:
            raise RowError(f"kernel_operation_mode: {row['kernel_operation_mode']!r} is not one of {', '.join(ligersetup.PASSES)}")
        expected = METRICS.get(row["metric_name"])
        if expected is None:
            raise RowError(f"metric_name: {row['metric_name']!r} is not one of {', '.join(METRICS)}")
        if row["metric_unit"] != expected[0]:
            raise RowError(f"metric_unit: {row['metric_unit']!r}; a {row['metric_name']} row is in {expected[0]}")
        try:
            case = ligercases.map_case(row["kernel_name"], row["x_name"], row.get("x_label") or "", row["x_value"],
                                       row.get("extra_benchmark_config_str") or "")
        except ligercases.CaseError as exc:
            raise RowError(str(exc)) from None
        kernel = row["kernel_name"]
        if kernel not in identity.KERNELS:
            known = self.unknown_axes.setdefault(kernel, [])
            known.extend(a for a in case.axes if a not in known)
        return case

    def documents(self, line: int, row: dict[str, str], case: ligercases.Case) -> dict[str, dict[str, Any]]:
        kernel, provider = row["kernel_name"], row["kernel_provider"]
        operation = identity.operation_document_with_axes(kernel, self.unknown_axes.get(kernel, []))
        if kernel not in identity.KERNELS:
            self.warn(line, "kernel", kernel, f"unknown kernel {kernel!r}: imported as {identity.kernel_title(kernel)!r} with the generic axis names")
        info = identity.provider_info(provider)
        if provider not in identity.PROVIDERS:
            self.warn(line, "provider", provider, f"unknown provider {provider!r}: imported as {info['name']!r}")
        for key in case.unknown_keys:
            self.warn(line, "config", f"{kernel}/{key}", f"{kernel}: unknown config key {key!r} kept in the workload's config as published")
        version = (row.get("liger_version") or None) if info.get("liger") else None
        environment, known_gpu = ligersetup.environment(row["gpu_name"])
        if not known_gpu:
            hardware = environment["spec"]["hardware"]
            self.warn(line, "gpu", row["gpu_name"], f"unknown GPU {row['gpu_name']!r}: architecture 'unknown', vendor guessed {hardware['vendor']!r}")
        mode = row["kernel_operation_mode"]
        docs = {
            "operation": operation,
            "workload": _workload(kernel, case, operation),
            "implementation": identity.implementation_document_for(operation, kernel, provider, version),
            "protocol": ligersetup.speed_protocol(mode) if row["metric_name"] == "speed" else ligersetup.memory_protocol(mode),
            "environment": environment,
        }
        docs["run"] = _run(row, docs, case)
        return docs

    def accept(self, line: int, docs: dict[str, dict[str, Any]], kernel: str) -> None:
        accept(self.plan, f"line {line}", docs, kernel)

    def rows(self, text: str) -> list[tuple[int, dict[str, str]]]:
        """Rows with the line each starts on; shape problems are reported, not returned."""
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            header = next(reader, [])
        except csv.Error as exc:
            self.fail(1, f"unreadable CSV: {exc}")
            return []
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            self.fail(1, f"missing column(s) {', '.join(missing)}")
            return []
        rows = []
        while True:
            line = reader.line_num + 1
            try:
                fields = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                self.plan.rows += 1
                self.fail(line, f"unreadable CSV: {exc}")
                break
            if not fields:
                continue
            self.plan.rows += 1
            if len(fields) != len(header):
                self.fail(line, f"{len(fields)} fields; the header has {len(header)}")
                continue
            rows.append((line, dict(zip(header, fields))))
        return rows

    def run(self, text: str) -> Plan:
        checked: list[tuple[int, dict[str, str], ligercases.Case]] = []
        for line, row in self.rows(text):
            try:
                checked.append((line, row, self.check(line, row)))
            except RowError as exc:
                self.fail(line, str(exc))
        # Unknown kernels' axes are gathered over all rows first, so every row of one
        # kernel references the same OperationSpec.
        for line, row, case in checked:
            try:
                docs = self.documents(line, row, case)
                self.accept(line, docs, row["kernel_name"])
            except (ValueError, ArithmeticError) as exc:
                # ArithmeticError: a decimal edge case not foreseen above is still one
                # row's problem, never a traceback.
                self.fail(line, str(exc) or type(exc).__name__)
                continue
            self.plan.imported += 1
            self.plan.seen_day(docs["run"]["spec"]["observedAt"][:10])
        return self.plan


def plan_import(path: Path, display: str | None = None) -> Plan:
    """Read the CSV at ``path`` and build every row's documents; nothing is written."""
    shown = display or str(path)
    plan = Plan()
    try:
        data = read_regular(path, MAX_CSV_BYTES, shown)
    except InputError as exc:
        plan.problems.extend(exc.problems)
        return plan
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start)
        plan.problems.append(Problem(shown, f"line {line}", f"column {column}: not UTF-8 text: {exc.reason}"))
        return plan
    nul = text.find("\0")
    if nul >= 0:
        # csv reads NUL as an ordinary character, so it would end up inside names and values.
        line, column = text.count("\n", 0, nul) + 1, nul - text.rfind("\n", 0, nul)
        plan.problems.append(Problem(shown, f"line {line}", f"column {column}: NUL byte; the file is not CSV text"))
        return plan
    return _Importer(shown).run(text)


def _position(data: bytes, offset: int) -> tuple[int, int]:
    """1-based line and character column of byte ``offset``."""
    before = data[:offset]
    line_start = before.rfind(b"\n") + 1
    return before.count(b"\n") + 1, len(before[line_start:].decode("utf-8", "replace")) + 1
