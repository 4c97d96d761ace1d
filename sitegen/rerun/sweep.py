"""The parent side of a rerun: plan, run the measuring processes one after another, assemble,
write. The parent never creates a CUDA context, so it can check that the GPU is free.

Each implementation is measured in processes of its own (issue 43): code one implementation runs
shares no memory, result file, compile cache or leftover process with another's measurement, so
it cannot edit another's samples or results or wrap the module another is timed through. The
processes run round by round (round k: process k of every implementation), so drift of the GPU
over the rerun falls on every implementation alike.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.problems import InputError, Problem
from sitegen.core.progress import Progress
from sitegen.rerun.measure import gpustate
from sitegen.rerun.checks import judge as _judge
from sitegen.rules import protocol
from sitegen.rerun.outcome import records
from sitegen.registry import journal
from sitegen.rerun.plan import fits
from sitegen.core import revision
from sitegen.rerun.outcome.assemble import outcome
from sitegen.core.workload import Case, Workload, cases
from sitegen.rerun.measure.environment import environment_spec, instance
from sitegen.rerun.measure.exchange import PlannedImpl, Unreadable, WorkerPlan, WorkerResult
from sitegen.rerun.plan.like import LikePlan
from sitegen.rerun.measure.watch import Watch
from sitegen.rules.verdict import judge


# How long the parent waits for the judge's verdicts once the measuring process has ended: it
# sends them as soon as its socket to that process closes.
_JUDGE_REPORT_S = 120.0


@dataclass
class Options:
    op: Any  # sitegen.operations.base.Operation
    loads: list[Workload]
    passes: tuple[str, ...]
    impls: list  # sitegen.rerun.plan.plugins.ImplRef
    out: Path | None  # None: a new scratch folder, made only when there is something to write
    records: Path
    interpret: bool = False
    processes: int = protocol.PROCESSES
    like: LikePlan | None = None
    verdict: bool = True  # False when --interpret cut a --like workload to its own sizes
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    quiet: bool = False
    # Names the instance where the host name alone does not (a Ray node among several on one
    # host, measuring with no GPU UUID to tell them apart).
    host: str | None = None
    key: Path | None = None
    """OpenSSH Ed25519 private key that signs the runs written (sitegen.core.signing); read only when writing."""
    journal: dict[str, str] | None = None
    """The out folder's rerun journal as read when the command started, before any plugin's process ran
    (an operation plugin's describing process runs its code too); None: read it when measuring starts."""


def _spawn(plan: dict, workdir: Path, k: int, interpret: bool, watch: Watch | None = None) -> dict:
    """One measuring process in a folder of its own, given ``plan`` (an exchange.WorkerPlan as
    JSON, the wire form); its result, checked (exchange.WorkerResult), as JSON. Anything it left
    running (its session's processes) is killed when it exits, before the next process starts."""
    workdir.mkdir(parents=True)
    plan_path, result_path = workdir / "plan.json", workdir / "result.json"
    plan_path.write_text(json.dumps({**plan, "progressEvents": True}))
    env = dict(os.environ)
    # Compiled graphs and kernels are reused by the later processes of the same implementation
    # only: a cache another implementation could write into would be code it chose.
    caches = workdir.parent / f"cache-{plan['impls'][0]['name'] if plan['impls'] else 'none'}"
    env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
    env["TRITON_CACHE_DIR"] = str(caches / "triton")
    # Bytecode caches ignored (never read, never written): the source files whose digest the
    # records name are what runs, not a .pyc beside them (an unchecked-hash .pyc is not compared
    # with its source at all).
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPYCACHEPREFIX"] = str(workdir / "no-pycache")
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    watch = watch or Watch(Progress(enabled=False), plan.get("processes", 1))
    who = f"{plan['impls'][0]['name']} " if plan["impls"] else ""
    judge = None
    args, fds, worker_env = [sys.executable, "-m", "sitegen.rerun.measure.worker", str(plan_path), str(result_path)], (), env
    if plan["gate"]:
        # The gate is judged in a process of its own that runs no outside code (issue 43 item 2);
        # the measuring process gets one end of a socket to it, the parent its verdicts.
        judge, judge_sock, report = _judge.start({"operation": plan["operation"], "device": plan["device"],
                                                  "interpret": plan["interpret"], "rtol": plan["rtol"]}, report=True, env=env)
        fds, worker_env = (judge_sock.fileno(),), {**env, _judge.JUDGE_FD_ENV: str(judge_sock.fileno())}
        # Read as the judge sends them (it ends before the measuring process times anything, and
        # so before this parent, following that process, would read them): however long, they
        # never wait on a full socket.
        verdicts_read: list = []
        reader = threading.Thread(target=lambda: verdicts_read.append(_read_verdicts(report)), daemon=True)
        reader.start()
    # stderr comes through the parent, so log lines print above the progress display.
    try:
        proc = subprocess.Popen(args, env=worker_env, stderr=subprocess.PIPE, text=True, errors="replace",
                                start_new_session=True, pass_fds=fds)
    finally:
        if judge is not None:
            judge_sock.close()  # the measuring process's alone: its end closes when it exits
    try:
        watch.follow(k, proc.stderr)
        rc = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        verdicts = _verdicts(judge, reader, verdicts_read) if judge is not None else None
    if rc != 0 or not result_path.exists():
        for line in watch.failure_lines():
            watch.progress.log(line)
        raise InputError([Problem(f"{who}process {plan['process'] + 1}", "$",
                                  f"measuring process exited with code {rc}; nothing written")])
    # Written by a process that ran outside code: read as data of one format, checked, never trusted further.
    try:
        result = WorkerResult.from_json(json.loads(result_path.read_text())).to_json()
    except (Unreadable, ValueError, RecursionError) as exc:  # ValueError: not JSON at all
        raise InputError([Problem(f"{who}process {plan['process'] + 1}", "$",
                                  f"measuring process wrote a result this sitegen does not read: {exc}; nothing written")]) from None
    if isinstance(verdicts, Exception):
        raise InputError([Problem(f"{who}process {plan['process'] + 1}", "$",
                                  f"the judge process gave no gate verdicts ({verdicts}); nothing written")])
    if verdicts is not None:
        result["gate"] = verdicts  # the judge's, never what the measuring process wrote of its gate
    return result


NOT_JUDGED = {"status": "failed", "notes": "no verdict from the judge: the measuring process never asked it to gate this workload"}


def every_load_judged(gate: dict, loads) -> dict:
    """An available implementation's gate outcomes, {workload key: outcome}, with a workload the
    judge gave no verdict for failed: its first process gates every workload, so a missing
    verdict means that process skipped asking, and without this the case would be timed and
    written "passed" with its correctness not checked."""
    return {**{w.key: NOT_JUDGED for w in loads}, **gate}


def _read_verdicts(report):
    """The judge's report as read from its socket: its gate dict, or why there is none."""
    try:
        kind, payload, _ = report.recv("cpu", ack=False)
        gate = payload.get("gate") if kind == "report" else None
        return gate if isinstance(gate, dict) else ValueError(f"a {kind!r} message")
    except (OSError, EOFError, ValueError) as exc:
        return exc
    finally:
        report.close()


def _verdicts(judge, reader, read: list) -> dict | Exception:
    """The judge process's gate verdicts ({impl: {workload key: outcome}}), once the measuring
    process has ended, or why there are none (the judge was killed, say): the run is refused."""
    reader.join(timeout=_JUDGE_REPORT_S)
    try:
        judge.wait(timeout=_JUDGE_REPORT_S)
    except subprocess.TimeoutExpired:
        judge.kill()
        judge.wait()
    return read[0] if read else TimeoutError("no answer")


def _own(result: dict, name: str, case_keys: set[str]) -> dict:
    """What a process of implementation ``name`` may say: its own availability, gate and timed
    cases, and the facts of its own process. Anything it wrote of another implementation is
    dropped: its result file is written by code the implementation could reach."""
    return {**result, "availability": {name: result.get("availability", {}).get(name, {})},
            "gate": {name: result["gate"][name]} if name in result.get("gate", {}) else {},
            "timings": {key: value for key, value in result.get("timings", {}).items() if key in case_keys}}


def measure(opts: Options, proto: dict[str, Any]) -> tuple[dict[str, list[dict]], dict]:
    """Run the processes the protocol document `proto` asks for, for each implementation
    apart; returns ({implementation: its processes' results}, the parent's NVML facts)."""
    facts = None if opts.interpret else gpustate.facts()
    before = None if opts.interpret else gpustate.compute_processes()
    if before:
        raise InputError([Problem("GPU", "$", f"{before} other compute process(es) on the GPU; refusing to time")])
    if facts and (oversized := fits.too_big(opts.op, opts.loads, facts.get("memoryBytes"), facts.get("product"))):
        raise InputError(oversized)
    mode = opts.like.mode if opts.like else "controlled"
    follow = protocol.settings(proto, opts.interpret, opts.op.tolerances)
    base = dict(
        device="cpu" if opts.interpret else "cuda", interpret=opts.interpret, operation=opts.op.target,
        workloads=tuple(w.as_json() for w in opts.loads), passes=tuple(opts.passes), mode=mode,
        processes=follow["processes"], min_samples=follow["minSamples"], min_time_ms=follow["minTimeMs"],
        max_time_ms=follow["maxTimeMs"], warmup=tuple(follow["warmup"]), rtol=follow["rtol"],
        max_sm_mhz=gpustate.max_sm_mhz(facts),
        pool=1 if mode == "do_bench" else None,  # Liger's benchmark times one input set
    )
    own: dict[str, list[dict]] = {ref.name: [] for ref in opts.impls}
    watch = Watch(opts.progress, follow["processes"] * len(opts.impls), logs=not opts.quiet)
    with tempfile.TemporaryDirectory(prefix="sitegen-rerun-") as tmp:
        for k in range(follow["processes"]):
            for i, ref in enumerate(opts.impls):
                first = own[ref.name][0] if own[ref.name] else None
                if first is not None and not first["availability"][ref.name].get("ok"):
                    continue  # not importable here: its first process said why
                skip = [f"{ref.name}|{wkey}" for wkey, o in first["gate"].get(ref.name, {}).items()
                        if o["status"] != "passed"] if first else []
                if first is not None and len(skip) == len(opts.loads):
                    continue  # failed the gate on every workload: nothing to time
                plan = WorkerPlan(**base, impls=(PlannedImpl(ref.name, ref.target),), process=k, gate=k == 0,
                                  skip=tuple(skip), seed=100_000 * (k + 1), repeated_probe=k == 0 and mode == "controlled")
                keys = {Case(w, p, ref.name).key for w in opts.loads for p in opts.passes}
                result = _spawn(plan.to_json(), Path(tmp) / f"{i}-{k}", k * len(opts.impls) + i, opts.interpret, watch=watch)
                own[ref.name].append(_own(result, ref.name, keys))
    return own, {"facts": facts, "before": before}


def _stamp(moment: datetime) -> tuple[str, str]:
    observed = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return observed, moment.strftime("%Y%m%dt%H%M%Sz")


def _command(case: Case, opts: Options) -> str:
    if opts.like:
        return f"sitegen rerun --like {opts.like.run_name}" + (" --interpret" if opts.interpret else "")
    w = case.workload
    axes = " ".join(f"--axis {name}={value}" for name, value in w.axes)
    impl = next((ref for ref in opts.impls if ref.name == case.impl), None)
    named = impl.asked or impl.name if impl is not None else case.impl
    return (f"sitegen rerun --operation {opts.op.name} {axes} --dtype {w.dtype} "
            f"--pass {case.timed_pass} --impl {named}" + (" --interpret" if opts.interpret else ""))


def _why_nothing(rows: list[dict], unavailable: dict[str, str | None]) -> str:
    reasons = [f"{impl} not available: {why}" for impl, why in sorted(unavailable.items())]
    statuses = sorted({f"{r['impl']} {r['status']}" for r in rows})
    return "; ".join(reasons + statuses) or "no case to measure"


def run(opts: Options) -> dict[str, Any]:
    """Measure, assemble and write; returns the --json summary."""
    t0 = time.monotonic()
    observed_at, stamp = _stamp(datetime.now(timezone.utc).replace(microsecond=0))
    commit, version = revision.commit(), revision.version()
    repo = revision.repository_url(opts.records)
    if opts.like:
        proto = opts.like.protocol  # a rerun is measured under the record's own protocol
    else:
        proto = protocol.protocol_document(opts.op, version=version, commit=commit, repository=repo,
                                           interpret=opts.interpret, processes=opts.processes)
    # The journal as it was before any measuring process ran: what they add to it is not kept.
    kept = opts.journal if opts.journal is not None else journal.read(opts.out) if opts.out else {}
    own, parent = measure(opts, proto)
    availability = {name: results[0]["availability"][name] for name, results in own.items()}
    gates = {name: every_load_judged(results[0]["gate"].get(name, {}), opts.loads) if availability[name].get("ok")
             else results[0]["gate"].get(name, {}) for name, results in own.items()}
    # The host's software and device as sitegen's own code saw them, where one of its peers ran.
    first = next((own[ref.name][0] for ref in opts.impls if ref.internal), own[opts.impls[0].name][0])
    facts = parent["facts"]
    env = records.environment_doc(environment_spec(facts, first["device"], first["software"], interpret=opts.interpret))
    product = env["spec"]["hardware"]["product"]
    inst = instance(facts, host=opts.host)
    tag = hashlib.sha256((inst.get("gpuUuid") or inst.get("hostname") or "").encode()).hexdigest()[:6]
    op = opts.op.operation_document()
    impl_docs = {}
    for ref in opts.impls:
        avail = availability[ref.name]
        if avail.get("ok"):
            impl_docs[ref.name] = records.implementation_doc(ref, op, run_version=avail.get("version"),
                                                             version=version, repository=repo)
    if opts.like and opts.like.impl not in impl_docs:
        reason = availability.get(opts.like.impl, {}).get("reason")
        raise InputError([Problem(opts.like.run_name, "$.spec.implementationDigest",
                                  f"{opts.like.impl} cannot run here ({reason}); nothing written")])
    shared = [op, env, proto, *impl_docs.values()]
    fixed = {"protocolDigest": document_digest(proto), "environmentDigest": document_digest(env)}
    impl_digests = {impl: document_digest(doc) for impl, doc in impl_docs.items()}
    # A rehearsal at other sizes is no rerun of the record: it is not linked to it.
    rerun_of = {"runDigest": opts.like.run_digest, "runName": opts.like.run_name} if opts.like and opts.verdict else None
    max_sm_mhz = gpustate.max_sm_mhz(facts)
    bounds = protocol.settings(proto, opts.interpret, opts.op.tolerances)["rtol"]
    runs, summary_rows, measured = [], [], 0
    for case in cases(opts.loads, opts.passes, tuple(ref.name for ref in opts.impls if ref.name in impl_docs)):
        wdoc = opts.op.workload_document(case.workload)
        shared.append(wdoc)
        gate = gates[case.impl].get(case.workload.key)
        # Each run is judged by its own implementation's processes alone: their samples, the
        # processes they saw on the GPU, the copy bandwidth they measured for its roofline.
        results = own[case.impl]
        per = [r["timings"][case.key] for r in results if case.key in r["timings"]]
        measured += any("samplesNs" in p for p in per)  # timed, whatever the checks then said
        counts = [parent["before"]] + [c for r in results for c in (r["processCount"], r.get("processCountAfter"))]
        copy_bw = max((r["copyBytesPerS"] for r in results), default=None)
        result = outcome(case, gate, per, op=opts.op, copy_bytes_per_s=copy_bw, process_counts=counts,
                         expected_counts=[0] + [1, 1] * len(results),
                         repeated_probe=not (opts.like and opts.like.mode == "do_bench"),
                         max_sm_mhz=max_sm_mhz, rtol=bounds.get(case.workload.dtype))
        digests = {"implementationDigest": impl_digests[case.impl], "workloadDigest": document_digest(wdoc), **fixed}
        doc = records.run_doc(opts.op, case, result, digests=digests, product=product, stamp=stamp, observed_at=observed_at,
                              instance=inst, dry_run=opts.interpret, command=_command(case, opts),
                              rerun_of=rerun_of, instance_tag=tag)
        runs.append(doc)
        median = result.get("timing", {}).get("latencyNs", {}).get("median")
        summary_rows.append({**case.workload.sizes, "name": doc["metadata"]["name"], "impl": case.impl,
                             "operation": opts.op.name, "axes": case.workload.sizes,
                             "dtype": case.workload.dtype, "pass": case.timed_pass,
                             "status": result["status"], "medianNs": median,
                             "file": records.path_of(doc, opts.op.name)})
    unavailable = {i: a.get("reason") for i, a in availability.items() if not a.get("ok")}
    if not measured:
        raise InputError([Problem(str(opts.out or "--out"), "$", "no case was measured (" + _why_nothing(summary_rows, unavailable)
                                  + "); nothing written")])
    out = opts.out or Path(tempfile.mkdtemp(prefix="sitegen-dry-run-"))
    unique = {document_digest(d): d for d in shared}
    writes = records.plan_writes(out, list(unique.values()), runs, opts.op.name, key=opts.key)
    fresh = not out.exists() or not any(out.iterdir())
    written = records.write_all(out, writes, create_lock=opts.interpret and fresh, journal=kept)
    summary: dict[str, Any] = {
        "ok": True, "product": product, "runs": summary_rows, "written": len(written), "out": str(out),
        "scratch": opts.out is None, "unavailable": unavailable,
        "elapsedS": round(time.monotonic() - t0, 1),
    }
    if opts.like and opts.verdict:
        new_ns = summary_rows[0]["medianNs"] if summary_rows else None
        summary["verdict"] = judge(rerun_product=product, original_product=opts.like.original_product,
                                   rerun_value=new_ns, original_value=opts.like.original_ns,
                                   tolerance=opts.like.tolerance).text
    if opts.like:
        ran = impl_docs.get(opts.like.impl, {}).get("spec", {}).get("projectRevision", {}).get("version")
        if opts.like.impl == "liger" and opts.like.original_version and ran and ran != opts.like.original_version:
            summary["implementationNote"] = f"implementation differs: Liger {opts.like.original_version} recorded, {ran} rerun"
    return summary
