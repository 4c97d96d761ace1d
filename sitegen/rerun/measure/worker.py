"""One measuring process: ``python -m sitegen.rerun.measure.worker PLAN.json RESULT.json``, with the
judge process's socket at the descriptor JUDGE_FD_ENV names where the plan gates.

The parent never touches the GPU (so it can check that no other process does); each worker
gates (the first one only), times every case of the plan, and writes one JSON result. The plan
and the result are sitegen.rerun.measure.exchange's WorkerPlan and WorkerResult: a plan of
another format is refused in one line on stderr (exit code 2) before anything is imported.
Progress goes to stderr. The parent gives each worker one implementation (sitegen.rerun.sweep):
the other implementations a plan could name would share this process with it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from sitegen.core.atomicwrite import write_atomic
from sitegen.rerun.checks import guards as _guards
from sitegen.rerun.checks.judge import JUDGE_FD_ENV
from sitegen.rerun.measure.exchange import Unreadable, WorkerPlan, WorkerResult
from sitegen.rerun.measure.watch import emit

# Bound when the process starts, before any implementation is imported: the build check is
# called through these, not through names an implementation could rebind.
_CHECK_BUILD, _THREAD_IDS = _guards.check_build, _guards.thread_ids


def _log(plan: WorkerPlan, message: str, t0: float) -> None:
    who = ",".join(ref.name for ref in plan.impls)
    print(f"[process {plan.process + 1}/{plan.processes} {who} {time.monotonic() - t0:7.1f}s] {message}",
          file=sys.stderr, flush=True)


def copy_bandwidth(device: str) -> float:
    """Device-to-device copy bandwidth in bytes/s, counting bytes read plus bytes written."""
    import torch

    n = (1 << 28) if device.startswith("cuda") else (1 << 22)  # 1 GiB or 16 MiB of float32
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    samples = []
    # Back to back between events (no window: a synchronize's wake-up would count as copy time).
    for _ in range(10):
        if device.startswith("cuda"):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            samples.append(int(round(start.elapsed_time(end) * 1e6)))
        else:
            t0 = time.perf_counter_ns()
            dst.copy_(src)
            samples.append(time.perf_counter_ns() - t0)
    median_ns = sorted(samples)[len(samples) // 2]
    return 2 * n * src.element_size() / (median_ns * 1e-9)


def run(plan: WorkerPlan, judge_fd: int | None = None) -> WorkerResult:
    """Measure as ``plan`` says; the gate through the judge process at ``judge_fd`` (a socket
    the parent handed down, sitegen.rerun.checks.judge), which the first process needs."""
    import torch

    from sitegen import operations
    from sitegen.rerun.measure import gpustate, timing
    from sitegen.core.workload import Workload
    from sitegen.rerun.measure.clock import Clock
    from sitegen.rerun.measure.environment import device_facts, software_facts
    from sitegen.rerun.checks.gate import gate_workload
    from sitegen.rerun.checks.handover import Channel
    from sitegen.rerun.measure.passes import PassRunner
    from sitegen.rerun.measure.throttleguard import ThrottleGuard

    _keep_judges()  # with the clock's snapshot (taken by the imports above), before the operation is loaded
    t0 = time.monotonic()
    device = plan.device
    if device.startswith("cuda"):
        torch.cuda.init()
        torch.empty(1, device=device)  # create the context before counting processes
    # torch.compile is timed with static shapes: one graph per timed shape and dtype, more
    # than dynamo's default recompile limit of 8.
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
            break
    # Inductor compiles on a compiled module's first call, inside its window, where host_threads
    # refuses any thread still running when the window closes: on the H200 it named tqdm's
    # monitor thread and failed every compiled peer's gate. Compile in the calling thread with no
    # monitor, for every implementation alike (the same for sitegen's peers and outside code).
    import torch._inductor.config as inductor

    inductor.compile_threads = 1
    try:
        import tqdm

        tqdm.tqdm.monitor_interval = 0
    except ImportError:
        pass
    result: dict = {
        "software": software_facts(), "device": device_facts(device),
        "processCount": gpustate.compute_processes(),
        "availability": {}, "gate": {}, "timings": {},
    }
    if result["processCount"] is not None and result["processCount"] > 1:
        raise SystemExit(f"refusing to time: {result['processCount']} compute processes on the GPU, only this one expected")
    op = operations.load(plan.operation)
    from sitegen.rerun.checks import guards

    guards.protect(op)  # before any implementation is imported: its reference is a judge too
    guards.close()  # nothing that runs from here on can reseal what the guard compares against
    modules = {}
    for ref in plan.impls:
        result["availability"][ref.name] = avail = implementation(ref.target, op.name)
        if avail["ok"]:
            modules[ref.name] = avail.pop("module")
    names = [ref.name for ref in plan.impls]
    result["copyBytesPerS"] = copy_bandwidth(device)
    _log(plan, f"copy bandwidth {result['copyBytesPerS'] / 1e9:.1f} GB/s", t0)
    loads = [Workload.from_json(w) for w in plan.workloads]
    skip = set(plan.skip)
    clock = Clock(device)
    if plan.gate:
        # The modules that will be timed are the ones gated (torch.compile too, dynamic=False).
        # The judge process draws the inputs and judges; the verdicts the record keeps are the ones
        # it sends the parent, and this process learns only which passed.
        judge = Channel.from_fd(judge_fd)
        for g, w in enumerate(loads):
            emit(plan.progress_events, stage="gate", done=g, total=len(loads))
            gated = gate_workload(modules, op, w, plan.rtol[w.dtype], device, clock, judge=judge)
            for impl, outcome in gated.items():
                result["gate"].setdefault(impl, {})[w.key] = outcome
                if outcome["status"] != "passed":
                    skip.add(f"{impl}|{w.key}")
            _log(plan, f"gate {w.key}: " + ", ".join(f"{i} {o['status']}" for i, o in gated.items()), t0)
        judge.send("done")
        # Until the judge has gone (its end closed as it exits): on a GPU, its context with it,
        # before the first timed call.
        while judge.sock.recv(1):
            pass
        judge.close()
    guard = ThrottleGuard(plan.max_sm_mhz)
    todo = [(w, p, i) for w in loads for p in plan.passes for i in names
            if i in modules and f"{i}|{w.key}" not in skip]
    emit(plan.progress_events, stage="cases", done=0, total=len(todo))
    for n, (w, p, impl) in enumerate(todo, 1):
        key = f"{w.key}/{p}/{impl}"
        guard.start_case()
        before = guard.settle()
        runner = None
        clock.watch.subject = impl
        try:
            runner = PassRunner(modules[impl], op, w, device, p,
                                seed=plan.seed + 7919 * n, pool=plan.pool,
                                liger_script=plan.mode == "do_bench", rtol=plan.rtol[w.dtype], clock=clock)
            if plan.mode == "do_bench":
                out = timing.do_bench_samples(clock, runner)
            else:
                out = timing.collect(clock, runner, min_samples=plan.min_samples, min_ms=plan.min_time_ms,
                                     repeated_probe=plan.repeated_probe, warmup=tuple(plan.warmup),
                                     guard=guard, max_ms=plan.max_time_ms)
            runner.release()
        except Exception as exc:  # one case failing (out of memory, a peer's bug) ends only that case
            out = {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        del runner
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
        # "After" is the GPU at the end of the last kept batch of event-timed samples (or at the
        # first batch kept throttled); the host-timed cross-check is not guarded and not judged.
        out["gpuBefore"] = before
        out["gpuAfter"] = guard.after if guard.after is not None else gpustate.state()
        if guard.discarded:
            out["throttleDiscards"] = guard.discarded
        result["timings"][key] = out
        if "samplesNs" in out:
            s = sorted(out["samplesNs"])
            retaken = f", {guard.discarded} retaken after throttling" if guard.discarded else ""
            stop = out.get("samplingStoppedBy", "")
            checked = out.get("timedCheck", {})
            wrong = checked.get("lossFailures", 0) + checked.get("gradientFailures", 0)
            _log(plan, f"case {n}/{len(todo)} {key}: median {s[len(s) // 2] / 1e6:.4f} ms, {len(s)} samples "
                       f"(stopped by {stop}){retaken}; {wrong} wrong of {checked.get('calls', 0)} timed outputs", t0)
        else:
            _log(plan, f"case {n}/{len(todo)} {key}: {out['error']}", t0)
        emit(plan.progress_events, stage="cases", done=n, total=len(todo))
    if device.startswith("cuda"):
        _log(plan, f"waited {guard.budget_s - guard.left_s:.1f} s of {guard.budget_s:g} s for an unthrottled GPU", t0)
    result["processCountAfter"] = gpustate.compute_processes()
    return WorkerResult(software=result["software"], device=result["device"], process_count=result["processCount"],
                        process_count_after=result["processCountAfter"], copy_bytes_per_s=result["copyBytesPerS"],
                        availability=result["availability"], gate=result["gate"], timings=result["timings"])


def _keep_judges() -> None:
    """The guard keeps the judges (sitegen.rerun.checks.judges), this module's own among them: the
    one that runs (``python -m`` runs it as __main__)."""
    from sitegen.rerun.checks import judges

    judges.keep(sys.modules[__name__])


def implementation(target: str, operation: str) -> dict:
    """{"ok", "version", "reason", "module"?}: the implementation imported and built here, in
    the measuring process (never in the parent); never raises."""
    from sitegen.operations import Implementation, import_target
    from sitegen.core.problems import InputError

    _keep_judges()  # before its code runs (run() kept them already; kept once, this adds nothing then)
    threads = _THREAD_IDS()
    try:
        cls = import_target(target, target)
        impl = cls() if isinstance(cls, type) else cls
        if not isinstance(impl, Implementation):
            return {"ok": False, "version": None, "reason": f"{target} is not a sitegen Implementation"}
        if getattr(impl, "operation", None) != operation:
            return {"ok": False, "version": None, "reason": f"{target} implements {impl.operation!r}, not {operation}"}
        why = impl.available()
        if why:
            return {"ok": False, "version": None, "reason": why}
        version = impl.version()
        module = impl.build()
        refused = _CHECK_BUILD(threads)
        if refused:
            return {"ok": False, "version": None, "reason": refused}
        return {"ok": True, "version": version if isinstance(version, str) else None, "reason": None, "module": module}
    except InputError as exc:
        return {"ok": False, "version": None, "reason": exc.problems[0].message}
    except Exception as exc:  # an implementation that fails to build is absent, with the reason
        return {"ok": False, "version": None, "reason": f"{type(exc).__name__}: {str(exc)[:300]}"}


def main(argv: list[str]) -> int:
    plan_path, result_path = Path(argv[0]), Path(argv[1])
    try:
        plan = WorkerPlan.from_json(json.loads(plan_path.read_text()))
    except (Unreadable, ValueError) as exc:  # ValueError: not JSON at all
        print(f"refusing {plan_path}: {exc}", file=sys.stderr, flush=True)
        return 2
    judge_fd = os.environ.pop(JUDGE_FD_ENV, None)
    judge_fd = int(judge_fd) if judge_fd and judge_fd.isdigit() else None
    if plan.gate and judge_fd is None:
        print(f"refusing {plan_path}: its plan gates, and no judge process was handed down", file=sys.stderr, flush=True)
        return 2
    if plan.interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton
    result = run(plan, judge_fd)
    write_atomic(result_path, json.dumps(result.to_json()).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
