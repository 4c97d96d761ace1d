"""`sitegen rerun --self-test`: planted cheating implementations must each be rejected.

The cheats: a side-stream launch (the work runs where the timing events do not look), a
cached-result replay, a constant output, a NaN output. The honest bundled kernel must pass
the same gate and checks. On a CPU (no streams, no events) the side-stream cheat is skipped.
"""

from __future__ import annotations

import torch

from sitegen.rerun import gpustate, integrity, protocol
from sitegen.rerun.assemble import outcome
from sitegen.rerun.cases import Case, Workload
from sitegen.rerun.gate import gate_workload
from sitegen.rerun.passes import PassRunner
from sitegen.rerun.timing import Clock, collect


def _kernel():
    from sitegen.kernels.jsd import JSD

    return JSD()


class ConstantOutput(torch.nn.Module):
    """Returns the same loss whatever the input (and so a zero gradient)."""

    def forward(self, log_q, log_p):
        return (log_q * 0).sum() + torch.tensor(0.25, dtype=log_q.dtype, device=log_q.device)


class NaNOutput(torch.nn.Module):
    """Leaves its output unwritten: NaN, as poisoned memory would read."""

    def forward(self, log_q, log_p):
        return (log_q * 0).sum() + torch.tensor(float("nan"), dtype=log_q.dtype, device=log_q.device)


class _Replay(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, loss, grad):
        ctx.save_for_backward(grad)
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        (grad,) = ctx.saved_tensors
        return grad * g, None, None


class CachedReplay(torch.nn.Module):
    """Computes once per input shape, then replays that result for any later input of the shape."""

    def __init__(self):
        super().__init__()
        self.inner = _kernel()
        self.cache: dict = {}

    def forward(self, log_q, log_p):
        key = tuple(log_q.shape)
        if key not in self.cache:
            leaf = log_q.detach().requires_grad_()
            loss = self.inner(leaf, log_p)
            loss.backward()
            self.cache[key] = (loss.detach(), leaf.grad)
        return _Replay.apply(log_q, *self.cache[key])


class SideStream(torch.nn.Module):
    """Correct results, computed on a side stream the caller's stream never waits for."""

    def __init__(self):
        super().__init__()
        self.inner = _kernel()
        self.stream = torch.cuda.Stream()

    def forward(self, log_q, log_p):
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            return self.inner(log_q, log_p)


def candidates(cuda: bool) -> dict[str, torch.nn.Module]:
    """name → module; "honest" must be accepted, every other one rejected."""
    out = {"honest": _kernel(), "constant-output": ConstantOutput(), "nan-output": NaNOutput(),
           "cached-replay": CachedReplay()}
    if cuda:
        out["side-stream"] = SideStream()
    return out


def judge(name: str, module, w: Workload, device: str, clock: Clock, copy_bw: float, max_sm_mhz: int | None = None) -> dict:
    """Gate, then (if it passes) time the forward pass and apply the integrity checks."""
    gate = gate_workload({name: module}, w, protocol.TOLERANCES[w.dtype], device)[name]
    if gate["status"] != "passed":
        return {"accepted": False, "by": f"correctness gate (worst relative error {gate.get('maxRelError', 'n/a'):.3g})"
                if "maxRelError" in gate else f"correctness gate ({gate.get('notes', 'raised')})"}
    counts = [gpustate.compute_processes()]
    before = gpustate.state()
    runner = PassRunner(module, w.tokens, w.vocab, w.dtype, device, "forward", seed=12345)
    cuda = device.startswith("cuda")
    # A shorter budget than a sweep case's (100 ms, one process): the cheats it must catch are
    # gross, and the self-test should take seconds.
    per = collect(clock, runner, min_samples=protocol.MIN_SAMPLES if cuda else protocol.INTERPRET_MIN_SAMPLES,
                  min_ms=100.0 if cuda else protocol.INTERPRET_MIN_TIME_MS, repeated_probe=True,
                  warmup=protocol.WARMUP if cuda else protocol.INTERPRET_WARMUP)
    per["gpuBefore"], per["gpuAfter"] = before, gpustate.state()
    result = outcome(Case(w, "forward", name), gate, [per], copy_bytes_per_s=copy_bw,
                     process_counts=counts, expected_counts=[1], repeated_probe=True,
                     max_sm_mhz=max_sm_mhz)
    # Checks that cannot run without a GPU (NVML) are not held against a CPU self-test, nor
    # are timing comparisons: three interpreter samples on a shared CPU swing by more than the
    # 10% the repeated-input check allows, and no cache can make the interpreter cheat.
    cpu_only = {"throttle", "exclusive_gpu", "repeated_input", "host_timed"} if not cuda else set()
    failed = [c["name"] for c in result["integrity"] if not c["passed"] and c["name"] not in cpu_only]
    if result["status"] != "passed" or failed:
        return {"accepted": False, "by": "integrity (" + ", ".join(failed or [result["status"]]) + ")"}
    return {"accepted": True, "by": f"median {result['timing']['latencyNs']['median']} ns"}


def run_selftest(*, interpret: bool) -> dict:
    """Judge every candidate; ok when the honest kernel is accepted and every cheat rejected."""
    from sitegen.rerun.worker import copy_bandwidth

    cuda = torch.cuda.is_available() and not interpret
    device = "cuda" if cuda else "cpu"
    w = Workload(1024, 128256, "fp32") if cuda else Workload(4, 64, "fp32")
    clock = Clock(device)
    copy_bw = copy_bandwidth(device)
    max_sm_mhz = gpustate.max_sm_mhz(gpustate.facts())
    verdicts = {name: judge(name, module, w, device, clock, copy_bw, max_sm_mhz) for name, module in candidates(cuda).items()}
    ok = all(v["accepted"] == (name == "honest") for name, v in verdicts.items())
    lines = [f"self-test on {device} ({w.key}, forward):"]
    lines += [f"  {name}: {'accepted' if v['accepted'] else 'rejected'} by {v['by']}" for name, v in verdicts.items()]
    if not cuda:
        lines.append("  side-stream: skipped (needs CUDA streams and events)")
    lines.append("self-test " + ("passed" if ok else "FAILED"))
    return {"ok": ok, "device": device, "verdicts": verdicts, "lines": lines,
            "roofline_slack": integrity.ROOFLINE_SLACK}
