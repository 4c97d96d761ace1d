"""What the benchmark-harness importers share: their source options and the documents of one result.

A harness (pytest-benchmark, Google Benchmark, NVBench, TritonBench, a mapped table) records
a benchmark's name, its parameters, statistics and, in places, the machine. Each adapter
reads its tool's file into ``Result``s, one per unit it can import; ``documents`` turns one
into the six documents a run needs. What the tool does not record stays absent: no field
here has a default that stands for a measurement.

Names: a document's readable name plus the first 8 hex of its spec's digest, so two
imports that differ in any identity field (another parameter, another library version)
never collide on a name, and the same input always gives the same name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from decimal import ROUND_HALF_EVEN, Decimal
from datetime import datetime, timezone
from typing import Any

import click

from sitegen.core.digest import document_digest
from sitegen.core.documents import document
from sitegen.core.formatversion import API_VERSION
from sitegen.importers.builtin import day_option
from sitegen.core.identity import axes_label, case_slug, name_slug
from sitegen.importers.core import Plan, RowError, accept, environment_document
from sitegen.importers.plugin import Importer
from sitegen.core.problems import Problem
from sitegen.core.strictjson import MAX_SAFE_INTEGER

SOURCE_OPTIONS = (
    click.Option(["--source"], metavar="ID", help="Source id: the records cite sources/ID.toml (default: the importer's name)."),
    click.Option(["--source-name"], metavar="TEXT", help="The source's human name (default: \"NAME results\")."),
    click.Option(["--license"], metavar="SPDX", default="NOASSERTION", show_default=True,
                 help="SPDX identifier of the results' license; NOASSERTION states none."),
    click.Option(["--published"], callback=day_option, metavar="YYYY-MM-DD",
                 help="Publication date for the source file (default: the existing file's, else the newest result's day)."),
    click.Option(["--implementation"], metavar="NAME",
                 help="Name the implementation measured (default: what the tool records; see each importer)."),
    click.Option(["--gpu"], metavar="PRODUCT",
                 help="The GPU the results ran on, as its driver names it (\"NVIDIA H100 80GB HBM3\"), where the tool "
                      "records none; refused where the tool records one."),
)


class HarnessImporter(Importer):
    """An importer of one harness's output file, with the shared source options."""

    options = SOURCE_OPTIONS
    units = "benchmark(s)"
    harness_url: str = ""
    """The harness's repository, for the source file when --source is not given."""

    def source(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        source_id = options.get("source") or self.name
        fields: dict[str, Any] = {"name": options.get("source_name") or f"{self.name} results",
                                  "license": options.get("license") or "NOASSERTION"}
        return name_slug(source_id) or self.name, fields


@dataclass
class Result:
    """One imported benchmark result, as the tool recorded it."""

    operation: str
    """Benchmark (family) name: the OperationSpec."""
    implementation: str
    """What was measured: the ImplementationRevision's name."""
    axes: dict[str, Any]
    """Parameters that define the case, in the tool's order."""
    timing: dict[str, Any] | None
    """A Timing (latencyNs, primaryStatistic, samplesNs), or None for a result without a time."""
    observed_at: str
    """RFC 3339 time of the measurement (or of the file, where the tool dates only the file)."""
    external_id: str
    """The result's name in the tool (its full benchmark name)."""
    metrics: dict[str, int | float]
    """The tool's numbers under its own names (sourceNative.metrics)."""
    hardware: str
    """GPU product, or the CPU where the tool times a host and records it."""
    protocol: dict[str, Any]
    """The BenchmarkProtocol spec: how the tool timed."""
    software: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    """Environment settings the tool records (CPU scaling, build type)."""
    project: str | None = None
    """The project the implementation belongs to, where the tool records it."""
    commit: str | None = None
    version: str | None = None
    dtype: str | None = None
    measurements: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    """Other numbers the tool records (evidence.details)."""
    timed_pass: str | None = None
    hardware_known: dict[str, str] | None = None
    """The full hardware object where the tool records vendor and architecture itself."""
    host: bool = False
    """The hardware is the host's CPU: the tool records no GPU, so --gpu may name it."""


def named(readable: str, spec: dict[str, Any]) -> str:
    """A document name: the readable part (slugged, cut to fit) and 8 hex of the spec's digest."""
    digest = document_digest({"apiVersion": API_VERSION, "kind": "Name", "spec": spec}).removeprefix("sha256:")[:8]
    base = name_slug(readable)[:180].rstrip("-.") or "x"
    return f"{base}-{digest}"


def nanoseconds(value: Any, scale: int, what: str) -> int:
    """``value`` in a unit of ``scale`` ns (1e9 for seconds) as whole ns, half-even from its decimal text."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise RowError(f"{what}: {value!r} is not a finite, non-negative time")
    ns = Decimal(repr(value)) * scale
    if ns > MAX_SAFE_INTEGER:
        raise RowError(f"{what}: {value!r} is too large (more than 2**53-1 ns)")
    return int(ns.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def sampled_timing(samples_ns: list[int], primary: str) -> dict[str, Any]:
    """A Timing from raw samples: the summary sitegen computes for every record with samples (so it agrees
    with the samples when checked), the samples in the order taken."""
    from sitegen.rules.stats import summary

    if not samples_ns:
        raise RowError("no samples")
    return {"latencyNs": summary(samples_ns), "primaryStatistic": primary, "samplesNs": list(samples_ns)}


def rfc3339(text: Any, what: str) -> str:
    """An ISO date-time with a zone as RFC 3339 UTC with microseconds ("2026-12-07T16:58:13.464449Z")."""
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise RowError(f"{what}: {text!r} is not an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise RowError(f"{what}: {text!r} has no time zone, so the instant it names is unknown")
    moment = moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond:06d}" if moment.microsecond else "") + "Z"


def scalar(value: Any) -> int | float | str | bool:
    """A parameter value as a workload axis holds it: numbers, strings and booleans as they are, else their text."""
    if isinstance(value, bool) or isinstance(value, str):
        return value
    if isinstance(value, int) and abs(value) <= MAX_SAFE_INTEGER:
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return str(value)


def documents(result: Result, source_id: str, axes_of: list[str]) -> dict[str, dict[str, Any]]:
    """The operation, workload, implementation, protocol, environment and run of one result ("run" last).

    ``axes_of`` is every axis name the operation's results use, so all its workloads reference one OperationSpec.
    """
    tool = result.protocol["harness"]["name"]
    # The name is the operation's only identity a harness records: without it in the spec, two
    # benchmarks with the same axes would be one document under two names.
    op_spec = {"family": "uncategorized", "axes": [{"name": a} for a in axes_of],
               "semantics": {"expression": f"what {tool} benchmark {result.operation!r} computes"[:20000],
                             "notes": f"Imported from {tool}'s output, which records the benchmark's name and "
                                      "parameters, not a definition of what it computes."}}
    operation = document("OperationSpec",
                         {"name": named(f"{source_id}-{result.operation}", op_spec), "title": result.operation[:300]},
                         op_spec)
    work_spec: dict[str, Any] = {"operationSpecDigest": document_digest(operation), "axes": dict(result.axes)}
    if result.dtype:
        work_spec["dtype"] = result.dtype
    work_spec["correctness"] = {"comparator": "not_asserted"}
    label = axes_label(result.axes, result.dtype) or "no parameters"
    workload = document("WorkloadCase",
                        {"name": named(f"{result.operation}-{case_slug(result.axes, result.dtype)}", work_spec),
                         "title": label[:300]},
                        work_spec)
    revision: dict[str, Any] = {"project": (result.project or result.implementation)[:300]}
    if result.commit:
        revision["commit"] = result.commit
    if result.version:
        revision["version"] = result.version
    impl_spec = {"name": result.implementation[:300], "projectRevision": revision,
                 "operation": {"specDigest": document_digest(operation)}}
    implementation = document("ImplementationRevision",
                              {"name": named(f"{result.implementation}-{result.operation}", impl_spec),
                               "title": f"{result.implementation} · {result.operation}"[:300]},
                              impl_spec)
    protocol = document("BenchmarkProtocol",
                        {"name": named(result.protocol["harness"]["name"], result.protocol),
                         "title": f"{result.protocol['harness']['name']} timing"[:300]},
                        result.protocol)
    environment, _known = environment_document("x", result.hardware[:300], result.hardware[:300], dict(result.software))
    if result.hardware_known:
        environment["spec"]["hardware"] = dict(result.hardware_known)
    if result.settings:
        environment["spec"]["settings"] = dict(result.settings)
    environment["metadata"]["name"] = named(f"{source_id}-{result.hardware}", environment["spec"])
    docs = {"operation": operation, "workload": workload, "implementation": implementation,
            "protocol": protocol, "environment": environment}
    docs["run"] = _run(result, source_id, docs)
    return docs


def _run(result: Result, source_id: str, docs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "implementationDigest": document_digest(docs["implementation"]),
        "workloadDigest": document_digest(docs["workload"]),
        "protocolDigest": document_digest(docs["protocol"]),
        "environmentDigest": document_digest(docs["environment"]),
    }
    if result.timed_pass:
        spec["timedPass"] = result.timed_pass
    spec["status"] = "passed"
    if result.timing is not None:
        spec["timing"] = result.timing
    if result.measurements:
        spec["measurements"] = result.measurements
    spec["sourceNative"] = {"source": source_id, "benchmark": result.operation[:300],
                            "externalId": result.external_id[:300], "metrics": dict(result.metrics)}
    if result.details:
        spec["evidence"] = {"details": dict(result.details)}
    spec["observedAt"] = result.observed_at
    stamp = result.observed_at[:19].replace(":", "-")
    name = named(f"{source_id}-{result.operation}-{result.implementation}-{stamp}", spec)
    title = f"{result.operation} · {result.implementation} · {axes_label(result.axes, result.dtype)}"
    return document("BenchmarkRun", {"name": name, "title": title[:300]}, spec)


def plan_results(plan: Plan, display: str, results: list[tuple[str, Result]], source_id: str,
                 options: dict[str, Any]) -> Plan:
    """Accept each result's documents into ``plan`` (one problem line per result that fails).

    ``results`` pairs each result with where it is in ``display`` ("$.benchmarks[3]", "line 7").
    --implementation and --gpu apply here, the same for every harness.
    """
    gpu, implementation = options.get("gpu"), options.get("implementation")
    axes: dict[str, list[str]] = {}
    for _where, result in results:
        known = axes.setdefault(result.operation, [])
        known.extend(a for a in result.axes if a not in known)
    for where, result in results:
        try:
            if implementation:
                result.implementation = implementation
            if not result.implementation:
                raise RowError("the file names no implementation (no project, no executable): pass --implementation")
            if gpu:
                if not result.host:
                    raise RowError(f"--gpu {gpu!r}: the tool records the GPU itself ({result.hardware})")
                if result.hardware:
                    result.settings["hostCpu"] = result.hardware[:300]
                result.hardware, result.hardware_known = gpu, None
            if not result.hardware:
                raise RowError("the file names no GPU: pass --gpu")
            docs = documents(result, source_id, axes[result.operation])
            accept(plan, where, docs, docs["operation"]["metadata"]["name"])
        except (RowError, ValueError, ArithmeticError) as exc:
            plan.problems.append(Problem(display, where, str(exc) or type(exc).__name__))
            continue
        plan.imported += 1
        plan.seen_day(result.observed_at[:10])
    return plan


# A harness's JSON for a large suite is a few MB; the bound keeps /dev/zero or a runaway file out of memory.
MAX_JSON_BYTES = 64 * 1024 * 1024


def read_json(plan: Plan, path: Path, display: str) -> Any:
    """The file's JSON, read strictly (duplicate keys, NaN, huge integers refused); None after one problem line."""
    from sitegen.core.inputfile import read_regular
    from sitegen.core.problems import InputError
    from sitegen.core.strictjson import parse_bytes

    try:
        return parse_bytes(read_regular(path, MAX_JSON_BYTES, display), display)
    except InputError as exc:
        plan.problems.extend(exc.problems)
        return None


def where_type(value: Any, expected: type | tuple[type, ...], what: str) -> Any:
    """``value`` if it is of ``expected`` type, else RowError naming ``what`` (booleans are no numbers)."""
    if isinstance(value, bool) and bool not in (expected if isinstance(expected, tuple) else (expected,)):
        raise RowError(f"{what}: {value!r} is not {_type_name(expected)}")
    if not isinstance(value, expected):
        raise RowError(f"{what}: {value!r} is not {_type_name(expected)}" if value is not None else f"{what}: missing")
    return value


def _type_name(expected: type | tuple[type, ...]) -> str:
    names = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number", bool: "a boolean"}
    kinds = expected if isinstance(expected, tuple) else (expected,)
    return " or ".join(dict.fromkeys(names.get(k, k.__name__) for k in kinds))
