"""Liger-Kernel's modules, the peers every shipped operation is compared with, rerun on a CPU
under Triton's interpreter at tiny sizes: a wrapper that calls one with the wrong shape (as
the fused head's did: Liger 0.8.5's forward requires shift_labels) fails here, not on the H200,
and so does a harness that misjudges Liger's cross entropy, which writes its gradient over its
input (the repeated-input probe's calls, benchmarks/results/rerun_h200_issue28b/README.md)."""

import json
import subprocess
import sys

import pytest

for _module in ("torch", "triton", "liger_kernel"):
    pytest.importorskip(_module)


# Liger's KL divergence and RMSNorm kernels do not run under the interpreter (a Python float's
# .to() inside the kernel: InterpreterError); their peers are exercised on the GPU only.
@pytest.mark.parametrize("operation", ["jsd", "cross-entropy", "fused-linear-jsd"])
def test_liger_s_module_passes_every_check_of_its_operation(operation, tmp_path):
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--operation", operation, "--interpret",
                           "--impl", "liger", "--pass", "full", "--processes", "1", "--out", str(tmp_path / "r"),
                           "--json"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    runs = json.loads(done.stdout)["runs"]
    assert runs and {(r["impl"], r["status"]) for r in runs} == {("liger", "passed")}, (runs, done.stderr[-2000:])
