"""`sitegen rerun --self-test`: planted cheats, each rejected, and which check caught it.

Every candidate goes through the gate AND the timed measurement with every integrity check
(a real rerun stops at a failed gate; here all checks run so that each catch is seen). The
report names the checks that caught each cheat, and for every check the cheats it alone
caught: a check that catches nothing the others miss is reported redundant.

Cheats (the six of #18 item 5, then one per check that no other check would catch):
  phase-skip          honest for its first calls on a shape (gate, warm-up), then computes the
                      loss without writing dX and hands back the last honest gradient;
  identity-cache      remembers results by input address and shape;
  forward-skips-dx    forward reads X and Y for the loss but never writes dX;
  wrong-gradient      correct loss, gradient 5% off;
  side-stream         the gradient on a side stream the caller's stream never waits for until
                      backward (a host-visible wait; the loss comes from the main stream);
  bf16-1.5pct         loss and gradient 1.5% off, on bf16;
  shape-special       correct only at the timed shape (a benchmark-specialised path);
  row-memo            remembers gradient rows by content and gathers them, correct under the
                      harness's row moves, so only the full pass's floor can see it;
  content-cache       remembers whole inputs by content, so only repeated inputs hit.
On a CPU there is no GPU clock to judge time by: the cheats only a time can expose
(side-stream, row-memo) are skipped there, and repeated_input allows CPU_REPEATED_SPEEDUP.
"""

from __future__ import annotations

import torch

from sitegen.rerun import gpustate, integrity, protocol
from sitegen.rerun.assemble import outcome
from sitegen.rerun.cases import Case, Workload
from sitegen.rerun.gate import gate_workload
from sitegen.rerun.passes import PassRunner
from sitegen.rerun.timing import Clock, collect

CHECKS = ("gate", "timed_output", "roofline", "host_timed", "repeated_input", "throttle", "exclusive_gpu")
ENVIRONMENT = ("throttle", "exclusive_gpu")
GPU_ONLY = ("side-stream", "row-memo")
CPU_REPEATED_SPEEDUP = 3.0


def _kernel():
    from sitegen.kernels.jsd import JSD

    return JSD()


def _loss_only(x, y):
    from sitegen.kernels.jsd import jsd_forward

    return jsd_forward(x.detach(), y, store_grad=False)[0]


class _Given(torch.autograd.Function):
    """Returns `loss`; backward hands out `grad` (scaled by the upstream gradient, as JSD does)."""

    @staticmethod
    def forward(ctx, x, loss, grad, event=None):
        ctx.grad, ctx.event = grad, event
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        if ctx.event is not None:
            torch.cuda.current_stream().wait_event(ctx.event)
        return ctx.grad * g, None, None, None


def _honest(x, y):
    leaf = x.detach().requires_grad_()
    loss = _kernel()(leaf, y)
    loss.backward()
    return loss.detach(), leaf.grad


class PhaseSkip(torch.nn.Module):
    """Honest for its first HONEST calls per shape, then: loss only, the last gradient again
    (copied, so that its backward still moves the bytes a real one would)."""

    HONEST = 8

    def __init__(self):
        super().__init__()
        self.seen: dict = {}

    def forward(self, x, y):
        key = tuple(x.shape)
        n, last = self.seen.get(key, (0, None))
        if n < self.HONEST or last is None:
            loss, grad = _honest(x, y)
            self.seen[key] = (n + 1, grad)
            return _Given.apply(x, loss, grad)
        self.seen[key] = (n + 1, last)
        return _Given.apply(x, _loss_only(x, y), last.clone())


class IdentityCache(torch.nn.Module):
    """Results remembered by (address, shape, dtype) of the inputs."""

    def __init__(self):
        super().__init__()
        self.cache: dict = {}

    def forward(self, x, y):
        key = (x.data_ptr(), y.data_ptr(), tuple(x.shape), x.dtype)
        if key not in self.cache:
            self.cache[key] = _honest(x, y)
        return _Given.apply(x, *self.cache[key])


class ForwardSkipsDx(torch.nn.Module):
    """Reads X and Y for the loss; the gradient buffer it hands back is never written."""

    def forward(self, x, y):
        return _Given.apply(x, _loss_only(x, y), torch.empty_like(x))


class WrongGradient(torch.nn.Module):
    """The right loss, a gradient 5% off."""

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        return _Given.apply(x, loss, grad * 1.05)


class OffBy(torch.nn.Module):
    """Loss and gradient both `factor` times the right ones."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        return _Given.apply(x, loss * self.factor, grad * self.factor)


class ShapeSpecial(torch.nn.Module):
    """Right at the timed shape; elsewhere the fast path's assumption breaks (10% off)."""

    def __init__(self, shape: tuple[int, int]):
        super().__init__()
        self.shape = shape

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        factor = 1.0 if tuple(x.shape) == self.shape else 1.1
        return _Given.apply(x, loss * factor, grad * factor)


class SideStream(torch.nn.Module):
    """Loss on the caller's stream (the bundled kernel, reading X and Y); the gradient by the
    torch reference on a side stream that only backward waits for."""

    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x, y):
        from sitegen.rerun.implementations import TorchReference

        main = torch.cuda.current_stream()
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            leaf = x.detach().requires_grad_()
            (grad,) = torch.autograd.grad(TorchReference()(leaf, y), leaf)
            done = self.stream.record_event()
        grad.record_stream(main)
        return _Given.apply(x, _loss_only(x, y), grad, done)


class _Gather(torch.autograd.Function):
    """Returns `loss`; backward gathers the remembered gradient rows."""

    @staticmethod
    def forward(ctx, x, loss, rows, at):
        ctx.rows, ctx.at = rows, at
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        return ctx.rows[ctx.at] * g, None, None, None


class RowMemo(torch.nn.Module):
    """Per-row losses and gradient rows remembered by row content (a row's first elements as
    its key). Under the harness's row moves every row is found again, so after one honest call
    per input address the forward only looks the rows up (no pass over X and Y) and backward
    gathers the gradient: correct outputs, but a forward far under its floor."""

    def __init__(self):
        super().__init__()
        self.keys = self.rows = self.losses = None
        self.seen: set = set()
        self.shape = None

    def _key(self, x):
        head = x[:, :4].double()
        return head @ torch.tensor([1.0, 1e3, 1e6, 1e9], dtype=torch.float64, device=x.device)

    def forward(self, x, y):
        if tuple(x.shape) != self.shape:
            self.keys = self.rows = self.losses = None
            self.seen, self.shape = set(), tuple(x.shape)
        if x.data_ptr() not in self.seen:
            self.seen.add(x.data_ptr())
            loss, grad = _honest(x, y)
            per_row = _per_row_loss(x, y)
            keys = self._key(x)
            self.keys = keys if self.keys is None else torch.cat([self.keys, keys])
            self.rows = grad if self.rows is None else torch.cat([self.rows, grad])
            self.losses = per_row if self.losses is None else torch.cat([self.losses, per_row])
            return _Given.apply(x, loss, grad)
        at = (self._key(x)[:, None] == self.keys[None, :]).to(torch.int8).argmax(dim=1)
        loss = self.losses[at].mean().to(x.dtype)
        return _Gather.apply(x, loss, self.rows, at)


class ContentCache(torch.nn.Module):
    """The last result, kept while the inputs' content is unchanged (row sums weighted by row
    position, so that moved rows change the key)."""

    def __init__(self):
        super().__init__()
        self.key = None
        self.result = None

    def forward(self, x, y):
        at = torch.arange(1, x.shape[0] + 1, dtype=torch.float64, device=x.device)
        key = torch.stack([(x.detach().double().sum(dim=1) * at).sum(), (y.double().sum(dim=1) * at).sum()])
        if self.key is not None and self.key.shape == key.shape and bool(torch.equal(key, self.key)):
            return _Given.apply(x, *self.result)
        self.key, self.result = key, _honest(x, y)
        return _Given.apply(x, *self.result)


def _per_row_loss(x, y):
    from sitegen.kernels.reference import jsd_reference

    rows = x.shape[0]
    return torch.stack([jsd_reference(x[r:r + 1].detach(), y[r:r + 1], compute_dtype=torch.float32)
                        for r in range(rows)]) if rows <= 64 else _per_row_loss_batched(x, y)


def _per_row_loss_batched(x, y):
    xf, yf = x.detach().float(), y.float()
    p, q = yf.exp(), xf.exp()
    log_m = (0.5 * (p + q)).log()
    return (0.5 * p * (yf - log_m) + 0.5 * q * (xf - log_m)).sum(dim=1)


def candidates(cuda: bool, fp32: Workload, bf16: Workload) -> dict[str, tuple]:
    """name → (module, workload); names starting "honest" must be accepted, the rest rejected."""
    out = {
        "honest-fp32": (_kernel(), fp32), "honest-bf16": (_kernel(), bf16),
        "phase-skip": (PhaseSkip(), fp32), "identity-cache": (IdentityCache(), fp32),
        "forward-skips-dx": (ForwardSkipsDx(), fp32), "wrong-gradient": (WrongGradient(), fp32),
        "bf16-1.5pct": (OffBy(1.015), bf16), "shape-special": (ShapeSpecial((fp32.tokens, fp32.vocab)), fp32),
        "content-cache": (ContentCache(), fp32),
    }
    if cuda:
        out["side-stream"] = (SideStream(), fp32)
        out["row-memo"] = (RowMemo(), fp32)
    return out


def judge(name: str, module, w: Workload, device: str, clock: Clock, copy_bw: float,
          max_sm_mhz: int | None = None) -> dict:
    """Gate and time (forward pass) every candidate; returns the checks that failed."""
    cuda = device.startswith("cuda")
    rtol = protocol.TOLERANCES[w.dtype]
    gate = gate_workload({name: module}, w, rtol, device, clock)[name]
    caught = [] if gate["status"] == "passed" else ["gate"]
    counts = [gpustate.compute_processes()]
    before = gpustate.state()
    runner = PassRunner(module, w.tokens, w.vocab, w.dtype, device, "forward", seed=12345, rtol=rtol)
    # A shorter budget than a sweep case's (100 ms, one process): the self-test takes seconds.
    try:
        per = collect(clock, runner, min_samples=protocol.MIN_SAMPLES if cuda else protocol.INTERPRET_MIN_SAMPLES,
                      min_ms=100.0 if cuda else protocol.INTERPRET_MIN_TIME_MS, max_ms=100.0 if cuda else 0.0,
                      repeated_probe=True, warmup=protocol.WARMUP if cuda else protocol.INTERPRET_WARMUP)
    except Exception as exc:  # a cheat that breaks under the timed pattern is caught by it
        return {"accepted": False, "caught": caught + ["timed_output"], "by": f"raised while timed: {exc}"[:300]}
    finally:
        runner.release()
    per["gpuBefore"], per["gpuAfter"] = before, gpustate.state()
    result = outcome(Case(w, "forward", name), {**gate, "status": "passed"}, [per], copy_bytes_per_s=copy_bw,
                     process_counts=counts, expected_counts=[1], repeated_probe=True, max_sm_mhz=max_sm_mhz, rtol=rtol)
    # NVML does not exist on a CPU; nor does a GPU clock to judge time by, so there the
    # roofline and host_timed cannot judge, and repeated_input allows a wider swing.
    skip = set() if cuda else {"throttle", "exclusive_gpu", "roofline", "host_timed"}
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
    return {"accepted": not caught, "caught": caught, "details": details,
            "by": ", ".join(caught) if caught else f"median {result['timing']['latencyNs']['median']} ns"}


def uniqueness(verdicts: dict[str, dict]) -> dict[str, list[str]]:
    """check → the cheats that check alone caught."""
    alone: dict[str, list[str]] = {c: [] for c in CHECKS}
    for name, v in verdicts.items():
        if not name.startswith("honest") and len(v["caught"]) == 1:
            alone[v["caught"][0]].append(name)
    return alone


def run_selftest(*, interpret: bool) -> dict:
    """Judge every candidate; ok when the honest kernel is accepted and every cheat rejected."""
    from sitegen.rerun.worker import copy_bandwidth

    cuda = torch.cuda.is_available() and not interpret
    device = "cuda" if cuda else "cpu"
    fp32 = Workload(1024, 128256, "fp32") if cuda else Workload(8, 64, "fp32")
    bf16 = Workload(fp32.tokens, fp32.vocab, "bf16")
    clock = Clock(device)
    copy_bw = copy_bandwidth(device)
    max_sm_mhz = gpustate.max_sm_mhz(gpustate.facts())
    verdicts = {}
    for name, (module, w) in candidates(cuda, fp32, bf16).items():
        verdicts[name] = judge(name, module, w, device, clock, copy_bw, max_sm_mhz)
        if cuda:
            torch.cuda.empty_cache()
    ok = all(v["accepted"] == name.startswith("honest") for name, v in verdicts.items())
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
