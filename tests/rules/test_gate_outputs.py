"""The correctness gate's rule for tensor outputs and for what it refuses outright, on the CPU
(docs/rerun.md, gate.py): a tensor output (RMSNorm's) is compared norm-wise as a gradient is,
its backward given a random gradient of its own; a case is recorded with its shape and seed; an
output that is not a plain tensor, shares an input's memory or comes with a replaced clock
fails the gate with the reason named; an error exactly at the tolerance still passes.
"""

from __future__ import annotations

import math
import threading
import time

import pytest

torch = pytest.importorskip("torch", reason="the gate runs on torch")

from sitegen.operations.jsd import JSD  # noqa: E402
from sitegen.operations.rms_norm import EPS, RMSNorm  # noqa: E402
from sitegen.rerun.checks import gate, guards  # noqa: E402
from sitegen.rules import protocol
from sitegen.rerun.measure.clock import Clock  # noqa: E402
from sitegen.rerun.selftest.cheats import _Given  # noqa: E402 (returns loss; its backward hands out grad)

NORM = RMSNorm()
NW = NORM.workload("fp32", tokens=8, hidden=64)
NRTOL = NORM.tolerances["fp32"]


class _Norm(torch.autograd.Function):
    """The float64 expression's output, scaled by ``scale`` and edited; its backward the
    reference's gradients for the gradient it is given."""

    @staticmethod
    def forward(ctx, x, w, scale, edit):
        ctx.save_for_backward(x, w)
        x64, w64 = x.double(), w.double()
        y = x64 * torch.rsqrt(x64.pow(2).mean(-1, keepdim=True) + EPS) * w64 * scale
        if edit is not None:
            y = edit(y)
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        _, (gx, gw) = NORM.reference((x, w), g)
        return gx.to(x.dtype), gw.to(w.dtype), None, None


class Norm(torch.nn.Module):
    def __init__(self, scale=1.0, edit=None):
        super().__init__()
        self.scale, self.edit = scale, edit

    def forward(self, x, w):
        return _Norm.apply(x, w, self.scale, self.edit)


def _norm_gate(module):
    return gate.gate_workload({"m": module}, NORM, NW, NRTOL, "cpu")["m"]


def test_a_tensor_output_equal_to_the_reference_passes_and_records_each_case():
    out = _norm_gate(Norm())
    assert out["status"] == "passed", out
    cases = out["cases"]
    assert len(cases) == protocol.GATE_INPUTS and all(c["passed"] and c["fullyWritten"] for c in cases)
    # The record keeps each case's shape (the first input's) and its seed.
    shapes = NORM.gate_workloads(NW, protocol.SMALL_ROWS)[:protocol.GATE_INPUTS]
    assert [c["shape"] for c in cases] == [[s["tokens"], s["hidden"]] for s in shapes]
    assert all(isinstance(c["seed"], int) and c["seed"] >= 0 for c in cases)
    assert out["maxAbsError"] == max(c["maxAbsError"] for c in cases)
    assert out["maxRelError"] == max(c["maxRelError"] for c in cases)
    assert out["maxRelError"] <= NRTOL / 100


@pytest.mark.parametrize("scale, passed", [(1 + 12 * NRTOL, False), (1 + NRTOL / 2, True)])
def test_a_tensor_output_is_judged_norm_wise_on_its_tolerance(scale, passed):
    out = _norm_gate(Norm(scale=scale))
    assert (out["status"] == "passed") is passed
    # The output's own error, norm-wise: relative error ~ scale - 1, the absolute the largest element's.
    assert out["maxRelError"] == pytest.approx(scale - 1, rel=0.05)
    if not passed:
        assert out["maxAbsError"] > 0.5 * (scale - 1)


def _nan_smallest(y):
    y = y.clone()
    y.view(-1)[y.abs().argmin()] = float("nan")
    return y


def test_a_tensor_output_element_left_unwritten_fails_though_within_tolerance():
    out = _norm_gate(Norm(edit=_nan_smallest))
    assert out["status"] == "failed"
    assert out["cases"] and [c["fullyWritten"] for c in out["cases"]] == [False] * len(out["cases"])
    assert [c["passed"] for c in out["cases"]] == [False] * len(out["cases"])
    # The unwritten element reads as 0 in the stated error (|y| < 0.5 there), never as a number far off.
    assert all(c["maxAbsError"] < 0.5 for c in out["cases"])


def test_a_gradient_never_written_fails_the_case_and_counts_as_all_wrong():
    class NoWeightGradient(_Norm):
        @staticmethod
        def backward(ctx, g):
            gx, _, *rest = _Norm.backward(ctx, g)
            return gx, None, *rest

    class Norm2(Norm):
        def forward(self, x, w):
            return NoWeightGradient.apply(x, w, 1.0, None)

    out = _norm_gate(Norm2())
    assert out["status"] == "failed"
    assert out["cases"] and [c["fullyWritten"] for c in out["cases"]] == [False] * len(out["cases"])
    assert [c["passed"] for c in out["cases"]] == [False] * len(out["cases"])
    assert out["maxRelError"] == pytest.approx(1.0)


def test_a_tensor_output_of_another_shape_fails():
    class FirstRow(Norm):
        def forward(self, x, w):
            return super().forward(x, w)[:1]

    out = _norm_gate(FirstRow())
    # backward(grad_output) itself refuses the shape, before the gate compares anything.
    assert out["status"] == "failed" and out["cases"] == [] and "Mismatch in shape" in out["notes"]


def _gradients_given(monkeypatch):
    """(x, the gradient its backward got) of every case, after checking the seeds drawn (by the
    judge's side, judging.references, called here to see them)."""
    from sitegen.rerun.checks import judging

    drawn = {"inputs": [], "grad": []}
    make_inputs, make_grad = NORM.make_inputs, NORM.make_grad_output
    monkeypatch.setattr(NORM, "make_inputs", lambda w, seed, device: drawn["inputs"].append(seed) or make_inputs(w, seed, device))
    monkeypatch.setattr(NORM, "make_grad_output", lambda w, seed, device: drawn["grad"].append(seed) or make_grad(w, seed, device))
    for shape, seed in judging.checked_shapes(NORM, NW):
        judging.references(NORM, shape, seed, "cpu")
    monkeypatch.undo()
    given = []

    class Spy(Norm):
        def forward(self, x, w):
            y = super().forward(x, w)
            y.register_hook(lambda g: given.append((x.detach().clone(), g.clone())))
            return y

    assert _norm_gate(Spy())["status"] == "passed"
    # A seed of its own for each case: never the inputs' seed (which would draw the input itself)
    # and never one gradient for every case.
    assert len(set(drawn["grad"])) == protocol.GATE_INPUTS and not set(drawn["grad"]) & set(drawn["inputs"])
    assert len(given) == protocol.GATE_INPUTS and all(g.shape == x.shape for x, g in given)
    return given


def test_the_backward_of_a_tensor_output_gets_a_gradient_drawn_apart_from_the_inputs(monkeypatch):
    _gradients_given(monkeypatch)


# torch's CPU generator seeds its Mersenne Twister from the low 32 bits only: seed ^ (1 << 61)
# alone drew the very numbers of seed there, and the gradient equalled x (cases.grad_seed).
def test_the_gradient_a_tensor_output_s_backward_gets_is_not_its_input(monkeypatch):
    for x, g in _gradients_given(monkeypatch):
        assert not torch.equal(g, x)


# --- refusals, on the JSD operation -------------------------------------------------------

OP = JSD()
W = OP.workload("fp32", tokens=8, vocab=64)
RTOL = OP.tolerances["fp32"]




class Honest(torch.nn.Module):
    def forward(self, x, y):
        loss, (grad,) = OP.reference((x.detach(), y))
        return _Given.apply(x, torch.tensor(float(loss), dtype=x.dtype), grad.to(x.dtype))


class _Sub(torch.Tensor):
    pass


class SubclassLoss(Honest):
    def forward(self, x, y):
        return super().forward(x, y).as_subclass(_Sub)


class _SubGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, loss, grad):
        ctx.grad = grad
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        return (ctx.grad * g).as_subclass(_Sub), None, None


class SubclassGradient(torch.nn.Module):
    def forward(self, x, y):
        x.grad = torch.zeros_like(x).as_subclass(_Sub)  # the backward accumulates into it
        loss, (grad,) = OP.reference((x.detach(), y))
        return _SubGrad.apply(x, torch.tensor(float(loss), dtype=x.dtype), grad.to(x.dtype))


class AliasedLoss(torch.nn.Module):
    """Hands back a view of the student as its 'loss'."""

    def forward(self, x, y):
        return x.view(-1)[:1].reshape(())


class ClockPatched(Honest):
    def forward(self, x, y):
        time.perf_counter_ns = lambda: 0
        return super().forward(x, y)


class Raises(torch.nn.Module):
    def forward(self, x, y):
        raise RuntimeError("no kernel " + "x" * 1000)


def _gate(modules):
    try:
        return gate.gate_workload(modules, OP, W, RTOL, "cpu")
    finally:
        guards.restore()


@pytest.mark.parametrize("module, why", [
    (SubclassLoss(), "returned a _Sub, not a plain torch.Tensor"),
    (SubclassGradient(), "returned a _Sub, not a plain torch.Tensor"),
    (AliasedLoss(), "inputs_intact: the loss shares memory with input 0"),
    (ClockPatched(), "clock_intact: time.perf_counter_ns replaced while the implementation ran"),
])
def test_an_output_the_gate_cannot_trust_fails_every_case_with_its_reason(module, why):
    out = _gate({"m": module})["m"]
    assert out["status"] == "failed" and out["cases"] == [] and "maxRelError" not in out
    errors = out["notes"].removeprefix("Raised: ").split("; ")
    assert out["notes"].startswith("Raised: ") and len(errors) == protocol.GATE_INPUTS
    assert all(why in e and e.startswith("[") for e in errors), out["notes"]  # each "[shape] seed s: why"


class _Scratch(JSD):
    """JSD as an operation that lets an implementation write into input 0 (as Liger's cross
    entropy writes its gradient over the logits)."""

    writable_inputs = (0,)


class _InPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, loss, grad):
        x.detach().copy_(grad)  # the gradient, written over the input it is of
        ctx.x = x.detach()
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        return ctx.__dict__.pop("x"), None, None  # no reference left: autograd keeps it as the .grad


class GradientInItsInput(torch.nn.Module):
    def forward(self, x, y):
        loss, (grad,) = OP.reference((x.detach(), y))
        return _InPlace.apply(x, torch.tensor(float(loss), dtype=x.dtype), grad.to(x.dtype))


def test_a_gradient_handed_back_in_a_writable_input_s_storage_passes_and_elsewhere_fails():
    allowed = gate.gate_workload({"m": GradientInItsInput()}, _Scratch(), W, RTOL, "cpu")["m"]
    assert allowed["status"] == "passed", allowed
    refused = gate.gate_workload({"m": GradientInItsInput()}, OP, W, RTOL, "cpu")["m"]
    assert refused["status"] == "failed" and "inputs_intact: gradient 0 shares memory with input 0" in refused["notes"]


def test_a_raise_fails_with_its_error_cut_at_500_characters_and_the_next_implementation_is_still_checked():
    out = _gate({"raises": Raises(), "honest": Honest()})
    assert out["raises"]["status"] == "failed"
    errors = out["raises"]["notes"].removeprefix("Raised: ").split("; ")
    assert len(errors) == protocol.GATE_INPUTS
    assert all(e.split(": ", 1)[1].startswith("RuntimeError: no kernel") for e in errors)
    assert all(len(e.split(": ", 1)[1]) == 500 for e in errors)  # the record keeps 500 characters of it
    assert out["honest"]["status"] == "passed" and len(out["honest"]["cases"]) == protocol.GATE_INPUTS


def test_a_thread_one_implementation_left_fails_it_and_not_the_next():
    stop = threading.Event()

    class LeavesThread(Honest):
        def forward(self, x, y):
            threading.Thread(target=stop.wait, name="left", daemon=True).start()
            return super().forward(x, y)

    try:
        out = _gate({"cheat": LeavesThread(), "honest": Honest()})
    finally:
        stop.set()
        for t in threading.enumerate():
            if t.name == "left":
                t.join()
    assert out["cheat"]["status"] == "failed" and "host_threads" in out["cheat"]["notes"]
    assert out["honest"]["status"] == "passed", out["honest"]


# --- the comparison's bounds, on call() and the judge's compare() --------------------------------------------

class _Scalar:
    differentiable = (0,)
    writable_inputs = ()


class Gives(torch.nn.Module):
    """Loss ``loss`` and gradient ``grad`` whatever the input."""

    def __init__(self, loss, grad):
        super().__init__()
        self.loss, self.grad = loss, grad

    def forward(self, x):
        return _Given.apply(x, torch.tensor(self.loss, dtype=torch.float64), torch.tensor(self.grad, dtype=torch.float64))


def _check(loss, grad, ref_loss=4.0, ref_grad=(3.0, 4.0), rtol=0.5, x=(1.0, 2.0)):
    """The call in this process (gate.call), its outputs compared as the judge compares them."""
    from sitegen.rerun.checks import judging

    inputs = (torch.tensor(x, dtype=torch.float64),)
    why, got, grads = gate.call(Gives(loss, grad), _Scalar(), inputs, "cpu", Clock("cpu"))
    assert why is None, why
    return judging.compare(got, grads, ref_loss, (torch.tensor(ref_grad, dtype=torch.float64),), rtol, tensor_output=False)


def test_errors_exactly_at_the_tolerance_pass_and_just_over_it_fail():
    # |Δloss| = 2 = 0.5·4; ‖Δgrad‖ = ‖(1.5, 2)‖ = 2.5 = 0.5·‖(3, 4)‖.
    at = _check(6.0, (4.5, 6.0))
    assert at["passed"] and at["fullyWritten"]
    assert at["maxRelError"] == 0.5 and at["maxAbsError"] == 2.0
    assert not _check(6.0 + 1e-9, (3.0, 4.0))["passed"]
    assert not _check(4.0, (4.5, 6.0 + 1e-9))["passed"]


def test_relative_errors_are_of_the_reference_s_norm_even_below_one():
    # A small reference: the relative error is 0.1 / 0.5 and 0.03 / 0.05, not the absolute error.
    out = _check(0.6, (0.03 + 0.03, 0.04), ref_loss=0.5, ref_grad=(0.03, 0.04), rtol=1.0)
    assert out["maxRelError"] == pytest.approx(0.6) and out["maxAbsError"] == pytest.approx(0.1)
    assert out["passed"]
    assert not _check(0.6, (0.03, 0.04), ref_loss=0.5, ref_grad=(0.03, 0.04), rtol=0.15)["passed"]
    assert _check(0.8, (0.03, 0.04), ref_loss=0.5, ref_grad=(0.03, 0.04), rtol=1.0)["maxRelError"] == pytest.approx(0.6)


def test_the_largest_absolute_error_is_the_gradient_s_when_it_leads():
    out = _check(4.0, (3.0, 7.0), rtol=1.0)
    assert out["maxAbsError"] == 3.0 and out["maxRelError"] == pytest.approx(3.0 / 5.0)


def test_the_errors_recorded_are_plain_numbers():
    out = _gate({"m": Honest()})["m"]
    numbers = [out["maxAbsError"], out["maxRelError"]] + [c[k] for c in out["cases"] for k in ("maxAbsError", "maxRelError")]
    assert all(type(n) is float for n in numbers)


# --- poisoning, on a stand-in for the CUDA caching allocator --------------------------------

class _Pool:
    """torch.empty and torch.cuda.memory_reserved for a device whose reserve grows on the
    ``grow_at``-th allocation of a small block."""

    def __init__(self, monkeypatch, grow_at):
        self.made, self.reserved, self.grow_at, self.count = [], 1 << 30, grow_at, 0
        real = torch.empty

        def empty(size, dtype=None, device=None):
            assert device == "cuda:0" and dtype == torch.uint8
            self.made.append(size)
            self.count += 1
            if self.count - 1 == self.grow_at:  # the large block, then grow_at small ones
                self.reserved += 2 << 20
            return real(0, dtype=dtype)

        monkeypatch.setattr(torch, "empty", empty)
        monkeypatch.setattr(torch.Tensor, "fill_", lambda t, value: self.made.append(("fill", value)) or t)
        monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device: self._reserved(device))

    def _reserved(self, device):
        assert device == "cuda:0"
        return self.reserved


def test_poisoning_takes_every_small_block_until_the_pool_grows_then_the_rest_of_its_segment(monkeypatch):
    pool = _Pool(monkeypatch, grow_at=5)
    gate._poison(1000, "cuda:0")
    sizes = [m for m in pool.made if not isinstance(m, tuple)]
    fills = [m for m in pool.made if isinstance(m, tuple)]
    assert fills == [("fill", 255)] * len(sizes)  # every block poisoned with 0xFF bytes
    # 4x the tensor and 1 MiB more from the large pool; then blocks of the tensor's size until
    # the reserve grows (the fifth), and the rest of a 2 MiB segment in 512-byte-rounded blocks.
    assert sizes == [4 * 1000 + (1 << 20)] + [1000] * 5 + [1000] * ((2 << 20) // 1024 - 1)


def test_poisoning_stops_at_8192_blocks_and_large_tensors_take_one_block(monkeypatch):
    pool = _Pool(monkeypatch, grow_at=-1)
    gate._poison(512, "cuda:0")
    sizes = [m for m in pool.made if not isinstance(m, tuple)]
    assert sizes == [4 * 512 + (1 << 20)] + [512] * 8192 + [512] * ((2 << 20) // 512 - 1)
    pool.made.clear()
    pool.count = 0
    gate._poison((1 << 20) + 1, "cuda:0")
    assert [m for m in pool.made if not isinstance(m, tuple)] == [4 * ((1 << 20) + 1) + (1 << 20)]
    pool.made.clear()
    gate._poison(1 << 20, "cuda:0")  # 1 MiB exactly is still a small block
    assert len([m for m in pool.made if not isinstance(m, tuple)]) > 1
    pool.made.clear()
    gate._poison(1000, "cpu")
    assert pool.made == []


def test_poisoning_rounds_a_block_up_to_512_bytes(monkeypatch):
    pool = _Pool(monkeypatch, grow_at=1)
    gate._poison(1025, "cuda:0")  # three 512-byte units: the segment's rest is 2 MiB // 1536 - 1 blocks
    sizes = [m for m in pool.made if not isinstance(m, tuple)]
    assert sizes == [4 * 1025 + (1 << 20), 1025] + [1025] * ((2 << 20) // 1536 - 1)


def test_the_gate_poisons_for_the_largest_differentiable_input_before_each_call(monkeypatch):
    class TwoInputs:
        differentiable = (0, 1)
        writable_inputs = ()

    class Both(torch.nn.Module):
        def forward(self, a, b):
            return (a * b).sum()

    a, b = torch.ones(3, dtype=torch.float64), torch.ones(5, dtype=torch.float32)  # 24 and 20 bytes
    clock = Clock("cpu")
    pool = _Pool(monkeypatch, grow_at=1)
    gate.call(Both(), TwoInputs(), (a, b), "cuda:0", clock)
    assert [m for m in pool.made if not isinstance(m, tuple)][:2] == [4 * 24 + (1 << 20), 24]


def test_a_loss_that_is_not_one_number_is_never_written():
    class Pair(torch.nn.Module):
        def forward(self, x):
            return x * 1.0

    # backward() of a two-element loss raises: the gate fails it with the error named.
    why, loss, grads = gate.call(Pair(), _Scalar(), (torch.tensor([0.0, 0.0], dtype=torch.float64),), "cpu", Clock("cpu"))
    assert loss is None and why.startswith("RuntimeError: grad can be implicitly created only")


def test_an_unwritten_loss_counts_as_zero_in_the_error_and_fails_as_unwritten():
    out = _check(float("nan"), (3.0, 4.0), ref_loss=4.0, rtol=2.0)
    assert out["fullyWritten"] is False and out["passed"] is False
    assert out["maxAbsError"] == 4.0 and out["maxRelError"] == 1.0
    assert math.isfinite(out["maxRelError"])
