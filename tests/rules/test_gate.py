"""The correctness gate's published rule, on the CPU (docs/rerun.md: every implementation
against the float64 reference on four inputs; |Δloss| <= rtol·|loss| and ‖Δgrad‖ <= rtol·‖grad‖,
every output element written, and an implementation that raises fails).

The implementations here start from the reference's own answer and break one thing each, so
each test isolates one clause of the rule.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the gate runs on torch")

from sitegen.operations.jsd import JSD  # noqa: E402
from sitegen.rules import protocol  # noqa: E402
from sitegen.rerun.checks.gate import gate_workload  # noqa: E402
from sitegen.rerun.selftest.cheats import _Given  # noqa: E402 (returns loss; its backward hands out grad)

OP = JSD()
WORKLOAD = OP.workload("fp32", tokens=8, vocab=64)
RTOL = OP.tolerances["fp32"]


def reference(x, y):
    """The operation's float64 loss and gradient of (x, y)."""
    loss, (grad,) = OP.reference((x, y))
    return loss, grad




class FromReference(torch.nn.Module):
    """The float64 reference's loss and gradient, each scaled, and ``edit`` applied to the gradient."""

    def __init__(self, loss_factor=1.0, grad_factor=1.0, edit=None, raise_on_rows=None):
        super().__init__()
        self.loss_factor, self.grad_factor, self.edit, self.raise_on_rows = loss_factor, grad_factor, edit, raise_on_rows

    def forward(self, x, y):
        if x.shape[0] == self.raise_on_rows:
            raise RuntimeError("no kernel for this shape")
        loss, grad = reference(x.detach(), y)
        grad = (grad * self.grad_factor).to(x.dtype)
        if self.edit is not None:
            self.edit(grad)
        return _Given.apply(x, torch.tensor(loss * self.loss_factor, dtype=x.dtype), grad)


def _gate(module):
    return gate_workload({"m": module}, OP, WORKLOAD, RTOL, "cpu")["m"]


def test_the_reference_itself_passes_every_case():
    out = _gate(FromReference())
    assert out["status"] == "passed" and len(out["cases"]) == protocol.GATE_INPUTS
    assert all(c["passed"] and c["fullyWritten"] for c in out["cases"])


@pytest.mark.parametrize("output", ["loss", "grad"])
def test_an_output_over_ten_times_its_tolerance_off_fails_every_case(output):
    out = _gate(FromReference(**{f"{output}_factor": 1 + 12 * RTOL}))
    assert out["status"] == "failed"
    assert not any(c["passed"] for c in out["cases"])


@pytest.mark.parametrize("output", ["loss", "grad"])
def test_an_output_within_half_its_tolerance_passes(output):
    assert _gate(FromReference(**{f"{output}_factor": 1 + RTOL / 2}))["status"] == "passed"


def _leave_smallest_unwritten(grad):
    # The element that matters least to the norm: leaving it unwritten keeps the norm-wise error
    # far under the tolerance, so only the fully-written rule can fail the case.
    grad.view(-1)[grad.abs().argmin()] = float("nan")


def test_an_output_element_left_unwritten_fails_the_case_even_within_tolerance():
    out = _gate(FromReference(edit=_leave_smallest_unwritten))
    assert out["status"] == "failed"
    assert not any(c["fullyWritten"] for c in out["cases"])
    assert not any(c["passed"] for c in out["cases"])
    # What makes this the fully-written rule and not the comparison: the errors are within tolerance.
    assert all(c["maxRelError"] <= RTOL for c in out["cases"])


def test_a_case_that_raised_fails_the_gate_though_every_other_case_passed():
    rows = WORKLOAD["tokens"]  # the timed shape and, at 8 tokens, the two small ones; the odd shape differs
    out = _gate(FromReference(raise_on_rows=rows))
    recorded = out["cases"]
    assert recorded and all(c["passed"] for c in recorded)
    assert all(c["shape"][0] != rows for c in recorded)
    assert out["status"] == "failed"
    assert "Raised:" in out["notes"] and "RuntimeError: no kernel for this shape" in out["notes"]


def _push_last_row(grad):
    # ‖Δ‖ = 12·rtol·‖G‖, all of it in the last row: ten times over the tolerance norm-wise.
    grad[-1] += 12 * RTOL * float(grad.double().norm()) / grad.shape[1] ** 0.5


def test_an_error_in_the_last_rows_counts_when_the_gradient_is_compared_a_block_at_a_time(monkeypatch):
    # Large gradients are compared a block of rows at a time (a [16384, 131072] float64 copy is
    # 16 GiB); here each block is one row, so the error sits in the last of several blocks. The
    # comparison runs in the judge process; here it is called in this one, to set its block size.
    from sitegen.rerun.checks import judging

    monkeypatch.setattr(judging, "_CHUNK_ELEMENTS", WORKLOAD["vocab"])
    x, y = OP.make_inputs(WORKLOAD, 5, "cpu")
    ref_loss, (ref_grad,) = OP.reference((x, y))
    grad = ref_grad.float()
    _push_last_row(grad)
    out = judging.compare(torch.tensor(float(ref_loss)), [grad], float(ref_loss), (ref_grad,), RTOL, tensor_output=False)
    assert out["passed"] is False and out["maxRelError"] == pytest.approx(12 * RTOL, rel=0.02)


def test_an_empty_output_compares_as_no_error():
    # check() never raises: a gradient of no rows compares as zero error against a zero norm.
    from sitegen.rerun.checks.judging import _errors

    assert _errors(torch.zeros(0, 5), torch.zeros(0, 5, dtype=torch.float64)) == (0.0, 0.0, 0.0)


def test_the_block_comparison_adds_up_every_block(monkeypatch):
    # One row a block, on a matrix taller than it is wide: errors in the first and the last row,
    # 3 and 4, make a norm-wise error of 5 and a largest one of 4; ‖ref‖² = 1² + … + 30² = 9455.
    from sitegen.rerun.checks import judging as gate

    monkeypatch.setattr(gate, "_CHUNK_ELEMENTS", 3)
    ref = torch.arange(1.0, 31.0, dtype=torch.float64).reshape(10, 3)
    got = ref.float().clone()
    got[0, 0] += 3
    got[9, 2] -= 4
    assert gate._errors(got, ref) == pytest.approx((5.0, 4.0, 9455 ** 0.5))
    # A gradient never written counts as zero: its error is the reference's whole norm.
    assert gate._errors(None, ref) == pytest.approx((9455 ** 0.5, 30.0, 9455 ** 0.5))
