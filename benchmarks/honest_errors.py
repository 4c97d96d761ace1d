"""The honest implementations' error against float64 over the gate's seeds and shapes, per
dtype: the data the bf16/fp16 tolerances are set from (protocol.TOLERANCES, kernels/NOTES.md).

    python3 benchmarks/honest_errors.py [--tokens 1024] [--vocab 128256] [--dtypes bf16,fp16]

Prints one line per implementation, dtype and checked shape, then the worst per dtype and the
tolerance it implies (TOLERANCE_MARGIN × worst) next to the one in force.
"""

from __future__ import annotations

import argparse

import torch

from sitegen.rerun import implementations

from sitegen.rules import protocol
from sitegen.core.workload import Workload
from sitegen.rerun.checks.gate import gate_workload


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--vocab", type=int, default=128256)
    ap.add_argument("--dtypes", default="bf16,fp16")
    ap.add_argument("--impls", default="sitegen,liger,torch,torch-compile")
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    impls = [i for i in args.impls.split(",") if implementations.availability(i).ok]
    modules = {i: implementations.build(i) for i in impls}
    for dtype in args.dtypes.split(","):
        w = Workload(args.tokens, args.vocab, dtype)
        out = gate_workload(modules, w, float("inf"), device)
        worst = 0.0
        for impl, o in out.items():
            for c in o["cases"]:
                print(f"{dtype} {impl:14s} shape {c['shape']} seed {c['seed']}: rel error {c['maxRelError']:.3e}", flush=True)
                worst = max(worst, c["maxRelError"])
        print(f"{dtype}: worst honest {worst:.3e} over {impls}; x{protocol.TOLERANCE_MARGIN:g} = "
              f"{protocol.TOLERANCE_MARGIN * worst:.2e}; in force {protocol.TOLERANCES[dtype]:g}", flush=True)


if __name__ == "__main__":
    main()
