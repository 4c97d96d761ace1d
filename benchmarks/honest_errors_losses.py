"""Honest error of the installed peers of the cross-entropy, KL-divergence and RMSNorm plugins
against their float64 references, over the gate's shapes: the data their tolerances are set from
(2 x the worst; sitegen/operations/liger_losses.py, rms_norm.py). Issue 28 ran it on a CPU with
torch only (benchmarks/results/honest_errors_issue28_cpu.txt); on the H200 add "liger" to PEERS.

    TRITON_INTERPRET=1 python benchmarks/honest_errors_losses.py
"""

from sitegen.operations import load
from sitegen.rerun.checks.gate import gate_workload
from sitegen.rerun.measure.worker import implementation

PEERS = ("torch",)
SIZES = {"cross-entropy": [{"tokens": 64, "vocab": v} for v in (4096, 32768)],
         "kl-div": [{"tokens": 64, "vocab": v} for v in (4096, 32768)],
         "rms-norm": [{"tokens": 64, "hidden": h} for h in (1024, 8192)]}

for name, sizes in SIZES.items():
    op = load(name)
    mods = {p: implementation(op.peers[p], op.name)["module"] for p in PEERS}
    for dtype in ("fp32", "bf16", "fp16"):
        worst = 0.0
        for size in sizes:
            for _ in range(3):
                out = gate_workload(mods, op, op.workload(dtype, **size), 1.0, "cpu")
                worst = max([worst] + [o["maxRelError"] for o in out.values()])
        print(f"{name} {dtype} worst {worst:.3g} x2 = {2 * worst:.3g}", flush=True)
