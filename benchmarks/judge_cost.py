"""What judging the gate in a process of its own costs (issue 43 item 2), against the same work
judged in this process, measured in the same run:

    TRITON_INTERPRET=1 python benchmarks/judge_cost.py [--tokens 8] [--vocab 64] [--repeats 5]
    python benchmarks/judge_cost.py --device cuda --tokens 4096 --vocab 128256     (a GPU: CUDA IPC)

in-process: the gate's work with no judge process (for each checked shape: the reference, each
implementation's call, the comparison), as the measuring process did it before the judge moved
out; judged: gate_workload through a judge process already started (the inputs and outputs
handed over, copied on receipt); start: starting a judge process until it has answered its first
gate, less one judged gate (paid once per implementation, in its first measuring process).
Medians of --repeats; the figures are printed, nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from sitegen.core.workload import Workload
from sitegen.operations.jsd import JSD
from sitegen.rerun.checks import gate, judge, judging
from sitegen.rerun.measure.clock import Clock


def in_process(modules: dict, op, w: Workload, rtol: float, clock: Clock, device: str) -> dict:
    """The gate's work judged in this process (no judge process): the baseline; the worst
    relative error of each implementation."""
    worst: dict = {}
    for shape, seed in judging.checked_shapes(op, w):
        inputs, g, ref_loss, ref_grads = judging.references(op, shape, seed, device)
        for name, module in modules.items():
            why, loss, grads = gate.call(module, op, inputs, device, clock, grad_output=None if g is None else g.clone())
            out = {"maxRelError": float("inf")} if why else judging.compare(loss, grads, ref_loss, ref_grads, rtol,
                                                                             tensor_output=g is not None)
            worst[name] = max(worst.get(name, 0.0), out["maxRelError"])
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return worst


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    from sitegen.kernels.jsd import JSD as Kernel

    op = JSD()
    w = op.workload("fp32", tokens=args.tokens, vocab=args.vocab)
    rtol = op.tolerances["fp32"]
    modules = {"sitegen": Kernel()}
    device = args.device
    clock = Clock(device)
    in_process(modules, op, w, rtol, clock, device)  # compiles (a GPU) or warms the interpreter's caches
    base, judged, start, errors = [], [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        worst = in_process(modules, op, w, rtol, clock, device)
        base.append(time.perf_counter() - t0)
        judge._LOCAL.clear()  # a judge process of its own each repeat: its start is measured below
        t0 = time.perf_counter()
        first = gate.gate_workload(modules, op, w, rtol, device, clock)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = gate.gate_workload(modules, op, w, rtol, device, clock)
        warm = time.perf_counter() - t0
        judged.append(warm)
        start.append(cold - warm)
        errors.append((worst["sitegen"], first["sitegen"].get("maxRelError"), again["sitegen"].get("maxRelError"),
                       first["sitegen"]["status"], again["sitegen"]["status"]))
    b, j, s = (statistics.median(x) for x in (base, judged, start))
    where = torch.cuda.get_device_name() if device.startswith("cuda") else "CPU interpreter"
    print(f"gate of {w.key} (4 checked shapes, 1 implementation), {where}, torch {torch.__version__}, "
          f"median of {args.repeats}:")
    print(f"  in-process (baseline):      {b * 1e3:8.1f} ms a workload")
    print(f"  judged in a judge process:  {j * 1e3:8.1f} ms a workload  ({j / b:.2f}x the baseline, +{(j - b) * 1e3:.1f} ms)")
    print(f"  starting the judge process: {s:8.2f} s once per implementation (its first measuring process)")
    # Each repeat draws its own seeds: the same honest kernel's errors, in-process and judged, are
    # of one size (and all under rtol) if the handover carried every element.
    for base_err, first_err, again_err, first_status, again_status in errors:
        print(f"  worst relative error: in-process {base_err:.3g}, judged {first_err:.3g} ({first_status}), "
              f"{again_err:.3g} ({again_status}); rtol {rtol:g}")


if __name__ == "__main__":
    main()
