"""Kernel or harness? The bundled kernel's bf16 backward at [1024, 128256] timed in one
process with and without the GPU spin that holds the start event until the call is queued.

    python3 benchmarks/noisy_backward.py [--rounds 3]

Without the spin, a call whose host-side issue time (the autograd engine, ~0.1-0.2 ms) exceeds
the GPU work queued ahead of it is timed from an idle GPU: the events then measure the host's
launch latency, which wanders. With the spin they measure the kernel.
"""

from __future__ import annotations

import argparse
import statistics

import torch

from sitegen.kernels.jsd import JSD
from sitegen.rerun.measure.passes import PassRunner
from sitegen.rerun.measure.clock import Clock
from sitegen.rerun.measure.timing import collect


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=1024)
    args = ap.parse_args()
    clock = Clock("cuda")
    for lead in (False, True, False, True) * ((args.rounds + 1) // 2):
        runner = PassRunner(JSD(), args.tokens, 128256, "bf16", "cuda", "backward", seed=11, rtol=7e-3, clock=clock)
        if not lead:
            clock.set_lead = lambda host_ms: setattr(clock, "lead_cycles", 0)  # noqa: E731
        else:
            clock.set_lead = Clock.set_lead.__get__(clock)
        out = collect(clock, runner, min_samples=10, min_ms=100.0, max_ms=100.0, repeated_probe=False)
        s = out["samplesNs"]
        q = statistics.quantiles(s, n=5)
        print(f"lead {'on ' if lead else 'off'} ({out['leadMs']:.3f} ms): median {statistics.median(s) / 1e3:.1f} us, "
              f"p20 {q[0] / 1e3:.1f} p80 {q[3] / 1e3:.1f} us, {len(s)} samples, "
              f"wrong outputs {out['timedCheck']['lossFailures'] + out['timedCheck']['gradientFailures']}", flush=True)
        runner.release()


if __name__ == "__main__":
    main()
