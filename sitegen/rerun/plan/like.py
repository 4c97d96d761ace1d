"""--like RUN_ID: rerun a recorded run's workload, pass and implementation, and judge the result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sitegen.core.problems import InputError, Problem
from sitegen.core.workload import Workload
from sitegen.operations.harnessed import MODES, impl_of
from sitegen.rules.protocol import AGREEMENT
from sitegen.rerun.plan.registryscan import Scan, find_run
from sitegen.rules.verdict import pass_from_benchmark

@dataclass
class LikePlan:
    op: Any  # sitegen.operations.base.Operation
    run_digest: str
    run_name: str
    workload: Workload
    timed_pass: str
    impl: str
    original_version: str | None
    mode: str
    protocol: dict[str, Any]
    original_product: str
    original_ns: float | None
    tolerance: float


def plan(found: Scan, run_id: str, records_dir: str) -> LikePlan:
    """Resolve a run and everything it references; InputError naming what is missing."""
    hit = find_run(found, run_id)
    if hit is None:
        raise InputError([Problem(records_dir, "$", f"no BenchmarkRun named or with digest {run_id!r}")])
    digest, run = hit
    spec = run["spec"]
    where = f"{records_dir}: BenchmarkRun {run['metadata']['name']}"

    def ref(field: str, kind: str) -> dict[str, Any]:
        doc = found.by_digest.get(spec.get(field, ""))
        if doc is None or doc["kind"] != kind:
            raise InputError([Problem(where, f"$.spec.{field}", f"references no {kind} in {records_dir}")])
        return doc

    workload, impl_doc = ref("workloadDigest", "WorkloadCase"), ref("implementationDigest", "ImplementationRevision")
    protocol, environment = ref("protocolDigest", "BenchmarkProtocol"), ref("environmentDigest", "ExecutionEnvironment")
    op_doc = found.by_digest.get(workload["spec"].get("operationSpecDigest", ""))
    op_name = op_doc["metadata"]["name"] if op_doc and op_doc["kind"] == "OperationSpec" else None
    from sitegen import operations
    from sitegen.rerun.plan import opfacts

    # A plugin's facts come from a process of its own (opfacts): the parent never runs its code.
    op = opfacts.load(op_name) if op_name and op_name in operations.known() else None
    if op is None:
        raise InputError([Problem(where, "$.spec.workloadDigest", f"no operation plugin for {op_name or 'its operation'} "
                                  f"is installed (known: {', '.join(sorted(operations.known()))})")])
    axes = workload["spec"].get("axes", {})
    dtype = workload["spec"].get("dtype")
    if not (all(isinstance(axes.get(a), int) and not isinstance(axes.get(a), bool) for a in op.axes) and dtype):
        raise InputError([Problem(where, "$.spec.workloadDigest",
                                  f"workload is not a {op.name} case of axes {', '.join(op.axes)} with a dtype")])
    timed_pass = spec.get("timedPass") or pass_from_benchmark((spec.get("sourceNative") or {}).get("benchmark", "")) or ""
    if timed_pass not in ("forward", "backward", "full"):
        raise InputError([Problem(where, "$.spec.timedPass", f"no timed pass to rerun (got {timed_pass!r})")])
    impl, version = impl_of(impl_doc)
    if impl not in op.peers:
        raise InputError([Problem(where, "$.spec.implementationDigest", f"cannot rerun implementation {impl_doc['spec'].get('name')!r}")])
    family = protocol["spec"]["comparability"]["family"]
    if family not in MODES:
        raise InputError([Problem(where, "$.spec.protocolDigest", f"no harness for protocol family {family!r}; known: {', '.join(MODES)}")])
    timing = spec.get("timing") or {}
    # The statistic the protocol ranks by, as the record page reads it (site.index.primary).
    primary = protocol["spec"].get("measurement", {}).get("primaryStatistic", "median")
    original = (timing.get("latencyNs") or {}).get(primary)
    if version is None:
        version = (run["metadata"].get("labels") or {}).get("liger_version") if impl == "liger" else None
    return LikePlan(
        op=op, run_digest=digest, run_name=run["metadata"]["name"],
        workload=Workload.of({a: axes[a] for a in op.axes}, dtype),
        timed_pass=timed_pass, impl=impl, original_version=version, mode=MODES[family], protocol=protocol,
        original_product=environment["spec"]["hardware"]["product"], original_ns=original,
        tolerance=(protocol["spec"].get("integrity") or {}).get("agreement", AGREEMENT),
    )
