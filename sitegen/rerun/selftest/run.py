"""`sitegen rerun --self-test`: planted cheats, each rejected, and which check caught it.

The subject is the JSD operation (sitegen.operations.jsd): the cheats are JSD modules, and the
checks they exercise are the harness's, the same for every operation.

Every candidate goes through the gate AND the timed measurement with every integrity check
(a real rerun stops at a failed gate; here all checks run so that each catch is seen). The
report names the checks that caught each cheat, and for every check the cheats it alone
caught: a check that catches nothing the others miss is reported redundant.

The cheats and what each does: sitegen/rerun/selftest/cheats.py.
"""

from __future__ import annotations

import statistics

import torch

from sitegen.rerun.measure import gpustate

from sitegen.rerun.checks import guards


from sitegen.rules import integrity
from sitegen.rules import protocol
from sitegen.rerun.outcome.assemble import outcome
from sitegen.rerun.selftest.cheats import (AliasedGradient, ClockPatch, ContentCache, ForwardSkipsDx, GeneratorSwap,
                                  GuardPatch, HostThread, IdentityCache, InPlaceInput, LazyTensor, NormPatch, OffBy,
                                  PhaseSkip, PrefetchNext, ResealedSnapshot, SampledLoss, ShapeSpecial, SideStream,
                                  SideStreamShare, SpoofedThread, WrongGradient, bundled_kernel)
from sitegen.operations.jsd import JSD
from sitegen.core.workload import Case, Workload
from sitegen.rerun.checks.gate import gate_workload
from sitegen.rerun.measure.passes import PassRunner
from sitegen.rerun.measure.clock import Clock
from sitegen.rerun.measure.timing import collect

CHECKS = ("gate", "timed_output", "plain_output", "inputs_intact", "clock_intact", "host_threads", "roofline",
          "host_timed", "repeated_input", "throttle", "exclusive_gpu")
ENVIRONMENT = ("throttle", "exclusive_gpu")
GPU_ONLY = ("side-stream", "sampled-loss", "side-stream-5pct")
CPU_REPEATED_SPEEDUP = 3.0


def candidates(cuda: bool, fp32: Workload, bf16: Workload) -> dict[str, tuple]:
    """name → (module, workload); names starting "honest" must be accepted, the rest rejected."""
    out = {
        "honest-fp32": (bundled_kernel(), fp32), "honest-bf16": (bundled_kernel(), bf16),
        "phase-skip": (PhaseSkip(), fp32), "identity-cache": (IdentityCache(), fp32),
        "forward-skips-dx": (ForwardSkipsDx(), fp32), "wrong-gradient": (WrongGradient(), fp32),
        "bf16-1.5pct": (OffBy(1.015), bf16), "shape-special": (ShapeSpecial((fp32["tokens"], fp32["vocab"])), fp32),
        "content-cache": (ContentCache(), fp32), "prefetch-next": (PrefetchNext(), fp32),
        # Code sitegen did not write (issue 28): honest through the gate and warm-up.
        "clock-patch": (ClockPatch(), fp32), "lazy-tensor": (LazyTensor(), fp32), "host-thread": (HostThread(), fp32),
        "in-place-input": (InPlaceInput(), fp32), "aliased-gradient": (AliasedGradient(), fp32),
        # Cheats of the guards themselves (issue 43).
        "guard-patch": (GuardPatch(), fp32), "resealed-snapshot": (ResealedSnapshot(), fp32),
        "norm-patch": (NormPatch(), fp32), "generator-swap": (GeneratorSwap(), fp32),
        "spoofed-thread": (SpoofedThread(), fp32),
    }
    if cuda:
        out["side-stream"] = (SideStream(), fp32)
        out["sampled-loss"] = (SampledLoss(), bf16)
        # 5% of the work left on a side stream, on a call of 2 ms or more (JSD fp32 at 8192 tokens).
        out["side-stream-5pct"] = (SideStreamShare(), Workload(JSD().workload("fp32", tokens=8192, vocab=fp32["vocab"]).axes, "fp32"))
    return out


def judge(name: str, module, w: Workload, device: str, clock: Clock, copy_bw: float,
          max_sm_mhz: int | None = None) -> dict:
    """Gate and time (forward pass) every candidate; returns the checks that failed."""
    cuda = device.startswith("cuda")
    op = JSD()
    rtol = op.tolerances[w.dtype]
    clock.watch.subject = name
    gate = gate_workload({name: module}, op, w, rtol, device, clock)[name]
    caught = [] if gate["status"] == "passed" else ["gate"]
    counts = [gpustate.compute_processes()]
    before = gpustate.state()
    runner = PassRunner(module, op, w, device, "forward", seed=12345, rtol=rtol, clock=clock)
    # A shorter budget than a sweep case's (100 ms, one process): the self-test takes seconds.
    try:
        per = collect(clock, runner, min_samples=protocol.MIN_SAMPLES if cuda else protocol.INTERPRET_MIN_SAMPLES,
                      min_ms=100.0 if cuda else protocol.INTERPRET_MIN_TIME_MS, max_ms=100.0 if cuda else 0.0,
                      repeated_probe=True, warmup=protocol.WARMUP if cuda else protocol.INTERPRET_WARMUP)
    except Exception as exc:
        # A planted cheat that cannot run proves nothing about any check: the self-test fails.
        return {"accepted": False, "caught": caught, "raised": True, "by": f"raised while timed: {exc}"[:300]}
    finally:
        runner.release()
    per["gpuBefore"], per["gpuAfter"] = before, gpustate.state()
    result = outcome(Case(w, "forward", name), {**gate, "status": "passed"}, [per], op=op, copy_bytes_per_s=copy_bw,
                     process_counts=counts, expected_counts=[1], repeated_probe=True, max_sm_mhz=max_sm_mhz, rtol=rtol)
    # NVML does not exist on a CPU; nor does a GPU clock to judge time by, so there the
    # roofline and host_timed cannot judge, and repeated_input allows a wider swing.
    skip = set() if cuda else {"throttle", "exclusive_gpu", "roofline", "host_timed"}
    guards.restore()  # whatever a cheat left, before the next candidate
    for c in result["integrity"]:
        if c["name"] in skip or c["passed"]:
            continue
        if c["name"] == "repeated_input" and not cuda:
            fresh = result["details"].get("repeatedInputFreshMedianNs")
            again = result["details"].get("repeatedInputMedianNs")
            if fresh and again and fresh / max(again, 1) <= CPU_REPEATED_SPEEDUP:
                continue
        caught.append(c["name"])
    details = {c["name"]: c["detail"] for c in result["integrity"] if c["name"] in caught}
    if "gate" in caught:
        details["gate"] = f"worst relative error {gate.get('maxRelError', float('nan')):.3g}" + (
            f" ({gate['notes'][:200]})" if gate.get("notes") else "")
    median = int(statistics.median(per["samplesNs"]))
    return {"accepted": not caught, "caught": caught, "details": details, "medianNs": median,
            "hiddenNs": per.get("hiddenNs"), "by": ", ".join(caught) if caught else f"median {median} ns"}


def uniqueness(verdicts: dict[str, dict]) -> dict[str, list[str]]:
    """check → the cheats that check alone caught."""
    alone: dict[str, list[str]] = {c: [] for c in CHECKS}
    for name, v in verdicts.items():
        if not name.startswith("honest") and len(v["caught"]) == 1:
            alone[v["caught"][0]].append(name)
    return alone


def run_selftest(*, interpret: bool) -> dict:
    """Judge every candidate; ok when the honest kernel is accepted and every cheat rejected by
    a check (a cheat that raised was rejected by nothing)."""
    from sitegen.rerun.checks import judges
    from sitegen.rerun.measure import worker
    from sitegen.rerun.measure.worker import copy_bandwidth

    cuda = torch.cuda.is_available() and not interpret
    device = "cuda" if cuda else "cpu"
    fp32 = JSD().workload("fp32", tokens=1024, vocab=128256) if cuda else JSD().workload("fp32", tokens=8, vocab=64)
    bf16 = Workload(fp32.axes, "bf16")
    clock = Clock(device)
    # As in a measuring process: the judges and the operation's kept, and the guard closed to
    # resealing, before any candidate runs (this process is the self-test's own: run_apart).
    judges.keep(worker)
    guards.protect(JSD())
    guards.close()
    # The gate's judge, a process of its own, started before any candidate runs here: what a
    # cheat patches in this process never reaches it (sitegen.rerun.checks.judge).
    from sitegen.rerun.checks import judge as _judge

    _judge.spawn_local(JSD(), device)
    copy_bw = copy_bandwidth(device)
    max_sm_mhz = gpustate.max_sm_mhz(gpustate.facts())
    verdicts = {}
    for name, (module, w) in candidates(cuda, fp32, bf16).items():
        verdicts[name] = judge(name, module, w, device, clock, copy_bw, max_sm_mhz)
        if cuda:
            torch.cuda.empty_cache()
    ok = all(v["accepted"] == name.startswith("honest") and not v.get("raised") for name, v in verdicts.items())
    alone = uniqueness(verdicts)
    lines = [f"self-test on {device} ({fp32.key} and {bf16.dtype}, forward; every check run on every candidate):"]
    lines += [f"  {name}: {'accepted' if v['accepted'] else 'rejected'} by {v['by']}" for name, v in verdicts.items()]
    if not cuda:
        lines.append(f"  {', '.join(GPU_ONLY)}: skipped (only a GPU's clock can expose them)")
    for check in CHECKS:
        if check in ENVIRONMENT:
            lines.append(f"  check {check}: redundant as a cheat check (it guards the environment; no planted cheat)")
        elif alone[check]:
            lines.append(f"  check {check}: alone caught {', '.join(alone[check])}")
        elif cuda or check not in ("roofline", "host_timed"):
            lines.append(f"  check {check}: REDUNDANT (caught no cheat the others missed)")
        else:
            lines.append(f"  check {check}: not judged on a CPU")
    lines.append("self-test " + ("passed" if ok else "FAILED"))
    return {"ok": ok, "device": device, "verdicts": verdicts, "alone": alone, "lines": lines,
            "roofline_slack": integrity.ROOFLINE_SLACK}


def isolation(*, interpret: bool) -> dict[str, dict]:
    """The intruders (selftest/intruders.py) each measured beside torch as a rerun measures them,
    in processes of their own: {intruder: {"reached": whether torch's evidence shows it, "by"}}.
    Run from a process with no CUDA context (the workers refuse a GPU another process holds)."""
    import os
    from pathlib import Path

    from sitegen import operations
    from sitegen.core.problems import InputError
    from sitegen.rerun.plan import plugins
    from sitegen.rerun.selftest import intruders
    from sitegen.rerun.sweep import Options, measure

    op = operations.load("jsd")
    w = op.workload("fp32", tokens=8, vocab=64) if interpret else op.workload("fp32", tokens=1024, vocab=128256)
    proto = protocol.protocol_document(op, version=None, commit=None, repository=None, interpret=interpret, processes=1)
    key = Case(w, "forward", "torch").key
    os.environ[intruders.SELFTEST_ENV] = "1"  # for the measuring processes this one starts
    out = {}
    try:
        for name, cls in (("result-rewriter", "ResultRewriter"), ("saboteur", "Saboteur")):
            refs = [plugins.describe(cls, f"sitegen.rerun.selftest.intruders:{cls}"), plugins.describe("torch", op.peers["torch"])]
            try:
                own, _ = measure(Options(op=op, loads=[w], passes=("forward",), impls=refs, out=None, records=Path("."),
                                         interpret=interpret, processes=1, quiet=True), proto)
            except InputError as exc:
                out[name] = {"reached": True, "by": f"could not measure: {exc.problems[0].message}"}
                continue
            samples = own["torch"][0]["timings"].get(key, {}).get("samplesNs") or []
            median = statistics.median(samples) if samples else None
            if name == "result-rewriter":
                reached = not samples or intruders.FORGED_NS in samples
            else:
                reached = median is None or median >= intruders.SLOWDOWN_S * 1e9 / 2
            out[name] = {"reached": reached, "by": f"torch beside it: median {median} ns of {len(samples)} samples"}
    finally:
        os.environ.pop(intruders.SELFTEST_ENV, None)
    return out


def run_apart(*, interpret: bool) -> dict:
    """run_selftest in a process of its own (the cheats patch the process they run in, and the
    guard, once closed, cannot be reopened in it); then, once it has ended, the intruders beside
    torch (isolation)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "sitegen.rerun.selftest.run", *(["--interpret"] if interpret else [])],
                          stdout=subprocess.PIPE, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        return {"ok": False, "lines": [f"self-test process exited with code {done.returncode}"], "verdicts": {}}
    report = json.loads(done.stdout)
    report["isolation"] = isolation(interpret=interpret)
    report["lines"].pop()  # "self-test passed/FAILED", said again below with the isolation's part
    for name, seen in report["isolation"].items():
        verdict = "REACHED torch's evidence" if seen["reached"] else "kept from torch's evidence by process isolation"
        report["lines"].append(f"  {name} (beside torch): {verdict} ({seen['by']})")
    report["ok"] = report["ok"] and not any(seen["reached"] for seen in report["isolation"].values())
    report["lines"].append("self-test " + ("passed" if report["ok"] else "FAILED"))
    return report


if __name__ == "__main__":
    import json
    import os
    import sys

    if "--interpret" in sys.argv[1:]:
        os.environ["TRITON_INTERPRET"] = "1"
    print(json.dumps(run_selftest(interpret="--interpret" in sys.argv[1:])))
