"""Honest error of the cross-entropy and KL-divergence peers installed here against the float64
reference, over the gate's shapes: the data their tolerances are set from (2 x the worst,
sitegen/operations/liger_losses.py). Issue 28 ran it on a CPU with torch only
(benchmarks/results/honest_errors_issue28_cpu.txt); on the H200 add "liger" to PEERS.

    TRITON_INTERPRET=1 python benchmarks/honest_errors_losses.py
"""
import torch

PEERS = ("torch",)
from sitegen.operations.liger_losses import CrossEntropy, KLDiv
from sitegen.rerun.gate import gate_workload
from sitegen.rerun.worker import implementation
for Op in (CrossEntropy, KLDiv):
    op = Op()
    mods = {p: implementation(op.peers[p], op.name)["module"] for p in PEERS}
    for dtype in ("fp32", "bf16", "fp16"):
        worst = 0
        for vocab in (4096, 32768):
            for rep in range(3):
                w = op.workload(dtype, tokens=64, vocab=vocab)
                out = gate_workload(mods, op, w, 1.0, "cpu")["torch"]
                worst = max(worst, out["maxRelError"])
        print(op.name, dtype, "worst %.3g" % worst, "x2 = %.3g" % (2 * worst))
